//! `--merge`: the shards of a CI matrix (`--partition`) each wrote a report;
//! joined, they are the report one unsharded run writes. No target runs.

use super::*;
use crate::triage::report::{History, Report};

/// Reads the shard reports at `paths`, joins them ([`Report::merge`]),
/// writes `outputs`, shows one line and one JSON `bug` message per bug,
/// and returns the exit code: a shard's failed bug fails the merge, and
/// with a baseline (the shards compared against one) new bugs give
/// [`exit_code::NEW_BUGS`].
pub fn run(
    paths: &[PathBuf],
    outputs: &crate::triage::ReportOutputs,
    reporter: &mut Reporter,
) -> Result<i32> {
    if paths.is_empty() {
        return Err(Error::NoArtifacts {
            path: PathBuf::from("--merge"),
        });
    }
    let mut destinations = Destinations::new(paths.iter().map(PathBuf::as_path))
        .stdout_used_by(reporter.stdout_user());
    for (path, option) in outputs.named() {
        destinations.claim(path, option)?;
    }
    let shards: Vec<Report> = paths
        .iter()
        .map(|p| Report::read(p))
        .collect::<Result<_>>()?;
    let merged = Report::merge(&shards);
    for (i, b) in merged.bugs.iter().enumerate() {
        reporter.status(
            match b.status.as_str() {
                "reduced" | "cached" => "Bug",
                "fixed" => "Fixed",
                _ => "Unreduced",
            },
            format!(
                "{}/{} {} [{}] of {} ({} artifact{}): {}{}",
                i + 1,
                merged.bugs.len(),
                b.fingerprint,
                b.severity.class,
                b.targets.join(", "),
                b.artifacts.len(),
                if b.artifacts.len() == 1 { "" } else { "s" },
                b.signature,
                b.reduced
                    .as_ref()
                    .map(|r| format!(" → {} ({} bytes)", r.path, r.len))
                    .unwrap_or_default()
            ),
        );
        reporter.message("bug", b.json_line());
    }
    outputs.write(&merged, "all")?;
    let unreduced = merged
        .bugs
        .iter()
        .filter(|b| !matches!(b.status.as_str(), "reduced" | "cached" | "fixed"))
        .count();
    let has_history = merged.bugs.iter().any(|b| b.history.is_some());
    reporter.status(
        "Merged",
        format!(
            "{} into {}{}",
            plural(shards.len(), "report"),
            plural(merged.bugs.len(), "bug"),
            if has_history {
                format!(
                    " ({} new, {} fixed)",
                    merged.new_bugs(),
                    merged
                        .bugs
                        .iter()
                        .filter(|b| b.history == Some(History::Fixed))
                        .count()
                )
            } else {
                String::new()
            }
        ),
    );
    let code = if unreduced > 0 {
        reporter.error(
            &format!(
                "{unreduced} of {} bugs were not reduced by any shard (a shard failed, was interrupted or did not run): rerun it",
                merged.bugs.len()
            ),
            exit_code::BAD_INPUT,
        );
        exit_code::BAD_INPUT
    } else if has_history && merged.new_bugs() > 0 {
        exit_code::NEW_BUGS
    } else {
        exit_code::SUCCESS
    };
    reporter.message(
        "summary",
        json!({
            "reports": shards.len(),
            "bugs": merged.bugs.len(),
            "unreduced": unreduced,
            "new_bugs": has_history.then(|| merged.new_bugs()),
            "exit_code": code,
        }),
    );
    Ok(code)
}
