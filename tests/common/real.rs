//! The judge of "crashes the same way": the fuzz target built exactly as
//! `cargo fuzz build` builds it (cargo-fuzz itself, nightly, its default
//! AddressSanitizer build), run by the real libFuzzer on one file, its report
//! read for the crash kind and the first frame in the fixture's own code.
//!
//! This is deliberately independent of the tool under test: the build is
//! cargo-fuzz's, the report is libFuzzer's and the sanitizer's, symbolized by
//! `llvm-symbolizer` as `cargo fuzz run` does (only when that is missing are
//! the raw addresses symbolized with the library's `Symbolizer`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Why the real build cannot be made on this machine, if it cannot: it
/// needs a nightly toolchain and cargo-fuzz.
pub fn unavailable() -> Option<String> {
    let nightly = Command::new("rustup")
        .args(["run", "nightly", "rustc", "-vV"])
        .env("RUSTUP_AUTO_INSTALL", "0")
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    if !nightly {
        return Some("no nightly toolchain (`rustup toolchain install nightly`)".to_owned());
    }
    let cargo_fuzz = Command::new("cargo")
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !cargo_fuzz {
        return Some("cargo-fuzz is not installed (`cargo install cargo-fuzz`)".to_owned());
    }
    None
}

/// Builds every target of the fuzz project at `root` with
/// `cargo +nightly fuzz build` and returns the directory of the binaries.
pub fn cargo_fuzz_build(root: &Path) -> PathBuf {
    let out = Command::new("cargo")
        .args(["+nightly", "fuzz", "build"])
        .current_dir(root)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTUP_TOOLCHAIN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run cargo fuzz build");
    assert!(
        out.status.success(),
        "cargo +nightly fuzz build failed in {}:\n{}",
        root.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let triple = host_triple();
    root.join("fuzz/target").join(triple).join("release")
}

fn host_triple() -> String {
    let out = Command::new("rustc").arg("-vV").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .unwrap()
}

/// What the real binary reported for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// `pass`, `panic`, `timeout`, `malloc-limit`, `out-of-memory`,
    /// `deadly-signal`, or the sanitizer's error (`heap-buffer-overflow`, …).
    pub kind: String,
    /// The first frame in the fixture's own code: `function file:line:col`
    /// (paths relative to the fixture); for a panic its location; for a
    /// stack overflow the function only (the line where the guard page is
    /// hit is not part of the bug).
    pub frame: Option<String>,
}

/// A run of the real binary.
pub struct Report {
    pub verdict: Verdict,
    pub exit: Option<i32>,
    pub output: String,
}

/// Runs the real libFuzzer binary `binary` on `file` (with libFuzzer flags
/// `args`), as `cargo fuzz run <target> <file> -- <args>` would.
pub fn judge(root: &Path, binary: &Path, file: &Path, args: &[&str]) -> Report {
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    let fixture = move |file: &Path| {
        let rel = file.strip_prefix(&canonical).ok();
        rel.is_some_and(|r| r.starts_with("src") || r.starts_with("fuzz/fuzz_targets"))
    };
    judge_with(root, binary, file, args, &fixture)
}

/// [`judge`] with `own` saying which source files are the code under test
/// (the first frame reported is the first in one of them): for a fixture its
/// `src/` and fuzz targets, for a real crate fuzzed as a dependency its
/// sources under the cargo registry.
pub fn judge_with(
    root: &Path,
    binary: &Path,
    file: &Path,
    args: &[&str],
    own: &dyn Fn(&Path) -> bool,
) -> Report {
    let mut child = Command::new(binary)
        .args(args)
        .arg(file)
        .current_dir(root)
        // What cargo-fuzz sets for ASan.
        .env("ASAN_OPTIONS", "detect_odr_violation=0")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the real fuzz target");
    let err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(err), &mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if started.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = reader.join().unwrap();
    let verdict = read_verdict(root, binary, &output, status.and_then(|s| s.code()), own);
    Report {
        verdict,
        exit: status.and_then(|s| s.code()),
        output,
    }
}

fn read_verdict(
    root: &Path,
    binary: &Path,
    out: &str,
    exit: Option<i32>,
    own: &dyn Fn(&Path) -> bool,
) -> Verdict {
    let lines: Vec<&str> = out.lines().collect();
    let find = |needle: &str| lines.iter().position(|l| l.contains(needle));
    if find("ERROR: libFuzzer: timeout").is_some() {
        return Verdict {
            kind: "timeout".into(),
            frame: None,
        };
    }
    if let Some(i) = find("ERROR: libFuzzer: out-of-memory (malloc(") {
        return Verdict {
            kind: "malloc-limit".into(),
            frame: own_frame(root, binary, &lines[i + 1..], false, own),
        };
    }
    if find("ERROR: libFuzzer: out-of-memory (used").is_some() {
        return Verdict {
            kind: "out-of-memory".into(),
            frame: None,
        };
    }
    if let Some(i) = find("ERROR: AddressSanitizer: ") {
        let kind = lines
            .iter()
            .find_map(|l| l.strip_prefix("SUMMARY: AddressSanitizer: "))
            .and_then(|s| s.split_whitespace().next())
            .unwrap_or("unknown")
            .to_owned();
        let stack_overflow = kind == "stack-overflow";
        return Verdict {
            frame: own_frame(root, binary, &lines[i + 1..], stack_overflow, own),
            kind,
        };
    }
    if let Some(l) = lines.iter().find(|l| l.contains(" panicked at ")) {
        let loc = l
            .split_once(" panicked at ")
            .map(|(_, r)| r.trim_end_matches(':').to_owned())
            .map(|loc| relative(root, &loc));
        return Verdict {
            kind: "panic".into(),
            frame: loc,
        };
    }
    if find("ERROR: libFuzzer: deadly signal").is_some() {
        return Verdict {
            kind: "deadly-signal".into(),
            frame: None,
        };
    }
    Verdict {
        kind: if exit == Some(0) { "pass" } else { "unknown" }.into(),
        frame: None,
    }
}

/// `/abs/fixture/src/lib.rs:3:9` → `src/lib.rs:3:9`.
fn relative(root: &Path, loc: &str) -> String {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    let prefix = format!("{}/", root.display());
    loc.strip_prefix(&prefix).unwrap_or(loc).to_owned()
}

/// The first frame of the first stack in `lines` in the fixture's own code.
fn own_frame(
    root: &Path,
    binary: &Path,
    lines: &[&str],
    function_only: bool,
    own: &dyn Fn(&Path) -> bool,
) -> Option<String> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    let ours = |file: &str| own(Path::new(file));
    let mut frames = Vec::new();
    for line in lines {
        match reduce_crash::run::crash_report::parse_frame(line) {
            Some(f) => frames.push(f),
            None if !frames.is_empty() => break,
            None => {}
        }
    }
    let mut symbolizer = reduce_crash::run::crash_report::Symbolizer::new(binary);
    for frame in symbolizer.frames(&frames) {
        let Some(loc) = frame.location.as_deref() else {
            continue;
        };
        let file = loc.split(':').next().unwrap_or(loc);
        if ours(file) {
            let function = frame.function.unwrap_or_default();
            return Some(if function_only {
                function
            } else {
                format!("{function} {}", relative(&root, loc))
            });
        }
    }
    None
}

/// For a panic raised inside the standard library (its location is std's),
/// where libFuzzer's stack at the abort that follows says it came from: the
/// first frame in the fixture's own code, `file:line:col`.
pub fn panic_caller(root: &Path, binary: &Path, report: &Report) -> Option<String> {
    stack_after(
        root,
        binary,
        report,
        "ERROR: libFuzzer: deadly signal",
        false,
    )
    .and_then(|f| f.rsplit(' ').next().map(str::to_owned))
}

/// For a timeout, the innermost function in the fixture's own code on the
/// stack libFuzzer prints at its alarm.
pub fn alarm_function(root: &Path, binary: &Path, report: &Report) -> Option<String> {
    stack_after(root, binary, report, "ERROR: libFuzzer: timeout", true)
}

fn stack_after(
    root: &Path,
    binary: &Path,
    report: &Report,
    header: &str,
    function_only: bool,
) -> Option<String> {
    let lines: Vec<&str> = report.output.lines().collect();
    let i = lines.iter().position(|l| l.contains(header))?;
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    let own = move |file: &Path| {
        let rel = file.strip_prefix(&canonical).ok();
        rel.is_some_and(|r| r.starts_with("src") || r.starts_with("fuzz/fuzz_targets"))
    };
    own_frame(root, binary, &lines[i + 1..], function_only, &own)
}

/// libFuzzer's own `cov` and `ft` once it has read the corpus `dir`
/// (`-runs=0`, its `INITED` line), on `binary` (a real fuzz binary): the
/// referee of "no feature lost".
pub fn libfuzzer_counts(binary: &Path, dir: &Path) -> (u64, u64) {
    let out = Command::new(binary)
        .arg("-runs=0")
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", binary.display()));
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("INITED"))
        .unwrap_or_else(|| panic!("no INITED line from {}:\n{err}", binary.display()));
    let field = |name: &str| -> u64 {
        let at = line
            .find(name)
            .unwrap_or_else(|| panic!("no `{name}` in {line:?}"));
        line[at + name.len()..]
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no number after `{name}` in {line:?}"))
    };
    (field("cov:"), field("ft:"))
}
