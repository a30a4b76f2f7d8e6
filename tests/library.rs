//! The library API a mutation fuzzer or a corpus tool calls: a real fuzz
//! target behind `RunningTarget`, shrunk by `Shrinker` under its predicates
//! (same crash, same coverage) and under a user closure, with budgets.

mod common;

use common::*;
use reduce_crash::reduce::shrink::Shrinker;
use reduce_crash::run::outcome::{CrashKind, MatchMode, Outcome};
use reduce_crash::run::target::{RunningTarget, TargetOptions};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn example() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("example");
        let root = tmp_root().join("fixtures").join("example-library");
        sync_tree(&src, &root);
        root
    })
}

fn open(coverage: bool) -> RunningTarget {
    let mut opts = TargetOptions {
        coverage,
        ..TargetOptions::default()
    };
    opts.build.target_dir = Some(driver_target_dir());
    RunningTarget::open(&example().join("fuzz"), "parse", &opts).expect("target builds and starts")
}

#[test]
fn same_crash_shrinks_a_crash_and_never_slips() {
    let mut target = open(false);
    let input = b"[server]\nhost = example.org\nmotd = \"hello # there\nport = 8080\n".to_vec();
    let sig = match target.run(&input).unwrap() {
        Outcome::Crash(s) => s,
        other => panic!("the example's bug should crash: {other:?}"),
    };
    assert_eq!(sig.kind, CrashKind::Panic);
    let shrunk = Shrinker::new().shrink(&input, target.same_crash(&sig, MatchMode::Location));
    // The minimal input that reaches the unterminated-quote unwrap: `a="`.
    assert_eq!(
        shrunk.input.len(),
        3,
        "{:?}",
        String::from_utf8_lossy(&shrunk.input)
    );
    assert!(!shrunk.budget_exhausted);
    match target.run(&shrunk.input).unwrap() {
        Outcome::Crash(s) => assert!(MatchMode::Location.matches(&sig, &s)),
        other => panic!("the result must still crash: {other:?}"),
    }
    assert!(target.executions() >= shrunk.tests);
}

#[test]
fn keeps_features_shrinks_while_the_coverage_stays() {
    let mut target = open(true);
    let input = b"  [section one]\n; a comment\nkey = \"quoted\" \nother = plain # c\n".to_vec();
    let (outcome, features) = target.coverage(&input).unwrap();
    assert_eq!(outcome, Outcome::Pass);
    let features = features.expect("a coverage build reports features");
    assert!(features.len() > 20, "{features}");
    let shrunk = Shrinker::new().shrink(&input, target.keeps_features(&features));
    // Every feature includes its hit-count bucket, so loops over the bytes
    // pin much of the length; the result is still strictly smaller.
    assert!(
        shrunk.input.len() < input.len(),
        "{:?}",
        String::from_utf8_lossy(&shrunk.input)
    );
    let (_, after) = target.coverage(&shrunk.input).unwrap();
    assert!(after.unwrap().contains_all(&features));
}

#[test]
fn user_predicates_and_budgets() {
    let mut target = open(false);
    let input: Vec<u8> = b"a = 1\n".repeat(400);
    // A user's own property: passes, and still parses at least two pairs.
    let mut calls = 0u64;
    // (The whole reduction takes 24 tests: the repeated line is cut to two
    // copies and their shape in a few.)
    let shrunk = Shrinker::new().max_tests(10).shrink(&input, |c| {
        calls += 1;
        target.run(c).unwrap() == Outcome::Pass && c.iter().filter(|&&b| b == b'=').count() >= 2
    });
    assert_eq!(shrunk.tests, 10);
    assert_eq!(calls, 10);
    assert!(shrunk.budget_exhausted);
    assert!(shrunk.input.len() < input.len());

    let started = Instant::now();
    let slow = Shrinker::new()
        .max_time(Duration::from_millis(200))
        .shrink(&input, |c| {
            // A test of 100 ms: the reduction (a dozen tests or more, the
            // cut to the shortest prefix alone) cannot finish in 200 ms.
            std::thread::sleep(Duration::from_millis(100));
            c.len() >= 6
        });
    assert!(slow.budget_exhausted);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(slow.input.len() >= 6 && slow.input.len() < input.len());
}

#[test]
fn a_directory_without_a_fuzz_project_is_a_clear_error() {
    // Outside this repository (whose own fuzz/ project would be found).
    let dir = std::env::temp_dir().join(format!("rc-not-a-project-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let err = match RunningTarget::open(&dir, "parse", &TargetOptions::default()) {
        Ok(_) => panic!("no project there"),
        Err(e) => e.to_string(),
    };
    let _ = std::fs::remove_dir_all(&dir);
    assert!(err.contains("no cargo-fuzz project"), "{err}");
}
