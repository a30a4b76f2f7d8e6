//! Runner throughput: how many inputs per second the in-process driver
//! executes on a trivial target, passing and panicking, compared side by
//! side (same run) with starting a fresh process per input, which is what
//! process-per-test tools pay.
//!
//! Then big inputs (issue 14): 50 KiB candidates through the driver alone,
//! and the default byte pipeline (`Cached` in front of `CrashOracle`, as
//! `cargo reduce-crash` runs it) reducing a 50 KiB artifact of the fixture's
//! `big` target, which crashes on inputs of at least 48 KiB that start with
//! the ELF magic: the reduction stops at 48 KiB and then tests candidates
//! of that size, as when most bytes of a big artifact matter. The pipeline
//! runs once for its first 60,000 tests (to compare builds: always the same
//! candidates) and once to the end.
//!
//! Run with `cargo bench --bench runner` (`-- small` or `-- big` for one
//! part).

mod common;

use reduce_crash::reduce::oracle::Cached;
use reduce_crash::reduce::Strategy;
use reduce_crash::run::crash_oracle::{Budget, CrashOracle};
use reduce_crash::run::driver::{self, BuildOptions};
use reduce_crash::run::exec::{ExecConfig, Executor};
use reduce_crash::run::outcome::{MatchMode, Outcome};
use reduce_crash::run::project::FuzzProject;
use std::time::{Duration, Instant};

fn executor(program: &std::path::Path) -> Executor {
    Executor::new(ExecConfig::new(program.to_owned(), Duration::from_secs(5)))
        .expect("driver starts")
}

fn inputs(n: usize, first: u8) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut v = vec![first];
            v.extend_from_slice(&(i as u64).to_le_bytes());
            v.extend_from_slice(b"payload");
            v
        })
        .collect()
}

struct Row {
    mode: &'static str,
    n: usize,
    secs: f64,
}

fn main() {
    let parts: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wants = |part: &str| parts.is_empty() || parts.iter().any(|p| p == part);
    let dir = common::stable_copy("benches/fixtures/trivial", "trivial");
    let project = FuzzProject::load(&dir.join("fuzz/Cargo.toml")).expect("fixture project");
    if wants("small") {
        small_inputs(&project);
    }
    if wants("big") {
        big_inputs(&project);
    }
}

fn sanitizer_none() -> BuildOptions {
    BuildOptions {
        sanitizer: Some("none".to_owned()),
        ..BuildOptions::default()
    }
}

fn small_inputs(project: &FuzzProject) {
    let t = Instant::now();
    let built = driver::build(project, "trivial", &sanitizer_none()).expect("driver builds");
    eprintln!("driver ready in {:.1}s", t.elapsed().as_secs_f64());
    let mut exec = executor(&built.binary);
    let mut rows = Vec::new();

    let passing = inputs(300_000, b'a');
    // Warm up.
    for i in passing.iter().take(10_000) {
        exec.run(i).unwrap();
    }

    let t = Instant::now();
    for i in &passing {
        assert_eq!(exec.run(i).unwrap().outcome, Outcome::Pass);
    }
    rows.push(Row {
        mode: "passing, one input per round trip",
        n: passing.len(),
        secs: t.elapsed().as_secs_f64(),
    });

    let t = Instant::now();
    for chunk in passing.chunks(512) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        let runs = exec.run_batch(&refs).unwrap();
        assert_eq!(runs.len(), refs.len());
    }
    rows.push(Row {
        mode: "passing, batches of 512",
        n: passing.len(),
        secs: t.elapsed().as_secs_f64(),
    });

    let panicking = inputs(100_000, b'!');
    let t = Instant::now();
    for i in &panicking {
        assert!(matches!(exec.run(i).unwrap().outcome, Outcome::Crash(_)));
    }
    rows.push(Row {
        mode: "panicking (caught in-process)",
        n: panicking.len(),
        secs: t.elapsed().as_secs_f64(),
    });

    // Baseline: a fresh process per input (start the driver, run, stop).
    let n = 300;
    let t = Instant::now();
    for i in passing.iter().take(n) {
        let mut e = executor(&built.binary);
        e.run(i).unwrap();
    }
    rows.push(Row {
        mode: "passing, fresh process per input (baseline)",
        n,
        secs: t.elapsed().as_secs_f64(),
    });

    let base = rows.last().map(|r| r.n as f64 / r.secs).unwrap();
    println!();
    println!("| mode | inputs | seconds | tests/s | vs process-per-input |");
    println!("|---|---:|---:|---:|---:|");
    for r in &rows {
        let rate = r.n as f64 / r.secs;
        println!(
            "| {} | {} | {:.2} | {:.0} | {:.0}× |",
            r.mode,
            r.n,
            r.secs,
            rate,
            rate / base
        );
    }
    let passing_rate = rows[0].n as f64 / rows[0].secs;
    println!();
    println!(
        "bar: ≥ 100,000 passing tests/s (one per round trip): {} ({:.0}/s)",
        if passing_rate >= 100_000.0 {
            "met"
        } else {
            "NOT met"
        },
        passing_rate
    );
}

/// Size of the big inputs.
const BIG_INPUT: usize = 50 * 1024;

/// A 50 KiB artifact of the `big` target: the ELF magic, then bytes from a
/// fixed pseudo-random sequence.
fn big_artifact() -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut data = b"\x7fELF".to_vec();
    while data.len() < BIG_INPUT {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        data.push((state >> 32) as u8);
    }
    data
}

fn big_inputs(project: &FuzzProject) {
    let t = Instant::now();
    let built = driver::build(project, "big", &sanitizer_none()).expect("driver builds");
    eprintln!("`big` driver ready in {:.1}s", t.elapsed().as_secs_f64());
    let artifact = big_artifact();
    let mut exec = executor(&built.binary);
    let mut rows = Vec::new();

    // The driver alone: ddmin-like complements (the artifact without one
    // 400-byte chunk, and without its magic so they all pass), 128 per round
    // trip as reducers send them.
    let chunk = 400;
    let mut passing = artifact.clone();
    passing[0] = 0;
    let candidates: Vec<Vec<u8>> = (0..128)
        .map(|i| {
            let mut c = passing[..i * chunk].to_vec();
            c.extend_from_slice(&passing[(i + 1) * chunk..]);
            c
        })
        .collect();
    let refs: Vec<&[u8]> = candidates.iter().map(Vec::as_slice).collect();
    for _ in 0..10 {
        exec.run_batch(&refs).unwrap();
    }
    let rounds = 200;
    let t = Instant::now();
    for _ in 0..rounds {
        let runs = exec.run_batch(&refs).unwrap();
        assert!(runs.iter().all(|r| r.outcome == Outcome::Pass));
    }
    rows.push((
        "driver alone: 50 KiB inputs, batches of 128".to_owned(),
        rounds * refs.len(),
        t.elapsed().as_secs_f64(),
    ));

    // The default pipeline as `cargo reduce-crash` runs it, for its first
    // `tests` executions (always the same candidates in the same order),
    // then to the end.
    let signature = match exec.run(&artifact).unwrap().outcome {
        Outcome::Crash(sig) => sig,
        other => panic!("the big artifact does not crash: {other:?}"),
    };
    for tests in [Some(60_000), None] {
        let budget = Budget {
            max_tests: tests,
            max_time: None,
        };
        let t = Instant::now();
        let oracle = CrashOracle::new(&mut exec, signature.clone(), MatchMode::Location, &artifact)
            .with_budget(budget);
        let mut cached = Cached::new(oracle);
        cached.remember(&artifact, true);
        let result = Strategy::Default.run(&artifact, &mut cached);
        let secs = t.elapsed().as_secs_f64();
        let stats = cached.stats();
        let how_far = match tests {
            Some(n) => format!("first {n} tests"),
            None => "to the end".to_owned(),
        };
        rows.push((
            format!(
                "default pipeline on a 50 KiB artifact, {how_far}: {} → {} bytes, {} cached",
                artifact.len(),
                result.len(),
                stats.cache_hits
            ),
            stats.executed as usize,
            secs,
        ));
    }

    println!();
    println!("| big inputs | tests | seconds | tests/s |");
    println!("|---|---:|---:|---:|");
    for (mode, n, secs) in &rows {
        println!("| {mode} | {n} | {secs:.2} | {:.0} |", *n as f64 / secs);
    }
    let rate = rows[1].1 as f64 / rows[1].2;
    println!();
    println!("peak RSS of this process: {} MiB", peak_rss_mib());
    println!(
        "bar: ≥ 20,000 tests/s on 50 KiB inputs (default pipeline): {} ({rate:.0}/s)",
        if rate >= 20_000.0 { "met" } else { "NOT met" },
    );
}

/// This process's peak resident set (`VmHWM`) in MiB.
fn peak_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb >> 10)
}
