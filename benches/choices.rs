//! Choice-sequence shrinking (`--strategy choices`) vs delta debugging only
//! (`--strategy ddmin`) on the typed targets of the `buggy` fixture.
//!
//! Every typed target gets two noisy artifacts: seeded random byte blobs
//! (200–2000 bytes) that crash with the target's bug, the very ones
//! `tests/typed.rs` reduces (same generator, same seeds: keep them in sync).
//! Most also get the two crashes a real libFuzzer run found first (seeds 1
//! and 2, from an empty corpus; `benches/fixtures/libfuzzer-artifacts`):
//! what `cargo fuzz run` hands its user, small because libFuzzer grows
//! inputs slowly, with the values its mutations leave (0xff runs, copied
//! bytes).
//! Each artifact is reduced once per strategy; the table (Markdown, on
//! stdout) shows the output's size in bytes, the length of its `Debug` form
//! (the `debug` field of `reduce-finished`, whitespace removed), the tests
//! executed and the wall time, plus whether each output still crashes with
//! the original's signature (one `--classify` per artifact). A summary
//! follows: whether `choices` is never worse than `ddmin` on either size,
//! and the median `Debug`-length ratio ddmin/choices (the bar is 2×),
//! overall and per group (targets mirroring real ones or not, random blobs
//! or libFuzzer's artifacts).
//!
//! The fixture is copied to `target/bench-fixtures/buggy-choices` and the
//! drivers are built in `target/bench-choices-driver` (cached between runs);
//! one warm-up `--classify` per target builds its driver before anything is
//! timed. Progress goes to stderr.
//!
//! Run with `cargo bench --bench choices`.

mod common;

use reduce_crash::reduce::rng::Rng;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Our binary, built by cargo for this bench.
const BIN: &str = env!("CARGO_BIN_EXE_cargo-reduce-crash");

/// Upper bound per run (the first one of a target includes a driver build).
const RUN_LIMIT: Duration = Duration::from_secs(600);

/// The strategies compared: the baseline first.
const BASELINE: &str = "ddmin";
const CHOICES: &str = "choices";

/// (target, seeds of [`blob`], the minimal value's `Debug` form).
const TARGETS: &[(&str, [u64; 2], &str)] = &[
    ("typed", [77, 99], "[Push(0), Add]"),
    (
        "typed_nested",
        [116, 223],
        "Request { method: Delete, auth: Some(Token(4096)), retries: None }",
    ),
    (
        "typed_fields",
        [134, 881],
        r#"Record { name: ":", note: "", payload: [0, 0, 0], flags: 0 }"#,
    ),
    ("typed_threshold", [0, 1], "(1000, 301)"),
    ("typed_ops", [783, 1120], "[Deposit(2), Withdraw(1), Audit]"),
    (
        "typed_packet",
        [0, 1],
        "Packet { seq: 0, timestamp: 0, source: [0, 0, 0, 0], ttl: 0, options: [], \
         kind: Fragment { offset: 1501 }, payload: [] }",
    ),
    (
        "typed_config",
        [1, 13],
        r#"Config { name: "", id: 0, version: (0, 0, 0), retries: None, timeouts: [],
           mode: Strict, limits: Limits { max_body: 0, max_conn: 262144 } }"#,
    ),
    (
        "typed_events",
        [28, 37],
        "[Event { at: 0, user: None, action: AddToCart { item: 0, qty: 1 } }, \
         Event { at: 0, user: None, action: Checkout }]",
    ),
    (
        "typed_telemetry",
        [1, 2],
        r#"Report { header: Header { device: 0, boot_time: 0, firmware: (0, 0, 0) },
           seq: 0, location: None, samples: [], label: "",
           reading: Temperature { centi_celsius: 5453 } }"#,
    ),
    ("typed_window", [102, 491], "[0, 0, 0, 0, 0, 0, 0, 4096]"),
    ("typed_matrix", [501, 3564], "[[0, 0, 0], [0, 0, 0], []]"),
    (
        "typed_route",
        [153, 1540],
        "[Hop { node: 1, cost: 0 }, Hop { node: 0, cost: 0 }, Hop { node: 0, cost: 0 }, \
         Hop { node: 0, cost: 0 }, Hop { node: 0, cost: 0 }, Hop { node: 0, cost: 0 }, \
         Hop { node: 0, cost: 0 }, Hop { node: 0, cost: 0 }]",
    ),
    (
        "typed_batch",
        [302, 636],
        "[Job { id: 0, priority: 128, deadline: 0 }, Job { id: 0, priority: 128, deadline: 0 }, \
         Job { id: 0, priority: 128, deadline: 0 }, Job { id: 0, priority: 128, deadline: 0 }, \
         Job { id: 0, priority: 128, deadline: 0 }]",
    ),
    // Mirroring real cargo-fuzz targets (see the fixture's README and
    // [`MIRRORS`]).
    (
        "typed_allocator",
        [15, 351],
        "[Alloc { index: 0, layout: Size { size: 1, align: 21 } }]",
    ),
    (
        "typed_slotmap",
        [4, 16],
        "Target { ctor: New, ops: [Insert, Clear] }",
    ),
    (
        "typed_delta",
        [80, 147],
        "[Insert { site: 0, pos: 0, text: 100 }, Delete { site: 0, pos: 2, len: 2 }]",
    ),
    (
        "typed_smartstring",
        [67, 161],
        r#"(FromString("\u{80}"), [Pop])"#,
    ),
    ("typed_bcn", [0, 3], "(1, 1073741821, BC2Srgb, [])"),
    (
        "typed_patch",
        [15, 20],
        "[Edit { offset: (1, 0), length: (0, 0), text: [0, 0, 0, 0] }]",
    ),
];

/// Crash artifacts a real libFuzzer run found for the targets of
/// [`TARGETS`], from an empty corpus (`<target>/seed-N`, made by the
/// `generate.sh` beside them; none for targets it found no crash for).
const LIBFUZZER_ARTIFACTS: &str = "benches/fixtures/libfuzzer-artifacts";

/// The targets of [`TARGETS`] that mirror the input type of a real
/// cargo-fuzz target of a public project (provenance in
/// `tests/fixtures/buggy/README.md`); the summary gives their median
/// separately.
const MIRRORS: &[&str] = &[
    "typed_allocator",
    "typed_slotmap",
    "typed_delta",
    "typed_smartstring",
    "typed_bcn",
    "typed_patch",
];

/// The artifact of `seed`: as `blob` in `tests/typed.rs`.
fn blob(target: &str, seed: u64) -> Vec<u8> {
    let mut rng = Rng::from_name(&format!("typed-blob:{target}:{seed}"));
    let len = 200 + rng.below(1801);
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// Length of a `Debug` form without whitespace.
fn debug_len(debug: &str) -> usize {
    debug.chars().filter(|c| !c.is_whitespace()).count()
}

use common::Finished;

impl Finished {
    fn describe(&self) -> String {
        let status = match self.status {
            None => format!("killed after {}s", RUN_LIMIT.as_secs()),
            Some(s) => format!("{s}"),
        };
        format!(
            "{status} after {:.1}s\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.secs, self.stdout, self.stderr
        )
    }

    fn messages(&self, reason: &str) -> Vec<Value> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["reason"] == reason)
            .collect()
    }
}

/// Runs the binary with `--target-dir <driver dir>` and `args`, output to
/// scratch files, in its own process group (killed after [`RUN_LIMIT`]).
fn run(args: &[&str], driver_dir: &Path, scratch: &Path) -> Finished {
    let mut cmd = Command::new(BIN);
    // The build these numbers were measured with (no sanitizer).
    cmd.args(["-s", "none", "--target-dir"])
        .arg(driver_dir)
        .args(args)
        .env("NO_COLOR", "1");
    common::run_limited(cmd, scratch, RUN_LIMIT)
}

/// `(kind, location)` of each file, in one `--classify` invocation.
fn classify(
    target: &str,
    files: &[&Path],
    fuzz_dir: &Path,
    driver_dir: &Path,
    scratch: &Path,
) -> Vec<Option<(String, String)>> {
    let fuzz_dir = fuzz_dir.display().to_string();
    let mut args = vec![
        "--classify",
        "--message-format",
        "json",
        "--fuzz-target",
        target,
        "--fuzz-dir",
        &fuzz_dir,
    ];
    let paths: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(paths.iter().map(String::as_str));
    let done = run(&args, driver_dir, scratch);
    let classified = done.messages("classified");
    if !done.ok() || classified.len() != files.len() {
        eprintln!("error: --classify of {target} failed: {}", done.describe());
        std::process::exit(1);
    }
    classified
        .iter()
        .map(|v| {
            let sig = &v["signature"];
            (!sig.is_null()).then(|| {
                (
                    sig["kind"].as_str().unwrap_or("?").to_owned(),
                    sig["location"].as_str().unwrap_or("-").to_owned(),
                )
            })
        })
        .collect()
}

/// One strategy's result on one artifact.
struct Reduced {
    bytes: usize,
    debug: String,
    tests: u64,
    secs: f64,
    strategy: String,
    same_crash: bool,
}

/// Reduces `artifact` with `strategy` into `output`; `None` if the run failed
/// (printed to stderr).
fn reduce(
    strategy: &str,
    artifact: &Path,
    output: &Path,
    driver_dir: &Path,
    scratch: &Path,
) -> Option<Reduced> {
    let _ = fs::remove_file(output);
    let (a, o) = (artifact.display().to_string(), output.display().to_string());
    let args = [
        "--no-explain",
        "--message-format",
        "json",
        "--strategy",
        strategy,
        "-o",
        &o,
        &a,
    ];
    let done = run(&args, driver_dir, scratch);
    let finished = done.messages("reduce-finished");
    if !done.ok() || finished.len() != 1 {
        eprintln!(
            "error: `cargo-reduce-crash {}` failed: {}",
            args.join(" "),
            done.describe()
        );
        return None;
    }
    let v = &finished[0];
    Some(Reduced {
        bytes: v["reduced_len"].as_u64().unwrap_or(0) as usize,
        debug: v["debug"].as_str().unwrap_or("").to_owned(),
        tests: v["tests_executed"].as_u64().unwrap_or(0),
        secs: done.secs,
        strategy: v["strategy"].as_str().unwrap_or("?").to_owned(),
        same_crash: false,
    })
}

fn cell(r: &Option<Reduced>, f: impl Fn(&Reduced) -> String) -> String {
    r.as_ref().map_or("failed".into(), f)
}

/// A `Debug` form without whitespace and without the trailing commas of
/// `{:#?}`, so it compares with the expected values' `{:?}` form.
fn plain(debug: &str) -> String {
    let s: String = debug.chars().filter(|c| !c.is_whitespace()).collect();
    s.replace(",)", ")").replace(",]", "]").replace(",}", "}")
}

/// [`plain`], escaped for a Markdown table.
fn compact(debug: &str) -> String {
    plain(debug).replace('|', "\\|")
}

/// Where an artifact comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// [`blob`] of this seed.
    Blob(u64),
    /// [`LIBFUZZER_ARTIFACTS`]`/<target>/seed-N`: the first crash libFuzzer
    /// found with `-seed=N`.
    LibFuzzer(u64),
}

impl Source {
    fn slug(self) -> String {
        match self {
            Source::Blob(seed) => format!("choices-seed-{seed}"),
            Source::LibFuzzer(seed) => format!("choices-libfuzzer-{seed}"),
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Source::Blob(seed) => write!(f, "blob {seed}"),
            Source::LibFuzzer(seed) => write!(f, "libFuzzer -seed={seed}"),
        }
    }
}

struct Row {
    target: &'static str,
    source: Source,
    original: usize,
    base: Option<Reduced>,
    choices: Option<Reduced>,
    expected: &'static str,
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture = common::stable_copy("tests/fixtures/buggy", "buggy-choices");
    let fuzz_dir = fixture.join("fuzz");
    let driver_dir = root.join("target/bench-choices-driver");
    let scratch = root.join("target/bench-choices-scratch");
    fs::create_dir_all(&scratch).expect("scratch dir");

    let help = run(&["--help"], &driver_dir, &scratch);
    let has_choices = help.stdout.contains(CHOICES);
    if !has_choices {
        eprintln!("note: `--strategy {CHOICES}` is not available yet (not in --help): ddmin only");
    }

    let found_by_libfuzzer = root.join(LIBFUZZER_ARTIFACTS);
    let mut rows: Vec<Row> = Vec::new();
    for &(target, seeds, expected) in TARGETS {
        let dir = fuzz_dir.join("artifacts").join(target);
        fs::create_dir_all(&dir).expect("artifact dir");
        let mut artifacts: Vec<(Source, PathBuf, usize)> = seeds
            .iter()
            .map(|&seed| {
                let data = blob(target, seed);
                let path = dir.join(format!("crash-choices-seed-{seed}"));
                fs::write(&path, &data).expect("write artifact");
                (Source::Blob(seed), path, data.len())
            })
            .collect();
        for seed in 1..=2 {
            let found = found_by_libfuzzer.join(target).join(format!("seed-{seed}"));
            let Ok(data) = fs::read(&found) else { continue };
            let path = dir.join(format!("crash-choices-libfuzzer-{seed}"));
            fs::write(&path, &data).expect("write artifact");
            artifacts.push((Source::LibFuzzer(seed), path, data.len()));
        }

        // Warm-up (builds the driver) and the originals' signatures.
        eprintln!("{target}: warm-up --classify");
        let files: Vec<&Path> = artifacts.iter().map(|(_, p, _)| p.as_path()).collect();
        let originals = classify(target, &files, &fuzz_dir, &driver_dir, &scratch);

        for ((source, artifact, original), sig) in artifacts.iter().zip(&originals) {
            if sig.is_none() {
                eprintln!("error: {target} {source} does not crash");
                std::process::exit(1);
            }
            let out = |s: &str| artifact.with_file_name(format!("{}.{s}", source.slug()));
            eprintln!("{target} {source}: {BASELINE}");
            let mut base = reduce(BASELINE, artifact, &out(BASELINE), &driver_dir, &scratch);
            let mut choices = if has_choices {
                eprintln!("{target} {source}: {CHOICES}");
                reduce(CHOICES, artifact, &out(CHOICES), &driver_dir, &scratch)
            } else {
                None
            };
            // Both outputs still crash the original way?
            let outputs: Vec<PathBuf> = [(BASELINE, &base), (CHOICES, &choices)]
                .iter()
                .filter(|(_, r)| r.is_some())
                .map(|(s, _)| out(s))
                .collect();
            let refs: Vec<&Path> = outputs.iter().map(PathBuf::as_path).collect();
            let got = classify(target, &refs, &fuzz_dir, &driver_dir, &scratch);
            let mut got = got.into_iter();
            for r in [&mut base, &mut choices].into_iter().flatten() {
                r.same_crash = got.next().flatten().as_ref() == sig.as_ref();
            }
            rows.push(Row {
                target,
                source: *source,
                original: *original,
                base,
                choices,
                expected,
            });
        }
    }

    println!(
        "| target | artifact | input bytes | ddmin bytes | choices bytes | ddmin Debug len | choices Debug len \
         | ddmin tests | choices tests | ddmin time | choices time | same crash (ddmin/choices) \
         | choices Debug | minimal? |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut never_worse = true;
    let mut ratios = Vec::new();
    let mut group_ratios: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut source_ratios: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut worse = Vec::new();
    // Ratios in `plain` form: choices', and what a shrinker reaching every
    // expected minimum would get.
    let (mut plain_ratios, mut perfect_ratios) = (Vec::new(), Vec::new());
    let mut minimal = 0;
    for r in &rows {
        let (b, c) = (&r.base, &r.choices);
        match (b, c) {
            (Some(b), Some(c)) => {
                if c.bytes > b.bytes || debug_len(&c.debug) > debug_len(&b.debug) {
                    never_worse = false;
                    worse.push(format!("`{}` {}", r.target, r.source));
                }
                let ratio = debug_len(&b.debug) as f64 / debug_len(&c.debug).max(1) as f64;
                ratios.push(ratio);
                group_ratios[usize::from(MIRRORS.contains(&r.target))].push(ratio);
                source_ratios[usize::from(matches!(r.source, Source::LibFuzzer(_)))].push(ratio);
                let base_len = plain(&b.debug).chars().count() as f64;
                plain_ratios.push(base_len / plain(&c.debug).chars().count().max(1) as f64);
                perfect_ratios.push(base_len / plain(r.expected).chars().count().max(1) as f64);
            }
            _ => never_worse = false,
        }
        let is_min = c
            .as_ref()
            .is_some_and(|c| compact(&c.debug) == compact(r.expected));
        minimal += usize::from(is_min);
        let same =
            |x: &Option<Reduced>| cell(x, |x| if x.same_crash { "yes" } else { "**no**" }.into());
        println!(
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} | `{}` | {} |",
            r.target,
            r.source,
            r.original,
            cell(b, |x| x.bytes.to_string()),
            cell(c, |x| x.bytes.to_string()),
            cell(b, |x| debug_len(&x.debug).to_string()),
            cell(c, |x| debug_len(&x.debug).to_string()),
            cell(b, |x| x.tests.to_string()),
            cell(c, |x| x.tests.to_string()),
            cell(b, |x| format!("{:.2} s", x.secs)),
            cell(c, |x| format!("{:.2} s", x.secs)),
            same(b),
            same(c),
            cell(c, |x| compact(&x.debug)),
            if is_min { "yes" } else { "no" },
        );
    }
    println!();
    println!("ddmin Debug forms:");
    println!();
    for r in &rows {
        println!(
            "- `{}` {}: `{}`{}",
            r.target,
            r.source,
            cell(&r.base, |x| compact(&x.debug)),
            cell(&r.base, |x| if x.strategy == BASELINE {
                String::new()
            } else {
                format!(" (reported strategy `{}`)", x.strategy)
            })
        );
    }
    println!();
    let median_ratio = common::median(ratios);
    println!(
        "choices never worse than ddmin on either size: {}{}",
        if has_choices && never_worse {
            "yes"
        } else {
            "no"
        },
        if worse.is_empty() {
            String::new()
        } else {
            format!(" (worse on {})", worse.join(", "))
        }
    );
    println!(
        "median Debug length ratio ddmin/choices: {} (bar: >= 2x: {})",
        if median_ratio.is_nan() {
            "n/a".into()
        } else {
            format!("{median_ratio:.2}x")
        },
        if median_ratio >= 2.0 {
            "met"
        } else {
            "not met"
        }
    );
    let [others, mirrors] = group_ratios;
    let [blobs, libfuzzer] = source_ratios;
    for (name, group) in [
        ("the other typed targets", others),
        ("the targets mirroring real ones", mirrors),
        ("the random blobs", blobs),
        ("the artifacts libFuzzer found", libfuzzer),
    ] {
        let n = group.len();
        println!(
            "median Debug length ratio ddmin/choices over {name} ({n} artifacts): {:.2}x",
            common::median(group)
        );
    }
    println!(
        "median Debug length ratio without trailing commas: choices {:.2}x; a shrinker \
         reaching every expected minimum {:.2}x (the most a shrinker minimising the input first \
         gets on these artifacts)",
        common::median(plain_ratios),
        common::median(perfect_ratios)
    );
    println!(
        "choices reached the expected minimal value: {minimal} of {}",
        rows.len()
    );
}
