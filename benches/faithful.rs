//! The default build (as `cargo fuzz build` builds it: nightly,
//! AddressSanitizer) measured side by side, in one run:
//!
//! 1. **Fork server**: driver starts per second (exec, the sanitizer's
//!    start-up, `init:`) against forks per second, and tests per second on
//!    an input that crashes every time, with and without the fork server.
//! 2. **The ASan fixtures** (`tests/fixtures/asan`, artifacts the default
//!    `cargo fuzz run` found): `cargo reduce-crash` with and without the fork
//!    server against `cargo fuzz tmin` on the same build, rounds alternating
//!    (A B C A B C …), medians; every output judged by the real libFuzzer
//!    binary (same kind and first frame as the original?).
//! 3. **Crashes on most candidates**: a 4 KB input that crashes under ASan
//!    on nearly every candidate against the same input crashing with a
//!    plain panic under `--sanitizer none`.
//!
//! Needs a nightly toolchain and cargo-fuzz. Run with
//! `cargo bench --bench faithful`; `FAITHFUL_ROUNDS=N` (default 3).

mod common;
#[path = "../tests/common/real.rs"]
#[allow(dead_code)]
mod real;

use common::{copy_tree, minimized, run_limited, Finished};
use reduce_crash::run::driver::{self, BuildOptions};
use reduce_crash::run::exec::{ExecConfig, Executor};
use reduce_crash::run::outcome::Outcome;
use reduce_crash::run::project::FuzzProject;
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cargo-reduce-crash");
const RUN_LIMIT: Duration = Duration::from_secs(600);

struct Fixture {
    target: &'static str,
    file: &'static str,
    /// libFuzzer flags for judging and for tmin.
    args: &'static [&'static str],
}

const FIXTURES: &[Fixture] = &[
    Fixture {
        target: "heap_overflow",
        file: "crash-5cdf52e59b8f815ac132c2537e5e3d1cae110827",
        args: &[],
    },
    Fixture {
        target: "use_after_free",
        file: "crash-d94ca19c8cc057998b0e1a9316885931902c1320",
        args: &[],
    },
    Fixture {
        target: "deep_nesting",
        file: "crash-076821cefe2f9be297eb1fb480fa21ff554027c3",
        args: &[],
    },
    Fixture {
        target: "trusted_length",
        file: "oom-97c3a96eb23660776c36f5f46fd9513597b54781",
        args: &[],
    },
    Fixture {
        target: "most_asan",
        file: "generated-4096.bin",
        args: &[],
    },
    Fixture {
        target: "index_panic",
        file: "crash-f03277c9d061b7f60f641fcc9168fadd73c4a448",
        args: &[],
    },
    Fixture {
        target: "slow_loop",
        file: "timeout-1b9e42d7eef5257c6ba07996fc79fa410d95d2d5",
        args: &["-timeout=2"],
    },
];

fn main() {
    if let Some(why) = real::unavailable() {
        eprintln!("faithful bench: {why}; nothing measured");
        return;
    }
    let rounds: usize = std::env::var("FAITHFUL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = repo.join("target/bench-fixtures/asan");
    copy_tree(&repo.join("tests/fixtures/asan"), &root);
    let scratch = repo.join("target/bench-scratch/faithful");
    fs::create_dir_all(&scratch).unwrap();
    let t = Instant::now();
    let bins = real::cargo_fuzz_build(&root);
    eprintln!("cargo fuzz build: {:.1}s", t.elapsed().as_secs_f64());

    fork_server_part(&root);
    fixtures_part(&root, &bins, &scratch, rounds);
    most_candidates_part(&root, &scratch, rounds);
}

// ------------------------------------------------------------------ 1

fn fork_server_part(root: &Path) {
    let project = FuzzProject::load(&root.join("fuzz/Cargo.toml")).expect("fixture project");
    let built = driver::build(&project, "most_asan", &BuildOptions::default()).expect("builds");
    println!(
        "\n## 1. Fork server (most_asan, {})\n",
        built.kind.describe()
    );
    let config = |fork_server| ExecConfig {
        fork_server,
        ..ExecConfig::new(built.binary.clone(), Duration::from_secs(10))
    };
    // Driver starts: a new process each (exec, ASan's start-up, init, hello).
    let n = 30;
    let t = Instant::now();
    for _ in 0..n {
        drop(Executor::new(config(false)).expect("driver starts"));
    }
    let starts = n as f64 / t.elapsed().as_secs_f64();
    // Forks: a fresh child of the running driver each.
    let mut exec = Executor::new(config(true)).expect("driver starts");
    let n_forks = 300;
    let t = Instant::now();
    for _ in 0..n_forks {
        exec.restart();
        exec.run(b"x").unwrap();
    }
    let forks = n_forks as f64 / t.elapsed().as_secs_f64();
    println!("| what | per second |\n|---|---:|");
    println!("| driver starts (exec + ASan start-up + init) | {starts:.0} |");
    println!("| fresh children of the fork server | {forks:.0} |");

    // Tests per second on an input that crashes (ASan heap-buffer-overflow).
    let crash = b"!".as_slice();
    let pass = b"no bang".as_slice();
    println!("\n| input | fork server | tests/s | new processes |\n|---|---|---:|---:|");
    for (name, input, n) in [("crashes (ASan)", crash, 300), ("passes", pass, 20_000)] {
        for fork in [true, false] {
            let mut exec = Executor::new(config(fork)).expect("driver starts");
            let before = exec.stats();
            let t = Instant::now();
            for _ in 0..n {
                let run = exec.run(input).unwrap();
                assert_eq!(
                    matches!(run.outcome, Outcome::Crash(_)),
                    input == crash,
                    "{run:?}"
                );
            }
            let rate = n as f64 / t.elapsed().as_secs_f64();
            let spawns = exec.stats().spawns - before.spawns;
            println!(
                "| {name} | {} | {rate:.0} | {spawns} |",
                if fork { "on" } else { "off" }
            );
        }
    }
}

// ------------------------------------------------------------------ 2

/// One tool's run on one artifact.
struct ToolRun {
    secs: f64,
    len: usize,
    verdict: real::Verdict,
    json: Option<Value>,
}

fn ours(
    root: &Path,
    artifact: &Path,
    extra: &[&str],
    out: &Path,
    scratch: &Path,
) -> (Finished, Option<Value>) {
    let _ = fs::remove_file(out);
    let mut cmd = Command::new(BIN);
    cmd.arg(artifact)
        .arg("-o")
        .arg(out)
        .args(["--message-format", "json", "-q", "--no-explain"])
        .args(extra)
        .current_dir(root);
    let f = run_limited(cmd, scratch, RUN_LIMIT);
    let json = f.reduce_finished();
    (f, json)
}

/// `cargo +nightly fuzz tmin` (its default build, the same as ours); its
/// result is the newest `minimized-from-*` file, as cargo-fuzz picks it.
fn tmin(root: &Path, fx: &Fixture, artifact: &Path, out: &Path, scratch: &Path) -> Finished {
    let dir = artifact.parent().unwrap();
    for (p, _) in minimized(dir) {
        let _ = fs::remove_file(p);
    }
    let mut cmd = Command::new("cargo");
    cmd.args(["+nightly", "fuzz", "tmin", fx.target])
        .arg(artifact)
        .current_dir(root)
        .env_remove("RUSTUP_TOOLCHAIN");
    if !fx.args.is_empty() {
        cmd.arg("--").args(fx.args);
    }
    let f = run_limited(cmd, scratch, RUN_LIMIT);
    let newest = minimized(dir).into_iter().max_by_key(|(_, m)| *m);
    match newest {
        Some((p, _)) => fs::copy(&p, out).map(|_| ()).unwrap(),
        None => fs::copy(artifact, out).map(|_| ()).unwrap(),
    }
    for (p, _) in minimized(dir) {
        let _ = fs::remove_file(p);
    }
    f
}

fn fixtures_part(root: &Path, bins: &Path, scratch: &Path, rounds: usize) {
    println!(
        "\n## 2. The ASan fixtures: ours (fork server on, off) against `cargo fuzz tmin`, same build, {rounds} rounds\n"
    );
    println!("| fixture | original | ours | tmin | same crash (ours, tmin) | ours s | no fork s | tmin s | tmin/ours | ours tests/s (no fork) | new processes (no fork) |");
    println!("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|");
    let mut speedups = Vec::new();
    let mut ours_never_larger = true;
    for fx in FIXTURES {
        let dir = root.join("fuzz/artifacts").join(fx.target);
        fs::create_dir_all(&dir).unwrap();
        let artifact = dir.join(fx.file);
        fs::copy(root.join("found").join(fx.target).join(fx.file), &artifact).unwrap();
        let original_len = fs::metadata(&artifact).unwrap().len();
        let binary = bins.join(fx.target);
        let expected = real::judge(root, &binary, &artifact, fx.args).verdict;
        // The same libFuzzer flags for both tools (after `--`).
        let mut lf: Vec<&str> = Vec::new();
        if !fx.args.is_empty() {
            lf.push("--");
            lf.extend(fx.args);
        }
        let no_fork: Vec<&str> = ["--no-fork-server"]
            .into_iter()
            .chain(lf.iter().copied())
            .collect();
        // Not counted: builds this target's driver (from the fuzz build's
        // dependencies) once.
        let warm = scratch.join("warm.out");
        assert!(ours(root, &artifact, &lf, &warm, scratch).0.ok());
        let mut runs: [Vec<ToolRun>; 3] = Default::default();
        for _ in 0..rounds {
            for (i, extra) in [&lf[..], &no_fork[..]].iter().enumerate() {
                let out = scratch.join(format!("{}-{i}.out", fx.target));
                let (f, json) = ours(root, &artifact, extra, &out, scratch);
                assert!(f.ok(), "ours failed on {}:\n{}", fx.target, f.stderr);
                let verdict = real::judge(root, &binary, &out, fx.args).verdict;
                runs[i].push(ToolRun {
                    secs: f.secs,
                    len: fs::metadata(&out).unwrap().len() as usize,
                    verdict,
                    json,
                });
            }
            let out = scratch.join(format!("{}-tmin.out", fx.target));
            let f = tmin(root, fx, &artifact, &out, scratch);
            let verdict = real::judge(root, &binary, &out, fx.args).verdict;
            runs[2].push(ToolRun {
                secs: f.secs,
                len: fs::metadata(&out).unwrap().len() as usize,
                verdict,
                json: None,
            });
            eprintln!(
                "{}: ours {:.2}s, no fork {:.2}s, tmin {:.2}s ({})",
                fx.target,
                runs[0].last().unwrap().secs,
                runs[1].last().unwrap().secs,
                runs[2].last().unwrap().secs,
                f.status.map_or("killed".to_owned(), |s| s.to_string())
            );
        }
        let secs = |i: usize| common::median(runs[i].iter().map(|r| r.secs).collect());
        let len = |i: usize| runs[i].iter().map(|r| r.len).max().unwrap();
        let same = |i: usize| runs[i].iter().all(|r| r.verdict == expected);
        let rate = |i: usize| {
            common::median(
                runs[i]
                    .iter()
                    .filter_map(|r| r.json.as_ref())
                    .map(|j| j["tests_per_sec"].as_f64().unwrap_or(0.0))
                    .collect(),
            )
        };
        let spawns = |i: usize| {
            runs[i]
                .iter()
                .filter_map(|r| r.json.as_ref())
                .map(|j| j["driver_spawns"].as_u64().unwrap_or(0))
                .max()
                .unwrap_or(0)
        };
        let speedup = secs(2) / secs(0);
        speedups.push(speedup);
        if same(2) && len(0) > len(2) {
            ours_never_larger = false;
        }
        println!(
            "| {} ({}) | {} | {} | {} | {}, {} | {:.2} | {:.2} | {:.2} | {:.1}× | {:.0} ({:.0}) | {} ({}) |",
            fx.target,
            expected.kind,
            original_len,
            len(0),
            len(2),
            if same(0) { "yes" } else { "NO" },
            if same(2) { "yes" } else { "no" },
            secs(0),
            secs(1),
            secs(2),
            speedup,
            rate(0),
            rate(1),
            spawns(0),
            spawns(1),
        );
    }
    println!(
        "\nmedian speed-up over tmin: {:.1}×; ours never larger than tmin's same-crash output: {}",
        common::median(speedups),
        if ours_never_larger { "yes" } else { "NO" }
    );
}

// ------------------------------------------------------------------ 3

fn most_candidates_part(root: &Path, scratch: &Path, rounds: usize) {
    println!(
        "\n## 3. A crash on most candidates: ASan (default build) against a panic (`-s none`)\n"
    );
    let mut rows: Vec<(&str, Vec<f64>, Vec<f64>, u64)> = Vec::new();
    for (target, extra) in [("most_asan", &[][..]), ("most_panic", &["-s", "none"][..])] {
        let dir = root.join("fuzz/artifacts").join(target);
        fs::create_dir_all(&dir).unwrap();
        let artifact = dir.join("generated-4096.bin");
        fs::copy(
            root.join("found").join(target).join("generated-4096.bin"),
            &artifact,
        )
        .unwrap();
        // Not counted: builds the driver.
        assert!(
            ours(root, &artifact, extra, &scratch.join("warm.out"), scratch)
                .0
                .ok()
        );
        let (mut reduce_secs, mut wall) = (Vec::new(), Vec::new());
        let mut tests = 0;
        for _ in 0..rounds {
            let out = scratch.join(format!("{target}.out"));
            let (f, json) = ours(root, &artifact, extra, &out, scratch);
            assert!(f.ok(), "{target}: {}", f.stderr);
            let json = json.expect("reduce-finished");
            reduce_secs.push(json["elapsed_secs"].as_f64().unwrap());
            tests = json["tests_executed"].as_u64().unwrap();
            wall.push(f.secs);
        }
        rows.push((target, reduce_secs, wall, tests));
    }
    println!(
        "| reduction | tests executed | reduction s | whole command s |\n|---|---:|---:|---:|"
    );
    for (target, r, w, tests) in &rows {
        println!(
            "| {target} | {tests} | {:.3} | {:.2} |",
            common::median(r.clone()),
            common::median(w.clone())
        );
    }
    let ratio = common::median(rows[0].1.clone()) / common::median(rows[1].1.clone()).max(1e-9);
    let wall_ratio = common::median(rows[0].2.clone()) / common::median(rows[1].2.clone());
    println!("\nASan / panic: {ratio:.2}× the reduction time, {wall_ratio:.2}× the whole command");
}
