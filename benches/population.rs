//! Population policies at equal wall time (issue 38, item 3): what a
//! mutation fuzzer should keep of a mutant that reached new features.
//!
//! `examples/population.rs` (the Fuzzing Book's mutation coverage fuzzer on
//! the library's `RunningTarget` and `Admit`) runs every policy of
//! `Admit::ALL` for the same wall time, from the same random seed, one
//! policy after another in one process; that is one trial per policy. Trials
//! are repeated for `POPULATION_SEEDS` seeds (default 10) of
//! `POPULATION_SECS` seconds each (default 15) on three targets of
//! different kinds:
//!
//! * `parse`, the bundled example's INI parser, from one line;
//! * `sqlparser` (sqlparser 0.9, text) from the real-world fixture's seeds;
//! * `gif` (gif 0.9, binary) from the real-world fixture's seed.
//!
//! Two trials run side by side (one per core). Reported per target and
//! policy: median features and their interquartile range, and against
//! `whole` (no shrinking) the Vargha–Delaney Â12 and the Mann–Whitney U
//! p-value; the members' mean length and mutants run per second.
//!
//! `POPULATION_TARGETS=parse,gif` picks targets. Each trial's JSON lines
//! are kept in `target/bench-scratch/population/<target>-<seed>.jsonl` and
//! reused (delete them to measure again), so a stopped run resumes. Run with
//! `cargo bench --bench population`.

mod common;

use common::env_or;

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A target: its name, its fuzz directory and its seed directory (`None`:
/// the example's own one-line seed).
struct Target {
    name: &'static str,
    fuzz_dir: PathBuf,
    seeds: Option<PathBuf>,
}

fn targets() -> Vec<Target> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = common::stable_copy("example", "example-population");
    let realworld = common::stable_copy("benches/realworld", "realworld");
    let seeds = |t: &str| Some(repo.join("benches/realworld/seeds").join(t));
    vec![
        Target {
            name: "parse",
            fuzz_dir: example.join("fuzz"),
            seeds: None,
        },
        Target {
            name: "sqlparser",
            fuzz_dir: realworld.join("fuzz"),
            seeds: seeds("sqlparser"),
        },
        Target {
            name: "gif",
            fuzz_dir: realworld.join("fuzz"),
            seeds: seeds("gif"),
        },
    ]
}

/// The example, built once.
fn example_binary() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new("cargo")
        .current_dir(repo)
        .args(["build", "--quiet", "--release", "--example", "population"])
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the example does not build");
    repo.join("target/release/examples/population")
}

/// One trial: every policy for `secs` from `seed`; its JSON lines.
fn trial(example: &Path, t: &Target, seed: u64, secs: u64, scratch: &Path) -> String {
    let file = scratch.join(format!("{}-{seed}.jsonl", t.name));
    if let Ok(done) = fs::read_to_string(&file) {
        if done.lines().count() == reduce_crash::reduce::population::Admit::ALL.len() {
            return done;
        }
    }
    let names: Vec<&str> = reduce_crash::reduce::population::Admit::ALL
        .iter()
        .map(|(n, _)| *n)
        .collect();
    let mut cmd = Command::new(example);
    cmd.arg(&t.fuzz_dir)
        .arg(t.name)
        .args(["--secs", &secs.to_string(), "--seed", &seed.to_string()])
        .args(["--policy", &names.join(","), "--json"]);
    if let Some(s) = &t.seeds {
        cmd.arg("--seeds").arg(s);
    }
    let limit = Duration::from_secs(secs * names.len() as u64 + 300);
    let f = common::run_limited(cmd, scratch, limit);
    assert!(
        f.ok(),
        "{} seed {seed}: the example failed:\n{}",
        t.name,
        f.stderr
    );
    let tmp = file.with_extension("tmp");
    fs::write(&tmp, &f.stdout).expect("write the trial");
    fs::rename(&tmp, &file).expect("keep the trial");
    f.stdout
}

fn main() {
    // The statistics against scipy's for the same samples
    // (`mannwhitneyu([1,2,3], [4,5,6], method="asymptotic")`: p = 0.0809).
    let (a12, p) = common::a12_and_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
    assert!(a12 == 0.0 && (p - 0.0809).abs() < 1e-3, "a12 {a12}, p {p}");
    let secs: u64 = env_or("POPULATION_SECS", 15);
    let seeds: u64 = env_or("POPULATION_SEEDS", 10);
    let only: Option<Vec<String>> = std::env::var("POPULATION_TARGETS")
        .ok()
        .map(|v| v.split(',').map(str::to_owned).collect());
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scratch = repo.join("target/bench-scratch/population");
    fs::create_dir_all(&scratch).expect("scratch dir");
    let example = example_binary();
    let targets: Vec<Target> = targets()
        .into_iter()
        .filter(|t| only.as_ref().is_none_or(|o| o.iter().any(|n| n == t.name)))
        .collect();
    // Two trials at a time, one per core; each prints when it ends.
    let jobs: Vec<(usize, u64)> = (0..targets.len())
        .flat_map(|t| (0..seeds).map(move |s| (t, s)))
        .collect();
    let results = common::side_by_side(&jobs, |&(t, seed)| {
        let out = trial(&example, &targets[t], seed, secs, &scratch);
        eprintln!("{} seed {seed}: done", targets[t].name);
        let rows: Vec<Value> = out
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        (t, seed, rows)
    });
    println!(
        "Population policies, {secs} s per trial, {seeds} seeds, two trials side by side \
         (`examples/population.rs`):\n"
    );
    println!("| target | policy | features median | IQR | Â12 vs whole | p (Mann–Whitney) | mean member B | mutants/s | shrink tests |");
    println!("|---|---|---:|---|---:|---:|---:|---:|---:|");
    for (ti, t) in targets.iter().enumerate() {
        let of = |policy: &str, field: &str| -> Vec<f64> {
            results
                .iter()
                .filter(|(i, _, _)| *i == ti)
                .flat_map(|(_, _, rows)| rows.iter())
                .filter(|r| r["policy"] == policy)
                .filter_map(|r| r[field].as_f64())
                .collect()
        };
        let whole = of("whole", "features");
        for (policy, _) in reduce_crash::reduce::population::Admit::ALL {
            let features = of(policy, "features");
            let (q1, q3) = common::quartiles(features.clone());
            let (a12, p) = common::a12_and_p(&features, &whole);
            let bytes: f64 = of(policy, "population_bytes").iter().sum();
            let members: f64 = of(policy, "population").iter().sum();
            println!(
                "| {} | `{policy}` | {} | {q1}–{q3} | {a12:.2} | {p:.3} | {:.1} | {:.0} | {:.0} |",
                t.name,
                common::median(features.clone()),
                bytes / members.max(1.0),
                common::median(of(policy, "mutants_per_sec")),
                common::median(of(policy, "shrink_tests")),
            );
        }
    }
}
