//! `--bisect`: the commit at which an artifact started crashing the same
//! way (or, `--fixed`, stopped).
//!
//! After "what is the bug" comes "when did it come in". A user's `git
//! bisect run` over a script that says "crashed or not" counts another
//! crash on the way as ours and a revision that does not build as bad. This
//! uses what the tool already knows instead:
//!
//! - each revision is built as `cargo fuzz build` builds it ([`session`]'s
//!   build), in a work tree of our own ([`git::Worktree`]; the user's
//!   checkout, index and `.git` are never written), into the user's own
//!   build directory, so compiled dependencies are shared with their fuzz
//!   builds and between revisions (only what changed recompiles);
//! - "the same way" is the bug's fingerprint ([`triage::fingerprint`]: kind,
//!   file, function and the text of the crash line), so moved lines do not
//!   make a crash another one; under `--match kind`/`any` the looser rule;
//! - a revision that does not build, lacks the target or crashes another
//!   way is skipped and named ([`search::Side::Skip`]); when skips border
//!   the change the answer is the range;
//! - a revision counts as free of the crash only after as many clean runs,
//!   each in a fresh process, as the crash's measured reliability asks
//!   ([`clean_runs_needed`]); the two revisions of the answer are run again
//!   at the end, from the binaries built for them, and a clean end that
//!   crashes then is corrected and the search goes on with more runs.
//!
//! The input is the artifact's reduced form (`<artifact>.reduced`) when
//! there is one that crashes the same way at the starting revision: it is
//! faster and less likely to meet other bugs on the way.

pub mod git;
mod probe;
pub mod search;

use crate::error::{Error, Result};
use crate::run::outcome::Signature;
use crate::session::report::{path_json, Reporter};
use crate::session::{self, Options};
use git::{Commit, Repo};
use probe::{printable, short, side, Judged, Prober, Recheck, Stop};
use search::{Back, Found, Side, Verdicts};
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What the command line asked for.
#[derive(Debug, Clone)]
pub struct BisectOptions {
    pub artifact: PathBuf,
    /// A revision without the crash (`--fixed`: with it fixed; default
    /// `HEAD` there). Without it a regression is searched for back from
    /// `bad`.
    pub good: Option<String>,
    /// A revision with the crash (default `HEAD`; required with `--fixed`).
    pub bad: Option<String>,
    /// Find the first commit at which it no longer crashes.
    pub fixed: bool,
}

/// The answer.
#[derive(Debug, Clone)]
pub struct Bisected {
    /// The first commit with the change (`first_bad`, `--fixed`:
    /// `first_fixed`); with skips around it, the last of the range.
    pub first: Commit,
    /// The last commit before it that was judged (its parent when exact).
    pub last_before: Commit,
    /// With skips bordering the change: the first and last candidate.
    pub range: Option<(Commit, Commit)>,
    /// Revisions built.
    pub builds: usize,
    /// Candidates between the two ends searched.
    pub candidates: usize,
    /// Revisions the answer may still be (1 when exact).
    pub candidates_left: usize,
    /// Each skipped revision and why.
    pub skipped: Vec<(Commit, String)>,
    /// The input run (the artifact or its reduced form).
    pub input: PathBuf,
    pub signature: Signature,
    /// Wall time of each build, in order.
    pub build_times: Vec<Duration>,
    pub elapsed: Duration,
    /// The two revisions of the answer were run again at the end and held.
    pub checked: bool,
    /// Stopped by Ctrl-C: `range` is what was known by then.
    pub interrupted: bool,
    pub fixed: bool,
    /// Clean runs that judged a revision free of the crash.
    pub clean_runs: usize,
}

/// `--bisect`: finds the commit, reports it (status lines, a `bisected`
/// JSON line) and returns it.
pub fn run(opts: &Options, bopts: &BisectOptions, reporter: &mut Reporter) -> Result<Bisected> {
    let started = Instant::now();
    let artifact = &bopts.artifact;
    let input = session::read_artifact(artifact)?;
    let (project, target) = session::locate_target(opts, artifact)?;
    let repo = Repo::containing(&project.dir)?;
    let manifest = project
        .manifest
        .canonicalize()
        .unwrap_or_else(|_| project.manifest.clone());
    let top = repo.top.canonicalize().unwrap_or_else(|_| repo.top.clone());
    let inside = |path: &Path| {
        let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        path.strip_prefix(&top)
            .map(Path::to_owned)
            .map_err(|_| Error::NotGit {
                path: path.clone(),
                detail: format!("it is outside {}", repo.top.display()),
            })
    };
    let manifest = inside(&manifest)?;
    let target_source = inside(&project.target(&target)?.src_path)?;

    // The revision the crash is measured at, and the other end.
    let (reference, other) = if bopts.fixed {
        let bad = bopts.bad.as_deref().ok_or_else(|| Error::BadRevision {
            rev: "(none: --fixed needs --bad REV, a revision that crashes)".into(),
            repo: repo.top.clone(),
        })?;
        (
            repo.resolve(bad)?,
            Some(repo.resolve(bopts.good.as_deref().unwrap_or("HEAD"))?),
        )
    } else {
        (
            repo.resolve(bopts.bad.as_deref().unwrap_or("HEAD"))?,
            bopts.good.as_deref().map(|g| repo.resolve(g)).transpose()?,
        )
    };
    // Oldest first: (older, newer).
    if let Some(other) = &other {
        let (older, newer) = if bopts.fixed {
            (&reference, other)
        } else {
            (other, &reference)
        };
        if older == newer || !repo.is_ancestor(older, newer) {
            return Err(Error::NotAncestor {
                good: if bopts.fixed {
                    newer.clone()
                } else {
                    older.clone()
                },
                bad: if bopts.fixed {
                    older.clone()
                } else {
                    newer.clone()
                },
            });
        }
    }

    let plan = session::plan_build(opts, reporter);
    let limit = session::check_timeout(opts);
    let worktree = repo.worktree()?;
    let mut prober = Prober {
        opts,
        plan,
        repo: repo.clone(),
        worktree,
        manifest,
        target_source,
        target: target.clone(),
        target_directory: project.target_directory.clone(),
        build_directory: project.build_directory.clone(),
        input,
        input_path: artifact.clone(),
        reference: None,
        clean_runs: 1,
        limit,
        builds: 0,
        build_times: Vec::new(),
        verdicts: HashMap::new(),
        binaries: HashMap::new(),
        roots: HashMap::new(),
        seen: HashMap::new(),
        clean_total: 0,
        last_crash: None,
    };
    let reference_commit = repo.commit(&reference)?;
    let outcome = bisect_with(
        &mut prober,
        bopts,
        &reference_commit,
        other.as_deref(),
        reporter,
    );
    let (chain, found, interrupted, checked) = match outcome {
        Ok(r) => r,
        Err(Stop::Failed(e)) => return Err(e),
        Err(Stop::Interrupted) => {
            return Err(match (&prober.reference, &prober.last_crash) {
                // Stopped while searching back: how far back it crashes.
                (Some(_), Some(c)) if !bopts.fixed => Error::BisectInterrupted {
                    known: format!(
                        "it crashes the same way as far back as {} ({}); no older revision was judged yet",
                        c.hash,
                        probe::printable(&c.subject)
                    ),
                },
                (Some(_), _) => Error::BisectInterrupted {
                    known: format!("it crashes the same way at {}; no other revision was judged yet", reference),
                },
                _ => Error::Interrupted,
            });
        }
    };
    let skipped: Vec<(Commit, String)> = chain[found.before + 1..found.after]
        .iter()
        .filter_map(|c| match prober.verdicts.get(&c.hash) {
            Some(Judged::Skip(why)) => Some((c.clone(), why.clone())),
            _ => None,
        })
        .collect();
    let signature = prober.in_checkout(&prober.reference.clone().expect("measured").1);
    let bisected = Bisected {
        first: chain[found.after].clone(),
        last_before: chain[found.before].clone(),
        range: (!found.exact() || interrupted)
            .then(|| (chain[found.before + 1].clone(), chain[found.after].clone())),
        builds: prober.builds,
        candidates: chain.len() - 1,
        candidates_left: found.after - found.before,
        skipped,
        input: prober.input_path.clone(),
        signature,
        build_times: prober.build_times.clone(),
        elapsed: started.elapsed(),
        checked,
        interrupted,
        fixed: bopts.fixed,
        clean_runs: prober.clean_runs,
    };
    report(&bisected, reporter);
    Ok(bisected)
}

/// The search: measure the crash, find the other end (given, or searched
/// back), bisect, check the answer. Returns the chain (oldest first, the
/// "before" end at 0), the answer in it, whether it was interrupted and
/// whether the last check held.
fn bisect_with(
    prober: &mut Prober<'_>,
    bopts: &BisectOptions,
    reference: &Commit,
    other: Option<&str>,
    reporter: &mut Reporter,
) -> Result<(Vec<Commit>, Found, bool, bool), Stop> {
    let fixed = bopts.fixed;
    prober.measure(reference, &bopts.artifact, reporter)?;
    let repo = prober.repo.clone();
    let target = prober.target.clone();
    let input_path = bopts.artifact.clone();

    let (chain, verdicts): (Vec<Commit>, Verdicts) = match other {
        Some(other) => {
            let other_commit = repo.commit(other)?;
            let judged = prober.judge(&other_commit, reporter)?;
            // The other end runs clean, in both directions.
            match judged {
                Judged::Clean => {}
                Judged::Crashes => {
                    return Err(Stop::Failed(if fixed {
                        Error::NotFixed {
                            input: input_path,
                            target,
                            rev: other_commit.hash,
                        }
                    } else {
                        Error::GoodCrashes {
                            input: input_path,
                            target,
                            rev: other_commit.hash,
                        }
                    }))
                }
                Judged::Skip(why) => {
                    return Err(Stop::Failed(Error::Unjudgeable {
                        rev: other_commit.hash,
                        what: if fixed { "--good, or HEAD" } else { "--good" },
                        why,
                    }))
                }
            }
            // Newest first from the newer end to just after the older.
            let (older, newer) = if fixed {
                (reference.hash.as_str(), other)
            } else {
                (other, reference.hash.as_str())
            };
            let mut chain = repo.chain_back(newer, Some(older))?;
            chain.reverse();
            chain.insert(0, repo.commit(older)?);
            // In a fixed search the chain's "before" end is the crashing one.
            (chain, Verdicts::new())
        }
        None => {
            // Regressions only (--fixed has both ends).
            let back = repo.chain_back(&reference.hash, None)?;
            let mut oldest = back.len() - 1;
            // First the commit that added the fuzz target: if the crash is
            // not there, the whole history since is one bisection
            // (⌈log2 n⌉ builds); if it cannot be judged there, step back
            // from the bad end instead.
            if let Some(added) = repo.oldest_touching(&reference.hash, &prober.target_source)? {
                if let Some(at) = back
                    .iter()
                    .position(|c| c.hash == added)
                    .filter(|&at| at > 0)
                {
                    oldest = at;
                    match side(prober.judge(&back[at], reporter)?, false) {
                        Side::Before => {
                            let mut chain: Vec<Commit> = back[..=at].to_vec();
                            chain.reverse();
                            return bisect_chain(prober, chain, Verdicts::new(), fixed, reporter);
                        }
                        Side::After => {
                            return Err(Stop::Failed(Error::NoneBefore {
                                input: input_path,
                                target,
                                from: reference.hash.clone(),
                                oldest: added,
                                tried: 1,
                            }))
                        }
                        Side::Skip(_) => {}
                    }
                }
            }
            let mut by_distance = Verdicts::new();
            let mut stop = None;
            let found = search::search_back(oldest, &mut by_distance, |d| {
                match prober.judge(&back[d], reporter) {
                    Ok(j) => Some(side(j, false)),
                    Err(e) => {
                        stop = Some(e);
                        None
                    }
                }
            });
            if let Some(stop) = stop {
                return Err(stop);
            }
            match found {
                Back::Found(d) => {
                    let mut chain: Vec<Commit> = back[..=d].to_vec();
                    chain.reverse();
                    (chain, search::as_chain(&by_distance, d))
                }
                Back::NoneBefore => {
                    return Err(Stop::Failed(Error::NoneBefore {
                        input: input_path,
                        target,
                        from: reference.hash.clone(),
                        oldest: back[oldest].hash.clone(),
                        tried: by_distance.len(),
                    }))
                }
                Back::Stopped => return Err(Stop::Interrupted),
            }
        }
    };
    bisect_chain(prober, chain, verdicts, fixed, reporter)
}

/// Bisects `chain` (oldest first, its ends known) and checks the answer.
/// A clean end that shows the crash when run again is proof its verdict was
/// wrong (the crash is flakier than measured): the verdict is corrected, the
/// clean runs per revision doubled, and the search goes on from there, at
/// most [`CORRECTIONS`] times.
fn bisect_chain(
    prober: &mut Prober<'_>,
    chain: Vec<Commit>,
    mut verdicts: Verdicts,
    fixed: bool,
    reporter: &mut Reporter,
) -> Result<(Vec<Commit>, Found, bool, bool), Stop> {
    let len = chain.len();
    let mut corrections = 0;
    loop {
        let mut stop = None;
        let (found, interrupted) = search::bisect(len, &mut verdicts, |p| {
            let judged = match prober.judge(&chain[p], reporter) {
                Ok(j) => j,
                Err(e) => {
                    stop = Some(e);
                    return None;
                }
            };
            Some(side(judged, fixed))
        });
        match stop {
            Some(Stop::Interrupted) | None => {}
            Some(failed) => return Err(failed),
        }
        let bracket = search::bracket(&verdicts);
        // Keep the drivers of the revisions that may still be an end of the
        // answer: the crashing end (a crash seen is proof) and every
        // revision judged clean (the last check may prove one wrong).
        let crash_side = side(Judged::Crashes, fixed);
        let keep: Vec<&str> = verdicts
            .iter()
            .filter(|(p, s)| {
                **p == bracket.before
                    || **p == bracket.after
                    || (**s != crash_side && !matches!(s, Side::Skip(_)))
            })
            .map(|(p, _)| chain[*p].hash.as_str())
            .collect();
        prober.forget_binaries(&keep);
        if interrupted {
            prober.forget_binaries(&[]);
            return Ok((chain, found, true, false));
        }
        // The last check: the "after" end shows the change again, the
        // "before" end does not (each from the binary built for it).
        let (crash_at, clean_at) = if fixed {
            (bracket.before, bracket.after)
        } else {
            (bracket.after, bracket.before)
        };
        let (crash_end, clean_end) = (chain[crash_at].hash.clone(), chain[clean_at].hash.clone());
        let rechecked = prober
            .recheck(&crash_end, true)
            .and_then(|a| Ok((a, prober.recheck(&clean_end, false)?)));
        let (crash_held, clean_held) = match rechecked {
            Ok(r) => r,
            Err(Stop::Interrupted) => {
                prober.forget_binaries(&[]);
                return Ok((chain, found, true, false));
            }
            Err(failed) => return Err(failed),
        };
        let correctable = clean_at != 0 && clean_at != len - 1 && corrections < CORRECTIONS;
        match (crash_held, clean_held) {
            (Recheck::Held, Recheck::Held) => {
                prober.forget_binaries(&[]);
                return Ok((chain, found, false, true));
            }
            (Recheck::Held, Recheck::Contradicted(judged)) if correctable => {
                corrections += 1;
                prober.clean_runs = (prober.clean_runs * 2).min(probe::MAX_CLEAN_RUNS);
                reporter.note(format!(
                    "{} was judged clean but {} when run again: the crash is flakier than measured, so a revision now counts as free of it after {} clean runs",
                    short(&clean_end),
                    match &judged {
                        Judged::Crashes => "crashed the same way".to_owned(),
                        Judged::Skip(why) => why.clone(),
                        Judged::Clean => unreachable!("a contradiction is not clean"),
                    },
                    prober.clean_runs
                ));
                prober.verdicts.insert(clean_end, judged.clone());
                verdicts.insert(clean_at, side(judged, fixed));
            }
            _ => {
                reporter.warn(format!(
                    "the answer did not hold when run again ({} should crash, {} should not): the crash may be flakier than measured",
                    short(&crash_end),
                    short(&clean_end)
                ));
                prober.forget_binaries(&[]);
                return Ok((chain, found, false, false));
            }
        }
    }
}

/// How many times a wrong clean verdict found by the last check is
/// corrected before the answer is given with a warning.
const CORRECTIONS: usize = 3;

/// Status lines and the `bisected` JSON line.
fn report(b: &Bisected, reporter: &mut Reporter) {
    let what = if b.fixed {
        "first fixed commit"
    } else {
        "first bad commit"
    };
    let builds_secs: Vec<f64> = b.build_times.iter().map(Duration::as_secs_f64).collect();
    let later = builds_secs.iter().skip(1).copied().collect::<Vec<_>>();
    let median_later = median(&later);
    if b.interrupted {
        reporter.status(
            "Interrupted",
            format!(
                "the {what} is one of {} revisions: after {} and up to {}",
                b.candidates_left,
                short(&b.last_before.hash),
                short(&b.first.hash),
            ),
        );
    } else {
        match &b.range {
            None => reporter.status(
                "Bisected",
                format!(
                    "{what}: {} {} ({})",
                    b.first.hash,
                    printable(&b.first.subject),
                    b.first.date
                ),
            ),
            Some((first, last)) => reporter.status(
                "Bisected",
                format!(
                    "the {what} is one of {} revisions, {}..{} (skipped: {})",
                    b.candidates_left,
                    short(&first.hash),
                    short(&last.hash),
                    b.skipped
                        .iter()
                        .map(|(c, why)| format!("{} {why}", short(&c.hash)))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            ),
        }
    }
    reporter.status(
        "Finished",
        format!(
            "{} candidates, {} builds in {:.1}s (first build {:.1}s, then median {:.1}s){}",
            b.candidates,
            b.builds,
            b.elapsed.as_secs_f64(),
            builds_secs.first().copied().unwrap_or(0.0),
            median_later,
            if b.interrupted { "; interrupted" } else { "" }
        ),
    );
    let commit = |c: &Commit| json!({"hash": c.hash, "subject": c.subject, "date": c.date});
    let key = if b.fixed { "first_fixed" } else { "first_bad" };
    let mut fields = json!({
        "input": path_json(&b.input),
        "signature": b.signature,
        "builds": b.builds,
        "candidates": b.candidates,
        "candidates_left": b.candidates_left,
        "last_before": commit(&b.last_before),
        "range": b.range.as_ref().map(|(f, l)| json!([f.hash, l.hash])),
        "skipped": b.skipped.iter().map(|(c, why)| json!({"hash": c.hash, "why": why})).collect::<Vec<_>>(),
        "build_secs": builds_secs,
        "elapsed_secs": b.elapsed.as_secs_f64(),
        "clean_runs_per_revision": b.clean_runs,
        "checked": b.checked,
        "interrupted": b.interrupted,
        "commit": commit(&b.first),
    });
    fields[key] = if b.range.is_none() && !b.interrupted {
        b.first.hash.clone().into()
    } else {
        serde_json::Value::Null
    };
    reporter.message("bisected", fields);
}

fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
