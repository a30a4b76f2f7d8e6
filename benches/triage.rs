//! Triage: from a pile of crash files to a list of bugs, ours against
//! CASR's `casr-libfuzzer`.
//!
//! Two fleets, each with its ground truth (which bug every file hits):
//! - `tests/fixtures/fleet`: 204 files over 4 targets, 9 bugs (written by
//!   its `generate`, `truth.tsv`);
//! - `benches/triage/fleet`: 226 files that fork-mode fuzzing
//!   (`-fork=1 -ignore_crashes=1`) left on 7 targets of 7 old crates
//!   (`benches/realworld`'s pinned versions), 14 bugs judged by the real
//!   binary (`benches/triage/truth`, `truth.tsv`).
//!
//! For each fleet, the targets are built with `cargo +nightly fuzz build`
//! (what both tools run) and measured in one run:
//! - ours, classification and grouping only (`--all --no-reduce`, drivers
//!   built beforehand, records cleared): wall time, time per file, time to
//!   the first `bug` line;
//! - ours with every bug reduced (`--all`, records cleared);
//! - `casr-libfuzzer -j <cores> -i <target's files> -o <out> -- <binary>`
//!   per target (it takes one binary), summed.
//!
//! Each tool's groups (our bugs; CASR's clusters, whose files it keeps)
//! are scored against the truth: bugs found, split (a true bug spread over
//! several groups), merged (a group holding several true bugs), missed (a
//! true bug in no group: CASR leaves `oom-`/`timeout-` files out). Then the
//! severity each tool gives each true bug, side by side.
//!
//! Needs nightly, cargo-fuzz and CASR (`cargo install casr`). Run with
//! `cargo bench --bench triage` (about 20 minutes, most of it building
//! the real crates' targets the first time).

mod common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cargo-reduce-crash");
const LIMIT: Duration = Duration::from_secs(3600);

struct Fleet {
    name: &'static str,
    /// The cargo-fuzz project (a copy), its artifacts in place.
    root: PathBuf,
    targets: Vec<String>,
    /// file name → bug.
    truth: BTreeMap<String, String>,
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn host_triple() -> String {
    let out = Command::new("rustc").arg("-vV").output().expect("rustc");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .expect("host")
}

/// Copies every file of `from`'s subdirectories into `to/<subdir>/`.
fn copy_artifacts(from: &Path, to: &Path) -> Vec<String> {
    let mut targets = Vec::new();
    let _ = std::fs::remove_dir_all(to);
    for d in std::fs::read_dir(from).expect("fleet dir").flatten() {
        if !d.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let name = d.file_name().to_string_lossy().into_owned();
        std::fs::create_dir_all(to.join(&name)).expect("mkdir");
        for f in std::fs::read_dir(d.path()).expect("dir").flatten() {
            std::fs::copy(f.path(), to.join(&name).join(f.file_name())).expect("copy");
        }
        targets.push(name);
    }
    targets.sort();
    targets
}

fn read_truth(path: &Path, file_col: usize, bug_col: usize) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .expect("truth.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("target\t"))
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c[file_col].to_owned(), c[bug_col].to_owned())
        })
        .collect()
}

fn fleets() -> Vec<Fleet> {
    let synthetic = common::stable_copy("tests/fixtures/fleet", "triage-fleet");
    let targets = copy_artifacts(
        &repo().join("tests/fixtures/fleet/fuzz/artifacts"),
        &synthetic.join("fuzz/artifacts"),
    );
    let real = common::stable_copy("benches/realworld", "triage-real");
    let real_targets = copy_artifacts(
        &repo().join("benches/triage/fleet"),
        &real.join("fuzz/artifacts"),
    );
    vec![
        Fleet {
            name: "fixture fleet (tests/fixtures/fleet)",
            root: synthetic,
            targets,
            truth: read_truth(&repo().join("tests/fixtures/fleet/truth.tsv"), 1, 2),
        },
        Fleet {
            name: "real crates (benches/triage/fleet)",
            root: real,
            targets: real_targets,
            truth: read_truth(&repo().join("benches/triage/fleet/truth.tsv"), 1, 4),
        },
    ]
}

/// `cargo +nightly fuzz build <target>` for each target; the binaries' dir.
fn build(f: &Fleet, scratch: &Path) -> PathBuf {
    for t in &f.targets {
        eprintln!("{}: cargo +nightly fuzz build {t} …", f.name);
        let mut cmd = Command::new("cargo");
        cmd.args(["+nightly", "fuzz", "build", t])
            .current_dir(&f.root)
            .env_remove("CARGO_TARGET_DIR");
        let done = common::run_limited(cmd, scratch, LIMIT);
        assert!(done.ok(), "cargo fuzz build {t} failed:\n{}", done.stderr);
    }
    f.root
        .join("fuzz/target")
        .join(host_triple())
        .join("release")
}

/// Removes our records and results from the fleet's artifacts.
fn clear(f: &Fleet) {
    for t in &f.targets {
        let dir = f.root.join("fuzz/artifacts").join(t);
        let _ = std::fs::remove_dir_all(dir.join(".reduce-crash"));
        for e in std::fs::read_dir(&dir).expect("dir").flatten() {
            if e.file_name().to_string_lossy().ends_with(".reduced") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Runs `run` with only the files `casr-libfuzzer` reads (`crash-*`; it
/// leaves `oom-*`, `timeout-*` and `slow-unit-*` out) in the fleet's
/// artifact directories, the others moved aside and back; how many it read.
fn with_crash_files_only<R>(f: &Fleet, scratch: &Path, run: impl FnOnce() -> R) -> (usize, R) {
    let aside = scratch.join("aside");
    let _ = std::fs::remove_dir_all(&aside);
    let mut moved = Vec::new();
    let mut kept = 0;
    for t in &f.targets {
        let dir = f.root.join("fuzz/artifacts").join(t);
        std::fs::create_dir_all(aside.join(t)).expect("mkdir");
        for e in std::fs::read_dir(&dir).expect("dir").flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !e.file_type().is_ok_and(|t| t.is_file()) || name.ends_with(".reduced") {
                continue;
            }
            if name.starts_with("crash-") {
                kept += 1;
            } else {
                let to = aside.join(t).join(&name);
                std::fs::rename(e.path(), &to).expect("move aside");
                moved.push((to, e.path()));
            }
        }
    }
    let r = run();
    for (from, to) in moved {
        std::fs::rename(from, to).expect("move back");
    }
    (kept, r)
}

/// One tool's group: its files, its severity tier and class.
type Group = (BTreeSet<String>, String, String);

/// What one run of ours showed.
struct Ours {
    secs: f64,
    first_bug: Option<f64>,
    /// fingerprint → (member file names, tier, class).
    bugs: Vec<(BTreeSet<String>, String, String)>,
}

fn ours(f: &Fleet, extra: &[&str]) -> Ours {
    let mut cmd = Command::new(BIN);
    cmd.args(["--all", "--message-format", "json"])
        .args(extra)
        .current_dir(&f.root)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("cargo-reduce-crash");
    let mut first_bug = None;
    let mut bugs = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("stdout")).lines() {
        let Ok(line) = line else { break };
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if v["reason"] == "bug" {
            first_bug.get_or_insert(start.elapsed().as_secs_f64());
            let files = v["members"]
                .as_array()
                .map(|m| {
                    m.iter()
                        .filter_map(|p| Path::new(p.as_str()?).file_name())
                        .map(|n| n.to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            bugs.push((
                files,
                v["severity"]["tier"].as_str().unwrap_or("").to_owned(),
                v["severity"]["class"].as_str().unwrap_or("").to_owned(),
            ));
        }
    }
    let _ = child.wait();
    Ours {
        secs: start.elapsed().as_secs_f64(),
        first_bug,
        bugs,
    }
}

/// CASR's clusters of one fleet: (files kept in the cluster, tier, class),
/// and its wall time over all targets.
fn casr(f: &Fleet, bins: &Path, scratch: &Path, jobs: usize) -> (Vec<Group>, f64, String) {
    let out_root = scratch.join(format!(
        "casr-{}",
        f.root.file_name().unwrap().to_string_lossy()
    ));
    let _ = std::fs::remove_dir_all(&out_root);
    std::fs::create_dir_all(&out_root).expect("mkdir");
    let mut clusters = Vec::new();
    let mut secs = 0.0;
    let version = Command::new("casr-libfuzzer")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    for t in &f.targets {
        let out = out_root.join(t);
        let mut cmd = Command::new("casr-libfuzzer");
        cmd.args(["-j", &jobs.to_string(), "-i"])
            .arg(f.root.join("fuzz/artifacts").join(t))
            .arg("-o")
            .arg(&out)
            .arg("--")
            .arg(bins.join(t))
            .env("ASAN_OPTIONS", "detect_odr_violation=0")
            .current_dir(&f.root);
        let done = common::run_limited(cmd, scratch, LIMIT);
        secs += done.secs;
        if !done.ok() {
            eprintln!("casr-libfuzzer on {t}: {:?}\n{}", done.status, done.stderr);
        }
        let Ok(dirs) = std::fs::read_dir(&out) else {
            continue;
        };
        for cl in dirs
            .flatten()
            .filter(|d| d.file_name().to_string_lossy().starts_with("cl"))
        {
            let mut files = BTreeSet::new();
            let (mut tier, mut class) = (String::new(), String::new());
            for e in std::fs::read_dir(cl.path()).expect("cluster").flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(stem) = name.strip_suffix(".casrep") {
                    if tier.is_empty() {
                        let rep: Value =
                            serde_json::from_slice(&std::fs::read(e.path()).unwrap_or_default())
                                .unwrap_or(Value::Null);
                        tier = rep["CrashSeverity"]["Type"]
                            .as_str()
                            .unwrap_or("")
                            .to_owned();
                        class = rep["CrashSeverity"]["ShortDescription"]
                            .as_str()
                            .unwrap_or("")
                            .to_owned();
                    }
                    files.insert(stem.to_owned());
                } else {
                    files.insert(name);
                }
            }
            clusters.push((files, tier, class));
        }
    }
    (clusters, secs, version)
}

/// (groups, split, merged, missed) of `groups` against `truth`.
fn score(
    groups: &[(BTreeSet<String>, String, String)],
    truth: &BTreeMap<String, String>,
) -> (usize, usize, usize, usize) {
    let mut groups_of: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    let mut merged = 0;
    for (i, (files, _, _)) in groups.iter().enumerate() {
        let bugs: BTreeSet<&str> = files
            .iter()
            .filter_map(|f| truth.get(f).map(String::as_str))
            .collect();
        merged += bugs.len().saturating_sub(1);
        for b in bugs {
            groups_of.entry(b).or_default().insert(i);
        }
    }
    let all: BTreeSet<&str> = truth.values().map(String::as_str).collect();
    let missed = all.iter().filter(|b| !groups_of.contains_key(*b)).count();
    let split = groups_of.values().map(|g| g.len() - 1).sum();
    (groups.len(), split, merged, missed)
}

/// The tier and class a tool gives a true bug (its largest group's).
fn severity_of(
    bug: &str,
    groups: &[(BTreeSet<String>, String, String)],
    truth: &BTreeMap<String, String>,
) -> String {
    groups
        .iter()
        .map(|(files, tier, class)| {
            (
                files
                    .iter()
                    .filter(|f| truth.get(*f).is_some_and(|b| b == bug))
                    .count(),
                tier,
                class,
            )
        })
        .filter(|(n, _, _)| *n > 0)
        .max_by_key(|(n, _, _)| *n)
        .map(|(_, tier, class)| format!("{tier} ({class})"))
        .unwrap_or_else(|| "— (missed)".to_owned())
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let casr_ok = Command::new("casr-libfuzzer")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !casr_ok {
        eprintln!("triage bench: casr-libfuzzer is not installed (`cargo install casr`); nothing measured");
        return;
    }
    let scratch = repo().join("target/bench-scratch/triage");
    std::fs::create_dir_all(&scratch).expect("scratch");
    let jobs = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let mut summary = Vec::new();
    let mut severities = Vec::new();
    for f in fleets() {
        let bins = build(&f, &scratch);
        eprintln!("{}: ours (warm-up: driver builds) …", f.name);
        clear(&f);
        let _ = ours(&f, &["--no-reduce"]);
        clear(&f);
        eprintln!("{}: ours, classification only …", f.name);
        let classify = ours(&f, &["--no-reduce"]);
        clear(&f);
        eprintln!(
            "{}: ours, classification only, crash-* files only …",
            f.name
        );
        let (crash_files, classify_crash) = with_crash_files_only(&f, &scratch, || {
            clear(&f);
            ours(&f, &["--no-reduce"])
        });
        clear(&f);
        eprintln!("{}: ours, with reductions …", f.name);
        let reduce = ours(&f, &[]);
        eprintln!("{}: casr-libfuzzer …", f.name);
        let (clusters, casr_secs, version) = casr(&f, &bins, &scratch, jobs);
        let files = f.truth.len() as f64;
        let true_bugs: BTreeSet<&String> = f.truth.values().collect();
        let s_ours = score(&classify.bugs, &f.truth);
        let s_casr = score(&clusters, &f.truth);
        summary.push(format!(
            "| {} | ours (`--all --no-reduce`) | {} | {} | {} | {} | {} | {} | {:.1} | {:.3} | {} |",
            f.name,
            f.truth.len(),
            true_bugs.len(),
            s_ours.0,
            s_ours.1,
            s_ours.2,
            s_ours.3,
            classify.secs,
            classify.secs / files,
            classify.first_bug.map(|t| format!("{t:.1}")).unwrap_or_else(|| "—".into()),
        ));
        let s_red = score(&reduce.bugs, &f.truth);
        summary.push(format!(
            "| {} | ours (`--all`, every bug reduced) | {} | {} | {} | {} | {} | {} | {:.1} | {:.3} | {} |",
            f.name,
            f.truth.len(),
            true_bugs.len(),
            s_red.0,
            s_red.1,
            s_red.2,
            s_red.3,
            reduce.secs,
            reduce.secs / files,
            reduce.first_bug.map(|t| format!("{t:.1}")).unwrap_or_else(|| "—".into()),
        ));
        summary.push(format!(
            "| {} | {version} (`-j {jobs}`) | {} | {} | {} | {} | {} | {} | {:.1} | {:.3} | — |",
            f.name,
            f.truth.len(),
            true_bugs.len(),
            s_casr.0,
            s_casr.1,
            s_casr.2,
            s_casr.3,
            casr_secs,
            casr_secs / files,
        ));
        summary.push(format!(
            "| {} | ours (`--all --no-reduce`), only the {crash_files} `crash-*` files casr reads | {crash_files} | | | | | | {:.1} | {:.3} | {} |",
            f.name,
            classify_crash.secs,
            classify_crash.secs / crash_files as f64,
            classify_crash.first_bug.map(|t| format!("{t:.1}")).unwrap_or_else(|| "—".into()),
        ));
        summary.push(format!(
            "| {} | per file, casr / ours (classification): all files; the `crash-*` files both read | | | | | | | | **{:.1}×**; **{:.1}×** | |",
            f.name,
            casr_secs / classify.secs,
            (casr_secs / crash_files as f64) / (classify_crash.secs / crash_files as f64)
        ));
        for b in &true_bugs {
            severities.push(format!(
                "| {} | {b} | {} | {} |",
                f.name,
                severity_of(b, &classify.bugs, &f.truth),
                severity_of(b, &clusters, &f.truth)
            ));
        }
    }
    println!("**Triage** (`cargo bench --bench triage`; one run; both tools on `cargo fuzz build`'s AddressSanitizer binaries, builds excluded; groups scored against each fleet's truth: split = groups beyond the first of each true bug, merged = a group over several true bugs, missed = a true bug in no group)\n");
    println!("| fleet | tool | files | true bugs | groups | split | merged | missed | wall (s) | s / file | first `bug` line (s) |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for l in &summary {
        println!("{l}");
    }
    println!("\n| fleet | true bug | ours: tier (class) | CASR: tier (class) |\n|---|---|---|---|");
    for l in &severities {
        println!("{l}");
    }
}
