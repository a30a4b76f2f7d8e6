//! `-j N` on one artifact: N drivers test its candidates speculatively and
//! the result is exactly one driver's.
//!
//! * Through the binary: the `slow_buffer` fixture target (at least 1 ms per
//!   input; `SLOW!` in 64 bytes or more) reduced with `-j 1` and `-j 2`
//!   gives the same bytes, by the same path (the tests on the reduction's
//!   path are the same; `-j 2` only adds the ones it ran past a success and
//!   discarded).
//! * Through the oracle: random candidate lists mixing passes, the other
//!   bug of `two_bugs` (a crash that ends a driver's batch without being
//!   interesting) and the bug looked for get the same answers, bests and
//!   counts with one, two and three drivers.

mod common;

use common::*;
use reduce_crash::reduce::oracle::Oracle;
use reduce_crash::run::crash_oracle::CrashOracle;
use reduce_crash::run::driver::{self, BuildOptions};
use reduce_crash::run::exec::{ExecConfig, Executor};
use reduce_crash::run::outcome::{MatchMode, Outcome};
use reduce_crash::run::project::FuzzProject;
use serde_json::Value;
use std::time::Duration;

/// Reduces `artifact` with `-j jobs`; returns the output's bytes and the
/// `reduce-finished` message.
fn reduce_with_jobs(artifact: &std::path::Path, jobs: &str) -> (Vec<u8>, Value) {
    let output = reduced_path(artifact);
    let _ = std::fs::remove_file(&output);
    let run = reduce(artifact, &["-j", jobs]);
    run.assert_code(0);
    let v = run.message("reduce-finished");
    (std::fs::read(&output).unwrap(), v)
}

#[test]
fn two_drivers_give_one_drivers_result() {
    let fx = fixture();
    let _guard = lock_target("slow_buffer");
    let data = noisy_with_len("jobs_same_result", b"SLOW!", 300);
    let artifact = fx.write_artifact("slow_buffer", "jobs_same_result", &data);

    let (one, v1) = reduce_with_jobs(&artifact, "1");
    let (two, v2) = reduce_with_jobs(&artifact, "2");
    assert_eq!(one.len(), 64, "{v1}");
    assert!(contains(&one, b"SLOW!"), "{v1}");
    assert_eq!(two, one, "-j 2 and -j 1 differ\n-j 1: {v1}\n-j 2: {v2}");
    assert_eq!(v2["verified_fresh"], true, "{v2}");
    assert_eq!(v2["signature"], v1["signature"], "{v1}\n{v2}");
    assert_eq!(v1["drivers"], 1, "{v1}");
    assert_eq!(v1["tests_discarded"], 0, "{v1}");
    assert_eq!(v2["drivers"], 2, "{v2}");
    // The same path: every test of -j 1, in -j 2's count too, plus the
    // ones run past a success and thrown away.
    let executed = |v: &Value| v["tests_executed"].as_u64().unwrap();
    let discarded = v2["tests_discarded"].as_u64().unwrap();
    assert_eq!(executed(&v2) - discarded, executed(&v1), "{v1}\n{v2}");
    assert_eq!(v2["tests_cached"], v1["tests_cached"], "{v1}\n{v2}");
    assert_eq!(v2["reduced_len"], 64);
    // Long lists of failing candidates: most of the work was shared.
    assert!(executed(&v1) > 500, "{v1}");
    // Each extra driver is a process of its own, not a restart.
    assert_eq!(v2["driver_spawns"], v1["driver_spawns"], "{v1}\n{v2}");
    assert_unmodified(&artifact, &data);
}

#[test]
fn without_j_one_artifact_gets_one_driver() {
    let fx = fixture();
    let _guard = lock_target("slow");
    let data = noisy_with_len("jobs_default", b"SLOW!", 40);
    let artifact = fx.write_artifact("slow", "jobs_default", &data);
    let run = common::run(&[artifact.display().to_string()], &fx.root);
    run.assert_code(0).assert_no_panic();
    assert!(
        !run.stderr.contains("drivers"),
        "one driver unless -j says so\n{}",
        run.describe()
    );
    let run = common::run(
        &[
            "-j".to_owned(),
            "2".to_owned(),
            artifact.display().to_string(),
        ],
        &fx.root,
    );
    run.assert_code(0).assert_no_panic();
    assert!(run.stderr.contains(", 2 drivers)"), "{}", run.describe());
    assert!(run.stderr.contains("on 2 drivers"), "{}", run.describe());
    assert_eq!(std::fs::read(reduced_path(&artifact)).unwrap(), b"SLOW!");
}

/// The driver of the fixture's `target`, built as the CLI tests build it.
fn driver_binary(target: &str) -> std::path::PathBuf {
    let fx = fixture();
    let project = FuzzProject::load(&fx.fuzz_dir().join("Cargo.toml")).expect("fixture project");
    let opts = BuildOptions {
        sanitizer: Some("none".to_owned()),
        target_dir: Some(driver_target_dir()),
        ..BuildOptions::default()
    };
    driver::build(&project, target, &opts)
        .expect("driver builds")
        .binary
}

fn start(binary: &std::path::Path) -> Executor {
    Executor::new(ExecConfig::new(binary.to_owned(), Duration::from_secs(5))).expect("starts")
}

#[test]
fn speculative_answers_are_the_sequential_ones() {
    let binary = driver_binary("two_bugs");
    let mut rng = Rng::from_name("speculative_answers");
    // Bug A is looked for; bug B crashes differently.
    let mut probe = start(&binary);
    let bug_a = noisy_with_len("bug a", b"BA!!B", 30);
    let Outcome::Crash(expected) = probe.run(&bug_a).unwrap().outcome else {
        panic!("bug A does not crash");
    };
    let Outcome::Crash(other) = probe.run(b"xx B!!B xx").unwrap().outcome else {
        panic!("bug B does not crash");
    };
    assert!(!MatchMode::Location.matches(&expected, &other));

    let lists: Vec<Vec<Vec<u8>>> = (0..60)
        .map(|l| {
            let len = 1 + rng.below(if l % 3 == 0 { 300 } else { 40 });
            // Fewer hits in longer lists, so that some have none at all.
            let hit = 1 + rng.below(len.max(2));
            (0..len)
                .map(|i| {
                    let seed = format!("{l}/{i}");
                    let n = rng.below(60);
                    match rng.below(hit + 4) {
                        0 => noisy_with_len(&seed, b"BA!!B", n),
                        1 | 2 => noisy_with_len(&seed, b"B!!B", n),
                        _ => noise(&mut rng, n),
                    }
                })
                .collect()
        })
        .collect();

    let answers = |drivers: usize| {
        let mut main = start(&binary);
        let helpers = (1..drivers).map(|_| start(&binary)).collect();
        // Every list is shared, fast as this target is.
        let mut oracle = CrashOracle::new(&mut main, expected.clone(), MatchMode::Location, &bug_a)
            .with_helpers(helpers)
            .spread_above(Duration::ZERO);
        let mut seen = Vec::new();
        for list in &lists {
            let answer = oracle.first_interesting(list);
            seen.push((answer, oracle.best().to_vec()));
        }
        assert!(!oracle.exhausted());
        oracle.finish();
        let others: u64 = oracle.other_signatures().iter().map(|(_, n)| n).sum();
        (
            seen,
            oracle.executed() - oracle.discarded(),
            oracle.helper_stats().executions,
            others,
        )
    };
    let (alone, executed, on_helpers, _) = answers(1);
    assert_eq!(on_helpers, 0);
    let found = alone.iter().filter(|(a, _)| a.is_some()).count();
    assert!(
        found > 10 && found < lists.len() - 5,
        "the lists should mix hits and misses: {found} of {}",
        lists.len()
    );
    for (i, list) in lists.iter().enumerate() {
        let sequential = list.iter().position(|c| {
            matches!(probe.run(c).unwrap().outcome,
                Outcome::Crash(ref s) if MatchMode::Location.matches(&expected, s))
        });
        assert_eq!(alone[i].0, sequential, "list {i}");
    }
    for drivers in [2, 3] {
        let (spread, spread_executed, on_helpers, others) = answers(drivers);
        for (i, (a, b)) in alone.iter().zip(&spread).enumerate() {
            assert_eq!(a, b, "list {i} with {drivers} drivers");
        }
        // The reduction's path is the same; more ran besides it.
        assert_eq!(spread_executed, executed, "{drivers} drivers");
        assert!(others > 0);
        assert!(on_helpers > 0, "the other drivers ran nothing");
    }

    // Without -j: a helper starts once candidates prove slow (here, any
    // candidate is), and the answers stay the sequential ones.
    let mut main = start(&binary);
    let mut oracle = CrashOracle::new(&mut main, expected.clone(), MatchMode::Location, &bug_a)
        .with_helpers_when_slow(1, Duration::from_nanos(1))
        .spread_above(Duration::ZERO);
    assert_eq!(oracle.drivers(), 1);
    let mut seen = Vec::new();
    for list in &lists {
        let answer = oracle.first_interesting(list);
        seen.push((answer, oracle.best().to_vec()));
    }
    oracle.finish();
    assert_eq!(oracle.drivers(), 2, "no helper started");
    assert!(
        oracle.helper_stats().executions > 0,
        "the helper ran nothing"
    );
    assert_eq!(seen, alone);
}

/// Without `-j`, an artifact whose runs take 5 ms or more gets a driver per
/// core (here a hang, killed at `--timeout 0.3`): the result is one driver's.
#[test]
fn slow_tests_get_a_driver_per_core_without_j() {
    let fx = fixture();
    let _guard = lock_target("infinite_loop");
    let data = noisy_with_len("jobs_auto", b"WAIT\x03", 200);
    let artifact = fx.write_artifact("infinite_loop", "jobs_auto", &data);
    let output = reduced_path(&artifact);
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let reduce_with = |extra: &[&str]| -> (Vec<u8>, common::Run) {
        let _ = std::fs::remove_file(&output);
        let mut args: Vec<String> = ["--timeout", "0.3"]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect();
        args.push(artifact.display().to_string());
        let run = common::run(&args, &fx.root);
        run.assert_code(0).assert_no_panic();
        (std::fs::read(&output).unwrap(), run)
    };
    let (auto, run) = reduce_with(&[]);
    if cores > 1 {
        assert!(
            run.stderr
                .contains(&format!(", {cores} drivers: a test takes 300ms)")),
            "{}",
            run.describe()
        );
    } else {
        assert!(!run.stderr.contains("drivers"), "{}", run.describe());
    }
    let (one, run) = reduce_with(&["-j", "1"]);
    assert!(!run.stderr.contains("drivers:"), "{}", run.describe());
    assert_eq!(auto, one, "the drivers changed the result");
    assert_eq!(&auto[..4], b"WAIT");
    assert_unmodified(&artifact, &data);
}

/// `--max-time` is a deadline for the whole run once the target is built,
/// the original's classification and the result's check included: here a
/// hang at `--timeout 1` takes 6 s to classify (a run at the limit, one at
/// four times it to tell a slow crash from a hang, one at the deadline),
/// which a budget counted from the start of the reduction did not see.
#[test]
fn max_time_is_a_deadline_for_the_whole_run() {
    let fx = fixture();
    let _guard = lock_target("infinite_loop");
    let data = noisy_with_len("max_time_deadline", b"WAIT\x03", 3000);
    let artifact = fx.write_artifact("infinite_loop", "max_time_deadline", &data);
    // Built beforehand: the deadline counts from a built target.
    common::classify_one(&artifact, None, &["--timeout", "1"]);
    let max_time = 12.0;
    let started = std::time::Instant::now();
    let run = common::reduce(
        &artifact,
        &["--timeout", "1", "--max-time", &max_time.to_string()],
    );
    let took = started.elapsed().as_secs_f64();
    run.assert_code(0);
    let v = run.message("reduce-finished");
    assert_eq!(v["budget_exhausted"], true, "{v}");
    // What the result is checked to do: run past `--timeout` (no libFuzzer
    // -timeout reports an input after 1 s).
    assert_eq!(v["timeout"]["runs_at_least_secs"], 1.0, "{v}");
    assert_eq!(v["timeout"]["libfuzzer_timeout"], Value::Null, "{v}");
    assert_eq!(v["timeout"]["inferred"], false, "{v}");
    // A hang pays the limit per success: random stages of strictly
    // shorter candidates come first (docs/design.md §5).
    assert_eq!(v["passes"][0]["name"], "random-first", "{v}");
    assert!(
        took <= max_time + 3.0,
        "--max-time {max_time}: the run took {took:.1}s\n{}",
        run.describe()
    );
    let reduced = std::fs::read(reduced_path(&artifact)).unwrap();
    assert!(
        reduced.len() < data.len() && contains(&reduced, b"WAIT"),
        "{v}"
    );
    assert_unmodified(&artifact, &data);
}
