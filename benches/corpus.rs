//! Corpus shrinking (`--corpus`) vs `cargo fuzz cmin`, side by side on the
//! same corpora. (The population-reduction example fuzzer has its own
//! bench: `benches/population.rs`.)
//!
//! Target: the bundled example project's `parse` (an INI parser), copied to
//! `target/bench-fixtures/example-cmin`. Corpora: seeded generated INI
//! documents (sections, pairs, quoted values, comments, malformed lines),
//! the kind of seed files users collect; none crashes the target. For each
//! corpus, both tools start from the same files:
//!
//! * `cargo fuzz cmin parse DIR` (libFuzzer's `-merge=1`, its default build);
//! * `cargo reduce-crash --corpus DIR -o OUT` (drop redundant entries and
//!   shrink the kept ones, losing no coverage feature).
//!
//! Coverage of every result is measured three times: by libFuzzer itself
//! (the `cov:`/`ft:` of `-runs=0`) on `cargo fuzz build`'s default build
//! (AddressSanitizer) and on its `-s none` build, and by this tool's
//! coverage driver (its default build). Wall times exclude the builds (both are warmed up
//! first).
//!
//! Needs cargo-fuzz (`cargo install cargo-fuzz`). Run with `cargo bench --bench corpus`.

mod common;
#[path = "../tests/common/real.rs"]
#[allow(dead_code)]
mod real;

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-reduce-crash");
const LIMIT: Duration = Duration::from_secs(900);
/// (corpus name, number of documents, generator seed)
const CORPORA: &[(&str, usize, u64)] = &[("ini-100", 100, 1), ("ini-400", 400, 2)];

#[path = "../tests/common/ini.rs"]
mod ini;

use ini::{ini_document, Rng};

fn fresh_dir(dir: &Path) {
    if dir.exists() {
        fs::remove_dir_all(dir).expect("remove old bench dir");
    }
    fs::create_dir_all(dir).expect("create bench dir");
}

fn copy_dir(from: &Path, to: &Path) {
    fresh_dir(to);
    for e in fs::read_dir(from).expect("read corpus") {
        let e = e.expect("entry");
        fs::copy(e.path(), to.join(e.file_name())).expect("copy entry");
    }
}

/// Runs our `--corpus` and returns its `corpus-finished` message.
fn ours(root: &Path, scratch: &Path, input: &Path, output: &Path, shrink: bool) -> (Value, f64) {
    let _ = fs::remove_dir_all(output);
    let mut cmd = Command::new(BIN);
    cmd.current_dir(root)
        .args(["--corpus", "-t", "parse", "--message-format", "json"])
        .arg(input)
        .arg("-o")
        .arg(output);
    if !shrink {
        cmd.arg("--no-shrink");
    }
    let f = common::run_limited(cmd, scratch, LIMIT);
    assert!(f.ok(), "cargo reduce-crash --corpus failed:\n{}", f.stderr);
    let done = f
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["reason"] == "corpus-finished")
        .expect("corpus-finished message");
    (done, f.secs)
}

fn cargo_fuzz_available() -> bool {
    Command::new("cargo")
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn host_triple() -> String {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc -vV");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .expect("host triple")
}

/// Builds the example's `parse` with `cargo fuzz build` (its `extra` flags)
/// into its own target directory and returns the libFuzzer binary.
fn libfuzzer_build(root: &Path, scratch: &Path, extra: &[&str], dir: &str) -> PathBuf {
    eprintln!(
        "building the libFuzzer binary (cargo fuzz build {} parse) …",
        extra.join(" ")
    );
    let target_dir = root.join("fuzz").join(dir);
    let mut build = Command::new("cargo");
    build.current_dir(root);
    if extra.is_empty() {
        // AddressSanitizer needs nightly.
        build.arg("+nightly");
    }
    build
        .args(["fuzz", "build"])
        .args(extra)
        .arg("--target-dir")
        .arg(&target_dir)
        .arg("parse");
    let f = common::run_limited(build, scratch, LIMIT);
    assert!(f.ok(), "cargo fuzz build failed:\n{}", f.stderr);
    let binary = target_dir.join(host_triple()).join("release/parse");
    assert!(binary.exists(), "no {}", binary.display());
    binary
}

fn cmin_comparison(root: &Path, scratch: &Path) {
    let fuzz = root.join("fuzz");
    // The judges: libFuzzer on `cargo fuzz build`'s default build
    // (AddressSanitizer) and on its `-s none` build.
    // (The ASan one where `cargo fuzz cmin` finds it, so its build is warm.)
    let asan = libfuzzer_build(root, scratch, &[], "target");
    let binary = libfuzzer_build(root, scratch, &["-s", "none"], "target-none");
    let judge = |dir: &Path| {
        let (cov, ft) = real::libfuzzer_counts(&asan, dir);
        let (cov_none, ft_none) = real::libfuzzer_counts(&binary, dir);
        format!("{cov} / {ft} | {cov_none} / {ft_none}")
    };

    println!("**Corpus shrinking vs `cargo fuzz cmin`** (target `parse` of the example project; coverage as libFuzzer counts it (`cov` / `ft` of `-runs=0`) on `cargo fuzz build`'s default build (AddressSanitizer) and on its `-s none` build, and as our coverage driver counts it (the default build); times exclude builds)\n");
    println!("| corpus | tool | files | total bytes | libFuzzer cov / ft (ASan) | libFuzzer cov / ft (`-s none`) | our features | wall time (s) |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let mut warmed = false;
    for &(name, n, seed) in CORPORA {
        let original = fuzz.join("corpus").join(format!("{name}-original"));
        fresh_dir(&original);
        let mut rng = Rng::from_state(seed);
        for i in 0..n {
            fs::write(
                original.join(format!("seed-{i:03}")),
                ini_document(&mut rng),
            )
            .expect("write corpus");
        }
        if !warmed {
            eprintln!("warming up our coverage driver …");
            let one = fuzz.join("corpus/warm-up");
            fresh_dir(&one);
            fs::write(one.join("a"), b"[a]\nb = c\n").expect("write");
            ours(root, scratch, &one, &fuzz.join("corpus/warm-up.out"), true);
            warmed = true;
        }
        let (files, bytes) = common::corpus_size(&original);
        let judged = judge(&original);
        let (measured, _) = ours(
            root,
            scratch,
            &original,
            &fuzz.join("corpus/measure.out"),
            false,
        );
        println!(
            "| {name} | (original) | {files} | {bytes} | {judged} | {} | |",
            measured["features_before"]
        );

        eprintln!("{name}: cargo fuzz cmin …");
        let cmin_dir = fuzz.join("corpus").join(format!("{name}-cmin"));
        copy_dir(&original, &cmin_dir);
        let mut cmd = Command::new("cargo");
        cmd.current_dir(root)
            .args(["+nightly", "fuzz", "cmin", "parse"])
            .arg(&cmin_dir);
        let f = common::run_limited(cmd, scratch, LIMIT);
        assert!(f.ok(), "cargo fuzz cmin failed:\n{}", f.stderr);
        let (files, bytes) = common::corpus_size(&cmin_dir);
        let judged = judge(&cmin_dir);
        let (m, _) = ours(
            root,
            scratch,
            &cmin_dir,
            &fuzz.join("corpus/measure.out"),
            false,
        );
        println!(
            "| {name} | `cargo fuzz cmin` | {files} | {bytes} | {judged} | {} | {:.2} |",
            m["features_before"], f.secs
        );

        eprintln!("{name}: cargo reduce-crash --corpus --no-shrink …");
        let drop_dir = fuzz.join("corpus").join(format!("{name}-noshrink"));
        let (done, secs) = ours(root, scratch, &original, &drop_dir, false);
        let judged = judge(&drop_dir);
        println!(
            "| {name} | `reduce-crash --corpus --no-shrink` | {} | {} | {judged} | {} | {secs:.2} |",
            done["files_after"], done["bytes_after"], done["features_after"]
        );

        eprintln!("{name}: cargo reduce-crash --corpus …");
        let ours_dir = fuzz.join("corpus").join(format!("{name}-reduced"));
        let (done, secs) = ours(root, scratch, &original, &ours_dir, true);
        let judged = judge(&ours_dir);
        println!(
            "| {name} | `reduce-crash --corpus` | {} | {} | {judged} | {} | {secs:.2} |",
            done["files_after"], done["bytes_after"], done["features_after"]
        );
    }
    println!();
}

fn main() {
    let root = common::stable_copy("example", "example-cmin");
    let scratch = root.join("bench-scratch");
    fs::create_dir_all(&scratch).expect("scratch dir");
    if cargo_fuzz_available() {
        cmin_comparison(&root, &scratch);
    } else {
        println!("cargo-fuzz is not installed (`cargo install cargo-fuzz`): skipping the cmin comparison\n");
    }
}
