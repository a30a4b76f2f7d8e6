//! A mutation-based coverage fuzzer that decides what to keep of each new
//! population member by a [`reduce_crash::reduce::population::Admit`]
//! policy (the Fuzzing Book's "Reducing Failure-Inducing Inputs", exercise
//! 1), using `reduce_crash` as a library against a real cargo-fuzz target.
//!
//! The fuzzer is the book's `MutationCoverageFuzzer`: pick a population
//! member, apply 1–4 random mutations (delete, insert or flip a byte), run
//! the mutant with coverage, and keep it when it reaches a feature nobody
//! reached before. The policy says what is kept: the mutant whole, shrunk
//! while it keeps those new features, trimmed as AFL trims, … Every policy
//! runs for the same wall time (`--secs`) or the same number of mutants,
//! from the same random seed; the table compares features, population size
//! and bytes, crashes found, and executions per second.
//!
//! Run (from the repository root; defaults: the bundled example project):
//!
//! ```text
//! cargo run --release --example population -- [FUZZ_DIR] [TARGET] [MUTANTS]
//!     [--secs S] [--seed N] [--policy whole,trimmed,…] [--seeds DIR] [--json]
//! cargo run --release --example population -- example/fuzz parse 50000
//! ```
//!
//! Policies: `whole` (the library's default), `shrunk`, `shrunk-if-grown`,
//! `trimmed`, `trimmed-if-grown`, `trimmed-to-parent`, `whole-and-shrunk`
//! (default: all of them, one after another).
//! `--seeds DIR` starts from the files in DIR (default: one INI line).
//! `--json` prints one JSON line per run instead of the table.

use reduce_crash::reduce::population::Admit;
use reduce_crash::reduce::rng::Rng;
use reduce_crash::run::coverage::Features;
use reduce_crash::run::outcome::Outcome;
use reduce_crash::run::target::{RunningTarget, TargetOptions};
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The book's three mutators: delete, insert or flip a random byte.
fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut s = input.to_vec();
    match rng.below(3) {
        0 if !s.is_empty() => {
            let i = rng.below(s.len());
            s.remove(i);
        }
        1 => {
            // Printable ASCII and newlines, as the book's insert_random_character.
            let c = match rng.below(8) {
                0 => b'\n',
                _ => 32 + rng.below(95) as u8,
            };
            let i = rng.below(s.len() + 1);
            s.insert(i, c);
        }
        _ if !s.is_empty() => {
            let i = rng.below(s.len());
            s[i] ^= 1 << rng.below(8);
        }
        _ => s.push(b' '),
    }
    s
}

/// What one fuzzing campaign ended with.
struct Campaign {
    policy: &'static str,
    population: usize,
    population_bytes: usize,
    features: usize,
    crashes: usize,
    mutants: u64,
    shrink_tests: u64,
    elapsed: Duration,
}

impl Campaign {
    fn execs_per_sec(&self) -> f64 {
        (self.mutants + self.shrink_tests) as f64 / self.elapsed.as_secs_f64()
    }

    fn mutants_per_sec(&self) -> f64 {
        self.mutants as f64 / self.elapsed.as_secs_f64()
    }
}

/// How long a campaign runs.
#[derive(Clone, Copy)]
enum Budget {
    Mutants(u64),
    Time(Duration),
}

fn fuzz(
    target: &mut RunningTarget,
    seeds: &[Vec<u8>],
    budget: Budget,
    (policy, admit): (&'static str, Admit),
    rng_seed: u64,
) -> Campaign {
    let mut rng = Rng::from_state(0x5eed ^ rng_seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut population: Vec<Vec<u8>> = Vec::new();
    let mut seen = Features::new();
    let mut crashes: HashSet<String> = HashSet::new();
    let mut shrink_tests = 0;
    let mut mutants = 0;
    let started = Instant::now();
    for seed in seeds {
        if let Ok((_, Some(f))) = target.coverage(seed) {
            seen.extend(&f);
        }
        population.push(seed.clone());
    }
    loop {
        let done = match budget {
            Budget::Mutants(n) => mutants >= n,
            // The clock is read every 64 mutants (a run is microseconds).
            Budget::Time(d) => mutants % 64 == 0 && started.elapsed() >= d,
        };
        if done {
            break;
        }
        mutants += 1;
        let parent = rng.below(population.len());
        let mut child = population[parent].clone();
        for _ in 0..1 + rng.below(4) {
            child = mutate(&mut rng, &child);
        }
        let (outcome, features) = match target.coverage(&child) {
            Ok(r) => r,
            Err(e) => panic!("the target cannot run: {e}"),
        };
        if let Outcome::Crash(sig) = &outcome {
            crashes.insert(sig.to_string());
            continue;
        }
        let Some(features) = features else { continue };
        let new = features.difference(&seen);
        if new.is_empty() {
            continue;
        }
        let parent = population[parent].clone();
        let admitted = admit.admit(&parent, &child, target.keeps_features(&new));
        shrink_tests += admitted.tests;
        seen.extend(&features);
        population.extend(admitted.members);
    }
    Campaign {
        policy,
        population: population.len(),
        population_bytes: population.iter().map(Vec::len).sum(),
        features: seen.len(),
        crashes: crashes.len(),
        mutants,
        shrink_tests,
        elapsed: started.elapsed(),
    }
}

/// The value after `flag` in `args`, removed with it.
fn take_flag(args: &mut Vec<String>, flag: &str) -> Option<String> {
    let i = args.iter().position(|a| a == flag)?;
    if i + 1 >= args.len() {
        eprintln!("error: {flag} needs a value");
        std::process::exit(2)
    }
    let value = args.remove(i + 1);
    args.remove(i);
    Some(value)
}

fn number<T: std::str::FromStr>(what: &str, n: &str) -> T {
    n.parse().unwrap_or_else(|_| {
        eprintln!("error: {what} must be a number, got `{n}`");
        std::process::exit(2)
    })
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    args.retain(|a| a != "--json");
    let secs = take_flag(&mut args, "--secs").map(|s| number::<f64>("--secs", &s));
    let rng_seed = take_flag(&mut args, "--seed").map_or(0, |s| number::<u64>("--seed", &s));
    let every: Vec<&str> = Admit::ALL.iter().map(|(n, _)| *n).collect();
    let policies: Vec<(&'static str, Admit)> = take_flag(&mut args, "--policy")
        .unwrap_or_else(|| every.join(","))
        .split(',')
        .map(|name| {
            Admit::ALL
                .into_iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| {
                    let names: Vec<&str> = Admit::ALL.iter().map(|(n, _)| *n).collect();
                    eprintln!(
                        "error: unknown policy `{name}` (one of {})",
                        names.join(", ")
                    );
                    std::process::exit(2)
                })
        })
        .collect();
    let seeds_dir = take_flag(&mut args, "--seeds").map(PathBuf::from);
    let dir = PathBuf::from(args.first().map_or("example/fuzz", String::as_str));
    let name = args.get(1).map_or("parse", String::as_str);
    let budget = match secs {
        Some(s) => Budget::Time(Duration::from_secs_f64(s)),
        None => Budget::Mutants(args.get(2).map_or(30_000, |n| number("MUTANTS", n))),
    };
    let seeds = match &seeds_dir {
        None => vec![b"[section]\nkey = value\n".to_vec()],
        Some(d) => {
            let mut files: Vec<PathBuf> = match std::fs::read_dir(d) {
                Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
                Err(e) => {
                    eprintln!("error: cannot read the seeds in {}: {e}", d.display());
                    std::process::exit(1)
                }
            };
            files.sort();
            files.iter().filter_map(|f| std::fs::read(f).ok()).collect()
        }
    };
    if seeds.is_empty() {
        eprintln!(
            "error: no seed files in {}",
            seeds_dir.unwrap_or_default().display()
        );
        std::process::exit(1)
    }
    let opts = TargetOptions {
        coverage: true,
        ..TargetOptions::default()
    };
    let mut target = match RunningTarget::open(&dir, name, &opts) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
    };
    let runs: Vec<Campaign> = policies
        .into_iter()
        .map(|policy| {
            target.restart();
            fuzz(&mut target, &seeds, budget, policy, rng_seed)
        })
        .collect();
    if json {
        for c in &runs {
            println!(
                "{{\"policy\":\"{}\",\"seed\":{},\"population\":{},\"population_bytes\":{},\"features\":{},\"crashes\":{},\"mutants\":{},\"shrink_tests\":{},\"secs\":{:.3},\"execs_per_sec\":{:.0},\"mutants_per_sec\":{:.0}}}",
                c.policy, rng_seed, c.population, c.population_bytes, c.features, c.crashes, c.mutants,
                c.shrink_tests, c.elapsed.as_secs_f64(), c.execs_per_sec(), c.mutants_per_sec()
            );
        }
        return;
    }
    let per_run = match budget {
        Budget::Mutants(n) => format!("{n} mutants"),
        Budget::Time(d) => format!("{:.0} s", d.as_secs_f64()),
    };
    println!(
        "Mutation fuzzing `{name}` ({}), {per_run} per run, seed {rng_seed}:\n",
        dir.display()
    );
    println!("| policy | population | population bytes | mean length | features | crash kinds | mutants | shrink tests | time (s) | execs/s (all) | mutants/s |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for c in &runs {
        println!(
            "| {} | {} | {} | {:.1} | {} | {} | {} | {} | {:.2} | {:.0} | {:.0} |",
            c.policy,
            c.population,
            c.population_bytes,
            c.population_bytes as f64 / c.population as f64,
            c.features,
            c.crashes,
            c.mutants,
            c.shrink_tests,
            c.elapsed.as_secs_f64(),
            c.execs_per_sec(),
            c.mutants_per_sec()
        );
    }
}
