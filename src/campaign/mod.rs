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
use crate::output::{check_output, default_output};
use crate::run::driver::BuildKind;
use crate::run::exec::Executor;
use crate::run::outcome::{Outcome, Signature};
use crate::run::project::{find_manifest, FuzzProject, Locate};
use crate::session::report::{path_json, Reporter, Summary};
use crate::session::{self, Options, ReduceJob};
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod bucket;
pub mod corpus;
mod discover;
mod record;

pub use bucket::{bucket_key, group, Bucket, BucketKey, Crashed};
pub use discover::{discover, is_artifact_name, is_ignored_name, Discovered};
pub use record::{
    read_record, record_path, settings_key, sha1_file, sha1_hex, strategy_key, write_record,
    Classification, Record, RecordKey, ReducedRecord,
};

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
pub const RECORD_VERSION: u32 = 2;

/// What the directory mode adds to [`Options`].
#[derive(Debug, Clone)]
pub struct CampaignOptions {
    /// Artifact files and directories.
    pub paths: Vec<PathBuf>,
    /// Every target's `artifacts/<target>/` directory of the project.
    pub all: bool,
    /// Reduce every reproducing artifact, not one per bucket.
    pub each: bool,
    /// Drivers at work at the same time (rerunning and reducing).
    pub jobs: usize,
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
}

/// One worker's drivers, started on first use.
struct Pool<'a> {
    opts: &'a Options,
    targets: &'a [Target],
    running: HashMap<usize, Executor>,
}

impl Pool<'_> {
    fn get(&mut self, target: usize) -> Result<&mut Executor> {
        if !self.running.contains_key(&target) {
            let exec = session::start_driver(self.opts, &self.targets[target].binary)?;
            self.running.insert(target, exec);
        }
        Ok(self.running.get_mut(&target).expect("just started"))
    }
}

/// Runs `work` on every task with up to `jobs` threads, each with its own
/// drivers; `done` sees each result on the calling thread as it arrives (so
/// only that thread reports and writes records). Stops handing out tasks
/// once interrupted.
fn in_parallel<T: Sync, R: Send>(
    opts: &Options,
    targets: &[Target],
    jobs: usize,
    tasks: &[T],
    work: impl Fn(&mut Pool<'_>, &T) -> R + Sync,
    mut done: impl FnMut(usize, R),
) {
    if tasks.is_empty() {
        return;
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, tasks.len()) {
            let tx = tx.clone();
            let (next, work) = (&next, &work);
            scope.spawn(move || {
                let mut pool = Pool {
                    opts,
                    targets,
                    running: HashMap::new(),
                };
                loop {
                    if interrupt::requested() {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= tasks.len() {
                        break;
                    }
                    let result = work(&mut pool, &tasks[i]);
                    if tx.send((i, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, result) in rx {
            done(i, result);
        }
    });
}

/// Reruns one artifact in a fresh driver.
fn classify_one(pool: &mut Pool<'_>, found: &Found) -> Result<Classification> {
    let data = session::read_artifact(&found.path)?;
    let opts = pool.opts;
    let exec = pool.get(found.target)?;
    exec.set_value_cache(false);
    // Every original runs in a fresh process, as when reduced alone.
    exec.restart();
    Ok(Classification::from_reproduction(
        session::check_reproduces(
            opts,
            exec,
            &data,
            crate::run::timeouts::named_timeout(&found.path),
        )?,
    ))
}

/// Reduces one reproducing artifact with a worker's driver.
fn reduce_one(
    pool: &mut Pool<'_>,
    projects: &[FuzzProject],
    grammar: Option<&Grammar>,
    found: &Found,
) -> Result<Summary> {
    let Some(Classification::Crash {
        signature,
        slowest_secs,
    }) = &found.class
    else {
        unreachable!("only reproducing artifacts are reduced");
    };
    let opts = pool.opts;
    let data = session::read_artifact(&found.path)?;
    let output = found.output();
    check_output(&found.path, &output)?;
    let tree = match (grammar, &opts.grammar) {
        (Some(g), Some(spec)) => Some(session::parse_artifact(g, spec, &found.path, &data)?),
        _ => None,
    };
    let target = &pool.targets[found.target];
    let (project, name, kind) = (
        &projects[target.project],
        target.name.clone(),
        target.kind.clone(),
    );
    let exec = pool.get(found.target)?;
    let job = ReduceJob {
        project,
        target: &name,
        build: &kind,
        artifact: &found.path,
        data: &data,
        signature: signature.clone(),
        slowest: Duration::from_secs_f64(*slowest_secs),
        output,
        parsed: grammar.zip(tree.as_ref()),
    };
    session::reduce_reproduced(opts, exec, job, None)
}

/// The result of a directory run, for the exit code.
#[derive(Debug)]
pub struct CampaignReport {
    pub buckets: usize,
    pub interrupted: bool,
    /// Why the run failed as a whole, if it did (the table was shown).
    pub error: Option<Error>,
}

impl CampaignReport {
    pub fn exit_code(&self) -> i32 {
        match (&self.error, self.interrupted) {
            (Some(e), _) => e.exit_code(),
            (None, true) => exit_code::INTERRUPTED,
            (None, false) => exit_code::SUCCESS,
        }
    }
}

/// `path` relative to `cwd` when it is inside it.
fn relative(path: &Path, cwd: &Path) -> PathBuf {
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_owned());
    path.strip_prefix(&cwd)
        .map(Path::to_owned)
        .unwrap_or_else(|_| path.to_owned())
}

/// The one path that names what was searched, for messages: the path
/// given, or the deepest directory holding all of them.
fn common_place(paths: &[PathBuf]) -> PathBuf {
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
fn short_signature(sig: &Signature, cwd: &Path) -> String {
    shorten(&sig.to_string(), cwd)
}

/// `text` with paths inside `cwd` made relative.
fn shorten(text: &str, cwd: &Path) -> String {
    let prefix = format!(
        "{}/",
        cwd.canonicalize()
            .unwrap_or_else(|_| cwd.to_owned())
            .display()
    );
    text.replace(&prefix, "")
}

/// `n thing` or `n things`.
fn plural(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("{n} {thing}")
    } else {
        format!("{n} {thing}s")
    }
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
    let mut c = Campaign::find(opts, copts, reporter)?;
    c.build(reporter)?;
    c.classify()?;
    let buckets = c.bucket(reporter);
    let results = c.reduce(&buckets, reporter);
    Ok(c.finish(&buckets, &results, started, reporter))
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
        for (given, option) in [
            (opts.output.is_some(), "-o/--output"),
            (opts.emit_test.is_some(), "--emit-test"),
        ] {
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
            let (sha1, len, unreadable) = match std::fs::read(&path) {
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
            });
        }
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
        let todo: Vec<usize> = (0..self.found.len())
            .filter(|&i| self.found[i].class.is_none() && self.found[i].unreadable.is_none())
            .collect();
        let mut results: Vec<(usize, Result<Classification>)> = Vec::new();
        let found = &self.found;
        in_parallel(
            self.opts,
            &self.targets,
            self.copts.jobs,
            &todo,
            |pool, &i| classify_one(pool, &found[i]),
            |k, result| results.push((todo[k], result)),
        );
        for (i, result) in results {
            let class = result?;
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

    /// How many classified artifacts satisfy `pred`.
    fn count(&self, pred: fn(&Classification) -> bool) -> usize {
        self.found
            .iter()
            .filter(|f| f.class.as_ref().is_some_and(pred))
            .count()
    }

    /// Reduces each bucket's representative (every member with `--each`)
    /// unless its record has the result, `-j` at a time; reports each
    /// bucket as it finishes and records complete results.
    fn reduce(
        &mut self,
        buckets: &[Bucket],
        reporter: &mut Reporter,
    ) -> Vec<Vec<(usize, Reduction)>> {
        let strategy = strategy_key(self.opts);
        let mut checks = Pool {
            opts: self.opts,
            targets: &self.targets,
            running: HashMap::new(),
        };
        let mut results: Vec<Vec<(usize, Reduction)>> = Vec::with_capacity(buckets.len());
        let mut tasks: Vec<(usize, usize)> = Vec::new(); // (bucket, artifact)
        for (b, bucket) in buckets.iter().enumerate() {
            let members = if self.copts.each {
                &bucket.members[..]
            } else {
                &bucket.members[..1]
            };
            let mut known = Vec::new();
            for &m in members {
                let f = &self.found[m];
                let recorded = self.record(f).and_then(|r| {
                    r.valid_output(&f.dir(), &f.output_name(), &strategy)
                        .cloned()
                });
                // A record is only a claim: the output must still crash the
                // same way, run alone in a fresh process.
                match recorded {
                    Some(r) if self.output_reproduces(&mut checks, m) => {
                        known.push((m, Reduction::Cached(r)))
                    }
                    _ => tasks.push((b, m)),
                }
            }
            results.push(known);
        }
        drop(checks);
        let mut pending: Vec<usize> = vec![0; buckets.len()];
        for &(b, _) in &tasks {
            pending[b] += 1;
        }
        // Buckets that are entirely known are done already.
        for (b, n) in pending.iter().enumerate() {
            if *n == 0 {
                self.show_bucket(buckets, b, &results[b], reporter);
            }
        }
        if !tasks.is_empty() && !interrupt::requested() {
            let jobs = self.copts.jobs.clamp(1, tasks.len());
            let open = pending.iter().filter(|&&n| n > 0).count();
            reporter.status(
                "Reducing",
                format!(
                    "{} in {} with {} (identity: {})",
                    plural(tasks.len(), "artifact"),
                    plural(open, "bucket"),
                    plural(jobs, "job"),
                    self.opts.match_mode.name()
                ),
            );
        }
        let mut record_warning = None;
        {
            let this = &*self;
            let finished = |k: usize, result: Result<Summary>| {
                let (b, m) = tasks[k];
                // Records are written on this thread only.
                if let Ok(summary) = &result {
                    if let Err(e) = this.record_reduction(m, summary, &strategy) {
                        record_warning.get_or_insert(e.to_string());
                    }
                }
                results[b].push((m, Reduction::from_result(result)));
                pending[b] -= 1;
                if pending[b] == 0 {
                    this.show_bucket(buckets, b, &results[b], reporter);
                }
            };
            in_parallel(
                this.opts,
                &this.targets,
                this.copts.jobs,
                &tasks,
                |pool, &(_, m)| {
                    reduce_one(pool, &this.projects, this.grammar.as_ref(), &this.found[m])
                },
                finished,
            );
        }
        if let Some(w) = record_warning {
            self.record_warning.get_or_insert(w);
        }
        // Whatever never ran (interrupted) is listed too.
        for &(b, m) in &tasks {
            if !results[b].iter().any(|(x, _)| *x == m) {
                results[b].push((m, Reduction::NotRun));
                pending[b] -= 1;
                if pending[b] == 0 {
                    self.show_bucket(buckets, b, &results[b], reporter);
                }
            }
        }
        results
    }

    /// Whether artifact `m`'s existing output crashes with its signature
    /// when run alone in a fresh process.
    fn output_reproduces(&self, pool: &mut Pool<'_>, m: usize) -> bool {
        let f = &self.found[m];
        let Some(Classification::Crash {
            signature,
            slowest_secs,
        }) = &f.class
        else {
            return false;
        };
        let Ok(bytes) = std::fs::read(f.output()) else {
            return false;
        };
        let Ok(exec) = pool.get(f.target) else {
            return false;
        };
        exec.set_value_cache(false);
        exec.set_timeout(session::test_timeout(
            self.opts,
            signature,
            Duration::from_secs_f64(*slowest_secs),
        ));
        exec.restart();
        matches!(exec.run(&bytes).map(|r| r.outcome),
            Ok(Outcome::Crash(ref s)) if self.opts.match_mode.matches(signature, s))
    }

    /// Adds a complete reduction to the artifact's record (an interrupted
    /// or budget-limited one only removes the stale entry: the file changed).
    fn record_reduction(&self, m: usize, summary: &Summary, strategy: &str) -> Result<()> {
        let f = &self.found[m];
        let Some(mut record) = self.record(f) else {
            return Ok(());
        };
        record.reduced.retain(|r| r.output != f.output_name());
        if !summary.interrupted && !summary.budget_exhausted {
            if let Ok(bytes) = std::fs::read(&summary.output) {
                record.reduced.push(ReducedRecord {
                    output: f.output_name(),
                    sha1: sha1_hex(&bytes),
                    len: bytes.len() as u64,
                    signature: summary.signature.clone(),
                    strategy: strategy.to_owned(),
                    verified_fresh: summary.verified_fresh,
                });
            }
        }
        write_record(&f.record_path(), &record)
    }

    /// One status line (or warning) and one JSON message for a finished bucket.
    fn show_bucket(
        &self,
        buckets: &[Bucket],
        b: usize,
        results: &[(usize, Reduction)],
        reporter: &mut Reporter,
    ) {
        let cwd = &self.opts.locate.cwd;
        let bucket = &buckets[b];
        let rep = &self.found[bucket.representative()];
        let line = bucket_line(b, buckets.len(), bucket, rep, results, &self.targets, cwd);
        match &line.failure {
            Some(message) => reporter.warn(format!(
                "bucket {}/{} ({}) could not be reduced: {message}",
                b + 1,
                buckets.len(),
                short_signature(&bucket.signature, cwd)
            )),
            None => reporter.status(line.verb, &line.text),
        }
        let output_sha1 = results
            .iter()
            .find(|(m, _)| *m == bucket.representative())
            .and_then(|(_, r)| match r {
                Reduction::Cached(rec) => Some(rec.sha1.clone()),
                Reduction::Done(s) => std::fs::read(&s.output).ok().map(|b| sha1_hex(&b)),
                _ => None,
            });
        let reductions: Vec<serde_json::Value> = results
            .iter()
            .map(|(m, r)| reduction_json(&self.found[*m], r))
            .collect();
        reporter.message(
            "bucket",
            json!({
                "bucket": b + 1,
                "target": bucket.key.target,
                "signature": bucket.signature,
                "artifacts": bucket.members.len(),
                "members": bucket.members.iter().map(|&m| path_json(&self.found[m].path)).collect::<Vec<_>>(),
                "representative": path_json(&rep.path),
                "original_len": rep.len,
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

    /// The table, the verdict and the closing JSON message.
    fn finish(
        self,
        buckets: &[Bucket],
        results: &[Vec<(usize, Reduction)>],
        started: Instant,
        reporter: &mut Reporter,
    ) -> CampaignReport {
        let cwd = &self.opts.locate.cwd;
        if let Some(w) = &self.record_warning {
            reporter.warn(format!("results will not be reused by the next run: {w}"));
        }
        let lines: Vec<BucketLine> = buckets
            .iter()
            .enumerate()
            .map(|(b, bucket)| {
                let rep = &self.found[bucket.representative()];
                bucket_line(
                    b,
                    buckets.len(),
                    bucket,
                    rep,
                    &results[b],
                    &self.targets,
                    cwd,
                )
            })
            .collect();
        reporter.text(&table(buckets, &lines, &self.found, cwd));
        let unclassified = self
            .found
            .iter()
            .any(|f| f.class.is_none() && f.unreadable.is_none());
        let unreadable = self.found.iter().filter(|f| f.unreadable.is_some()).count();
        let interrupted = interrupt::requested() || unclassified;
        let failed: Vec<&BucketLine> = lines.iter().filter(|l| l.failure.is_some()).collect();
        let pass = self.count(|c| matches!(c, Classification::Pass { .. }));
        let reject = self.count(|c| matches!(c, Classification::Reject { .. }));
        let flaky = self.count(|c| matches!(c, Classification::Flaky { .. }));
        let error = if let Some(first) = failed.first() {
            Some(Error::BucketsFailed {
                path: self.place.clone(),
                failed: failed.len(),
                buckets: buckets.len(),
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
            None
        };
        let report = CampaignReport {
            buckets: buckets.len(),
            interrupted,
            error,
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
                "reduced": count_status("reduced"),
                "cached": count_status("cached"),
                "failed": failed.len(),
                "interrupted_buckets": count_status("interrupted"),
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
    fn from_result(result: Result<Summary>) -> Reduction {
        match result {
            Ok(summary) => Reduction::Done(Box::new(summary)),
            Err(e) => Reduction::Failed {
                message: e.to_string(),
                code: e.exit_code(),
            },
        }
    }
}

/// One bucket's outcome, for its status line, JSON message and table row.
struct BucketLine {
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
}

fn bucket_line(
    b: usize,
    total: usize,
    bucket: &Bucket,
    rep: &Found,
    results: &[(usize, Reduction)],
    targets: &[Target],
    cwd: &Path,
) -> BucketLine {
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
    let status = if failure.is_some() {
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
    let result = results
        .iter()
        .find(|(m, _)| *m == bucket.representative())
        .and_then(|(_, r)| match r {
            Reduction::Cached(rec) => Some((rec.len, rep.dir().join(&rec.output))),
            Reduction::Done(s) => Some((s.reduced_len as u64, s.output.clone())),
            _ => None,
        });
    let size = match &result {
        Some((len, _)) => format!("{} → {len} bytes", rep.len),
        None => format!("{} bytes", rep.len),
    };
    let verb = match status {
        "cached" => "Cached",
        "interrupted" => "Interrupted",
        _ => "Reduced",
    };
    let text = format!(
        "bucket {}/{total} of `{}` ({} artifact{}): {size}{}: {}",
        b + 1,
        targets[rep.target].name,
        bucket.members.len(),
        if bucket.members.len() == 1 { "" } else { "s" },
        if status == "reduced" {
            format!(" in {elapsed_secs:.2}s")
        } else {
            String::new()
        },
        short_signature(&bucket.signature, cwd)
    );
    BucketLine {
        status,
        verb,
        text,
        code: failure.as_ref().map_or(0, |f| f.1),
        failure: failure.map(|f| f.0),
        tests_executed,
        elapsed_secs,
        result,
    }
}

fn reduction_json(f: &Found, r: &Reduction) -> serde_json::Value {
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
    }
    v
}

/// The summary table: one row per bucket, then one per artifact that does
/// not reproduce (or is flaky).
fn table(buckets: &[Bucket], lines: &[BucketLine], found: &[Found], cwd: &Path) -> String {
    let mut rows: Vec<[String; 7]> = vec![[
        "bucket".into(),
        "artifacts".into(),
        "smallest".into(),
        "reduced".into(),
        "status".into(),
        "path".into(),
        "signature".into(),
    ]];
    for (b, (bucket, line)) in buckets.iter().zip(lines).enumerate() {
        let rep = &found[bucket.representative()];
        let (reduced, path) = match &line.result {
            Some((len, out)) => (len.to_string(), out.display().to_string()),
            None => ("-".into(), rep.path.display().to_string()),
        };
        rows.push([
            (b + 1).to_string(),
            bucket.members.len().to_string(),
            rep.len.to_string(),
            reduced,
            line.status.into(),
            path,
            short_signature(&bucket.signature, cwd),
        ]);
    }
    for f in found {
        if let Some(error) = &f.unreadable {
            rows.push([
                "-".into(),
                "1".into(),
                "-".into(),
                "-".into(),
                "unreadable".into(),
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
            "1".into(),
            f.len.to_string(),
            "-".into(),
            status.into(),
            f.path.display().to_string(),
            shorten(&class.describe(), cwd),
        ]);
    }
    let mut widths = [0usize; 7];
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
                0..=3 => line.push_str(&format!("{}{cell}  ", " ".repeat(pad))),
                6 => line.push_str(cell),
                _ => line.push_str(&format!("{cell}{}  ", " ".repeat(pad))),
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
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
