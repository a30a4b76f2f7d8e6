//! `-j N` on one artifact: the whole `cargo reduce-crash` command with one
//! driver and with two, on two fixture targets that take at least 1 ms of
//! busy work per input, for artifacts of several sizes:
//!
//! * `slow_buffer` panics on `SLOW!` in an input of 64 bytes or more: about
//!   1,100 tests, most of them failing candidates in long lists (ddmin and
//!   simplification around 64 bytes that must stay), the work `-j` shares;
//! * `slow` panics on `SLOW!` anywhere: about 140 tests, in short lists whose
//!   first candidates often succeed (at best 1.6x less work on two drivers,
//!   counted in candidates, before any start-up).
//!
//! Each artifact is reduced `JOBS_BENCH_ROUNDS` times (default 3) with
//! `-j 1` and with `-j 2`, alternately; the table shows the medians of the
//! command's wall time and of the reduction phase (`elapsed_secs`), their
//! ratios, the tests each ran and whether the outputs are byte-identical.
//! The bar: `-j 2` at least 1.6x faster than `-j 1` on the whole command,
//! same output. The load average is printed before and after: the machine
//! this runs on may be shared.
//!
//! Run with `cargo bench --bench jobs`.

mod common;

use reduce_crash::reduce::rng::Rng;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-reduce-crash");

/// Noise that cannot form the trigger (no upper case, no `!`).
const NOISE: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123 ,.-_:\n";

const TARGETS: &[&str] = &["slow_buffer", "slow"];

const SIZES: &[usize] = &[500, 1000, 2000, 4000];

fn artifact(len: usize) -> Vec<u8> {
    let mut rng = Rng::from_state(0x5EED ^ len as u64);
    let trigger = b"SLOW!";
    let mut data: Vec<u8> = (0..len - trigger.len())
        .map(|_| NOISE[rng.below(NOISE.len())])
        .collect();
    let at = rng.below(data.len() + 1);
    data.splice(at..at, trigger.iter().copied());
    data
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_owned())
}

struct Measured {
    wall: f64,
    reduce: f64,
    executed: u64,
    discarded: u64,
    output: Vec<u8>,
}

fn reduce(copy: &Path, artifact: &Path, jobs: usize, scratch: &Path) -> Measured {
    let output = {
        let mut name = artifact.file_name().unwrap().to_os_string();
        name.push(".reduced");
        artifact.with_file_name(name)
    };
    let _ = std::fs::remove_file(&output);
    let mut cmd = Command::new(BIN);
    cmd.args([
        "-s",
        "none",
        "--no-explain",
        "--message-format",
        "json",
        "-j",
    ])
    .arg(jobs.to_string())
    .arg(artifact)
    .current_dir(copy);
    let run = common::run_limited(cmd, scratch, Duration::from_secs(600));
    assert!(
        run.ok(),
        "-j {jobs} {} failed:\n{}",
        artifact.display(),
        run.stderr
    );
    let finished: Value = run.reduce_finished().expect("a reduce-finished line");
    Measured {
        wall: run.secs,
        reduce: finished["elapsed_secs"].as_f64().unwrap(),
        executed: finished["tests_executed"].as_u64().unwrap(),
        discarded: finished["tests_discarded"].as_u64().unwrap(),
        output: std::fs::read(&output).expect("an output"),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::var("JOBS_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
        .max(1);
    let copy = common::stable_copy("tests/fixtures/buggy", "buggy-jobs");
    let scratch = tempfile::tempdir().expect("temp dir");
    let mut artifacts = Vec::new();
    for target in TARGETS {
        let dir = copy.join("fuzz/artifacts").join(target);
        std::fs::create_dir_all(&dir).expect("artifacts dir");
        for &len in SIZES {
            let path = dir.join(format!("crash-jobs-{len}"));
            std::fs::write(&path, artifact(len)).expect("write artifact");
            artifacts.push((*target, len, path));
        }
        // Warm-up: builds the target's driver (not counted).
        eprintln!("building the driver of `{target}` (warm-up run) ...");
        reduce(&copy, &artifacts.last().unwrap().2, 1, scratch.path());
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let load_before = load();
    eprintln!("load average before: {load_before} ({cores} cores)");

    println!();
    println!(
        "| target | artifact | -j 1 wall s | -j 2 wall s | wall ratio | -j 1 reduce s | -j 2 reduce s | reduce ratio | tests -j 1 | tests -j 2 (discarded) | output -j 1 / -j 2 | identical |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    let mut ratios: Vec<(&str, f64)> = Vec::new();
    let mut all_identical = true;
    for (target, len, path) in &artifacts {
        let mut one = Vec::new();
        let mut two = Vec::new();
        for _ in 0..rounds {
            one.push(reduce(&copy, path, 1, scratch.path()));
            two.push(reduce(&copy, path, 2, scratch.path()));
        }
        let identical = one.iter().chain(&two).all(|m| m.output == one[0].output);
        all_identical &= identical;
        let wall1 = median(one.iter().map(|m| m.wall).collect());
        let wall2 = median(two.iter().map(|m| m.wall).collect());
        let red1 = median(one.iter().map(|m| m.reduce).collect());
        let red2 = median(two.iter().map(|m| m.reduce).collect());
        ratios.push((target, wall1 / wall2));
        println!(
            "| {target} | {len} B | {wall1:.2} | {wall2:.2} | {:.2}x | {red1:.2} | {red2:.2} | {:.2}x | {} | {} ({}) | {} / {} B | {} |",
            wall1 / wall2,
            red1 / red2,
            one[0].executed,
            two[0].executed,
            two[0].discarded,
            one[0].output.len(),
            two[0].output.len(),
            if identical { "yes" } else { "NO" },
        );
    }
    let load_after = load();
    println!();
    println!("load average before/after: {load_before} / {load_after} ({cores} cores); {rounds} rounds each, medians");
    for target in TARGETS {
        let ratio = median(
            ratios
                .iter()
                .filter(|(t, _)| t == target)
                .map(|(_, r)| *r)
                .collect(),
        );
        println!(
            "bar on `{target}`: -j 2 ≥ 1.6x faster than -j 1 (median over artifacts, whole command), same output: {} ({ratio:.2}x, outputs {})",
            if ratio >= 1.6 && all_identical {
                "met"
            } else {
                "NOT met"
            },
            if all_identical {
                "identical"
            } else {
                "DIFFER"
            },
        );
    }
}
