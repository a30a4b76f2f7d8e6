//! Issue 23: never lose or misreport a user's file. One test per probe that
//! found a data-loss or false-result path, reproducing it as the probe did,
//! on copies of `tests/fixtures/trust` (one odd behaviour per target) and
//! `tests/fixtures/asan`.
//!
//! A custom harness (libtest-mimic), as in `faithful.rs`: the tests whose
//! verdict needs the real `cargo fuzz build` binary (nightly, cargo-fuzz) are
//! reported as *ignored* on a machine without them, never as passed.

mod common;

use common::real;
use common::*;
use libtest_mimic::{Arguments, Failed, Trial};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn main() {
    let args = Arguments::from_args();
    let judged = judged_trials("trust");
    let trials = vec![
        Trial::test(
            "emit_test_never_lands_on_the_artifact_or_the_result",
            item1_emit_test,
        ),
        judged(
            "corpus_in_place_keeps_subdirectories_links_and_libfuzzer_s_coverage",
            item2_corpus,
        ),
        judged(
            "the_fuzzer_binary_survives_a_stale_driver_another_target_and_dependency",
            item3_fuzzer_binary,
        ),
        judged(
            "every_sequence_of_builds_and_runs_killed_or_not_keeps_the_fuzzer_binaries",
            item3_property,
        ),
        Trial::test(
            "a_stale_record_never_writes_a_non_crashing_result",
            item4_stale_record,
        ),
        judged(
            "a_panic_during_unwinding_keeps_the_first_panic_s_location",
            item5_double_panic,
        ),
        judged(
            "a_silent_panic_hook_keeps_the_panic_location",
            item5_silent_hook,
        ),
        Trial::test("fifos_and_devices_are_refused_at_once", item6_non_regular),
        Trial::test(
            "an_artifact_that_vanishes_gets_its_own_row",
            item7_vanishing,
        ),
        judged(
            "the_reproduce_line_from_inside_fuzz_runs_under_cargo_fuzz",
            item8_reproduce_line,
        ),
        judged(
            "emit_test_of_a_sanitizer_bug_fails_as_it_says",
            item9_sanitizer_test,
        ),
        Trial::test(
            "nothing_budgets_and_bad_outputs_fail_before_any_work",
            item10_early,
        ),
        judged(
            "a_sigabrt_handler_that_exits_hides_crashes_as_under_libfuzzer",
            item10_abrt_exit,
        ),
        judged("a_libafl_project_reduces_in_both_builds", item11_libafl),
    ];
    libtest_mimic::run(&args, trials).exit();
}

// ------------------------------------------------------------------ helpers

/// The `trust` fixture, copied once per test process (builds without a
/// sanitizer go to the shared driver directory, `common::run`).
fn trust() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| copy_fixture("trust"))
}

/// The `trust` fixture built by `cargo +nightly fuzz build` (every target).
fn trust_built() -> &'static (PathBuf, PathBuf) {
    static BUILT: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = copy_fixture_as("trust", "trust-real");
        let bins = real::cargo_fuzz_build(&root);
        (root, bins)
    })
}

/// A fresh, empty directory under the test's temporary root.
fn scratch(name: &str) -> PathBuf {
    let dir = tmp_root().join("trust-scratch").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `bytes` of noise around nothing: an input of `parse` that passes.
fn passing(seed: &str) -> Vec<u8> {
    noisy_with_len(seed, b"", 600)
        .into_iter()
        .map(|b| if b == b'\n' { b' ' } else { b })
        .collect()
}

/// An input of `parse` whose first line unwraps `None` (`U` with no `=`).
fn unwrapping(seed: &str) -> Vec<u8> {
    let mut data = b"U no value here\n".to_vec();
    data.extend(passing(seed));
    data
}

fn sha1(path: &Path) -> String {
    reduce_crash::campaign::sha1_file(path).unwrap()
}

// ------------------------------------------------------------------ 1

/// `--emit-test <artifact> <artifact>` replaced the artifact by the test
/// source, and `-o X --emit-test X` left a test where the result should be.
fn item1_emit_test() -> Result<(), Failed> {
    let root = trust();
    let _serial = lock_target("parse");
    let data = unwrapping("item1");
    let a = artifact(root, "parse", "crash-item1", &data);
    let hard = a.with_file_name("hardlink-of-crash-item1");
    let _ = std::fs::remove_file(&hard);
    std::fs::hard_link(&a, &hard).unwrap();
    let out = root.join("fuzz/artifacts/parse/out-item1");
    let _ = std::fs::remove_file(&out);
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "--emit-test".into(),
                a.display().to_string(),
                a.display().to_string(),
            ],
            "--emit-test",
        ),
        (
            vec![
                "-o".into(),
                out.display().to_string(),
                "--emit-test".into(),
                out.display().to_string(),
                a.display().to_string(),
            ],
            "is where this run writes -o/--output already",
        ),
        (
            vec![
                "-o".into(),
                hard.display().to_string(),
                a.display().to_string(),
            ],
            "is the original artifact",
        ),
        (
            vec![
                "--emit-test".into(),
                hard.display().to_string(),
                a.display().to_string(),
            ],
            "is the original artifact",
        ),
    ];
    for (args, says) in cases {
        let r = run(&args, root);
        r.assert_no_panic();
        check(r.code == Some(5), || {
            format!("expected exit 5\n{}", r.describe())
        })?;
        check(
            r.error_lines().len() == 1 && r.stderr.contains(says),
            || format!("expected one error line saying `{says}`\n{}", r.describe()),
        )?;
        // Refused before any work: nothing was run.
        check(!r.stderr.contains("Reproduced"), || {
            format!("the run started working before refusing\n{}", r.describe())
        })?;
        assert_unmodified(&a, &data);
        assert_unmodified(&hard, &data);
        check(!out.exists() && !reduced_path(&a).exists(), || {
            format!("something was written\n{}", r.describe())
        })?;
    }
    // A good pair still works, and the test is not the result.
    let test = root.join("fuzz/tests/item1.rs");
    let r = run(
        &[
            "-o",
            &out.display().to_string(),
            "--emit-test",
            &test.display().to_string(),
            &a.display().to_string(),
        ],
        root,
    );
    r.assert_code(0);
    assert_unmodified(&a, &data);
    let result = std::fs::read(&out).unwrap();
    check(result == b"U", || {
        format!("result {result:?}\n{}", r.describe())
    })?;
    let source = std::fs::read_to_string(&test).unwrap();
    check(source.contains("fn reduced_parse_crash_item1()"), || {
        source.clone()
    })?;
    let _ = std::fs::remove_file(&hard);
    Ok(())
}

// ------------------------------------------------------------------ 2

/// `--corpus --in-place` dropped the entries in subdirectories (libFuzzer
/// reads corpora recursively) and libFuzzer's coverage of the corpus fell;
/// a symbolic link to the corpus was replaced by a directory; killed runs
/// left hidden `.reduce-crash-corpus-*` directories behind for good.
fn item2_corpus() -> Result<(), Failed> {
    let (root, bins) = trust_built();
    let fuzz = root.join("fuzz");
    let real_dir = fuzz.join("corpus-real/parse");
    let link = fuzz.join("corpus/parse");
    let _ = std::fs::remove_dir_all(fuzz.join("corpus-real"));
    let _ = std::fs::remove_dir_all(fuzz.join("corpus"));
    std::fs::create_dir_all(real_dir.join("sub/deeper")).unwrap();
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real_dir, &link).unwrap();
    let mut rng = Rng::from_name("item2");
    let mut write = |rel: &str, lines: usize| {
        let mut doc = Vec::new();
        for _ in 0..lines {
            let len = 1 + rng.below(30);
            doc.extend(
                noisy_with_len(&format!("{rel}{len}"), b"", len)
                    .iter()
                    .map(|&b| if b == b'\n' { b' ' } else { b }),
            );
            doc.push(b'\n');
        }
        std::fs::write(real_dir.join(rel), doc).unwrap();
    };
    for i in 0..12 {
        write(&format!("top-{i}"), 1 + i % 5);
    }
    // Coverage found only below the top level: a `U` line with a value,
    // many lines (other hit-count buckets).
    std::fs::write(real_dir.join("sub/with-value"), b"plain\nUkey=v and more\n").unwrap();
    write("sub/deeper/long", 40);
    // What a killed run left beside the corpus.
    let stale = real_dir
        .parent()
        .unwrap()
        .join(".reduce-crash-corpus-killed");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("x"), b"x").unwrap();

    let binary = bins.join("parse");
    let before = libfuzzer_coverage(&binary, &real_dir)?;
    let r = run_default(
        &[
            "--corpus",
            "--in-place",
            "--message-format",
            "json",
            "corpus/parse",
        ],
        &fuzz,
    );
    r.assert_no_panic().assert_code(0);
    check(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        || format!("the corpus link was replaced\n{}", r.describe()),
    )?;
    let after = libfuzzer_coverage(&binary, &real_dir)?;
    check(after.0 >= before.0 && after.1 >= before.1, || {
        format!(
            "libFuzzer (cov, ft) {before:?} -> {after:?}\n{}",
            r.describe()
        )
    })?;
    let done = r.message("corpus-finished");
    check(done["files_before"] == 14, || format!("{done}"))?;
    check(!stale.exists(), || {
        "the killed run's staging directory is still there".into()
    })?;
    let leftovers: Vec<_> = std::fs::read_dir(real_dir.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with(".reduce-crash"))
        .collect();
    check(leftovers.is_empty(), || format!("{leftovers:?}"))?;
    eprintln!("item 2: libFuzzer (cov, ft) {before:?} -> {after:?}; {done}");
    Ok(())
}

/// libFuzzer's `(cov, ft)` for a corpus directory, from `binary -runs=0`.
fn libfuzzer_coverage(binary: &Path, dir: &Path) -> Result<(u64, u64), Failed> {
    let out = Command::new(binary)
        .arg("-runs=0")
        .arg(dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("INITED"))
        .ok_or_else(|| format!("no INITED line from libFuzzer:\n{err}"))?;
    let field = |name: &str| -> u64 {
        let rest = &line[line.find(name).unwrap() + name.len()..];
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    Ok((field("cov:"), field("ft:")))
}

// ------------------------------------------------------------------ 3

/// After an `--all` run while `Cargo.toml` had a third target and one more
/// dependency, and single runs after they were removed again, the fuzzer
/// binary at `release/<target>` was the driver: the old build put the
/// user's binary back from the newest other `deps/<target>-<hash>`, which
/// was the driver the `--all` run had built with the other dependency set.
/// From that starting state, built here, both targets' binaries stay what
/// `cargo fuzz build` made.
fn item3_fuzzer_binary() -> Result<(), Failed> {
    let (_serial, root) = two_target_project();
    let manifest = root.join("fuzz/Cargo.toml");
    let two = two_targets(&std::fs::read_to_string(&manifest).unwrap());
    std::fs::write(&manifest, &two).unwrap();
    let bins = real::cargo_fuzz_build(&root);
    let before: Vec<String> = ["parse", "typed"]
        .iter()
        .map(|t| sha1(&bins.join(t)))
        .collect();
    artifact(&root, "parse", "crash-a", &unwrapping("item3"));
    artifact(&root, "typed", "crash-t", &typed_crash());
    // A third target and a dependency, tried out with --all (no rebuild).
    std::fs::write(&manifest, with_third_target(&two)).unwrap();
    artifact(&root, "third", "crash-3", &unwrapping("item3-third"));
    run_default(&["--all"], &root).assert_code(0);
    // Removed again; the user reduces single artifacts.
    std::fs::write(&manifest, &two).unwrap();
    let _ = std::fs::remove_dir_all(root.join("fuzz/artifacts/third"));
    for _ in 0..2 {
        for (t, name) in [("parse", "crash-a"), ("typed", "crash-t")] {
            let a = root.join("fuzz/artifacts").join(t).join(name);
            let _ = std::fs::remove_file(reduced_path(&a));
            run_default(&[a.display().to_string()], &root).assert_code(0);
        }
        run_default(&["--all"], &root).assert_code(0);
    }
    for (t, sha) in ["parse", "typed"].iter().zip(&before) {
        check(&sha1(&bins.join(t)) == sha, || {
            format!("release/{t} is not the binary cargo fuzz build made any more")
        })?;
        is_libfuzzer(&bins.join(t))?;
    }
    Ok(())
}

/// The two-target manifest with a third target and one more dependency.
fn with_third_target(two: &str) -> String {
    format!(
        "{}\n[[bin]]\nname = \"third\"\npath = \"fuzz_targets/parse.rs\"\ntest = false\ndoc = false\nbench = false\n",
        two.replace("libc = \"0.2\"", "libc = \"0.2\"\nitoa = \"1\"")
    )
}

/// One step a user (or a CI job) takes on a two-target project.
#[derive(Debug, Clone)]
enum Step {
    /// `cargo +nightly fuzz build`: the binaries to keep from now on.
    CargoFuzzBuild,
    /// The source changes (our next run rebuilds its driver; the fuzzer
    /// binaries stay the old ones until the next `cargo fuzz build`).
    EditSource,
    /// A third target and a dependency are added to `fuzz/Cargo.toml`, or
    /// removed again (no build).
    ToggleThirdTarget,
    /// `cargo reduce-crash <artifact>` of a target (SIGKILLed after the
    /// milliseconds given, if any).
    Single(&'static str, Option<u64>),
    /// `cargo reduce-crash fuzz/artifacts/<target>/`.
    Directory(&'static str, Option<u64>),
    /// `cargo reduce-crash --all`.
    All(Option<u64>),
    /// `cargo reduce-crash --corpus --in-place corpus/parse`.
    Corpus(Option<u64>),
}

fn step_strategy() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    let target = prop_oneof![Just("parse"), Just("typed")];
    let kill = prop_oneof![Just(None), (50u64..2500).prop_map(Some)];
    prop_oneof![
        1 => Just(Step::CargoFuzzBuild),
        1 => Just(Step::EditSource),
        3 => Just(Step::ToggleThirdTarget),
        3 => (target.clone(), kill.clone()).prop_map(|(t, k)| Step::Single(t, k)),
        2 => (target, kill.clone()).prop_map(|(t, k)| Step::Directory(t, k)),
        2 => kill.clone().prop_map(Step::All),
        1 => kill.prop_map(Step::Corpus),
    ]
}

/// After any sequence of `cargo fuzz build` and our runs (single, directory,
/// `--all`, `--corpus --in-place`), killed or not, the binaries at
/// `release/<target>` are byte for byte what the last `cargo fuzz build`
/// made.
fn item3_property() -> Result<(), Failed> {
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    let (_serial, root_dir) = two_target_project();
    let root = root_dir.as_path();
    let manifest = root.join("fuzz/Cargo.toml");
    let two = two_targets(&std::fs::read_to_string(&manifest).unwrap());
    std::fs::write(&manifest, &two).unwrap();
    let lib = root.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).unwrap();
    let mut runner = TestRunner::new(Config {
        cases: 3,
        max_shrink_iters: 4,
        failure_persistence: None,
        ..Config::default()
    });
    let steps = proptest::collection::vec(step_strategy(), 4..7);
    let edits = std::sync::atomic::AtomicU32::new(0);
    let result = runner.run(&steps, |steps| {
        // Every case starts from the fixture's source, built.
        std::fs::write(&lib, &source).unwrap();
        std::fs::write(&manifest, &two).unwrap();
        let mut all = vec![Step::CargoFuzzBuild];
        all.extend(steps);
        let mut kept: Option<Vec<String>> = None;
        for step in &all {
            let bins = root.join("fuzz/target").join(host_triple()).join("release");
            match step {
                Step::CargoFuzzBuild => {
                    real::cargo_fuzz_build(root);
                    kept = Some(["parse", "typed"].iter().map(|t| sha1(&bins.join(t))).collect());
                }
                Step::EditSource => {
                    let n = edits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    std::fs::write(&lib, format!("{source}\n// edit {n}\n")).unwrap();
                }
                Step::ToggleThirdTarget => {
                    let now = std::fs::read_to_string(&manifest).unwrap();
                    let next = if now == two { with_third_target(&two) } else { two.clone() };
                    std::fs::write(&manifest, next).unwrap();
                }
                Step::Single(t, kill) => {
                    let a = place_property_artifacts(root, t);
                    run_maybe_killed(&[a.display().to_string()], root, *kill);
                }
                Step::Directory(t, kill) => {
                    place_property_artifacts(root, t);
                    let dir = root.join("fuzz/artifacts").join(t);
                    run_maybe_killed(&[dir.display().to_string()], root, *kill);
                }
                Step::All(kill) => {
                    place_property_artifacts(root, "parse");
                    place_property_artifacts(root, "typed");
                    run_maybe_killed(&["--all".to_owned()], root, *kill);
                }
                Step::Corpus(kill) => {
                    let corpus = root.join("fuzz/corpus/parse");
                    if !corpus.exists() {
                        std::fs::create_dir_all(&corpus).unwrap();
                        for i in 0..6 {
                            std::fs::write(corpus.join(format!("c{i}")), passing(&format!("c{i}"))).unwrap();
                        }
                    }
                    run_maybe_killed(
                        &["--corpus".to_owned(), "--in-place".to_owned(), "corpus/parse".to_owned()],
                        &root.join("fuzz"),
                        *kill,
                    );
                }
            }
            if let Some(kept) = &kept {
                for (t, sha) in ["parse", "typed"].iter().zip(kept) {
                    if &sha1(&bins.join(t)) != sha {
                        return Err(TestCaseError::fail(format!(
                            "after {step:?} (of {all:?}) release/{t} is not what cargo fuzz build made"
                        )));
                    }
                }
            }
        }
        Ok(())
    });
    std::fs::write(&lib, &source).unwrap();
    std::fs::write(&manifest, &two).unwrap();
    result.map_err(|e| Failed::from(e.to_string()))
}

/// Puts the target's crash artifact in place (without an earlier result).
fn place_property_artifacts(root: &Path, target: &str) -> PathBuf {
    match target {
        "parse" => artifact(root, "parse", "crash-p", &unwrapping("property")),
        _ => artifact(root, "typed", "crash-t", &typed_crash()),
    }
}

/// Runs the binary (default build); with `kill`, SIGKILLs it after that
/// many milliseconds if it is still running. Whatever it exits with.
fn run_maybe_killed(args: &[String], cwd: &Path, kill: Option<u64>) {
    let mut child = command_as_is(args, cwd)
        .env_remove("CARGO_TARGET_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let limit = match kill {
        Some(ms) => Duration::from_millis(ms),
        None => RUN_LIMIT,
    };
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn host_triple() -> String {
    let out = Command::new("rustc").arg("-vV").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .unwrap()
}

/// The copy of the fixture that item 3's tests turn into a two-target
/// project (one copy, one cold `cargo fuzz build`), held by one test at a
/// time.
fn two_target_project() -> (std::sync::MutexGuard<'static, ()>, PathBuf) {
    let serial = lock_target("trust-two");
    (serial, copy_fixture_as("trust", "trust-two"))
}

/// `fuzz/Cargo.toml` with only the `parse` and `typed` targets.
fn two_targets(manifest: &str) -> String {
    let mut out = String::new();
    for (i, part) in manifest.split("[[bin]]").enumerate() {
        if i == 0 {
            out.push_str(part);
        } else if part.contains("name = \"parse\"") || part.contains("name = \"typed\"") {
            out.push_str("[[bin]]");
            out.push_str(part);
        }
    }
    out
}

/// An input of `typed` that panics, `[Push(7), Push(9), Check(0x1234)]`:
/// the top-level list takes the rest of the input, each element after a
/// byte whose low bit says one follows; an element is a u32 choosing the
/// variant (`(n * 3) >> 32`) and its payload.
fn typed_crash() -> Vec<u8> {
    let mut data = Vec::new();
    for (variant, payload) in [(0u32, 7u16), (0, 9), (0xAAAA_AAAB, 0x1234)] {
        data.push(1);
        data.extend_from_slice(&variant.to_le_bytes());
        data.extend_from_slice(&payload.to_le_bytes());
    }
    data.push(0);
    data.extend_from_slice(b"bytes the decoder never reads");
    data
}

/// The binary is libFuzzer's (not our driver, which refuses to run alone).
fn is_libfuzzer(binary: &Path) -> Result<(), Failed> {
    let out = Command::new(binary).arg("-runs=0").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    check(
        out.status.success() && stderr.contains("INFO: Running with"),
        || {
            format!(
                "{} is not libFuzzer's binary: {:?}\n{stderr}",
                binary.display(),
                out.status
            )
        },
    )
}

// ------------------------------------------------------------------ 4

/// A record that says a passing file crashes (edited, copied from another
/// machine, left by a build the hash did not catch) made `--each` write a
/// non-crashing `<file>.reduced`, list it as reduced, and exit 0.
fn item4_stale_record() -> Result<(), Failed> {
    let root = trust();
    let _serial = lock_target("parse");
    let dir = root.join("fuzz/artifacts/parse");
    let crash = artifact(root, "parse", "crash-item4", &unwrapping("item4"));
    let pass = artifact(root, "parse", "crash-item4-passes", &passing("item4"));
    let dir_arg = dir.display().to_string();
    let r = run(&["--each", "--message-format", "json", &dir_arg], root);
    r.assert_code(0);
    check(!reduced_path(&pass).exists(), || r.describe())?;
    // The passing file's record now claims the crash.
    let record_of = |p: &Path| {
        let sha = sha1(p);
        dir.join(".reduce-crash").join(format!("{sha}.json"))
    };
    let crash_record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(record_of(&crash)).unwrap()).unwrap();
    let mut stale: serde_json::Value =
        serde_json::from_slice(&std::fs::read(record_of(&pass)).unwrap()).unwrap();
    stale["classification"] = crash_record["classification"].clone();
    std::fs::write(record_of(&pass), serde_json::to_vec_pretty(&stale).unwrap()).unwrap();
    let _ = std::fs::remove_file(reduced_path(&crash));

    let r = run(&["--each", "--message-format", "json", &dir_arg], root);
    r.assert_no_panic();
    check(!reduced_path(&pass).exists(), || {
        format!("a non-crashing copy was written\n{}", r.describe())
    })?;
    check(r.code == Some(4), || {
        format!("expected exit 4\n{}", r.describe())
    })?;
    check(reduced_path(&crash).exists(), || {
        format!("the real crash was not reduced\n{}", r.describe())
    })?;
    check(
        r.stderr
            .contains("does not crash `parse` as it was classified"),
        || r.describe(),
    )?;
    // The stale record is gone: the next run classifies the file again.
    let r = run(&["--each", "--message-format", "json", &dir_arg], root);
    r.assert_code(0);
    let rows: Vec<serde_json::Value> = r
        .json()
        .into_iter()
        .filter(|v| {
            v["reason"] == "artifact"
                && v["path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with("crash-item4-passes"))
        })
        .collect();
    check(
        rows.len() == 1 && rows[0]["status"] == "pass" && rows[0]["cached"] == false,
        || format!("{rows:?}\n{}", r.describe()),
    )?;
    check(!reduced_path(&pass).exists(), || r.describe())?;
    std::fs::remove_file(&crash).unwrap();
    std::fs::remove_file(&pass).unwrap();
    let _ = std::fs::remove_file(reduced_path(&crash));
    Ok(())
}

// ------------------------------------------------------------------ 5

/// A panic whose unwinding panics again aborts; the driver reported
/// `abort` with no location, and two different first panics fell into one
/// bucket, where libFuzzer reports each first panic's location.
fn item5_double_panic() -> Result<(), Failed> {
    let (root, bins) = trust_built();
    let dir = root.join("fuzz/artifacts/double_panic");
    let _ = std::fs::remove_dir_all(&dir);
    let a = artifact(
        root,
        "double_panic",
        "crash-a",
        b"A-G-first-bug-with-padding",
    );
    let b = artifact(
        root,
        "double_panic",
        "crash-b",
        b"B-G-second-bug-with-padding",
    );
    let r = run_default(
        &["--message-format", "json", &dir.display().to_string()],
        root,
    );
    r.assert_code(0);
    let buckets: Vec<serde_json::Value> = r
        .json()
        .into_iter()
        .filter(|v| v["reason"] == "bucket")
        .collect();
    check(buckets.len() == 2, || {
        format!("expected two buckets\n{}", r.describe())
    })?;
    for (file, check_fn) in [(&a, "check_a"), (&b, "check_b")] {
        let real = real::judge(root, &bins.join("double_panic"), file, &[]);
        check(real.verdict.kind == "panic", || {
            format!("{:?}\n{}", real.verdict, real.output)
        })?;
        let line = real.verdict.frame.clone().unwrap();
        let ours = buckets
            .iter()
            .find(|b| {
                b["signature"]["location"]
                    .as_str()
                    .is_some_and(|s| s.ends_with(&line))
            })
            .ok_or_else(|| {
                format!(
                    "no bucket at libFuzzer's {line} ({check_fn})\n{}",
                    r.describe()
                )
            })?;
        check(ours["signature"]["kind"] == "panic", || format!("{ours}"))?;
        // The reduced input panics there under libFuzzer too.
        let reduced = reduced_path(file);
        let again = real::judge(root, &bins.join("double_panic"), &reduced, &[]);
        check(again.verdict == real.verdict, || {
            format!(
                "{:?} vs {:?}\n{}",
                again.verdict, real.verdict, again.output
            )
        })?;
    }
    Ok(())
}

/// With `std::panic::set_hook(Box::new(|_| {}))` in the target (in `init:`,
/// or by its first input), every panic became "<panic without hook>" and an
/// `unwrap` on `None` was "reduced" into an input that hits another panic.
fn item5_silent_hook() -> Result<(), Failed> {
    let (root, bins) = trust_built();
    for target in ["silent_hook", "lazy_hook"] {
        let mut data = b"N".to_vec();
        data.extend(passing(target));
        let a = artifact(root, target, "crash-n", &data);
        for mode in ["location", "message"] {
            let _ = std::fs::remove_file(reduced_path(&a));
            let r = run_default(
                &[
                    "--match",
                    mode,
                    "--message-format",
                    "json",
                    &a.display().to_string(),
                ],
                root,
            );
            r.assert_code(0);
            let sig = r.message("reduce-finished")["signature"].clone();
            let at = sig["location"].as_str().unwrap_or_default();
            let unwrap = sig["message"]
                .as_str()
                .unwrap_or_default()
                .contains("unwrap");
            check(
                unwrap && at.contains(&format!("fuzz_targets/{target}.rs")),
                || format!("{target}: signature {sig}\n{}", r.describe()),
            )?;
            let result = std::fs::read(reduced_path(&a)).unwrap();
            check(result == b"N", || {
                format!(
                    "{target} --match {mode}: result {result:?}\n{}",
                    r.describe()
                )
            })?;
            let real = real::judge(root, &bins.join(target), &reduced_path(&a), &[]);
            check(real.verdict.kind == "deadly-signal", || {
                format!("{target}: {:?}\n{}", real.verdict, real.output)
            })?;
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ 6

/// A FIFO given as the artifact blocked forever in `open()` (SIGTERM and
/// SIGINT ignored); `/dev/zero` was read until memory ran out.
fn item6_non_regular() -> Result<(), Failed> {
    let root = trust();
    let _serial = lock_target("parse");
    let dir = scratch("item6");
    let fifo = dir.join("crash-fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for (input, kind) in [
        (fifo.as_path(), "named pipe"),
        (Path::new("/dev/zero"), "device"),
    ] {
        let started = Instant::now();
        let r = run(
            &[
                "--fuzz-target",
                "parse",
                "--fuzz-dir",
                &root.join("fuzz").display().to_string(),
                &input.display().to_string(),
            ],
            root,
        );
        r.assert_no_panic();
        check(
            r.code == Some(5) && r.stderr.contains(kind) && r.error_lines().len() == 1,
            || format!("expected exit 5 naming a {kind}\n{}", r.describe()),
        )?;
        check(started.elapsed() < Duration::from_secs(60), || r.describe())?;
    }
    // In a directory run, a FIFO named like an artifact is its own row.
    let arts = root.join("fuzz/artifacts/parse");
    let _ = std::fs::remove_dir_all(&arts);
    artifact(root, "parse", "crash-real", &unwrapping("item6"));
    let pipe = arts.join("crash-pipe");
    let c = std::ffi::CString::new(pipe.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let r = run(&[arts.display().to_string()], root);
    r.assert_no_panic().assert_code(0);
    std::fs::remove_dir_all(&arts).unwrap();
    Ok(())
}

// ------------------------------------------------------------------ 7

/// An artifact deleted while a directory run was classifying stopped the
/// whole run with exit 5.
fn item7_vanishing() -> Result<(), Failed> {
    let root = trust();
    let _serial = lock_target("parse");
    let arts = root.join("fuzz/artifacts/parse");
    let _ = std::fs::remove_dir_all(&arts);
    // Each takes about a second to classify (3 runs of a 300 ms line).
    let mut paths = Vec::new();
    for i in 0..4 {
        let mut data = b"SLOW\n".to_vec();
        data.extend(unwrapping(&format!("item7-{i}")));
        paths.push(artifact(root, "parse", &format!("crash-{i}"), &data));
    }
    let last = paths.last().unwrap().clone();
    // (Human output: the `Found` line is on stderr, where the table ends up.)
    let args = with_target_dir(&["-j", "1", &arts.display().to_string()]);
    let started = Instant::now();
    let mut child = command(&args, root).spawn().unwrap();
    // Once the run has found them, the last one disappears.
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let mut deleted = false;
    loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            break;
        }
        seen.push_str(&line);
        if line.contains("Found") {
            std::fs::remove_file(&last).unwrap();
            deleted = true;
            break;
        }
    }
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let out = child.wait_with_output().unwrap();
    seen.push_str(&rest.join().unwrap());
    let r = Run {
        args,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: seen,
        elapsed: started.elapsed(),
    };
    r.assert_no_panic();
    check(deleted, || format!("no `Found` line\n{}", r.describe()))?;
    check(r.code == Some(0), || {
        format!("expected exit 0\n{}", r.describe())
    })?;
    let row = r
        .stderr
        .lines()
        .find(|l| l.contains("crash-3"))
        .ok_or_else(|| format!("no row for the vanished artifact\n{}", r.describe()))?;
    check(
        row.contains("unreadable") && row.contains("does not exist"),
        || r.describe(),
    )?;
    check(reduced_path(&paths[0]).exists(), || {
        format!("the rest was not reduced\n{}", r.describe())
    })?;
    std::fs::remove_dir_all(&arts).unwrap();
    Ok(())
}

// ------------------------------------------------------------------ 8

/// From inside `fuzz/` the reproduce line said `--fuzz-dir= parse …`,
/// which cargo-fuzz rejects; `--rss-limit-mb`/`--malloc-limit-mb` were
/// left out of it.
fn item8_reproduce_line() -> Result<(), Failed> {
    let (root, _) = trust_built();
    let fuzz = root.join("fuzz");
    let a = artifact(root, "parse", "crash-item8", &unwrapping("item8"));
    let r = run_default(
        &[
            "--rss-limit-mb",
            "300",
            "--message-format",
            "json",
            "artifacts/parse/crash-item8",
            "--",
            "-malloc_limit_mb=200",
        ],
        &fuzz,
    );
    r.assert_code(0);
    let line = r.message("reduce-finished")["reproduce"]
        .as_str()
        .unwrap()
        .to_owned();
    check(!line.contains("--fuzz-dir"), || line.clone())?;
    check(
        line.ends_with("-- -rss_limit_mb=300 -malloc_limit_mb=200"),
        || line.clone(),
    )?;
    // cargo-fuzz takes it, from there, and reproduces the crash.
    let words: Vec<&str> = line.split(' ').collect();
    check(words[0] == "cargo", || line.clone())?;
    let out = Command::new("cargo")
        .args(&words[1..])
        .arg("-runs=1")
        .current_dir(&fuzz)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    check(
        !out.status.success() && stderr.contains("panicked at") && stderr.contains("src/lib.rs"),
        || {
            format!(
                "`{line}` did not reproduce the crash: {:?}\n{stderr}",
                out.status
            )
        },
    )?;
    check(
        stderr.contains("-rss_limit_mb=300") || stderr.contains("rss_limit_mb"),
        || stderr.to_string(),
    )?;
    let _ = std::fs::remove_file(reduced_path(&a));
    Ok(())
}

// ------------------------------------------------------------------ 9

/// `--emit-test` for a bug only AddressSanitizer sees wrote a test that
/// passes under plain `cargo test`, its comment saying "it fails while the
/// bug is there".
fn item9_sanitizer_test() -> Result<(), Failed> {
    // The copy `faithful.rs` builds too (its `cargo fuzz build` is reused).
    let root = copy_fixture("asan");
    real::cargo_fuzz_build(&root);
    let dir = root.join("fuzz/artifacts/heap_overflow");
    std::fs::create_dir_all(&dir).unwrap();
    let found = std::fs::read_dir(root.join("found/heap_overflow"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .min()
        .unwrap();
    let a = dir.join(found.file_name().unwrap());
    std::fs::copy(&found, &a).unwrap();
    let test = root.join("fuzz/tests/heap_item9.rs");
    let r = run_default(
        &[
            "--emit-test",
            &test.display().to_string(),
            &a.display().to_string(),
        ],
        &root,
    );
    r.assert_code(0);
    let source = std::fs::read_to_string(&test).unwrap();
    check(
        source.contains("PASSES even while the bug is there"),
        || source.clone(),
    )?;
    check(
        !source.contains("It fails while the bug is there and passes"),
        || source.clone(),
    )?;
    check(r.stderr.contains("a plain `cargo test` passes it"), || {
        r.describe()
    })?;
    // The command the file gives fails (AddressSanitizer's report)...
    let command = source
        .lines()
        .map(|l| l.trim_start_matches("//!").trim())
        .find(|l| l.starts_with("`RUSTFLAGS="))
        .ok_or_else(|| source.clone())?
        .trim_matches('`')
        .to_owned();
    let out = Command::new("sh")
        .args(["-c", &command])
        .current_dir(&root)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env("CARGO_TARGET_DIR", root.join("fuzz/target-item9-asan"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    check(
        !out.status.success() && format!("{stdout}{stderr}").contains("AddressSanitizer"),
        || {
            format!(
                "`{command}` did not fail with AddressSanitizer's report: {:?}\n{stdout}\n{stderr}",
                out.status
            )
        },
    )?;
    // ...and a plain `cargo test` passes, as the file says.
    let out = Command::new("cargo")
        .args(["test", "--manifest-path"])
        .arg(root.join("fuzz/Cargo.toml"))
        .args(["--test", "heap_item9"])
        .current_dir(&root)
        .env_remove("RUSTFLAGS")
        .env("CARGO_TARGET_DIR", root.join("fuzz/target-item9-plain"))
        .output()
        .unwrap();
    check(out.status.success(), || {
        format!(
            "plain cargo test: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    Ok(())
}

// ------------------------------------------------------------------ 10

/// `--max-time 0` wrote an unreduced copy and exited 0; `-o` into a missing
/// directory and a result name longer than NAME_MAX failed only after the
/// whole reduction; "Building" was printed when nothing was rebuilt.
fn item10_early() -> Result<(), Failed> {
    let root = trust();
    let _serial = lock_target("parse");
    let a = artifact(root, "parse", "crash-item10", &unwrapping("item10"));
    let a_arg = a.display().to_string();
    for budget in [["--max-time", "0"], ["--max-tests", "0"]] {
        let r = run(&[budget[0], budget[1], &a_arg], root);
        r.assert_no_panic();
        check(r.code == Some(2) && r.stderr.contains(budget[0]), || {
            r.describe()
        })?;
        check(!reduced_path(&a).exists(), || r.describe())?;
    }
    let missing = root.join("no/such/dir/out");
    let long = a.with_file_name("x".repeat(300));
    for out in [&missing, &long] {
        let r = run(&["-o", &out.display().to_string(), &a_arg], root);
        r.assert_no_panic();
        check(r.code == Some(5) && r.error_lines().len() == 1, || {
            r.describe()
        })?;
        check(
            !r.stderr.contains("Reproduced") && !r.stderr.contains("Building"),
            || format!("refused only after starting\n{}", r.describe()),
        )?;
    }
    // A second run on an unchanged target builds nothing and says so.
    run(&[&a_arg], root).assert_code(0);
    let r = run(&[&a_arg], root);
    r.assert_code(0);
    check(
        r.stderr.contains("Fresh") && !r.stderr.contains("Building"),
        || r.describe(),
    )?;
    std::fs::remove_file(reduced_path(&a)).unwrap();
    Ok(())
}

/// A SIGABRT handler of the target's that calls `_exit(0)` hides aborts and
/// panics from libFuzzer (its panic hook aborts); they were reported as
/// crashes the real binary does not see.
fn item10_abrt_exit() -> Result<(), Failed> {
    let (root, bins) = trust_built();
    for (name, data) in [
        ("crash-abort", &b"A and more"[..]),
        ("crash-panic", &b"P and more"[..]),
    ] {
        let a = artifact(root, "abrt_exit", name, data);
        // libFuzzer reports nothing and exits 0 (the panic hook's message is
        // printed before the abort the handler turns into `_exit(0)`).
        let real = real::judge(root, &bins.join("abrt_exit"), &a, &[]);
        let reported = ["ERROR: libFuzzer", "deadly signal", "Test unit written"]
            .iter()
            .any(|s| real.output.contains(s));
        check(real.exit == Some(0) && !reported, || {
            format!("{:?} {:?}\n{}", real.verdict, real.exit, real.output)
        })?;
        let r = run_default(&[a.display().to_string()], root);
        r.assert_no_panic();
        check(r.code == Some(3), || {
            format!("expected exit 3 (no crash)\n{}", r.describe())
        })?;
        check(!reduced_path(&a).exists(), || r.describe())?;
    }
    Ok(())
}

// ------------------------------------------------------------------ 11

/// `cargo fuzz init --fuzz-engine libafl` writes
/// `libfuzzer-sys = { version = "…", package = "libafl_libfuzzer" }`; the
/// stand-in patched only the package named `libfuzzer-sys`. Both builds
/// reduce such a project (the faithful one patches `libafl_libfuzzer`
/// itself, so LibAFL's runtime, which needs libclang, is never built).
fn item11_libafl() -> Result<(), Failed> {
    let root = copy_fixture_as("trust", "trust-libafl");
    let manifest = root.join("fuzz/Cargo.toml");
    let text = two_targets(&std::fs::read_to_string(&manifest).unwrap()).replace(
        "libfuzzer-sys = \"0.4\"",
        "libfuzzer-sys = { version = \"0.15.3\", package = \"libafl_libfuzzer\" }",
    );
    std::fs::write(&manifest, text).unwrap();
    let _ = std::fs::remove_file(root.join("fuzz/Cargo.lock"));
    let a = artifact(&root, "parse", "crash-l", &unwrapping("item11"));
    for build in [&[][..], &["-s", "none"][..]] {
        let _ = std::fs::remove_file(reduced_path(&a));
        let mut args: Vec<String> = build.iter().map(|s| s.to_string()).collect();
        args.push(a.display().to_string());
        let r = run_default(&args, &root);
        r.assert_no_panic().assert_code(0);
        let result = std::fs::read(reduced_path(&a)).unwrap();
        check(result == b"U", || {
            format!("{build:?}: {result:?}\n{}", r.describe())
        })?;
        if build.is_empty() {
            check(
                r.stderr.contains("AddressSanitizer") && !r.stderr.contains("cannot be replaced"),
                || format!("not the faithful build\n{}", r.describe()),
            )?;
        }
    }
    // The user's lockfile was never written (there is none: it stays so).
    check(!root.join("fuzz/Cargo.lock").exists(), || {
        "a Cargo.lock appeared".into()
    })?;
    Ok(())
}
