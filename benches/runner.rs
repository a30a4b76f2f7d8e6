//! Runner throughput: how many inputs per second the in-process driver
//! executes on a trivial target, passing and panicking, compared side by
//! side (same run) with starting a fresh process per input, which is what
//! process-per-test tools pay.
//!
//! Run with `cargo bench --bench runner`.

mod common;

use reduce_crash::driver::{self, BuildOptions};
use reduce_crash::exec::{ExecConfig, Executor};
use reduce_crash::outcome::Outcome;
use reduce_crash::project::FuzzProject;
use std::time::{Duration, Instant};

fn executor(program: &std::path::Path) -> Executor {
    Executor::new(ExecConfig {
        program: program.to_owned(),
        timeout: Duration::from_secs(5),
        rss_limit_mb: 2048,
        malloc_limit_mb: 0,
        fork_server: true,
    })
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
    let dir = common::stable_copy("benches/fixtures/trivial", "trivial");
    let project = FuzzProject::load(&dir.join("fuzz/Cargo.toml")).expect("fixture project");
    let t = Instant::now();
    let none = BuildOptions {
        sanitizer: Some("none".to_owned()),
        ..BuildOptions::default()
    };
    let built = driver::build(&project, "trivial", &none).expect("driver builds");
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
