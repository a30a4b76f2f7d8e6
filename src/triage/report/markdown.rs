//! Markdown for `$GITHUB_STEP_SUMMARY` or a pull-request comment: one
//! line of counts, then one table row per bug, worst first.

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
    out
}

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
    }
}
