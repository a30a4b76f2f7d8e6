//! Shared by the benchmarks: copying fixture projects to a stable place
//! under `target/` (so driver builds stay cached between runs), and running
//! a command with a time limit.

// Each bench uses only some of these.
#![allow(dead_code)]

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Copies `src` (without `target/` directories) to `dst`, overwriting files.
pub fn copy_tree(src: &Path, dst: &Path) {
    for entry in walkdir::WalkDir::new(src)
        .into_iter()
        .filter_entry(|e| e.file_name() != "target")
    {
        let entry = entry.expect("readable fixture");
        let rel = entry.path().strip_prefix(src).expect("under src");
        let to = dst.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to).expect("create dir");
        } else if std::fs::read(entry.path()).ok() != std::fs::read(&to).ok() {
            std::fs::copy(entry.path(), &to).expect("copy file");
        }
    }
}

/// `<repo>/target/bench-fixtures/<name>`, refreshed from `from`.
pub fn stable_copy(from: &str, name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dst = root.join("target/bench-fixtures").join(name);
    copy_tree(&root.join(from), &dst);
    dst
}

/// A finished (or killed) command and what it printed.
pub struct Finished {
    /// `None` when it was killed at the time limit.
    pub status: Option<ExitStatus>,
    pub secs: f64,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    pub fn ok(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// The `reduce-finished` line of a `--message-format json` run.
    pub fn reduce_finished(&self) -> Option<serde_json::Value> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|v| v["reason"] == "reduce-finished")
    }
}

/// libFuzzer's `minimized-from-*` files in `dir`, with their times.
pub fn minimized(dir: &Path) -> Vec<(PathBuf, std::time::SystemTime)> {
    fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("minimized-from-")
                })
                .filter_map(|e| Some((e.path(), e.metadata().ok()?.modified().ok()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// How long a run stopped at its limit has to finish after Ctrl-C. Ours
/// then runs its best result in a fresh process, and the bests before it
/// while one does not crash there: on a timeout each runs to its limit
/// (sql-timeout, stopped at 900 s, was still at it 15 s later).
pub const GRACE: Duration = Duration::from_secs(60);

/// Runs `cmd` in its own process group with output captured to files in
/// `scratch` (no pipe deadlocks), without `RUST_BACKTRACE` (a user's
/// default; backtraces slow crashing runs down), stopping the whole group
/// after `limit` as a person would, with Ctrl-C (SIGINT: ours writes its
/// best result, libFuzzer and Shrink Ray have theirs on disk already),
/// then, if it is still there [`GRACE`] later, SIGKILL.
pub fn run_limited(mut cmd: Command, scratch: &Path, limit: Duration) -> Finished {
    let out_path = scratch.join("last.stdout");
    let err_path = scratch.join("last.stderr");
    cmd.stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).expect("scratch file"))
        .stderr(fs::File::create(&err_path).expect("scratch file"))
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if start.elapsed() > limit {
            // SAFETY: plain kill(2) of the process group we created.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
            let stopped = Instant::now();
            while stopped.elapsed() < GRACE {
                if child.try_wait().expect("wait").is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            // SAFETY: as above; the group's other processes go too.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Finished {
        status,
        secs: start.elapsed().as_secs_f64(),
        stdout: fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: fs::read_to_string(&err_path).unwrap_or_default(),
    }
}

/// The median of `v` (the mean of the middle two for an even count; NaN
/// when empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The environment variable `name` parsed, or `default` when it is unset
/// or does not parse (the benches' knobs).
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The comma-separated list in the environment variable `name`, or
/// `default`'s.
pub fn env_list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_owned())
        .split(',')
        .map(str::to_owned)
        .collect()
}

/// Runs `job` on every item, two at a time (one per core of the 2-core
/// machines the benches are measured on), and returns the results in the
/// order the jobs finished.
pub fn side_by_side<T: Sync, R: Send>(items: &[T], job: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(k) else { break };
                let r = job(item);
                results.lock().unwrap().push(r);
            });
        }
    });
    results.into_inner().unwrap()
}

/// A campaign of the real fuzz binary, as CI jobs run one: `-fork=2`,
/// crashes, timeouts and OOMs ignored, `-seed=seed` for `secs`, from the
/// files in `seeds` into `corpus`, crash files into `artifacts`.
pub fn fuzz_campaign(
    binary: &Path,
    corpus: &Path,
    seeds: &Path,
    artifacts: &Path,
    (seed, secs): (u64, u64),
    extra: &[&str],
) -> ExitStatus {
    fs::create_dir_all(corpus).unwrap();
    fs::create_dir_all(artifacts).unwrap();
    Command::new(binary)
        .args([
            "-fork=2",
            "-ignore_crashes=1",
            "-ignore_timeouts=1",
            "-ignore_ooms=1",
        ])
        .arg(format!("-seed={seed}"))
        .arg(format!("-max_total_time={secs}"))
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .args(extra)
        .arg(corpus)
        .arg(seeds)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the fuzz binary runs")
}

/// The lower and upper quartiles of `v` (linear between the closest ranks,
/// as numpy's default; NaN when empty).
pub fn quartiles(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| {
        if v.is_empty() {
            return f64::NAN;
        }
        let x = q * (v.len() - 1) as f64;
        let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (x - lo as f64)
    };
    (at(0.25), at(0.75))
}

/// Two samples compared as Klees et al. (CCS 2018) ask: the Vargha–Delaney
/// Â12 (the chance that a draw from `a` is larger than one from `b`, ties
/// counting half) and the two-sided Mann–Whitney U test's p-value by the
/// normal approximation with tie and continuity corrections (`statrs`, as
/// scipy's `method="asymptotic"`). Not statrs's exact method: in 0.19.1 it
/// gives p = 1 where one sample lies wholly above the other (U = 0), the
/// case a clear win makes.
pub fn a12_and_p(a: &[f64], b: &[f64]) -> (f64, f64) {
    use statrs::stats_tests::mannwhitneyu::{mannwhitneyu, MannWhitneyUMethod};
    use statrs::stats_tests::Alternative;
    let mut wins = 0.0;
    for x in a {
        for y in b {
            wins += match x.partial_cmp(y) {
                Some(std::cmp::Ordering::Greater) => 1.0,
                Some(std::cmp::Ordering::Equal) => 0.5,
                _ => 0.0,
            };
        }
    }
    let a12 = wins / (a.len() * b.len()) as f64;
    let p = mannwhitneyu(
        a,
        b,
        MannWhitneyUMethod::AsymptoticInclContinuityCorrection,
        Alternative::TwoSided,
    )
    .map_or(f64::NAN, |(_, p)| p);
    (a12, p)
}

/// The typed targets' artifacts a real libFuzzer run found from random
/// 4 KB inputs (`benches/fixtures/libfuzzer-artifacts/<target>/corpus4k-N`,
/// made by its `generate.sh --corpus-4k`): each target with its files, both
/// sorted; targets without any are left out.
pub fn typed_artifacts() -> Vec<(String, Vec<PathBuf>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/fixtures/libfuzzer-artifacts");
    let mut targets: Vec<String> = fs::read_dir(&root)
        .expect("typed artifacts dir")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    targets.sort();
    targets
        .into_iter()
        .filter_map(|t| {
            let mut found: Vec<PathBuf> = fs::read_dir(root.join(&t))
                .expect("target dir")
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("corpus4k-")
                })
                .collect();
            found.sort();
            (!found.is_empty()).then_some((t, found))
        })
        .collect()
}

/// Files and bytes of a flat corpus directory (its regular files).
pub fn corpus_size(dir: &Path) -> (usize, u64) {
    let mut files = 0;
    let mut bytes = 0;
    for e in fs::read_dir(dir).expect("read corpus") {
        let e = e.expect("entry");
        if e.file_type().expect("type").is_file() {
            files += 1;
            bytes += e.metadata().expect("metadata").len();
        }
    }
    (files, bytes)
}
