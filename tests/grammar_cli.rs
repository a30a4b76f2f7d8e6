//! `--grammar` end to end through the CLI, on the fixture's text target
//! `json_config` (a JSON config check that rejects invalid JSON before the
//! bug): tree reduction keeps every candidate valid, ends no larger than the
//! byte pipeline with fewer tests; bad grammars and inputs the grammar does
//! not parse give one-line errors with positions.

mod common;

use common::*;

/// A valid JSON config, a few hundred bytes, with the bug (`"port": 70000`)
/// deep inside.
fn config_document() -> Vec<u8> {
    br#"{
  "service": {
    "name": "api",
    "listen": [{"host": "0.0.0.0", "port": 8080}, {"host": "::", "port": 8443}],
    "limits": {"timeout": 30, "retries": [1, 2, 4], "mode": "strict"}
  },
  "backends": [
    {"host": "cache", "port": 6379, "weight": 3, "tags": ["a", "b", null, true]},
    {"host": "queue", "opts": {"durable": false, "prefetch": 64}},
    {"host": "db", "port": 70000, "pool": {"min": 2, "max": [16, 32], "name": "srv-7"}},
    {"host": "search", "port": 9200, "tags": []}
  ]
}
"#
    .to_vec()
}

#[test]
fn grammar_reduction_is_valid_smaller_and_cheaper_than_bytes() {
    let fx = fixture();
    let _guard = lock_target("json_config");
    let data = config_document();
    let artifact = fx.write_artifact("json_config", "grammar_cli", &data);
    let original = classify_one(&artifact, None, &[]);
    assert_eq!(original["signature"]["kind"], "panic", "{original}");

    let tree_out = fx.artifact_dir("json_config").join("grammar_cli.tree");
    let run = reduce(
        &artifact,
        &["--grammar", "json", "-o", tree_out.to_str().unwrap()],
    );
    run.assert_code(0);
    let tree = run.message("reduce-finished");
    assert_eq!(tree["strategy"], "grammar", "{tree}");
    assert_eq!(tree["grammar"], "json", "{tree}");
    assert_eq!(tree["invalid_candidates"], 0, "{tree}");
    let tree_bytes = std::fs::read(&tree_out).unwrap();
    assert_eq!(tree_bytes, br#"{"port":70000}"#, "{tree}");
    let reduced = classify_one(&tree_out, Some("json_config"), &[]);
    assert_eq!(
        reduced["signature"]["location"], original["signature"]["location"],
        "{reduced}"
    );

    let bytes_out = fx.artifact_dir("json_config").join("grammar_cli.bytes");
    let run = reduce(
        &artifact,
        &["--strategy", "ddmin", "-o", bytes_out.to_str().unwrap()],
    );
    run.assert_code(0);
    let bytes = run.message("reduce-finished");
    let ddmin_bytes = std::fs::read(&bytes_out).unwrap();
    eprintln!(
        "grammar: {} bytes in {} tests; ddmin: {} bytes in {} tests",
        tree_bytes.len(),
        tree["tests_executed"],
        ddmin_bytes.len(),
        bytes["tests_executed"]
    );
    assert!(tree_bytes.len() <= ddmin_bytes.len(), "{tree}\n{bytes}");
    assert!(
        tree["tests_executed"].as_u64() < bytes["tests_executed"].as_u64(),
        "{tree}\n{bytes}"
    );
    assert_eq!(std::fs::read(&artifact).unwrap(), data);
}

#[test]
fn bad_grammar_and_unparsable_input_are_one_line_errors_with_positions() {
    let fx = fixture();
    let _guard = lock_target("json_config");
    let artifact = fx.write_artifact("json_config", "grammar_errors", &config_document());
    let p = artifact.display().to_string();

    // A grammar file with an undefined nonterminal: file:line:col.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.bnf");
    std::fs::write(&bad, "<start> ::= <value>\n<value> ::= \"a\" | <missing>\n").unwrap();
    let bad_run = run(&["--grammar", bad.to_str().unwrap(), &p], &fx.root);
    bad_run.assert_code(8).assert_no_panic();
    let lines = bad_run.error_lines();
    assert_eq!(lines.len(), 1, "{}", bad_run.describe());
    assert!(lines[0].contains("bad.bnf:2:19"), "{}", bad_run.describe());
    assert!(lines[0].contains("<missing>"), "{}", bad_run.describe());

    // An unknown shipped grammar lists the known ones.
    let run2 = run_unknown(fx, &p);
    assert!(run2.contains("json") && run2.contains("expr"), "{run2}");

    // Input the grammar does not parse: line:col and what was expected.
    let broken = fx.write_artifact(
        "json_config",
        "grammar_broken",
        b"{\n  \"port\": 70000,\n}\n",
    );
    let parse_run = run(&["--grammar", "json", broken.to_str().unwrap()], &fx.root);
    parse_run.assert_code(9).assert_no_panic();
    let lines = parse_run.error_lines();
    assert_eq!(lines.len(), 1, "{}", parse_run.describe());
    assert!(lines[0].contains("3:1"), "{}", parse_run.describe());
    assert!(lines[0].contains("expected"), "{}", parse_run.describe());
}

fn run_unknown(fx: &Fixture, artifact: &str) -> String {
    let r = run(&["--grammar", "no-such-grammar", artifact], &fx.root);
    r.assert_code(8).assert_no_panic();
    let lines = r.error_lines();
    assert_eq!(lines.len(), 1, "{}", r.describe());
    lines[0].to_owned()
}
