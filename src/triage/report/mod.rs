//! A directory run's bugs, in the forms they are read in: a versioned JSON
//! report (also the baseline of the next run and what shards merge),
//! SARIF 2.1.0 for GitHub code scanning ([`sarif`]) and Markdown for a job
//! summary or a pull-request comment ([`markdown`]).
//!
//! The report is the one model; the other formats are views of it, so a
//! merged report gives the same SARIF and Markdown as an unsharded run.

pub mod markdown;
pub mod sarif;

use crate::error::{Error, Result};
use crate::run::outcome::{Signature, StackFrame};
use crate::triage::severity::Severity;
use crate::triage::Grouping;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The report's `format` field.
pub const FORMAT: &str = "cargo-reduce-crash-report";
/// Bumped when a field changes meaning; readers refuse other versions.
pub const VERSION: u32 = 1;

/// Everything a directory run found, bug by bug.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub format: String,
    pub version: u32,
    /// `cargo-reduce-crash <version>`.
    pub tool: String,
    /// `--partition` of the run that wrote it (`hash:2/4`); merged reports
    /// and unsharded runs have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Artifacts found (every shard finds all of them).
    pub artifacts: usize,
    /// Artifacts that do not reproduce, are flaky, or could not be read.
    pub not_reproduced: usize,
    pub bugs: Vec<BugEntry>,
}

/// One bug.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BugEntry {
    pub fingerprint: String,
    pub severity: Severity,
    pub grouping: Grouping,
    pub signature: Signature,
    /// Where it crashes, as a repository-relative (or absolute) path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<SourceLocation>,
    /// The stack from the crash down, for crashes that came with one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<StackFrame>,
    pub targets: Vec<String>,
    /// `reduced`, `cached`, `failed`, `interrupted`, or `skipped` (another
    /// shard reduces it).
    pub status: String,
    /// With `--baseline`: `new`, `known` or `fixed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<History>,
    /// Every artifact of the bug.
    pub artifacts: Vec<String>,
    pub representative: String,
    /// The target the representative belongs to (the reproduce line's).
    pub target: String,
    pub original_len: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduced: Option<Reduced>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproduce: Option<String>,
    /// Why it could not be reduced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Source lines only crashing inputs ran (the representative's
    /// explanation: `session/lines.rs`), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing_lines: Vec<SourceLocation>,
}

impl BugEntry {
    /// The `bug` JSON message, as a directory run shows it.
    pub fn json_line(&self) -> serde_json::Value {
        serde_json::json!({
            "fingerprint": self.fingerprint,
            "severity": self.severity,
            "grouping": self.grouping,
            "signature": self.signature,
            "targets": self.targets,
            "artifacts": self.artifacts.len(),
            "members": self.artifacts,
            "representative": self.representative,
            "original_len": self.original_len,
            "reduced_len": self.reduced.as_ref().map(|r| r.len),
            "output": self.reduced.as_ref().map(|r| &r.path),
            "output_sha1": self.reduced.as_ref().and_then(|r| r.sha1.as_ref()),
            "reproduce": self.reproduce,
            "status": self.status,
            "history": self.history.map(History::name),
            "error": self.error,
        })
    }
}

/// The reduced input written for a bug.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reduced {
    pub path: String,
    pub len: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha1: Option<String>,
}

/// A source position for code scanning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceLocation {
    /// Relative to the repository root when the file is in it, else absolute.
    pub file: String,
    pub in_repository: bool,
    pub line: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
}

/// A bug against a baseline report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum History {
    /// Not in the baseline.
    New,
    /// In the baseline and still crashing.
    Known,
    /// In the baseline, and its representative no longer crashes that way on
    /// the current build.
    Fixed,
}

impl History {
    pub fn name(self) -> &'static str {
        match self {
            History::New => "new",
            History::Known => "known",
            History::Fixed => "fixed",
        }
    }
}

impl Report {
    pub fn new(shard: Option<String>, artifacts: usize, not_reproduced: usize) -> Report {
        Report {
            format: FORMAT.to_owned(),
            version: VERSION,
            tool: format!("cargo-reduce-crash {}", env!("CARGO_PKG_VERSION")),
            shard,
            artifacts,
            not_reproduced,
            bugs: Vec::new(),
        }
    }

    /// Reads a report written by [`Report::to_json`].
    pub fn read(path: &Path) -> Result<Report> {
        let bytes = crate::input::read_file(path)?;
        let bad = |detail: String| Error::BadReport {
            path: path.to_owned(),
            detail,
        };
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
        if value["format"] != FORMAT {
            return Err(bad(format!(
                "it is not a {FORMAT} (no \"format\": \"{FORMAT}\")"
            )));
        }
        if value["version"] != VERSION {
            return Err(bad(format!(
                "its version is {}, this cargo-reduce-crash reads version {VERSION}",
                value["version"]
            )));
        }
        serde_json::from_value(value).map_err(|e| bad(e.to_string()))
    }

    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("reports serialize");
        text.push('\n');
        text
    }

    /// How many bugs are new against the baseline.
    pub fn new_bugs(&self) -> usize {
        self.bugs
            .iter()
            .filter(|b| b.history == Some(History::New))
            .count()
    }

    /// Marks every bug `new` or `known` against `baseline`, and adds the
    /// baseline's bugs that this run did not find: `fixed` when
    /// `still_crashes` says their representative no longer crashes that
    /// way, `known` when it still does (its artifacts were not in this
    /// run), left out when it cannot tell (the files are gone).
    pub fn compare(
        &mut self,
        baseline: &Report,
        mut still_crashes: impl FnMut(&BugEntry) -> Option<bool>,
    ) {
        let before: BTreeMap<&str, &BugEntry> = baseline
            .bugs
            .iter()
            .filter(|b| b.history != Some(History::Fixed))
            .map(|b| (b.fingerprint.as_str(), b))
            .collect();
        for bug in &mut self.bugs {
            bug.history = Some(if before.contains_key(bug.fingerprint.as_str()) {
                History::Known
            } else {
                History::New
            });
        }
        let now: std::collections::BTreeSet<String> =
            self.bugs.iter().map(|b| b.fingerprint.clone()).collect();
        for (fingerprint, old) in before {
            if now.contains(fingerprint) {
                continue;
            }
            let history = match still_crashes(old) {
                Some(false) => History::Fixed,
                Some(true) => History::Known,
                None => continue,
            };
            let mut entry = old.clone();
            entry.history = Some(history);
            if history == History::Fixed {
                entry.status = "fixed".into();
            }
            self.bugs.push(entry);
        }
    }

    /// The union of shard reports: one entry per fingerprint, its artifacts
    /// and targets joined, the reduced result taken from the shard that
    /// reduced it (the smallest, if several did).
    pub fn merge(reports: &[Report]) -> Report {
        let mut merged = Report::new(
            None,
            reports.iter().map(|r| r.artifacts).max().unwrap_or(0),
            reports.iter().map(|r| r.not_reproduced).max().unwrap_or(0),
        );
        let mut by_fp: BTreeMap<String, BugEntry> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for r in reports {
            for b in &r.bugs {
                match by_fp.get_mut(&b.fingerprint) {
                    None => {
                        order.push(b.fingerprint.clone());
                        by_fp.insert(b.fingerprint.clone(), b.clone());
                    }
                    Some(m) => {
                        for a in &b.artifacts {
                            if !m.artifacts.contains(a) {
                                m.artifacts.push(a.clone());
                            }
                        }
                        m.artifacts.sort();
                        for t in &b.targets {
                            if !m.targets.contains(t) {
                                m.targets.push(t.clone());
                            }
                        }
                        m.targets.sort();
                        if rank(&b.status) > rank(&m.status)
                            || rank(&b.status) == rank(&m.status)
                                && smaller(b.reduced.as_ref(), m.reduced.as_ref())
                        {
                            let (artifacts, targets) = (m.artifacts.clone(), m.targets.clone());
                            *m = b.clone();
                            m.artifacts = artifacts;
                            m.targets = targets;
                        }
                    }
                }
            }
        }
        merged.bugs = order.into_iter().filter_map(|f| by_fp.remove(&f)).collect();
        merged.sort();
        merged
    }

    /// Bugs in a stable order: worst first, then by fingerprint.
    pub fn sort(&mut self) {
        self.bugs.sort_by(|a, b| {
            b.severity
                .tier
                .cmp(&a.severity.tier)
                .then_with(|| {
                    b.severity
                        .security_severity
                        .partial_cmp(&a.severity.security_severity)
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .then_with(|| a.fingerprint.cmp(&b.fingerprint))
        });
    }
}

/// How settled a bug's status is, for merging: a reduction beats a skip.
fn rank(status: &str) -> u8 {
    match status {
        "reduced" | "cached" => 4,
        "failed" => 3,
        "interrupted" => 2,
        "fixed" => 1,
        _ => 0,
    }
}

fn smaller(a: Option<&Reduced>, b: Option<&Reduced>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.len < b.len,
        (Some(_), None) => true,
        _ => false,
    }
}

/// Where `location` (`file:line:col` as the build printed it: absolute, or
/// relative to the fuzz workspace `root`) is, relative to the repository
/// holding `root` (the nearest directory up with `.git`, else `root`'s
/// parent).
pub fn source_location(location: &str, root: &Path) -> Option<SourceLocation> {
    let mut parts = location.rsplitn(3, ':');
    let col = parts.next()?;
    let line = parts.next()?;
    let file = parts.next()?;
    let (line, column) = match line.parse::<u64>() {
        Ok(l) => (l, col.parse().ok()),
        // `file:line` only: the `line` part is the file's tail.
        Err(_) => return None,
    };
    let path = if Path::new(file).is_absolute() {
        PathBuf::from(file)
    } else {
        root.join(file)
    };
    let path = path.canonicalize().unwrap_or(path);
    let repo = repository_root(root);
    let (file, in_repository) = match path.strip_prefix(&repo) {
        Ok(rel) => (rel.display().to_string(), true),
        Err(_) => (path.display().to_string(), false),
    };
    Some(SourceLocation {
        file,
        in_repository,
        line,
        column,
    })
}

/// The repository a fuzz workspace belongs to: the nearest directory up
/// with a `.git`, else the workspace's parent (`<crate>/fuzz` → `<crate>`).
pub fn repository_root(root: &Path) -> PathBuf {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    root.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_owned)
        .unwrap_or_else(|| root.parent().unwrap_or(&root).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::triage::severity::Tier;

    pub(crate) fn entry(
        fp: &str,
        status: &str,
        artifacts: &[&str],
        reduced: Option<u64>,
    ) -> BugEntry {
        BugEntry {
            fingerprint: fp.into(),
            severity: Severity {
                tier: Tier::NotExploitable,
                class: "panic(unwrap)".into(),
                security_severity: 2.0,
            },
            grouping: Grouping::Single,
            signature: Signature::panic(
                "called `Option::unwrap()` on a `None` value",
                "src/lib.rs:3:9",
            ),
            location: Some(SourceLocation {
                file: "src/lib.rs".into(),
                in_repository: true,
                line: 3,
                column: Some(9),
            }),
            stack: Vec::new(),
            targets: vec!["parse".into()],
            status: status.into(),
            history: None,
            artifacts: artifacts.iter().map(|s| s.to_string()).collect(),
            representative: artifacts[0].into(),
            target: "parse".into(),
            original_len: 100,
            reduced: reduced.map(|len| Reduced {
                path: format!("{}.reduced", artifacts[0]),
                len,
                sha1: None,
            }),
            reproduce: Some("cargo fuzz run parse x".into()),
            error: None,
            failing_lines: Vec::new(),
        }
    }

    #[test]
    fn shards_merge_into_one_entry_per_bug_with_the_reduced_result() {
        let mut a = Report::new(Some("hash:1/2".into()), 4, 0);
        a.bugs = vec![
            entry("f1", "reduced", &["x1", "x2"], Some(3)),
            entry("f2", "skipped", &["y1"], None),
        ];
        let mut b = Report::new(Some("hash:2/2".into()), 4, 0);
        b.bugs = vec![
            entry("f1", "skipped", &["x1", "x3"], None),
            entry("f2", "reduced", &["y1"], Some(5)),
        ];
        let m = Report::merge(&[a, b]);
        assert_eq!(m.bugs.len(), 2);
        let f1 = m.bugs.iter().find(|b| b.fingerprint == "f1").unwrap();
        assert_eq!(f1.status, "reduced");
        assert_eq!(f1.artifacts, vec!["x1", "x2", "x3"]);
        assert_eq!(f1.reduced.as_ref().unwrap().len, 3);
        assert!(m.shard.is_none());
        // A report reads back as written.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        std::fs::write(&p, m.to_json()).unwrap();
        assert_eq!(Report::read(&p).unwrap(), m);
        std::fs::write(&p, "{\"format\": \"other\"}").unwrap();
        assert!(Report::read(&p)
            .unwrap_err()
            .to_string()
            .contains("not a cargo-reduce-crash-report"));
    }

    #[test]
    fn a_baseline_makes_bugs_new_known_or_fixed() {
        let mut base = Report::new(None, 3, 0);
        base.bugs = vec![
            entry("keep", "reduced", &["a"], Some(1)),
            entry("gone", "reduced", &["b"], Some(1)),
            entry("elsewhere", "reduced", &["c"], Some(1)),
        ];
        let mut now = Report::new(None, 3, 1);
        now.bugs = vec![
            entry("keep", "reduced", &["a"], Some(1)),
            entry("fresh", "reduced", &["d"], Some(1)),
        ];
        now.compare(&base, |b| match b.fingerprint.as_str() {
            "gone" => Some(false),
            "elsewhere" => Some(true),
            _ => None,
        });
        let h: BTreeMap<&str, History> = now
            .bugs
            .iter()
            .map(|b| (b.fingerprint.as_str(), b.history.unwrap()))
            .collect();
        assert_eq!(h["keep"], History::Known);
        assert_eq!(h["fresh"], History::New);
        assert_eq!(h["gone"], History::Fixed);
        assert_eq!(h["elsewhere"], History::Known);
        assert_eq!(now.new_bugs(), 1);
    }
}
