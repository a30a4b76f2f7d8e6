//! One revision judged: checked out, built as `cargo fuzz build` builds
//! it, and the input run in fresh processes as many times as the crash's
//! measured reliability asks ([`clean_runs_needed`]). A revision that cannot
//! be judged (no fuzz project or target there, it does not build, it
//! crashes another way) says why.

use super::git::{Commit, Repo, Worktree};
use super::search::Side;
use crate::error::{Error, Result};
use crate::interrupt;
use crate::output::default_output;
use crate::run::driver::Plan;
use crate::run::exec::Executor;
use crate::run::outcome::{CrashKind, MatchMode, Outcome, Signature};
use crate::run::project::FuzzProject;
use crate::session::report::Reporter;
use crate::session::{self, Options};
use crate::triage;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Runs of the input at the starting revision that measure how reliably it
/// crashes (a hang: [`HANG_REFERENCE_RUNS`], each costs the time limit).
pub(super) const REFERENCE_RUNS: usize = 10;
const HANG_REFERENCE_RUNS: usize = 2;

/// A revision is judged free of the crash once this unlikely to be wrong:
/// a bisection judges about ten revisions (a thousand commits), so the
/// whole answer is wrong by a clean verdict with probability about 1%, and
/// the last check catches most of that ([`Prober::recheck`]).
const CLEAN_ERROR: f64 = 0.001;

/// At most this many clean runs judge a revision, however rarely the crash
/// shows.
pub(super) const MAX_CLEAN_RUNS: usize = 200;

/// How many clean runs, each in a fresh process, make a revision free of a
/// crash that showed in `crashed` of `runs` runs: enough that a revision
/// with the crash would show it at least once but with probability
/// [`CLEAN_ERROR`], taking the rate at the lower end of its one-sided 95%
/// interval (Wilson's). A crash seen 10 times in 10 runs needs 5; 8 in 10,
/// 9; 3 in 10, 51.
pub fn clean_runs_needed(crashed: usize, runs: usize) -> usize {
    if crashed == 0 || runs == 0 {
        return MAX_CLEAN_RUNS;
    }
    let low = rate_low(crashed, runs);
    if low <= 0.0 {
        return MAX_CLEAN_RUNS;
    }
    if low >= 1.0 {
        return 1;
    }
    let k = (CLEAN_ERROR.ln() / (1.0 - low).ln()).ceil() as usize;
    k.clamp(1, MAX_CLEAN_RUNS)
}

/// The lower end of the one-sided 95% Wilson interval of a rate seen
/// `crashed` times in `runs`.
fn rate_low(crashed: usize, runs: usize) -> f64 {
    let n = runs as f64;
    let p = crashed as f64 / n;
    let z = 1.645_f64;
    let z2 = z * z;
    (p + z2 / (2.0 * n) - z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt()) / (1.0 + z2 / n)
}

/// What one revision's runs showed.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Judged {
    /// Crashed the same way.
    Crashes,
    /// Every run clean.
    Clean,
    /// Cannot tell: why.
    Skip(String),
}

/// The bug's identity under the match mode, read in the checkout the crash
/// happened in (the fingerprint reads the crash line's text).
pub(super) fn identity(mode: MatchMode, sig: &Signature, target: &str, root: &Path) -> String {
    match mode {
        MatchMode::Any => "any".to_owned(),
        MatchMode::Kind => format!("{:?}", sig.identity(MatchMode::Kind)),
        MatchMode::Location => triage::fingerprint(sig, Some(target), root),
        MatchMode::Message => format!(
            "{}|{}",
            triage::fingerprint(sig, Some(target), root),
            sig.message.as_deref().unwrap_or("")
        ),
    }
}

/// Everything a probe of one revision needs.
pub(super) struct Prober<'a> {
    pub(super) opts: &'a Options,
    pub(super) plan: Plan,
    pub(super) repo: Repo,
    pub(super) worktree: Worktree,
    /// The fuzz manifest, relative to the repository's top.
    pub(super) manifest: PathBuf,
    /// The fuzz target's source file, likewise.
    pub(super) target_source: PathBuf,
    pub(super) target: String,
    /// The user's target and build directories: builds share them.
    pub(super) target_directory: PathBuf,
    pub(super) build_directory: PathBuf,
    pub(super) input: Vec<u8>,
    /// Where `input` came from.
    pub(super) input_path: PathBuf,
    /// The bug's identity and signature ([`identity`]), once known.
    pub(super) reference: Option<(String, Signature)>,
    pub(super) clean_runs: usize,
    pub(super) limit: Duration,
    pub(super) builds: usize,
    pub(super) build_times: Vec<Duration>,
    pub(super) verdicts: HashMap<String, Judged>,
    /// Copies of the drivers built for revisions, by hash (only those that
    /// may be an end of the answer are kept).
    pub(super) binaries: HashMap<String, PathBuf>,
    /// The workspace root each kept driver was built in (crash lines are
    /// read there).
    pub(super) roots: HashMap<String, PathBuf>,
    /// The signature seen at a revision that crashed (for the last check).
    pub(super) seen: HashMap<String, Signature>,
    pub(super) clean_total: usize,
    /// The last revision judged to crash the same way (while searching
    /// back, the oldest known to): what an interrupted search still knows.
    pub(super) last_crash: Option<Commit>,
}

/// What running an end of the answer again showed.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Recheck {
    /// As judged.
    Held,
    /// A clean end crashed: how it is judged now.
    Contradicted(Judged),
    /// The crashing end did not crash again (or its driver is gone).
    Failed,
}

/// Why a probe could not go on.
pub(super) enum Stop {
    Interrupted,
    Failed(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Failed(e)
    }
}

impl Prober<'_> {
    /// Checks out `commit`, builds the target there and runs the input.
    pub(super) fn judge(
        &mut self,
        commit: &Commit,
        reporter: &mut Reporter,
    ) -> Result<Judged, Stop> {
        if let Some(v) = self.verdicts.get(&commit.hash) {
            return Ok(v.clone());
        }
        if interrupt::requested() {
            return Err(Stop::Interrupted);
        }
        reporter.status(
            "Testing",
            format!("{} {}", short(&commit.hash), printable(&commit.subject)),
        );
        let judged = self.judge_fresh(commit, reporter)?;
        match &judged {
            Judged::Crashes => {
                self.last_crash = Some(commit.clone());
                reporter.status("Crashes", short(&commit.hash))
            }
            Judged::Clean => reporter.status("Clean", short(&commit.hash)),
            Judged::Skip(why) => {
                reporter.status("Skipped", format!("{}: {why}", short(&commit.hash)))
            }
        }
        self.verdicts.insert(commit.hash.clone(), judged.clone());
        Ok(judged)
    }

    fn judge_fresh(&mut self, commit: &Commit, reporter: &mut Reporter) -> Result<Judged, Stop> {
        // A revision git cannot check out (a blob missing from a partial
        // clone, say) cannot be judged; the next checkout starts over.
        if let Err(e) = self.worktree.checkout(&commit.hash) {
            return Ok(Judged::Skip(format!("cannot be checked out: {e}")));
        }
        match self.build(commit, reporter)? {
            Ok((mut exec, root)) => self.run_input(&mut exec, commit, &root),
            Err(why) => Ok(Judged::Skip(why)),
        }
    }

    /// `sig` with its paths in the work tree named as in the user's
    /// checkout (the work tree is gone once the run ends).
    pub(super) fn in_checkout(&self, sig: &Signature) -> Signature {
        let mut sig = sig.clone();
        let (ours, theirs) = (
            self.worktree.top.display().to_string(),
            self.repo.top.display().to_string(),
        );
        if let Some(loc) = &sig.location {
            if let Some(rest) = loc.strip_prefix(&ours) {
                sig.location = Some(format!("{theirs}{rest}"));
            }
        }
        sig
    }

    /// Runs the input on a driver as many times as a verdict needs.
    fn run_input(
        &mut self,
        exec: &mut Executor,
        commit: &Commit,
        root: &Path,
    ) -> Result<Judged, Stop> {
        let Some((expected, _)) = self.reference.clone() else {
            unreachable!("the reference is measured first");
        };
        let mut other = None;
        for _ in 0..self.clean_runs {
            if interrupt::requested() {
                return Err(Stop::Interrupted);
            }
            exec.restart();
            let run = exec.run(&self.input).map_err(Error::from)?;
            self.clean_total += 1;
            if let Outcome::Crash(sig) = run.outcome {
                if identity(self.opts.match_mode, &sig, &self.target, root) == expected {
                    self.seen.insert(commit.hash.clone(), sig);
                    return Ok(Judged::Crashes);
                }
                other.get_or_insert(sig);
            }
        }
        Ok(match other {
            Some(sig) => Judged::Skip(format!("crashes another way: {}", self.in_checkout(&sig))),
            None => Judged::Clean,
        })
    }

    /// Builds `commit` into a driver kept for the last check, started with
    /// the run's time limit, and the workspace root its crash paths are
    /// read against; `Err(why)` when it cannot be built or started.
    fn build(
        &mut self,
        commit: &Commit,
        reporter: &mut Reporter,
    ) -> Result<std::result::Result<(Executor, PathBuf), String>, Stop> {
        let manifest = self.worktree.top.join(&self.manifest);
        if !manifest.is_file() {
            return Ok(Err(format!("no {}", self.manifest.display())));
        }
        let mut project = match FuzzProject::load(&manifest) {
            Ok(p) => p,
            Err(e) => return Ok(Err(first_line(&e.to_string()))),
        };
        if project.target(&self.target).is_err() {
            return Ok(Err(format!("no fuzz target `{}`", self.target)));
        }
        project.target_directory = self.target_directory.clone();
        project.build_directory = self.build_directory.clone();
        let started = Instant::now();
        self.builds += 1;
        let built = session::build_driver(self.opts, &self.plan, &project, &self.target, reporter);
        self.build_times.push(started.elapsed());
        if interrupt::requested() {
            return Err(Stop::Interrupted);
        }
        let built = match built {
            Ok(b) => b,
            Err(Error::Build { diagnostics, .. }) => {
                return Ok(Err(match first_error(&diagnostics) {
                    Some(e) => format!("does not build ({e})"),
                    None => "does not build".into(),
                }))
            }
            Err(e) => return Ok(Err(first_line(&e.to_string()))),
        };
        // The build's binary is overwritten by the next revision's: keep a
        // copy for the last check.
        let copy = self
            .worktree
            .top
            .with_file_name(format!("driver-{}", short(&commit.hash)));
        std::fs::copy(&built.binary, &copy).map_err(|source| Error::Write {
            path: copy.clone(),
            source,
        })?;
        self.binaries.insert(commit.hash.clone(), copy.clone());
        self.roots
            .insert(commit.hash.clone(), project.workspace_root.clone());
        match session::start_driver(self.opts, &copy) {
            Ok(mut exec) => {
                exec.set_timeout(self.limit);
                Ok(Ok((exec, project.workspace_root)))
            }
            Err(e) => Ok(Err(first_line(&e.to_string()))),
        }
    }

    /// Builds the starting revision (`--bad`) and measures the crash there:
    /// its identity, how reliably it shows, and which input to use.
    pub(super) fn measure(
        &mut self,
        commit: &Commit,
        artifact: &Path,
        reporter: &mut Reporter,
    ) -> Result<(), Stop> {
        reporter.status(
            "Testing",
            format!(
                "{} {} (--bad)",
                short(&commit.hash),
                printable(&commit.subject)
            ),
        );
        self.worktree.checkout(&commit.hash)?;
        let (mut exec, root) = self
            .build(commit, reporter)?
            .map_err(|why| Error::Unjudgeable {
                rev: commit.hash.clone(),
                what: "--bad",
                why,
            })?;
        let original = self.input.clone();
        let (crashes, runs) = tally(&mut exec, &original)?;
        // The bug: the identity most runs crashed with.
        let mut counts: HashMap<String, (usize, Signature)> = HashMap::new();
        for sig in &crashes {
            let id = identity(self.opts.match_mode, sig, &self.target, &root);
            counts.entry(id).or_insert((0, sig.clone())).0 += 1;
        }
        let Some((id, (count, sig))) = counts.into_iter().max_by_key(|(_, (n, _))| *n) else {
            return Err(Stop::Failed(Error::NoCrashAt {
                input: artifact.to_owned(),
                target: self.target.clone(),
                rev: commit.hash.clone(),
                what: "--bad",
                detail: format!("it ran cleanly {runs} times"),
            }));
        };
        self.clean_runs = clean_runs_needed(count, runs);
        self.seen.insert(commit.hash.clone(), sig.clone());
        self.reference = Some((id.clone(), sig));
        // Its reduced form, if there is one and it crashes the same way at
        // least as reliably.
        let reduced_path = default_output(artifact);
        if let Ok(reduced) = crate::input::read_file(&reduced_path) {
            let (crashes, r_runs) = tally(&mut exec, &reduced)?;
            let same = crashes
                .iter()
                .filter(|s| identity(self.opts.match_mode, s, &self.target, &root) == id)
                .count();
            if same > 0 && same * runs >= count * r_runs {
                self.input = reduced;
                self.input_path = reduced_path.clone();
                self.clean_runs = clean_runs_needed(same, r_runs);
                reporter.note(format!(
                    "running {} (the artifact's reduced form): it crashes the same way",
                    reduced_path.display()
                ));
            }
        }
        if self.clean_runs > clean_runs_needed(REFERENCE_RUNS, REFERENCE_RUNS) {
            reporter.note(format!(
                "the crash showed in {count} of {runs} runs: a revision counts as free of it after {} clean runs",
                self.clean_runs
            ));
        }
        self.verdicts.insert(commit.hash.clone(), Judged::Crashes);
        Ok(())
    }

    /// Runs a kept driver again for the last check: `crashes` whether it
    /// must crash as it did when judged (at least once in
    /// [`REFERENCE_RUNS`]) or run clean (twice the runs that judged it).
    pub(super) fn recheck(&mut self, hash: &str, crashes: bool) -> Result<Recheck, Stop> {
        let Some(binary) = self.binaries.get(hash).cloned() else {
            return Ok(Recheck::Failed);
        };
        let Some((expected, _)) = self.reference.clone() else {
            unreachable!("the reference is measured first");
        };
        let mut exec = session::start_driver(self.opts, &binary)?;
        exec.set_timeout(self.limit);
        let runs = if crashes {
            REFERENCE_RUNS
        } else {
            2 * self.clean_runs
        };
        for _ in 0..runs {
            if interrupt::requested() {
                return Err(Stop::Interrupted);
            }
            exec.restart();
            let run = exec.run(&self.input).map_err(Error::from)?;
            if let Outcome::Crash(sig) = run.outcome {
                if crashes {
                    // The binary judged: the signature compares as it was.
                    if self
                        .seen
                        .get(hash)
                        .is_some_and(|seen| self.opts.match_mode.matches(seen, &sig))
                    {
                        return Ok(Recheck::Held);
                    }
                    continue;
                }
                // The crash line is read in the revision's own checkout.
                let same = match self.roots.get(hash).cloned() {
                    Some(root) if self.worktree.checkout(hash).is_ok() => {
                        identity(self.opts.match_mode, &sig, &self.target, &root) == expected
                    }
                    _ => false,
                };
                return Ok(Recheck::Contradicted(if same {
                    self.seen.insert(hash.to_owned(), sig);
                    Judged::Crashes
                } else {
                    Judged::Skip(format!("crashes another way: {}", self.in_checkout(&sig)))
                }));
            }
        }
        Ok(if crashes {
            Recheck::Failed
        } else {
            Recheck::Held
        })
    }

    /// Drops the kept drivers of revisions that can no longer be an end of
    /// the answer.
    pub(super) fn forget_binaries(&mut self, keep: &[&str]) {
        self.binaries.retain(|hash, path| {
            let kept = keep.contains(&hash.as_str());
            if !kept {
                let _ = std::fs::remove_file(path);
            }
            kept
        });
    }
}

/// Runs `input` in fresh processes to measure its crash: the crashes and
/// the runs (a hang stops at [`HANG_REFERENCE_RUNS`]: each costs the limit).
pub(super) fn tally(exec: &mut Executor, input: &[u8]) -> Result<(Vec<Signature>, usize), Stop> {
    let mut crashes = Vec::new();
    let mut runs = REFERENCE_RUNS;
    let mut i = 0;
    while i < runs {
        if interrupt::requested() {
            return Err(Stop::Interrupted);
        }
        exec.restart();
        let run = exec.run(input).map_err(Error::from)?;
        if let Outcome::Crash(sig) = run.outcome {
            if sig.kind == CrashKind::Timeout {
                runs = runs.min(HANG_REFERENCE_RUNS);
            }
            crashes.push(sig);
        }
        i += 1;
    }
    Ok((crashes, runs))
}

/// The side a revision's runs put it on.
pub(super) fn side(judged: Judged, fixed: bool) -> Side {
    match (judged, fixed) {
        (Judged::Crashes, false) | (Judged::Clean, true) => Side::After,
        (Judged::Clean, false) | (Judged::Crashes, true) => Side::Before,
        (Judged::Skip(why), _) => Side::Skip(why),
    }
}

/// The first 12 digits of a hash.
pub(super) fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// A commit subject for a terminal: control characters shown as `?`.
pub(super) fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// cargo's first `error` line, without colours, cut to 160 characters.
fn first_error(diagnostics: &str) -> Option<String> {
    let plain: String = diagnostics
        .split('\x1b')
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                part
            } else {
                // An SGR sequence: `[…m`.
                part.find('m').map_or(part, |m| &part[m + 1..])
            }
        })
        .collect();
    let line = plain
        .lines()
        .find(|l| l.trim_start().starts_with("error"))?;
    Some(printable(line.trim()).chars().take(160).collect())
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_runs_follow_the_crash_rate() {
        assert_eq!(clean_runs_needed(10, 10), 5);
        assert_eq!(clean_runs_needed(8, 10), 9);
        assert_eq!(clean_runs_needed(3, 10), 51);
        assert!(clean_runs_needed(2, 2) > clean_runs_needed(10, 10));
        assert_eq!(clean_runs_needed(0, 10), MAX_CLEAN_RUNS);
        // A revision with a crash of rate p shows it in k runs but with
        // probability (1-p)^k <= CLEAN_ERROR at the interval's lower end,
        // and k is the least such (unless clamped).
        for (c, n) in [(1, 10), (2, 10), (5, 10), (9, 10), (20, 20), (7, 7)] {
            let k = clean_runs_needed(c, n);
            let miss = 1.0 - rate_low(c, n);
            assert!((1..=MAX_CLEAN_RUNS).contains(&k));
            assert!(
                k == MAX_CLEAN_RUNS || miss.powi(k as i32) <= CLEAN_ERROR,
                "{c}/{n}: {k}"
            );
            assert!(
                k == 1 || miss.powi(k as i32 - 1) > CLEAN_ERROR,
                "{c}/{n}: {k}"
            );
        }
    }

    #[test]
    fn sides_turn_over_for_fixed() {
        assert_eq!(side(Judged::Crashes, false), Side::After);
        assert_eq!(side(Judged::Clean, false), Side::Before);
        assert_eq!(side(Judged::Crashes, true), Side::Before);
        assert_eq!(side(Judged::Clean, true), Side::After);
    }

    #[test]
    fn a_build_failure_is_named_by_its_first_error() {
        let d = "   Compiling x v0.1.0\n\x1b[1m\x1b[91merror[E0635]\x1b[0m: unknown feature `proc_macro_span_shrink`\n --> src/lib.rs:1:1\nerror: could not compile `x`";
        assert_eq!(
            first_error(d).as_deref(),
            Some("error[E0635]: unknown feature `proc_macro_span_shrink`")
        );
        assert_eq!(first_error("warning: x"), None);
    }

    #[test]
    fn subjects_are_printable() {
        assert_eq!(printable("fix\x1b[31m red"), "fix?[31m red");
    }
}
