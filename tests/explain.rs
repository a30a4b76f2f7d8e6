//! The explanation after a reduction (issue 26), end to end on the `buggy`
//! fixture's `explain_*` targets, whose answers are known by construction:
//! - `explain_request`: `Request { kind, note, index }`, crashes for kind 3
//!   and an index past a four-slot table; `note` is free, the others not;
//! - `explain_area`: `Rect { width, height, scale }` divides by the area for
//!   scale 9; width and height are each free while the other is zero, not
//!   both at once;
//! - `explain_length`: bytes, a length byte then that many payload bytes;
//!   the payload is free, the length not;
//! - `explain_branch`: bytes, a tag byte's branch that selects a table one
//!   past the end: the lines only crashing inputs ran are that branch's.
//!
//! Each is checked exactly, in JSON and as a person reads it, and the
//! written result is the same with `--no-explain`.

mod common;

use common::*;
use serde_json::{json, Value};

/// Reduces `bytes` as an artifact of `target` with `extra` args; returns
/// the `reduce-finished` message and the result's bytes.
/// The explanation's default number of tests, asked for by number: then no
/// time cap applies (by default the explanation gets the reduction's own
/// time, which a loaded machine shortens), so the exact answers checked
/// here do not depend on the machine. `benches/explain` measures the
/// default cap.
const EXPLAIN_TESTS: [&str; 2] = ["--explain-tests", "2000"];

fn reduce_artifact(target: &str, name: &str, bytes: &[u8], extra: &[&str]) -> (Value, Vec<u8>) {
    let artifact = fixture().write_artifact(target, name, bytes);
    let mut args: Vec<&str> = extra.to_vec();
    if !extra
        .iter()
        .any(|a| a.starts_with("--explain") || *a == "--no-explain")
    {
        args.extend(EXPLAIN_TESTS);
    }
    let run = reduce(&artifact, &args);
    run.assert_code(0);
    let v = run.message("reduce-finished");
    let result = std::fs::read(reduced_path(&artifact)).unwrap();
    (v, result)
}

/// The `explanation` without its time (which varies).
fn explanation(v: &Value) -> Value {
    let mut e = v["explanation"].clone();
    assert!(e["secs"].as_f64().is_some_and(|s| s >= 0.0), "{v}");
    e.as_object_mut().unwrap().remove("secs");
    // The failing-only lines depend on the build: checked on their own.
    assert!(e.as_object_mut().unwrap().remove("lines").is_some(), "{v}");
    e
}

/// The human output's explanation block, from `Explained` to the summary
/// line, without the counts on its first line.
fn human_block(target: &str, name: &str, bytes: &[u8]) -> String {
    let artifact = fixture().write_artifact(target, name, bytes);
    let mut args: Vec<String> = EXPLAIN_TESTS.iter().map(|s| s.to_string()).collect();
    args.push(artifact.display().to_string());
    let run = run(&args, &fixture().root);
    run.assert_code(0);
    let out = format!("{}{}", run.stdout, run.stderr);
    let from = out
        .find("Explained (")
        .unwrap_or_else(|| panic!("no explanation:\n{out}"));
    let block = &out[from..];
    let block = &block[..block
        .find("\nLines only crashing inputs ran")
        .unwrap_or(block.len())];
    let (first, rest) = block.split_once('\n').unwrap();
    assert!(
        first.ends_with("can change and still crash the same way"),
        "{first}"
    );
    rest.trim_end().to_owned()
}

#[test]
fn one_field_of_three_is_free() {
    let _guard = lock_target("explain_request");
    let (v, result) = reduce_artifact(
        "explain_request",
        "explain-json",
        b"\x03\xab\xcd\xc8\x11\x22\x33",
        &[],
    );
    assert_eq!(result, b"\x03\x00\x00\x04");
    assert_eq!(
        explanation(&v),
        json!({
            "tests": 102,
            "typed": true,
            "parts": [
                {"start": 0, "end": 1, "kind": "leaf", "verdict": "needed", "tried": 0,
                 "path": ".kind", "value": "3", "example": "00000004"},
                {"start": 1, "end": 3, "kind": "leaf", "verdict": "free", "tried": 100,
                 "path": ".note", "value": "0"},
                {"start": 3, "end": 4, "kind": "leaf", "verdict": "needed", "tried": 0,
                 "path": ".index", "value": "4", "example": "03000000"},
            ],
            "free_ranges": [[1, 3]],
            "text": "Request {\n    kind: 3,\n    note: 0,  // any value\n    index: 4,\n}\n\
                     1 of 3 values is free: any value still crashes the same way",
        })
    );
    assert_eq!(
        human_block(
            "explain_request",
            "explain-human",
            b"\x03\xab\xcd\xc8\x11\x22\x33"
        ),
        "Request {\n    kind: 3,\n    note: 0,  // any value\n    index: 4,\n}\n\
         1 of 3 values is free: any value still crashes the same way"
    );
}

#[test]
fn two_fields_free_alone_are_not_free_together() {
    let _guard = lock_target("explain_area");
    let (v, result) = reduce_artifact("explain_area", "explain-json", b"\x00\x4d\x09\x55\x66", &[]);
    assert_eq!(result, b"\x00\x00\x09");
    let summary = "2 of 3 values are free: any value in each still crashes the same way, \
                   one at a time only: Rect { width: 255, height: 255, scale: 9 } does not \
                   crash the same way";
    let marked =
        "Rect {\n    width: 0,  // any value\n    height: 0,  // any value\n    scale: 9,\n}\n";
    assert_eq!(
        explanation(&v),
        json!({
            "tests": 202,
            "typed": true,
            "parts": [
                {"start": 0, "end": 1, "kind": "leaf", "verdict": "free", "tried": 100,
                 "path": ".width", "value": "0"},
                {"start": 1, "end": 2, "kind": "leaf", "verdict": "free", "tried": 100,
                 "path": ".height", "value": "0"},
                {"start": 2, "end": 3, "kind": "leaf", "verdict": "needed", "tried": 0,
                 "path": ".scale", "value": "9", "example": "000000"},
            ],
            "together": {"verdict": "not-always", "tried": 0, "example": "ffff09",
                         "debug": "Rect { width: 255, height: 255, scale: 9 }"},
            "free_ranges": [[0, 2]],
            "text": format!("{marked}{summary}"),
        })
    );
    assert_eq!(
        human_block("explain_area", "explain-human", b"\x00\x4d\x09\x55\x66"),
        format!("{marked}{summary}")
    );
}

#[test]
fn a_length_byte_is_needed_and_its_payload_free() {
    let _guard = lock_target("explain_length");
    let (v, result) = reduce_artifact("explain_length", "explain-json", b"\x03abc", &[]);
    assert_eq!(result, b"\x03\x00\x00\x00");
    let byte = |i: usize, verdict: &str, tried: usize| {
        let mut p =
            json!({"start": i, "end": i + 1, "kind": "byte", "verdict": verdict, "tried": tried});
        if verdict == "needed" {
            p["example"] = json!("00000000");
        }
        p
    };
    let text = "0000  03 00 00 00                                      ....\n\
                \x20        ~~ ~~ ~~\n\
                ~~ any value\n\
                3 of 4 bytes are free: any value in each still crashes the same way, all at once too";
    assert_eq!(
        explanation(&v),
        json!({
            "tests": 400,
            "typed": false,
            "parts": [byte(0, "needed", 0), byte(1, "free", 100), byte(2, "free", 100), byte(3, "free", 100)],
            "together": {"verdict": "always", "tried": 100},
            "free_ranges": [[1, 4]],
            "text": text,
        })
    );
    assert_eq!(
        human_block("explain_length", "explain-human", b"\x03abc"),
        text
    );
}

#[test]
fn no_explain_leaves_the_result_as_it_is() {
    let _guard = lock_target("explain_request");
    let input = b"\x03\x01\x02\x09\x44";
    let (with, explained) = reduce_artifact("explain_request", "explain-on", input, &[]);
    assert!(with["explanation"].is_object(), "{with}");
    let (without, plain) =
        reduce_artifact("explain_request", "explain-off", input, &["--no-explain"]);
    assert_eq!(without["explanation"], Value::Null, "{without}");
    let (zero, _) = reduce_artifact(
        "explain_request",
        "explain-zero",
        input,
        &["--explain-tests", "0"],
    );
    assert_eq!(zero["explanation"], Value::Null, "{zero}");
    assert_eq!(explained, plain);
    // The explanation's tests are not the reduction's.
    assert_eq!(with["tests_executed"], without["tests_executed"]);
}

#[test]
fn the_emitted_test_carries_the_marks() {
    let _guard = lock_target("explain_request");
    let test = tmp_root().join("explain-emitted").join("crash_request.rs");
    let _ = std::fs::remove_file(&test);
    let test_arg = test.display().to_string();
    let (v, _) = reduce_artifact(
        "explain_request",
        "explain-emit",
        b"\x03\xab\xcd\xc8\x11\x22\x33",
        &["--emit-test", &test_arg],
    );
    assert!(v["explanation"].is_object(), "{v}");
    let source = std::fs::read_to_string(&test).unwrap();
    let comment = "/// The reduced input, as the target sees it (`cargo fuzz fmt`):\n\
                   ///\n\
                   ///     Request {\n\
                   ///         kind: 3,\n\
                   ///         note: 0,  // any value\n\
                   ///         index: 4,\n\
                   ///     }\n\
                   ///\n\
                   /// 1 of 3 values is free: any value still crashes the same way.\n\
                   const INPUT: &[u8] = ";
    assert!(source.contains(comment), "{source}");
}

#[test]
fn lines_only_crashing_inputs_ran_are_the_wrong_branch() {
    let _guard = lock_target("explain_branch");
    // Coverage counters and their PC table are in `cargo fuzz build`'s
    // build (the build without a sanitizer has no instrumentation).
    let faithful = ["--sanitizer", "address"];
    let (v, result) = reduce_artifact(
        "explain_branch",
        "explain-lines",
        b"\x10\x50\xc3\x22",
        &faithful,
    );
    assert_eq!(result, b"\x80");
    let lines = &v["explanation"]["lines"];
    assert_eq!(lines["unavailable"], Value::Null, "{lines}");
    let listed: Vec<&str> = lines["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["location"].as_str().unwrap())
        .collect();
    let line = |n: u32| format!("fuzz_targets/explain_branch.rs:{n}");
    // The wrong branch (`extended.push(tag); 3`), and nothing that every
    // input runs: `table_for`'s entry and test, the loop, the setup.
    assert!(
        listed
            .iter()
            .any(|l| l.ends_with(&line(12)) || l.ends_with(&line(13))),
        "{lines}"
    );
    for always in [8, 9, 10, 18, 19, 20, 21, 24] {
        assert!(
            !listed.iter().any(|l| l.ends_with(&line(always))),
            "line {always} runs for every input: {lines}"
        );
    }
    // Only the fixture's own code: not the driver's, not the standard library's.
    assert!(
        listed.iter().all(|l| l.contains("explain_branch.rs:")),
        "{lines}"
    );
    assert!(lines["failing"].as_u64().unwrap() >= 2, "{lines}");
    assert!(lines["passing"].as_u64().unwrap() >= 2, "{lines}");
    // A person sees them below the explanation.
    let artifact =
        fixture().write_artifact("explain_branch", "explain-lines-human", b"\x10\x50\xc3\x22");
    let run = run(
        &[faithful[0], faithful[1], &artifact.display().to_string()],
        &fixture().root,
    );
    run.assert_code(0);
    let out = format!("{}{}", run.stdout, run.stderr);
    let from = out
        .find("Lines only crashing inputs ran (")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        out[from..]
            .lines()
            .nth(1)
            .is_some_and(|l| l.contains("explain_branch.rs:")),
        "{out}"
    );
}

#[test]
fn without_counters_the_lines_say_why() {
    let _guard = lock_target("explain_branch");
    let (v, _) = reduce_artifact("explain_branch", "explain-no-lines", b"\xc3", &[]);
    let lines = &v["explanation"]["lines"];
    assert_eq!(lines["lines"], json!([]), "{lines}");
    assert!(
        lines["unavailable"]
            .as_str()
            .is_some_and(|w| w.contains("coverage counters")),
        "{lines}"
    );
}

#[test]
fn a_directory_run_puts_the_lines_in_its_report_sarif_and_markdown() {
    let _guard = lock_target("explain_branch");
    let root = tmp_root().join("explain-directory");
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("crashes");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("crash-a"), b"\x10\x50\xc3\x22").unwrap();
    std::fs::write(dir.join("crash-b"), b"\x22\x90").unwrap();
    let fx = fixture();
    let out = |name: &str| root.join(name).display().to_string();
    let args = [
        "--sanitizer".to_owned(),
        "address".to_owned(),
        "--fuzz-target".to_owned(),
        "explain_branch".to_owned(),
        "--fuzz-dir".to_owned(),
        fx.root.join("fuzz").display().to_string(),
        dir.display().to_string(),
        "--report".to_owned(),
        out("report.json"),
        "--sarif".to_owned(),
        out("report.sarif"),
        "--markdown".to_owned(),
        out("report.md"),
    ];
    for pass in ["reduced", "cached"] {
        let run = run(&args, &fx.root);
        run.assert_code(0);
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(out("report.json")).unwrap()).unwrap();
        let bugs = report["bugs"].as_array().unwrap();
        assert_eq!(bugs.len(), 1, "{report}");
        assert_eq!(bugs[0]["status"], pass, "{report}");
        let lines = bugs[0]["failing_lines"].as_array().unwrap();
        let branch = lines.iter().find(|l| {
            l["file"]
                .as_str()
                .unwrap()
                .ends_with("fuzz_targets/explain_branch.rs")
                && l["line"] == 12
        });
        assert!(branch.is_some(), "{pass}: {report}");
        let sarif: Value =
            serde_json::from_str(&std::fs::read_to_string(out("report.sarif")).unwrap()).unwrap();
        let related = sarif["runs"][0]["results"][0]["relatedLocations"]
            .as_array()
            .unwrap();
        assert_eq!(related.len(), lines.len(), "{sarif}");
        assert!(related.iter().any(|r| {
            r["physicalLocation"]["region"]["startLine"] == 12
                && r["message"]["text"] == "Only crashing inputs run this line."
        }));
        let md = std::fs::read_to_string(out("report.md")).unwrap();
        assert!(md.contains("### Lines only crashing inputs ran"), "{md}");
        assert!(md.contains("explain_branch.rs:12`"), "{md}");
    }
}
