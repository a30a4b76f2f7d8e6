//! Issue 37: slow crashes, second round. Hangs screened short and confirmed
//! long; a deep nest after kilobytes of statements cut around in a few
//! tests. On copies of `tests/fixtures/doors`, every result judged by the
//! real `cargo fuzz build` binary.
//!
//! A custom harness (libtest-mimic), as in `trust.rs`: without nightly and
//! cargo-fuzz the tests are reported as *ignored*, never as passed.

mod common;

use common::real;
use common::*;
use libtest_mimic::{Arguments, Failed};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn main() {
    let args = Arguments::from_args();
    let judged = judged_trials("slow");
    let trials = vec![
        judged(
            "a_hang_is_screened_short_and_its_result_confirmed_long",
            screened_hang,
        ),
        judged(
            "a_screened_best_that_finishes_is_reduced_on_from_one_that_hangs",
            screened_best_finishes,
        ),
        judged(
            "a_nest_after_kilobytes_of_statements_is_cut_around_in_a_few_tests",
            nest_in_a_document,
        ),
        judged(
            "a_timeout_is_judged_by_the_clock_of_the_real_binary",
            timeout_on_libfuzzers_clock,
        ),
        judged(
            "a_timeout_s_result_keeps_the_real_binary_running_too",
            driver_clock_slower,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

/// The `doors` fixture built by `cargo +nightly fuzz build`.
fn built() -> &'static (PathBuf, PathBuf) {
    static BUILT: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = copy_fixture_as("doors", "doors-slow");
        let bins = real::cargo_fuzz_build(&root);
        (root, bins)
    })
}

fn reduce(root: &Path, artifact: &Path, extra: &[&str]) -> Result<serde_json::Value, Failed> {
    let mut args = vec![
        "--message-format".to_owned(),
        "json".to_owned(),
        "--no-explain".to_owned(),
        artifact.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let r = run_default(&args, root);
    r.assert_no_panic();
    check(r.code == Some(0), || r.describe())?;
    Ok(r.message("reduce-finished"))
}

/// An infinite loop behind 3 KB of noise: its candidates that still hang
/// are stopped at the screening limit (0.25 s, not the 2.2 s `-timeout=1`
/// needs), the first three bests are confirmed at the limit, and the result
/// times out under the real binary at `-timeout=1`.
fn screened_hang() -> Result<(), Failed> {
    let (root, bins) = built();
    let _serial = lock_target("doors-slow");
    let mut data = b"S".to_vec();
    data.extend(noisy_with_len("screen", b"", 3000).iter().map(
        |&b| {
            if b == b'L' {
                b'l'
            } else {
                b
            }
        },
    ));
    data.extend(b"LOOP");
    data.extend(noisy_with_len("screen-after", b"", 1000));
    let a = artifact(root, "hang_a", "timeout-screened", &data);
    let v = reduce(root, &a, &["--", "-timeout=1"])?;
    let t = &v["timeout"];
    check(
        t["screened"].as_u64().is_some_and(|n| n > 0) && t["screened_wrongly"] == 0,
        || format!("no screening, or a wrong one: {v}"),
    )?;
    let result = std::fs::read(reduced_path(&a)).unwrap();
    check(result.len() <= 8, || format!("result {result:?}"))?;
    times_out_at_one_second(root, bins, &a)
}

/// A target that hangs on inputs of 40 bytes or more and runs 0.4 s on
/// ones of 30–39 bytes: the screened stages take those for hangs (0.4 s is
/// past the 0.25 s screening limit) once the first bests held at the full
/// limit, and the final check in a fresh process finds that none of the
/// bests kept runs to the limit. The reduction goes on from the newest
/// that does (here the original), without screening, and reaches the 40
/// bytes that hang within `--max-time 120`: under the real binary, a
/// timeout at `-timeout=1`. (Before, it wrote nothing and exited 4.)
fn screened_best_finishes() -> Result<(), Failed> {
    let (root, bins) = built();
    let _serial = lock_target("doors-slow");
    let mut data = b"T".to_vec();
    let noise = |tag, len| {
        noisy_with_len(tag, b"", len)
            .into_iter()
            .map(|b| if b == b'L' { b'l' } else { b })
            .collect::<Vec<u8>>()
    };
    data.extend(noise("short", 400));
    data.extend(b"LOOP");
    data.extend(noise("short-after", 100));
    let a = artifact(root, "hang_a", "timeout-short", &data);
    let v = reduce(root, &a, &["--max-time", "120", "--", "-timeout=1"])?;
    let t = &v["timeout"];
    let result = std::fs::read(reduced_path(&a)).unwrap();
    check(result.len() == 40, || {
        format!(
            "{} bytes: {:?}\n{v}",
            result.len(),
            String::from_utf8_lossy(&result)
        )
    })?;
    check(t["unconfirmed"].as_u64().is_some_and(|n| n > 0), || {
        format!("the final check did not find screening wrong: {v}")
    })?;
    times_out_at_one_second(root, bins, &a)
}

/// `hang_a`'s result for `artifact` is a timeout under the real binary at
/// `-timeout=1`.
fn times_out_at_one_second(root: &Path, bins: &Path, artifact: &Path) -> Result<(), Failed> {
    let judged = real::judge(
        root,
        &bins.join("hang_a"),
        &reduced_path(artifact),
        &["-timeout=1"],
    );
    check(judged.verdict.kind == "timeout", || judged.output.clone())
}

/// 8 KB of `key=digits;` statements, a nest 30,000 deep that overflows the
/// stack, then more statements: the statements go in a few tests, and the
/// result overflows the real binary's stack in the same recursion.
fn nest_in_a_document() -> Result<(), Failed> {
    let (root, bins) = built();
    let _serial = lock_target("doors-slow");
    let mut doc = String::new();
    for i in 0..600 {
        doc.push_str(&format!("key{i}={};\n", i * 7919 % 1000));
    }
    let depth = 30_000;
    doc.push_str("SELECT N");
    doc.push_str(&"(".repeat(depth));
    doc.push('1');
    doc.push_str(&")".repeat(depth));
    doc.push_str(";\n");
    for i in 0..50 {
        doc.push_str(&format!("after{i}={i};\n"));
    }
    let a = artifact(root, "script", "crash-doc", doc.as_bytes());
    let original = real::judge(root, &bins.join("script"), &a, &[]);
    check(original.verdict.kind == "stack-overflow", || {
        original.output.clone()
    })?;
    let v = reduce(root, &a, &[])?;
    let result = std::fs::read(reduced_path(&a)).unwrap();
    let text = String::from_utf8_lossy(&result);
    check(!text.contains("key") && !text.contains("after"), || {
        format!("statements left: {}", &text[..text.len().min(200)])
    })?;
    let isolate = v["passes"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "isolate"))
        .cloned()
        .unwrap_or_default();
    check(isolate["tests"].as_u64().is_some_and(|t| t <= 20), || {
        format!("the isolate pass: {isolate}\n{v}")
    })?;
    let judged = real::judge(root, &bins.join("script"), &reduced_path(&a), &[]);
    check(judged.verdict == original.verdict, || {
        format!(
            "{:?} vs {:?}\n{}",
            judged.verdict, original.verdict, judged.output
        )
    })?;
    Ok(())
}

/// A target twice as slow in our driver as in the real binary
/// (`slower_in_the_driver`): reduced for "runs longer than 0.3 s" on the
/// driver's clock alone, four `K`s would do (0.4 s there, 0.2 s in the real
/// binary). `cargo fuzz build`'s fuzzer is there and hangs on the original,
/// so it is the second clock every result must run past too: the screened
/// stage's results are turned down, the next stage checks every smaller
/// best on the fuzzer, and the result keeps the real binary running past
/// 0.3 s.
fn driver_clock_slower() -> Result<(), Failed> {
    let (root, bins) = built();
    let _serial = lock_target("doors-slow");
    let mut data = b"K".to_vec();
    for i in 0..9 {
        data.extend(
            noisy_with_len(&format!("skew{i}"), b"", 2)
                .iter()
                .map(|&b| if b == b'K' { b'k' } else { b }),
        );
        data.push(b'K');
    }
    let a = artifact(root, "hang_a", "timeout-skew", &data);
    let v = reduce(root, &a, &["--timeout", "0.3"])?;
    let t = &v["timeout"];
    check(t["fuzzer"]["hangs_on_original"] == true, || {
        format!("the fuzzer was not the second clock: {v}")
    })?;
    check(
        t["fuzzer"]["turned_down"].as_u64().is_some_and(|n| n > 0),
        || format!("no result was turned down by the fuzzer's clock: {v}"),
    )?;
    let result = std::fs::read(reduced_path(&a)).unwrap();
    let ks = result.iter().filter(|&&b| b == b'K').count();
    check((6..=9).contains(&ks), || {
        format!("{ks} Ks in {:?}", String::from_utf8_lossy(&result))
    })?;
    let ran = real_run_time(&bins.join("hang_a"), &reduced_path(&a));
    check(ran >= Duration::from_millis(300), || {
        format!("the real binary ran the result {ran:?}")
    })
}

/// How long the real binary ran `file`, as libFuzzer measures it (its
/// `Executed <file> in N ms` line: the input, not the process's start).
fn real_run_time(binary: &Path, file: &Path) -> Duration {
    let out = Command::new(binary)
        .arg("-timeout=100")
        .arg(file)
        .output()
        .expect("the real fuzz binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let ms = stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("Executed ")?
                .rsplit_once(" in ")?
                .1
                .strip_suffix(" ms")
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no Executed line: {stderr}"));
    Duration::from_millis(ms)
}

/// A target whose run is nearly all comparisons (`compare_rounds`) runs
/// several times as long under `cargo fuzz run`, whose runtime does work in
/// every comparison's tracing hook, as without that work. An artifact
/// sized so that the real binary runs it about 3.5 s (libFuzzer reports it
/// at `-timeout=1`, which needs 2 s) must reproduce here as a timeout, and
/// its result must time out under the real binary. Without the shim's
/// faithful comparison hooks the driver ran it in about a third of that and
/// said it does not time out.
fn timeout_on_libfuzzers_clock() -> Result<(), Failed> {
    let (root, bins) = built();
    let _serial = lock_target("doors-slow");
    let binary = bins.join("compares");
    let probe = root.join("compares-probe");
    std::fs::write(&probe, b"C").unwrap();
    let startup = real_run_time(&binary, &probe).min(real_run_time(&binary, &probe));
    std::fs::write(&probe, [b'C'; 20]).unwrap();
    let twenty = real_run_time(&binary, &probe).saturating_sub(startup);
    let per_c = twenty.as_secs_f64() / 19.0;
    let n = (3.5 / per_c).ceil() as usize;
    let mut data = vec![b'.'; 64];
    data.extend(std::iter::repeat_n(b'C', n));
    let a = artifact(root, "compares", "timeout-clock", &data);
    let original = real::judge(root, &binary, &a, &["-timeout=1"]);
    check(original.verdict.kind == "timeout", || {
        format!("{n} Cs at {per_c:.4} s each: {}", original.output)
    })?;
    let started = Instant::now();
    // 120 s left it unreduced in 1 of 3 runs (about 90 tests of 2.2 s
    // each on 2 drivers); 240 s is enough to reduce it on every run seen.
    let v = reduce(root, &a, &["--max-time", "240", "--", "-timeout=1"])?;
    let took = started.elapsed();
    check(v["signature"]["kind"] == "timeout", || v.to_string())?;
    // `--max-time` is a deadline, the result's check on both clocks
    // included: a batch of candidates that each run nearly to the limit is
    // cut there (it used to end a minute past it).
    check(took < Duration::from_secs(246), || {
        format!("--max-time 240 took {took:.1?}: {v}")
    })?;
    let result = std::fs::read(reduced_path(&a)).unwrap();
    check(result.len() < data.len(), || {
        format!("{} bytes of {}: {v}", result.len(), data.len())
    })?;
    let judged = real::judge(root, &binary, &reduced_path(&a), &["-timeout=1"]);
    check(judged.verdict.kind == "timeout", || judged.output.clone())?;
    Ok(())
}
