//! A mutation-based coverage fuzzer that shrinks every new population member
//! (the Fuzzing Book's "Reducing Failure-Inducing Inputs", exercise 1), using
//! `reduce_crash` as a library against a real cargo-fuzz target.
//!
//! The fuzzer is the book's `MutationCoverageFuzzer`: pick a population
//! member, apply 1–4 random mutations (delete, insert or flip a byte), run
//! the mutant with coverage, and keep it when it reaches a feature nobody
//! reached before. With reduction, the mutant is first shrunk (delta
//! debugging via `Shrinker`) while it still reaches those new features and
//! does not crash, so its descendants start shorter. Both modes run the same
//! number of mutants from the same seed; the table compares population size
//! and bytes, coverage, crashes found, and executions per second.
//!
//! Run (from the repository root; defaults: the bundled example project):
//!
//! ```text
//! cargo run --release --example population -- [FUZZ_DIR] [TARGET] [MUTANTS]
//! cargo run --release --example population -- example/fuzz parse 50000
//! ```
//!
//! `--json` prints the two result rows as JSON lines instead of the table.

use reduce_crash::reduce::rng::Rng;
use reduce_crash::reduce::shrink::Shrinker;
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
    reduce: bool,
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

fn fuzz(target: &mut RunningTarget, seeds: &[Vec<u8>], mutants: u64, reduce: bool) -> Campaign {
    let mut rng = Rng::from_state(0x5eed);
    let mut population: Vec<Vec<u8>> = Vec::new();
    let mut seen = Features::new();
    let mut crashes: HashSet<String> = HashSet::new();
    let mut shrink_tests = 0;
    let shrinker = Shrinker::new().max_tests(500);
    let started = Instant::now();
    for seed in seeds {
        if let Ok((_, Some(f))) = target.coverage(seed) {
            seen.extend(&f);
        }
        population.push(seed.clone());
    }
    for _ in 0..mutants {
        let parent = &population[rng.below(population.len())];
        let mut child = parent.clone();
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
        let member = if reduce {
            let shrunk = shrinker.shrink(&child, target.keeps_features(&new));
            shrink_tests += shrunk.tests;
            shrunk.input
        } else {
            child
        };
        seen.extend(&features);
        population.push(member);
    }
    Campaign {
        reduce,
        population: population.len(),
        population_bytes: population.iter().map(Vec::len).sum(),
        features: seen.len(),
        crashes: crashes.len(),
        mutants,
        shrink_tests,
        elapsed: started.elapsed(),
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    args.retain(|a| a != "--json");
    let dir = PathBuf::from(args.first().map_or("example/fuzz", String::as_str));
    let name = args.get(1).map_or("parse", String::as_str);
    let mutants: u64 = args.get(2).map_or(30_000, |n| {
        n.parse().unwrap_or_else(|_| {
            eprintln!("error: MUTANTS must be a number, got `{n}`");
            std::process::exit(2)
        })
    });
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
    let seeds = vec![b"[section]\nkey = value\n".to_vec()];
    let runs: Vec<Campaign> = [false, true]
        .into_iter()
        .map(|reduce| {
            target.restart();
            fuzz(&mut target, &seeds, mutants, reduce)
        })
        .collect();
    if json {
        for c in &runs {
            println!(
                "{{\"reduce\":{},\"population\":{},\"population_bytes\":{},\"features\":{},\"crashes\":{},\"mutants\":{},\"shrink_tests\":{},\"secs\":{:.3},\"execs_per_sec\":{:.0},\"mutants_per_sec\":{:.0}}}",
                c.reduce, c.population, c.population_bytes, c.features, c.crashes, c.mutants,
                c.shrink_tests, c.elapsed.as_secs_f64(), c.execs_per_sec(), c.mutants_per_sec()
            );
        }
        return;
    }
    println!(
        "Mutation fuzzing `{name}` ({}), {mutants} mutants per run, same seed:\n",
        dir.display()
    );
    println!("| population reduction | population | population bytes | mean length | features | crash kinds | shrink tests | time (s) | execs/s (all) | mutants/s |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for c in &runs {
        println!(
            "| {} | {} | {} | {:.1} | {} | {} | {} | {:.2} | {:.0} | {:.0} |",
            if c.reduce {
                "on (ddmin, keeps the new features)"
            } else {
                "off"
            },
            c.population,
            c.population_bytes,
            c.population_bytes as f64 / c.population as f64,
            c.features,
            c.crashes,
            c.shrink_tests,
            c.elapsed.as_secs_f64(),
            c.execs_per_sec(),
            c.mutants_per_sec()
        );
    }
}
