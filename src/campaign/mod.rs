//! Whole artifact directories: every crash a fuzzing campaign left behind,
//! grouped into buckets by crash identity, one reduction per bucket.
//!
//! A long `cargo fuzz run` leaves dozens of artifacts in
//! `fuzz/artifacts/<target>/`, most of them the same few bugs found again and
//! again. Reducing each one separately wastes time and buries the distinct
//! bugs among duplicates, so this mode
//!
//! 1. finds the artifacts ([`discover`]: `crash-`/`oom-`/`timeout-`/`leak-`
//!    files; never our own outputs, our records, or libFuzzer's
//!    `minimized-from-*`/`slow-unit-*`),
//! 2. builds each target's driver once and reruns every artifact exactly as
//!    the single-artifact mode does ([`session::check_reproduces`]:
//!    `--reruns` runs in a fresh driver, flaky detection),
//! 3. groups the reproducing ones into buckets by their signature under
//!    `--match` ([`bucket_key`], [`group`]) and reduces one representative
//!    per bucket, the smallest original (`--each`: all of them), with `-j`
//!    independent drivers in parallel ([`session::reduce_reproduced`]),
//! 4. lists everything, including the artifacts that do not reproduce.
//!
//! What is learnt is kept beside the artifacts in a small content-addressed
//! [`Record`] (`<dir>/.reduce-crash/<sha1 of the artifact>.json`), valid for
//! one driver binary (by the hash of its bytes) and one set of settings, so
//! running again on an unchanged directory reruns and re-reduces nothing.

use crate::error::{Error, Result};
use crate::exit_code;
use crate::grammar::Grammar;
use crate::interrupt;
use crate::output::{default_output, Destinations};
use crate::run::driver::BuildKind;
use crate::run::exec::Executor;
use crate::run::outcome::{Outcome, Signature};
use crate::run::project::{find_manifest, FuzzProject, Locate};
use crate::session::report::{path_json, Reporter, Summary};
use crate::session::{self, Options, ReduceJob};
use crate::triage::{self, Bug};
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub mod bisect;
mod bucket;
pub mod corpus;
mod discover;
pub mod merge;
mod parallel;
mod record;
mod summary;

pub use bucket::{bucket_key, group, Bucket, BucketKey, Crashed};
pub use discover::{discover, is_artifact_name, is_ignored_name, Discovered};
use parallel::{classify_one, in_parallel, Event};
pub use record::{
    read_record, record_path, settings_key, sha1_file, sha1_hex, strategy_key, write_record,
    Classification, Record, RecordKey, ReducedRecord,
};
pub use summary::CampaignReport;
use summary::*;

/// The file name prefixes libFuzzer gives the inputs it reports.
pub const ARTIFACT_PREFIXES: &[&str] = &[
    "crash-",
    "oom-",
    "timeout-",
    "leak-",
    // OSS-Fuzz's test cases.
    "clusterfuzz-testcase-",
];

/// The directory beside the artifacts that holds the records.
pub const RECORD_DIR: &str = ".reduce-crash";

/// Bumped whenever a record's meaning changes; older records are ignored.
/// 2: the default byte pipeline gained the nesting, numbers, fields and
/// random passes, so results recorded before are reduced again.
/// 3: classifications keep the crash report's details (the access, the
/// stack), which triage needs.
pub const RECORD_VERSION: u32 = 3;

/// What the directory mode adds to [`Options`].
#[derive(Debug, Clone)]
pub struct CampaignOptions {
    /// Artifact files and directories.
    pub paths: Vec<PathBuf>,
    /// Every target's `artifacts/<target>/` directory of the project.
    pub all: bool,
    /// Reduce every reproducing artifact, not one per bug.
    pub each: bool,
    /// Reduce at all (`--no-reduce`: classify, group and report only).
    pub reduce: bool,
    /// Drivers at work at the same time (rerunning and reducing).
    pub jobs: usize,
    /// Where the report, SARIF and Markdown go.
    pub outputs: crate::triage::ReportOutputs,
    /// An earlier run's report: bugs are new, known or fixed against it.
    pub baseline: Option<PathBuf>,
    /// This run's share of the bugs to reduce.
    pub partition: Option<crate::triage::Partition>,
}

/// One (project, target) with its built driver.
struct Target {
    project: usize,
    name: String,
    binary: PathBuf,
    /// How the driver was built (for the reproduce line).
    kind: BuildKind,
    key: RecordKey,
}

/// One discovered artifact.
struct Found {
    path: PathBuf,
    target: usize,
    sha1: String,
    len: u64,
    class: Option<Classification>,
    /// The classification came from its record.
    cached: bool,
    /// Why the file could not be read (then it has no hash and no class).
    unreadable: Option<String>,
    /// Why its result cannot be written where it goes (`<artifact>.reduced`),
    /// with the exit code: its reduction fails at once.
    refused: Option<(String, i32)>,
}

impl Found {
    fn record_path(&self) -> PathBuf {
        record_path(&self.path, &self.sha1)
    }

    fn dir(&self) -> PathBuf {
        match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
            _ => PathBuf::from("."),
        }
    }

    fn output(&self) -> PathBuf {
        default_output(&self.path)
    }

    fn output_name(&self) -> String {
        self.output()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// How one reduction of a bucket ended.
enum Reduction {
    /// Known from the record.
    Cached(ReducedRecord),
    Done(Box<Summary>),
    Failed {
        message: String,
        code: i32,
    },
    /// Never started (interrupted first).
    NotRun,
    /// Another shard's (`--partition`).
    Skipped,
    /// Not asked for (`--no-reduce`).
    NotAsked,
}

/// Finds, classifies, buckets and reduces, then prints the table. `Err`
/// only for what stops everything before the table (no project, a driver
/// that does not build, …); everything else is in the report.
pub fn run(
    opts: &Options,
    copts: &CampaignOptions,
    reporter: &mut Reporter,
) -> Result<CampaignReport> {
    let started = Instant::now();
    // A bad baseline is found before any work.
    let baseline = match &copts.baseline {
        Some(p) => Some(triage::report::Report::read(p)?),
        None => None,
    };
    let mut c = Campaign::find(opts, copts, reporter)?;
    c.baseline = baseline;
    c.build(reporter)?;
    c.classify()?;
    let buckets = c.bucket(reporter);
    let bugs = c.bugs(&buckets, reporter);
    let results = c.reduce(&buckets, &bugs, reporter);
    Ok(c.finish(&buckets, &bugs, &results, started, reporter))
}

/// The state of one directory run, phase by phase.
struct Campaign<'o> {
    opts: &'o Options,
    copts: &'o CampaignOptions,
    projects: Vec<FuzzProject>,
    /// Index into `projects` by canonical manifest path.
    project_by_manifest: HashMap<PathBuf, usize>,
    targets: Vec<Target>,
    found: Vec<Found>,
    /// What was searched, for messages.
    place: PathBuf,
    grammar: Option<Grammar>,
    /// The first record that could not be written.
    record_warning: Option<String>,
    /// `--baseline`: an earlier run's report.
    baseline: Option<triage::report::Report>,
    /// Where the run writes ([`Destinations`]).
    destinations: Destinations,
}

impl<'o> Campaign<'o> {
    /// The project whose manifest `locate` finds, loaded once.
    fn project(&mut self, locate: &Locate) -> Result<usize> {
        let manifest = find_manifest(locate)?;
        let key = manifest.canonicalize().unwrap_or(manifest.clone());
        if let Some(&i) = self.project_by_manifest.get(&key) {
            return Ok(i);
        }
        self.projects.push(FuzzProject::load(&manifest)?);
        self.project_by_manifest
            .insert(key, self.projects.len() - 1);
        Ok(self.projects.len() - 1)
    }

    /// Discovers the artifacts and resolves each one's project and target.
    fn find(
        opts: &'o Options,
        copts: &'o CampaignOptions,
        reporter: &mut Reporter,
    ) -> Result<Campaign<'o>> {
        let first = || {
            copts
                .paths
                .first()
                .cloned()
                .unwrap_or_else(|| "--all".into())
        };
        // (`--emit-test DIR` is one test per bug, in that directory.)
        for (given, option) in [(opts.output.is_some(), "-o/--output")] {
            if given {
                return Err(Error::OneOutputForMany {
                    option,
                    path: first(),
                });
            }
        }
        let cwd = &opts.locate.cwd;
        let mut c = Campaign {
            opts,
            copts,
            projects: Vec::new(),
            project_by_manifest: HashMap::new(),
            targets: Vec::new(),
            found: Vec::new(),
            place: common_place(&copts.paths),
            grammar: None,
            record_warning: None,
            baseline: None,
            destinations: Destinations::default(),
        };
        let paths: Vec<PathBuf> = if copts.all {
            let p = c.project(&opts.locate)?;
            let artifacts = c.projects[p].dir.join("artifacts");
            c.place = relative(&artifacts, cwd);
            let dirs: Vec<PathBuf> = c.projects[p]
                .targets
                .iter()
                .map(|t| relative(&artifacts.join(&t.name), cwd))
                .filter(|d| d.is_dir())
                .collect();
            if dirs.is_empty() {
                return Err(Error::NoArtifacts { path: c.place });
            }
            dirs
        } else {
            copts.paths.clone()
        };
        let discovered = discover(&paths)?;
        if let Some(example) = discovered.skipped.first() {
            reporter.warn(format!(
                "skipped {} that are outputs or libFuzzer by-products, not crash artifacts (*.reduced, minimized-from-*, slow-unit-*), e.g. {}",
                plural(discovered.skipped.len(), "file"),
                example.display()
            ));
        }
        if discovered.artifacts.is_empty() {
            return Err(Error::NoArtifacts { path: c.place });
        }
        let mut duplicates = 0;
        for path in discovered.artifacts {
            let mut locate = opts.locate.clone();
            locate.artifact = Some(path.clone());
            let p = c.project(&locate)?;
            let name = c.projects[p]
                .resolve_target(opts.fuzz_target.as_deref(), &path)?
                .name
                .clone();
            let target = match c
                .targets
                .iter()
                .position(|t| t.project == p && t.name == name)
            {
                Some(t) => t,
                None => {
                    c.targets.push(Target {
                        project: p,
                        name,
                        binary: PathBuf::new(),
                        kind: BuildKind::Generated,
                        key: RecordKey {
                            driver: String::new(),
                            settings: settings_key(opts),
                        },
                    });
                    c.targets.len() - 1
                }
            };
            // One unreadable file gets its own row; the rest goes on.
            let (sha1, len, unreadable) = match crate::input::read_file(&path) {
                Ok(data) => (sha1_hex(&data), data.len() as u64, None),
                Err(e) => (String::new(), 0, Some(e.to_string())),
            };
            // The same bytes twice (a copy, a symbolic link): one artifact.
            if unreadable.is_none() && c.found.iter().any(|f| f.sha1 == sha1) {
                duplicates += 1;
                continue;
            }
            c.found.push(Found {
                path,
                target,
                sha1,
                len,
                class: None,
                cached: false,
                unreadable,
                refused: None,
            });
        }
        // Where this run writes, decided before any work starts (the test
        // files of `--emit-test DIR` once the bugs are known).
        let mut destinations = Destinations::new(c.found.iter().map(|f| f.path.as_path()))
            .stdout_used_by(reporter.stdout_user());
        for (path, option) in copts.outputs.named() {
            destinations.claim(path, option)?;
        }
        if let Some(dir) = &opts.emit_test {
            if dir.exists() && !dir.is_dir() {
                return Err(Error::OutputUnusable {
                    path: dir.clone(),
                    option: "--emit-test",
                    detail: "with several artifacts it names a directory (one test per bug), and this is a file".into(),
                });
            }
        }
        for f in &mut c.found {
            if let Err(e) = destinations.claim(&f.output(), "the result") {
                f.refused = Some((e.to_string(), e.exit_code()));
            }
        }
        c.destinations = destinations;
        if duplicates > 0 {
            reporter.note(format!(
                "{} with the same bytes as another artifact counted once",
                plural(duplicates, "file")
            ));
        }
        let per_target: Vec<String> = (0..c.targets.len())
            .map(|t| {
                let n = c.found.iter().filter(|f| f.target == t).count();
                format!("{}: {n}", c.targets[t].name)
            })
            .collect();
        reporter.status(
            "Found",
            format!(
                "{} under {} ({})",
                plural(c.found.len(), "artifact"),
                c.place.display(),
                per_target.join(", ")
            ),
        );
        Ok(c)
    }

    /// Builds every target's driver (before any work starts) and takes
    /// its fingerprint; loads `--grammar`.
    fn build(&mut self, reporter: &mut Reporter) -> Result<()> {
        let plan = session::plan_build(self.opts, reporter);
        for t in &mut self.targets {
            let built = session::build_driver(
                self.opts,
                &plan,
                &self.projects[t.project],
                &t.name,
                reporter,
            )?;
            t.binary = built.binary;
            t.kind = built.kind;
            t.key.driver = sha1_file(&t.binary)?;
        }
        if let Some(spec) = &self.opts.grammar {
            self.grammar = Some(session::load_grammar(spec, reporter)?);
        }
        Ok(())
    }

    /// The artifact's record, if it is valid for its driver and settings.
    fn record(&self, f: &Found) -> Option<Record> {
        read_record(&f.record_path()).filter(|r| r.matches(&self.targets[f.target].key, &f.sha1))
    }

    fn write_record(&mut self, f: usize, record: &Record) {
        if let Err(e) = write_record(&self.found[f].record_path(), record) {
            self.record_warning.get_or_insert(e.to_string());
        }
    }

    /// Takes what the records know, reruns the rest (in parallel, each in
    /// a fresh driver) and records it.
    fn classify(&mut self) -> Result<()> {
        for i in 0..self.found.len() {
            if self.found[i].unreadable.is_some() {
                continue;
            }
            if let Some(rec) = self.record(&self.found[i]) {
                self.found[i].class = Some(rec.classification);
                self.found[i].cached = true;
            }
        }
        let mut todo: Vec<usize> = (0..self.found.len())
            .filter(|&i| self.found[i].class.is_none() && self.found[i].unreadable.is_none())
            .collect();
        // The longest first (a hang costs the whole time limit), so that
        // the other workers take the rest meanwhile.
        todo.sort_by_key(|&i| !crate::run::timeouts::named_timeout(&self.found[i].path));
        let mut results: Vec<(usize, Result<Classification>)> = Vec::new();
        let found = &self.found;
        in_parallel(
            self.opts,
            &self.targets,
            self.copts.jobs,
            &todo,
            |pool, &i, _| classify_one(pool, &found[i]),
            |event| {
                if let Event::Done(k, result) = event {
                    results.push((todo[k], result));
                }
            },
        );
        for (i, result) in results {
            let class = match result {
                Ok(class) => class,
                // Gone or replaced since it was found: its own row, like a
                // file that could not be read at all; the rest goes on.
                Err(
                    e @ (Error::ArtifactMissing { .. }
                    | Error::NotAFile { .. }
                    | Error::Read { .. }),
                ) => {
                    self.found[i].unreadable = Some(e.to_string());
                    continue;
                }
                Err(e) => return Err(e),
            };
            self.found[i].class = Some(class.clone());
            let record = match self.record(&self.found[i]) {
                Some(r) => Record {
                    classification: class,
                    ..r
                },
                None => {
                    let (f, t) = (&self.found[i], &self.targets[self.found[i].target]);
                    Record {
                        format_version: RECORD_VERSION,
                        sha1: f.sha1.clone(),
                        len: f.len,
                        target: t.name.clone(),
                        driver: t.key.driver.clone(),
                        settings: t.key.settings.clone(),
                        classification: class,
                        reduced: Vec::new(),
                    }
                }
            };
            self.write_record(i, &record);
        }
        Ok(())
    }

    /// Groups the reproducing artifacts; reports every artifact.
    fn bucket(&self, reporter: &mut Reporter) -> Vec<Bucket> {
        let crashed: Vec<Crashed<'_>> = self
            .found
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                Some(Crashed {
                    index: i,
                    path: &f.path,
                    len: f.len,
                    target: &self.targets[f.target].name,
                    driver: f.target,
                    signature: f.class.as_ref()?.signature()?,
                })
            })
            .collect();
        let buckets = group(self.opts.match_mode, &crashed);
        let mut bucket_of: HashMap<usize, usize> = HashMap::new();
        for (b, bucket) in buckets.iter().enumerate() {
            for &m in &bucket.members {
                bucket_of.insert(m, b + 1);
            }
        }
        for (i, f) in self.found.iter().enumerate() {
            if let Some(error) = &f.unreadable {
                reporter.message(
                    "artifact",
                    json!({
                        "path": path_json(&f.path),
                        "target": self.targets[f.target].name,
                        "status": "unreadable",
                        "error": error,
                    }),
                );
                continue;
            }
            let Some(class) = &f.class else { continue };
            let mut v = json!({
                "path": path_json(&f.path),
                "target": self.targets[f.target].name,
                "sha1": f.sha1,
                "len": f.len,
                "status": class.status(),
                "signature": class.signature(),
                "bucket": bucket_of.get(&i),
                "cached": f.cached,
            });
            match class {
                Classification::Crash { .. } => {}
                Classification::Pass { runs } | Classification::Reject { runs } => {
                    v["runs"] = (*runs).into();
                }
                Classification::Flaky {
                    crashed,
                    runs,
                    detail,
                } => {
                    v["runs"] = (*runs).into();
                    v["crashed"] = (*crashed).into();
                    v["detail"] = detail.as_str().into();
                }
            }
            reporter.message("artifact", v);
        }
        let no_crash = self.count(|c| {
            matches!(
                c,
                Classification::Pass { .. } | Classification::Reject { .. }
            )
        });
        let flaky = self.count(|c| matches!(c, Classification::Flaky { .. }));
        let known = self.found.iter().filter(|f| f.cached).count();
        reporter.status(
            "Classified",
            format!(
                "{}: {} in {}, {} not crash, {flaky} flaky{}",
                plural(self.found.len(), "artifact"),
                if crashed.len() == 1 {
                    "1 crashes".to_owned()
                } else {
                    format!("{} crash", crashed.len())
                },
                plural(buckets.len(), "bucket"),
                if no_crash == 1 {
                    "1 does".to_owned()
                } else {
                    format!("{no_crash} do")
                },
                if known > 0 {
                    format!(" ({known} known from records)")
                } else {
                    String::new()
                }
            ),
        );
        buckets
    }

    /// Groups the buckets into bugs ([`triage::group`]): the same identity
    /// from several targets, or similar stacks.
    fn bugs(&self, buckets: &[Bucket], reporter: &mut Reporter) -> Vec<Bug> {
        let crashes: Vec<triage::Crash> = buckets
            .iter()
            .enumerate()
            .map(|(k, b)| {
                let rep = &self.found[b.representative()];
                let target = &self.targets[rep.target];
                triage::Crash {
                    bucket: k,
                    target: target.name.clone(),
                    signature: b.signature.clone(),
                    details: rep.class.as_ref().and_then(|c| c.details()).cloned(),
                    root: self.projects[target.project].workspace_root.clone(),
                }
            })
            .collect();
        let bugs = triage::group(&crashes, self.opts.match_mode);
        if bugs.len() < buckets.len() {
            reporter.status(
                "Grouped",
                format!(
                    "{} into {}: the same crash site from several targets, or similar stacks",
                    plural(buckets.len(), "bucket"),
                    plural(bugs.len(), "bug")
                ),
            );
        }
        bugs
    }

    /// How many classified artifacts satisfy `pred`.
    fn count(&self, pred: fn(&Classification) -> bool) -> usize {
        self.found
            .iter()
            .filter(|f| f.class.as_ref().is_some_and(pred))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_place_named_in_messages_is_the_common_directory() {
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(
            common_place(&[p("fuzz/artifacts/t")]),
            p("fuzz/artifacts/t")
        );
        assert_eq!(
            common_place(&[p("fuzz/artifacts/t/crash-1"), p("fuzz/artifacts/u")]),
            p("fuzz/artifacts")
        );
        assert_eq!(common_place(&[p("a/x"), p("b/y")]), p("."));
    }
}
