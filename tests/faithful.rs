//! Acceptance tests of the default build, judged by the real thing.
//!
//! `cargo reduce-crash <artifact>` with no flags reduces artifacts that the
//! default `cargo fuzz run` (nightly, AddressSanitizer) found in
//! `tests/fixtures/asan` and `tests/fixtures/oldstyle`; each result is run
//! by the target built exactly as `cargo fuzz build` builds it
//! (`common::real`), which must report the same kind of crash and the same
//! first frame in the fixture's code as for the original.
//!
//! A custom harness (libtest-mimic): on a machine without a nightly
//! toolchain or cargo-fuzz, the tests that need the real build are reported
//! as *ignored*, with the reason on one line, never as passed. The test of
//! the stable fallback always runs (it hides nightly behind a `RUSTUP_HOME`
//! with only the stable toolchain).

mod common;

use common::real::{self, Verdict};
use common::*;
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn main() {
    let args = Arguments::from_args();
    let judged = judged_trials("faithful");
    let trials = vec![
        judged("heap_overflow_only_asan_sees", heap_overflow),
        judged("use_after_free_only_asan_sees", use_after_free),
        judged("short_inputs_overflow_as_under_libfuzzer", short_inputs),
        judged("deep_nesting_is_minimal_in_depth", deep_nesting),
        judged("small_frame_overflows_reproduce_every_time", small_frames),
        judged("slow_loop_still_times_out_at_its_timeout", slow_loop),
        judged("trusted_length_is_a_malloc_limit_oom", trusted_length),
        judged(
            "crashes_on_most_candidates_fork_instead_of_restart",
            most_asan,
        ),
        judged("old_style_target_reduces_and_reproduces", old_style),
        judged("own_global_allocator_in_the_default_build", own_allocator),
        judged(
            "a_changed_target_is_never_judged_by_its_old_driver",
            changed_target,
        ),
        Trial::test(
            "without_nightly_one_note_and_documented_exit_codes",
            without_nightly,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

// ------------------------------------------------------------------ fixtures

struct Built {
    root: PathBuf,
    /// Where `cargo fuzz build` put the real binaries.
    bins: PathBuf,
}

/// The fixture copied once and built once by `cargo +nightly fuzz build`.
fn built(name: &'static str) -> &'static Built {
    static ASAN: OnceLock<Built> = OnceLock::new();
    static OLD: OnceLock<Built> = OnceLock::new();
    let cell = match name {
        "asan" => &ASAN,
        "oldstyle" => &OLD,
        _ => unreachable!(),
    };
    cell.get_or_init(|| {
        let root = copy_fixture(name);
        let bins = real::cargo_fuzz_build(&root);
        Built { root, bins }
    })
}

/// Puts `found/<target>/<file>` into `fuzz/artifacts/<target>/` (and
/// removes an earlier result) and returns its path.
fn place(b: &Built, target: &str, file: &str) -> PathBuf {
    let dir = b.root.join("fuzz/artifacts").join(target);
    std::fs::create_dir_all(&dir).unwrap();
    let to = dir.join(file);
    std::fs::copy(b.root.join("found").join(target).join(file), &to).unwrap();
    let _ = std::fs::remove_file(reduced_path(&to));
    to
}

/// The user's files are as they were: `Cargo.lock` byte for byte (the
/// patched resolution went to a copy), and the binary `cargo fuzz build`
/// left in `release/` is still the real fuzzer, not our driver.
fn untouched(b: &Built, target: &str) -> Result<(), Failed> {
    let name = b.root.file_name().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let lock = |root: &Path| std::fs::read(root.join("fuzz/Cargo.lock")).unwrap();
    check(lock(&b.root) == lock(&source), || {
        "fuzz/Cargo.lock changed".into()
    })?;
    let out = std::process::Command::new(b.bins.join(target))
        .arg("-runs=0")
        .current_dir(&b.root)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    check(
        out.status.success() && stderr.contains("INFO: Running with"),
        || {
            format!(
                "release/{target} is not libFuzzer's binary any more: {:?}\n{stderr}",
                out.status
            )
        },
    )
}

/// `cargo reduce-crash <artifact>` with no flags.
fn reduce_as_is(root: &Path, artifact: &Path, extra: &[&str]) -> Run {
    let mut args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    args.push(artifact.display().to_string());
    let started = Instant::now();
    let child = command_as_is(&args, root).spawn().unwrap();
    finish(child, args, started, Duration::from_secs(900))
}

fn check(cond: bool, what: impl FnOnce() -> String) -> Result<(), Failed> {
    if cond {
        Ok(())
    } else {
        Err(what().into())
    }
}

/// Reduces `found/<target>/<file>` with no flags and judges original and
/// result with the real binary (libFuzzer flags `judge_args`): the same
/// verdict, of the expected kind. Returns the result's bytes and the verdict.
fn reduce_and_judge(
    b: &Built,
    target: &str,
    file: &str,
    kind: &str,
    judge_args: &[&str],
) -> Result<(Vec<u8>, Verdict, String), Failed> {
    let artifact = place(b, target, file);
    let original = std::fs::read(&artifact).unwrap();
    let run = reduce_as_is(&b.root, &artifact, &[]);
    check(run.code == Some(0), || run.describe())?;
    run.assert_no_panic();
    check(
        run.stderr
            .contains("as `cargo fuzz build` builds it (nightly, AddressSanitizer)"),
        || format!("the first status line names the build\n{}", run.describe()),
    )?;
    untouched(b, target)?;
    let result_path = reduced_path(&artifact);
    let result = std::fs::read(&result_path).unwrap();
    check(std::fs::read(&artifact).unwrap() == original, || {
        "the original was modified".into()
    })?;
    check(result.len() < original.len(), || {
        format!("{} → {} bytes", original.len(), result.len())
    })?;
    let binary = b.bins.join(target);
    let before = real::judge(&b.root, &binary, &artifact, judge_args);
    let after = real::judge(&b.root, &binary, &result_path, judge_args);
    check(before.verdict.kind == kind, || {
        format!(
            "the real binary reports {:?} for the original, expected {kind}\n{}",
            before.verdict, before.output
        )
    })?;
    check(before.verdict == after.verdict, || {
        format!(
            "original: {:?}\nresult ({} bytes {:?}): {:?}\n{}",
            before.verdict,
            result.len(),
            String::from_utf8_lossy(&result),
            after.verdict,
            after.output
        )
    })?;
    Ok((result, after.verdict, run.stderr))
}

// ------------------------------------------------------------------ the bar

fn heap_overflow() -> Result<(), Failed> {
    let b = built("asan");
    let (result, verdict, _) = reduce_and_judge(
        b,
        "heap_overflow",
        "crash-5cdf52e59b8f815ac132c2537e5e3d1cae110827",
        "heap-buffer-overflow",
        &[],
    )?;
    check(
        verdict
            .frame
            .as_deref()
            .is_some_and(|f| f.contains("chunk_checksums src/lib.rs:43:33")),
        || format!("{verdict:?}"),
    )?;
    check(result.len() <= 5, || format!("{result:?}"))
}

fn use_after_free() -> Result<(), Failed> {
    let b = built("asan");
    let (result, verdict, _) = reduce_and_judge(
        b,
        "use_after_free",
        "crash-d94ca19c8cc057998b0e1a9316885931902c1320",
        "heap-use-after-free",
        &[],
    )?;
    check(
        verdict
            .frame
            .as_deref()
            .is_some_and(|f| f.contains("src/lib.rs:86:42")),
        || format!("{verdict:?}"),
    )?;
    check(result == b"[\n[\n[\n[\n.", || {
        format!("{:?}", String::from_utf8_lossy(&result))
    })
}

/// The input reaches the target in a heap block of exactly its size, as
/// libFuzzer passes it: a read past a one-byte input is a heap-buffer-overflow
/// here too, so the reduction gets down to that one byte.
fn short_inputs() -> Result<(), Failed> {
    let b = built("asan");
    let dir = b.root.join("fuzz/artifacts/short_read");
    std::fs::create_dir_all(&dir).unwrap();
    let artifact = dir.join("crash-percent");
    std::fs::write(&artifact, b"abcdefghijklmnop%").unwrap();
    let _ = std::fs::remove_file(reduced_path(&artifact));
    let run = reduce_as_is(&b.root, &artifact, &[]);
    check(run.code == Some(0), || run.describe())?;
    let result = std::fs::read(reduced_path(&artifact)).unwrap();
    check(result == b"%", || {
        format!("{:?}", String::from_utf8_lossy(&result))
    })?;
    let binary = b.bins.join("short_read");
    let before = real::judge(&b.root, &binary, &artifact, &[]);
    let after = real::judge(&b.root, &binary, &reduced_path(&artifact), &[]);
    check(
        after.verdict.kind == "heap-buffer-overflow" && before.verdict == after.verdict,
        || {
            format!(
                "{:?} vs {:?}\n{}",
                before.verdict, after.verdict, after.output
            )
        },
    )
}

/// The stack overflow keeps exactly the depth the real binary needs:
/// removing any one nesting level makes it pass.
fn deep_nesting() -> Result<(), Failed> {
    let b = built("asan");
    let (result, verdict, _) = reduce_and_judge(
        b,
        "deep_nesting",
        "crash-076821cefe2f9be297eb1fb480fa21ff554027c3",
        "stack-overflow",
        &[],
    )?;
    check(
        verdict.frame.as_deref() == Some("asan_bugs::list_checksum"),
        || format!("{verdict:?}"),
    )?;
    let levels = result.iter().filter(|&&c| c == b'[' || c == b'{').count();
    let binary = b.bins.join("deep_nesting");
    for at in [0, result.len() / 2, result.len() - 1] {
        let mut shallower = result.clone();
        if !matches!(shallower[at], b'[' | b'{') {
            continue;
        }
        shallower.remove(at);
        let path = b
            .root
            .join(format!("fuzz/artifacts/deep_nesting/shallower-{at}"));
        std::fs::write(&path, &shallower).unwrap();
        let report = real::judge(&b.root, &binary, &path, &[]);
        check(report.verdict.kind == "pass", || {
            format!(
                "{levels} levels overflow; {} levels: {:?}\n{}",
                levels - 1,
                report.verdict,
                report.output
            )
        })?;
    }
    Ok(())
}

/// A recursion with small frames overflows at a depth that moves by a few
/// levels from run to run of the real binary; the result overflows it every
/// time (the driver runs without stack randomization and a little more stack
/// than the real binary ever has).
fn small_frames() -> Result<(), Failed> {
    let b = built("asan");
    let dir = b.root.join("fuzz/artifacts/small_frames");
    std::fs::create_dir_all(&dir).unwrap();
    let artifact = dir.join("crash-parens");
    std::fs::write(&artifact, vec![b'('; 20_000]).unwrap();
    let _ = std::fs::remove_file(reduced_path(&artifact));
    let run = reduce_as_is(&b.root, &artifact, &[]);
    check(run.code == Some(0), || run.describe())?;
    let result = std::fs::read(reduced_path(&artifact)).unwrap();
    check(result.len() < 20_000, || format!("{} bytes", result.len()))?;
    let binary = b.bins.join("small_frames");
    for i in 0..10 {
        let report = real::judge(&b.root, &binary, &reduced_path(&artifact), &[]);
        check(report.verdict.kind == "stack-overflow", || {
            format!(
                "run {i} of the real binary on the {}-byte result: {:?}",
                result.len(),
                report.verdict
            )
        })?;
    }
    Ok(())
}

/// Found with `-timeout=2`; the result still times out at `-timeout=2`
/// when the real binary runs it alone.
fn slow_loop() -> Result<(), Failed> {
    let b = built("asan");
    let (result, _, stderr) = reduce_and_judge(
        b,
        "slow_loop",
        "timeout-1b9e42d7eef5257c6ba07996fc79fa410d95d2d5",
        "timeout",
        &["-timeout=2"],
    )?;
    // The guarantee is printed: inferred from the original's run here.
    let said = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("Timeout "));
    check(
        said.is_some_and(|l| {
            // The real binary was built: it is the second clock.
            l.contains("checked in a fresh process and by `cargo fuzz build`'s fuzzer (")
                && l.contains("): still running after")
                && l.contains("reports it")
                && l.contains("inferred from the original's run")
        }),
        || format!("no guarantee line:\n{stderr}"),
    )?;
    check(result == b"*/*/*/*/*", || {
        format!("{:?}", String::from_utf8_lossy(&result))
    })
}

fn trusted_length() -> Result<(), Failed> {
    let b = built("asan");
    let (result, verdict, _) = reduce_and_judge(
        b,
        "trusted_length",
        "oom-97c3a96eb23660776c36f5f46fd9513597b54781",
        "malloc-limit",
        &[],
    )?;
    check(
        verdict
            .frame
            .as_deref()
            .is_some_and(|f| f.contains("decode_pcm src/lib.rs:220:19")),
        || format!("{verdict:?}"),
    )?;
    check(result.len() == 8 && result.starts_with(b"PCM1"), || {
        format!("{result:?}")
    })
}

/// A 4 KB input on which nearly every candidate crashes under ASan: each
/// crash costs a fork of the driver, not a new driver.
fn most_asan() -> Result<(), Failed> {
    let b = built("asan");
    let artifact = place(b, "most_asan", "generated-4096.bin");
    let run = reduce_as_is(&b.root, &artifact, &["--message-format", "json"]);
    check(run.code == Some(0), || run.describe())?;
    let finished = run.message("reduce-finished");
    check(
        finished["signature"]["message"] == "AddressSanitizer: heap-buffer-overflow",
        || finished.to_string(),
    )?;
    check(finished["reduced_len"] == 1, || finished.to_string())?;
    let (spawns, restarts) = (
        finished["driver_spawns"].as_u64().unwrap_or(u64::MAX),
        finished["driver_restarts"].as_u64().unwrap_or(0),
    );
    // How many candidates crash depends on the pipeline (truncation reaches
    // the 1-byte result in a few tests, most of which crash); what matters is
    // that every crash cost a fork of the same driver, never a new process.
    check(spawns == 0 && restarts >= 5, || {
        format!(
            "the same driver, many forks: {spawns} new processes, {restarts} restarts\n{finished}"
        )
    })?;
    let before = real::judge(&b.root, &b.bins.join("most_asan"), &artifact, &[]);
    let after = real::judge(
        &b.root,
        &b.bins.join("most_asan"),
        &reduced_path(&artifact),
        &[],
    );
    check(
        before.verdict == after.verdict && after.verdict.kind == "heap-buffer-overflow",
        || format!("{:?} vs {:?}", before.verdict, after.verdict),
    )
}

/// `#[macro_use] extern crate libfuzzer_sys;`, `fuzz_target!` without an
/// import, no `edition` (2015), `use oldstyle::Parser;` by a 2015 path: the
/// target file is the crate root as in cargo-fuzz's build, so it builds
/// unmodified; `cargo fuzz run` reproduces the result.
fn old_style() -> Result<(), Failed> {
    let b = built("oldstyle");
    let artifact = place(b, "parse", "crash-a98df624ccb0fc21d98b250bc978587d8a427ce2");
    let run = reduce_as_is(&b.root, &artifact, &[]);
    check(run.code == Some(0), || run.describe())?;
    let result = reduced_path(&artifact);
    let before = real::judge(&b.root, &b.bins.join("parse"), &artifact, &[]);
    check(before.verdict.kind == "panic", || {
        format!("{:?}", before.verdict)
    })?;
    let out = std::process::Command::new("cargo")
        .args(["+nightly", "fuzz", "run", "parse"])
        .arg(&result)
        .current_dir(&b.root)
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let location = before.verdict.frame.clone().unwrap_or_default();
    // cargo-fuzz exits 1 and names libFuzzer's crash status, 77.
    let crashed = stderr.contains("Fuzz target exited with exit status: 77");
    check(
        crashed && !location.is_empty() && stderr.contains(&location),
        || format!("cargo fuzz run on the result: {:?}\n{stderr}", out.status),
    )?;
    check(
        std::fs::read(&result).unwrap().len() < std::fs::read(&artifact).unwrap().len(),
        || "not smaller".into(),
    )
}

/// A fuzz crate with its own `#[global_allocator]` (as crates that count or
/// limit their allocations have) reduces in the default build: the stand-in
/// `libfuzzer-sys` defines no allocator there (ASan's malloc hook does the
/// malloc limit, as in libFuzzer).
fn own_allocator() -> Result<(), Failed> {
    let root = copy_fixture_as("buggy", "buggy-faithful");
    let dir = root.join("fuzz/artifacts/own_allocator");
    std::fs::create_dir_all(&dir).unwrap();
    let artifact = dir.join("crash-own");
    std::fs::write(&artifact, noisy("own-faithful", b"KEY=;")).unwrap();
    let run = reduce_as_is(&root, &artifact, &[]);
    check(run.code == Some(0), || run.describe())?;
    check(run.stderr.contains("(nightly, AddressSanitizer)"), || {
        run.describe()
    })?;
    let result = std::fs::read(reduced_path(&artifact)).unwrap();
    check(result == b"KEY=;", || format!("{result:?}"))
}

/// A driver an earlier build left in place is started while cargo checks
/// that it is up to date, and is kept only if the build returns the same
/// file: after the target's source changes (here: its bug is fixed), the
/// next run must judge the artifact by the new build (it no longer crashes:
/// exit 3), not by the old driver (which would reproduce and reduce it).
fn changed_target() -> Result<(), Failed> {
    let root = copy_fixture_as("buggy", "buggy-changed");
    let dir = root.join("fuzz/artifacts/index");
    std::fs::create_dir_all(&dir).unwrap();
    let artifact = dir.join("crash-changed");
    std::fs::write(&artifact, noisy("changed", b"REG7")).unwrap();
    let run = reduce_as_is(&root, &artifact, &[]);
    check(run.code == Some(0), || run.describe())?;
    let result = reduced_path(&artifact);
    check(std::fs::read(&result).unwrap() == b"REG4", || {
        run.describe()
    })?;
    std::fs::remove_file(&result).unwrap();

    fix_the_index_target(&root);
    let run = reduce_as_is(&root, &artifact, &[]);
    check(run.code == Some(3), || {
        format!(
            "the fixed target was judged by its old driver\n{}",
            run.describe()
        )
    })?;
    check(!result.exists(), || "a result was written".into())
}

// ------------------------------------------------------------------ without nightly

/// On a machine with stable only, the same commands say once that the build
/// has no sanitizer and end with documented exit codes: memory errors only
/// ASan sees do not crash (3); the rest reduce (0). Nothing panics.
fn without_nightly() -> Result<(), Failed> {
    let root = copy_fixture_as("asan", "asan-stable");
    let home = stable_only_rustup_home();
    let cases = [
        (
            "heap_overflow",
            "crash-5cdf52e59b8f815ac132c2537e5e3d1cae110827",
            3,
        ),
        (
            "use_after_free",
            "crash-d94ca19c8cc057998b0e1a9316885931902c1320",
            3,
        ),
        (
            "most_asan",
            "crash-68dcbd43c64c64edba77cc2d818df554ce3e1340",
            3,
        ),
        (
            "deep_nesting",
            "crash-076821cefe2f9be297eb1fb480fa21ff554027c3",
            0,
        ),
        (
            "trusted_length",
            "oom-97c3a96eb23660776c36f5f46fd9513597b54781",
            0,
        ),
        (
            "index_panic",
            "crash-f03277c9d061b7f60f641fcc9168fadd73c4a448",
            0,
        ),
        (
            "slow_loop",
            "timeout-1b9e42d7eef5257c6ba07996fc79fa410d95d2d5",
            0,
        ),
    ];
    for (target, file, code) in cases {
        let dir = root.join("fuzz/artifacts").join(target);
        std::fs::create_dir_all(&dir).unwrap();
        let artifact = dir.join(file);
        std::fs::copy(root.join("found").join(target).join(file), &artifact).unwrap();
        let args = vec![artifact.display().to_string()];
        let started = Instant::now();
        let child = command_as_is(&args, &root)
            .env("RUSTUP_HOME", &home)
            .env("RUSTUP_TOOLCHAIN", "stable")
            .spawn()
            .unwrap();
        let run = finish(child, args, started, Duration::from_secs(900));
        run.assert_no_panic();
        check(run.code == Some(code), || {
            format!("{target}: expected exit {code}\n{}", run.describe())
        })?;
        let notes = run
            .stderr
            .lines()
            .filter(|l| l.starts_with("note: no nightly toolchain"))
            .count();
        check(notes == 1, || {
            format!("{target}: one note line\n{}", run.describe())
        })?;
    }
    Ok(())
}
