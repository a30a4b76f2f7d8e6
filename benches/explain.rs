//! What the explanation after a reduction costs and says (issue 26), side
//! by side in one run: every artifact is reduced with `--no-explain` and
//! then with the explanation (the default), and the bench prints, per
//! artifact, whether the written result is the same, both whole-command
//! times, the explanation's own time and tests, its verdicts (free values
//! or bytes of all, all at once or not) and how many lines only crashing
//! inputs ran (or why none).
//!
//! Three parts:
//! - `typed`: the `buggy` fixture's typed targets on the artifacts a real
//!   libFuzzer run found from random 4 KB inputs (the `vs_tmin` bench's
//!   typed rows);
//! - `realworld`: the real-world bench's small ordinary crashes (its deep
//!   nests and timeouts get no explanation: over 1 KB, or a timeout);
//! - `kinds`: the ASan fixtures' artifacts, one of every kind of crash
//!   (sanitizer reports that end the process, a stack overflow, an
//!   out-of-memory, a panic, a timeout, a 4 KB input that crashes on nearly
//!   every candidate): the explanation runs on every call, so it is
//!   measured on every kind.
//!
//! The explanation nobody asked for may take as long as the reduction did
//! (at least 0.1 s, at most 2 s): each row gives both, and the summary how
//! many rows kept to it.
//!
//! Every run uses the default build (`cargo fuzz build`'s, nightly with
//! AddressSanitizer, which has the coverage counters the lines need); one
//! `--classify` per target builds it first, not counted. The table is
//! Markdown on stdout. `cargo bench --bench explain`; `EXPLAIN_PART=typed`
//! or `realworld` runs one part.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-reduce-crash");

/// Upper bound per run.
const RUN_LIMIT: Duration = Duration::from_secs(300);

/// The real-world rows an explanation is for (see `benches/realworld`).
const REALWORLD_ROWS: &[&str] = &[
    "gif",
    "goblin",
    "inflate",
    "libflate",
    "zip",
    "rustc_demangle",
    "serde_bencode",
    "msvc_demangler",
    "sqlparser",
    "ron",
];

struct Row {
    part: &'static str,
    label: String,
    result_len: usize,
    same: bool,
    plain_secs: f64,
    explained_secs: f64,
    /// The reduction's own time (`elapsed_secs` of the explained run).
    reduction_secs: f64,
    explanation: serde_json::Value,
}

/// What an explanation nobody asked for may take after a reduction of
/// `reduction` seconds (`session::explain::default_time`).
fn allowed(reduction: f64) -> f64 {
    reduction.clamp(0.1, 2.0)
}

fn main() {
    let part = std::env::var("EXPLAIN_PART").unwrap_or_default();
    if !matches!(part.as_str(), "" | "typed" | "realworld" | "kinds") {
        eprintln!("error: EXPLAIN_PART must be `typed`, `realworld` or `kinds` (or unset for all)");
        std::process::exit(2);
    }
    let tmp = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-explain");
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).expect("scratch dir");
    let mut rows = Vec::new();
    if part.is_empty() || part == "typed" {
        typed_rows(&tmp, &mut rows);
    }
    if part.is_empty() || part == "realworld" {
        realworld_rows(&tmp, &mut rows);
    }
    if part.is_empty() || part == "kinds" {
        kind_rows(&tmp, &mut rows);
    }
    report(&rows);
}

/// One artifact: `--no-explain`, then the default; both results compared.
fn measure(
    part: &'static str,
    label: String,
    fuzz_dir: &Path,
    target: &str,
    artifact: &Path,
    libfuzzer: &[&str],
    tmp: &Path,
) -> Option<Row> {
    let run = |extra: &[&str], out: &Path| {
        let mut cmd = Command::new(BIN);
        cmd.arg("--fuzz-target")
            .arg(target)
            .arg("--fuzz-dir")
            .arg(fuzz_dir)
            .arg(artifact)
            .arg("-o")
            .arg(out)
            .args(["--message-format", "json", "-q"])
            .args(extra);
        if !libfuzzer.is_empty() {
            cmd.arg("--").args(libfuzzer);
        }
        common::run_limited(cmd, tmp, RUN_LIMIT)
    };
    let file = label.replace('/', "-");
    let plain_out = tmp.join(format!("{file}.plain"));
    let explained_out = tmp.join(format!("{file}.explained"));
    let plain = run(&["--no-explain"], &plain_out);
    let explained = run(&[], &explained_out);
    if !plain.ok() || !explained.ok() {
        eprintln!(
            "{label}: a run failed ({:?} / {:?}): {}{}",
            plain.status,
            explained.status,
            plain.stderr.trim(),
            explained.stderr.trim()
        );
        return None;
    }
    let a = fs::read(&plain_out).ok()?;
    let b = fs::read(&explained_out).ok()?;
    let v = explained.reduce_finished()?;
    eprintln!(
        "{label}: {} B, {:.2} s / {:.2} s",
        b.len(),
        plain.secs,
        explained.secs
    );
    Some(Row {
        part,
        label,
        result_len: b.len(),
        same: a == b,
        plain_secs: plain.secs,
        explained_secs: explained.secs,
        reduction_secs: v["elapsed_secs"].as_f64().unwrap_or(0.0),
        explanation: v["explanation"].clone(),
    })
}

/// Builds `target`'s driver (not counted) by classifying `artifact`.
fn warm_up(fuzz_dir: &Path, target: &str, artifact: &Path, tmp: &Path) {
    let mut cmd = Command::new(BIN);
    cmd.arg("--fuzz-target")
        .arg(target)
        .arg("--fuzz-dir")
        .arg(fuzz_dir)
        .arg("--classify")
        .arg(artifact);
    let f = common::run_limited(cmd, tmp, Duration::from_secs(1800));
    if f.status.is_none() {
        eprintln!("{target}: the warm-up build did not finish");
    }
}

fn typed_rows(tmp: &Path, rows: &mut Vec<Row>) {
    let copy = common::stable_copy("tests/fixtures/buggy", "explain-buggy");
    let fuzz_dir = copy.join("fuzz");
    for (t, found) in &common::typed_artifacts() {
        let dir = fuzz_dir.join("artifacts").join(t);
        fs::create_dir_all(&dir).expect("artifacts dir");
        for (i, f) in found.iter().enumerate() {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let artifact = dir.join(format!("crash-{name}"));
            fs::copy(f, &artifact).expect("copy artifact");
            if i == 0 {
                warm_up(&fuzz_dir, t, &artifact, tmp);
            }
            rows.extend(measure(
                "typed",
                format!("{t}/{name}"),
                &fuzz_dir,
                t,
                &artifact,
                &[],
                tmp,
            ));
        }
    }
}

fn realworld_rows(tmp: &Path, rows: &mut Vec<Row>) {
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/realworld");
    let fuzz_dir = bench.join("fuzz");
    let manifest =
        fs::read_to_string(bench.join("artifacts/manifest.tsv")).expect("realworld manifest");
    for line in manifest.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 5 || !REALWORLD_ROWS.contains(&f[0]) {
            continue;
        }
        let (entry, target, artifact) = (f[0], f[1], bench.join("artifacts").join(f[4]));
        warm_up(&fuzz_dir, target, &artifact, tmp);
        rows.extend(measure(
            "realworld",
            entry.to_owned(),
            &fuzz_dir,
            target,
            &artifact,
            &[],
            tmp,
        ));
    }
}

/// The ASan fixtures' artifacts: every kind of crash (and a timeout).
fn kind_rows(tmp: &Path, rows: &mut Vec<Row>) {
    const KINDS: &[(&str, &str, &[&str])] = &[
        (
            "heap_overflow",
            "crash-5cdf52e59b8f815ac132c2537e5e3d1cae110827",
            &[],
        ),
        (
            "use_after_free",
            "crash-d94ca19c8cc057998b0e1a9316885931902c1320",
            &[],
        ),
        (
            "deep_nesting",
            "crash-076821cefe2f9be297eb1fb480fa21ff554027c3",
            &[],
        ),
        (
            "trusted_length",
            "oom-97c3a96eb23660776c36f5f46fd9513597b54781",
            &[],
        ),
        ("most_asan", "generated-4096.bin", &[]),
        (
            "index_panic",
            "crash-f03277c9d061b7f60f641fcc9168fadd73c4a448",
            &[],
        ),
        (
            "slow_loop",
            "timeout-1b9e42d7eef5257c6ba07996fc79fa410d95d2d5",
            &["-timeout=2"],
        ),
    ];
    let copy = common::stable_copy("tests/fixtures/asan", "explain-asan");
    let fuzz_dir = copy.join("fuzz");
    for (target, file, libfuzzer) in KINDS {
        let dir = fuzz_dir.join("artifacts").join(target);
        fs::create_dir_all(&dir).expect("artifacts dir");
        let artifact = dir.join(file);
        fs::copy(copy.join("found").join(target).join(file), &artifact).expect("copy artifact");
        warm_up(&fuzz_dir, target, &artifact, tmp);
        rows.extend(measure(
            "kinds",
            format!("{target}/{file}"),
            &fuzz_dir,
            target,
            &artifact,
            libfuzzer,
            tmp,
        ));
    }
}

/// "k/n" values (typed: those with a `Debug` token) or bytes that are free.
fn verdicts(e: &serde_json::Value) -> String {
    let Some(parts) = e["parts"].as_array() else {
        return "—".into();
    };
    let typed = e["typed"].as_bool().unwrap_or(false);
    let counted: Vec<&serde_json::Value> = parts
        .iter()
        .filter(|p| !typed || p.get("value").is_some())
        .collect();
    let free = counted.iter().filter(|p| p["verdict"] == "free").count();
    let untried = counted.iter().filter(|p| p["verdict"] == "untried").count();
    let mut s = format!(
        "{free}/{} {}",
        counted.len(),
        if typed { "values" } else { "bytes" }
    );
    if untried > 0 {
        s.push_str(&format!(" ({untried} untried)"));
    }
    match e["together"]["verdict"].as_str() {
        Some("always") => s.push_str(", together"),
        Some("not-always") => s.push_str(", not together"),
        Some(v) => s.push_str(&format!(", together {v}")),
        None => {}
    }
    s
}

fn lines(e: &serde_json::Value) -> String {
    let l = &e["lines"];
    match l["unavailable"].as_str() {
        Some(why) if why.contains("ends the process") => "— (the crash ends the process)".into(),
        Some(why) => format!("— ({why})"),
        None => format!(
            "{} ({}/{} inputs)",
            l["lines"].as_array().map_or(0, Vec::len),
            l["failing"],
            l["passing"]
        ),
    }
}

fn report(rows: &[Row]) {
    println!(
        "| part | artifact | result B | same result | --no-explain s | explained s | reduction s | explanation s | tests | free | lines only crashing inputs ran |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let e = &r.explanation;
        println!(
            "| {} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {} | {} | {} | {} |",
            r.part,
            r.label,
            r.result_len,
            if r.same { "yes" } else { "**no**" },
            r.plain_secs,
            r.explained_secs,
            r.reduction_secs,
            e["secs"].as_f64().map_or("—".into(), |s| {
                // Over what it may take (its last test in flight aside).
                let over = s > allowed(r.reduction_secs) + 0.02;
                format!(
                    "{}{s:.2}{}",
                    if over { "**" } else { "" },
                    if over { "**" } else { "" }
                )
            }),
            e["tests"].as_u64().map_or("—".into(), |t| t.to_string()),
            verdicts(e),
            if e.is_null() {
                "— (not explained)".into()
            } else {
                lines(e)
            },
        );
    }
    for part in ["typed", "realworld", "kinds"] {
        let of: Vec<&Row> = rows.iter().filter(|r| r.part == part).collect();
        if of.is_empty() {
            continue;
        }
        let own = common::median(
            of.iter()
                .filter_map(|r| r.explanation["secs"].as_f64())
                .collect(),
        );
        let added = common::median(of.iter().map(|r| r.explained_secs - r.plain_secs).collect());
        let same = of.iter().filter(|r| r.same).count();
        let with_lines = of
            .iter()
            .filter(|r| {
                r.explanation["lines"]["lines"]
                    .as_array()
                    .is_some_and(|l| !l.is_empty())
            })
            .count();
        let within = of
            .iter()
            .filter(|r| {
                r.explanation["secs"]
                    .as_f64()
                    .is_none_or(|s| s <= allowed(r.reduction_secs) + 0.02)
            })
            .count();
        let untried = of
            .iter()
            .filter(|r| {
                r.explanation["parts"]
                    .as_array()
                    .is_some_and(|p| p.iter().any(|p| p["verdict"] == "untried"))
            })
            .count();
        println!(
            "\n- {part}: {} artifacts; same result with and without the explanation: {same}/{}; median explanation time {own:.2} s; median whole-command time added {added:.2} s; explanation within the reduction's time (at least 0.1 s): {within}/{}; with parts untried: {untried}; lines listed for {with_lines}/{}.",
            of.len(),
            of.len(),
            of.len(),
            of.len()
        );
    }
}
