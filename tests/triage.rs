//! Issue 24: from a pile of crashes to a list of bugs. On the committed
//! fleet (`tests/fixtures/fleet`: 204 crash files over four targets,
//! `truth.tsv` says which file hits which of nine bugs, `generate` wrote
//! them): `--all` finds exactly that bug list; the SARIF it writes is
//! valid; a baseline tells new, known and fixed bugs apart; shards of a CI
//! matrix merge into the unsharded run. Issue 35: crash text that looks
//! like Markdown or HTML stays text in the Markdown, and makes no link in
//! the SARIF (no fleet needed).
//!
//! Builds without a sanitizer (`-s none`), which work on any toolchain.

mod common;

use common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The copy of the fleet every test here uses, one test at a time (they
/// share its driver build, and one of them edits its source): artifacts as
/// committed, no earlier results or records.
fn fleet(_name: &str) -> (std::sync::MutexGuard<'static, ()>, PathBuf) {
    let serial = lock_target("fleet");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fleet");
    let root = tmp_root().join("fixtures").join("fleet");
    let _ = std::fs::remove_dir_all(root.join("fuzz/artifacts"));
    let _ = std::fs::remove_dir_all(root.join("fuzz/tests"));
    sync_tree(&source, &root);
    // (sync_tree leaves artifact directories out.)
    for target in std::fs::read_dir(source.join("fuzz/artifacts"))
        .unwrap()
        .flatten()
    {
        let to = root.join("fuzz/artifacts").join(target.file_name());
        std::fs::create_dir_all(&to).unwrap();
        for file in std::fs::read_dir(target.path()).unwrap().flatten() {
            std::fs::copy(file.path(), to.join(file.file_name())).unwrap();
        }
    }
    (serial, root)
}

/// `--all` on the fleet with the settings every test here uses: a bounded
/// reduction per bug (unless `--max-time` is in `extra`), hangs judged at
/// libFuzzer's `-timeout=1`.
fn all_args(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["--all", "--message-format", "json"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if !extra.contains(&"--max-time") {
        args.extend(["--max-time".to_owned(), "3".to_owned()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(["--".to_owned(), "-timeout=1".to_owned()]);
    args
}

/// Runs the binary in `root` with its own `--target-dir` (the fleet's
/// builds are shared by the tests here).
fn run_fleet(root: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "--target-dir".to_owned(),
        tmp_root().join("fleet-driver").display().to_string(),
    ];
    args.extend(all_args(extra));
    run_raw(&args, root)
}

/// truth.tsv: file name → bug.
fn truth() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fleet/truth.tsv"),
    )
    .unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            (cols[1].to_owned(), cols[2].to_owned())
        })
        .collect()
}

/// The run's bugs: fingerprint → the file names of its members.
fn bugs_of(run: &Run) -> BTreeMap<String, BTreeSet<String>> {
    run.json()
        .into_iter()
        .filter(|v| v["reason"] == "bug" && v["status"] != "fixed")
        .map(|v| {
            let files = v["members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    Path::new(m.as_str().unwrap())
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            (v["fingerprint"].as_str().unwrap().to_owned(), files)
        })
        .collect()
}

/// Splits (a true bug over several of ours) and merges (one of ours over
/// several true bugs) of `bugs` against `truth`.
fn score(
    bugs: &BTreeMap<String, BTreeSet<String>>,
    truth: &BTreeMap<String, String>,
) -> (usize, usize) {
    let mut ours_of: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut merges = 0;
    for (fp, files) in bugs {
        let true_bugs: BTreeSet<&str> = files
            .iter()
            .map(|f| truth.get(f).map(String::as_str).unwrap_or("?"))
            .collect();
        merges += true_bugs.len() - 1;
        for t in true_bugs {
            ours_of.entry(t).or_default().insert(fp);
        }
    }
    let splits = ours_of.values().map(|s| s.len() - 1).sum();
    (splits, merges)
}

#[test]
fn all_finds_exactly_the_fleets_bug_list() {
    let (_serial, root) = fleet("all");
    let truth = truth();
    assert!(truth.len() >= 200, "{} files", truth.len());
    let report = root.join("report.json");
    let sarif = root.join("report.sarif");
    let md = root.join("summary.md");
    // Every reduction to its end, so that the second run has them all.
    let run = run_fleet(
        &root,
        &[
            "--max-time",
            "600",
            "--emit-test",
            "fuzz/tests/triage",
            "--report",
            &report.display().to_string(),
            "--sarif",
            &sarif.display().to_string(),
            "--markdown",
            &md.display().to_string(),
        ],
    );
    run.assert_no_panic().assert_code(0);
    let bugs = bugs_of(&run);
    let true_bugs: BTreeSet<&String> = truth.values().collect();
    assert_eq!(bugs.len(), true_bugs.len(), "{bugs:#?}");
    assert_eq!(score(&bugs, &truth), (0, 0), "{bugs:#?}");
    let found: usize = bugs.values().map(BTreeSet::len).sum();
    assert_eq!(found, truth.len());
    // The bug reached from two targets, and the one through two callers.
    let lines: Vec<Value> = run
        .json()
        .into_iter()
        .filter(|v| v["reason"] == "bug")
        .collect();
    let targets_of = |file_bug: &str| -> Vec<String> {
        let fp = bugs
            .iter()
            .find(|(_, files)| files.iter().any(|f| truth[f] == file_bug))
            .unwrap()
            .0;
        let line = lines
            .iter()
            .find(|l| l["fingerprint"] == fp.as_str())
            .unwrap();
        serde_json::from_value(line["targets"].clone()).unwrap()
    };
    assert_eq!(targets_of("checksum-overflow"), vec!["frames", "records"]);
    assert_eq!(targets_of("header-index"), vec!["frames", "typed"]);
    assert_eq!(targets_of("length-slice"), vec!["frames", "records"]);
    // Every bug has a severity and a reduced result.
    for l in &lines {
        assert_eq!(l["status"], "reduced", "{l}");
        assert!(l["severity"]["tier"].is_string(), "{l}");
        assert!(l["output"].is_string(), "{l}");
    }
    // The report, SARIF and Markdown name the same bugs.
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let in_report: BTreeSet<String> = r["bugs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["fingerprint"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(in_report, bugs.keys().cloned().collect());
    let s: Value = serde_json::from_slice(&std::fs::read(&sarif).unwrap()).unwrap();
    assert_eq!(
        s["runs"][0]["results"].as_array().unwrap().len(),
        bugs.len()
    );
    let summary = std::fs::read_to_string(&md).unwrap();
    assert_eq!(
        summary.lines().filter(|l| l.starts_with("| `")).count(),
        bugs.len()
    );

    // One regression test per bug, named by its fingerprint.
    let tests = root.join("fuzz/tests/triage");
    let emitted: BTreeSet<String> = std::fs::read_dir(&tests)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let expected: BTreeSet<String> = bugs
        .keys()
        .map(|fp| format!("crash_{}.rs", fp.replace('-', "_")))
        .collect();
    assert_eq!(emitted, expected);

    // A second run: nothing to do, the same fingerprints; its tests, into
    // another directory, come from the recorded results, the same files.
    let again = run_fleet(
        &root,
        &["--max-time", "600", "--emit-test", "fuzz/tests/again"],
    );
    again.assert_code(0);
    assert_eq!(bugs_of(&again), bugs);
    assert!(again
        .json()
        .iter()
        .filter(|v| v["reason"] == "bug")
        .all(|v| v["status"] == "cached"));
    for name in &expected {
        assert_eq!(
            std::fs::read_to_string(tests.join(name)).unwrap(),
            std::fs::read_to_string(root.join("fuzz/tests/again").join(name))
                .unwrap_or_else(|e| panic!("{name} not written for a cached bug: {e}")),
            "{name}"
        );
    }
}

/// The SARIF a run writes is valid SARIF 2.1.0, as Microsoft's SARIF
/// Multitool (`npm install @microsoft/sarif-multitool`, its `validate`
/// command) judges it. Without npm and the registry, the test says so and
/// checks the JSON Schema's required fields by hand instead.
#[test]
fn the_sarif_is_valid_sarif_2_1_0() {
    let (_serial, root) = fleet("sarif");
    let sarif = root.join("out.sarif");
    let run = run_fleet(&root, &["--sarif", &sarif.display().to_string()]);
    run.assert_code(0);
    match sarif_multitool() {
        Some(tool) => {
            let _ = std::fs::remove_file(root.join("validation.sarif"));
            let out = Command::new(&tool)
                .args(["validate", "-o"])
                .arg(root.join("validation.sarif"))
                .arg(&sarif)
                .output()
                .unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.status.success(),
                "sarif-multitool validate failed:\n{text}"
            );
            let report: Value =
                serde_json::from_slice(&std::fs::read(root.join("validation.sarif")).unwrap())
                    .unwrap();
            let errors: Vec<&Value> = report["runs"][0]["results"]
                .as_array()
                .map(|r| r.iter().filter(|x| x["level"] == "error").collect())
                .unwrap_or_default();
            assert!(errors.is_empty(), "validation errors: {errors:#?}");
        }
        None => {
            eprintln!(
                "the_sarif_is_valid_sarif_2_1_0: `npm install @microsoft/sarif-multitool` failed here; checking required fields only"
            );
            let s: Value = serde_json::from_slice(&std::fs::read(&sarif).unwrap()).unwrap();
            assert_eq!(s["version"], "2.1.0");
            for r in s["runs"][0]["results"].as_array().unwrap() {
                assert!(r["message"]["text"].is_string());
                assert!(r["ruleId"].is_string());
            }
        }
    }
}

/// `sarif-multitool`, installed from the npm registry into the test's
/// temporary directory (once), if npm can install it here.
fn sarif_multitool() -> Option<PathBuf> {
    let dir = tmp_root().join("sarif-multitool");
    let bin = dir.join("node_modules/.bin/sarif-multitool");
    if !bin.exists() {
        std::fs::create_dir_all(&dir).ok()?;
        let status = Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "@microsoft/sarif-multitool@5.7.0",
            ])
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()?;
        if !status.success() {
            return None;
        }
    }
    bin.exists().then_some(bin)
}

/// With the report of an earlier run as `--baseline`, a bug fixed since is
/// `fixed`, a new one `new`, the rest `known`, and the exit code says new
/// bugs were found.
#[test]
fn a_baseline_tells_new_known_and_fixed_bugs_apart() {
    let (_serial, root) = fleet("history");
    let lib = root.join("src/lib.rs");
    let original = std::fs::read_to_string(&lib).unwrap();
    let base = root.join("base.json");
    let first = run_fleet(&root, &["--report", &base.display().to_string()]);
    first.assert_code(0);
    let before = bugs_of(&first);
    // Fix the checksum overflow; add a bug reached by `NEW!`.
    let changed = original
        .replace("        sum += b;", "        sum = sum.wrapping_add(b);")
        .replace(
            "        } else if rest.starts_with(b\"ABRT\") {",
            "        } else if rest.starts_with(b\"NEW!\") {\n            panic!(\"a new bug\");\n        } else if rest.starts_with(b\"ABRT\") {",
        );
    assert_ne!(changed, original);
    std::fs::write(&lib, &changed).unwrap();
    std::fs::write(
        root.join("fuzz/artifacts/frames/crash-new"),
        b"xyz NEW! xyz",
    )
    .unwrap();
    let second = run_fleet(&root, &["--baseline", &base.display().to_string()]);
    std::fs::write(&lib, &original).unwrap();
    second.assert_no_panic();
    let history: BTreeMap<String, String> = second
        .json()
        .into_iter()
        .filter(|v| v["reason"] == "bug")
        .map(|v| {
            (
                v["fingerprint"].as_str().unwrap().to_owned(),
                v["history"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let count = |h: &str| history.values().filter(|v| *v == h).count();
    assert_eq!(count("fixed"), 1, "{history:#?}\n{}", second.describe());
    assert_eq!(count("new"), 1, "{history:#?}");
    assert_eq!(count("known"), before.len() - 1, "{history:#?}");
    assert_eq!(
        second.code,
        Some(reduce_crash::exit_code::NEW_BUGS),
        "{}",
        second.describe()
    );
    let _ = std::fs::remove_file(root.join("fuzz/artifacts/frames/crash-new"));
}

/// Four shards of a CI matrix on one directory at once, then the merge:
/// the unsharded run's bug list. A shard killed mid-run and run again gives
/// the same final report.
#[test]
fn shards_merge_into_the_unsharded_run() {
    let (serial, whole) = fleet("whole");
    let unsharded = run_fleet(&whole, &[]);
    unsharded.assert_code(0);
    let expected = bugs_of(&unsharded);
    drop(serial);

    // A fresh copy: nothing of the unsharded run's results and records.
    let (_serial, root) = fleet("shards");
    let report = |k: usize| root.join(format!("shard-{k}.json"));
    let shard_args = |k: usize| {
        let mut args = vec![
            "--target-dir".to_owned(),
            tmp_root().join("fleet-driver").display().to_string(),
        ];
        args.extend(all_args(&[
            "--partition",
            &format!("hash:{k}/4"),
            "--report",
            &report(k).display().to_string(),
        ]));
        args
    };
    // Shard 3 is killed first, then run again while the others still work.
    let killed = command(&shard_args(3), &root).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    unsafe { libc::kill(killed.id() as i32, libc::SIGKILL) };
    let _ = killed.wait_with_output();
    let started = Instant::now();
    let children: Vec<_> = (1..=4)
        .map(|k| (k, command(&shard_args(k), &root).spawn().unwrap()))
        .collect();
    for (k, child) in children {
        let run = finish(child, shard_args(k), started, RUN_LIMIT);
        run.assert_no_panic().assert_code(0);
    }
    let merged_path = root.join("merged.json");
    let mut merge_args = vec!["--merge".to_owned()];
    merge_args.extend((1..=4).map(|k| report(k).display().to_string()));
    merge_args.extend(["--report".to_owned(), merged_path.display().to_string()]);
    merge_args.extend(["--message-format".to_owned(), "json".to_owned()]);
    let merged = run_raw(&merge_args, &root);
    merged.assert_no_panic().assert_code(0);
    let got = bugs_of(&merged);
    assert_eq!(got, expected, "{}", merged.describe());
    let report: Value = serde_json::from_slice(&std::fs::read(&merged_path).unwrap()).unwrap();
    assert!(report["bugs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|b| b["status"] == "reduced" || b["status"] == "cached"));
    // No bug was reduced by two shards: each shard's own bugs are disjoint.
    let mut owners: BTreeMap<String, usize> = BTreeMap::new();
    for k in 1..=4 {
        let r: Value =
            serde_json::from_slice(&std::fs::read(report_path(&root, k)).unwrap()).unwrap();
        for b in r["bugs"].as_array().unwrap() {
            if b["status"] != "skipped" {
                *owners
                    .entry(b["fingerprint"].as_str().unwrap().to_owned())
                    .or_default() += 1;
            }
        }
    }
    assert!(owners.values().all(|&n| n == 1), "{owners:?}");
    assert_eq!(owners.len(), expected.len());
}

fn report_path(root: &Path, k: usize) -> PathBuf {
    root.join(format!("shard-{k}.json"))
}

/// Hostile crash text: Markdown a pull-request comment or a job summary
/// would act on (a mention, a link, a remote image, HTML, emphasis, backtick
/// runs that close a code span, a `|` that adds a table cell, line breaks)
/// and SARIF embedded links (§3.11.6: `[text](destination)`).
const PAYLOADS: &[&str] = &[
    "@octocat",
    "[x](https://evil.example/)",
    "![i](https://evil.example/p.png)",
    "<img src=x onerror=alert(1)>",
    "tick`one``two```three",
    "`fenced`",
    "a|b",
    "line1\nline2",
    "**bold**",
    "\\`",
    "[x](1) and [y\\](2) and \\[z\\](3)",
    "cr\rlf\r\n<b>_em_</b> ~~gone~~ www.evil.example",
];

/// A report of three bugs (a panic, a sanitizer error, a stack overflow)
/// whose every crash-derived string (signature, message, function, file,
/// target, class, status, artifact, shard, reproduce line, the lines only
/// crashing inputs ran) is `p`.
fn hostile_report(p: &str) -> reduce_crash::triage::report::Report {
    use reduce_crash::run::outcome::{CrashKind, Signature, StackFrame};
    use reduce_crash::triage::report::{BugEntry, Reduced, Report, SourceLocation};
    use reduce_crash::triage::severity::{Severity, Tier};
    use reduce_crash::triage::Grouping;
    let bug = |i: usize, kind: CrashKind| BugEntry {
        fingerprint: format!("f{i}{p}"),
        severity: Severity {
            tier: Tier::ProbablyExploitable,
            class: p.into(),
            security_severity: 5.0,
        },
        grouping: Grouping::Single,
        signature: Signature {
            kind,
            message: Some(match kind {
                CrashKind::Sanitizer => format!("AddressSanitizer: {p}"),
                _ => p.into(),
            }),
            location: Some(format!("{p}:3:9")),
            function: Some(p.into()),
            details: None,
        },
        location: Some(SourceLocation {
            file: p.into(),
            in_repository: true,
            line: 3,
            column: Some(9),
        }),
        stack: vec![StackFrame {
            function: p.into(),
            location: Some(format!("{p}:3:9")),
        }],
        targets: vec![p.into(), format!("t{i}")],
        status: p.into(),
        history: None,
        artifacts: vec![p.into()],
        representative: p.into(),
        target: p.into(),
        original_len: 100,
        reduced: Some(Reduced {
            path: p.into(),
            len: 3,
            sha1: None,
        }),
        reproduce: Some(p.into()),
        error: Some(p.into()),
        failing_lines: vec![SourceLocation {
            file: p.into(),
            in_repository: true,
            line: 4,
            column: None,
        }],
    };
    let mut report = Report::new(Some(p.into()), 2, 0);
    report.bugs = vec![
        bug(1, CrashKind::Panic),
        bug(2, CrashKind::Sanitizer),
        bug(3, CrashKind::StackOverflow),
    ];
    report
}

/// What a crash carries is data: rendered as Markdown (GitHub-flavoured,
/// tables on), each crash-derived string of a hostile report is a code
/// span, never a link, an image, HTML, emphasis or an extra table cell.
#[test]
fn crash_text_is_data_in_markdown() {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    // Words only the payloads have: none may reach a text event.
    const MARKERS: &[&str] = &[
        "octocat", "evil", "onerror", "tick", "fenced", "line1", "line2", "bold", "gone",
    ];
    let shown = |p: &str| p.replace("\r\n", "\n").replace(['\r', '\n'], "␤");
    for &p in PAYLOADS {
        let report = hostile_report(p);
        let md = reduce_crash::triage::report::markdown::render(&report);
        let mut code = Vec::new();
        let mut cells = 0;
        let mut rows = 0;
        let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
        for event in Parser::new_ext(&md, options) {
            match event {
                Event::Code(c) => code.push(c.into_string()),
                Event::Text(t) => {
                    for m in MARKERS {
                        assert!(!t.contains(m), "{p:?}: text {t:?} outside code in\n{md}");
                    }
                }
                Event::Html(h) | Event::InlineHtml(h) => panic!("{p:?}: HTML {h:?} in\n{md}"),
                Event::Start(
                    tag @ (Tag::Link { .. }
                    | Tag::Image { .. }
                    | Tag::Emphasis
                    | Tag::Strong
                    | Tag::Strikethrough
                    | Tag::HtmlBlock),
                ) => panic!("{p:?}: {tag:?} in\n{md}"),
                Event::Start(Tag::TableCell) => cells += 1,
                Event::End(TagEnd::TableHead | TagEnd::TableRow) => {
                    assert_eq!(cells, 8, "{p:?}: a row of {cells} cells in\n{md}");
                    cells = 0;
                    rows += 1;
                }
                _ => {}
            }
        }
        assert_eq!(rows, 1 + report.bugs.len(), "{p:?}: the table in\n{md}");
        // The data is still there, whole, as code.
        assert!(
            code.iter().any(|c| *c == shown(p)),
            "{p:?} is not a code span of its own in {code:?}:\n{md}"
        );
    }
}

/// What a crash carries is data in SARIF too: no plain-text message,
/// description or location message of a hostile report's SARIF holds an
/// embedded link (§3.11.6), and each reads back, unescaped, as the data.
#[test]
fn crash_text_is_data_in_sarif() {
    for &p in PAYLOADS {
        let report = hostile_report(p);
        let sarif = reduce_crash::triage::report::sarif::render(&report, "all");
        let sarif: Value = serde_json::from_str(&sarif).unwrap();
        let mut texts = Vec::new();
        collect_texts(&sarif, &mut texts);
        assert!(texts.len() > report.bugs.len(), "{texts:?}");
        for t in &texts {
            assert!(!has_embedded_link(t), "{p:?}: a link in SARIF text {t:?}");
        }
        for result in sarif["runs"][0]["results"].as_array().unwrap() {
            let text = unescape_sarif(result["message"]["text"].as_str().unwrap());
            assert!(
                text.ends_with(&format!("Reproduce with: {p}")),
                "{p:?}: {text:?}"
            );
        }
    }
}

/// Every `text` (or `markdown`) string in a SARIF document.
fn collect_texts(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    ("text" | "markdown", Value::String(s)) => out.push(s.clone()),
                    _ => collect_texts(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| collect_texts(v, out)),
        _ => {}
    }
}

/// Whether a SARIF plain-text message has an embedded link, as a viewer
/// that reads §3.11.6's escapes (`\\`, `\[`, `\]`) finds one: `[`, then
/// `](`.
fn has_embedded_link(text: &str) -> bool {
    let mut open = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some('\\' | '[' | ']')) => {
                chars.next();
            }
            '[' => open = true,
            ']' if open && chars.peek() == Some(&'(') => return true,
            ']' => open = false,
            _ => {}
        }
    }
    false
}

/// A SARIF plain-text message as such a viewer shows it.
fn unescape_sarif(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(&n @ ('\\' | '[' | ']'))) => {
                out.push(n);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}
