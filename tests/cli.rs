//! End-to-end tests of the `cargo-reduce-crash` binary against the `buggy`
//! fixture (`tests/fixtures/buggy`). See `tests/common/mod.rs` for the
//! harness: a cached copy of the fixture, seeded noisy artifacts, and
//! helpers that run the binary and read its JSON lines.

mod common;

use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

// ------------------------------------------------------------------ 1. reduce each kind of crash

/// One crash kind to reduce.
struct Case {
    target: &'static str,
    trigger: &'static [u8],
    /// Passed when reducing and classifying (e.g. `--timeout 0.3`).
    extra: &'static [&'static str],
    kind: &'static str,
    /// Panics must have a location; other kinds have none.
    has_location: bool,
    /// The content a minimal result must have.
    check_min: fn(&[u8]),
}

/// Reduces a noisy artifact of `case` and checks: exit 0, smaller output with
/// the original's signature, 1-minimality, untouched original. Returns the
/// reduced bytes and the `reduce-finished` message.
fn reduce_and_check(test: &str, case: &Case) -> (Vec<u8>, Value) {
    let fx = fixture();
    let _guard = lock_target(case.target);
    let data = noisy(test, case.trigger);
    let artifact = fx.write_artifact(case.target, test, &data);
    let before = data.clone();
    let output = reduced_path(&artifact);

    // The original crashes as expected.
    let original = classify_one(&artifact, None, case.extra);
    let original_id = identity(&original).unwrap_or_else(|| {
        panic!(
            "the noisy {} artifact does not crash: {original}",
            case.target
        )
    });
    assert_eq!(original_id.0, case.kind, "original: {original}");
    assert_eq!(
        original_id.1.is_some(),
        case.has_location,
        "original: {original}"
    );
    if let Some(loc) = &original_id.1 {
        assert!(
            loc.contains("src/lib.rs:"),
            "panic location outside buggy's lib.rs: {original}"
        );
    }

    let mut args = vec![];
    args.extend_from_slice(case.extra);
    let run = reduce(&artifact, &args);
    run.assert_code(0);
    let started = run.message("reduce-started");
    assert_eq!(started["target"], case.target, "{started}");
    assert_eq!(
        started["original_len"].as_u64(),
        Some(data.len() as u64),
        "{started}"
    );
    assert_eq!(
        sig_identity(&started["signature"]),
        original_id,
        "{started}"
    );
    let finished = run.message("reduce-finished");
    check_finished(&finished, case.target, &artifact, &output, data.len());
    assert_eq!(finished["interrupted"], false, "{finished}");
    assert_eq!(finished["match_mode"], "location", "{finished}");
    assert_eq!(finished["strategy"], "default", "{finished}");
    assert_eq!(finished["verified_fresh"], true, "{finished}");
    assert_eq!(
        sig_identity(&finished["signature"]),
        original_id,
        "{finished}"
    );

    // Smaller, and the original is untouched.
    let reduced = std::fs::read(&output)
        .unwrap_or_else(|e| panic!("no output {}: {e}\n{}", output.display(), run.describe()));
    assert!(
        reduced.len() < data.len(),
        "not smaller: {} -> {} bytes",
        data.len(),
        reduced.len()
    );
    assert_unmodified(&artifact, &before);
    assert!(
        stray_temporaries(&fx.artifact_dir(case.target)).is_empty(),
        "stray temporaries left behind"
    );

    // The output crashes the same way, and no single-byte deletion of it does.
    let tmp = tempfile::tempdir().unwrap();
    let mut files = vec![output.clone()];
    files.extend(write_deletions(&reduced, tmp.path()));
    let classified = classify(&files, Some(case.target), case.extra);
    assert_eq!(
        identity(&classified[0]).as_ref(),
        Some(&original_id),
        "the reduced output {:?} does not crash like the original: {}",
        String::from_utf8_lossy(&reduced),
        classified[0]
    );
    assert!(
        classified[0]["debug"].is_null(),
        "a `&[u8]` target has no decoded value to show: {}",
        classified[0]
    );
    for (i, c) in classified[1..].iter().enumerate() {
        assert_ne!(
            identity(c).as_ref(),
            Some(&original_id),
            "not 1-minimal: deleting byte {i} of {:?} still crashes the same way: {c}",
            String::from_utf8_lossy(&reduced)
        );
    }

    (case.check_min)(&reduced);
    (reduced, finished)
}

#[test]
fn reduces_unwrap_panic() {
    reduce_and_check(
        "reduces_unwrap_panic",
        &Case {
            target: "unwrap",
            trigger: b"KEY=;",
            extra: &[],
            kind: "panic",
            has_location: true,
            check_min: |r| assert_eq!(r, b"KEY=;"),
        },
    );
}

/// The shim must accept `fuzz_mutator!`, `fuzz_crossover!`, `fuzzer_mutate`
/// and `libfuzzer_sys::arbitrary` paths: a target using them all still builds
/// and reduces.
#[test]
fn reduces_target_with_custom_mutator_and_crossover() {
    reduce_and_check(
        "reduces_target_with_custom_mutator_and_crossover",
        &Case {
            target: "mutator",
            trigger: b"KEY=;",
            extra: &[],
            kind: "panic",
            has_location: true,
            check_min: |r| assert_eq!(r, b"KEY=;"),
        },
    );
}

/// A panic the target catches itself is still a crash (libFuzzer's hook
/// aborts before unwinding), with the panic's own signature.
#[test]
fn reduces_panic_caught_by_the_target() {
    reduce_and_check(
        "reduces_panic_caught_by_the_target",
        &Case {
            target: "caught",
            trigger: b"KEY=;",
            extra: &[],
            kind: "panic",
            has_location: true,
            check_min: |r| assert_eq!(r, b"KEY=;"),
        },
    );
}

#[test]
fn reduces_index_out_of_bounds() {
    reduce_and_check(
        "reduces_index_out_of_bounds",
        &Case {
            target: "index",
            trigger: b"REG7",
            extra: &[],
            kind: "panic",
            has_location: true,
            check_min: |r| {
                assert_eq!(r.len(), 4, "{:?}", String::from_utf8_lossy(r));
                assert_eq!(&r[..3], b"REG");
                assert!(
                    (b'4'..=b'9').contains(&r[3]),
                    "{:?}",
                    String::from_utf8_lossy(r)
                );
            },
        },
    );
}

#[test]
fn reduces_arithmetic_overflow() {
    reduce_and_check(
        "reduces_arithmetic_overflow",
        &Case {
            target: "overflow",
            trigger: b"SUM=\xf0\x20",
            extra: &[],
            kind: "panic",
            has_location: true,
            check_min: |r| {
                assert_eq!(r.len(), 6, "{r:?}");
                assert_eq!(&r[..4], b"SUM=");
                assert!(u32::from(r[4]) + u32::from(r[5]) > 255, "{r:?}");
            },
        },
    );
}

#[test]
fn reduces_abort() {
    reduce_and_check(
        "reduces_abort",
        &Case {
            target: "abort",
            trigger: b"ABRT",
            extra: &[],
            kind: "abort",
            has_location: false,
            check_min: |r| assert_eq!(r, b"ABRT"),
        },
    );
}

#[test]
fn reduces_stack_overflow() {
    reduce_and_check(
        "reduces_stack_overflow",
        &Case {
            target: "stack_overflow",
            trigger: b"[@@@",
            extra: &[],
            kind: "stack-overflow",
            has_location: false,
            check_min: |r| assert_eq!(r, b"[@@@"),
        },
    );
}

#[test]
fn reduces_alloc_bomb() {
    reduce_and_check(
        "reduces_alloc_bomb",
        &Case {
            target: "alloc_bomb",
            // BLOB + u16 LE MiB: 0x2000 MiB = 8 GiB, far over the 2048 MiB limit.
            trigger: b"BLOB\x00\x20",
            extra: &[],
            kind: "out-of-memory",
            has_location: false,
            check_min: |r| {
                assert_eq!(r.len(), 6, "{r:?}");
                assert_eq!(&r[..4], b"BLOB");
                assert!(u16::from_le_bytes([r[4], r[5]]) >= 2048, "{r:?}");
            },
        },
    );
}

#[test]
fn reduces_infinite_loop() {
    reduce_and_check(
        "reduces_infinite_loop",
        &Case {
            target: "infinite_loop",
            trigger: b"WAIT\x03",
            extra: &["--timeout", "0.3"],
            kind: "timeout",
            has_location: false,
            check_min: |r| {
                assert_eq!(r.len(), 5, "{r:?}");
                assert_eq!(&r[..4], b"WAIT");
                assert_eq!(r[4] % 2, 1, "{r:?}");
            },
        },
    );
}

// ------------------------------------------------------------------ 2. no slipping to another bug

#[test]
fn two_bugs_keeps_the_original_bug() {
    let test = "two_bugs_keeps_the_original_bug";
    let fx = fixture();
    let _guard = lock_target("two_bugs");
    let data = noisy(test, b"BA!!B");
    assert!(
        !contains(&data, b"B!!B"),
        "the artifact must hold only bug A's trigger"
    );
    let artifact = fx.write_artifact("two_bugs", test, &data);
    let output = reduced_path(&artifact);

    // The slip candidate: the original with the `A` of A's trigger deleted.
    let at = data.windows(5).position(|w| w == b"BA!!B").unwrap();
    let mut slip = data.clone();
    slip.remove(at + 1);
    let tmp = tempfile::tempdir().unwrap();
    let slip_file = tmp.path().join("slip");
    std::fs::write(&slip_file, &slip).unwrap();

    let before = classify(
        &[artifact.clone(), slip_file.clone()],
        Some("two_bugs"),
        &[],
    );
    let a =
        identity(&before[0]).unwrap_or_else(|| panic!("A's trigger does not crash: {}", before[0]));
    let b = identity(&before[1])
        .unwrap_or_else(|| panic!("the slip candidate does not crash: {}", before[1]));
    assert_eq!(a.0, "panic", "{}", before[0]);
    assert_eq!(b.0, "panic", "{}", before[1]);
    assert!(a.1.is_some() && b.1.is_some());
    assert_ne!(a.1, b.1, "bugs A and B must panic at different locations");

    let run = reduce(&artifact, &[]);
    run.assert_code(0);
    let finished = run.message("reduce-finished");
    check_finished(&finished, "two_bugs", &artifact, &output, data.len());
    assert_eq!(sig_identity(&finished["signature"]), a, "{finished}");
    let reduced = std::fs::read(&output).unwrap();
    assert_eq!(reduced, b"BA!!B", "expected A's trigger alone");
    assert_unmodified(&artifact, &data);

    let after = classify_one(&output, None, &[]);
    assert_eq!(
        identity(&after).as_ref(),
        Some(&a),
        "the reduced output slipped: {after}"
    );
    assert_ne!(
        identity(&after).as_ref(),
        Some(&b),
        "the reduced output slipped to bug B: {after}"
    );

    // The slip to B was seen and refused (if the reducer probed a candidate
    // that crashes at B; the classification above covers the case it did not).
    let others = finished["other_signatures"].as_array().unwrap();
    if !others.is_empty() {
        assert!(
            others.iter().any(|o| sig_identity(&o["signature"]) == b),
            "other_signatures does not mention bug B: {finished}"
        );
        assert!(
            others.iter().all(|o| sig_identity(&o["signature"]) != a),
            "other_signatures lists the kept signature: {finished}"
        );
    }

    // `--match any` may end at either bug; it must still crash.
    let any_out = tmp.path().join("any.out");
    let run = reduce(
        &artifact,
        &["--match", "any", "-o", any_out.to_str().unwrap()],
    );
    run.assert_code(0);
    let finished = run.message("reduce-finished");
    assert_eq!(finished["match_mode"], "any", "{finished}");
    let got = classify_one(&any_out, Some("two_bugs"), &[]);
    let id = identity(&got).unwrap_or_else(|| panic!("--match any output does not crash: {got}"));
    assert!(
        id == a || id == b,
        "--match any ended at neither bug: {got}"
    );
}

// ------------------------------------------------------------------ 3. interruption

#[test]
fn sigint_keeps_the_best_result_so_far() {
    let test = "sigint_keeps_the_best_result_so_far";
    let fx = fixture();
    let _guard = lock_target("infinite_loop");
    let data = noisy_with_len(test, b"WAIT\x03", 4000);
    let artifact = fx.write_artifact("infinite_loop", test, &data);
    let output = reduced_path(&artifact);
    let timeout = ["--timeout", "0.3"];

    // Also makes sure the driver is built before the clock starts.
    let original = classify_one(&artifact, None, &timeout);
    let original_id = identity(&original).unwrap_or_else(|| panic!("does not hang: {original}"));
    assert_eq!(original_id.0, "timeout", "{original}");

    let mut args: Vec<String> = vec!["--message-format".into(), "json".into()];
    args.extend(timeout.iter().map(|s| s.to_string()));
    args.push(artifact.display().to_string());
    let args = with_target_dir(&args);
    let started = Instant::now();
    let mut child = command(&args, &fx.root).spawn().unwrap();
    let pid = child.id() as libc::pid_t;

    // Forward stdout lines so we can wait for `reduce-started`.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let mut lines = Vec::new();
    let deadline = Instant::now() + RUN_LIMIT;
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => {
                let is_started = line.contains("\"reduce-started\"");
                lines.push(line);
                if is_started {
                    break;
                }
            }
            Err(_) => {
                let _ = child.kill();
                let run = finish(child, args.clone(), started, Duration::from_secs(10));
                panic!(
                    "never printed reduce-started; stdout so far: {lines:?}\n{}",
                    run.describe()
                );
            }
        }
    }
    // `reduce-started`: the reduction is under way; whatever it has found
    // when the signal lands (at worst the original) is what must be kept.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0, "kill(SIGINT)");
    let sent = Instant::now();

    // The rest of stdout arrives through the channel.
    let run = finish_without_stdout(child, args.clone(), started);
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    let run = common::Run {
        stdout: lines.join("\n"),
        ..run
    };
    let stop_latency = sent.elapsed();

    run.assert_no_panic();
    run.assert_code(130);
    assert!(
        stop_latency < Duration::from_secs(10),
        "took {stop_latency:?} to stop after SIGINT\n{}",
        run.describe()
    );
    let finished = run.message("reduce-finished");
    check_finished(&finished, "infinite_loop", &artifact, &output, data.len());
    assert_eq!(finished["interrupted"], true, "{finished}");
    // Why Ctrl-C takes a moment: the result's check runs a hang to the limit.
    assert!(
        run.stdout.lines().any(|l| l.contains("\"note\"")
            && l.contains(
                "stopping: checking the best result in a fresh process (each hang runs 0.3s)"
            )),
        "no note on stopping\n{}",
        run.describe()
    );

    let reduced = std::fs::read(&output)
        .unwrap_or_else(|e| panic!("no output after SIGINT: {e}\n{}", run.describe()));
    assert!(reduced.len() <= data.len());
    assert_unmodified(&artifact, &data);
    assert!(
        stray_temporaries(&fx.artifact_dir("infinite_loop")).is_empty(),
        "stray temporaries left behind"
    );
    assert_reproduces(&output, &original_id, &timeout);
}

/// Spawns the binary with `args` (cwd: the fixture copy) and forwards its
/// stdout lines through a channel, to wait for a given message.
fn spawn_with_lines(
    args: &[String],
) -> (
    std::process::Child,
    mpsc::Receiver<String>,
    std::thread::JoinHandle<()>,
) {
    let mut child = command(args, &fixture().root).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    (child, rx, reader)
}

/// Reads lines into `lines` until one contains `needle`; kills the child
/// and fails after `limit`.
fn wait_for_line(
    child: &mut std::process::Child,
    rx: &mpsc::Receiver<String>,
    lines: &mut Vec<String>,
    needle: &str,
    limit: Duration,
) {
    let deadline = Instant::now() + limit;
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => {
                let found = line.contains(needle);
                lines.push(line);
                if found {
                    return;
                }
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("never printed {needle}; stdout so far: {lines:?}");
            }
        }
    }
}

/// (pid, parent pid, process group, state) of every process, from /proc.
fn processes() -> Vec<(i32, i32, i32, char)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `pid (comm) state ppid pgrp …`; comm may hold spaces and parens.
            let rest = &stat[stat.rfind(')')? + 2..];
            let mut fields = rest.split(' ');
            let state = fields.next()?.chars().next()?;
            let ppid = fields.next()?.parse().ok()?;
            let pgrp = fields.next()?.parse().ok()?;
            Some((pid, ppid, pgrp, state))
        })
        .collect()
}

/// A second Ctrl-C while the first one's check of the best result runs (a
/// hang, running to its 3 s limit) stops at once: exit 130 within a moment,
/// no result written (it was not verified), no temporary file, and no
/// driver process left running (drivers are in their own process groups:
/// the terminal's Ctrl-C does not reach them).
#[test]
fn a_second_sigint_stops_at_once_without_writing() {
    let test = "a_second_sigint_stops_at_once_without_writing";
    let fx = fixture();
    let _guard = lock_target("infinite_loop");
    let data = noisy_with_len(test, b"WAIT\x03", 1000);
    let artifact = fx.write_artifact("infinite_loop", test, &data);
    let output = reduced_path(&artifact);
    // Builds the driver before the clock starts.
    let original = classify_one(&artifact, None, &["--timeout", "0.3"]);
    assert_eq!(
        identity(&original).map(|i| i.0).as_deref(),
        Some("timeout"),
        "{original}"
    );

    let mut args: Vec<String> = vec!["--message-format".into(), "json".into()];
    args.extend(["--timeout".into(), "3".into()]);
    args.push(artifact.display().to_string());
    let args = with_target_dir(&args);
    let started = Instant::now();
    let (mut child, rx, reader) = spawn_with_lines(&args);
    let pid = child.id() as i32;

    // The process groups of the run's children (its drivers), as they come.
    let groups = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let watching = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let watcher = {
        let (groups, watching) = (groups.clone(), watching.clone());
        std::thread::spawn(move || {
            while watching.load(std::sync::atomic::Ordering::SeqCst) {
                // Drivers lead their own groups (cargo, a child too, does not).
                for (child, ppid, pgrp, _) in processes() {
                    if ppid == pid && pgrp == child {
                        groups.lock().unwrap().insert(pgrp);
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };

    let mut lines = Vec::new();
    wait_for_line(&mut child, &rx, &mut lines, "\"reduce-started\"", RUN_LIMIT);
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0, "kill(SIGINT)");
    wait_for_line(
        &mut child,
        &rx,
        &mut lines,
        "stopping: checking the best result in a fresh process",
        Duration::from_secs(60),
    );
    // Well inside the check's 3 s hang.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0, "kill(SIGINT)");
    let sent = Instant::now();
    let run = finish_without_stdout(child, args.clone(), started);
    let stop_latency = sent.elapsed();
    watching.store(false, std::sync::atomic::Ordering::SeqCst);
    watcher.join().unwrap();
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    let run = common::Run {
        stdout: lines.join("\n"),
        ..run
    };

    run.assert_no_panic();
    run.assert_code(130);
    assert!(
        stop_latency < Duration::from_millis(1500),
        "took {stop_latency:?} to stop after the second SIGINT\n{}",
        run.describe()
    );
    assert!(
        run.stderr.contains("interrupted again"),
        "no note on stderr\n{}",
        run.describe()
    );
    // Nothing unverified written, no temporary left behind.
    assert!(
        !output.exists(),
        "a result was written after the second SIGINT\n{}",
        run.describe()
    );
    assert!(
        stray_temporaries(&fx.artifact_dir("infinite_loop")).is_empty(),
        "stray temporaries left behind"
    );
    assert_unmodified(&artifact, &data);
    // No process of the drivers' groups runs on (a killed one may linger as
    // a zombie until it is reaped).
    let groups = groups.lock().unwrap().clone();
    assert!(!groups.is_empty(), "no driver was ever seen");
    let left = || -> Vec<(i32, i32, i32, char)> {
        processes()
            .into_iter()
            .filter(|p| groups.contains(&p.2) && p.3 != 'Z')
            .collect()
    };
    let exited = Instant::now();
    while !left().is_empty() || !infinite_loop_drivers().is_empty() {
        assert!(
            exited.elapsed() < Duration::from_millis(500),
            "still running after the run stopped: {:?} {:?}",
            left(),
            infinite_loop_drivers()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ctrl-C while waiting for another run that writes the same output (its
/// lock, taken here the way a run takes it) stops at once: exit 130,
/// nothing written.
#[test]
fn sigint_while_waiting_for_the_output_lock_stops_at_once() {
    let test = "sigint_while_waiting_for_the_output_lock_stops_at_once";
    let fx = fixture();
    let _guard = lock_target("unwrap");
    let data = noisy(test, b"KEY=;");
    let artifact = fx.write_artifact("unwrap", test, &data);
    let output = reduced_path(&artifact);
    let held = reduce_crash::output::OutputLock::acquire(&output, || {
        panic!("nobody else writes {}", output.display())
    })
    .unwrap();

    let mut args: Vec<String> = vec!["--message-format".into(), "json".into()];
    args.push(artifact.display().to_string());
    let args = with_target_dir(&args);
    let started = Instant::now();
    let (mut child, rx, reader) = spawn_with_lines(&args);
    let pid = child.id() as i32;
    let mut lines = Vec::new();
    wait_for_line(
        &mut child,
        &rx,
        &mut lines,
        "waiting for another cargo reduce-crash run",
        RUN_LIMIT,
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0, "kill(SIGINT)");
    let sent = Instant::now();
    let stopped = loop {
        if child.try_wait().unwrap().is_some() {
            break true;
        }
        if sent.elapsed() > Duration::from_secs(5) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stop_latency = sent.elapsed();
    // Let a run that did not stop go on, so that it ends.
    drop(held);
    let run = finish_without_stdout(child, args.clone(), started);
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    let run = common::Run {
        stdout: lines.join("\n"),
        ..run
    };
    assert!(
        stopped && stop_latency < Duration::from_secs(1),
        "still waiting for the lock {stop_latency:?} after SIGINT\n{}",
        run.describe()
    );
    run.assert_no_panic();
    run.assert_code(130);
    assert!(!output.exists(), "{}", run.describe());
    assert!(
        stray_temporaries(&fx.artifact_dir("unwrap")).is_empty(),
        "stray temporaries left behind"
    );
}

/// `finish` for a child whose stdout is read elsewhere.
fn finish_without_stdout(
    mut child: std::process::Child,
    args: Vec<String>,
    started: Instant,
) -> common::Run {
    let mut stderr = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let run = common::Run {
        args,
        code: status.and_then(|s| s.code()),
        stdout: String::new(),
        stderr: err.join().unwrap(),
        elapsed: started.elapsed(),
    };
    assert!(
        status.is_some(),
        "did not stop after SIGINT; killed\n{}",
        run.describe()
    );
    run
}

// ------------------------------------------------------------------ 4. errors

/// Runs `args` (shared --target-dir added) in human and in JSON mode; both
/// must exit with `code`, print exactly one `error: ` line on stderr that
/// contains every string in `mentions`, and never a panic. JSON mode must
/// also print a `{"reason":"error"}` object on stdout.
fn assert_error(args: &[String], cwd: &Path, code: i32, mentions: &[&str]) -> String {
    let human = run(args, cwd);
    check_error_run(&human, code, mentions);
    assert!(
        human.stdout.trim().is_empty(),
        "human mode printed to stdout\n{}",
        human.describe()
    );

    let mut json_args = vec!["--message-format".to_owned(), "json".to_owned()];
    json_args.extend_from_slice(args);
    let json = run(&json_args, cwd);
    check_error_run(&json, code, mentions);
    let err = json.message("error");
    assert_eq!(err["exit_code"].as_i64(), Some(i64::from(code)), "{err}");
    let message = err["message"].as_str().unwrap_or_else(|| panic!("{err}"));
    assert!(!message.contains('\n'), "multi-line error message: {err}");
    assert_eq!(
        json.error_lines(),
        vec![format!("error: {message}").as_str()],
        "stderr's error line differs from the JSON message\n{}",
        json.describe()
    );
    human.error_lines()[0].to_owned()
}

fn check_error_run(run: &common::Run, code: i32, mentions: &[&str]) {
    run.assert_code(code).assert_no_panic();
    let errors = run.error_lines();
    assert_eq!(
        errors.len(),
        1,
        "expected exactly one `error: ` line\n{}",
        run.describe()
    );
    for m in mentions {
        assert!(
            errors[0].contains(m),
            "the error line does not mention `{m}`\n{}",
            run.describe()
        );
    }
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// A panic of the tool itself (here the test hook
/// `CARGO_REDUCE_CRASH_TEST_PANIC`, on the main thread and on a helper
/// thread) is exit 1, the README's "internal error", with one line naming
/// where and asking for a report; no backtrace, and in JSON mode an `error`
/// object too.
#[test]
fn an_internal_panic_is_exit_1_with_one_line() {
    let fx = fixture();
    let p = fx
        .artifact_dir("unwrap")
        .join("crash-an_internal_panic")
        .display()
        .to_string();
    for (place, json) in [("main", false), ("thread", false), ("main", true)] {
        let mut args = vec![];
        if json {
            args.extend(["--message-format".to_owned(), "json".to_owned()]);
        }
        args.push(p.clone());
        let started = Instant::now();
        let child = command(&args, &fx.root)
            .env("CARGO_REDUCE_CRASH_TEST_PANIC", place)
            .spawn()
            .unwrap();
        let run = finish(child, args.clone(), started, Duration::from_secs(60));
        check_error_run(&run, 1, &["internal error at src/", "please report it"]);
        assert_eq!(
            run.stderr.lines().count(),
            1,
            "one line on stderr ({place})\n{}",
            run.describe()
        );
        let line = run.error_lines()[0];
        let at = line["error: internal error at ".len()..]
            .split(": ")
            .next()
            .unwrap();
        assert!(
            at.starts_with("src/") && at.split(':').count() == 3,
            "no file:line:column in {line:?}"
        );
        assert!(line.contains("test panic"), "{line}");
        if json {
            let err = run.message("error");
            assert_eq!(err["exit_code"], 1, "{err}");
            assert_eq!(format!("error: {}", err["message"].as_str().unwrap()), line);
        } else {
            assert!(run.stdout.trim().is_empty(), "{}", run.describe());
        }
    }
}

/// `-s` takes cargo-fuzz's sanitizers only: a typo is a bad command line
/// (exit 2, the valid values listed), refused before any build.
#[test]
fn a_misspelt_sanitizer_is_a_bad_command_line() {
    let fx = fixture();
    let artifact = fx.write_artifact("unwrap", "misspelt_sanitizer", b"KEY=;");
    let args = with_target_dir(&["-s", "adress", &artifact.display().to_string()]);
    let started = Instant::now();
    let child = command(&args, &fx.root).spawn().unwrap();
    let run = finish(child, args.clone(), started, RUN_LIMIT);
    run.assert_code(2).assert_no_panic();
    assert_eq!(run.error_lines().len(), 1, "{}", run.describe());
    assert!(
        run.error_lines()[0].contains("adress"),
        "{}",
        run.describe()
    );
    assert!(
        run.stderr.contains("address, leak, memory, thread, none"),
        "the valid values are not listed\n{}",
        run.describe()
    );
    assert!(
        !run.stderr.contains("Building") && run.elapsed < Duration::from_secs(5),
        "not refused before the build\n{}",
        run.describe()
    );
}

#[test]
fn error_missing_artifact() {
    let fx = fixture();
    let missing = fx
        .artifact_dir("unwrap")
        .join("crash-error_missing_artifact-does-not-exist");
    let p = missing.display().to_string();
    assert_error(
        &strs(&[&p]),
        &fx.root,
        5,
        &["crash-error_missing_artifact-does-not-exist"],
    );
}

#[test]
fn error_no_cargo_fuzz_project() {
    let tmp = tempfile::tempdir().unwrap();
    let artifact = tmp.path().join("crash-error_no_cargo_fuzz_project");
    std::fs::write(&artifact, noisy("error_no_cargo_fuzz_project", b"KEY=;")).unwrap();
    assert_error(&strs(&[artifact.to_str().unwrap()]), tmp.path(), 6, &[]);
}

#[test]
fn error_unknown_fuzz_target() {
    let fx = fixture();
    let _guard = lock_target("unwrap");
    let artifact = fx.write_artifact(
        "unwrap",
        "error_unknown_fuzz_target",
        &noisy("error_unknown_fuzz_target", b"KEY=;"),
    );
    let p = artifact.display().to_string();
    let line = assert_error(
        &strs(&["--fuzz-target", "no_such_target", &p]),
        &fx.root,
        7,
        &["no_such_target"],
    );
    for t in TARGETS {
        assert!(
            line.contains(t),
            "the error does not list known target `{t}`: {line}"
        );
    }
    // -t is the short form.
    let short = run(&strs(&["-t", "no_such_target", &p]), &fx.root);
    check_error_run(&short, 7, &["no_such_target"]);
}

/// Writes a noisy `trigger` artifact for `target`, expects exit `code` with
/// one error line, no output written and the original unchanged.
fn assert_refused(target: &str, name: &str, trigger: &[u8], code: i32) {
    let fx = fixture();
    let _guard = lock_target(target);
    let data = noisy(name, trigger);
    let artifact = fx.write_artifact(target, name, &data);
    let p = artifact.display().to_string();
    assert_error(&strs(&[&p]), &fx.root, code, &[]);
    assert!(
        !reduced_path(&artifact).exists(),
        "an output was written for a refused artifact ({name})"
    );
    assert_eq!(std::fs::read(&artifact).unwrap(), data);
}

#[test]
fn error_artifact_does_not_crash() {
    assert_refused(
        "ok_target",
        "error_artifact_does_not_crash",
        b"KEY=;ABRT[@@@",
        3,
    );
}

#[test]
fn error_flaky_artifact() {
    assert_refused("flaky", "error_flaky_artifact", b"FLK", 4);
}

#[test]
fn error_output_is_the_artifact() {
    let fx = fixture();
    let _guard = lock_target("abort");
    let data = noisy("error_output_is_the_artifact", b"ABRT");
    let artifact = fx.write_artifact("abort", "error_output_is_the_artifact", &data);
    let p = artifact.display().to_string();
    assert_error(&strs(&["-o", &p, &p]), &fx.root, 5, &[]);
    assert_unmodified(&artifact, &data);
    assert!(stray_temporaries(&fx.artifact_dir("abort")).is_empty());
}

#[test]
fn error_driver_build_failure() {
    // A separate, small copy of the fixture with one target that does not
    // compile, built in its own (stable, so cached) target directory.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("buggy");
    sync_tree(&fixture_source(), &root);
    let broken = root.join("fuzz/fuzz_targets/unwrap.rs");
    let mut src = std::fs::read_to_string(&broken).unwrap();
    src.push_str("\nfn does_not_compile() -> u32 { \"not a number\" }\n");
    std::fs::write(&broken, src).unwrap();
    let artifact_dir = root.join("fuzz/artifacts/unwrap");
    std::fs::create_dir_all(&artifact_dir).unwrap();
    let artifact = artifact_dir.join("crash-error_driver_build_failure");
    std::fs::write(&artifact, noisy("error_driver_build_failure", b"KEY=;")).unwrap();
    let target_dir = tmp_root().join("broken-driver");

    let run = run_raw(
        &strs(&[
            "--target-dir",
            target_dir.to_str().unwrap(),
            artifact.to_str().unwrap(),
        ]),
        &root,
    );
    run.assert_code(101).assert_no_panic();
    // cargo's diagnostics first, then our one-line summary last.
    let last = run
        .stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    assert!(
        last.starts_with("error: "),
        "the last stderr line is not our error\n{}",
        run.describe()
    );
    assert!(
        last.contains("unwrap"),
        "the error does not name the target\n{}",
        run.describe()
    );
    assert!(
        run.stderr.contains("mismatched types") || run.stderr.contains("E0308"),
        "cargo's diagnostics are not shown\n{}",
        run.describe()
    );
    assert!(!reduced_path(&artifact).exists());

    // JSON: the error object on stdout, exit code 101.
    let run = run_raw(
        &strs(&[
            "--message-format",
            "json",
            "--target-dir",
            target_dir.to_str().unwrap(),
            artifact.to_str().unwrap(),
        ]),
        &root,
    );
    run.assert_code(101).assert_no_panic();
    let err = run.message("error");
    assert_eq!(err["exit_code"], 101, "{err}");
}

// ------------------------------------------------------------------ 5. JSON

#[test]
fn json_reduce_finished_has_every_field() {
    let test = "json_reduce_finished_has_every_field";
    let fx = fixture();
    let _guard = lock_target("overflow");
    let data = noisy(test, b"SUM=\x80\x90");
    let artifact = fx.write_artifact("overflow", test, &data);
    let output = reduced_path(&artifact);
    let run = reduce(&artifact, &[]);
    run.assert_code(0);
    assert!(run.error_lines().is_empty(), "{}", run.describe());

    let lines = run.json();
    assert!(lines.len() >= 2, "{}", run.describe());
    assert_eq!(lines[0]["reason"], "reduce-started", "{}", run.describe());
    assert_eq!(
        lines.last().unwrap()["reason"],
        "reduce-finished",
        "{}",
        run.describe()
    );
    for l in &lines {
        assert_eq!(l["format_version"], 1, "{l}");
    }
    let started = &lines[0];
    assert_eq!(started["target"], "overflow");
    assert_eq!(started["original_len"].as_u64(), Some(data.len() as u64));
    check_signature(&started["signature"]);

    let v = run.message("reduce-finished");
    check_finished(&v, "overflow", &artifact, &output, data.len());
    assert_eq!(v["input"].as_str(), Some(artifact.to_str().unwrap()), "{v}");
    assert_eq!(v["signature"], started["signature"], "{v}");
    assert_eq!(v["signature"]["kind"], "panic", "{v}");
    assert!(
        v["signature"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("overflow")),
        "{v}"
    );
    assert_eq!(v["match_mode"], "location", "{v}");
    assert_eq!(v["strategy"], "default", "{v}");
    assert_eq!(v["reduced_len"], 6, "{v}");
    assert_eq!(v["interrupted"], false, "{v}");
    assert_eq!(v["typed"], false, "{v}");
    assert!(v["debug"].is_null(), "{v}");
    assert_eq!(v["verified_fresh"], true, "{v}");
    let reduced = std::fs::read(&output).unwrap();
    let expected_preview = format!(
        "b\"{}\"",
        reduced
            .iter()
            .flat_map(|&b| std::ascii::escape_default(b))
            .map(char::from)
            .collect::<String>()
    );
    assert_eq!(v["preview"], expected_preview.as_str(), "{v}");
    let reproduce = v["reproduce"].as_str().unwrap();
    assert!(reproduce.starts_with("cargo fuzz run "), "{v}");
    assert!(reproduce.split_whitespace().any(|w| w == "overflow"), "{v}");
    assert!(
        reproduce.ends_with(
            "fuzz/artifacts/overflow/crash-json_reduce_finished_has_every_field.reduced"
        ),
        "{v}"
    );
    let tests_executed = v["tests_executed"].as_u64().unwrap();
    let per_sec = v["tests_per_sec"].as_f64().unwrap();
    let elapsed = v["elapsed_secs"].as_f64().unwrap();
    assert!(elapsed > 0.0, "{v}");
    assert!(
        (per_sec * elapsed - tests_executed as f64).abs() <= 0.01 * tests_executed as f64 + 1.0,
        "tests_per_sec is not tests_executed / elapsed_secs: {v}"
    );

    // The human report of the same run: status lines on stderr, nothing on stdout.
    let human = common::run(&strs(&[artifact.to_str().unwrap()]), &fx.root);
    human.assert_code(0).assert_no_panic();
    assert!(human.stdout.trim().is_empty(), "{}", human.describe());
    assert!(
        human.stderr.contains("cargo fuzz run"),
        "{}",
        human.describe()
    );
}

// ------------------------------------------------------------------ 6. typed and reject targets

/// `Vec<Op>` bytes as arbitrary 1.5 (the version the fixture resolves)
/// decodes them with `arbitrary_take_rest`: per element a "keep going" bool
/// (an odd byte), then the variant as a u32 LE whose top quarter selects
/// Push, Pop, Dup or Add, then Push's u8.
fn typed_op(variant: u8, rng: &mut Rng) -> Vec<u8> {
    let mut out = vec![
        rng.byte() | 1,
        rng.byte(),
        rng.byte(),
        rng.byte(),
        variant * 0x40 + rng.byte() % 0x40,
    ];
    if variant == 0 {
        out.push(rng.byte());
    }
    out
}

/// `count` random ops other than Add.
fn typed_ops(rng: &mut Rng, count: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..count {
        let variant = rng.below(3) as u8; // Push, Pop or Dup: never Add.
        out.extend(typed_op(variant, rng));
    }
    out
}

#[test]
fn reduces_typed_target() {
    let test = "reduces_typed_target";
    let fx = fixture();
    let _guard = lock_target("typed");
    let mut rng = Rng::from_name(test);
    let mut data = typed_ops(&mut rng, 200);
    // Empty the stack (max 16 deep), then Push(5), Add: pops an empty stack.
    for _ in 0..20 {
        data.extend(typed_op(1, &mut rng));
    }
    data.extend(typed_op(0, &mut rng));
    data.extend(typed_op(3, &mut rng));
    data.extend(typed_ops(&mut rng, 100));
    let artifact = fx.write_artifact("typed", test, &data);
    let output = reduced_path(&artifact);

    let original = classify_one(&artifact, None, &[]);
    let id = identity(&original)
        .unwrap_or_else(|| panic!("the typed artifact does not crash: {original}"));
    assert_eq!(id.0, "panic", "{original}");
    assert!(
        id.1.as_deref().is_some_and(|l| l.contains("src/lib.rs:")),
        "{original}"
    );

    let run = reduce(&artifact, &[]);
    run.assert_code(0);
    let v = run.message("reduce-finished");
    check_finished(&v, "typed", &artifact, &output, data.len());
    assert_eq!(v["typed"], true, "{v}");
    let debug = v["debug"]
        .as_str()
        .unwrap_or_else(|| panic!("no debug form: {v}"));
    assert!(!debug.trim().is_empty(), "{v}");
    assert!(
        debug.contains("Push") && debug.contains("Add"),
        "the debug form misses Push/Add: {v}"
    );
    assert_eq!(sig_identity(&v["signature"]), id, "{v}");
    let reduced = std::fs::read(&output).unwrap();
    assert!(reduced.len() < data.len());
    assert_unmodified(&artifact, &data);
    assert_reproduces(&output, &id, &[]);
}

/// The bytes `Vec<String>::arbitrary_take_rest` decodes to `lines`: a
/// continuation byte and the characters of each line from the front, each
/// line's byte length from the back (two big-endian bytes while more than
/// 256 bytes are left at that point, else one), the first line's last.
fn encode_lines(lines: &[Vec<u8>]) -> Vec<u8> {
    let front: usize = lines.iter().map(|l| 1 + l.len()).sum();
    // The widths depend on the total, which depends on the widths.
    let mut widths = vec![2usize; lines.len()];
    loop {
        let total = front + widths.iter().sum::<usize>();
        let (mut used_front, mut used_back) = (0, 0);
        let next: Vec<usize> = lines
            .iter()
            .zip(&widths)
            .map(|(line, &w)| {
                let left = total - used_front - 1 - used_back;
                used_front += 1 + line.len();
                used_back += w;
                if left <= 256 {
                    1
                } else {
                    2
                }
            })
            .collect();
        if next == widths {
            break;
        }
        widths = next;
    }
    let mut out = Vec::new();
    for line in lines {
        out.push(1);
        out.extend(line);
    }
    for (line, &w) in lines.iter().zip(&widths).rev() {
        let len = line.len() as u16;
        out.extend(if w == 1 {
            vec![len as u8]
        } else {
            len.to_be_bytes().to_vec()
        });
    }
    out
}

#[test]
fn reduces_long_strings_of_a_typed_target() {
    // A `Vec<String>` of about 3 KB of ASCII lines, two of which set `HOME`:
    // each string reads its length from the end of the input, so deleting
    // characters misaligns everything unless that length drops too (ddmin
    // alone stops at thousands of bytes, every one of them needed).
    let test = "reduces_long_strings_of_a_typed_target";
    let fx = fixture();
    let _guard = lock_target("typed_env");
    let mut rng = Rng::from_name(test);
    let noise = b"abcdefghijklmnopqrstuvwxyz0123 ,.:";
    let lines: Vec<Vec<u8>> = (0..12)
        .map(|i| {
            let mut line: Vec<u8> = if i == 3 || i == 9 {
                b"HOME=".to_vec()
            } else {
                Vec::new()
            };
            let len = 150 + rng.below(180);
            line.extend((0..len).map(|_| noise[rng.below(noise.len())]));
            line
        })
        .collect();
    let data = encode_lines(&lines);
    assert!(data.len() > 2000, "{} bytes", data.len());
    let artifact = fx.write_artifact("typed_env", test, &data);
    let output = reduced_path(&artifact);

    let original = classify_one(&artifact, None, &[]);
    assert_eq!(
        original["signature"]["message"], "variable set twice",
        "{original}"
    );
    let id = identity(&original).unwrap();

    let run = reduce(&artifact, &[]);
    run.assert_code(0);
    let v = run.message("reduce-finished");
    check_finished(&v, "typed_env", &artifact, &output, data.len());
    assert_eq!(v["strategy"], "choices", "{v}");
    assert_eq!(sig_identity(&v["signature"]), id, "{v}");
    // Two lines setting the empty name: continue, "=", continue, "=", and
    // the two 1-byte lengths.
    let debug: String = v["debug"].as_str().unwrap().split_whitespace().collect();
    assert_eq!(debug, r#"["=","=",]"#, "{v}");
    assert_eq!(std::fs::read(&output).unwrap().len(), 6, "{v}");
    assert_unmodified(&artifact, &data);
    assert_reproduces(&output, &id, &[]);

    // Byte-level delta debugging alone: 1-minimal, and still long.
    let tmp = tempfile::tempdir().unwrap();
    let ddmin_out = tmp.path().join("ddmin");
    let ddmin_out_arg = ddmin_out.display().to_string();
    let run = reduce(&artifact, &["--strategy", "ddmin", "-o", &ddmin_out_arg]);
    run.assert_code(0);
    let ddmin_len = std::fs::read(&ddmin_out).unwrap().len();
    eprintln!("ddmin alone: {} -> {ddmin_len} bytes", data.len());
    assert!(
        ddmin_len > 1000,
        "ddmin alone reached {ddmin_len} bytes (2,282 when written)"
    );
}

#[test]
fn reduces_reject_target() {
    let test = "reduces_reject_target";
    let fx = fixture();
    let _guard = lock_target("reject");
    let mut data = b"%%".to_vec();
    data.extend(noisy(test, b"ZAP"));
    let artifact = fx.write_artifact("reject", test, &data);
    let output = reduced_path(&artifact);

    // Without the magic the target rejects the input.
    let tmp = tempfile::tempdir().unwrap();
    let no_magic = tmp.path().join("no-magic");
    std::fs::write(&no_magic, &data[2..]).unwrap();
    let before = classify(&[artifact.clone(), no_magic], Some("reject"), &[]);
    let id = identity(&before[0])
        .unwrap_or_else(|| panic!("the reject artifact does not crash: {}", before[0]));
    assert_eq!(id.0, "panic", "{}", before[0]);
    assert_eq!(before[1]["outcome"], "reject", "{}", before[1]);

    let run = reduce(&artifact, &[]);
    run.assert_code(0);
    let v = run.message("reduce-finished");
    check_finished(&v, "reject", &artifact, &output, data.len());
    assert_eq!(v["typed"], false, "{v}");
    assert_eq!(sig_identity(&v["signature"]), id, "{v}");
    let reduced = std::fs::read(&output).unwrap();
    assert_eq!(reduced, b"%%ZAP", "expected the magic and ZAP alone");
    assert_unmodified(&artifact, &data);
    assert_reproduces(&output, &id, &[]);
}

// ------------------------------------------------------------------ 7. running twice

/// The driver an earlier build left is started while cargo checks that it
/// is up to date, and kept only if the build returns the same file: once the
/// target's bug is fixed, the next run says it does not crash (exit 3), as
/// the new build does, instead of reproducing it on the old driver.
#[test]
fn a_changed_target_is_never_judged_by_its_old_driver() {
    let root = copy_fixture_as("buggy", "buggy-changed-none");
    let dir = root.join("fuzz/artifacts/index");
    std::fs::create_dir_all(&dir).unwrap();
    let artifact = dir.join("crash-changed");
    std::fs::write(&artifact, noisy("changed-none", b"REG7")).unwrap();
    let args = [artifact.to_str().unwrap()];
    run(&args, &root).assert_code(0);
    let result = reduced_path(&artifact);
    assert_eq!(std::fs::read(&result).unwrap(), b"REG4");
    std::fs::remove_file(&result).unwrap();

    fix_the_index_target(&root);
    run(&args, &root).assert_code(3).assert_no_panic();
    assert!(!result.exists(), "a result was written");
}

#[test]
fn second_run_reuses_the_driver_and_overwrites_atomically() {
    let test = "second_run_reuses_the_driver";
    let fx = fixture();
    let _guard = lock_target("unwrap");
    let data = noisy(test, b"KEY=;");
    let artifact = fx.write_artifact("unwrap", test, &data);
    let output = reduced_path(&artifact);
    let dir = fx.artifact_dir("unwrap");

    let first = reduce(&artifact, &[]);
    first.assert_code(0);
    let first_v = first.message("reduce-finished");
    let first_bytes = std::fs::read(&output).unwrap();
    assert_eq!(first_bytes, b"KEY=;");

    // A stale file at the output path is replaced, not appended to.
    std::fs::write(&output, b"stale contents that are not a crash").unwrap();

    // Human mode shows whether the driver was (re)built.
    let second = run(&strs(&[artifact.to_str().unwrap()]), &fx.root);
    second.assert_code(0).assert_no_panic();
    assert!(second.error_lines().is_empty(), "{}", second.describe());
    assert!(
        !second.stderr.contains("driver build in") && !second.stderr.contains("Compiling"),
        "the second run rebuilt the driver\n{}",
        second.describe()
    );
    assert!(second.stderr.contains("Reduced"), "{}", second.describe());
    assert_eq!(
        std::fs::read(&output).unwrap(),
        first_bytes,
        "the output was not overwritten with the result"
    );

    // And a third, in JSON, for the numbers: same result, same work.
    let third = reduce(&artifact, &[]);
    third.assert_code(0);
    let third_v = third.message("reduce-finished");
    check_finished(&third_v, "unwrap", &artifact, &output, data.len());
    assert_eq!(third_v["reduced_len"], first_v["reduced_len"]);
    // Panics are caught in the long-lived driver: no restart per crashing
    // candidate (at most the fresh-process verification and a spare).
    for v in [&first_v, &third_v] {
        let restarts = v["driver_restarts"].as_u64().unwrap();
        let executed = v["tests_executed"].as_u64().unwrap();
        assert!(
            restarts <= 2,
            "{restarts} driver restarts for {executed} panicking/passing tests: {v}"
        );
    }
    assert_eq!(std::fs::read(&output).unwrap(), first_bytes);

    assert_unmodified(&artifact, &data);
    let strays = stray_temporaries(&dir);
    assert!(
        strays.is_empty(),
        "stray temporary files in {}: {strays:?}",
        dir.display()
    );
}

// ------------------------------------------------------------------ harness self-checks

#[test]
fn noise_never_forms_a_trigger() {
    let mut rng = Rng::from_state(7);
    for _ in 0..50 {
        let n = noise(&mut rng, 4096);
        assert!(n.iter().all(|b| NOISE_ALPHABET.contains(b)));
    }
    let a = noisy("x", b"ABRT");
    let b = noisy("x", b"ABRT");
    assert_eq!(a, b, "artifacts must be deterministic");
    assert!((1024 + 4..=4096 + 4).contains(&a.len()));
    assert!(contains(&a, b"ABRT"));
}

/// Is a nightly toolchain installed (for `-s address`)?
fn nightly_available() -> bool {
    std::process::Command::new("rustup")
        .args(["run", "nightly", "rustc", "-vV"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `-s address` without a nightly toolchain says in one line that it builds
/// without the sanitizer (the memory-safety bug is then invisible: exit 3);
/// with nightly (through rustup, whatever the active toolchain) the target is
/// built as `cargo fuzz build` builds it and the sanitizer report is
/// classified and reduced like any other crash.
#[test]
fn sanitizer_degrades_on_stable_and_reduces_on_nightly() {
    let fx = fixture();
    let _guard = lock_target("heap_overflow");
    // The declared header runs past the end only near the end of the input.
    let mut data = noise(&mut Rng::from_name("sanitizer"), 600);
    data.extend_from_slice(b"HDR\x20abcd");
    let artifact = fx.write_artifact("heap_overflow", "sanitizer", &data);
    let p = artifact.display().to_string();

    let started = Instant::now();
    let child = command(&with_target_dir(&["-s", "address", &p]), &fx.root)
        .env("RUSTUP_HOME", stable_only_rustup_home())
        .env("RUSTUP_TOOLCHAIN", "stable")
        .spawn()
        .unwrap();
    let stable = finish(child, vec![p.clone()], started, Duration::from_secs(300));
    stable.assert_code(3).assert_no_panic();
    let notes: Vec<&str> = stable
        .stderr
        .lines()
        .filter(|l| l.starts_with("note: no nightly toolchain"))
        .collect();
    assert_eq!(notes.len(), 1, "{}", stable.describe());
    assert!(notes[0].contains("AddressSanitizer"), "{}", notes[0]);

    if !nightly_available() {
        eprintln!("no nightly toolchain: only the stable fallback was checked");
        return;
    }
    let started = Instant::now();
    let args = with_target_dir(&["-s", "address", "--message-format", "json", &p]);
    let child = command(&args, &fx.root).spawn().unwrap();
    let nightly = finish(child, args.clone(), started, Duration::from_secs(600));
    nightly.assert_code(0);
    let finished = nightly.message("reduce-finished");
    assert_eq!(finished["signature"]["kind"], "sanitizer", "{finished}");
    assert_eq!(
        finished["signature"]["message"], "AddressSanitizer: heap-buffer-overflow",
        "{finished}"
    );
    assert_eq!(
        std::fs::read(reduced_path(&artifact)).unwrap(),
        b"HDR\x00",
        "{finished}"
    );
    assert_eq!(std::fs::read(&artifact).unwrap(), data);
}

/// `--emit-test` writes a `#[test]` into the fuzz package that replays the
/// reduced input through the real target (real libfuzzer-sys): it compiles,
/// and it fails with the original panic while the bug is there.
#[test]
fn emitted_regression_test_replays_the_crash() {
    let test = "emitted_regression_test";
    let fx = fixture();
    let _guard = lock_target("typed");
    let mut rng = Rng::from_name(test);
    let mut data = typed_ops(&mut rng, 50);
    for _ in 0..20 {
        data.extend(typed_op(1, &mut rng));
    }
    data.extend(typed_op(0, &mut rng));
    data.extend(typed_op(3, &mut rng));
    let artifact = fx.write_artifact("typed", test, &data);
    let test_file = fx.fuzz_dir().join("tests").join("emitted_regression.rs");
    let _ = std::fs::remove_file(&test_file);

    let run = reduce(&artifact, &["--emit-test", test_file.to_str().unwrap()]);
    run.assert_code(0);
    let finished = run.message("reduce-finished");
    assert_eq!(finished["emitted_test"], test_file.display().to_string());
    let source = std::fs::read_to_string(&test_file).unwrap();
    assert!(
        source.contains("#[path = \"../fuzz_targets/typed.rs\"]"),
        "{source}"
    );
    assert!(
        source.contains("Push"),
        "the Debug form is missing:\n{source}"
    );

    let target_dir = tmp_root().join("emitted-test-target");
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "test",
            "--quiet",
            "--test",
            "emitted_regression",
            "--manifest-path",
        ])
        .arg(fx.fuzz_dir().join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "the regression test passed:\n{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("stack underflow") || stdout.contains("stack underflow"),
        "the panic message is not shown:\n{stdout}\n{stderr}"
    );
    assert!(
        !stderr.contains("error[E"),
        "the regression test does not compile:\n{stderr}"
    );
    std::fs::remove_file(&test_file).unwrap();
}

/// Value-level caching on a typed target whose bug kills the driver: values
/// known to abort are answered without running (and without a restart),
/// and the result is the minimal value.
#[test]
fn typed_abort_uses_the_value_cache_for_fatal_values() {
    let test = "typed_abort_value_cache";
    let fx = fixture();
    let _guard = lock_target("typed_abort");
    let mut rng = Rng::from_name(test);
    // Noise frames (channel != 7), the fatal frame, more noise frames.
    let mut data = Vec::new();
    let frame = |rng: &mut Rng, channel: u8| {
        let mut f = vec![1, channel];
        f.extend((0..6).map(|_| rng.byte()));
        f
    };
    for _ in 0..40 {
        let c = rng.byte() % 6;
        data.extend(frame(&mut rng, c));
    }
    let mut fatal = frame(&mut rng, 7);
    fatal[2] = 0xff; // length > 2
    data.extend(fatal);
    for _ in 0..40 {
        let c = rng.byte() % 6;
        data.extend(frame(&mut rng, c));
    }
    let artifact = fx.write_artifact("typed_abort", test, &data);
    let run = reduce(&artifact, &[]);
    run.assert_code(0);
    let v = run.message("reduce-finished");
    assert_eq!(v["signature"]["kind"], "abort", "{v}");
    assert_eq!(v["strategy"], "choices", "{v}");
    assert!(v["tests_value_cached"].as_u64().unwrap() > 0, "{v}");
    let debug: String = v["debug"].as_str().unwrap().split_whitespace().collect();
    assert_eq!(debug, "[Frame{channel:7,length:3,checksum:0,},]", "{v}");
    // Every abort costs a restart; remembered fatal values do not.
    let executed = v["tests_executed"].as_u64().unwrap();
    let restarts = v["driver_restarts"].as_u64().unwrap();
    assert!(restarts <= executed, "{v}");
}

// ------------------------------------------------------------------ colours

/// Cargo's conventions: `--color auto|always|never`, `CARGO_TERM_COLOR`
/// (the flag wins), `NO_COLOR` (even over `CLICOLOR_FORCE`), no colour into a
/// pipe unless asked for, and none with `--message-format json`; no progress
/// bar or line outside a terminal.
#[test]
fn colours_follow_cargos_conventions() {
    let test = "colours";
    let fx = fixture();
    let _guard = lock_target("unwrap");
    let artifact = fx.write_artifact("unwrap", test, &noisy(test, b"KEY=;"));
    let escapes = |extra: &[&str], env: &[(&str, &str)]| -> bool {
        let mut args = with_target_dir(extra);
        args.push(artifact.display().to_string());
        let mut cmd = command(&args, &fx.root);
        cmd.env_remove("NO_COLOR")
            .env_remove("CARGO_TERM_COLOR")
            .env_remove("CLICOLOR_FORCE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{extra:?} {env:?}");
        let all = [out.stdout, out.stderr].concat();
        // No progress drawn in place either: that is for terminals.
        assert!(!all.contains(&b'\r'), "{extra:?} {env:?}");
        all.contains(&0x1b)
    };
    assert!(!escapes(&[], &[]), "a pipe gets no colour by default");
    assert!(
        escapes(&["--color", "always"], &[]),
        "--color always into a pipe"
    );
    assert!(escapes(&[], &[("CARGO_TERM_COLOR", "always")]));
    assert!(
        escapes(&[], &[("CLICOLOR_FORCE", "1")]),
        "the check sees colour at all"
    );
    assert!(!escapes(&["--color", "never"], &[("CLICOLOR_FORCE", "1")]));
    assert!(!escapes(
        &[],
        &[("CARGO_TERM_COLOR", "never"), ("CLICOLOR_FORCE", "1")]
    ));
    assert!(!escapes(&[], &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]));
    assert!(
        !escapes(&["--color", "never"], &[("CARGO_TERM_COLOR", "always")]),
        "the flag wins"
    );
    assert!(!escapes(
        &["--message-format", "json", "--color", "always"],
        &[]
    ));
}

// ------------------------------------------------------------------ progress on a terminal

/// On a terminal (a pseudo-terminal here), a reduction shows one line that
/// is redrawn in place: the pass it is in, the best size so far, the tests
/// and their rate, the time, and how long since the best last got smaller.
#[test]
fn the_progress_line_names_the_pass_and_the_time_since_the_last_improvement() {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    let fx = fixture();
    let _guard = lock_target("slow_buffer");
    // At least a millisecond a test, and hundreds of tests to get down to
    // the 64 bytes the bug needs: about a second of reduction.
    let data = noisy_with_len("progress_pty", b"SLOW!", 600);
    let artifact = fx.write_artifact("slow_buffer", "progress_pty", &data);
    let (mut master, mut slave) = (-1, -1);
    // Wide enough that no line is cut to the terminal's width.
    let size = libc::winsize {
        ws_row: 50,
        ws_col: 250,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors we then own.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both are open and ours alone.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut args = with_target_dir::<&str>(&[]);
    args.push(artifact.display().to_string());
    let mut cmd = command(&args, &fx.root);
    cmd.stderr(std::process::Stdio::from(slave));
    let child = cmd.spawn().expect("spawn");
    drop(cmd); // the parent's copy of the slave: EOF once the child exits
    let reader = std::thread::spawn(move || {
        let mut tty = std::fs::File::from(master);
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        // Linux answers EIO once the last slave descriptor is closed.
        while let Ok(n) = tty.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&all).into_owned()
    });
    let out = child.wait_with_output().expect("wait");
    let screen = reader.join().expect("reader");
    assert_eq!(out.status.code(), Some(0), "{screen}");
    // Redrawn lines, each the progress of one moment (escape sequences
    // that clear and move the cursor taken out).
    let mut plain = String::new();
    let mut chars = screen.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    let screen = plain;
    let lines: Vec<&str> = screen
        .split(['\r', '\n'])
        .filter(|l| l.contains("tests (") && l.contains("best "))
        .collect();
    assert!(
        !lines.is_empty(),
        "no progress line on the terminal:\n{screen}"
    );
    for line in &lines {
        // `Reducing <pass>: 605 → …`, the pass a lowercase word.
        let after = line
            .trim_start()
            .strip_prefix("Reducing ")
            .unwrap_or_else(|| panic!("{line:?}"));
        let (pass, rest) = after.split_once(": ").unwrap_or_else(|| panic!("{line:?}"));
        assert!(
            !pass.is_empty() && pass.bytes().all(|b| b.is_ascii_lowercase()),
            "no pass named: {line:?}"
        );
        assert!(rest.starts_with(&format!("{} → ", data.len())), "{line:?}");
        assert!(
            line.contains("/s), ") && line.trim_end().ends_with("s ago"),
            "{line:?}"
        );
    }
    // The final lines are printed as usual, the progress line cleared.
    assert!(screen.contains("Reduced"), "{screen}");
    let reduced = std::fs::read(reduced_path(&artifact)).unwrap();
    assert!(
        reduced.len() == 64 && contains(&reduced, b"SLOW!"),
        "{reduced:?}"
    );
}

// ------------------------------------------------------------------ no orphans

/// Processes whose command line is the fixture's `infinite_loop` driver.
fn infinite_loop_drivers() -> Vec<libc::pid_t> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: libc::pid_t = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let program = cmdline.split(|&b| b == 0).next()?;
            program.ends_with(b"/infinite_loop").then_some(pid)
        })
        .collect()
}

/// A tool killed with SIGKILL while a candidate hangs leaves no driver
/// spinning (with and without the fork server): the drivers notice that
/// nobody can send them requests any more and end.
#[test]
fn a_killed_run_leaves_no_hanging_driver_behind() {
    let fx = fixture();
    let _guard = lock_target("infinite_loop");
    let data = noisy_with_len("orphans", b"WAIT\x03", 200);
    let artifact = fx.write_artifact("infinite_loop", "orphans", &data);
    for fork_server in ["1", "0"] {
        assert_eq!(infinite_loop_drivers(), Vec::<libc::pid_t>::new());
        let mut args = with_target_dir(&["--timeout", "30", "--message-format", "json"]);
        args.push(artifact.display().to_string());
        let mut cmd = command(&args, &fx.root);
        cmd.env("RC_FORK_SERVER", fork_server);
        let started = Instant::now();
        let mut child = cmd.spawn().unwrap();
        // Classifying the original hangs for the 30 s limit: kill it then.
        while infinite_loop_drivers().len() < 2 - usize::from(fork_server == "0") {
            assert!(
                started.elapsed() < RUN_LIMIT,
                "no driver started (fork server {fork_server})"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(300));
        child.kill().unwrap();
        let _ = child.wait();
        let killed = Instant::now();
        while !infinite_loop_drivers().is_empty() {
            assert!(
                killed.elapsed() < Duration::from_secs(5),
                "drivers still running 5 s after the tool was killed (fork server {fork_server}): {:?}",
                infinite_loop_drivers()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    assert_unmodified(&artifact, &data);
}
