//! Exit 0 means a written result that crashes the same way: no false, lost
//! or overwritten results (issue 18). Each test reproduces one way a result
//! used to go wrong, on a copy of `tests/fixtures/buggy` with the build
//! without a sanitizer (`-s none`), and checks that it no longer does.

mod common;

use common::*;
use serde_json::Value;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Instant;

/// This file's copy of the fixture and its driver directory.
fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| copy_fixture_as("buggy", "buggy-results"))
}

fn driver_dir() -> String {
    tmp_root()
        .join("fixture-driver-results")
        .display()
        .to_string()
}

/// The binary with this file's driver directory (and `-s none`), in the copy.
fn tool<S: AsRef<OsStr>>(args: &[S]) -> Run {
    let mut all: Vec<std::ffi::OsString> = vec!["--target-dir".into(), driver_dir().into()];
    all.extend(args.iter().map(|a| a.as_ref().to_os_string()));
    let started = Instant::now();
    let child = command(&all, root()).spawn().unwrap();
    let names = all
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let run = finish(child, names, started, RUN_LIMIT);
    run.assert_no_panic();
    run
}

/// Writes `fuzz/artifacts/<target>/<name>` (removing an earlier result).
fn artifact(target: &str, name: &[u8], bytes: &[u8]) -> PathBuf {
    let dir = root().join("fuzz/artifacts").join(target);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(OsStr::from_bytes(name));
    std::fs::write(&path, bytes).unwrap();
    let _ = std::fs::remove_file(reduced_path(&path));
    path
}

/// `file` run alone (`--classify`): its `classified` message.
fn classified(file: &Path, target: &str) -> Value {
    let run = tool(&[
        OsStr::new("--classify"),
        OsStr::new("--message-format"),
        OsStr::new("json"),
        OsStr::new("--fuzz-target"),
        OsStr::new(target),
        file.as_os_str(),
    ]);
    run.assert_code(0);
    run.message("classified")
}

/// The (kind, location) `file` crashes `target` with, run alone.
fn crash_of(file: &Path, target: &str) -> Option<(String, Option<String>)> {
    identity(&classified(file, target))
}

fn unwrap_bug() -> (String, Option<String>) {
    ("panic".into(), Some("src/lib.rs:35:40".into()))
}

/// `(kind, location)` with the location shortened to its `src/…` suffix.
fn short(id: Option<(String, Option<String>)>) -> Option<(String, Option<String>)> {
    id.map(|(k, l)| {
        let l = l.map(|l| match l.find("src/") {
            Some(i) => l[i..].to_owned(),
            None => l,
        });
        (k, l)
    })
}

// ------------------------------------------------------------------ timeouts

/// `-- -timeout=0` is libFuzzer's "no timeout", not a zero-second limit
/// that turns every crash into a timeout and "reduces" it to nothing.
#[test]
fn libfuzzer_timeout_zero_means_no_timeout() {
    let a = artifact("unwrap", b"crash-timeout-zero", &noisy("t0", b"KEY=;"));
    let run = tool(&[a.as_os_str(), OsStr::new("--"), OsStr::new("-timeout=0")]);
    run.assert_code(0);
    assert_eq!(std::fs::read(reduced_path(&a)).unwrap(), b"KEY=;");
    assert_eq!(
        short(crash_of(&reduced_path(&a), "unwrap")),
        Some(unwrap_bug())
    );
}

/// `--timeout 0` and `--timeout 0.000001` are refused (exit 2) instead of
/// classifying the crash as a timeout; nothing is written.
#[test]
fn a_timeout_shorter_than_the_original_s_run_is_refused() {
    let a = artifact("unwrap", b"crash-timeout-tiny", &noisy("t1", b"KEY=;"));
    for limit in ["0", "0.000001"] {
        let run = tool(&[OsStr::new("--timeout"), OsStr::new(limit), a.as_os_str()]);
        run.assert_code(2);
        assert_eq!(run.error_lines().len(), 1, "{}", run.describe());
        assert!(
            !reduced_path(&a).exists(),
            "--timeout {limit} wrote a result"
        );
    }
}

/// A directory of three distinct bugs and a file that does not crash, with
/// `--timeout 0.000001`: refused (exit 2), and a valid earlier result stays.
#[test]
fn a_directory_with_a_tiny_timeout_is_refused_and_keeps_its_results() {
    let dir = root().join("fuzz/artifacts/three_bugs");
    std::fs::create_dir_all(&dir).unwrap();
    let mut paths = Vec::new();
    for (i, magic) in [&b"TRIA"[..], b"TRIB", b"TRIC"].iter().enumerate() {
        let mut data = magic.to_vec();
        data.extend(noise(&mut Rng::from_name(&format!("tiny{i}")), 200));
        let p = dir.join(format!("crash-tiny-{i}"));
        std::fs::write(&p, &data).unwrap();
        paths.push(p);
    }
    std::fs::write(dir.join("crash-tiny-pass"), b"nothing to see").unwrap();
    let kept = reduced_path(&paths[0]);
    std::fs::write(&kept, b"TRIA").unwrap();
    let run = tool(&[
        OsStr::new("--timeout"),
        OsStr::new("0.000001"),
        dir.as_os_str(),
    ]);
    run.assert_code(2);
    assert_eq!(std::fs::read(&kept).unwrap(), b"TRIA", "{}", run.describe());
    for p in &paths[1..] {
        assert!(!reduced_path(p).exists());
    }
}

// ------------------------------------------------------------------ nothing lost

/// A second run with a small budget (or interrupted) keeps the first run's
/// smaller result, and says so.
#[test]
fn a_finished_result_is_not_replaced_by_a_worse_one() {
    let data = noisy("kept", b"KEY=;");
    let a = artifact("unwrap", b"crash-kept", &data);
    tool(&[a.as_os_str()]).assert_code(0);
    assert_eq!(std::fs::read(reduced_path(&a)).unwrap(), b"KEY=;");
    // Two tests are not enough to get anywhere near 5 bytes.
    let run = tool(&[
        OsStr::new("--max-tests"),
        OsStr::new("2"),
        OsStr::new("--message-format"),
        OsStr::new("json"),
        a.as_os_str(),
    ]);
    run.assert_code(0);
    let finished = run.message("reduce-finished");
    assert_eq!(finished["budget_exhausted"], true, "{finished}");
    assert_eq!(finished["kept_existing"], true, "{finished}");
    assert_eq!(finished["reduced_len"], 5, "{finished}");
    assert_eq!(std::fs::read(reduced_path(&a)).unwrap(), b"KEY=;");
    // An existing output that does not crash is no result: it is replaced.
    std::fs::write(reduced_path(&a), b"harmless").unwrap();
    let run = tool(&[
        OsStr::new("--message-format"),
        OsStr::new("json"),
        a.as_os_str(),
    ]);
    run.assert_code(0);
    assert_eq!(run.message("reduce-finished")["kept_existing"], false);
    assert_eq!(std::fs::read(reduced_path(&a)).unwrap(), b"KEY=;");
}

/// Ctrl-C right after the reduction starts keeps an earlier, smaller result.
#[test]
fn ctrl_c_never_makes_a_result_worse() {
    let data = noisy_with_len("ctrl-c", b"WAIT\x03", 3000);
    let a = artifact("infinite_loop", b"crash-ctrl-c", &data);
    std::fs::write(reduced_path(&a), b"WAIT\x03").unwrap();
    let args: Vec<String> = vec![
        "--target-dir".into(),
        driver_dir(),
        "--timeout".into(),
        "0.3".into(),
        "--message-format".into(),
        "json".into(),
        a.display().to_string(),
    ];
    let mut child = command(&args, root())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    for line in lines.by_ref() {
        if line.unwrap().contains("\"reduce-started\"") {
            break;
        }
    }
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest:?}");
    assert!(
        rest.iter().any(|l| l.contains("\"interrupted\":true")),
        "{rest:?}"
    );
    assert_eq!(std::fs::read(reduced_path(&a)).unwrap(), b"WAIT\x03");
}

/// Two runs on one artifact at once take turns: the second waits (and says
/// so), and the file ends up holding a result that crashes the same way and
/// is no larger than either run's.
#[test]
fn two_runs_on_one_artifact_take_turns() {
    let data = noisy_with_len("turns", b"WAIT\x03", 1500);
    let a = artifact("infinite_loop", b"crash-turns", &data);
    let args = |a: &Path| -> Vec<String> {
        vec![
            "--target-dir".into(),
            driver_dir(),
            "--timeout".into(),
            "0.3".into(),
            a.display().to_string(),
        ]
    };
    let started = Instant::now();
    let first = command(&args(&a), root()).spawn().unwrap();
    // The second starts once the first is reducing (it holds the output).
    let mut first = first;
    let mut stderr = BufReader::new(first.stderr.take().unwrap());
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 && !line.contains("Reducing") {
        line.clear();
    }
    let drain = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
    });
    let second = command(&args(&a), root()).spawn().unwrap();
    let first_status = first.wait().unwrap();
    drain.join().unwrap();
    let second = finish(second, args(&a), started, RUN_LIMIT);
    assert_eq!(first_status.code(), Some(0));
    second.assert_code(0);
    assert!(
        second
            .stderr
            .contains("waiting for another cargo reduce-crash run"),
        "{}",
        second.describe()
    );
    let result = std::fs::read(reduced_path(&a)).unwrap();
    assert_eq!(&result[..4], b"WAIT", "{result:?}");
    assert_eq!(result.len(), 5);
}

// ------------------------------------------------------------------ builds

/// A target with its own `#[global_allocator]` reduces; one line says
/// which memory limits apply.
#[test]
fn a_target_with_its_own_global_allocator_reduces() {
    let a = artifact("own_allocator", b"crash-own", &noisy("own", b"KEY=;"));
    let run = tool(&[a.as_os_str()]);
    run.assert_code(0);
    assert_eq!(std::fs::read(reduced_path(&a)).unwrap(), b"KEY=;");
    // The note comes with the build that found out (a fresh driver
    // directory), then from the remembered marker on every later run.
    let again = tool(&[a.as_os_str()]);
    again.assert_code(0);
    assert!(
        again
            .stderr
            .lines()
            .any(|l| l.starts_with("note: `own_allocator` has its own global allocator")),
        "{}",
        again.describe()
    );
}

// ------------------------------------------------------------------ terminal and files

/// With stderr a pipe closed after the first line (as `| head -1` does),
/// the run still writes its result and exits 0.
#[test]
fn a_closed_stderr_does_not_stop_the_run() {
    let a = artifact("unwrap", b"crash-closed-pipe", &noisy("pipe", b"KEY=;"));
    let args: Vec<String> = vec!["--target-dir".into(), driver_dir(), a.display().to_string()];
    let mut child = command(&args, root())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    drop(stderr);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "first line: {first}");
    assert_eq!(std::fs::read(reduced_path(&a)).unwrap(), b"KEY=;");
}

/// File names need not be UTF-8: `crash-\xff` and `crash-\xfe` get their own
/// outputs, byte for byte, alone and in a directory.
#[test]
fn non_utf8_names_keep_their_bytes() {
    let ff = artifact("index", b"crash-\xff", &noisy("ff", b"REG7"));
    let fe = artifact("index", b"crash-\xfe", &noisy("fe", b"REG9"));
    // ddmin keeps the digits (the default pipeline lowers both to `REG4`),
    // so each output shows which artifact it came from.
    let ddmin = [OsStr::new("--strategy"), OsStr::new("ddmin")];
    tool(&[ddmin[0], ddmin[1], ff.as_os_str()]).assert_code(0);
    let out_ff = ff.with_file_name(OsStr::from_bytes(b"crash-\xff.reduced"));
    assert_eq!(std::fs::read(&out_ff).unwrap(), b"REG7");
    std::fs::remove_file(&out_ff).unwrap();
    let dir = ff.parent().unwrap();
    // Both are bug `index` (one bucket): `--each` reduces both.
    let run = tool(&[
        ddmin[0],
        ddmin[1],
        OsStr::new("--each"),
        OsStr::new("--message-format"),
        OsStr::new("json"),
        dir.as_os_str(),
    ]);
    run.assert_code(0);
    assert_eq!(std::fs::read(&out_ff).unwrap(), b"REG7");
    let out_fe = fe.with_file_name(OsStr::from_bytes(b"crash-\xfe.reduced"));
    assert_eq!(std::fs::read(&out_fe).unwrap(), b"REG9");
}

/// Results and records are ordinary files, as the umask makes them.
#[test]
fn results_and_records_follow_the_umask() {
    let a = artifact("overflow", b"crash-umask", &noisy("umask", b"SUM=\xff\x01"));
    tool(&[a.as_os_str()]).assert_code(0);
    let mask = unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        m as u32
    };
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&reduced_path(&a)), 0o666 & !mask);
    // Directory mode writes records too.
    tool(&[a.parent().unwrap().as_os_str()]).assert_code(0);
    let records = a.parent().unwrap().join(".reduce-crash");
    let json: Vec<PathBuf> = std::fs::read_dir(&records)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert!(!json.is_empty());
    for r in json {
        assert_eq!(mode(&r), 0o666 & !mask, "{}", r.display());
    }
}

/// Directory mode follows symbolic links to artifacts, counts a file once
/// however many names it has, and reports an unreadable artifact on its own
/// row while reducing the rest.
#[test]
fn directories_follow_links_and_survive_unreadable_files() {
    let dir = root().join("fuzz/artifacts/abort");
    std::fs::create_dir_all(&dir).unwrap();
    let elsewhere = root().join("kept-elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let real = elsewhere.join("crash-linked");
    std::fs::write(&real, noisy("linked", b"ABRT")).unwrap();
    let link = dir.join("crash-linked");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&real, &link).unwrap();
    std::fs::write(dir.join("crash-copy"), std::fs::read(&real).unwrap()).unwrap();
    // Reading /proc/self/mem from its start fails (EIO), even as root.
    let unreadable = dir.join("crash-unreadable");
    let _ = std::fs::remove_file(&unreadable);
    std::os::unix::fs::symlink("/proc/self/mem", &unreadable).unwrap();

    let run = tool(&[
        OsStr::new("--message-format"),
        OsStr::new("json"),
        dir.as_os_str(),
    ]);
    run.assert_code(0);
    let artifacts: Vec<Value> = run
        .json()
        .into_iter()
        .filter(|v| v["reason"] == "artifact")
        .collect();
    assert_eq!(artifacts.len(), 2, "{}", run.describe());
    assert!(artifacts.iter().any(|v| v["status"] == "unreadable"));
    assert!(artifacts.iter().any(|v| v["status"] == "crash"));
    let outputs = [reduced_path(&link), reduced_path(&dir.join("crash-copy"))];
    let written: Vec<&PathBuf> = outputs.iter().filter(|p| p.exists()).collect();
    assert_eq!(written.len(), 1, "one output for one artifact: {written:?}");
    assert_eq!(std::fs::read(written[0]).unwrap(), b"ABRT");
    std::fs::remove_file(&unreadable).unwrap();
}

/// A record is a claim, not a result: an output that a record vouches for
/// but that does not crash is reduced again, never reported as done.
#[test]
fn directory_mode_checks_outputs_whatever_the_records_say() {
    let dir = root().join("fuzz/artifacts/unwrap-stale");
    let a = {
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("crash-stale");
        std::fs::write(&p, noisy("stale", b"KEY=;")).unwrap();
        p
    };
    let args = [
        OsStr::new("--fuzz-target"),
        OsStr::new("unwrap"),
        OsStr::new("--message-format"),
        OsStr::new("json"),
        dir.as_os_str(),
    ];
    tool(&args).assert_code(0);
    let out = reduced_path(&a);
    assert_eq!(std::fs::read(&out).unwrap(), b"KEY=;");
    // Make the record vouch for an output that does not crash.
    std::fs::write(&out, b"KEY=x;").unwrap();
    let new_sha1 = sha1_smol::Sha1::from(b"KEY=x;").digest().to_string();
    let old_sha1 = sha1_smol::Sha1::from(b"KEY=;").digest().to_string();
    for entry in std::fs::read_dir(dir.join(".reduce-crash")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&p).unwrap();
            std::fs::write(
                &p,
                text.replace(&old_sha1, &new_sha1)
                    .replace("\"len\":5", "\"len\":6"),
            )
            .unwrap();
        }
    }
    let run = tool(&args);
    run.assert_code(0);
    let bucket = run.message("bucket");
    assert_eq!(bucket["status"], "reduced", "{bucket}");
    assert_eq!(std::fs::read(&out).unwrap(), b"KEY=;");
}

/// Ctrl-C while the driver is being built: exit 130, not a build failure.
#[test]
fn ctrl_c_during_the_build_is_an_interruption() {
    let a = artifact("unwrap", b"crash-build-sigint", &noisy("build", b"KEY=;"));
    // A driver directory of its own, so that there is something to build.
    let target_dir = tmp_root().join("fixture-driver-results-cold");
    let _ = std::fs::remove_dir_all(&target_dir);
    // `-v` shows cargo's own lines: `Compiling` says the build is under way.
    let args: Vec<String> = vec![
        "-v".into(),
        "--target-dir".into(),
        target_dir.display().to_string(),
        a.display().to_string(),
    ];
    let started = Instant::now();
    // Its own process group, which gets the signal as a terminal's Ctrl-C
    // reaches every process of the foreground group (cargo included).
    let mut child = {
        use std::os::unix::process::CommandExt;
        command(&args, root()).process_group(0).spawn().unwrap()
    };
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 && !line.contains("Compiling") {
        line.clear();
    }
    unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGINT) };
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
    let status = child.wait().unwrap();
    assert!(started.elapsed() < RUN_LIMIT);
    assert_eq!(status.code(), Some(130), "{line}{rest}");
    assert!(!rest.contains("fix the build"), "{rest}");
}

/// A grammar file that is not text is a bad grammar (exit 8).
#[test]
fn a_binary_grammar_file_is_a_bad_grammar() {
    let a = artifact("json_config", b"crash-binary-grammar", b"{\"port\":70000}");
    let grammar = root().join("binary.grammar");
    std::fs::write(&grammar, b"\xff\xfe\x00<start> ::= 'a'").unwrap();
    let run = tool(&[OsStr::new("--grammar"), grammar.as_os_str(), a.as_os_str()]);
    run.assert_code(8);
    assert_eq!(run.error_lines().len(), 1, "{}", run.describe());
    assert!(
        run.error_lines()[0].contains("not text"),
        "{}",
        run.describe()
    );
}

/// OSS-Fuzz's test case names hold the target:
/// `clusterfuzz-testcase-minimized-<target>-<id>`.
#[test]
fn oss_fuzz_test_case_names_give_their_target() {
    let dir = root().join("fuzz/regressions");
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("clusterfuzz-testcase-minimized-unwrap-5078383126904832");
    std::fs::write(&a, noisy("oss-fuzz", b"KEY=;")).unwrap();
    let _ = std::fs::remove_file(reduced_path(&a));
    let run = tool(&[a.as_os_str()]);
    run.assert_code(0);
    assert_eq!(std::fs::read(reduced_path(&a)).unwrap(), b"KEY=;");
}

// ------------------------------------------------------------------ the invariant

mod invariant {
    use super::*;
    use proptest::prelude::*;

    /// (target, trigger) pairs whose crashes reduce in milliseconds.
    const BUGS: &[(&str, &[u8])] = &[
        ("unwrap", b"KEY=;"),
        ("index", b"REG7"),
        ("overflow", b"SUM=\xff\x01"),
        ("abort", b"ABRT"),
        ("two_bugs", b"BA!!B"),
        ("stack_overflow", b"[@@@"),
    ];
    const STRATEGIES: &[&str] = &[
        "default",
        "ddmin",
        "chunks",
        "seed-ddmin",
        "ddrmin",
        "fuzzingbook-dd",
    ];
    const MODES: &[&str] = &["any", "kind", "location", "message"];

    /// The parts of a signature `mode` compares.
    fn key(sig: &Value, mode: &str) -> Vec<Value> {
        match mode {
            "any" => vec![],
            "kind" => vec![sig["kind"].clone(), sig["code"].clone()],
            "location" => vec![
                sig["kind"].clone(),
                sig["code"].clone(),
                sig["location"].clone(),
            ],
            _ => vec![
                sig["kind"].clone(),
                sig["code"].clone(),
                sig["location"].clone(),
                sig["message"].clone(),
            ],
        }
    }

    fn signature_of(file: &Path, target: &str) -> Value {
        classified(file, target)["signature"].clone()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

        /// Whatever the strategy, match mode and budget: exit 0 means the
        /// output exists and crashes, alone, with the original's signature
        /// (as the mode compares it); any other exit leaves no new output.
        #[test]
        fn exit_zero_means_a_written_result_that_crashes_the_same_way(
            bug in 0..BUGS.len(),
            strategy in 0..STRATEGIES.len(),
            mode in 0..MODES.len(),
            len in 50usize..1500,
            budget in prop::option::of(1u64..60),
            seed in 0u64..1_000_000,
        ) {
            let (target, trigger) = BUGS[bug];
            let data = noisy_with_len(&format!("inv{seed}"), trigger, len);
            let a = artifact(target, format!("crash-inv-{seed}").as_bytes(), &data);
            let original = signature_of(&a, target);
            let mut args: Vec<String> = vec![
                "--strategy".into(), STRATEGIES[strategy].into(),
                "--match".into(), MODES[mode].into(),
            ];
            if let Some(n) = budget {
                args.extend(["--max-tests".into(), n.to_string()]);
            }
            args.push(a.display().to_string());
            let run = tool(&args);
            let out = reduced_path(&a);
            if run.code == Some(0) {
                prop_assert!(out.exists(), "exit 0 without an output\n{}", run.describe());
                let got = signature_of(&out, target);
                prop_assert!(!got.is_null(), "the output does not crash\n{}", run.describe());
                prop_assert_eq!(key(&got, MODES[mode]), key(&original, MODES[mode]));
            } else {
                prop_assert!(!out.exists(), "exit {:?} with an output\n{}", run.code, run.describe());
            }
            prop_assert_eq!(std::fs::read(&a).unwrap(), data);
        }
    }
}

/// An artifact that is already minimal is its own result (exit 0).
#[test]
fn an_already_minimal_artifact_is_its_own_result() {
    let a = artifact("unwrap", b"crash-minimal", b"KEY=;");
    for strategy in ["default", "ddmin"] {
        let _ = std::fs::remove_file(reduced_path(&a));
        let run = tool(&[
            OsStr::new("--strategy"),
            OsStr::new(strategy),
            a.as_os_str(),
        ]);
        run.assert_code(0);
        assert_eq!(
            std::fs::read(reduced_path(&a)).unwrap(),
            b"KEY=;",
            "{strategy}"
        );
    }
}
