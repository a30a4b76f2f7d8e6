//! Corpora left by real fuzzing campaigns, shrunk side by side with
//! `cargo fuzz cmin` (issue 38, item 1: fast on real corpora, on every
//! core).
//!
//! For each target of the real-world bench's fixture (`benches/realworld`,
//! old crates built by `cargo +nightly fuzz build`), a campaign: the real
//! fuzz binary from the target's seeds with `-fork=2 -ignore_crashes=1
//! -ignore_timeouts=1 -ignore_ooms=1 -max_total_time=N` (`CORPORA_FUZZ_SECS`,
//! default 90), the way a CI job leaves a corpus behind. A corpus already
//! there (`target/bench-scratch/corpora/<target>/campaign`) is reused, so a
//! re-run measures the same files. Then, from the same files:
//!
//! * `cmin`: libFuzzer's `-merge=1` on the real binary (what `cargo fuzz
//!   cmin` runs);
//! * `--corpus --no-shrink` (drop redundant entries only), two drivers;
//! * `--corpus -j 1` and `--corpus` (one driver per core: 2 here).
//!
//! Each result is measured by libFuzzer itself (`-runs=0`: `cov`/`ft` at
//! start) on the real binary: no row may lose a feature. Times are whole
//! commands, the builds warmed up first. A Markdown table goes to stdout.
//!
//! `CORPORA_TARGETS=toml,sqlparser` picks targets (default: toml, sqlparser,
//! ron); `CORPORA_MAX_TIME` bounds each of our runs (`--max-time`, default
//! 1200). Run with `cargo bench --bench corpora`.
//!
//! A target named `<target>:fleet` (e.g. `sqlparser:fleet`) gets the corpus
//! a fleet of CI jobs leaves in a shared directory before anyone prunes it,
//! the thousands-of-entries case: `CORPORA_FLEET` campaigns (default 5), each
//! `-use_value_profile=1 -seed=k` for `CORPORA_FUZZ_SECS` from the seeds in
//! a directory of its own, and the union of their files (libFuzzer names
//! a file by its SHA-1, so a file two jobs found is there once). Its arms
//! leave out `-j 1`.

mod common;
#[path = "../tests/common/real.rs"]
#[allow(dead_code)]
mod real;

use common::{corpus_size, env_list, env_or};
use real::libfuzzer_counts;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-reduce-crash");

/// The campaign's corpus, fuzzed once and kept: one campaign, or with
/// `fleet: Some(n)` the union of `n` value-profile campaigns.
fn campaign(
    root: &Path,
    binary: &Path,
    target: &str,
    scratch: &Path,
    secs: u64,
    fleet: Option<u64>,
) -> PathBuf {
    let dir = scratch.join("campaign");
    if dir.exists() && fs::read_dir(&dir).unwrap().next().is_some() {
        eprintln!("{target}: reusing the corpus in {}", dir.display());
        return dir;
    }
    let artifacts = scratch.join("campaign-artifacts");
    fs::create_dir_all(&artifacts).unwrap();
    let fuzz = |into: &Path, seed: u64, extra: &[&str]| {
        eprintln!("{target}: fuzzing {secs} s on two cores for a corpus (seed {seed})");
        let seeds = root.join("seeds").join(target);
        let status = common::fuzz_campaign(binary, into, &seeds, &artifacts, (seed, secs), extra);
        eprintln!("{target}: campaign ended ({status})");
    };
    match fleet {
        None => fuzz(&dir, 1, &[]),
        Some(n) => {
            // Each job in a directory of its own, then the union (written
            // to a temporary name first, so a stopped run starts over).
            let union = scratch.join("campaign.tmp");
            let _ = fs::remove_dir_all(&union);
            fs::create_dir_all(&union).unwrap();
            for k in 1..=n {
                let job = scratch.join(format!("job-{k}"));
                if !job.exists() || fs::read_dir(&job).unwrap().next().is_none() {
                    fuzz(&job, k, &["-use_value_profile=1"]);
                }
                for e in fs::read_dir(&job).unwrap() {
                    let e = e.unwrap();
                    let _ = fs::copy(e.path(), union.join(e.file_name()));
                }
            }
            let _ = fs::remove_dir_all(&dir);
            fs::rename(&union, &dir).unwrap();
        }
    }
    dir
}

struct Row {
    arm: &'static str,
    files: usize,
    bytes: u64,
    secs: f64,
    cov: u64,
    ft: u64,
    note: String,
}

fn ours(
    root: &Path,
    target: &str,
    corpus: &Path,
    out: &Path,
    args: &[&str],
    max_time: u64,
) -> (f64, Value) {
    let _ = fs::remove_dir_all(out);
    let t = Instant::now();
    let output = Command::new(BIN)
        .arg("reduce-crash")
        .args(["--corpus"])
        .arg(corpus)
        .args(["--fuzz-target", target, "--fuzz-dir"])
        .arg(root.join("fuzz"))
        .arg("-o")
        .arg(out)
        .args(["--max-time", &max_time.to_string()])
        .args(["--message-format", "json"])
        .args(args)
        .output()
        .expect("cargo-reduce-crash runs");
    let secs = t.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let done = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["reason"] == "corpus-finished")
        .unwrap_or_else(|| {
            panic!(
                "{target} {args:?}: no corpus-finished line\n{stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
    (secs, done)
}

fn main() {
    if let Some(why) = real::unavailable() {
        eprintln!("corpora bench: {why}; nothing measured");
        return;
    }
    let targets = env_list("CORPORA_TARGETS", "toml,sqlparser,ron");
    let fuzz_secs: u64 = env_or("CORPORA_FUZZ_SECS", 90);
    let max_time: u64 = env_or("CORPORA_MAX_TIME", 1200);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = common::stable_copy("benches/realworld", "realworld");
    let bins = real::cargo_fuzz_build(&root);
    let scratch_root = repo.join("target/bench-scratch/corpora");

    let mut tables = Vec::new();
    for spec in &targets {
        let (target, fleet) = match spec.strip_suffix(":fleet") {
            Some(t) => (t, Some(env_or("CORPORA_FLEET", 5u64))),
            None => (spec.as_str(), None),
        };
        let binary = bins.join(target);
        let scratch = scratch_root.join(spec.replace(':', "-"));
        fs::create_dir_all(&scratch).unwrap();
        let corpus = campaign(&root, &binary, target, &scratch, fuzz_secs, fleet);
        let (files, bytes) = corpus_size(&corpus);
        let (cov, ft) = libfuzzer_counts(&binary, &corpus);
        let mut rows = vec![Row {
            arm: "as fuzzing left it",
            files,
            bytes,
            secs: 0.0,
            cov,
            ft,
            note: String::new(),
        }];

        // cmin: libFuzzer's merge on the real binary.
        let cmin = scratch.join("cmin");
        let _ = fs::remove_dir_all(&cmin);
        fs::create_dir_all(&cmin).unwrap();
        let t = Instant::now();
        let status = Command::new(&binary)
            .arg("-merge=1")
            .arg(&cmin)
            .arg(&corpus)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("the fuzz binary runs");
        let secs = t.elapsed().as_secs_f64();
        assert!(status.success(), "{target}: -merge=1 failed");
        let (files, bytes) = corpus_size(&cmin);
        let (cov, ft) = libfuzzer_counts(&binary, &cmin);
        rows.push(Row {
            arm: "cmin (-merge=1)",
            files,
            bytes,
            secs,
            cov,
            ft,
            note: String::new(),
        });

        // Warm our coverage build (not timed).
        let warm = scratch.join("warm");
        let _ = ours(
            &root,
            target,
            &corpus,
            &warm,
            &["--no-shrink", "-j", "1"],
            max_time,
        );

        for (arm, args, name) in [
            ("--corpus --no-shrink", &["--no-shrink"][..], "no-shrink"),
            ("--corpus -j 1", &["-j", "1"][..], "j1"),
            ("--corpus (2 drivers)", &[][..], "j2"),
        ] {
            if fleet.is_some() && name == "j1" {
                continue;
            }
            let out = scratch.join(name);
            let (secs, done) = ours(&root, target, &corpus, &out, args, max_time);
            let (files, bytes) = corpus_size(&out);
            let (cov, ft) = libfuzzer_counts(&binary, &out);
            let mut note = format!("{} runs", done["runs"]);
            if done["budget_hit"].as_u64().unwrap_or(0) > 0 {
                note.push_str(&format!(", {} at the test budget", done["budget_hit"]));
            }
            if done["interrupted"] == true || secs >= max_time as f64 {
                note.push_str(", stopped at --max-time");
            }
            rows.push(Row {
                arm,
                files,
                bytes,
                secs,
                cov,
                ft,
                note,
            });
        }
        for r in &rows[1..] {
            assert!(
                r.cov >= rows[0].cov && r.ft >= rows[0].ft,
                "{target}: {} lost features ({}/{} < {}/{})",
                r.arm,
                r.cov,
                r.ft,
                rows[0].cov,
                rows[0].ft
            );
        }
        // Each target's rows as soon as they are known (a long run may be
        // stopped part-way); the whole table again at the end.
        print_rows(spec, &rows);
        tables.push((spec.clone(), rows));
    }

    println!(
        "\nCorpora of real campaigns ({fuzz_secs} s of `-fork=2`), shrunk from the same files\n"
    );
    println!("| target | arm | files | bytes | time (s) | libFuzzer cov | ft | notes |");
    println!("|---|---|---:|---:|---:|---:|---:|---|");
    for (target, rows) in &tables {
        print_rows(target, rows);
    }
    for (target, rows) in &tables {
        if let [.., j1, j2] = rows
            .as_slice()
            .iter()
            .filter(|r| r.arm.contains("drivers") || r.arm.contains("-j 1"))
            .collect::<Vec<_>>()
            .as_slice()
        {
            println!(
                "\n{target}: two drivers {:.2}× faster than one ({:.1} s vs {:.1} s)",
                j1.secs / j2.secs.max(0.001),
                j1.secs,
                j2.secs
            );
        }
    }
}

fn print_rows(target: &str, rows: &[Row]) {
    {
        for r in rows {
            println!(
                "| {target} | {} | {} | {} | {} | {} | {} | {} |",
                r.arm,
                r.files,
                r.bytes,
                if r.secs > 0.0 {
                    format!("{:.1}", r.secs)
                } else {
                    "—".to_owned()
                },
                r.cov,
                r.ft,
                r.note
            );
        }
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
}
