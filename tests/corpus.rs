//! `--corpus`: shrinking a fuzzing corpus while keeping its coverage.
//!
//! The corpus is a set of INI files for the bundled example project's `parse`
//! target (copied; the source tree is never touched). Coverage is re-measured
//! *independently* of this tool: the test builds the target exactly as
//! `cargo fuzz build -s none` does (libFuzzer linked in, cargo-fuzz's
//! instrumentation flags, no cargo-fuzz needed) and compares libFuzzer's own
//! `cov:` and `ft:` counts for the old and the new corpus (`-runs=0` loads a
//! corpus, reports its coverage and exits): never lower.

mod common;
#[path = "common/ini.rs"]
mod ini;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The example project, copied once per test process.
fn example() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("example");
        let root = tmp_root().join("fixtures").join("example-corpus");
        sync_tree(&src, &root);
        root
    })
}

/// Writes `n` documents into a fresh `dir`.
fn write_corpus(dir: &Path, seed: &str, n: usize) -> Vec<(PathBuf, Vec<u8>)> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).unwrap();
    }
    std::fs::create_dir_all(dir).unwrap();
    let mut rng = Rng::from_state(Rng::from_name(seed).next_u64());
    (0..n)
        .map(|i| {
            let bytes = ini::ini_document(&mut rng);
            let path = dir.join(format!("seed-{i:02}"));
            std::fs::write(&path, &bytes).unwrap();
            (path, bytes)
        })
        .collect()
}

fn host_triple() -> String {
    let out = Command::new("rustc").arg("-vV").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .unwrap()
}

/// The `parse` target built as `cargo fuzz build -s none parse` builds it
/// (cargo-fuzz 0.13's default release flags), with libFuzzer.
fn libfuzzer_binary() -> &'static PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let target_dir = tmp_root().join("example-libfuzzer");
        let triple = host_triple();
        let flags = [
            "-Cpasses=sancov-module",
            "-Cllvm-args=-sanitizer-coverage-level=4",
            "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
            "-Cllvm-args=-sanitizer-coverage-pc-table",
            "-Cllvm-args=-sanitizer-coverage-trace-compares",
            "--cfg",
            "fuzzing",
            "-Cllvm-args=-simplifycfg-branch-fold-threshold=0",
            "-Cllvm-args=-sanitizer-coverage-stack-depth",
            "-Cdebug-assertions",
            "-Ccodegen-units=1",
        ];
        let status = Command::new(env!("CARGO"))
            .args(["build", "--release", "--bin", "parse", "--target", &triple])
            .arg("--manifest-path")
            .arg(example().join("fuzz/Cargo.toml"))
            .arg("--target-dir")
            .arg(&target_dir)
            .env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"))
            .env_remove("RUSTFLAGS")
            .status()
            .unwrap();
        assert!(status.success(), "building the libFuzzer binary failed");
        target_dir.join(triple).join("release/parse")
    })
}

/// libFuzzer's `(cov, ft)` for a corpus directory, on the `-s none` build.
fn libfuzzer_coverage(dir: &Path) -> (u64, u64) {
    common::real::libfuzzer_counts(libfuzzer_binary(), dir)
}

fn total_bytes(dir: &Path) -> (usize, usize) {
    let mut files = 0;
    let mut bytes = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            files += 1;
            bytes += std::fs::read(e.path()).unwrap().len();
        }
    }
    (files, bytes)
}

#[test]
fn shrinking_keeps_libfuzzers_coverage_with_fewer_bytes() {
    let fuzz = example().join("fuzz");
    let corpus = fuzz.join("corpus/parse");
    let output = fuzz.join("corpus/parse.reduced");
    let _ = std::fs::remove_dir_all(&output);
    let originals = write_corpus(&corpus, "corpus-ini", 24);

    let run = run(
        &["--corpus", "fuzz/corpus/parse", "--message-format", "json"],
        example(),
    );
    run.assert_code(0).assert_no_panic();
    let done = run.message("corpus-finished");
    let (files_before, bytes_before) = total_bytes(&corpus);
    let (files_after, bytes_after) = total_bytes(&output);
    assert_eq!(done["files_before"], files_before);
    assert_eq!(done["files_after"], files_after);
    assert_eq!(done["bytes_after"], bytes_after);
    // No feature lost (a shorter entry may reach more: an error path).
    assert!(done["features_after"].as_u64() >= done["features_before"].as_u64());
    assert!(done["failed"].as_array().unwrap().is_empty());

    // Independently: libFuzzer counts the same coverage for both corpora.
    let before = libfuzzer_coverage(&corpus);
    let after = libfuzzer_coverage(&output);
    eprintln!(
        "corpus: {files_before} files, {bytes_before} bytes -> {files_after} files, \
         {bytes_after} bytes; libFuzzer (cov, ft) {before:?} -> {after:?}"
    );
    assert!(
        after.0 >= before.0 && after.1 >= before.1,
        "libFuzzer's cov/ft must not fall: {before:?} -> {after:?}"
    );
    assert!(before.1 > 50, "a real corpus: {before:?}");
    assert!(
        bytes_after * 3 < bytes_before,
        "{bytes_after} of {bytes_before} bytes"
    );
    assert!(files_after < files_before);
    // New entries are named like libFuzzer names them (SHA-1 of contents).
    for e in std::fs::read_dir(&output).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        assert_eq!(name.len(), 40, "{name}");
    }
    // The old corpus is untouched.
    for (path, bytes) in &originals {
        assert_eq!(&std::fs::read(path).unwrap(), bytes);
    }
    assert_eq!(
        total_bytes(&corpus),
        (24, originals.iter().map(|o| o.1.len()).sum())
    );
}

/// `-j 2`: two drivers share the work, and the corpus they write is the one
/// a single driver writes (entries are shrunk independently).
#[test]
fn two_drivers_write_what_one_driver_writes() {
    let fuzz = example().join("fuzz");
    let corpus = fuzz.join("corpus/jobs");
    write_corpus(&corpus, "corpus-jobs", 30);
    let mut outputs = Vec::new();
    for jobs in ["1", "2"] {
        let out = fuzz.join(format!("corpus/jobs.j{jobs}"));
        let _ = std::fs::remove_dir_all(&out);
        let run = run(
            &[
                "--corpus",
                "fuzz/corpus/jobs",
                "-t",
                "parse",
                "-j",
                jobs,
                "-o",
                out.to_str().unwrap(),
                "--message-format",
                "json",
            ],
            example(),
        );
        run.assert_code(0).assert_no_panic();
        let done = run.message("corpus-finished");
        assert_eq!(done["drivers"], jobs.parse::<u64>().unwrap(), "{done}");
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().into_string().unwrap(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        outputs.push(files);
    }
    assert!(!outputs[0].is_empty());
    assert_eq!(
        outputs[0], outputs[1],
        "-j 1 and -j 2 wrote different corpora"
    );
}

#[test]
fn in_place_replaces_the_corpus_only_after_verifying_it() {
    let fuzz = example().join("fuzz");
    let corpus = fuzz.join("corpus/in-place");
    write_corpus(&corpus, "corpus-in-place", 12);
    let before = libfuzzer_coverage(&corpus);
    let (files_before, bytes_before) = total_bytes(&corpus);
    let run = run(
        &[
            "--corpus",
            "fuzz/corpus/in-place",
            "-t",
            "parse",
            "--in-place",
            "--message-format",
            "json",
        ],
        example(),
    );
    run.assert_code(0).assert_no_panic();
    let done = run.message("corpus-finished");
    assert_eq!(done["replaced"], true);
    let (files_after, bytes_after) = total_bytes(&corpus);
    assert!(files_after <= files_before && bytes_after < bytes_before);
    let after = libfuzzer_coverage(&corpus);
    assert!(
        after.0 >= before.0 && after.1 >= before.1,
        "{before:?} -> {after:?}"
    );
    // Nothing left beside it: no temporary or backup directory.
    let leftovers: Vec<String> = std::fs::read_dir(fuzz.join("corpus"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// libFuzzer reads corpora recursively: entries in subdirectories count
/// (they used to be dropped by `--in-place`, and libFuzzer's coverage fell);
/// a corpus behind a symbolic link is replaced where the link points; a
/// staging directory a killed run left beside it is removed.
#[test]
fn subdirectories_links_and_leftovers_as_libfuzzer_sees_them() {
    let fuzz = example().join("fuzz");
    let real_dir = fuzz.join("corpus-store/linked");
    let link = fuzz.join("corpus/linked");
    let _ = std::fs::remove_file(&link);
    let originals = write_corpus(&real_dir, "corpus-linked", 10);
    // Half the documents move one and two levels down.
    for (i, (path, _)) in originals.iter().enumerate().filter(|(i, _)| i % 2 == 1) {
        let sub = real_dir.join(if i % 4 == 1 { "sub" } else { "sub/deeper" });
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::rename(path, sub.join(path.file_name().unwrap())).unwrap();
    }
    // A hidden directory libFuzzer skips.
    std::fs::create_dir_all(real_dir.join(".hidden")).unwrap();
    std::fs::write(real_dir.join(".hidden/skipped"), b"[never]\nread=1\n").unwrap();
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real_dir, &link).unwrap();
    let stale = fuzz.join("corpus-store/.reduce-crash-corpus-killed");
    std::fs::create_dir_all(&stale).unwrap();
    let before = libfuzzer_coverage(&real_dir);
    let run = run(
        &[
            "--corpus",
            "fuzz/corpus/linked",
            "-t",
            "parse",
            "--in-place",
            "--message-format",
            "json",
        ],
        example(),
    );
    run.assert_code(0).assert_no_panic();
    let done = run.message("corpus-finished");
    assert_eq!(done["files_before"], 10, "{done}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let after = libfuzzer_coverage(&real_dir);
    eprintln!("linked corpus: libFuzzer (cov, ft) {before:?} -> {after:?}");
    assert!(
        after.0 >= before.0 && after.1 >= before.1,
        "{before:?} -> {after:?}"
    );
    assert!(
        !stale.exists(),
        "the killed run's staging directory is still there"
    );
    let _ = std::fs::remove_file(&link);
}

#[test]
fn crashing_entries_are_left_out_and_listed() {
    let fuzz = example().join("fuzz");
    let corpus = fuzz.join("corpus/with-crash");
    let output = fuzz.join("corpus/with-crash.out");
    let _ = std::fs::remove_dir_all(&output);
    write_corpus(&corpus, "corpus-with-crash", 6);
    std::fs::write(corpus.join("crashes"), b"[s]\nname = \"unterminated\n").unwrap();
    let run = run(
        &[
            "--corpus",
            "fuzz/corpus/with-crash",
            "-t",
            "parse",
            "-o",
            "fuzz/corpus/with-crash.out",
        ],
        example(),
    );
    run.assert_code(0).assert_no_panic();
    assert!(
        run.stderr.contains("left out") && run.stderr.contains("crashes"),
        "{}",
        run.describe()
    );
    let kept: Vec<Vec<u8>> = std::fs::read_dir(&output)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert!(!kept.is_empty());
    assert!(kept.iter().all(|k| !contains(k, b"\"unterminated")));
}

#[test]
fn bad_corpus_arguments_are_one_line_errors() {
    let fuzz = example().join("fuzz");
    let run1 = run(&["--corpus", "fuzz/corpus/nope", "-t", "parse"], example());
    run1.assert_code(5).assert_no_panic();
    assert_eq!(run1.error_lines().len(), 1, "{}", run1.describe());
    assert!(run1.stderr.contains("does not exist"));

    let corpus = fuzz.join("corpus/exists");
    write_corpus(&corpus, "corpus-exists", 2);
    let occupied = fuzz.join("corpus/occupied");
    std::fs::create_dir_all(&occupied).unwrap();
    std::fs::write(occupied.join("precious"), b"keep me").unwrap();
    let run2 = run(
        &[
            "--corpus",
            "fuzz/corpus/exists",
            "-t",
            "parse",
            "-o",
            "fuzz/corpus/occupied",
        ],
        example(),
    );
    run2.assert_code(5).assert_no_panic();
    assert!(run2.stderr.contains("not empty"), "{}", run2.describe());
    assert_eq!(
        std::fs::read(occupied.join("precious")).unwrap(),
        b"keep me"
    );

    let run3 = run(&["--corpus"], example());
    run3.assert_code(7).assert_no_panic();
    assert!(run3.stderr.contains("--fuzz-target"), "{}", run3.describe());
}

/// Stopped early (`--max-time`, Ctrl-C, SIGTERM), `--corpus` still writes a
/// corpus that keeps every feature libFuzzer counts: the entries it had not
/// shrunk yet are kept whole.
#[test]
fn stopped_early_it_keeps_every_feature() {
    let fuzz = example().join("fuzz");
    let corpus = fuzz.join("corpus/stop");
    let originals = write_corpus(&corpus, "corpus-stop", 240);
    let before = libfuzzer_coverage(&corpus);
    let whole: std::collections::HashSet<Vec<u8>> =
        originals.iter().map(|(_, b)| b.clone()).collect();
    // What a stopped run wrote: libFuzzer's counts, and how many entries
    // are originals kept whole.
    let check = |out: &Path, how: &str, describe: &dyn Fn() -> String| {
        let after = libfuzzer_coverage(out);
        assert!(
            after.0 >= before.0 && after.1 >= before.1,
            "{how}: libFuzzer's cov/ft fell {before:?} -> {after:?}\n{}",
            describe()
        );
        let kept_whole = std::fs::read_dir(out)
            .unwrap()
            .filter(|e| whole.contains(&std::fs::read(e.as_ref().unwrap().path()).unwrap()))
            .count();
        eprintln!("{how}: {kept_whole} entries kept whole, (cov, ft) {before:?} -> {after:?}");
        kept_whole
    };

    // --max-time: exit 0, `interrupted` in the summary line.
    let out = fuzz.join("corpus/stop.max-time");
    let _ = std::fs::remove_dir_all(&out);
    let r = run(
        &[
            "--corpus",
            "fuzz/corpus/stop",
            "-o",
            "fuzz/corpus/stop.max-time",
            "--max-time",
            "1",
            "-j",
            "1",
            "--message-format",
            "json",
        ],
        example(),
    );
    r.assert_code(0).assert_no_panic();
    let done = r.message("corpus-finished");
    // The deadline stopped shrinking: entries cut short, or never reached
    // (more originals than those kept whole because each alone reaches some
    // code).
    let kept_whole = check(&out, "--max-time 1", &|| r.describe());
    let by_rule = done["kept_whole"].as_u64().unwrap();
    assert!(
        done["budget_hit"].as_u64().unwrap() + (kept_whole as u64).saturating_sub(by_rule) > 0,
        "{done}"
    );

    // Ctrl-C and SIGTERM a second into the run: exit 130, a corpus written.
    for (signal, name) in [(libc::SIGINT, "ctrl-c"), (libc::SIGTERM, "sigterm")] {
        let out_rel = format!("fuzz/corpus/stop.{name}");
        let out = example().join(&out_rel);
        let _ = std::fs::remove_dir_all(&out);
        let args = with_target_dir(&[
            "--corpus",
            "fuzz/corpus/stop",
            "-o",
            &out_rel,
            "-j",
            "1",
            "--message-format",
            "json",
        ]);
        let started = std::time::Instant::now();
        let child = command(&args, example()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
        let r = finish(child, args, started, std::time::Duration::from_secs(60));
        r.assert_no_panic();
        r.assert_code(130);
        check(&out, name, &|| r.describe());
    }
    // The corpus itself is untouched.
    for (path, bytes) in &originals {
        assert_eq!(&std::fs::read(path).unwrap(), bytes);
    }
}
