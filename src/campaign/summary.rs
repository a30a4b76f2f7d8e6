//! What a directory run shows at the end: a line per bucket as it finishes,
//! the table, the JSON `bucket` and `summary` lines, and the exit code.

use super::*;
use crate::triage::report::{BugEntry, History, Reduced, Report};

/// The result of a directory run, for the exit code.
#[derive(Debug)]
pub struct CampaignReport {
    pub buckets: usize,
    pub bugs: usize,
    pub interrupted: bool,
    /// Why the run failed as a whole, if it did (the table was shown).
    pub error: Option<Error>,
    /// With `--baseline`: how many bugs are new.
    pub new_bugs: Option<usize>,
}

impl CampaignReport {
    pub fn exit_code(&self) -> i32 {
        match (&self.error, self.interrupted, self.new_bugs) {
            (Some(e), _, _) => e.exit_code(),
            (None, true, _) => exit_code::INTERRUPTED,
            (None, false, Some(n)) if n > 0 => exit_code::NEW_BUGS,
            (None, false, _) => exit_code::SUCCESS,
        }
    }
}

/// `path` relative to `cwd` when it is inside it.
pub(super) fn relative(path: &Path, cwd: &Path) -> PathBuf {
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_owned());
    path.strip_prefix(&cwd)
        .map(Path::to_owned)
        .unwrap_or_else(|_| path.to_owned())
}

/// The one path that names what was searched, for messages: the path
/// given, or the deepest directory holding all of them.
pub(super) fn common_place(paths: &[PathBuf]) -> PathBuf {
    match paths {
        [] => PathBuf::from("."),
        [one] => one.clone(),
        [first, rest @ ..] => {
            let mut common: Vec<_> = first.components().collect();
            for p in rest {
                let n = common
                    .iter()
                    .zip(p.components())
                    .take_while(|(a, b)| **a == *b)
                    .count();
                common.truncate(n);
            }
            let place: PathBuf = common.iter().collect();
            if place.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                place
            }
        }
    }
}

/// A signature for one line or table cell: locations relative to the cwd.
pub(super) fn short_signature(sig: &Signature, cwd: &Path) -> String {
    shorten(&sig.to_string(), cwd)
}

/// `text` with paths inside `cwd` made relative.
pub(super) fn shorten(text: &str, cwd: &Path) -> String {
    let prefix = format!(
        "{}/",
        cwd.canonicalize()
            .unwrap_or_else(|_| cwd.to_owned())
            .display()
    );
    text.replace(&prefix, "")
}

/// `n thing` or `n things`.
pub(super) fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("{n} {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

impl Campaign<'_> {
    /// One status line (or warning) for a finished bug, then a JSON `bucket`
    /// message for each of its buckets and one `bug` message.
    pub(super) fn show_bug(
        &self,
        buckets: &[Bucket],
        bugs: &[Bug],
        g: usize,
        results: &[(usize, Reduction)],
        reporter: &mut Reporter,
    ) {
        let cwd = &self.opts.locate.cwd;
        let bug = &bugs[g];
        let rep_index = self.representative(buckets, bug);
        let rep = &self.found[rep_index];
        let members: Vec<usize> = bug
            .buckets
            .iter()
            .flat_map(|&k| buckets[k].members.iter().copied())
            .collect();
        let line = bug_line(
            g,
            bugs.len(),
            bug,
            members.len(),
            rep_index,
            rep,
            results,
            cwd,
        );
        match &line.failure {
            Some(message) => reporter.warn(format!(
                "bug {}/{} ({}) could not be reduced: {message}",
                g + 1,
                bugs.len(),
                short_signature(&bug.signature, cwd)
            )),
            None => reporter.status(line.verb, &line.text),
        }
        // A test of a bug only a sanitizer sees passes a plain `cargo test`.
        for (_, r) in results {
            if let Reduction::Done(s) = r {
                if let Some(test) = &s.emitted_test {
                    if bug.signature.kind == crate::run::outcome::CrashKind::Sanitizer {
                        reporter.note(format!(
                            "{}: a plain `cargo test` passes it, since only a sanitizer sees this bug; the file says how to run it so that it fails",
                            test.display()
                        ));
                    }
                }
            }
        }
        let output_sha1 =
            results
                .iter()
                .find(|(m, _)| *m == rep_index)
                .and_then(|(_, r)| match r {
                    Reduction::Cached(rec) => Some(rec.sha1.clone()),
                    Reduction::Done(s) => crate::input::read_file(&s.output)
                        .ok()
                        .map(|b| sha1_hex(&b)),
                    _ => None,
                });
        let reductions: Vec<serde_json::Value> = results
            .iter()
            .map(|(m, r)| reduction_json(&self.found[*m], r))
            .collect();
        for &k in &bug.buckets {
            let bucket = &buckets[k];
            let brep = &self.found[bucket.representative()];
            reporter.message(
                "bucket",
                json!({
                    "bucket": k + 1,
                    "bug": bug.fingerprint,
                    "target": bucket.key.target,
                    "signature": bucket.signature,
                    "artifacts": bucket.members.len(),
                    "members": bucket.members.iter().map(|&m| path_json(&self.found[m].path)).collect::<Vec<_>>(),
                    "representative": path_json(&brep.path),
                    "original_len": brep.len,
                    "reduced_len": line.result.as_ref().map(|r| r.0),
                    "output": line.result.as_ref().map(|r| path_json(&r.1)),
                    "output_sha1": output_sha1,
                    "status": line.status,
                    "cached": line.status == "cached",
                    "tests_executed": line.tests_executed,
                    "elapsed_secs": line.elapsed_secs,
                    "error": line.failure,
                    "reductions": reductions,
                }),
            );
        }
        reporter.message(
            "bug",
            json!({
                "bug": g + 1,
                "fingerprint": bug.fingerprint,
                "severity": bug.severity,
                "grouping": bug.grouping,
                "signature": bug.signature,
                "targets": bug.targets,
                "buckets": bug.buckets.iter().map(|k| k + 1).collect::<Vec<_>>(),
                "artifacts": members.len(),
                "members": members.iter().map(|&m| path_json(&self.found[m].path)).collect::<Vec<_>>(),
                "representative": path_json(&rep.path),
                "original_len": rep.len,
                "reduced_len": line.result.as_ref().map(|r| r.0),
                "output": line.result.as_ref().map(|r| path_json(&r.1)),
                "output_sha1": output_sha1,
                "reproduce": line.reproduce,
                "test": results.iter().find_map(|(_, r)| match r {
                    Reduction::Done(s) => s.emitted_test.as_deref().map(path_json),
                    _ => None,
                }),
                "status": line.status,
                "history": self.history(&bug.fingerprint),
                "error": line.failure,
            }),
        );
    }

    /// `new` or `known` against `--baseline` (`None` without one).
    fn history(&self, fingerprint: &str) -> Option<&'static str> {
        let base = self.baseline.as_ref()?;
        Some(
            if base
                .bugs
                .iter()
                .any(|b| b.fingerprint == fingerprint && b.history != Some(History::Fixed))
            {
                "known"
            } else {
                "new"
            },
        )
    }

    /// The report of this run's bugs (`--report`, `--sarif`, `--markdown`),
    /// compared with `baseline`.
    fn report(
        &self,
        buckets: &[Bucket],
        bugs: &[Bug],
        lines: &[BugLine],
        baseline: Option<&Report>,
    ) -> Report {
        let not_reproduced = self
            .found
            .iter()
            .filter(|f| {
                f.unreadable.is_some() || f.class.as_ref().is_some_and(|c| c.signature().is_none())
            })
            .count();
        let mut report = Report::new(
            self.copts.partition.map(|p| p.to_string()),
            self.found.len(),
            not_reproduced,
        );
        for (bug, line) in bugs.iter().zip(lines) {
            let rep_index = self.representative(buckets, bug);
            let rep = &self.found[rep_index];
            let target = &self.targets[rep.target];
            let root = &self.projects[target.project].workspace_root;
            let mut artifacts: Vec<String> = bug
                .buckets
                .iter()
                .flat_map(|&k| buckets[k].members.iter())
                .map(|&m| self.found[m].path.to_string_lossy().into_owned())
                .collect();
            artifacts.sort();
            report.bugs.push(BugEntry {
                fingerprint: bug.fingerprint.clone(),
                severity: bug.severity.clone(),
                grouping: bug.grouping,
                signature: bug.signature.clone(),
                location: bug
                    .signature
                    .location
                    .as_deref()
                    .and_then(|l| triage::report::source_location(l, root)),
                stack: rep
                    .class
                    .as_ref()
                    .and_then(|c| c.details())
                    .map(|d| d.frames.clone())
                    .unwrap_or_default(),
                targets: bug.targets.clone(),
                status: line.status.to_owned(),
                history: None,
                artifacts,
                representative: rep.path.to_string_lossy().into_owned(),
                target: target.name.clone(),
                original_len: rep.len,
                reduced: line.result.as_ref().map(|(len, path)| Reduced {
                    path: path.to_string_lossy().into_owned(),
                    len: *len,
                    sha1: crate::input::read_file(path).ok().map(|b| sha1_hex(&b)),
                }),
                reproduce: line.reproduce.clone(),
                error: line.failure.clone(),
                failing_lines: line
                    .failing_lines
                    .iter()
                    .filter_map(|l| {
                        // `file:line`, given a column to read as a location.
                        let mut at =
                            triage::report::source_location(&format!("{}:0", l.location), root)?;
                        at.column = None;
                        Some(at)
                    })
                    .collect(),
            });
        }
        if let Some(base) = baseline {
            // A baseline bug this run did not find: fixed if its
            // representative is here and no longer crashes that way.
            report.compare(base, |old| {
                let f = self
                    .found
                    .iter()
                    .find(|f| f.path.to_string_lossy() == old.representative)?;
                match &f.class {
                    Some(Classification::Flaky { .. }) => Some(true),
                    Some(_) => Some(false),
                    None => None,
                }
            });
        }
        report.sort();
        report
    }

    /// The table, the verdict and the closing JSON message.
    pub(super) fn finish(
        self,
        buckets: &[Bucket],
        bugs: &[Bug],
        results: &[Vec<(usize, Reduction)>],
        started: Instant,
        reporter: &mut Reporter,
    ) -> CampaignReport {
        let baseline = self.baseline.as_ref();
        let cwd = &self.opts.locate.cwd;
        if let Some(w) = &self.record_warning {
            reporter.warn(format!("results will not be reused by the next run: {w}"));
        }
        let lines: Vec<BugLine> = bugs
            .iter()
            .enumerate()
            .map(|(g, bug)| {
                let rep_index = self.representative(buckets, bug);
                let count = bug.buckets.iter().map(|&k| buckets[k].members.len()).sum();
                bug_line(
                    g,
                    bugs.len(),
                    bug,
                    count,
                    rep_index,
                    &self.found[rep_index],
                    &results[g],
                    cwd,
                )
            })
            .collect();
        reporter.text(&table(bugs, &lines, &self.found, cwd));
        let report = self.report(buckets, bugs, &lines, baseline);
        if baseline.is_some() {
            let fixed: Vec<&BugEntry> = report
                .bugs
                .iter()
                .filter(|b| b.history == Some(History::Fixed))
                .collect();
            for b in &fixed {
                reporter.message(
                    "bug",
                    json!({
                        "fingerprint": b.fingerprint,
                        "severity": b.severity,
                        "signature": b.signature,
                        "targets": b.targets,
                        "representative": b.representative,
                        "status": "fixed",
                        "history": "fixed",
                    }),
                );
            }
            reporter.status(
                "Compared",
                format!(
                    "with the baseline: {} new, {} known, {} fixed",
                    report.new_bugs(),
                    report
                        .bugs
                        .iter()
                        .filter(|b| b.history == Some(History::Known))
                        .count(),
                    fixed.len()
                ),
            );
        }
        let category = self
            .copts
            .partition
            .map(|p| p.to_string())
            .unwrap_or_else(|| "all".to_owned());
        let write_error = self.copts.outputs.write(&report, &category).err();
        let unclassified = self
            .found
            .iter()
            .any(|f| f.class.is_none() && f.unreadable.is_none());
        let unreadable = self.found.iter().filter(|f| f.unreadable.is_some()).count();
        let interrupted = interrupt::requested() || unclassified;
        let failed: Vec<&BugLine> = lines.iter().filter(|l| l.failure.is_some()).collect();
        let pass = self.count(|c| matches!(c, Classification::Pass { .. }));
        let reject = self.count(|c| matches!(c, Classification::Reject { .. }));
        let flaky = self.count(|c| matches!(c, Classification::Flaky { .. }));
        let error = if let Some(first) = failed.first() {
            Some(Error::BugsFailed {
                path: self.place.clone(),
                failed: failed.len(),
                bugs: bugs.len(),
                first: first.failure.clone().unwrap_or_default(),
                code: first.code,
            })
        } else if buckets.is_empty() && !interrupted {
            let detail = [
                (pass, "returned normally"),
                (reject, "rejected"),
                (flaky, "flaky"),
                (unreadable, "unreadable"),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect::<Vec<_>>()
            .join(", ");
            let (path, count) = (self.place.clone(), self.found.len());
            Some(if flaky > 0 {
                Error::NothingReproducible {
                    path,
                    count,
                    detail,
                }
            } else {
                Error::NothingCrashes {
                    path,
                    count,
                    detail,
                }
            })
        } else {
            write_error
        };
        let new_bugs = baseline.map(|_| report.new_bugs());
        let report = CampaignReport {
            buckets: buckets.len(),
            bugs: bugs.len(),
            interrupted,
            error,
            new_bugs,
        };
        if interrupted && report.error.is_none() {
            reporter.warn(
                "interrupted: what was finished (results and records) was kept; run again to go on",
            );
        }
        let count_status = |s: &str| lines.iter().filter(|l| l.status == s).count();
        reporter.message(
            "summary",
            json!({
                "artifacts": self.found.len(),
                "buckets": buckets.len(),
                "bugs": bugs.len(),
                "reduced": count_status("reduced"),
                "cached": count_status("cached"),
                "failed": failed.len(),
                "interrupted_bugs": count_status("interrupted"),
                "no_crash": pass + reject,
                "flaky": flaky,
                "interrupted": interrupted,
                "elapsed_secs": started.elapsed().as_secs_f64(),
                "exit_code": report.exit_code(),
            }),
        );
        report
    }
}

impl Reduction {
    pub(super) fn from_result(result: Result<Summary>) -> Reduction {
        match result {
            Ok(summary) => Reduction::Done(Box::new(summary)),
            Err(e) => Reduction::Failed {
                message: e.to_string(),
                code: e.exit_code(),
            },
        }
    }
}

/// One bug's outcome, for its status line, JSON messages and table row.
pub(super) struct BugLine {
    /// `reduced`, `cached`, `failed` or `interrupted`.
    status: &'static str,
    verb: &'static str,
    text: String,
    failure: Option<String>,
    code: i32,
    tests_executed: u64,
    elapsed_secs: f64,
    /// The representative's result: (reduced length, output path).
    result: Option<(u64, PathBuf)>,
    /// `cargo fuzz run …` for the result, when the run reduced it.
    reproduce: Option<String>,
    /// Artifacts in the bug's buckets.
    artifacts: usize,
    /// The representative's lines only crashing inputs ran.
    failing_lines: Vec<crate::session::lines::FailingLine>,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn bug_line(
    g: usize,
    total: usize,
    bug: &Bug,
    artifacts: usize,
    rep_index: usize,
    rep: &Found,
    results: &[(usize, Reduction)],
    cwd: &Path,
) -> BugLine {
    let failure = results.iter().find_map(|(_, r)| match r {
        Reduction::Failed { message, code } => Some((message.clone(), *code)),
        _ => None,
    });
    let interrupted = results.iter().any(|(_, r)| match r {
        Reduction::NotRun => true,
        Reduction::Done(s) => s.interrupted,
        _ => false,
    });
    let all_cached = results
        .iter()
        .all(|(_, r)| matches!(r, Reduction::Cached(_)));
    let skipped = results.iter().all(|(_, r)| matches!(r, Reduction::Skipped));
    let not_asked = results
        .iter()
        .all(|(_, r)| matches!(r, Reduction::NotAsked));
    let status = if skipped {
        "skipped"
    } else if not_asked {
        "unreduced"
    } else if failure.is_some() {
        "failed"
    } else if interrupted {
        "interrupted"
    } else if all_cached {
        "cached"
    } else {
        "reduced"
    };
    let tests_executed = results
        .iter()
        .map(|(_, r)| match r {
            Reduction::Done(s) => s.tests_executed,
            _ => 0,
        })
        .sum();
    let elapsed_secs = results
        .iter()
        .map(|(_, r)| match r {
            Reduction::Done(s) => s.elapsed_secs,
            _ => 0.0,
        })
        .sum();
    let rep_result = results.iter().find(|(m, _)| *m == rep_index);
    let result = rep_result.and_then(|(_, r)| match r {
        Reduction::Cached(rec) => Some((rec.len, rep.dir().join(&rec.output))),
        Reduction::Done(s) => Some((s.reduced_len as u64, s.output.clone())),
        _ => None,
    });
    let reproduce = rep_result.and_then(|(_, r)| match r {
        Reduction::Done(s) => Some(s.reproduce.clone()),
        _ => None,
    });
    let failing_lines = rep_result
        .map(|(_, r)| match r {
            Reduction::Cached(rec) => rec.failing_lines.clone(),
            Reduction::Done(s) => s.failing_lines().to_vec(),
            _ => Vec::new(),
        })
        .unwrap_or_default();
    let size = match &result {
        Some((len, _)) => format!("{} → {len} bytes", rep.len),
        None => format!("{} bytes", rep.len),
    };
    let verb = match status {
        "cached" => "Cached",
        "interrupted" => "Interrupted",
        "skipped" => "Skipped",
        "unreduced" => "Found",
        _ => "Reduced",
    };
    let targets = bug
        .targets
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let text = format!(
        "bug {}/{total} of {targets} ({} artifact{}): {size}{}: {} [{}]",
        g + 1,
        artifacts,
        if artifacts == 1 { "" } else { "s" },
        if status == "reduced" {
            format!(" in {elapsed_secs:.2}s")
        } else {
            String::new()
        },
        short_signature(&bug.signature, cwd),
        bug.severity.class,
    );
    BugLine {
        status,
        verb,
        text,
        code: failure.as_ref().map_or(0, |f| f.1),
        failure: failure.map(|f| f.0),
        tests_executed,
        elapsed_secs,
        result,
        reproduce,
        artifacts,
        failing_lines,
    }
}

pub(super) fn reduction_json(f: &Found, r: &Reduction) -> serde_json::Value {
    let mut v = json!({"input": path_json(&f.path), "original_len": f.len});
    match r {
        Reduction::Cached(rec) => {
            v["status"] = "cached".into();
            v["output"] = path_json(&f.dir().join(&rec.output));
            v["reduced_len"] = rec.len.into();
            v["cached"] = true.into();
            v["tests_executed"] = 0.into();
            v["verified_fresh"] = rec.verified_fresh.into();
        }
        Reduction::Done(s) => {
            v["status"] = if s.interrupted {
                "interrupted"
            } else {
                "reduced"
            }
            .into();
            v["output"] = path_json(&s.output);
            v["reduced_len"] = s.reduced_len.into();
            v["cached"] = false.into();
            v["tests_executed"] = s.tests_executed.into();
            v["elapsed_secs"] = s.elapsed_secs.into();
            v["verified_fresh"] = s.verified_fresh.into();
            v["strategy"] = s.strategy.as_str().into();
        }
        Reduction::Failed { message, .. } => {
            v["status"] = "failed".into();
            v["error"] = message.as_str().into();
        }
        Reduction::NotRun => {
            v["status"] = "interrupted".into();
        }
        Reduction::Skipped => {
            v["status"] = "skipped".into();
        }
        Reduction::NotAsked => {
            v["status"] = "unreduced".into();
        }
    }
    v
}

/// The summary table: one row per bug, then one per artifact that does not
/// reproduce (or is flaky).
pub(super) fn table(bugs: &[Bug], lines: &[BugLine], found: &[Found], cwd: &Path) -> String {
    let mut rows: Vec<[String; 9]> = vec![[
        "bug".into(),
        "severity".into(),
        "artifacts".into(),
        "reduced".into(),
        "status".into(),
        "fingerprint".into(),
        "target".into(),
        "path".into(),
        "signature".into(),
    ]];
    for (g, (bug, line)) in bugs.iter().zip(lines).enumerate() {
        let (reduced, path) = match &line.result {
            Some((len, out)) => (len.to_string(), out.display().to_string()),
            None => ("-".into(), "-".into()),
        };
        rows.push([
            (g + 1).to_string(),
            bug.severity.tier.name().into(),
            line.artifacts.to_string(),
            reduced,
            line.status.into(),
            bug.fingerprint.clone(),
            bug.targets.join(","),
            path,
            short_signature(&bug.signature, cwd),
        ]);
    }
    for f in found {
        if let Some(error) = &f.unreadable {
            rows.push([
                "-".into(),
                "-".into(),
                "1".into(),
                "-".into(),
                "unreadable".into(),
                "-".into(),
                "-".into(),
                f.path.display().to_string(),
                error.clone(),
            ]);
            continue;
        }
        let Some(class) = &f.class else { continue };
        let status = match class {
            Classification::Crash { .. } => continue,
            Classification::Pass { .. } | Classification::Reject { .. } => "no crash",
            Classification::Flaky { .. } => "flaky",
        };
        rows.push([
            "-".into(),
            "-".into(),
            "1".into(),
            "-".into(),
            status.into(),
            "-".into(),
            "-".into(),
            f.path.display().to_string(),
            shorten(&class.describe(), cwd),
        ]);
    }
    let mut widths = [0usize; 9];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::from("\n");
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            match i {
                // Numbers right-aligned, text left-aligned, the last unpadded.
                0 | 2 | 3 => line.push_str(&format!("{}{cell}  ", " ".repeat(pad))),
                8 => line.push_str(cell),
                _ => line.push_str(&format!("{cell}{}  ", " ".repeat(pad))),
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
