//! Does a reduced corpus fuzz better? (issue 38, item 2.) The same real
//! campaign's corpus, prepared four ways, fuzzed by the real `cargo fuzz
//! build` binary in repeated trials, compared as Klees et al. (CCS 2018)
//! and FuzzBench compare fuzzers.
//!
//! Per target of the real-world fixture (`benches/realworld`, old crates
//! with known bugs): a campaign of `FUZZING_CAMPAIGN_SECS` (default 600) on
//! two cores (`-fork=2`) from the target's seeds, kept in
//! `target/bench-scratch/fuzzing/<target>/campaign`. Its arms:
//!
//! * `as-left`: the corpus as the campaign left it;
//! * `cmin`: libFuzzer's `-merge=1` (what `cargo fuzz cmin` runs);
//! * `no-shrink`: `cargo reduce-crash --corpus --no-shrink`;
//! * `shrink`: `cargo reduce-crash --corpus`.
//!
//! Each arm is fuzzed `FUZZING_TRIALS` times (default 8) for
//! `FUZZING_SECS` (default 300) with `-seed=<trial> -fork=1
//! -ignore_crashes=1` (so a crash does not end the trial), the arm's corpus
//! read-only behind an empty working directory, two trials side by side
//! (one per core). Per trial: libFuzzer's `cov`/`ft` over time, exec/s,
//! and the time each
//! bug was first hit: a crash artifact's time, its identity by `cargo
//! reduce-crash --classify` (kind and place), the first of each identity
//! confirmed by the real binary. A trial's results are kept
//! (`trials-<secs>s/<arm>-<i>.json`, apart per trial length), so a stopped
//! run resumes.
//!
//! Reported per target and arm: median and IQR of the final `cov`, against
//! `cmin` the Vargha–Delaney Â12 and the Mann–Whitney U p-value (and the
//! median, Â12 and p of the final `ft`, which goes on rising where `cov`
//! saturates); median time
//! to each bug (trials that missed it count as the trial length, and say
//! so), with the Â12 of finding it earlier than from `cmin`'s corpus and
//! its p-value; median exec/s; files, bytes, and the load time and `cov` of the
//! real binary running the arm's corpus once (`-runs=0`). A plot of median `cov`
//! over time per arm goes to `docs/fuzzing-<target>.svg`.
//!
//! `FUZZING_TARGETS=sqlparser,zip` picks targets (default: sqlparser, a
//! text parser; zip, a binary format; smallvec, a typed `arbitrary` target
//! of operations); `FUZZING_ARMS=cmin,shrink` picks arms (`cmin` always
//! runs, as the baseline); `FUZZING_FORK=0` fuzzes without fork mode, as
//! `cargo fuzz run` does by default, so each trial ends at its first crash
//! and measures the time to it (trials kept apart, in
//! `trials-<secs>s-first-crash/`). Run with `cargo bench --bench fuzzing`.

mod common;
#[path = "../tests/common/real.rs"]
#[allow(dead_code)]
mod real;

use common::{corpus_size, env_list, env_or};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime};

const BIN: &str = env!("CARGO_BIN_EXE_cargo-reduce-crash");
const ARMS: [&str; 4] = ["as-left", "cmin", "no-shrink", "shrink"];

/// The campaign's corpus, fuzzed once and kept.
fn campaign(root: &Path, binary: &Path, target: &str, scratch: &Path, secs: u64) -> PathBuf {
    let dir = scratch.join("campaign");
    // The marker lives beside the corpus, not in it (libFuzzer would load it).
    if scratch.join("campaign.done").exists() {
        return dir;
    }
    let _ = fs::remove_dir_all(&dir);
    eprintln!("{target}: a {secs} s campaign on two cores");
    let seeds = root.join("seeds").join(target);
    let artifacts = scratch.join("campaign-artifacts");
    let status = common::fuzz_campaign(binary, &dir, &seeds, &artifacts, (1, secs), &[]);
    eprintln!("{target}: campaign ended ({status})");
    fs::write(scratch.join("campaign.done"), "").unwrap();
    dir
}

/// The arm's corpus directory, made once.
fn arm(root: &Path, binary: &Path, target: &str, scratch: &Path, name: &str) -> PathBuf {
    let campaign = scratch.join("campaign");
    if name == "as-left" {
        return campaign;
    }
    let dir = scratch.join("arms").join(name);
    let done = scratch.join("arms").join(format!("{name}.done"));
    if done.exists() {
        return dir;
    }
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let t = Instant::now();
    let ok = if name == "cmin" {
        Command::new(binary)
            .arg("-merge=1")
            .arg(&dir)
            .arg(&campaign)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("the fuzz binary runs")
            .success()
    } else {
        fs::remove_dir(&dir).unwrap();
        let mut cmd = Command::new(BIN);
        cmd.args(["reduce-crash", "--corpus"])
            .arg(&campaign)
            .args(["--fuzz-target", target, "--fuzz-dir"])
            .arg(root.join("fuzz"))
            .arg("-o")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if name == "no-shrink" {
            cmd.arg("--no-shrink");
        }
        let out = cmd.output().expect("cargo-reduce-crash runs");
        if !out.status.success() {
            // What it said, for the failure below.
            eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        }
        out.status.success()
    };
    assert!(ok, "{target}: making the {name} arm failed");
    eprintln!("{target}: {name} arm in {:.1} s", t.elapsed().as_secs_f64());
    fs::write(&done, format!("{}", t.elapsed().as_secs_f64())).unwrap();
    dir
}

/// One `#N: cov: X ft: Y … time: Ts` line of a fork-mode run: time, cov,
/// ft and the runs so far (`#N`, every job's). The line's own `exec/s` is
/// not used: fork mode adds up the rates its jobs print when they end, and
/// a job that ends in a crash prints none (the as-left corpus of smallvec,
/// where every job soon crashes, read 0 on every line).
fn progress(line: &str) -> Option<(f64, u64, u64, u64)> {
    let field = |name: &str| -> Option<u64> {
        let at = line.find(name)? + name.len();
        line[at..]
            .split_whitespace()
            .next()?
            .trim_end_matches('s')
            .parse()
            .ok()
    };
    let runs = line.strip_prefix('#')?.split(':').next()?.parse().ok()?;
    Some((
        field(" time: ")? as f64,
        field("cov: ")?,
        field(" ft: ")?,
        runs,
    ))
}

/// `cov`, `ft` and runs of a progress line without fork mode
/// (`#2048\tpulse  cov: 900 ft: 1500 corp: ...`).
fn plain_progress(line: &str) -> Option<(u64, u64, u64)> {
    let field = |name: &str| -> Option<u64> {
        let at = line.find(name)? + name.len();
        line[at..].split_whitespace().next()?.parse().ok()
    };
    let runs = line
        .strip_prefix('#')?
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    Some((field("cov: ")?, field(" ft: ")?, runs))
}

/// A crash file's identity: kind and place, by `--classify`.
fn identities(root: &Path, target: &str, files: &[PathBuf]) -> Vec<Option<String>> {
    if files.is_empty() {
        return Vec::new();
    }
    let out = Command::new(BIN)
        .args(["reduce-crash", "--classify", "--message-format", "json"])
        .args(["--fuzz-target", target, "--fuzz-dir"])
        .arg(root.join("fuzz"))
        .args(files)
        .stderr(Stdio::null())
        .output()
        .expect("cargo-reduce-crash runs");
    let by_path: BTreeMap<String, String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["reason"] == "classified" && v["outcome"] == "crash")
        .map(|v| {
            let s = &v["signature"];
            let place = s["location"]
                .as_str()
                .or(s["function"].as_str())
                .unwrap_or("?")
                .rsplit("/src/")
                .next()
                .unwrap_or("?")
                .to_owned();
            (
                v["path"].as_str().unwrap_or("").to_owned(),
                format!("{} {place}", s["kind"].as_str().unwrap_or("?")),
            )
        })
        .collect();
    files
        .iter()
        .map(|f| by_path.get(&f.display().to_string()).cloned())
        .collect()
}

/// Whether the real binary crashes on `file` (the first of a bug, checked).
fn really_crashes(binary: &Path, file: &Path) -> bool {
    Command::new(binary)
        .arg("-runs=1")
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| !s.success())
}

/// One trial: fuzz `corpus` for `secs`; its measurements.
#[allow(clippy::too_many_arguments)]
fn trial(
    root: &Path,
    binary: &Path,
    target: &str,
    corpus: &Path,
    scratch: &Path,
    arm: &str,
    i: u64,
    secs: u64,
    fork: bool,
) -> Value {
    let file = scratch.join(format!("{arm}-{i}.json"));
    if let Ok(Ok(v)) = fs::read(&file).map(|b| serde_json::from_slice::<Value>(&b)) {
        return v;
    }
    let dir = scratch.join(format!("{arm}-{i}"));
    let _ = fs::remove_dir_all(&dir);
    let (work, artifacts) = (dir.join("corpus"), dir.join("crashes"));
    fs::create_dir_all(&work).unwrap();
    fs::create_dir_all(&artifacts).unwrap();
    let started = SystemTime::now();
    let t = Instant::now();
    // Fork mode goes on past a crash; without it (what `cargo fuzz run`
    // does by default) the trial ends at its first crash.
    let keep_going: &[&str] = if fork {
        &[
            "-fork=1",
            "-ignore_crashes=1",
            "-ignore_timeouts=1",
            "-ignore_ooms=1",
        ]
    } else {
        &[]
    };
    let out = Command::new(binary)
        .args(keep_going)
        .args([
            format!("-seed={}", i + 1),
            format!("-max_total_time={secs}"),
        ])
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg(&work)
        .arg(corpus)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("the fuzz binary runs");
    let wall = t.elapsed().as_secs_f64();
    let log = String::from_utf8_lossy(&out.stderr);
    let mut curve: Vec<(f64, u64, u64, u64)> = log.lines().filter_map(progress).collect();
    if !fork {
        // Lines without fork mode carry no time: the last one, at the end.
        curve = log
            .lines()
            .rev()
            .find_map(plain_progress)
            .map(|(cov, ft, runs)| vec![(wall, cov, ft, runs)])
            .unwrap_or_default();
    }
    let mut crashes: Vec<(f64, PathBuf)> = fs::read_dir(&artifacts)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let at = e.metadata().ok()?.modified().ok()?;
            let secs = at.duration_since(started).ok()?.as_secs_f64();
            Some((secs, e.path()))
        })
        .collect();
    crashes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let paths: Vec<PathBuf> = crashes.iter().map(|c| c.1.clone()).collect();
    let mut bugs: BTreeMap<String, f64> = BTreeMap::new();
    for ((secs, path), id) in crashes.iter().zip(identities(root, target, &paths)) {
        if let Some(id) = id {
            if !bugs.contains_key(&id) && really_crashes(binary, path) {
                bugs.insert(id, *secs);
            }
        }
    }
    let last = curve.last().copied().unwrap_or((0.0, 0, 0, 0));
    // Runs over the time the last line reports (the whole trial, less the
    // time before the first job's line).
    let exec_per_sec = last.3 as f64 / last.0.max(1.0);
    let v = json!({
        "arm": arm, "trial": i, "secs": wall,
        "cov": last.1, "ft": last.2, "exec_per_sec": exec_per_sec, "runs": last.3,
        "curve": curve.iter().map(|p| [p.0, p.1 as f64]).collect::<Vec<_>>(),
        "bugs": bugs, "crash_files": paths.len(),
    });
    let tmp = file.with_extension("tmp");
    fs::write(&tmp, serde_json::to_vec(&v).unwrap()).unwrap();
    fs::rename(&tmp, &file).unwrap();
    let _ = fs::remove_dir_all(&dir);
    v
}

/// Median `cov` over time per arm, one line each, as an SVG.
fn plot(target: &str, secs: u64, curves: &[(&str, Vec<(f64, f64)>)], out: &Path) {
    use plotters::prelude::*;
    let lo = curves
        .iter()
        .flat_map(|c| c.1.iter().map(|p| p.1))
        .fold(f64::MAX, f64::min);
    let hi = curves
        .iter()
        .flat_map(|c| c.1.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let area = SVGBackend::new(out, (720, 420)).into_drawing_area();
    area.fill(&WHITE).unwrap();
    let mut chart = ChartBuilder::on(&area)
        .caption(
            format!("{target}: median libFuzzer cov over time"),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..secs as f64, (lo - 5.0).max(0.0)..hi + 5.0)
        .unwrap();
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc("cov")
        .draw()
        .unwrap();
    for (k, (arm, points)) in curves.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))
            .unwrap()
            .label(*arm)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .unwrap();
    area.present().unwrap();
}

/// The trials' median `cov` at each whole second.
fn median_curve(trials: &[&Value], secs: u64) -> Vec<(f64, f64)> {
    (0..=secs)
        .map(|s| {
            let at: Vec<f64> = trials
                .iter()
                .map(|t| {
                    // Before a trial's first line: its first line's value
                    // (what loading the corpus reached).
                    let curve = t["curve"].as_array().unwrap();
                    let first = curve.first().map_or(0.0, |p| p[1].as_f64().unwrap());
                    curve
                        .iter()
                        .filter(|p| p[0].as_f64().unwrap() <= s as f64)
                        .map(|p| p[1].as_f64().unwrap())
                        .fold(first, f64::max)
                })
                .collect();
            (s as f64, common::median(at))
        })
        .collect()
}

fn main() {
    if let Some(why) = real::unavailable() {
        eprintln!("fuzzing bench: {why}; nothing measured");
        return;
    }
    let targets = env_list("FUZZING_TARGETS", "sqlparser,zip,smallvec");
    let campaign_secs: u64 = env_or("FUZZING_CAMPAIGN_SECS", 600);
    let trials: u64 = env_or("FUZZING_TRIALS", 8);
    let secs: u64 = env_or("FUZZING_SECS", 300);
    let fork = env_or::<u64>("FUZZING_FORK", 1) != 0;
    // The arms to fuzz; `cmin` always, since every arm is compared with it.
    let mut arms: Vec<String> = env_list("FUZZING_ARMS", &ARMS.join(","));
    if let Some(bad) = arms.iter().find(|a| !ARMS.contains(&a.as_str())) {
        panic!(
            "FUZZING_ARMS: unknown arm {bad:?} (arms: {})",
            ARMS.join(", ")
        );
    }
    if !arms.iter().any(|a| a == "cmin") {
        arms.insert(0, "cmin".to_string());
    }
    arms.sort_by_key(|a| ARMS.iter().position(|x| x == a));
    arms.dedup();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = common::stable_copy("benches/realworld", "realworld");
    let bins = real::cargo_fuzz_build(&root);
    println!(
        "Fuzzing from {} corpora of one {campaign_secs} s campaign ({}): {trials} trials of \
         {secs} s per arm, two side by side, {}\n",
        arms.len(),
        arms.join(", "),
        if fork {
            "fork mode (on past crashes)"
        } else {
            "without fork mode (each trial ends at its first crash)"
        }
    );
    println!("| target | arm | files | bytes | load s | cov at start | cov median | IQR | Â12 vs cmin | p | ft median | ft Â12, p | exec/s | time to each bug (median s; found in n of {trials}; [Â12 earlier than cmin, p]) |");
    println!("|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---:|---|");
    for target in &targets {
        let binary = bins.join(target);
        let scratch = repo.join("target/bench-scratch/fuzzing").join(target);
        // Trials of different lengths are different measurements: kept apart.
        let kept = scratch.join(if fork {
            format!("trials-{secs}s")
        } else {
            format!("trials-{secs}s-first-crash")
        });
        fs::create_dir_all(&kept).unwrap();
        campaign(&root, &binary, target, &scratch, campaign_secs);
        let corpora: Vec<(&str, PathBuf)> = arms
            .iter()
            .map(|a| (a.as_str(), arm(&root, &binary, target, &scratch, a)))
            .collect();
        let jobs: Vec<(usize, u64)> = (0..trials)
            .flat_map(|i| (0..corpora.len()).map(move |a| (a, i)))
            .collect();
        let results = common::side_by_side(&jobs, |&(a, i)| {
            let (name, dir) = &corpora[a];
            let v = trial(&root, &binary, target, dir, &kept, name, i, secs, fork);
            eprintln!("{target} {name} trial {i}: cov {}", v["cov"]);
            v
        });
        let of =
            |arm: &str| -> Vec<&Value> { results.iter().filter(|v| v["arm"] == arm).collect() };
        let covs = |arm: &str| -> Vec<f64> {
            of(arm).iter().map(|v| v["cov"].as_f64().unwrap()).collect()
        };
        // Features (`ft`): edges with hit counts, finer than `cov`, which
        // saturates on small targets.
        let fts =
            |arm: &str| -> Vec<f64> { of(arm).iter().map(|v| v["ft"].as_f64().unwrap()).collect() };
        let all_bugs: std::collections::BTreeSet<String> = results
            .iter()
            .flat_map(|v| v["bugs"].as_object().unwrap().keys().cloned())
            .collect();
        let mut curves = Vec::new();
        for (name, dir) in &corpora {
            let (files, bytes) = corpus_size(dir);
            // Load time: the real binary running the corpus once (`-runs=0`).
            let t = Instant::now();
            let (start_cov, _) = real::libfuzzer_counts(&binary, dir);
            let load = t.elapsed().as_secs_f64();
            let c = covs(name);
            let (q1, q3) = common::quartiles(c.clone());
            let (a12, p) = common::a12_and_p(&c, &covs("cmin"));
            let (ft_a12, ft_p) = common::a12_and_p(&fts(name), &fts("cmin"));
            // Trials that missed a bug count as the trial's length.
            let times = |arm: &str, b: &str| -> Vec<f64> {
                of(arm)
                    .iter()
                    .map(|v| v["bugs"][b].as_f64().unwrap_or(secs as f64))
                    .collect()
            };
            let bugs: Vec<String> = all_bugs
                .iter()
                .map(|b| {
                    let found = of(name).iter().filter(|v| v["bugs"][b].is_f64()).count();
                    let mut line = format!(
                        "{b}: {:.0} ({found}/{})",
                        common::median(times(name, b)),
                        of(name).len()
                    );
                    if *name != "cmin" {
                        // Â12 of finding it earlier than from cmin's corpus.
                        let (a12, p) = common::a12_and_p(&times("cmin", b), &times(name, b));
                        line.push_str(&format!(" [Â12 {a12:.2}, p {p:.2}]"));
                    }
                    line
                })
                .collect();
            let med =
                |f: &str| common::median(of(name).iter().filter_map(|v| v[f].as_f64()).collect());
            println!(
                "| {target} | `{name}` | {files} | {bytes} | {load:.2} | {start_cov} | {} | {q1}–{q3} | {a12:.2} | {p:.3} | {} | {ft_a12:.2}, {ft_p:.3} | {:.0} | {} |",
                common::median(c.clone()),
                common::median(fts(name)),
                med("exec_per_sec"),
                bugs.join("; ")
            );
            curves.push((*name, median_curve(&of(name), secs)));
        }
        // The default trials' plot is the one docs/benchmarks.md shows.
        let svg = repo.join("docs").join(if secs == 300 && fork {
            format!("fuzzing-{target}.svg")
        } else {
            format!(
                "fuzzing-{target}-{secs}s{}.svg",
                if fork { "" } else { "-first-crash" }
            )
        });
        plot(target, secs, &curves, &svg);
        eprintln!("{target}: plot in {}", svg.display());
    }
}
