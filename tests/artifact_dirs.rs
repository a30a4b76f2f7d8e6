//! End-to-end tests of whole artifact directories (`cargo reduce-crash
//! <dir>`, several artifacts, `--all`): discovery, buckets by crash
//! identity, one reduction per bucket with parallel drivers, the summary
//! (human table and JSON lines), records that make a second run free, and
//! the exit codes.
//!
//! The `buggy` fixture is copied to `$CARGO_TARGET_TMPDIR/fixtures/buggy-dirs`
//! and its drivers are built in `$CARGO_TARGET_TMPDIR/fixture-driver-dirs`:
//! the driver crate is generated per fuzz package *name*, so sharing
//! `tests/cli.rs`'s driver directory with a second copy of the same package
//! would rebuild it every time either test binary runs. The tests in this
//! file run one at a time (they share drivers, and the second-run timing
//! must not wait for another test's build).

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{MutexGuard, OnceLock};
use std::time::{Duration, SystemTime};

/// The copy of the fixture these tests use.
fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = tmp_root().join("fixtures").join("buggy-dirs");
        sync_tree(&fixture_source(), &root);
        for dir in ["fuzz/artifacts", "dirs"] {
            let dir = root.join(dir);
            if dir.exists() {
                std::fs::remove_dir_all(&dir).unwrap();
            }
            std::fs::create_dir_all(&dir).unwrap();
        }
        root
    })
}

fn driver_dir() -> PathBuf {
    tmp_root().join("fixture-driver-dirs")
}

/// One test at a time.
fn serial() -> MutexGuard<'static, ()> {
    lock_target("artifact_dirs")
}

/// Runs the binary in the fixture copy with this file's driver directory.
fn run_in_copy(args: &[&str]) -> Run {
    let driver_dir = driver_dir();
    let mut all = vec!["--target-dir", driver_dir.to_str().unwrap()];
    all.extend_from_slice(args);
    let run = run_raw(&all, root());
    run.assert_no_panic();
    run
}

/// The JSON messages with this `reason`.
fn messages(run: &Run, reason: &str) -> Vec<Value> {
    run.json()
        .into_iter()
        .filter(|v| v["reason"] == reason)
        .collect()
}

/// A path from a JSON message, resolved against the fixture copy.
fn path_of(v: &Value) -> PathBuf {
    root().join(v.as_str().unwrap_or_else(|| panic!("not a path: {v}")))
}

fn sha1(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}

/// `count` artifacts `magic` + noise of different lengths, named as
/// libFuzzer names them (`crash-<sha1>`), in `dir`.
fn write_bug(dir: &Path, magic: &[u8], count: usize, seed: &str) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let mut rng = Rng::from_name(seed);
    (0..count)
        .map(|i| {
            let len = 150 + 250 * i + rng.below(200);
            let mut data = magic.to_vec();
            data.extend(noise(&mut rng, len));
            let path = dir.join(format!("crash-{}", sha1(&data)));
            std::fs::write(&path, &data).unwrap();
            path
        })
        .collect()
}

/// The representative a bucket must have: the smallest original (then by path).
fn smallest(paths: &[PathBuf]) -> PathBuf {
    paths
        .iter()
        .min_by_key(|p| (std::fs::metadata(p).unwrap().len(), (*p).clone()))
        .unwrap()
        .clone()
}

/// Classifies `files` in one `--classify` run.
fn classify_files(files: &[PathBuf], extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["--classify", "--message-format", "json"];
    args.extend_from_slice(extra);
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(names.iter().map(String::as_str));
    let run = run_in_copy(&args);
    run.assert_code(0);
    let classified = messages(&run, "classified");
    assert_eq!(classified.len(), files.len(), "{}", run.describe());
    classified
}

fn mtime(p: &Path) -> SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

/// Everything under `dir` except our outputs and records, with contents.
fn originals(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && !p.to_string_lossy().ends_with(".reduced"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

#[test]
fn a_directory_of_three_bugs_gives_three_buckets_and_a_second_run_is_free() {
    let _serial = serial();
    let dir = root().join("fuzz/artifacts/three_bugs");
    let bugs: Vec<(&[u8], Vec<PathBuf>)> = vec![
        (b"TRIA", write_bug(&dir, b"TRIA", 6, "alpha")),
        (b"TRIB", write_bug(&dir, b"TRIB", 4, "beta")),
        (b"TRIC", write_bug(&dir, b"TRIC", 3, "gamma")),
    ];
    // One that does not reproduce (the body has the `=` bug A needs), and
    // libFuzzer's by-products, which would crash but must be ignored (the
    // minimized one would otherwise represent bucket B: it is the smallest).
    let mut passing = b"TRIA name=value ".to_vec();
    passing.extend(noise(&mut Rng::from_name("passing"), 300));
    let passing_path = dir.join(format!("crash-{}", sha1(&passing)));
    std::fs::write(&passing_path, &passing).unwrap();
    std::fs::write(dir.join("minimized-from-0123abcd"), b"TRIB").unwrap();
    std::fs::write(dir.join("slow-unit-4567ef"), b"TRIC....").unwrap();
    let before = originals(&dir);
    assert_eq!(before.len(), 16);

    // First run: everything is classified and reduced, two drivers at once.
    let first = run_in_copy(&[
        "--message-format",
        "json",
        "-j",
        "2",
        "fuzz/artifacts/three_bugs",
    ]);
    first.assert_code(0);
    let artifacts = messages(&first, "artifact");
    assert_eq!(
        artifacts.len(),
        14,
        "13 crashes + 1 passing\n{}",
        first.describe()
    );
    assert!(
        artifacts
            .iter()
            .all(|a| !a["path"].as_str().unwrap().contains("minimized-from")
                && !a["path"].as_str().unwrap().contains("slow-unit")),
        "by-products were taken as artifacts\n{}",
        first.describe()
    );
    let pass: Vec<&Value> = artifacts
        .iter()
        .filter(|a| a["status"] != "crash")
        .collect();
    assert_eq!(pass.len(), 1, "{}", first.describe());
    assert_eq!(pass[0]["status"], "pass");
    assert!(pass[0]["bucket"].is_null());
    assert_eq!(path_of(&pass[0]["path"]), passing_path);
    assert!(artifacts.iter().all(|a| a["cached"] == false));

    let buckets = messages(&first, "bucket");
    assert_eq!(buckets.len(), 3, "{}", first.describe());
    let mut signatures = Vec::new();
    for (magic, paths) in &bugs {
        let rep = smallest(paths);
        let b = buckets
            .iter()
            .find(|b| path_of(&b["representative"]) == rep)
            .unwrap_or_else(|| {
                panic!(
                    "no bucket represented by the smallest {} artifact {}\n{}",
                    String::from_utf8_lossy(magic),
                    rep.display(),
                    first.describe()
                )
            });
        assert_eq!(b["artifacts"].as_u64(), Some(paths.len() as u64), "{b}");
        let mut members: Vec<PathBuf> = b["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(path_of)
            .collect();
        members.sort();
        let mut expected = paths.clone();
        expected.sort();
        assert_eq!(members, expected, "{b}");
        assert_eq!(b["status"], "reduced", "{b}");
        assert_eq!(b["cached"], false, "{b}");
        assert!(b["tests_executed"].as_u64().unwrap() > 0, "{b}");
        assert_eq!(
            b["original_len"].as_u64(),
            Some(std::fs::metadata(&rep).unwrap().len())
        );
        let output = path_of(&b["output"]);
        assert_eq!(output, reduced_path(&rep), "{b}");
        let reduced = std::fs::read(&output).unwrap();
        assert_eq!(&reduced[..], *magic, "bucket {b}");
        assert_eq!(b["reduced_len"].as_u64(), Some(4), "{b}");
        assert_eq!(b["output_sha1"].as_str(), Some(sha1(&reduced).as_str()));
        assert_eq!(b["reductions"].as_array().unwrap().len(), 1, "{b}");
        check_signature(&b["signature"]);
        // Only the representative was reduced.
        for p in paths.iter().filter(|p| **p != rep) {
            assert!(!reduced_path(p).exists(), "{} was reduced too", p.display());
        }
        signatures.push((output, sig_identity(&b["signature"])));
    }
    let distinct: std::collections::HashSet<_> = signatures.iter().map(|s| &s.1).collect();
    assert_eq!(
        distinct.len(),
        3,
        "three distinct signatures: {signatures:?}"
    );

    // Every reduced reproducer crashes with its bucket's signature.
    let outputs: Vec<PathBuf> = signatures.iter().map(|s| s.0.clone()).collect();
    for (c, (_, expected)) in classify_files(&outputs, &[]).iter().zip(&signatures) {
        assert_eq!(identity(c).as_ref(), Some(expected), "{c}");
    }

    let summary = first.message("summary");
    assert_eq!(summary["artifacts"], 14, "{summary}");
    assert_eq!(summary["buckets"], 3, "{summary}");
    assert_eq!(summary["reduced"], 3, "{summary}");
    assert_eq!(summary["no_crash"], 1, "{summary}");
    assert_eq!(summary["exit_code"], 0, "{summary}");

    // Originals untouched; records beside them, no temporaries.
    assert_eq!(originals(&dir), before, "an original was modified");
    assert!(stray_temporaries(&dir).is_empty());
    let records = std::fs::read_dir(dir.join(".reduce-crash"))
        .unwrap()
        .count();
    assert_eq!(records, 14, "one record per artifact");

    // Second run: nothing is rerun or reduced again.
    let mtimes: Vec<SystemTime> = outputs.iter().map(|p| mtime(p)).collect();
    let second = run_in_copy(&[
        "--message-format",
        "json",
        "-j",
        "2",
        "fuzz/artifacts/three_bugs",
    ]);
    second.assert_code(0);
    assert!(
        messages(&second, "artifact")
            .iter()
            .all(|a| a["cached"] == true),
        "an artifact was rerun\n{}",
        second.describe()
    );
    let again = messages(&second, "bucket");
    assert_eq!(again.len(), 3);
    for b in &again {
        assert_eq!(b["cached"], true, "{b}");
        assert_eq!(b["status"], "cached", "{b}");
        assert_eq!(b["tests_executed"], 0, "{b}");
        assert_eq!(b["reduced_len"], 4, "{b}");
    }
    let s2 = second.message("summary");
    assert_eq!(
        (&s2["reduced"], &s2["cached"]),
        (&0.into(), &3.into()),
        "{s2}"
    );
    let now: Vec<SystemTime> = outputs.iter().map(|p| mtime(p)).collect();
    assert_eq!(mtimes, now, "an output was rewritten");
    eprintln!(
        "artifact directory, 14 artifacts in 3 buckets: first run {:.2}s, second run {:.2}s",
        first.elapsed.as_secs_f64(),
        second.elapsed.as_secs_f64()
    );
    assert!(
        second.elapsed < Duration::from_secs(10),
        "the second run took {:.1}s\n{}",
        second.elapsed.as_secs_f64(),
        second.describe()
    );

    // The human summary: a table on stderr, one row per bug,
    // non-reproducing artifacts listed.
    let human = run_in_copy(&["fuzz/artifacts/three_bugs"]);
    human.assert_code(0);
    assert!(human.stdout.trim().is_empty(), "{}", human.describe());
    let header = human
        .stderr
        .lines()
        .find(|l| l.starts_with("bug"))
        .unwrap_or_else(|| panic!("no table\n{}", human.describe()));
    for column in [
        "severity",
        "artifacts",
        "reduced",
        "fingerprint",
        "path",
        "signature",
    ] {
        assert!(header.contains(column), "{header}");
    }
    let rows: Vec<&str> = human
        .stderr
        .lines()
        .filter(|l| l.contains("  cached  "))
        .collect();
    assert_eq!(rows.len(), 3, "{}", human.describe());
    let passing_name = passing_path.file_name().unwrap().to_str().unwrap();
    assert!(
        human
            .stderr
            .lines()
            .any(|l| l.contains("no crash") && l.contains(passing_name)),
        "the passing artifact is not listed\n{}",
        human.describe()
    );

    // A missing or changed output is reduced again; the rest stays known.
    std::fs::remove_file(&outputs[0]).unwrap();
    std::fs::write(&outputs[1], b"changed by hand").unwrap();
    let third = run_in_copy(&["--message-format", "json", "fuzz/artifacts/three_bugs"]);
    third.assert_code(0);
    for b in messages(&third, "bucket") {
        let output = path_of(&b["output"]);
        let expected = if output == outputs[2] {
            "cached"
        } else {
            "reduced"
        };
        assert_eq!(b["status"], expected, "{b}");
    }
    for (output, (magic, _)) in outputs.iter().zip(&bugs) {
        assert_eq!(std::fs::read(output).unwrap(), *magic);
    }

    // --all finds the same artifacts (the only directory here) and knows them.
    let all = run_in_copy(&["--message-format", "json", "--all"]);
    all.assert_code(0);
    let all_buckets = messages(&all, "bucket");
    assert_eq!(all_buckets.len(), 3, "{}", all.describe());
    assert!(
        all_buckets.iter().all(|b| b["cached"] == true),
        "{}",
        all.describe()
    );
    assert_eq!(originals(&dir), before, "an original was modified");
}

#[test]
fn each_reduces_every_artifact_of_every_bucket() {
    let _serial = serial();
    let dir = root().join("dirs/each");
    let mut crashing = write_bug(&dir, b"TRIA", 3, "each-alpha");
    crashing.extend(write_bug(&dir, b"TRIC", 2, "each-gamma"));
    let run = run_in_copy(&[
        "--message-format",
        "json",
        "--each",
        "-j",
        "2",
        "-t",
        "three_bugs",
        "dirs/each",
    ]);
    run.assert_code(0);
    let buckets = messages(&run, "bucket");
    assert_eq!(buckets.len(), 2, "{}", run.describe());
    for b in &buckets {
        let reductions = b["reductions"].as_array().unwrap();
        assert_eq!(
            reductions.len() as u64,
            b["artifacts"].as_u64().unwrap(),
            "{b}"
        );
        assert!(reductions.iter().all(|r| r["status"] == "reduced"), "{b}");
    }
    for artifact in &crashing {
        let out = std::fs::read(reduced_path(artifact)).unwrap();
        let magic = &std::fs::read(artifact).unwrap()[..4];
        assert_eq!(&out[..], magic, "{}", artifact.display());
    }
    // Known next time, every one of them.
    let again = run_in_copy(&[
        "--message-format",
        "json",
        "--each",
        "-t",
        "three_bugs",
        "dirs/each",
    ]);
    again.assert_code(0);
    for b in messages(&again, "bucket") {
        assert_eq!(b["status"], "cached", "{b}");
        assert!(
            b["reductions"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["cached"] == true),
            "{b}"
        );
    }
}

#[test]
fn several_files_are_bucketed_like_a_directory() {
    let _serial = serial();
    let dir = root().join("dirs/files");
    let a = write_bug(&dir, b"TRIB", 2, "files-beta");
    let c = write_bug(&dir, b"TRIC", 1, "files-gamma");
    let (a0, a1, c0) = (
        a[0].display().to_string(),
        a[1].display().to_string(),
        c[0].display().to_string(),
    );
    let run = run_in_copy(&[
        "--message-format",
        "json",
        "-t",
        "three_bugs",
        &a0,
        &a1,
        &c0,
    ]);
    run.assert_code(0);
    assert_eq!(messages(&run, "bucket").len(), 2, "{}", run.describe());
    assert!(reduced_path(&smallest(&a)).exists());
    assert!(reduced_path(&c[0]).exists());
}

#[test]
fn one_output_for_many_artifacts_is_a_usage_error() {
    let _serial = serial();
    let dir = root().join("dirs/usage");
    let files = write_bug(&dir, b"TRIA", 2, "usage");
    let (f0, f1) = (
        files[0].display().to_string(),
        files[1].display().to_string(),
    );
    for args in [
        vec!["-o", "out.bin", "-t", "three_bugs", "dirs/usage"],
        vec!["--output", "out.bin", "-t", "three_bugs", &f0, &f1],
        vec!["--message-format", "json", "-o", "out.bin", "dirs/usage"],
    ] {
        let run = run_in_copy(&args);
        run.assert_code(5);
        let errors = run.error_lines();
        assert_eq!(errors.len(), 1, "one line\n{}", run.describe());
        assert!(errors[0].contains("-o/--output"), "{}", run.describe());
        if args.contains(&"json") {
            assert_eq!(run.message("error")["exit_code"], 5);
        }
        assert!(!root().join("out.bin").exists());
    }
    // Nothing was run or written.
    assert!(files.iter().all(|f| !reduced_path(f).exists()));
    assert!(!dir.join(".reduce-crash").exists());
    // -j 0 is a bad command line.
    run_in_copy(&["-j", "0", "dirs/usage"]).assert_code(2);
}

#[test]
fn directories_without_a_reproducible_crash_exit_3_or_4_and_list_every_artifact() {
    let _serial = serial();
    // Nothing crashes: exit 3, each artifact listed.
    let dir = root().join("dirs/none");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("crash-1"), b"TRIA a=b").unwrap();
    std::fs::write(dir.join("crash-2"), b"not a record").unwrap();
    let run = run_in_copy(&["--message-format", "json", "-t", "three_bugs", "dirs/none"]);
    run.assert_code(3);
    let statuses: Vec<Value> = messages(&run, "artifact")
        .iter()
        .map(|a| a["status"].clone())
        .collect();
    assert_eq!(statuses, vec!["pass", "pass"], "{}", run.describe());
    assert_eq!(run.message("error")["exit_code"], 3);
    assert_eq!(run.error_lines().len(), 1, "{}", run.describe());
    assert!(
        run.error_lines()[0].contains("dirs/none"),
        "{}",
        run.describe()
    );

    // Only flaky ones: exit 4, listed as flaky in the table.
    let dir = root().join("dirs/flaky");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("crash-f"), b"xxFLKxx").unwrap();
    let run = run_in_copy(&["-t", "flaky", "dirs/flaky"]);
    run.assert_code(4);
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains("flaky") && l.contains("crash-f") && l.contains("1 of 3")),
        "{}",
        run.describe()
    );

    // An empty directory: exit 5.
    std::fs::create_dir_all(root().join("dirs/empty")).unwrap();
    let run = run_in_copy(&["-t", "three_bugs", "dirs/empty"]);
    run.assert_code(5);
    assert!(
        run.error_lines()[0].contains("no crash artifacts"),
        "{}",
        run.describe()
    );
}

#[test]
fn sigint_stops_the_directory_run_and_keeps_what_is_done() {
    let _serial = serial();
    let dir = root().join("dirs/sigint");
    std::fs::create_dir_all(&dir).unwrap();
    let hang = noisy_with_len("dirs-sigint", b"WAIT\x03", 4000);
    let artifact = dir.join(format!("timeout-{}", sha1(&hang)));
    std::fs::write(&artifact, &hang).unwrap();
    let args = [
        "--message-format",
        "json",
        "--timeout",
        "0.3",
        "-t",
        "infinite_loop",
        "dirs/sigint",
    ];
    // Builds the driver before the clock starts.
    run_in_copy(&[
        "--classify",
        "-t",
        "infinite_loop",
        "--timeout",
        "0.3",
        artifact.to_str().unwrap(),
    ])
    .assert_code(0);

    let driver_dir = driver_dir();
    let mut all = vec!["--target-dir", driver_dir.to_str().unwrap()];
    all.extend_from_slice(&args);
    let started = std::time::Instant::now();
    let mut child = command(&all, root()).spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    // A `reduce-started` line says the bucket's reduction is under way.
    let mut lines = Vec::new();
    loop {
        let line = rx
            .recv_timeout(RUN_LIMIT)
            .expect("no `reduce-started` line before the time limit");
        let is_started = line.contains("\"reduce-started\"");
        lines.push(line);
        if is_started {
            break;
        }
    }
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0, "kill(SIGINT)");
    let sent = std::time::Instant::now();
    let strings: Vec<String> = all.iter().map(|s| s.to_string()).collect();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(30),
            "did not stop after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let stop_latency = sent.elapsed();
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let run = Run {
        args: strings,
        code: status.code(),
        stdout: lines.join("\n"),
        stderr,
        elapsed: started.elapsed(),
    };
    run.assert_no_panic();
    run.assert_code(130);
    assert!(stop_latency < Duration::from_secs(10), "{stop_latency:?}");
    let bucket = run.message("bucket");
    assert_eq!(bucket["status"], "interrupted", "{bucket}");
    let summary = run.message("summary");
    assert_eq!(summary["interrupted"], true, "{summary}");
    assert_eq!(summary["exit_code"], 130, "{summary}");

    // The best result so far is on disk and is no larger; the original is
    // untouched; the record knows the classification but no finished
    // reduction, so the next run reduces again.
    let output = reduced_path(&artifact);
    let reduced = std::fs::read(&output).unwrap_or_else(|e| panic!("{e}\n{}", run.describe()));
    assert!(reduced.len() <= hang.len());
    assert_eq!(std::fs::read(&artifact).unwrap(), hang);
    assert!(stray_temporaries(&dir).is_empty());
    let record: Value = serde_json::from_slice(
        &std::fs::read(
            dir.join(".reduce-crash")
                .join(format!("{}.json", sha1(&hang))),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(record["classification"]["status"], "crash", "{record}");
    assert_eq!(record["classification"]["signature"]["kind"], "timeout");
    assert_eq!(record["reduced"], serde_json::json!([]), "{record}");
}

#[test]
fn a_bucket_that_fails_is_listed_and_sets_the_exit_code() {
    let _serial = serial();
    let dir = root().join("dirs/failing");
    let alpha = write_bug(&dir, b"TRIA", 2, "failing-alpha");
    let gamma = write_bug(&dir, b"TRIC", 1, "failing-gamma");
    // A directory where bucket A's output must go: it cannot be written.
    let blocked = reduced_path(&smallest(&alpha));
    std::fs::create_dir_all(&blocked).unwrap();
    let run = run_in_copy(&[
        "--message-format",
        "json",
        "-t",
        "three_bugs",
        "dirs/failing",
    ]);
    run.assert_code(5);
    let buckets = messages(&run, "bucket");
    assert_eq!(buckets.len(), 2, "{}", run.describe());
    let failed: Vec<&Value> = buckets.iter().filter(|b| b["status"] == "failed").collect();
    assert_eq!(failed.len(), 1, "{}", run.describe());
    // Refused where the run decides where it writes, before reducing.
    assert!(failed[0]["error"]
        .as_str()
        .unwrap()
        .contains("cannot be written: it is a directory"));
    // The other bucket is reduced all the same.
    assert_eq!(std::fs::read(reduced_path(&gamma[0])).unwrap(), b"TRIC");
    let errors = run.error_lines();
    assert_eq!(errors.len(), 1, "{}", run.describe());
    assert!(errors[0].contains("1 of 2 bugs"), "{}", run.describe());
    assert_eq!(run.message("summary")["exit_code"], 5);
}
