//! The fuzzer `cargo fuzz build` linked, as a second clock for a timeout's
//! result.
//!
//! A timeout is reduced to the edge of its limit: the result is the
//! smallest input that still keeps the driver running to the deadline. Our
//! driver imitates the cost of libFuzzer's comparison hooks, but on a
//! target whose run is nearly all comparisons the two clocks differ by
//! more than the margin on some runs: a result our driver had confirmed at
//! 2.2 s in a fresh process ran 1.59 s in the real binary, which then did
//! not report it at `-timeout=1` (tests/slow.rs, `timeout-clock`, about one
//! run in ten). Where the fuzzer `cargo fuzz build` made is on disk (at
//! `<target dir>/<triple>/<profile>/<target>`, where `cargo fuzz run` runs
//! it), a timeout's result must also keep *it* running to the deadline.
//!
//! The fuzzer is trusted as a clock only after it hangs on the original
//! too: it may be older than the sources, or built with other flags. It is
//! only read and run: one input from a temporary file, `-timeout=0` (so
//! libFuzzer's own alarm does not end the run before the deadline, which
//! keeps the margin on its clock as on ours), the run's memory limits, in
//! its own process group, killed at the deadline or when the user stops.
//!
//! It is clocked as libFuzzer clocks it: the input, not the process.
//! libFuzzer prints `Running: <file>` just before it runs a file given on
//! its command line and `Executed <file> in N ms` just after; the time
//! before and after (loading, sanitizer and counter set-up, final stats:
//! 30 ms idle, 65–80 ms with the other core busy, measured on `hang_a`)
//! is not the input's, and counting it let a result through that ran
//! 0.25 s of a 0.3 s limit (tests/slow.rs, `timeout-skew`, on CI). A
//! fuzzer that never prints the line is clocked from its start once
//! [`STARTUP_CAP`] has passed.

use crate::error::{Error, Result};
use crate::run::driver::{host_triple, BuildOptions};
use crate::run::exec::ExecError;
use crate::run::project::FuzzProject;
use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a fuzzer may take to reach its input (`Running: <file>`)
/// before it is clocked from its start instead.
pub const STARTUP_CAP: Duration = Duration::from_secs(10);

/// What libFuzzer prints on stderr just before it runs a file.
const RUNNING: &[u8] = b"Running: ";

/// `cargo fuzz build`'s fuzzer for one target.
#[derive(Debug, Clone)]
pub struct FuzzerBinary {
    path: PathBuf,
    /// Where `cargo fuzz run` runs it from (the fuzz package's parent).
    cwd: PathBuf,
    rss_limit_mb: u64,
    malloc_limit_mb: u64,
    /// [`STARTUP_CAP`] (shorter in tests).
    startup_cap: Duration,
}

impl FuzzerBinary {
    /// The fuzzer `cargo fuzz build` (with the same `--target-dir`,
    /// `--dev` and target) leaves for `target`, if there is one.
    pub fn locate(
        project: &FuzzProject,
        target: &str,
        build: &BuildOptions,
        limits: (u64, u64),
    ) -> Option<FuzzerBinary> {
        let root = build
            .target_dir
            .clone()
            .unwrap_or_else(|| project.target_directory.clone());
        let profile = if build.dev { "debug" } else { "release" };
        let path = root.join(host_triple().ok()?).join(profile).join(target);
        path.is_file().then(|| FuzzerBinary {
            path,
            cwd: project
                .dir
                .parent()
                .map_or_else(|| project.dir.clone(), Path::to_owned),
            rss_limit_mb: limits.0,
            malloc_limit_mb: limits.1,
            startup_cap: STARTUP_CAP,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `input` once: whether it was still running at `deadline`
    /// (killed there), not ended (finished, crashed or out of memory). A
    /// first Ctrl-C lets the run go on, as it does the driver's final
    /// check; a second one kills its group with every driver's.
    pub fn runs_past(&self, input: &[u8], deadline: Duration) -> Result<bool> {
        let temp_error = |source| Error::Write {
            path: std::env::temp_dir(),
            source,
        };
        let mut file = tempfile::Builder::new()
            .prefix("reduce-crash-clock-")
            .tempfile()
            .map_err(temp_error)?;
        file.write_all(input)
            .and_then(|()| file.flush())
            .map_err(temp_error)?;
        let asan = match std::env::var("ASAN_OPTIONS") {
            // What cargo-fuzz adds to the user's.
            Ok(user) if !user.is_empty() => format!("{user}:detect_odr_violation=0"),
            _ => "detect_odr_violation=0".to_owned(),
        };
        let mut cmd = Command::new(&self.path);
        cmd.arg("-timeout=0")
            .arg(format!("-rss_limit_mb={}", self.rss_limit_mb))
            .arg(format!("-malloc_limit_mb={}", self.malloc_limit_mb))
            .arg(file.path())
            .current_dir(&self.cwd)
            .env("ASAN_OPTIONS", asan)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own group: the terminal's Ctrl-C reaches us, not it.
            .process_group(0);
        let starting = crate::interrupt::hold();
        let mut child = cmd.spawn().map_err(|source| ExecError::Spawn {
            path: self.path.clone(),
            source,
        })?;
        let mut group = crate::interrupt::Group::register(child.id() as i32);
        drop(starting);
        let spawned = Instant::now();
        // Drains stderr (so the fuzzer never blocks on it) and says when
        // the input started. Not joined: a child the fuzzer left behind may
        // hold the pipe open.
        let (tx, rx) = mpsc::channel::<Event>();
        if let Some(stderr) = child.stderr.take() {
            let path = file.path().to_owned();
            std::thread::spawn(move || watch_stderr(stderr, &path, &tx));
        }
        let mut input_started: Option<Instant> = None;
        let ran_past = 'clock: loop {
            // Read before asking whether it is still running: still
            // running after `now` means running at `now`.
            let now = Instant::now();
            while let Ok(event) = rx.try_recv() {
                match event {
                    Event::Running(at) => input_started = input_started.or(Some(at)),
                    Event::Executed(took) => break 'clock took >= deadline,
                }
            }
            if input_started.is_none() && now - spawned >= self.startup_cap {
                input_started = Some(spawned);
            }
            // A child that cannot be waited for is gone.
            if !matches!(child.try_wait(), Ok(None)) {
                break false;
            }
            let ran = input_started.map(|at| now.saturating_duration_since(at));
            if ran.is_some_and(|ran| ran >= deadline) {
                // Its `Executed` line may be on its way.
                break match rx.recv_timeout(Duration::from_millis(20)) {
                    Ok(Event::Executed(took)) => took >= deadline,
                    _ => true,
                };
            }
            let left = ran.map_or(Duration::from_millis(5), |ran| deadline - ran);
            std::thread::sleep(left.min(Duration::from_millis(5)));
        };
        if matches!(child.try_wait(), Ok(None)) {
            // The fuzzer leads its group; anything it started goes too.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
        }
        group.release();
        Ok(ran_past)
    }
}

/// What libFuzzer says on stderr around the one input it runs.
enum Event {
    /// `Running: <file>` arrived then: the input starts.
    Running(Instant),
    /// `Executed <file> in N ms`: it ended, after that long by libFuzzer's
    /// clock.
    Executed(Duration),
}

/// The longest line kept whole: `Running:` and `Executed` name our
/// temporary file; the target's own lines may be any length.
const LINE_CAP: usize = 4096;

/// Reads `stderr` to its end, sending [`Event`]s for `file`. Holds at most
/// [`LINE_CAP`] bytes of a line, however long the target's lines are.
fn watch_stderr(stderr: impl std::io::Read, file: &Path, tx: &mpsc::Sender<Event>) {
    let file = file.as_os_str().as_encoded_bytes();
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    let mut long = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) if !buf.is_empty() => buf,
            _ => return,
        };
        let n = buf.len();
        for &b in buf {
            if b != b'\n' {
                long |= line.len() == LINE_CAP;
                if !long {
                    line.push(b);
                }
                continue;
            }
            if !long {
                if let Some(event) = event_of(&line, file) {
                    if tx.send(event).is_err() {
                        return;
                    }
                }
            }
            line.clear();
            long = false;
        }
        reader.consume(n);
    }
}

/// The [`Event`] one whole stderr line is, if any.
fn event_of(line: &[u8], file: &[u8]) -> Option<Event> {
    if line.strip_prefix(RUNNING) == Some(file) {
        return Some(Event::Running(Instant::now()));
    }
    let rest = line.strip_prefix(b"Executed ")?.strip_prefix(file)?;
    let ms = std::str::from_utf8(rest.strip_prefix(b" in ")?.strip_suffix(b" ms")?).ok()?;
    Some(Event::Executed(Duration::from_millis(ms.parse().ok()?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(dir: &Path, body: &str) -> FuzzerBinary {
        use std::os::unix::fs::PermissionsExt as _;
        let path = dir.join("fuzzer");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        FuzzerBinary {
            path,
            cwd: dir.to_owned(),
            rss_limit_mb: 2048,
            malloc_limit_mb: 0,
            startup_cap: Duration::from_secs(2),
        }
    }

    #[test]
    fn a_run_is_clocked_against_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let hang = script(dir.path(), "echo \"Running: $4\" >&2; exec sleep 30");
        let t = Instant::now();
        assert!(hang.runs_past(b"x", Duration::from_millis(200)).unwrap());
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "killed at the deadline"
        );
        let quick = script(dir.path(), "exit 1");
        assert!(!quick.runs_past(b"x", Duration::from_secs(10)).unwrap());
    }

    /// Whether a fuzzer that runs `body` is still running at `ms`.
    fn runs_past_ms(dir: &Path, body: &str, ms: u64) -> bool {
        script(dir, body)
            .runs_past(b"x", Duration::from_millis(ms))
            .unwrap()
    }

    #[test]
    fn the_clock_starts_at_the_input_not_the_process() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        // 0.6 s in all, of which the input's run is 0.2 s.
        let slow_start = "sleep 0.4; echo 'INFO: Seed: 1' >&2; echo \"Running: $4\" >&2; sleep 0.2";
        assert!(!runs_past_ms(dir, slow_start, 400));
        let hangs_after = "sleep 0.4; echo \"Running: $4\" >&2; exec sleep 30";
        assert!(runs_past_ms(dir, hangs_after, 400));
        // 0.3 s of input, then a slow exit; and a line naming another file.
        let slow_exit = "echo 'Running: /elsewhere' >&2; echo \"Running: $4\" >&2; sleep 0.3; \
             echo \"Executed $4 in 300 ms\" >&2; sleep 0.4";
        assert!(!runs_past_ms(dir, slow_exit, 500));
    }

    #[test]
    fn without_the_running_line_it_is_clocked_from_its_start_after_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        // A flood of output with no line break, then a hang.
        let silent = script(
            dir.path(),
            "head -c 1000000 /dev/zero | tr '\\0' 'a' >&2; exec sleep 30",
        );
        let t = Instant::now();
        assert!(silent.runs_past(b"x", Duration::from_millis(200)).unwrap());
        let took = t.elapsed();
        assert!(
            took >= Duration::from_secs(2) && took < Duration::from_secs(10),
            "{took:?}"
        );
        let quick = script(dir.path(), "echo nothing >&2; exit 0");
        assert!(!quick.runs_past(b"x", Duration::from_millis(200)).unwrap());
    }

    #[test]
    fn it_gets_the_input_and_libfuzzer_s_flags() {
        let dir = tempfile::tempdir().unwrap();
        let seen = dir.path().join("seen");
        let f = script(
            dir.path(),
            &format!("echo \"$@\" > {0}; cat \"$4\" >> {0}", seen.display()),
        );
        assert!(!f.runs_past(b"input", Duration::from_secs(10)).unwrap());
        let seen = std::fs::read_to_string(&seen).unwrap();
        assert!(
            seen.starts_with("-timeout=0 -rss_limit_mb=2048 -malloc_limit_mb=0 "),
            "{seen}"
        );
        assert!(seen.ends_with("input"), "{seen}");
    }
}
