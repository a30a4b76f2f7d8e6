//! Start-up: how long from the command to the first test, on a fuzz project
//! whose `cargo fuzz build` takes about a minute from scratch
//! (`benches/fixtures/startup`: regex, serde_json, url and their trees).
//!
//! One run, in this order, in a copy of the fixture with no build output:
//! 1. `cargo +nightly fuzz build parse`, cold (the user's own build);
//! 2. `cargo reduce-crash <artifact>` right after it: the driver reuses every
//!    dependency that build compiled (then once more, with nothing to build);
//! 3. the same with `--target-dir` pointing at an empty directory: a cold
//!    driver build, nothing reused;
//! 4. `cargo +nightly fuzz tmin parse <artifact>` on the same project, to its
//!    first run of the input.
//!
//! "First test": our `reduce-started` JSON message (printed once the
//! original has been run `--reruns` times, so a little after the first
//! test); libFuzzer's `CRASH_MIN: minimizing crash input` for tmin (printed
//! just before its first run). Needs nightly and cargo-fuzz. Run with
//! `cargo bench --bench startup`.

mod common;
#[path = "../tests/common/real.rs"]
#[allow(dead_code)]
mod real;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-reduce-crash");
const ARTIFACT: &str = "crash-a41f5f67cf8cfa7bafb2ae0e5fd21eb398e63ddf";

/// Runs `cmd` to the end; returns (seconds to the first output line
/// containing `marker`, seconds in all).
fn timed(mut cmd: Command, marker: &str) -> (Option<f64>, f64) {
    let start = Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let (tx, rx) = mpsc::channel::<(f64, String)>();
    let mut readers = Vec::new();
    for pipe in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = tx.send((start.elapsed().as_secs_f64(), line));
            }
        }));
    }
    drop(tx);
    let mut first = None;
    let mut tail = Vec::new();
    for (at, line) in rx {
        if first.is_none() && line.contains(marker) {
            first = Some(at);
        }
        tail.push(line);
    }
    let status = child.wait().unwrap();
    for r in readers {
        let _ = r.join();
    }
    if first.is_none() {
        eprintln!("{cmd:?} ({status}) never printed {marker:?}; its last lines:");
        for l in tail.iter().rev().take(15).rev() {
            eprintln!("  {l}");
        }
    }
    (first, start.elapsed().as_secs_f64())
}

fn ours(root: &Path, extra: &[&str]) -> (Option<f64>, f64) {
    let artifact = root.join("fuzz/artifacts/parse").join(ARTIFACT);
    let mut cmd = Command::new(BIN);
    cmd.args(["--message-format", "json", "--no-explain"])
        .args(extra)
        .arg(&artifact)
        .arg("-o")
        .arg(root.join("reduced.out"))
        .current_dir(root);
    timed(cmd, "\"reduce-started\"")
}

fn main() {
    if let Some(why) = real::unavailable() {
        eprintln!("startup bench: {why}; nothing measured");
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = repo.join("target/bench-fixtures/startup");
    let _ = std::fs::remove_dir_all(&root);
    common::copy_tree(&repo.join("benches/fixtures/startup"), &root);
    let artifacts = root.join("fuzz/artifacts/parse");
    std::fs::create_dir_all(&artifacts).unwrap();
    std::fs::copy(
        root.join("found/parse").join(ARTIFACT),
        artifacts.join(ARTIFACT),
    )
    .unwrap();
    // Downloads are not part of any timing.
    let fetched = Command::new("cargo")
        .args(["+nightly", "fetch", "--manifest-path"])
        .arg(root.join("fuzz/Cargo.toml"))
        .env_remove("RUSTUP_TOOLCHAIN")
        .status()
        .unwrap();
    assert!(fetched.success());

    let mut build = Command::new("cargo");
    build
        .args(["+nightly", "fuzz", "build", "parse"])
        .current_dir(&root)
        .env_remove("RUSTUP_TOOLCHAIN");
    let (_, cargo_fuzz_build) = timed(build, "\u{0}");
    eprintln!("cargo fuzz build (cold): {cargo_fuzz_build:.1}s");

    // The first run after the user's build compiles the shim and the target
    // crate; a second run has nothing to compile.
    let (after_first, after_all) = ours(&root, &[]);
    let after_first = after_first.expect("reduce-started");
    eprintln!("ours right after cargo fuzz build: first test at {after_first:.2}s");
    let (again_first, again_all) = ours(&root, &[]);
    let again_first = again_first.expect("reduce-started");

    let empty = repo.join("target/bench-scratch/startup-cold");
    let _ = std::fs::remove_dir_all(&empty);
    let (cold_first, cold_all) = ours(&root, &["--target-dir", empty.to_str().unwrap()]);
    let cold_first = cold_first.expect("reduce-started");
    eprintln!("ours, cold driver build: first test at {cold_first:.2}s");

    let mut tmin = Command::new("cargo");
    tmin.args(["+nightly", "fuzz", "tmin", "parse"])
        .arg(artifacts.join(ARTIFACT))
        .current_dir(&root)
        .env_remove("RUSTUP_TOOLCHAIN");
    let (tmin_first, tmin_all) = timed(tmin, "CRASH_MIN: minimizing crash input");

    println!("\n## Start-up on a project whose `cargo fuzz build` takes {cargo_fuzz_build:.0} s from scratch\n");
    println!("| command | to the first test (s) | whole command (s) |\n|---|---:|---:|");
    println!(
        "| `cargo fuzz build parse` (cold, the user's own build) | — | {cargo_fuzz_build:.1} |"
    );
    println!(
        "| `cargo reduce-crash <artifact>` right after it | {after_first:.2} | {after_all:.2} |"
    );
    println!("| `cargo reduce-crash <artifact>` again | {again_first:.2} | {again_all:.2} |");
    println!("| `cargo reduce-crash <artifact>`, cold driver build (empty `--target-dir`) | {cold_first:.2} | {cold_all:.2} |");
    println!(
        "| `cargo fuzz tmin parse <artifact>` after it | {} | {tmin_all:.2} |",
        tmin_first.map_or("—".to_owned(), |t| format!("{t:.2}"))
    );
    println!(
        "\nfirst test right after `cargo fuzz build`: {after_first:.2} s = {:.3} of a cold driver build ({cold_first:.1} s); bar: ≤ 5 s and ≤ 0.2",
        after_first / cold_first
    );
}
