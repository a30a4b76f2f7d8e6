//! Corpus shrinking that keeps coverage: fewer, smaller inputs, no feature
//! lost.
//!
//! A fuzzing corpus grows as the fuzzer finds new coverage, and every entry
//! keeps whatever bytes it happened to carry when it was found. `cargo fuzz
//! cmin` drops entries whose coverage others already have; afl-tmin (in its
//! non-crash mode) shrinks one input while it keeps its execution path. This
//! module does both in one pass, against coverage measured in-process by a
//! coverage build of the driver:
//!
//! 1. measure every entry twice; features seen both times are *stable* (a
//!    target with randomness, e.g. a `HashMap`, has unstable ones, which are
//!    never required); entries that crash or hang are left out and listed;
//! 2. take entries smallest first (as libFuzzer's merge does); an entry that
//!    adds no stable feature to what the kept ones cover is dropped;
//!    otherwise it is shrunk while it still covers the features it is kept
//!    for and never crashes, so the new corpus covers every feature the old
//!    one did. An entry that alone reaches some code is kept as it was
//!    found: it is the corpus's only way in, and fork mode seeds its jobs
//!    mostly with the largest files. It may reach more: a shorter entry often runs an error path no
//!    old entry ran (and under AddressSanitizer, whose shadow checks of the
//!    last bytes of an allocation are basic blocks libFuzzer counts, another
//!    length reaches other blocks); forbidding that left a 60 KB INI corpus
//!    at 25 KB instead of 3.3 KB;
//! 3. the caller writes the result to a new directory and re-measures it in
//!    a fresh driver before anything replaces the old corpus.
//!
//! [`minimize`] is the algorithm over any `measure` function (unit-tested
//! with fake coverage); [`shrink_corpus`] runs it against a real target.

use crate::error::{Error, Result};
use crate::output::write_atomic;
use crate::reduce::shrink::Shrinker;
use crate::reduce::Strategy;
use crate::run::coverage::Features;
use crate::run::outcome::Outcome;
use crate::run::target::RunningTarget;
pub use crate::session::report::{CorpusPhase, CorpusProgress, CorpusSummary};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What one run of an input showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Measure {
    /// Returned (normally or by rejecting the input) with these features.
    Covered(Features),
    /// Crashed, hung or ran out of memory: not corpus material.
    Failed(String),
}

/// Settings for [`minimize`].
#[derive(Debug, Clone, Copy)]
pub struct CorpusOptions {
    /// Shrink the entries that are kept (`false`: only drop redundant ones,
    /// like `cargo fuzz cmin`).
    pub shrink: bool,
    /// The reducer for each entry.
    pub strategy: Strategy,
    /// Shrink by deleting bytes only, never changing a value
    /// ([`Shrinker::deletions_only`]). On by default: lowering values made
    /// zip's shrunk corpus 85 % NUL bytes and slower than `cmin`'s to a
    /// known panic (docs/benchmarks.md, "Does a reduced corpus fuzz better").
    pub deletions_only: bool,
    /// Keep whole an entry that alone reaches some code: a coverage counter,
    /// at any hit count, that no other kept entry touches. Such an entry is
    /// the corpus's only way into that code. libFuzzer's fork mode seeds each
    /// job with √N files drawn towards the end of its merged, smallest-first
    /// list (`SkewTowardsLast`), so shrinking such an entry to the common size
    /// moves it to where it is rarely drawn. On zip, the two entries that
    /// reach the ZIP64 footer went from 319 and 368 bytes to 219, and the
    /// panic behind that footer came later than from `cmin`'s corpus. On by
    /// default (docs/benchmarks.md, "Does a reduced corpus fuzz better").
    pub keep_sole_whole: bool,
    /// Tests per entry.
    pub max_tests_per_input: Option<u64>,
    /// Time for the whole corpus; entries reached after it are kept unshrunk.
    pub max_time: Option<Duration>,
    /// Checked between tests: once it returns `true` (Ctrl-C), shrinking
    /// stops and the remaining entries are kept unshrunk (coverage intact).
    pub stop: fn() -> bool,
    /// Drivers at work at once ([`shrink_corpus`] starts the others as
    /// siblings of the one it is given).
    pub jobs: usize,
}

impl Default for CorpusOptions {
    fn default() -> Self {
        CorpusOptions {
            shrink: true,
            strategy: Strategy::Default,
            deletions_only: true,
            keep_sole_whole: true,
            max_tests_per_input: Some(5_000),
            max_time: None,
            stop: || false,
            jobs: 1,
        }
    }
}

/// One entry of the new corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// Index of the entry it came from.
    pub source: usize,
    pub bytes: Vec<u8>,
    pub features: Features,
}

/// The result of [`minimize`].
#[derive(Debug, Clone, Default)]
pub struct Minimized {
    pub kept: Vec<Kept>,
    /// Stable features of the old corpus (= the new corpus's, by construction).
    pub features: Features,
    /// Entries left out because they crashed or hung, with why.
    pub failed: Vec<(usize, String)>,
    /// Features seen in only one of an entry's two measurements.
    pub unstable_features: usize,
    /// Entries dropped because the kept ones already cover their features.
    pub redundant: usize,
    /// Runs of the target (measurements and shrinking tests).
    pub runs: u64,
    /// Entries kept whole because they alone reach some code
    /// ([`CorpusOptions::keep_sole_whole`]).
    pub kept_whole: usize,
    /// Entries whose shrinking stopped at the test or time budget.
    pub budget_hit: usize,
    /// [`CorpusOptions::stop`] fired: later entries were kept unshrunk.
    pub interrupted: bool,
}

/// Minimizes `entries` under `measure` (see the module docs) with one
/// measuring function: [`minimize_with`] with a single worker.
pub fn minimize<M>(
    entries: &[Vec<u8>],
    measure: M,
    opts: &CorpusOptions,
    progress: impl FnMut(CorpusProgress),
) -> Minimized
where
    M: FnMut(&[u8]) -> Measure + Send,
{
    minimize_with(entries, vec![measure], opts, progress)
}

/// One piece of work for a worker: measure entry `i` (twice), or shrink
/// it while it keeps its `need`.
enum Job {
    Measure(usize),
    Shrink(usize),
}

/// What a worker sends back.
enum Done {
    Measured(usize, Measure, Measure),
    Shrunk(usize, Option<(Vec<u8>, Features)>, bool),
}

/// Minimizes `entries` with one worker per measuring function in
/// `measures` (one driver each; entries are independent, so the work splits
/// without changing what is kept):
///
/// 1. every entry measured twice, by whichever worker is free;
/// 2. smallest first, and of equal sizes the one with more features first
///    (libFuzzer's merge order), an entry is kept when it adds a stable
///    feature to those kept before it (what it adds is its *need*), as
///    libFuzzer's merge does;
/// 3. the kept entries shrunk, largest first (the budget goes where the
///    bytes are), each while it covers its need and never fails; an entry
///    reached after `max_time` or a stop is kept whole, and so is one that
///    alone reaches some counter ([`CorpusOptions::keep_sole_whole`]);
/// 4. the shrunk entries, smallest first, covered again: one whose
///    features (shrinking can reach new ones) the others already have is
///    dropped.
///
/// Every stable feature of the old corpus is covered by the new one.
pub fn minimize_with<M>(
    entries: &[Vec<u8>],
    measures: Vec<M>,
    opts: &CorpusOptions,
    mut progress: impl FnMut(CorpusProgress),
) -> Minimized
where
    M: FnMut(&[u8]) -> Measure + Send,
{
    assert!(!measures.is_empty(), "at least one worker");
    let started = Instant::now();
    let deadline = opts.max_time.map(|t| started + t);
    let mut out = Minimized::default();
    let bytes_before: usize = entries.iter().map(Vec::len).sum();
    // Work goes out on one channel, shared by the workers; they stop when
    // it closes (the coordinating closure below ends, dropping its sender).
    let (job_tx, job_rx) = std::sync::mpsc::channel::<Job>();
    for i in 0..entries.len() {
        job_tx.send(Job::Measure(i)).expect("receiver alive");
    }
    let queue = std::sync::Mutex::new(job_rx);
    // Each entry's need, once known (read by the workers that shrink).
    let needs: std::sync::RwLock<Vec<Option<Features>>> =
        std::sync::RwLock::new(vec![None; entries.len()]);
    let stopped = std::sync::atomic::AtomicBool::new(false);
    let runs = std::sync::atomic::AtomicU64::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<Done>();

    let mut stable: Vec<Option<Features>> = vec![None; entries.len()];
    let mut kept: Vec<Kept> = Vec::new();
    let mut universe = Features::new();
    std::thread::scope(|scope| {
        let job_tx = job_tx;
        for mut measure in measures {
            let tx = tx.clone();
            let (queue, needs, stopped, runs) = (&queue, &needs, &stopped, &runs);
            scope.spawn(move || {
                let mut count = |bytes: &[u8]| {
                    runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    measure(bytes)
                };
                loop {
                    let job = queue.lock().expect("queue").recv();
                    let Ok(job) = job else { break };
                    let done = match job {
                        Job::Measure(i) => {
                            let a = count(&entries[i]);
                            let b = count(&entries[i]);
                            Done::Measured(i, a, b)
                        }
                        Job::Shrink(i) => {
                            let need = needs.read().expect("needs")[i].clone().expect("need set");
                            let remaining =
                                deadline.map(|d| d.saturating_duration_since(Instant::now()));
                            if (opts.stop)() {
                                stopped.store(true, std::sync::atomic::Ordering::Relaxed);
                            }
                            if stopped.load(std::sync::atomic::Ordering::Relaxed)
                                || remaining == Some(Duration::ZERO)
                            {
                                Done::Shrunk(i, None, false)
                            } else {
                                let mut shrinker = Shrinker::new()
                                    .strategy(opts.strategy)
                                    .deletions_only(opts.deletions_only)
                                    .stop_when(opts.stop);
                                if let Some(n) = opts.max_tests_per_input {
                                    shrinker = shrinker.max_tests(n);
                                }
                                if let Some(t) = remaining {
                                    shrinker = shrinker.max_time(t);
                                }
                                let shrunk = shrinker.shrink(&entries[i], |c| match count(c) {
                                    Measure::Covered(f) => f.contains_all(&need),
                                    Measure::Failed(_) => false,
                                });
                                // Measured once more: a result that only passed
                                // by chance (unstable coverage) is not kept.
                                let result = (shrunk.input != entries[i])
                                    .then(|| match count(&shrunk.input) {
                                        Measure::Covered(f) if f.contains_all(&need) => {
                                            Some((shrunk.input, f))
                                        }
                                        _ => None,
                                    })
                                    .flatten();
                                if (opts.stop)() {
                                    stopped.store(true, std::sync::atomic::Ordering::Relaxed);
                                }
                                Done::Shrunk(i, result, shrunk.budget_exhausted)
                            }
                        }
                    };
                    if tx.send(done).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);

        // 1. Stable features of every entry.
        let mut measured = 0;
        while measured < entries.len() {
            let Ok(Done::Measured(i, first, second)) = rx.recv() else {
                unreachable!("only measurements are queued");
            };
            measured += 1;
            progress(CorpusProgress {
                phase: CorpusPhase::Measuring,
                done: measured,
                total: entries.len(),
                kept: 0,
                bytes_before,
                bytes_after: bytes_before,
            });
            match (first, second) {
                (Measure::Covered(a), Measure::Covered(b)) => {
                    let s = a.intersection(&b);
                    out.unstable_features += a.len() + b.len() - 2 * s.len();
                    universe.extend(&s);
                    stable[i] = Some(s);
                }
                (Measure::Failed(why), _) | (_, Measure::Failed(why)) => {
                    out.failed.push((i, why));
                }
            }
        }
        out.failed.sort();
        // 2. Smallest first, of equal sizes the richer first (libFuzzer's
        // `Merger::Merge`: on zip most entries are 219 bytes long, and which
        // of them is kept decides what mutation starts from); keep what adds
        // coverage.
        let mut order: Vec<usize> = (0..entries.len())
            .filter(|&i| stable[i].is_some())
            .collect();
        let richness = |i: usize| stable[i].as_ref().map_or(0, Features::len);
        order.sort_by(|&a, &b| {
            (
                entries[a].len(),
                std::cmp::Reverse(richness(a)),
                &entries[a],
            )
                .cmp(&(
                    entries[b].len(),
                    std::cmp::Reverse(richness(b)),
                    &entries[b],
                ))
        });
        let mut covered = Features::new();
        let mut to_shrink: Vec<usize> = Vec::new();
        {
            let mut needs = needs.write().expect("needs");
            for &i in &order {
                let own = stable[i].as_ref().expect("measured");
                let need = own.difference(&covered);
                if need.is_empty() {
                    out.redundant += 1;
                    continue;
                }
                covered.extend(own);
                needs[i] = Some(need);
                kept.push(Kept {
                    source: i,
                    bytes: entries[i].clone(),
                    features: own.clone(),
                });
                to_shrink.push(i);
            }
        }
        // An entry that alone reaches some counter stays as it was found
        // ([`CorpusOptions::keep_sole_whole`]).
        if opts.shrink && opts.keep_sole_whole {
            let mut holders: std::collections::HashMap<u32, usize> =
                std::collections::HashMap::new();
            for k in &kept {
                for c in k.features.counters() {
                    *holders.entry(c).or_default() += 1;
                }
            }
            let needs = needs.read().expect("needs");
            to_shrink.retain(|&i| {
                let need = needs[i].as_ref().expect("need set");
                let sole = need.counters().any(|c| holders[&c] == 1);
                out.kept_whole += usize::from(sole);
                !sole
            });
        }
        let total = to_shrink.len();
        let mut bytes_after: usize = kept.iter().map(|k| k.bytes.len()).sum();
        progress(CorpusProgress {
            phase: CorpusPhase::Shrinking,
            done: 0,
            total,
            kept: kept.len(),
            bytes_before,
            bytes_after,
        });
        if !opts.shrink || total == 0 {
            return;
        }
        // 3. Largest first.
        to_shrink.sort_by_key(|&i| std::cmp::Reverse(entries[i].len()));
        for &i in &to_shrink {
            job_tx.send(Job::Shrink(i)).expect("workers alive");
        }
        let at: std::collections::HashMap<usize, usize> = kept
            .iter()
            .enumerate()
            .map(|(k, e)| (e.source, k))
            .collect();
        for done in 1..=total {
            let Ok(Done::Shrunk(i, result, budget_hit)) = rx.recv() else {
                unreachable!("only shrinking is queued");
            };
            if budget_hit {
                out.budget_hit += 1;
            }
            if let Some((bytes, features)) = result {
                let k = &mut kept[at[&i]];
                bytes_after -= k.bytes.len();
                bytes_after += bytes.len();
                k.bytes = bytes;
                k.features = features.intersection(&universe);
            }
            progress(CorpusProgress {
                phase: CorpusPhase::Shrinking,
                done,
                total,
                kept: kept.len(),
                bytes_before,
                bytes_after,
            });
        }
    });
    out.interrupted = stopped.into_inner();
    // 4. Cover again with what the shrunk entries reach.
    kept.sort_by(|a, b| (a.bytes.len(), &a.bytes).cmp(&(b.bytes.len(), &b.bytes)));
    let mut covered = Features::new();
    kept.retain(|k| {
        if covered.contains_all(&k.features) {
            out.redundant += 1;
            false
        } else {
            covered.extend(&k.features);
            true
        }
    });
    out.kept = kept;
    out.features = universe;
    out.runs = runs.into_inner();
    out
}

/// The files of a corpus directory as libFuzzer reads them, sorted by path:
/// regular files (and links to them) at any depth, in subdirectories whose
/// names do not start with `.` (libFuzzer's `ListFilesInDirRecursive`).
pub fn read_corpus(dir: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut files: Vec<PathBuf> = Vec::new();
    let walk = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !e.file_type().is_dir()
                || !e.file_name().as_encoded_bytes().starts_with(b".")
        });
    for entry in walk {
        let entry = entry.map_err(|e| Error::ReadDir {
            path: e.path().unwrap_or(dir).to_owned(),
            detail: e.to_string(),
        })?;
        if entry.file_type().is_file() {
            files.push(entry.into_path());
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = crate::input::read_file(&p)?;
            Ok((p, bytes))
        })
        .collect()
}

/// Prefix of the directories a corpus run stages its result in, beside
/// the corpus; each is locked (`flock` on the directory) while its run lives.
const STAGING_PREFIX: &str = ".reduce-crash-corpus-";

/// Removes what killed runs left in `parent`: staging directories no live
/// run holds the lock of.
fn remove_stale_staging(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let stale = e
            .file_name()
            .as_encoded_bytes()
            .starts_with(STAGING_PREFIX.as_bytes())
            && e.file_type().is_ok_and(|t| t.is_dir())
            && lock_dir(&e.path(), false).is_some();
        if stale {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// An exclusive `flock` on directory `dir` (waiting for it with `wait`),
/// held while the returned handle is open.
fn lock_dir(dir: &Path, wait: bool) -> Option<std::fs::File> {
    use std::os::unix::io::AsRawFd;
    let file = std::fs::File::open(dir).ok()?;
    let mode = if wait {
        libc::LOCK_EX
    } else {
        libc::LOCK_EX | libc::LOCK_NB
    };
    loop {
        if unsafe { libc::flock(file.as_raw_fd(), mode) } == 0 {
            return Some(file);
        }
        // Signals interrupt a blocking flock (no SA_RESTART): try again.
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
    }
}

/// Swaps the directories `a` and `b` in one step (`renameat2` with
/// `RENAME_EXCHANGE`), so that a process killed at any moment leaves either
/// the old corpus or the new one in place, never neither. On a file system
/// without it, two renames (a window of microseconds).
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).expect("no NUL in paths");
    let (ca, cb) = (c(a), c(b));
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    if !matches!(err.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS)) {
        return Err(err);
    }
    let aside = b.with_file_name(format!("{}old-{}", STAGING_PREFIX, std::process::id()));
    std::fs::rename(a, &aside)?;
    std::fs::rename(b, a)?;
    std::fs::rename(&aside, b)
}

/// The name libFuzzer gives a corpus file: the SHA-1 of its contents.
pub fn content_name(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}

/// Measures an input on a coverage build.
pub fn measure(target: &mut RunningTarget, bytes: &[u8]) -> Measure {
    match target.coverage(bytes) {
        Ok((Outcome::Pass | Outcome::Reject, Some(f))) => Measure::Covered(f),
        Ok((Outcome::Crash(s), _)) => Measure::Failed(s.to_string()),
        Ok((_, None)) => Measure::Failed("no coverage reported".to_owned()),
        Err(e) => Measure::Failed(e.to_string()),
    }
}

/// The union of the stable features (seen in both of two runs) of every
/// file in `dir`, and how many files failed. One-time start-up work of a
/// fresh driver shows up in whichever input runs first, only once; running
/// each input twice keeps it out, as [`minimize`] does.
pub fn corpus_features(target: &mut RunningTarget, dir: &Path) -> Result<(Features, usize)> {
    let mut all = Features::new();
    let mut failed = 0;
    for (_, bytes) in read_corpus(dir)? {
        match (measure(target, &bytes), measure(target, &bytes)) {
            (Measure::Covered(a), Measure::Covered(b)) => {
                all.extend(&a.intersection(&b));
            }
            _ => failed += 1,
        }
    }
    Ok((all, failed))
}

/// Shrinks the corpus in `input_dir` into `output_dir` (which must not exist
/// or be empty), verifies it, and with `in_place` replaces `input_dir` by it.
pub fn shrink_corpus(
    target: &mut RunningTarget,
    input_dir: &Path,
    output_dir: &Path,
    in_place: bool,
    opts: &CorpusOptions,
    progress: impl FnMut(CorpusProgress),
) -> Result<CorpusSummary> {
    let started = Instant::now();
    let files = read_corpus(input_dir)?;
    if let Ok(mut rd) = std::fs::read_dir(output_dir) {
        if rd.next().is_some() {
            return Err(Error::OutputExists {
                path: output_dir.to_owned(),
            });
        }
    }
    let entries: Vec<Vec<u8>> = files.iter().map(|(_, b)| b.clone()).collect();
    let mut siblings = Vec::new();
    for _ in 1..opts.jobs.clamp(1, entries.len().max(1)) {
        siblings.push(target.sibling()?);
    }
    let mut workers: Vec<&mut RunningTarget> = vec![&mut *target];
    workers.extend(siblings.iter_mut());
    let measures: Vec<_> = workers
        .into_iter()
        .map(|t| {
            // Absorb the driver's one-time start-up coverage before measuring.
            let _ = measure(t, b"");
            move |b: &[u8]| measure(t, b)
        })
        .collect();
    let drivers = measures.len();
    let m = minimize_with(&entries, measures, opts, progress);
    drop(siblings);

    // Staged beside where it goes (the real corpus directory, through any
    // symbolic link, when it replaces it), renamed into place when complete.
    let werr = |path: &Path, source| Error::Write {
        path: path.to_owned(),
        source,
    };
    let destination = if in_place {
        input_dir.canonicalize().map_err(|source| Error::Read {
            path: input_dir.to_owned(),
            source,
        })?
    } else {
        output_dir.to_owned()
    };
    let parent = destination
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_owned();
    remove_stale_staging(&parent);
    let staging = tempfile::Builder::new()
        .prefix(STAGING_PREFIX)
        .tempdir_in(&parent)
        .map_err(|e| werr(&parent, e))?;
    let _held = lock_dir(staging.path(), true);
    for k in &m.kept {
        write_atomic(&staging.path().join(content_name(&k.bytes)), &k.bytes)?;
    }
    // Verify in a fresh driver: nothing carried over from shrinking.
    target.restart();
    let _ = measure(target, b"");
    let (after, failed_after) = corpus_features(target, staging.path())?;
    if !after.contains_all(&m.features) || failed_after > 0 {
        return Err(Error::CoverageLost {
            dir: input_dir.to_owned(),
            before: m.features.len(),
            after: after.len(),
            missing: m.features.difference(&after).len(),
        });
    }
    let final_dir = if in_place {
        // One atomic swap; the old corpus is then where the staging
        // directory was, and goes (a later run removes it if this one is
        // killed first).
        exchange(&destination, staging.path()).map_err(|e| werr(&destination, e))?;
        std::fs::remove_dir_all(staging.path()).map_err(|e| werr(staging.path(), e))?;
        input_dir.to_owned()
    } else {
        let staged = staging.keep();
        if output_dir.exists() {
            std::fs::remove_dir(output_dir).map_err(|e| werr(output_dir, e))?;
        }
        std::fs::rename(&staged, output_dir).map_err(|e| werr(output_dir, e))?;
        output_dir.to_owned()
    };
    Ok(CorpusSummary {
        target: target.name().to_owned(),
        input_dir: input_dir.to_owned(),
        output_dir: final_dir,
        files_before: files.len(),
        bytes_before: entries.iter().map(Vec::len).sum(),
        files_after: m.kept.len(),
        bytes_after: m.kept.iter().map(|k| k.bytes.len()).sum(),
        features_before: m.features.len(),
        features_after: after.len(),
        redundant: m.redundant,
        failed: m
            .failed
            .iter()
            .map(|(i, why)| (files[*i].0.clone(), why.clone()))
            .collect(),
        unstable_features: m.unstable_features,
        budget_hit: m.budget_hit,
        kept_whole: m.kept_whole,
        runs: m.runs,
        elapsed_secs: started.elapsed().as_secs_f64(),
        replaced: in_place,
        interrupted: m.interrupted,
        drivers,
    })
}

/// `cargo reduce-crash --corpus [DIR]`.
#[derive(Debug, Clone)]
pub struct CorpusCommand {
    /// The corpus directory; default `<fuzz dir>/corpus/<target>`.
    pub dir: Option<PathBuf>,
    pub in_place: bool,
    pub shrink: bool,
}

/// Runs `--corpus` for the CLI: finds the project and target, builds the
/// coverage driver, shrinks, verifies, reports progress to `reporter`.
pub fn run(
    opts: &crate::session::Options,
    cmd: &CorpusCommand,
    reporter: &mut crate::session::report::Reporter,
) -> Result<CorpusSummary> {
    use crate::run::project::FuzzProject;
    let mut locate = opts.locate.clone();
    locate.artifact = cmd.dir.clone();
    let project = FuzzProject::locate(&locate)?;
    let (name, dir) = match (&cmd.dir, &opts.fuzz_target) {
        (Some(dir), explicit) => {
            // A corpus directory is named after its target (corpus/<target>/).
            let name = project
                .resolve_target(explicit.as_deref(), &dir.join("entry"))?
                .name
                .clone();
            (name, dir.clone())
        }
        (None, Some(name)) => {
            project.target(name)?;
            (name.clone(), project.dir.join("corpus").join(name))
        }
        (None, None) => {
            return Err(Error::TargetNotInferred {
                path: project.dir.join("corpus"),
                known: project.target_names(),
            })
        }
    };
    if !dir.is_dir() {
        return Err(Error::CorpusMissing { path: dir });
    }
    let output = opts.output.clone().unwrap_or_else(|| {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "corpus".to_owned());
        dir.with_file_name(format!("{name}.reduced"))
    });
    if output.canonicalize().ok() == dir.canonicalize().ok() {
        return Err(Error::OutputIsInput {
            path: output,
            option: "-o/--output",
        });
    }
    reporter.status(
        "Building",
        format!("coverage driver for fuzz target `{name}`"),
    );
    let target_opts = crate::run::target::TargetOptions {
        build: opts.build.clone(),
        coverage: true,
        timeout: opts.timeout.unwrap_or(Duration::from_secs(1)),
        rss_limit_mb: opts.rss_limit_mb,
        malloc_limit_mb: opts.malloc_limit_mb,
    };
    let mut target = RunningTarget::start(project, &name, &target_opts)?;
    let strategy = match opts.strategy {
        crate::session::StrategyChoice::Bytes(s) => s,
        _ if target.typed() => Strategy::Choices,
        _ => Strategy::Default,
    };
    let corpus_opts = CorpusOptions {
        shrink: cmd.shrink,
        strategy,
        deletions_only: CorpusOptions::default().deletions_only,
        keep_sole_whole: CorpusOptions::default().keep_sole_whole,
        max_tests_per_input: opts
            .budget
            .max_tests
            .or(CorpusOptions::default().max_tests_per_input),
        max_time: opts.budget.max_time,
        stop: crate::interrupt::requested,
        // One driver per core unless -j says otherwise.
        jobs: if opts.auto_drivers {
            std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
        } else {
            opts.drivers.max(1)
        },
    };
    reporter.status(
        "Shrinking",
        format!(
            "corpus {} ({}) into {}",
            dir.display(),
            if cmd.shrink {
                strategy.name()
            } else {
                "drop redundant entries only"
            },
            output.display()
        ),
    );
    let started = Instant::now();
    shrink_corpus(
        &mut target,
        &dir,
        &output,
        cmd.in_place,
        &corpus_opts,
        |p| {
            reporter.corpus_progress(&p, started.elapsed());
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fake coverage: feature `b` for every distinct byte value `b`, plus
    /// feature 1000 + n for a run of n equal bytes (n ≤ 3); `!` crashes.
    fn fake(bytes: &[u8]) -> Measure {
        if bytes.contains(&b'!') {
            return Measure::Failed("panic".into());
        }
        let mut f: Vec<u32> = bytes.iter().map(|&b| u32::from(b)).collect();
        for w in bytes.windows(2) {
            if w[0] == w[1] {
                f.push(1002);
            }
        }
        for w in bytes.windows(3) {
            if w[0] == w[1] && w[1] == w[2] {
                f.push(1003);
            }
        }
        Measure::Covered(Features::from_unsorted(f))
    }

    /// The defaults, except that an entry alone reaching some counter is
    /// shrunk too: [`fake`] gives every byte value its own feature, so most
    /// of these tests' entries alone reach some counter.
    fn shrink_all() -> CorpusOptions {
        CorpusOptions {
            keep_sole_whole: false,
            ..CorpusOptions::default()
        }
    }

    fn union(entries: &[Vec<u8>]) -> Features {
        let mut all = Features::new();
        for e in entries {
            if let Measure::Covered(f) = fake(e) {
                all.extend(&f);
            }
        }
        all
    }

    #[test]
    fn keeps_total_coverage_with_fewer_bytes() {
        let entries: Vec<Vec<u8>> = vec![
            b"hello world".to_vec(),
            b"hello".to_vec(),
            b"zzz and more zzz".to_vec(),
            b"crash!".to_vec(),
            b"ab".to_vec(),
            b"ba".to_vec(),
        ];
        let m = minimize(&entries, fake, &shrink_all(), |_| {});
        let kept: Vec<Vec<u8>> = m.kept.iter().map(|k| k.bytes.clone()).collect();
        assert!(union(&kept).contains_all(&union(&entries)));
        assert_eq!(m.features, union(&entries));
        let before: usize = entries.iter().map(Vec::len).sum();
        let after: usize = kept.iter().map(Vec::len).sum();
        assert!(after < before / 2, "{after} of {before} bytes");
        assert_eq!(m.failed, vec![(3, "panic".to_owned())]);
        assert!(m.redundant >= 1, "`ba` adds nothing once `ab` is kept");
        assert!(kept.iter().any(|k| k.windows(3).any(|w| w == b"zzz")));
        // By default an entry is only ever shortened, its bytes' values kept.
        for k in &m.kept {
            assert!(
                crate::reduce::shrink::is_subsequence(&k.bytes, &entries[k.source]),
                "{:?} from {:?}",
                k.bytes,
                entries[k.source]
            );
        }
    }

    #[test]
    fn without_shrinking_it_only_drops_redundant_entries() {
        let entries: Vec<Vec<u8>> = vec![b"abc".to_vec(), b"ab".to_vec(), b"cab".to_vec()];
        let opts = CorpusOptions {
            shrink: false,
            ..CorpusOptions::default()
        };
        let m = minimize(&entries, fake, &opts, |_| {});
        // Smallest first: `ab`, then `abc` adds `c`; `cab` adds nothing.
        let kept: Vec<&[u8]> = m.kept.iter().map(|k| k.bytes.as_slice()).collect();
        assert_eq!(kept, vec![&b"ab"[..], &b"abc"[..]]);
        assert_eq!(m.redundant, 1);
    }

    #[test]
    fn of_equal_sizes_the_richer_entry_is_kept() {
        // `aabb` (a, b, a pair) sorts first by bytes; `aabc` has those and c.
        let entries: Vec<Vec<u8>> = vec![b"aabb".to_vec(), b"aabc".to_vec()];
        let opts = CorpusOptions {
            shrink: false,
            ..CorpusOptions::default()
        };
        let m = minimize(&entries, fake, &opts, |_| {});
        let kept: Vec<&[u8]> = m.kept.iter().map(|k| k.bytes.as_slice()).collect();
        assert_eq!(kept, vec![&b"aabc"[..]]);
        assert_eq!(m.redundant, 1);
    }

    #[test]
    fn a_stop_request_keeps_the_rest_unshrunk_with_full_coverage() {
        let entries: Vec<Vec<u8>> = vec![b"hello world".to_vec(), b"zzz and more zzz".to_vec()];
        let opts = CorpusOptions {
            stop: || true,
            ..CorpusOptions::default()
        };
        let m = minimize(&entries, fake, &opts, |_| {});
        assert!(m.interrupted);
        let kept: Vec<Vec<u8>> = m.kept.iter().map(|k| k.bytes.clone()).collect();
        assert!(kept.iter().all(|k| entries.contains(k)), "nothing shrunk");
        assert!(union(&kept).contains_all(&union(&entries)));
    }

    #[test]
    fn workers_split_the_work_and_keep_every_feature() {
        let entries: Vec<Vec<u8>> = (0..40u8)
            .map(|i| {
                let mut e = vec![b'a' + i % 26; 3 + usize::from(i % 7)];
                e.extend(b"padding that goes");
                e
            })
            .collect();
        let one = CorpusOptions {
            shrink: false,
            ..CorpusOptions::default()
        };
        let alone = minimize(&entries, fake, &one, |_| {});
        let split = minimize_with(&entries, vec![fake, fake, fake], &one, |_| {});
        let bytes = |m: &Minimized| m.kept.iter().map(|k| k.bytes.clone()).collect::<Vec<_>>();
        assert_eq!(bytes(&alone), bytes(&split), "the same entries kept");
        let mut shrunk = 0;
        let mut seen = Vec::new();
        let m = minimize_with(&entries, vec![fake, fake], &CorpusOptions::default(), |p| {
            seen.push(p.phase);
            if p.phase == CorpusPhase::Shrinking {
                shrunk = p.done;
            }
        });
        assert!(union(&bytes(&m)).contains_all(&union(&entries)));
        assert_eq!(m.features, union(&entries));
        assert_eq!(shrunk, alone.kept.len(), "every kept entry shrunk");
        assert_eq!(seen.first(), Some(&CorpusPhase::Measuring));
        let after: usize = m.kept.iter().map(|k| k.bytes.len()).sum();
        assert!(after * 4 < entries.iter().map(Vec::len).sum::<usize>());
    }

    #[test]
    fn keeps_every_feature_of_the_entry_it_stands_for() {
        // Shrinking `xxxx` to `xx` would lose 1003; to `x` loses 1002 too.
        // Nothing smaller than `xxx` keeps {x, 1002, 1003}.
        let entries = vec![b"xxxxxxxx".to_vec()];
        let m = minimize(&entries, fake, &shrink_all(), |_| {});
        assert_eq!(m.kept[0].bytes, b"xxx");
    }

    #[test]
    fn an_entry_that_alone_reaches_some_code_is_kept_whole() {
        // Real features: counter × 8 + bucket. One counter per byte value,
        // its bucket the value's count (at most 7).
        let counted = |bytes: &[u8]| {
            let f = (0..=255u8)
                .filter_map(|b| {
                    let n = bytes.iter().filter(|&&x| x == b).count().min(7) as u32;
                    (n > 0).then_some(u32::from(b) * 8 + n)
                })
                .collect();
            Measure::Covered(Features::from_unsorted(f))
        };
        // `aab` is kept for a count of `a` that others reach once: shrunk.
        // `abx` is the only entry that reaches `x`: kept as it was found.
        let entries = vec![b"ab".to_vec(), b"aab".to_vec(), b"abx".to_vec()];
        let m = minimize(&entries, counted, &CorpusOptions::default(), |_| {});
        let mut kept: Vec<&[u8]> = m.kept.iter().map(|k| k.bytes.as_slice()).collect();
        kept.sort();
        assert_eq!(kept, vec![&b"aa"[..], b"ab", b"abx"]);
        assert_eq!(m.kept_whole, 1);
        // Without the rule, `abx` is shrunk to `x` like any other entry.
        let m = minimize(&entries, counted, &shrink_all(), |_| {});
        let mut kept: Vec<&[u8]> = m.kept.iter().map(|k| k.bytes.as_slice()).collect();
        kept.sort();
        assert_eq!(kept, vec![&b"aa"[..], b"ab", b"x"]);
        assert_eq!(m.kept_whole, 0);
    }

    #[test]
    fn unstable_features_are_never_required() {
        let mut flip = false;
        let flaky = |b: &[u8]| {
            flip = !flip;
            match fake(b) {
                Measure::Covered(mut f) => {
                    if flip {
                        f.extend(&Features::from_unsorted(vec![5000]));
                    }
                    Measure::Covered(f)
                }
                other => other,
            }
        };
        let entries = vec![b"aaab".to_vec()];
        let m = minimize(&entries, flaky, &CorpusOptions::default(), |_| {});
        assert_eq!(m.unstable_features, 1);
        assert!(!m.features.contains(5000));
    }
}
