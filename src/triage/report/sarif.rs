//! SARIF 2.1.0 for GitHub code scanning: one rule per crash class, one
//! result per bug.
//!
//! What GitHub reads, per its "SARIF support for code scanning" page: a
//! rule's `id`, `shortDescription`, `fullDescription`, `help` and
//! `properties.security-severity` (shown as critical/high/medium/low when
//! the rule is tagged `security`); a result's `ruleId`, `level`, `message`
//! (its first sentence is the alert's title), its first location, its
//! `partialFingerprints` (only `primaryLocationLineHash` is used: ours is
//! the bug's fingerprint, which survives moved lines, so an alert stays one
//! alert across commits) and `codeFlows` (shown; `stacks` is not, so the
//! crash's stack goes in a thread flow). `automationDetails.id` keeps the
//! uploads of shards or targets apart. The lines only crashing inputs ran
//! are the result's `relatedLocations`. Messages are `text` only (no
//! `markdown`); what came from the crash goes through `plain`, so that
//! no `[text](target)` in it becomes an embedded link.
//!
//! The structs are written here rather than taken from serde-sarif 0.8:
//! that crate generates its types from the schema in a build script
//! (schemafy, syn, prettyplease: minutes of compile time for every user of
//! this tool) and did not compile on its own when tried (its generated code
//! needs serde's `derive` feature, which it does not ask for). GitHub reads
//! a small subset; `tests/triage.rs` validates the output against the OASIS
//! SARIF 2.1.0 schema.

use super::{BugEntry, Report};
use crate::triage::severity::Tier;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
struct Sarif {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    automation_details: AutomationDetails,
    results: Vec<SarifResult>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    information_uri: &'static str,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: String,
    name: String,
    short_description: Text,
    full_description: Text,
    help: Text,
    default_configuration: Configuration,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    tags: Vec<&'static str>,
    #[serde(rename = "security-severity")]
    security_severity: String,
}

#[derive(Serialize)]
struct AutomationDetails {
    id: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: String,
    rule_index: usize,
    level: &'static str,
    message: Text,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    locations: Vec<Location>,
    /// The lines only crashing inputs ran (`session/lines.rs`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location>,
    partial_fingerprints: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    code_flows: Vec<CodeFlow>,
    properties: ResultProperties,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultProperties {
    fingerprint: String,
    tier: &'static str,
    targets: Vec<String>,
    artifacts: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    history: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reduced: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reproduce: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_column: Option<u64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CodeFlow {
    thread_flows: Vec<ThreadFlow>,
}

#[derive(Serialize)]
struct ThreadFlow {
    locations: Vec<ThreadFlowLocation>,
}

#[derive(Serialize)]
struct ThreadFlowLocation {
    location: Location,
}

/// A rule id from a crash class: `panic(unwrap)` → `crash/panic-unwrap`.
fn rule_id(class: &str) -> String {
    let mut id = String::from("crash/");
    for c in class.chars() {
        match c {
            '(' => id.push('-'),
            ')' => {}
            c if c.is_ascii_alphanumeric() || c == '-' || c == '_' => id.push(c),
            _ => id.push('-'),
        }
    }
    id
}

/// What a crash class means, for a rule's description.
fn describe(class: &str) -> String {
    let (kind, detail) = class
        .split_once('(')
        .map(|(k, d)| (k, d.trim_end_matches(')')))
        .unwrap_or((class, ""));
    match kind {
        "panic" => format!(
            "A Rust panic ({}) a fuzz target reaches.",
            match detail {
                "overflow" => "arithmetic overflow or division by zero",
                "index" => "an index or a range out of bounds",
                "unwrap" => "`unwrap`/`expect` on `None` or `Err`",
                "assert" => "a failed assertion",
                _ => "an explicit `panic!`, `unreachable!` or another panic",
            }
        ),
        "stack-overflow" => "Unbounded recursion: the stack overflows.".to_owned(),
        "timeout" => "An input runs past the fuzzer's time limit.".to_owned(),
        "out-of-memory" => format!(
            "An input uses more memory than the fuzzer allows ({}).",
            if detail == "malloc" {
                "one allocation"
            } else {
                "the process's RSS"
            }
        ),
        "abort" | "signal" | "exit" => format!("The process ends by {kind}."),
        // A sanitizer's error name, as its report printed it.
        _ => match detail {
            "write" => format!(
                "A memory error AddressSanitizer reports: {}, writing.",
                plain(kind)
            ),
            "read" => format!(
                "A memory error AddressSanitizer reports: {}, reading.",
                plain(kind)
            ),
            "near-null" => "A null-pointer dereference (an access near address 0).".to_owned(),
            _ => format!("An error a sanitizer reports: {}.", plain(kind)),
        },
    }
}

/// The SARIF level for a tier.
fn level(tier: Tier) -> &'static str {
    match tier {
        Tier::Exploitable | Tier::ProbablyExploitable => "error",
        Tier::NotExploitable => "warning",
    }
}

/// Text from the target or its input (a panic message, a function, file,
/// target or class name, a path, a reproduce line) for a SARIF plain-text
/// message. Such a message is not Markdown, but SARIF 2.1.0 §3.11.6 reads
/// `[text](destination)` in it as an embedded link (to a related location
/// by id, or to any URI), which GitHub code scanning follows: a panic
/// message `[x](https://…)` would become a link. `[` and `]` are escaped as
/// `\[` and `\]`, the escapes §3.11.6 defines, and so is a `\` that would
/// otherwise escape what follows it (another `\`, a bracket, or the text
/// after this part), so that a viewer that reads the escapes shows the
/// text as it was.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '[' | ']' => out.push('\\'),
            '\\' if matches!(chars.peek(), None | Some('\\' | '[' | ']')) => out.push('\\'),
            _ => {}
        }
        out.push(c);
    }
    out
}

/// The location of a source position (`%SRCROOT%`-relative when it is in
/// the repository).
fn physical(file: &str, in_repository: bool, line: u64, column: Option<u64>) -> PhysicalLocation {
    let uri = if in_repository {
        file.to_owned()
    } else {
        format!("file://{file}")
    };
    PhysicalLocation {
        artifact_location: ArtifactLocation {
            uri,
            uri_base_id: in_repository.then_some("%SRCROOT%"),
        },
        region: Region {
            start_line: line.max(1),
            start_column: column.filter(|&c| c > 0),
        },
    }
}

/// The SARIF document for `report`; `category` names the run for
/// `automationDetails` (e.g. the shard).
pub fn render(report: &Report, category: &str) -> String {
    let mut rules: Vec<Rule> = Vec::new();
    let mut rule_index: BTreeMap<String, usize> = BTreeMap::new();
    let mut results = Vec::new();
    for bug in report.bugs.iter().filter(|b| b.status != "fixed") {
        let id = rule_id(&bug.severity.class);
        let index = *rule_index.entry(id.clone()).or_insert_with(|| {
            let text = describe(&bug.severity.class);
            let mut tags = vec!["fuzzing", "crash"];
            if bug.severity.tier != Tier::NotExploitable {
                tags.push("security");
            }
            rules.push(Rule {
                id: id.clone(),
                name: bug.severity.class.clone(),
                short_description: Text {
                    text: format!("Fuzzing crash: {}", plain(&bug.severity.class)),
                },
                full_description: Text { text: text.clone() },
                help: Text {
                    text: format!(
                        "{text} The reduced input and the command that reproduces it are in the \
                         result; `cargo reduce-crash --emit-test` writes a regression test."
                    ),
                },
                default_configuration: Configuration {
                    level: level(bug.severity.tier),
                },
                properties: RuleProperties {
                    tags,
                    security_severity: format!("{:.1}", bug.severity.security_severity),
                },
            });
            rules.len() - 1
        });
        results.push(result(bug, id, index));
    }
    let sarif = Sarif {
        schema: "https://json.schemastore.org/sarif-2.1.0.json",
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "cargo-reduce-crash",
                    version: env!("CARGO_PKG_VERSION"),
                    information_uri: "https://github.com/rust-fuzz/cargo-fuzz",
                    rules,
                },
            },
            automation_details: AutomationDetails {
                id: format!("cargo-reduce-crash/{category}"),
            },
            results,
        }],
    };
    let mut text = serde_json::to_string_pretty(&sarif).expect("SARIF serializes");
    text.push('\n');
    text
}

fn result(bug: &BugEntry, rule_id: String, rule_index: usize) -> SarifResult {
    let title = format!(
        "{} in fuzz target{} {}",
        plain(&bug.severity.class),
        if bug.targets.len() == 1 { "" } else { "s" },
        plain(&bug.targets.join(", "))
    );
    let mut message = format!("{title}. {}.", plain(&bug.signature.to_string()));
    if let Some(r) = &bug.reduced {
        message.push_str(&format!(
            " Reduced input: {} ({} bytes).",
            plain(&r.path),
            r.len
        ));
    }
    if let Some(cmd) = &bug.reproduce {
        message.push_str(&format!(" Reproduce with: {}", plain(cmd)));
    }
    let locations: Vec<Location> = bug
        .location
        .iter()
        .map(|l| Location {
            physical_location: physical(&l.file, l.in_repository, l.line, l.column),
            message: None,
        })
        .collect();
    let flow: Vec<ThreadFlowLocation> = bug
        .stack
        .iter()
        .filter_map(|f| {
            let loc = f.location.as_deref()?;
            let mut parts = loc.rsplitn(3, ':');
            let col = parts.next()?.parse().ok();
            let line = parts.next()?.parse().ok()?;
            let file = parts.next()?;
            let (file, in_repo) = match &bug.location {
                Some(l) if l.in_repository && !file.starts_with('/') => (file.to_owned(), true),
                _ => (file.to_owned(), false),
            };
            Some(ThreadFlowLocation {
                location: Location {
                    physical_location: physical(&file, in_repo, line, col),
                    message: Some(Text {
                        text: plain(&f.function),
                    }),
                },
            })
        })
        .collect();
    let mut fingerprints = BTreeMap::new();
    fingerprints.insert("primaryLocationLineHash", bug.fingerprint.clone());
    fingerprints.insert("cargoReduceCrash/v1", bug.fingerprint.clone());
    SarifResult {
        rule_id,
        rule_index,
        level: level(bug.severity.tier),
        message: Text { text: message },
        locations,
        related_locations: bug
            .failing_lines
            .iter()
            .map(|l| Location {
                physical_location: physical(&l.file, l.in_repository, l.line, None),
                message: Some(Text {
                    text: "Only crashing inputs run this line.".to_owned(),
                }),
            })
            .collect(),
        partial_fingerprints: fingerprints,
        code_flows: if flow.is_empty() {
            Vec::new()
        } else {
            vec![CodeFlow {
                thread_flows: vec![ThreadFlow { locations: flow }],
            }]
        },
        properties: ResultProperties {
            fingerprint: bug.fingerprint.clone(),
            tier: bug.severity.tier.name(),
            targets: bug.targets.clone(),
            artifacts: bug.artifacts.len(),
            history: bug.history.map(|h| h.name()),
            reduced: bug.reduced.as_ref().map(|r| r.path.clone()),
            reproduce: bug.reproduce.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::triage::report::tests::entry;
    use proptest::prelude::*;

    /// A plain-text message as a viewer that reads §3.11.6's escapes shows
    /// it, and whether it found an embedded link (`[`, then `](`) in it.
    fn read(text: &str) -> (String, bool) {
        let (mut shown, mut open, mut link) = (String::new(), false, false);
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if matches!(chars.peek(), Some('\\' | '[' | ']')) => {
                    shown.push(chars.next().unwrap());
                    continue;
                }
                '[' => open = true,
                ']' if open && chars.peek() == Some(&'(') => link = true,
                ']' => open = false,
                _ => {}
            }
            shown.push(c);
        }
        (shown, link)
    }

    #[test]
    fn crash_text_escapes_brackets_and_the_backslashes_before_them() {
        assert_eq!(plain("[x](1)"), "\\[x\\](1)");
        assert_eq!(plain("a\\nb"), "a\\nb");
        assert_eq!(plain("a\\[b"), "a\\\\\\[b");
        assert_eq!(plain("\\\\x"), "\\\\\\x");
        assert_eq!(plain("end\\"), "end\\\\");
        assert!(read("Prohibited [here](3).").1);
        assert!(!read(&plain("Prohibited [here](3).")).1);
    }

    proptest! {
        /// Any crash text, alone or between others and our words, reads
        /// back as itself and holds no embedded link.
        #[test]
        fn crash_text_never_links(
            a in "[a\\[\\]()\\\\ ]{0,16}",
            b in "[a\\[\\]()\\\\ ]{0,16}",
        ) {
            prop_assert_eq!(read(&plain(&a)), (a.clone(), false));
            let joined = format!("{}. {} ({}", plain(&a), plain(&b), plain(&a));
            prop_assert_eq!(read(&joined), (format!("{a}. {b} ({a}"), false));
        }
    }

    #[test]
    fn a_hostile_crash_makes_no_link_in_any_text() {
        let mut r = Report::new(None, 1, 0);
        r.bugs = vec![entry("aaaa", "reduced", &["[a](1)"], Some(3))];
        let b = &mut r.bugs[0];
        b.severity.class = "x](https://evil.example/)[".into();
        b.targets = vec!["[t](2)".into()];
        b.signature.message = Some("[x](https://evil.example/)".into());
        b.reproduce = Some("cargo fuzz run [t](2) \\[r\\](3)".into());
        b.stack = vec![crate::run::outcome::StackFrame {
            function: "[f](4)".into(),
            location: Some("src/lib.rs:3:9".into()),
        }];
        let sarif = render(&r, "all");
        let v: serde_json::Value = serde_json::from_str(&sarif).unwrap();
        let run = &v["runs"][0];
        let rule = &run["tool"]["driver"]["rules"][0];
        let result = &run["results"][0];
        let texts = [
            &rule["shortDescription"]["text"],
            &rule["fullDescription"]["text"],
            &rule["help"]["text"],
            &result["message"]["text"],
            &result["codeFlows"][0]["threadFlows"][0]["locations"][0]["location"]["message"]
                ["text"],
        ];
        for t in texts {
            let (shown, link) = read(t.as_str().unwrap());
            assert!(!link, "{t}");
            assert!(shown.contains(['[', ']']), "{shown}");
        }
        let (message, _) = read(result["message"]["text"].as_str().unwrap());
        assert!(
            message.contains(": [x](https://evil.example/)."),
            "{message}"
        );
        assert!(
            message.ends_with("Reproduce with: cargo fuzz run [t](2) \\[r\\](3)"),
            "{message}"
        );
    }

    #[test]
    fn one_rule_per_class_one_result_per_bug() {
        let mut r = Report::new(None, 3, 0);
        r.bugs = vec![
            entry("aaaa", "reduced", &["x"], Some(3)),
            entry("bbbb", "reduced", &["y"], Some(4)),
        ];
        let v: serde_json::Value = serde_json::from_str(&render(&r, "all")).unwrap();
        assert_eq!(v["version"], "2.1.0");
        let run = &v["runs"][0];
        assert_eq!(run["tool"]["driver"]["rules"].as_array().unwrap().len(), 1);
        assert_eq!(run["results"].as_array().unwrap().len(), 2);
        let res = &run["results"][0];
        assert_eq!(res["ruleId"], "crash/panic-unwrap");
        assert_eq!(
            res["partialFingerprints"]["primaryLocationLineHash"],
            "aaaa"
        );
        assert_eq!(
            res["locations"][0]["physicalLocation"]["region"]["startLine"],
            3
        );
        assert_eq!(
            run["tool"]["driver"]["rules"][0]["properties"]["security-severity"],
            "2.0"
        );
        assert_eq!(run["automationDetails"]["id"], "cargo-reduce-crash/all");
    }
}
