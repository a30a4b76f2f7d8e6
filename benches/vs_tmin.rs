//! `cargo reduce-crash` vs `cargo fuzz tmin`, side by side in one run, on
//! artifacts of the `buggy` fixture: each target's trigger at a seeded random
//! position inside seeded noise (≈500 B and ≈4 KiB per target).
//!
//! For every artifact it reports both outputs' sizes, both wall-clock times
//! (as a user sees them: `cargo fuzz build` and our one-off driver build are
//! done beforehand and not counted), the speed-up, and whether each output
//! still crashes with the ORIGINAL signature (same kind and location, checked
//! with one `cargo reduce-crash --classify` per artifact). The table is
//! Markdown, on stdout; progress goes to stderr.
//!
//! Every command runs with `RUST_BACKTRACE` and `RUST_LIB_BACKTRACE` removed
//! from its environment (a user's default): with `RUST_BACKTRACE=1` every
//! crashing libFuzzer child symbolizes a backtrace, which makes `tmin` several
//! times slower (measured: 7–8 s instead of 1.2–1.3 s on `unwrap-4k`).
//!
//! A second part does the same for the typed targets, on artifacts a real
//! libFuzzer run found from a corpus of random 4 KB inputs, adding our
//! `--strategy ddmin` and every output's `Debug` length.
//!
//! Run with `cargo bench --bench vs_tmin` (needs `cargo install cargo-fuzz`);
//! `VS_TMIN_PART=bytes` or `typed` runs one part.

mod common;

use reduce_crash::reduce::rng::Rng;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

/// Our binary, built by cargo for this bench.
const BIN: &str = env!("CARGO_BIN_EXE_cargo-reduce-crash");

/// Upper bound per tool run, so a misbehaving tool cannot stall the bench.
const RUN_LIMIT: Duration = Duration::from_secs(300);

struct Target {
    name: &'static str,
    /// The bytes that trigger the bug (see the fixture's README).
    trigger: &'static [u8],
    /// Expected crash kind of the original (checked before timing).
    kind: &'static str,
    /// Per-test timeout in seconds given to both tools (hangs only).
    timeout: Option<u32>,
}

const TARGETS: &[Target] = &[
    Target {
        name: "unwrap",
        trigger: b"KEY=;",
        kind: "panic",
        timeout: None,
    },
    Target {
        name: "index",
        trigger: b"REG7",
        kind: "panic",
        timeout: None,
    },
    Target {
        name: "overflow",
        trigger: b"SUM=\xf0\xf0",
        kind: "panic",
        timeout: None,
    },
    Target {
        name: "abort",
        trigger: b"ABRT",
        kind: "abort",
        timeout: None,
    },
    Target {
        name: "stack_overflow",
        trigger: b"[@@@",
        kind: "stack-overflow",
        timeout: None,
    },
    Target {
        name: "alloc_bomb",
        trigger: b"BLOB\x00\x20",
        kind: "out-of-memory",
        timeout: None,
    },
    Target {
        name: "infinite_loop",
        trigger: b"WAIT\x03",
        kind: "timeout",
        timeout: Some(1),
    },
    Target {
        name: "two_bugs",
        trigger: b"BA!!B",
        kind: "panic",
        timeout: None,
    },
];

/// Artifact sizes (total bytes, trigger included).
const SIZES: &[(&str, usize)] = &[("500b", 500), ("4k", 4096)];

/// Every marker any target reacts to. The noise alphabet below holds no
/// uppercase letter and none of `=;!@[`, so it can form none of them; the
/// generator still checks.
const MARKERS: &[&[u8]] = &[
    b"KEY=", b"REG", b"SUM=", b"ABRT", b"[@@@", b"BLOB", b"WAIT", b"BA!!B", b"B!!B", b"FLK",
    b"ZAP", b"%%", b"HDR",
];

/// Lowercase letters, `0-3`, space and `,.:` (no `;`: `KEY=;` needs it).
const NOISE: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123 ,.:";

fn count(data: &[u8], needle: &[u8]) -> usize {
    data.windows(needle.len()).filter(|w| *w == needle).count()
}

/// `len` bytes: noise with `trigger` at a seeded random position.
fn artifact(trigger: &[u8], len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::from_state(seed);
    let noise_len = len - trigger.len();
    let mut data: Vec<u8> = (0..noise_len)
        .map(|_| NOISE[rng.below(NOISE.len())])
        .collect();
    let at = rng.below(noise_len + 1);
    data.splice(at..at, trigger.iter().copied());
    for m in MARKERS {
        assert_eq!(
            count(&data, m),
            count(trigger, m),
            "noise must not contain {:?}",
            String::from_utf8_lossy(m)
        );
    }
    data
}

fn seed(target: &str, size: usize) -> u64 {
    // FNV-1a of the name, mixed with the size: stable across runs.
    let h = target.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    h ^ (size as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

use common::Finished;

impl Finished {
    fn status_text(&self) -> String {
        match self.status {
            None => format!("killed after {}s", RUN_LIMIT.as_secs()),
            Some(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
                (Some(c), _) => format!("exit {c}"),
                (None, Some(sig)) => format!("signal {sig}"),
                _ => "unknown status".into(),
            },
        }
    }

    fn tail(&self) -> String {
        let all = format!("{}{}", self.stdout, self.stderr);
        // Leave out anyhow's backtrace, if any.
        let lines: Vec<&str> = all
            .lines()
            .take_while(|l| *l != "Stack backtrace:")
            .collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    }
}

fn run(cmd: Command, scratch: &Path, limit: Duration) -> Finished {
    common::run_limited(cmd, scratch, limit)
}

/// The telling lines of a failed `cargo fuzz tmin` (libFuzzer's own words),
/// as `: "line"; "line"`, with the fixture copy's path shortened.
fn tmin_reason(f: &Finished, copy: &Path) -> String {
    const TELLING: &[&str] = &[
        "Segmentation fault",
        "No such directory",
        "did not crash",
        "ERROR: libFuzzer",
        "mismatch in dedup",
        "failed to minimize",
    ];
    let prefix = format!("{}/", copy.display());
    let mut seen: Vec<String> = Vec::new();
    for line in format!("{}{}", f.stdout, f.stderr).lines() {
        if TELLING.iter().any(|t| line.contains(t)) {
            let line = line.trim().replace(&prefix, "");
            if !seen.contains(&line) {
                seen.push(line);
            }
        }
    }
    seen.iter().map(|l| format!("; `{l}`")).collect()
}

#[derive(Clone, Debug, PartialEq)]
struct Classified {
    outcome: String,
    kind: Option<String>,
    location: Option<String>,
    message: Option<String>,
    /// A typed target's value (`{:#?}`), from `--classify`'s JSON.
    debug: Option<String>,
}

impl Classified {
    fn describe(&self) -> String {
        match &self.kind {
            None => self.outcome.clone(),
            Some(k) => {
                let mut s = k.clone();
                if let Some(l) = &self.location {
                    s += &format!(" at {}", short_location(l));
                }
                if let Some(m) = &self.message {
                    if self.kind.as_deref() == Some("panic") {
                        s += &format!(": {m}");
                    }
                }
                s
            }
        }
    }

    fn same_identity(&self, other: &Classified) -> bool {
        self.outcome == other.outcome && self.kind == other.kind && self.location == other.location
    }

    fn same_crash(&self, original: &Classified) -> bool {
        self.outcome == "crash" && self.kind == original.kind && self.location == original.location
    }
}

/// `/abs/path/buggy/src/lib.rs:35:40` → `src/lib.rs:35:40`.
fn short_location(l: &str) -> &str {
    l.rfind("src/").map_or(l, |i| &l[i..])
}

/// One `--classify` invocation for `files`; results in the same order.
fn classify(
    target: &str,
    timeout: Option<u32>,
    fuzz_dir: &Path,
    files: &[&Path],
    scratch: &Path,
) -> Vec<Classified> {
    let mut cmd = Command::new(BIN);
    cmd.args([
        "-s",
        "none",
        "--classify",
        "--message-format",
        "json",
        "--fuzz-target",
        target,
    ])
    .arg("--fuzz-dir")
    .arg(fuzz_dir);
    if let Some(t) = timeout {
        cmd.args(["--timeout", &t.to_string()]);
    }
    cmd.args(files);
    let done = run(cmd, scratch, RUN_LIMIT);
    let mut by_order = Vec::new();
    let mut by_path = std::collections::HashMap::new();
    for line in done.stdout.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v["reason"] != "classified" {
            continue;
        }
        let sig = &v["signature"];
        let field = |k: &str| sig.get(k).and_then(|x| x.as_str()).map(str::to_owned);
        let c = Classified {
            outcome: v["outcome"].as_str().unwrap_or("?").to_owned(),
            kind: field("kind"),
            location: field("location"),
            message: field("message"),
            debug: v["debug"].as_str().map(str::to_owned),
        };
        if let Some(p) = v["path"].as_str() {
            by_path.insert(PathBuf::from(p), c.clone());
        }
        by_order.push(c);
    }
    if by_order.len() != files.len() {
        eprintln!(
            "error: `{BIN} --classify` ({}) classified {} of {} files:\n{}",
            done.status_text(),
            by_order.len(),
            files.len(),
            done.tail()
        );
        std::process::exit(1);
    }
    files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            by_path
                .get(*f)
                .cloned()
                .unwrap_or_else(|| by_order[i].clone())
        })
        .collect()
}

fn minimized_files(dir: &Path) -> Vec<(PathBuf, SystemTime, u64)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("minimized-from-")
        })
        .filter_map(|e| {
            let md = e.metadata().ok()?;
            Some((e.path(), md.modified().ok()?, md.len()))
        })
        .collect()
}

fn remove_minimized(dir: &Path) {
    for (p, _, _) in minimized_files(dir) {
        let _ = fs::remove_file(p);
    }
}

/// One tool's run on one artifact: its output (a copy of the original when
/// the tool failed, so it still counts), time and what went wrong.
struct ToolRun {
    out: PathBuf,
    len: usize,
    secs: f64,
    /// Set when the tool failed.
    note: Option<String>,
    /// Ours only: the `reduce-finished` message.
    finished: Option<serde_json::Value>,
}

impl ToolRun {
    /// The progress line on stderr: `  <tool>: <secs>  <original> → <len> bytes`.
    fn report(&self, tool: &str, original: usize) {
        eprintln!(
            "  {:<6} {:>7.2}s  {original} → {} bytes{}",
            format!("{tool}:"),
            self.secs,
            self.len,
            self.tests_note()
        );
    }

    fn tests_note(&self) -> String {
        self.finished
            .as_ref()
            .map(|f| format!(" ({} tests executed)", f["tests_executed"]))
            .unwrap_or_default()
    }

    /// Ours only: the reduced value's `Debug` form.
    fn debug(&self) -> Option<&str> {
        self.finished.as_ref()?["debug"].as_str()
    }
}

/// `cargo fuzz tmin -s none` on `path` (inside the fixture copy `copy`);
/// its output is copied to `<tmp>/tmin-<name>`.
fn run_tmin(
    target: &str,
    timeout: Option<u32>,
    path: &Path,
    copy: &Path,
    tmp: &Path,
    name: &str,
) -> ToolRun {
    let dir = path.parent().unwrap();
    let original = fs::read(path).unwrap();
    remove_minimized(dir);
    let started = SystemTime::now() - Duration::from_secs(1);
    let mut cmd = Command::new("cargo");
    cmd.args(["fuzz", "tmin", "-s", "none", target])
        .arg(path)
        .current_dir(copy);
    if let Some(s) = timeout {
        cmd.args(["--", &format!("-timeout={s}")]);
    }
    let tmin = run(cmd, tmp, RUN_LIMIT);
    let newest = minimized_files(dir)
        .into_iter()
        .filter(|(_, m, _)| *m >= started)
        .max_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)));
    let out = tmp.join(format!("tmin-{name}"));
    let note = match (&newest, tmin.ok()) {
        (Some((p, _, _)), true) => {
            fs::copy(p, &out).expect("copy tmin output");
            None
        }
        (found, _) => {
            fs::write(&out, &original).unwrap();
            let note = format!(
                "{}{}{}",
                tmin.status_text(),
                match found {
                    Some((_, _, l)) => format!(", last minimized file: {l} B"),
                    None => ", no output".into(),
                },
                tmin_reason(&tmin, copy)
            );
            eprintln!(
                "  {note}; its output counts as the original. Last lines:\n{}",
                tmin.tail()
            );
            Some(note)
        }
    };
    remove_minimized(dir);
    ToolRun {
        len: fs::metadata(&out).unwrap().len() as usize,
        out,
        secs: tmin.secs,
        note,
        finished: None,
    }
}

/// `cargo reduce-crash` on `path` with `extra` args, run in the fixture
/// copy; its output goes to `<tmp>/<out_name>`.
fn run_ours(
    path: &Path,
    timeout: Option<u32>,
    extra: &[&str],
    copy: &Path,
    tmp: &Path,
    out_name: &str,
) -> ToolRun {
    let original = fs::read(path).unwrap();
    let out = tmp.join(out_name);
    let mut cmd = Command::new(BIN);
    // The same build as `cargo fuzz tmin -s none` (no sanitizer).
    cmd.arg(path)
        .arg("-o")
        .arg(&out)
        .args([
            "-s",
            "none",
            "--message-format",
            "json",
            "-q",
            "--no-explain",
        ])
        .args(extra);
    if let Some(s) = timeout {
        cmd.args(["--timeout", &s.to_string()]);
    }
    cmd.current_dir(copy);
    let ours = run(cmd, tmp, RUN_LIMIT);
    let finished = ours.reduce_finished();
    let note = if ours.ok() && out.exists() {
        None
    } else {
        let _ = fs::remove_file(&out);
        fs::write(&out, &original).unwrap();
        let note = format!("ours failed ({})", ours.status_text());
        eprintln!(
            "  {note}: {BIN} {} -o {} --message-format json -q {}{}\n{}",
            path.display(),
            out.display(),
            extra.join(" "),
            timeout
                .map(|s| format!(" --timeout {s}"))
                .unwrap_or_default(),
            ours.tail()
        );
        Some(note)
    };
    let len = fs::metadata(&out).unwrap().len() as usize;
    if let Some(f) = &finished {
        if f["reduced_len"].as_u64() != Some(len as u64) {
            eprintln!(
                "  warning: reduce-finished says {} bytes, file has {len}",
                f["reduced_len"]
            );
        }
    }
    ToolRun {
        out,
        len,
        secs: ours.secs,
        note,
        finished,
    }
}

struct Row {
    target: &'static str,
    name: String,
    original: usize,
    tmin_len: usize,
    tmin_secs: f64,
    tmin_note: Option<String>,
    ours_len: usize,
    ours_secs: f64,
    ours_note: Option<String>,
    original_sig: Classified,
    tmin_sig: Classified,
    ours_sig: Classified,
}

impl Row {
    fn speedup(&self) -> f64 {
        self.tmin_secs / self.ours_secs
    }
    fn tmin_keeps(&self) -> bool {
        self.tmin_sig.same_crash(&self.original_sig)
    }
    fn ours_keeps(&self) -> bool {
        self.ours_sig.same_crash(&self.original_sig)
    }
}

fn keeps_cell(keeps: bool, sig: &Classified) -> String {
    if keeps {
        "yes".into()
    } else {
        format!("**no**: {}", sig.describe().replace('|', "\\|"))
    }
}

/// What every part of the bench shares: the fixture copy, its fuzz
/// directory, a scratch directory and the tool versions.
struct Setup {
    copy: PathBuf,
    fuzz_dir: PathBuf,
    tmp: PathBuf,
    version: String,
    rustc: String,
    /// `cargo fuzz build -s none`, seconds (not counted).
    build_secs: f64,
}

fn main() {
    let version = Command::new("cargo").args(["fuzz", "--version"]).output();
    let version = match version {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        _ => {
            println!("`cargo fuzz` is missing: install it with: cargo install cargo-fuzz");
            std::process::exit(1);
        }
    };
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let part = std::env::var("VS_TMIN_PART").unwrap_or_default();
    if !matches!(part.as_str(), "" | "bytes" | "typed") {
        eprintln!("error: VS_TMIN_PART must be `bytes` or `typed` (or unset for both)");
        std::process::exit(1);
    }

    let copy = common::stable_copy("tests/fixtures/buggy", "buggy-vs-tmin");
    let fuzz_dir = copy.join("fuzz");
    let scratch = tempfile::tempdir().expect("temp dir");
    let tmp = scratch.path();
    eprintln!("fixture copy: {}", copy.display());

    // The real libFuzzer binaries (not counted).
    eprintln!("building the fuzz targets: cargo fuzz build -s none ...");
    let mut cmd = Command::new("cargo");
    cmd.args(["fuzz", "build", "-s", "none"]).current_dir(&copy);
    let build = run(cmd, tmp, Duration::from_secs(900));
    if !build.ok() {
        eprintln!(
            "error: `cargo fuzz build -s none` failed ({}):\n{}",
            build.status_text(),
            build.tail()
        );
        std::process::exit(1);
    }
    eprintln!("  done in {:.1}s", build.secs);
    let setup = Setup {
        copy,
        fuzz_dir,
        tmp: tmp.to_owned(),
        version,
        rustc,
        build_secs: build.secs,
    };
    if part != "typed" {
        bytes_part(&setup);
    }
    if part != "bytes" {
        typed_part(&setup);
    }
}

/// Byte-level targets: a trigger hidden in noise.
fn bytes_part(setup: &Setup) {
    let Setup {
        copy,
        fuzz_dir,
        version,
        rustc,
        ..
    } = setup;
    let tmp = setup.tmp.as_path();

    // 1. Artifacts.
    let mut artifacts: Vec<(&Target, String, PathBuf, usize)> = Vec::new();
    for t in TARGETS {
        let dir = fuzz_dir.join("artifacts").join(t.name);
        fs::create_dir_all(&dir).expect("artifacts dir");
        remove_minimized(&dir);
        for &(label, size) in SIZES {
            let name = format!("{}-{label}", t.name);
            let path = dir.join(format!("crash-{name}"));
            let data = artifact(t.trigger, size, seed(t.name, size));
            fs::write(&path, &data).expect("write artifact");
            artifacts.push((t, name, path, data.len()));
        }
    }

    // 2. Warm-up: build our driver per target (not counted) and check that
    //    every original crashes as intended.
    let mut warmup_total = 0.0;
    for t in TARGETS {
        let files: Vec<&Path> = artifacts
            .iter()
            .filter(|a| a.0.name == t.name)
            .map(|a| a.2.as_path())
            .collect();
        let start = Instant::now();
        let sigs = classify(t.name, t.timeout, fuzz_dir, &files, tmp);
        let secs = start.elapsed().as_secs_f64();
        warmup_total += secs;
        eprintln!(
            "warm-up {:<15} {:>6.1}s  {}",
            t.name,
            secs,
            sigs[0].describe()
        );
        for (s, f) in sigs.iter().zip(&files) {
            let bad_two_bugs = t.name == "two_bugs"
                && s.message
                    .as_deref()
                    .is_some_and(|m| m.contains("swap of register B"));
            if s.outcome != "crash" || s.kind.as_deref() != Some(t.kind) || bad_two_bugs {
                eprintln!(
                    "error: {} should crash with {} but is: {}",
                    f.display(),
                    t.kind,
                    s.describe()
                );
                std::process::exit(1);
            }
        }
        if sigs.windows(2).any(|w| !w[0].same_identity(&w[1])) {
            eprintln!(
                "warning: the {} artifacts crash differently: {sigs:?}",
                t.name
            );
        }
    }

    // 3. Both tools on every artifact, one after the other.
    let mut rows = Vec::new();
    let n = artifacts.len();
    for (i, (t, name, path, len)) in artifacts.iter().enumerate() {
        eprintln!("[{}/{n}] {name} ({len} bytes)", i + 1);
        let tmin = run_tmin(t.name, t.timeout, path, copy, tmp, name);
        tmin.report("tmin", *len);
        let ours = run_ours(path, t.timeout, &[], copy, tmp, &format!("ours-{name}"));
        ours.report("ours", *len);

        // Signatures: original, tmin's, ours, in one invocation.
        let sigs = classify(
            t.name,
            t.timeout,
            fuzz_dir,
            &[path.as_path(), &tmin.out, &ours.out],
            tmp,
        );
        let row = Row {
            target: t.name,
            name: name.clone(),
            original: *len,
            tmin_len: tmin.len,
            tmin_secs: tmin.secs,
            tmin_note: tmin.note,
            ours_len: ours.len,
            ours_secs: ours.secs,
            ours_note: ours.note,
            original_sig: sigs[0].clone(),
            tmin_sig: sigs[1].clone(),
            ours_sig: sigs[2].clone(),
        };
        eprintln!(
            "  signature kept: tmin {} ({}), ours {} ({})",
            row.tmin_keeps(),
            row.tmin_sig.describe(),
            row.ours_keeps(),
            row.ours_sig.describe()
        );
        rows.push(row);
    }

    // 4. Report.
    println!();
    println!(
        "`cargo reduce-crash` vs `cargo fuzz tmin -s none` ({version}, {rustc}), {n} artifacts of the \
         `buggy` fixture (each target's trigger at a seeded random position in seeded noise). \
         \"Keeps signature\": the output still crashes with the original's kind and location \
         (checked with `cargo reduce-crash --classify`)."
    );
    println!();
    println!("| target | original (B) | tmin (B) | tmin (s) | tmin keeps signature | ours (B) | ours (s) | speed-up | ours keeps signature |");
    println!("|---|---:|---:|---:|---|---:|---:|---:|---|");
    for r in &rows {
        let failed = |n: &Option<String>| if n.is_some() { " (failed)" } else { "" };
        println!(
            "| `{}` | {} | {}{} | {:.2} | {} | {}{} | {:.2} | {:.1}× | {} |",
            r.target,
            r.original,
            r.tmin_len,
            failed(&r.tmin_note),
            r.tmin_secs,
            keeps_cell(r.tmin_keeps(), &r.tmin_sig),
            r.ours_len,
            failed(&r.ours_note),
            r.ours_secs,
            r.speedup(),
            keeps_cell(r.ours_keeps(), &r.ours_sig),
        );
    }

    let mut notes = Vec::new();
    for r in &rows {
        let which = format!("`{}` ({} B)", r.target, r.original);
        if let Some(n) = &r.tmin_note {
            notes.push(format!(
                "{which}: `cargo fuzz tmin` failed ({n}); its output counts as the original."
            ));
        }
        if let Some(n) = &r.ours_note {
            notes.push(format!(
                "{which}: `cargo reduce-crash` failed ({n}); its output counts as the original."
            ));
        }
        for (tool, keeps, sig, len) in [
            ("tmin", r.tmin_keeps(), &r.tmin_sig, r.tmin_len),
            ("ours", r.ours_keeps(), &r.ours_sig, r.ours_len),
        ] {
            if !keeps {
                notes.push(format!(
                    "{which}: {tool}'s {len}-byte output slipped to a different crash: {} (the original: {}).",
                    sig.describe(),
                    r.original_sig.describe()
                ));
            }
        }
    }
    if !notes.is_empty() {
        println!();
        for n in notes {
            println!("- {n}");
        }
    }

    let med = common::median(rows.iter().map(Row::speedup).collect());
    let tmin_ok: Vec<&Row> = rows.iter().filter(|r| r.tmin_note.is_none()).collect();
    let med_ok = common::median(tmin_ok.iter().map(|r| r.speedup()).collect());
    let larger: Vec<&str> = rows
        .iter()
        .filter(|r| r.ours_len > r.tmin_len)
        .map(|r| r.name.as_str())
        .collect();
    let larger_than_valid: Vec<&str> = rows
        .iter()
        .filter(|r| r.tmin_keeps() && r.ours_len > r.tmin_len)
        .map(|r| r.name.as_str())
        .collect();
    let tmin_slipped = rows.iter().filter(|r| !r.tmin_keeps()).count();
    let ours_slipped = rows.iter().filter(|r| !r.ours_keeps()).count();
    let tmin_failed = rows.iter().filter(|r| r.tmin_note.is_some()).count();
    let ours_failed = rows.iter().filter(|r| r.ours_note.is_some()).count();
    let tmin_total: f64 = rows.iter().map(|r| r.tmin_secs).sum();
    let ours_total: f64 = rows.iter().map(|r| r.ours_secs).sum();
    let yes_no = |list: &[&str]| {
        if list.is_empty() {
            "**yes**".to_owned()
        } else {
            format!("**no** (larger: {})", list.join(", "))
        }
    };
    println!();
    println!("**Summary**");
    println!();
    println!(
        "- Median speed-up (tmin time / ours): **{med:.1}×** over all {n} artifacts; {med_ok:.1}× over the {} where tmin succeeded. Total: {tmin_total:.1} s tmin, {ours_total:.1} s ours.",
        tmin_ok.len()
    );
    println!(
        "- Every output of ours ≤ tmin's: {}; ≤ every tmin output that keeps the signature: {}.",
        yes_no(&larger),
        yes_no(&larger_than_valid)
    );
    println!(
        "- Slipped to a different crash: tmin **{tmin_slipped}/{n}**, ours **{ours_slipped}/{n}**. Failed runs: tmin {tmin_failed}, ours {ours_failed}."
    );
    let bar_core = ours_slipped == 0 && med >= 10.0;
    let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
    println!(
        "- Bar (every output of ours ≤ tmin's, none of ours slipping, median ≥ 10×): **{}**{}.",
        verdict(bar_core && larger.is_empty()),
        if larger.is_empty() || !larger_than_valid.is_empty() {
            String::new()
        } else {
            format!(
                "; **{}** when only tmin outputs that keep the signature count (the larger ones are where tmin slipped to a smaller, different bug)",
                verdict(bar_core)
            )
        }
    );
    println!(
        "- Not counted above: `cargo fuzz build -s none` (all targets, from scratch unless cached) {:.1} s; our driver builds (one warm-up `--classify` per target) {:.1} s in total.",
        setup.build_secs, warmup_total
    );
}

/// Length of a `Debug` form without whitespace (as in the `choices` bench).
fn debug_len(debug: &str) -> usize {
    debug.chars().filter(|c| !c.is_whitespace()).count()
}

/// Typed targets: tmin, our ddmin only and our default (choice-sequence
/// shrinking) on what libFuzzer hands its user after a run from a corpus of
/// large inputs.
fn typed_part(setup: &Setup) {
    let tmp = setup.tmp.as_path();
    let typed = common::typed_artifacts();

    // 1. Artifacts, and a warm-up per target (builds our driver, not
    //    counted) that checks every original crashes.
    let mut artifacts: Vec<(String, String, PathBuf, usize)> = Vec::new();
    for (t, found) in &typed {
        let dir = setup.fuzz_dir.join("artifacts").join(t);
        fs::create_dir_all(&dir).expect("artifacts dir");
        remove_minimized(&dir);
        let mut files = Vec::new();
        for f in found {
            let label = f.file_name().unwrap().to_string_lossy().into_owned();
            let path = dir.join(format!("crash-{label}"));
            fs::copy(f, &path).expect("copy artifact");
            let len = fs::metadata(&path).unwrap().len() as usize;
            artifacts.push((t.clone(), label, path.clone(), len));
            files.push(path);
        }
        let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        let sigs = classify(t, None, &setup.fuzz_dir, &refs, tmp);
        eprintln!("warm-up {t:<18} {}", sigs[0].describe());
        for (s, f) in sigs.iter().zip(&files) {
            if s.outcome != "crash" {
                eprintln!(
                    "error: {} should crash but is: {}",
                    f.display(),
                    s.describe()
                );
                std::process::exit(1);
            }
        }
    }

    // 2. tmin, ddmin only, and ours on each, one after the other.
    struct TypedRow {
        target: String,
        label: String,
        original: usize,
        tmin: ToolRun,
        ddmin: ToolRun,
        ours: ToolRun,
        /// Original, tmin, ddmin, ours.
        sigs: Vec<Classified>,
    }
    let debug_of = |c: &Classified| c.debug.as_deref().map_or(0, debug_len);
    let mut rows = Vec::new();
    let n = artifacts.len();
    for (i, (t, label, path, len)) in artifacts.iter().enumerate() {
        eprintln!("[{}/{n}] {t} {label} ({len} bytes)", i + 1);
        let name = format!("{t}-{label}");
        let tmin = run_tmin(t, None, path, &setup.copy, tmp, &name);
        tmin.report("tmin", *len);
        let ddmin = run_ours(
            path,
            None,
            &["--strategy", "ddmin"],
            &setup.copy,
            tmp,
            &format!("ddmin-{name}"),
        );
        ddmin.report("ddmin", *len);
        let ours = run_ours(path, None, &[], &setup.copy, tmp, &format!("ours-{name}"));
        ours.report("ours", *len);
        let sigs = classify(
            t,
            None,
            &setup.fuzz_dir,
            &[path.as_path(), &tmin.out, &ddmin.out, &ours.out],
            tmp,
        );
        if ours.debug() != sigs[3].debug.as_deref() {
            eprintln!("  warning: the reduction and --classify show different values");
        }
        rows.push(TypedRow {
            target: t.clone(),
            label: label.clone(),
            original: *len,
            tmin,
            ddmin,
            ours,
            sigs,
        });
    }

    // 3. Report.
    println!();
    println!(
        "Typed targets: `cargo fuzz tmin -s none` ({}, {}) vs `cargo reduce-crash \
         --strategy ddmin` vs `cargo reduce-crash` (choice-sequence shrinking), {n} artifacts \
         libFuzzer found from a corpus of random 4 KB inputs. `Debug` = length of the value's \
         `{{:#?}}` form without whitespace. \"Keeps\": the output crashes with the original's \
         kind and location.",
        setup.version, setup.rustc
    );
    println!();
    println!(
        "| target | artifact | input (B) | tmin (B) | tmin `Debug` | tmin (s) | ddmin (B) | ddmin `Debug` | ours (B) | ours `Debug` | ours (s) | speed-up | keeps: tmin / ours |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    let failed = |r: &ToolRun| if r.note.is_some() { " (failed)" } else { "" };
    let keeps = |r: &TypedRow, k: usize| r.sigs[k].same_crash(&r.sigs[0]);
    for r in &rows {
        println!(
            "| `{}` | {} | {} | {}{} | {} | {:.2} | {}{} | {} | {}{} | {} | {:.2} | {:.1}× | {} / {} |",
            r.target,
            r.label,
            r.original,
            r.tmin.len,
            failed(&r.tmin),
            debug_of(&r.sigs[1]),
            r.tmin.secs,
            r.ddmin.len,
            failed(&r.ddmin),
            debug_of(&r.sigs[2]),
            r.ours.len,
            failed(&r.ours),
            debug_of(&r.sigs[3]),
            r.ours.secs,
            r.tmin.secs / r.ours.secs,
            if keeps(r, 1) { "yes" } else { "**no**" },
            if keeps(r, 3) { "yes" } else { "**no**" },
        );
    }
    let ratio =
        |r: &TypedRow, k: usize| debug_of(&r.sigs[k]) as f64 / debug_of(&r.sigs[3]).max(1) as f64;
    let not_worse = |k: usize| {
        let worse: Vec<String> = rows
            .iter()
            .filter(|r| {
                r.ours.len > [0, r.tmin.len, r.ddmin.len][k]
                    || debug_of(&r.sigs[3]) > debug_of(&r.sigs[k])
            })
            .map(|r| format!("{} {}", r.target, r.label))
            .collect();
        if worse.is_empty() {
            "**yes**".to_owned()
        } else {
            format!("**no** ({})", worse.join(", "))
        }
    };
    let slipped = |k: usize| rows.iter().filter(|r| !keeps(r, k)).count();
    let failures = rows
        .iter()
        .filter(|r| r.tmin.note.is_some() || r.ddmin.note.is_some() || r.ours.note.is_some())
        .count();
    println!();
    println!("**Summary**");
    println!();
    println!(
        "- Median `Debug` length ratio: tmin/ours **{:.2}×**, ddmin/ours **{:.2}×**.",
        common::median(rows.iter().map(|r| ratio(r, 1)).collect()),
        common::median(rows.iter().map(|r| ratio(r, 2)).collect()),
    );
    println!(
        "- Median speed-up (tmin time / ours): **{:.1}×**. Total: {:.1} s tmin, {:.1} s ddmin, {:.1} s ours.",
        common::median(rows.iter().map(|r| r.tmin.secs / r.ours.secs).collect()),
        rows.iter().map(|r| r.tmin.secs).sum::<f64>(),
        rows.iter().map(|r| r.ddmin.secs).sum::<f64>(),
        rows.iter().map(|r| r.ours.secs).sum::<f64>(),
    );
    println!(
        "- Ours never larger (bytes and `Debug`) than tmin: {}; than ddmin: {}.",
        not_worse(1),
        not_worse(2)
    );
    println!(
        "- Slipped to a different crash: tmin {}/{n}, ddmin {}/{n}, ours {}/{n}. Artifacts where a tool failed: {failures}.",
        slipped(1),
        slipped(2),
        slipped(3)
    );
}
