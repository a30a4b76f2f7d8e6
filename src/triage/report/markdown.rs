//! Markdown for `$GITHUB_STEP_SUMMARY` or a pull-request comment: one
//! line of counts, then one table row per bug, worst first, then the lines
//! only crashing inputs ran, per bug that has them.

use super::{History, Report};

/// Escapes what would break a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The Markdown summary of `report`.
pub fn render(report: &Report) -> String {
    let open: Vec<_> = report.bugs.iter().filter(|b| b.status != "fixed").collect();
    let fixed = report.bugs.len() - open.len();
    let new = report.new_bugs();
    let mut out = String::from("## Fuzzing crashes: ");
    out.push_str(&match open.len() {
        1 => "1 bug".to_owned(),
        n => format!("{n} bugs"),
    });
    if report.bugs.iter().any(|b| b.history.is_some()) {
        out.push_str(&format!(" ({new} new, {fixed} fixed since the baseline)"));
    }
    out.push_str(&format!(
        "\n\n{} artifacts; {} did not reproduce.{}\n\n",
        report.artifacts,
        report.not_reproduced,
        report
            .shard
            .as_deref()
            .map(|s| format!(" Shard {s}."))
            .unwrap_or_default()
    ));
    if report.bugs.is_empty() {
        out.push_str("No crash reproduces.\n");
        return out;
    }
    out.push_str(
        "| bug | severity | status | targets | artifacts | reduced | crash | reproduce |\n\
         |---|---|---|---|---:|---:|---|---|\n",
    );
    for b in &report.bugs {
        let status = match b.history {
            Some(h @ (History::New | History::Fixed)) => format!("**{}**", h.name()),
            Some(History::Known) => "known".to_owned(),
            None => b.status.clone(),
        };
        let reduced = b
            .reduced
            .as_ref()
            .map(|r| format!("{} → {} B", b.original_len, r.len))
            .unwrap_or_else(|| format!("{} B", b.original_len));
        out.push_str(&format!(
            "| `{}` | {} ({}) | {} | {} | {} | {} | {} | {} |\n",
            b.fingerprint,
            b.severity.tier.name(),
            b.severity.class,
            status,
            cell(&b.targets.join(", ")),
            b.artifacts.len(),
            reduced,
            cell(&b.signature.to_string()),
            b.reproduce
                .as_deref()
                .map(|r| format!("`{}`", cell(r)))
                .unwrap_or_default(),
        ));
    }
    let explained: Vec<_> = report
        .bugs
        .iter()
        .filter(|b| !b.failing_lines.is_empty())
        .collect();
    if !explained.is_empty() {
        out.push_str("\n### Lines only crashing inputs ran\n\n");
        for b in explained {
            let lines: Vec<String> = b
                .failing_lines
                .iter()
                .take(SHOWN)
                .map(|l| format!("`{}:{}`", cell(&l.file), l.line))
                .collect();
            let more = b.failing_lines.len().saturating_sub(SHOWN);
            out.push_str(&format!(
                "- `{}`: {}{}\n",
                b.fingerprint,
                lines.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ));
        }
    }
    out
}

/// Lines shown per bug (the JSON report has them all).
const SHOWN: usize = 5;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::triage::report::tests::entry;

    #[test]
    fn a_row_per_bug_with_its_history() {
        let mut r = Report::new(None, 5, 1);
        r.bugs = vec![entry("f1", "reduced", &["a", "b"], Some(3))];
        r.bugs[0].history = Some(History::New);
        let md = render(&r);
        assert!(
            md.starts_with("## Fuzzing crashes: 1 bug (1 new, 0 fixed since the baseline)"),
            "{md}"
        );
        assert!(
            md.contains(
                "| `f1` | NOT_EXPLOITABLE (panic(unwrap)) | **new** | parse | 2 | 100 → 3 B |"
            ),
            "{md}"
        );
        assert_eq!(md.lines().filter(|l| l.starts_with("| `")).count(), 1);
        assert!(!md.contains("Lines only"), "{md}");
    }

    #[test]
    fn lines_only_crashing_inputs_ran_follow_the_table() {
        let mut r = Report::new(None, 1, 0);
        r.bugs = vec![entry("f1", "reduced", &["a"], Some(3))];
        r.bugs[0].failing_lines = (1..=7)
            .map(|line| crate::triage::report::SourceLocation {
                file: "src/lib.rs".into(),
                in_repository: true,
                line,
                column: None,
            })
            .collect();
        let md = render(&r);
        assert!(
            md.ends_with(
                "### Lines only crashing inputs ran\n\n- `f1`: `src/lib.rs:1`, `src/lib.rs:2`, \
                 `src/lib.rs:3`, `src/lib.rs:4`, `src/lib.rs:5` and 2 more\n"
            ),
            "{md}"
        );
    }
}
