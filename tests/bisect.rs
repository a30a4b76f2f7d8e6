//! `--bisect` on generated histories: `tests/fixtures/bisect` copied into a
//! new git repository, then about thirty commits of `src/lib.rs` on top,
//! each test with its own story (the bug comes in at commit k; lines move
//! above it later; a commit does not build; another crash hides it; it
//! shows only sometimes; it is fixed later). The real binary bisects an
//! artifact there and must name the right commit, or the right range, and
//! leave the checkout (working tree, index, `.git`) byte for byte as it was.

mod common;

use common::history::{self, git, Version};
use common::{command, finish, tmp_root};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A repository of the fixture at `target/tmp/bisect/<case>` with commit
/// `i` holding `versions(i)`; returns its directory and the commits'
/// hashes, oldest first.
fn history(case: &str, versions: impl Fn(usize) -> Version) -> (PathBuf, Vec<String>) {
    history::make(&tmp_root().join("bisect").join(case), versions)
}

/// Every file of the checkout (`.git` included, the build directory not)
/// with its bytes.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| e.path() != root.join("fuzz/target"))
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().strip_prefix(root).unwrap().to_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// Builds a bisection may take: ⌈log2 n⌉ + 3 for n candidates, plus skips.
fn build_budget(candidates: usize, skips: usize) -> u64 {
    let log2 = usize::BITS - (candidates.max(2) - 1).leading_zeros();
    u64::from(log2) + 3 + skips as u64
}

/// Runs `--bisect` on the history's artifact; returns the `bisected` line.
fn bisect(root: &Path, case: &str, extra: &[&str], code: i32) -> Value {
    bisect_noting(root, case, extra, code).0
}

/// As [`bisect`], with the run's notes.
fn bisect_noting(root: &Path, case: &str, extra: &[&str], code: i32) -> (Value, Vec<String>) {
    let before = snapshot(root);
    let target_dir = tmp_root().join("bisect-target").join(case);
    let mut args: Vec<String> = vec![
        "--bisect".into(),
        "fuzz/artifacts/parse/crash-bug".into(),
        "--message-format".into(),
        "json".into(),
        "--target-dir".into(),
        target_dir.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let started = Instant::now();
    let child = command(&args, root).spawn().unwrap();
    let run = finish(child, args, started, Duration::from_secs(900));
    run.assert_no_panic();
    run.assert_code(code);
    let after = snapshot(root);
    assert!(
        before == after,
        "the checkout changed: {:?}",
        after
            .iter()
            .filter(|(p, b)| before.get(*p) != Some(*b))
            .map(|(p, _)| p)
            .chain(before.keys().filter(|p| !after.contains_key(*p)))
            .collect::<Vec<_>>()
    );
    assert_eq!(git(root, &["status", "--porcelain"]), "");
    assert_eq!(git(root, &["worktree", "list"]).lines().count(), 1);
    let notes = run
        .json()
        .into_iter()
        .filter(|v| v["reason"] == "note")
        .map(|v| v["message"].as_str().unwrap_or_default().to_owned())
        .collect();
    let answer = if code == 0 {
        run.message("bisected")
    } else {
        run.json().into_iter().last().unwrap_or(Value::Null)
    };
    (answer, notes)
}

fn skipped(b: &Value) -> Vec<(String, String)> {
    b["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["hash"].as_str().unwrap().to_owned(),
                s["why"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn finds_the_commit_that_brought_the_bug() {
    let k = 17;
    let (root, h) = history("plain", |i| Version {
        bug: i >= k,
        ..Version::default()
    });
    let b = bisect(&root, "plain", &[], 0);
    assert_eq!(b["first_bad"], h[k].as_str(), "{b}");
    assert_eq!(b["last_before"]["hash"], h[k - 1].as_str());
    assert_eq!(b["commit"]["subject"], format!("commit {k}"));
    assert!(b["range"].is_null());
    assert_eq!(b["checked"], true);
    let n = b["candidates"].as_u64().unwrap() as usize;
    assert!(
        b["builds"].as_u64().unwrap() <= build_budget(n, 0),
        "{} builds for {n} candidates",
        b["builds"]
    );
    // Given --good, the same answer.
    let b = bisect(&root, "plain", &["--good", &h[3], "--bad", &h[25]], 0);
    assert_eq!(b["first_bad"], h[k].as_str(), "{b}");
    assert_eq!(b["candidates"], 22);
    assert!(b["builds"].as_u64().unwrap() <= build_budget(22, 0));
}

#[test]
fn lines_moved_above_the_crash_keep_its_identity() {
    let k = 9;
    let (root, h) = history("moved", |i| Version {
        bug: i >= k,
        // Three more lines above the code at every commit after the bug.
        pad: if i > k { 3 * (i - k) } else { 0 },
        // A commit far from the change does not build: skipped, not blurring it.
        broken: i == 22,
        ..Version::default()
    });
    let b = bisect(&root, "moved", &[], 0);
    assert_eq!(b["first_bad"], h[k].as_str(), "{b}");
    assert!(b["range"].is_null());
    assert!(skipped(&b).is_empty(), "{b}");
}

#[test]
fn a_commit_that_does_not_build_is_skipped_and_named() {
    let k = 14;
    let (root, h) = history("broken", |i| Version {
        bug: i >= k,
        broken: i == k - 1,
        ..Version::default()
    });
    let b = bisect(&root, "broken", &[], 0);
    // Either k-1 (it does not build) or k brought the bug: the range.
    assert!(b["first_bad"].is_null(), "{b}");
    assert_eq!(b["range"], serde_json::json!([h[k - 1], h[k]]), "{b}");
    assert_eq!(b["commit"]["hash"], h[k].as_str());
    let skips = skipped(&b);
    assert_eq!(skips.len(), 1, "{b}");
    assert_eq!(skips[0].0, h[k - 1]);
    assert!(
        skips[0].1.starts_with("does not build (error"),
        "{}",
        skips[0].1
    );
    let n = b["candidates"].as_u64().unwrap() as usize;
    assert!(b["builds"].as_u64().unwrap() <= build_budget(n, 1));
}

#[test]
fn another_crash_hiding_ours_is_skipped() {
    let k = 20;
    let (root, h) = history("hidden", |i| Version {
        bug: i >= k,
        // Another panic on the same input at k and k+1: ours shows from k+2.
        hidden: i == k || i == k + 1,
        ..Version::default()
    });
    let b = bisect(&root, "hidden", &[], 0);
    assert!(b["first_bad"].is_null(), "{b}");
    assert_eq!(b["range"], serde_json::json!([h[k], h[k + 2]]), "{b}");
    let skips = skipped(&b);
    assert_eq!(skips.len(), 2, "{b}");
    for (hash, why) in &skips {
        assert!(hash == &h[k] || hash == &h[k + 1]);
        assert!(why.starts_with("crashes another way"), "{why}");
        assert!(why.contains("another bug first"), "{why}");
    }
}

#[test]
fn a_crash_that_shows_only_sometimes_is_bisected_with_more_runs() {
    let k = 11;
    let (root, h) = history("flaky", |i| Version {
        bug: i >= k,
        flaky: true,
        ..Version::default()
    });
    let b = bisect(&root, "flaky", &[], 0);
    assert_eq!(b["first_bad"], h[k].as_str(), "{b}");
    assert!(
        b["clean_runs_per_revision"].as_u64().unwrap() >= 5,
        "a revision is judged clean after {} runs",
        b["clean_runs_per_revision"]
    );
}

#[test]
fn a_clean_verdict_the_last_check_disproves_is_corrected() {
    // At 11, 12 and 13 the bug shows only from a build's sixth run on; from
    // 14 on, every run. Measured at HEAD (10 of 10), five clean runs judge a
    // revision, so any of 11-13 first looks clean and the first answer is
    // 14: the last check runs 13 ten times, sees the crash, and the search
    // goes on with more runs per revision.
    let k = 11;
    let dir = tmp_root().join("bisect-counters");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir: &'static str = Box::leak(dir.display().to_string().into_boxed_str());
    let (root, h) = history("slow-start", |i| Version {
        bug: i >= k,
        slow_start: (k..k + 3).contains(&i).then_some(dir),
        ..Version::default()
    });
    let (before, notes) = bisect_noting(&root, "slow-start", &[], 0);
    assert_eq!(before["first_bad"], h[k].as_str(), "{before}");
    assert_eq!(before["last_before"]["hash"], h[k - 1].as_str());
    assert_eq!(before["checked"], true);
    assert!(
        before["clean_runs_per_revision"].as_u64().unwrap() >= 10,
        "{before}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("was judged clean but crashed the same way when run again")),
        "{notes:?}"
    );
}

#[test]
fn fixed_finds_the_commit_that_fixed_it() {
    let (k, f) = (5, 21);
    let (root, h) = history("fixed", |i| Version {
        bug: (k..f).contains(&i),
        ..Version::default()
    });
    let b = bisect(&root, "fixed", &["--fixed", "--bad", &h[8]], 0);
    assert_eq!(b["first_fixed"], h[f].as_str(), "{b}");
    assert_eq!(b["last_before"]["hash"], h[f - 1].as_str());
    // Still crashing at HEAD: no answer, and says so.
    let (root, h) = history("not-fixed", |i| Version {
        bug: i >= k,
        ..Version::default()
    });
    let err = bisect(&root, "not-fixed", &["--fixed", "--bad", &h[8]], 11);
    assert!(
        err["message"].as_str().unwrap().contains("still crashes"),
        "{err}"
    );
}

#[test]
fn bad_revisions_and_good_ends_are_one_line_errors() {
    let k = 4;
    let (root, h) = history("errors", |i| Version {
        bug: i >= k,
        ..Version::default()
    });
    let err = bisect(&root, "errors", &["--good", "no-such-rev"], 11);
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("unknown revision"),
        "{err}"
    );
    // --good crashes too.
    let err = bisect(&root, "errors", &["--good", &h[6]], 11);
    assert!(err["message"].as_str().unwrap().contains("--good"), "{err}");
    // --good newer than --bad.
    let err = bisect(&root, "errors", &["--good", &h[20], "--bad", &h[10]], 11);
    assert!(
        err["message"].as_str().unwrap().contains("not an ancestor"),
        "{err}"
    );
    // Does not crash at --bad.
    let err = bisect(&root, "errors", &["--bad", &h[2]], 3);
    assert!(
        err["message"].as_str().unwrap().contains("does not crash"),
        "{err}"
    );
}

/// Runs `--bisect` on the history's artifact and sends Ctrl-C once `after`
/// status lines starting with "Clean" or "Crashes" were printed; returns
/// the exit code and stderr.
fn interrupt_after(root: &Path, case: &str, after: usize) -> (Option<i32>, String) {
    use std::io::BufRead;
    let target_dir = tmp_root().join("bisect-target").join(case);
    let args = [
        "--bisect".to_owned(),
        "fuzz/artifacts/parse/crash-bug".to_owned(),
        "--target-dir".to_owned(),
        target_dir.display().to_string(),
    ];
    let mut child = command(&args, root).spawn().unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut lines = Vec::new();
    let mut judged = 0;
    for line in stderr.lines() {
        let line = line.unwrap();
        let t = line.trim_start();
        if t.starts_with("Clean") || t.starts_with("Crashes") {
            judged += 1;
            if judged == after {
                assert_eq!(
                    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
                    0
                );
            }
        }
        lines.push(line);
    }
    let status = child.wait().unwrap();
    let text = lines.join("\n");
    assert!(judged >= after, "{text}");
    assert!(!text.contains("panicked"), "{text}");
    (status.code(), text)
}

/// No work tree of a run on the history named `case` is left in the
/// temporary directory.
fn no_work_tree_left(case: &str) {
    let leftovers: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("reduce-crash-bisect-")
        })
        .filter(|e| {
            std::fs::read_dir(e.path())
                .into_iter()
                .flatten()
                .flatten()
                .any(|f| f.file_name() == case)
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn ctrl_c_stops_with_the_range_known_so_far() {
    let k = 23;
    let (root, _) = history("interrupted", |i| Version {
        bug: i >= k,
        ..Version::default()
    });
    let before = snapshot(&root);
    // After the first revision judged past the bad one: bisecting.
    let (code, text) = interrupt_after(&root, "interrupted", 1);
    assert_eq!(code, Some(130), "{text}");
    assert!(text.contains("Interrupted"), "{text}");
    assert!(text.contains("is one of"), "{text}");
    assert!(snapshot(&root) == before);
    no_work_tree_left("interrupted");

    // The target's first commit does not build, so the search steps back
    // from the bad end; stopped there, it says how far back it crashes.
    let (root, h) = history("interrupted-back", |i| Version {
        bug: i >= 3,
        broken: i == 0,
        ..Version::default()
    });
    let before = snapshot(&root);
    let (code, text) = interrupt_after(&root, "interrupted-back", 2);
    assert_eq!(code, Some(130), "{text}");
    assert!(text.contains("as far back as"), "{text}");
    // Two revisions judged back from commit 29: 28, then 27 (or further).
    assert!(h[..=27].iter().any(|c| text.contains(c.as_str())), "{text}");
    assert!(snapshot(&root) == before);
    no_work_tree_left("interrupted-back");
}

#[test]
fn the_reduced_form_runs_when_it_crashes_the_same_way() {
    let k = 6;
    let (root, h) = history("reduced", |i| Version {
        bug: i >= k,
        ..Version::default()
    });
    let artifact = root.join("fuzz/artifacts/parse/crash-bug");
    std::fs::write(artifact.with_file_name("crash-bug.reduced"), b"BUG").unwrap();
    let b = bisect(&root, "reduced", &[], 0);
    assert_eq!(b["first_bad"], h[k].as_str(), "{b}");
    assert!(
        b["input"].as_str().unwrap().ends_with("crash-bug.reduced"),
        "{b}"
    );
    // One that does not crash is not used.
    std::fs::write(artifact.with_file_name("crash-bug.reduced"), b"ok").unwrap();
    let b = bisect(&root, "reduced", &[], 0);
    assert_eq!(b["first_bad"], h[k].as_str(), "{b}");
    assert!(b["input"].as_str().unwrap().ends_with("crash-bug"), "{b}");
}
