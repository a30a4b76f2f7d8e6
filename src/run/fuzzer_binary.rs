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

use crate::error::{Error, Result};
use crate::run::driver::{host_triple, BuildOptions};
use crate::run::exec::ExecError;
use crate::run::project::FuzzProject;
use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `cargo fuzz build`'s fuzzer for one target.
#[derive(Debug, Clone)]
pub struct FuzzerBinary {
    path: PathBuf,
    /// Where `cargo fuzz run` runs it from (the fuzz package's parent).
    cwd: PathBuf,
    rss_limit_mb: u64,
    malloc_limit_mb: u64,
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
            .stderr(Stdio::null())
            // Its own group: the terminal's Ctrl-C reaches us, not it.
            .process_group(0);
        let starting = crate::interrupt::hold();
        let mut child = cmd.spawn().map_err(|source| ExecError::Spawn {
            path: self.path.clone(),
            source,
        })?;
        let mut group = crate::interrupt::Group::register(child.id() as i32);
        drop(starting);
        let started = Instant::now();
        let ran_past = loop {
            // A child that cannot be waited for is gone.
            if !matches!(child.try_wait(), Ok(None)) {
                break false;
            }
            let elapsed = started.elapsed();
            if elapsed >= deadline {
                break true;
            }
            std::thread::sleep((deadline - elapsed).min(Duration::from_millis(5)));
        };
        if ran_past {
            // The fuzzer leads its group; anything it started goes too.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
        }
        group.release();
        Ok(ran_past)
    }
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
        }
    }

    #[test]
    fn a_run_is_clocked_against_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let hang = script(dir.path(), "exec sleep 30");
        let t = Instant::now();
        assert!(hang.runs_past(b"x", Duration::from_millis(200)).unwrap());
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "killed at the deadline"
        );
        let quick = script(dir.path(), "exit 1");
        assert!(!quick.runs_past(b"x", Duration::from_secs(10)).unwrap());
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
