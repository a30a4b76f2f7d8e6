//! Several drivers on one list of candidates (`-j N` for one artifact).
//!
//! A [`Spread`] is one list, shared: each driver takes the next contiguous
//! chunk of it ([`Spread::take`]), runs it up to its first interesting
//! candidate, and reports it ([`Spread::finish`]). The first driver runs in
//! the calling thread; every other one is a [`Helper`], a thread that owns
//! its executor and works on the lists it is handed, one after another.
//!
//! The caller waits only until the answer is *settled* ([`Spread::settled`]):
//! the chunks from the start of the list are finished up to one that found
//! an interesting candidate (or up to the end). A helper still running a
//! chunk past the answer is not waited for: it finishes it while the first
//! driver goes on with the next list, and what it ran is collected later
//! ([`Spread::take_finished`]) and counted as discarded.

use crate::interrupt;
use crate::run::exec::{ExecConfig, ExecError, ExecStats, Executor};
use crate::run::outcome::{MatchMode, Outcome, Signature};
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{CHUNK_TIME, MAX_BATCH};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An extra driver: a thread owning an executor, working on the lists it is
/// handed in order. Dropping it lets it finish its current chunk and stops
/// it (its driver process with it).
pub(super) struct Helper {
    jobs: Option<mpsc::Sender<Arc<Spread>>>,
    /// The executor's counters, as of its last list.
    stats: Arc<Mutex<ExecStats>>,
    /// Why its driver did not start, if it did not.
    failed: Arc<Mutex<Option<ExecError>>>,
    thread: Option<JoinHandle<()>>,
}

impl Helper {
    /// A helper on a driver already started.
    pub(super) fn start(exec: Executor) -> Helper {
        Helper::spawn(move || Ok(exec))
    }

    /// A helper that starts its own driver from `config`, in its thread: the
    /// first driver goes on meanwhile, and the helper joins the lists handed
    /// out once it is up (a list it gets to late is already settled).
    pub(super) fn start_new(config: ExecConfig) -> Helper {
        Helper::spawn(move || {
            let mut exec = Executor::new(config)?;
            exec.set_value_cache(true);
            Ok(exec)
        })
    }

    fn spawn(make: impl FnOnce() -> Result<Executor, ExecError> + Send + 'static) -> Helper {
        let (jobs, lists) = mpsc::channel::<Arc<Spread>>();
        let stats = Arc::new(Mutex::new(ExecStats::default()));
        let failed = Arc::new(Mutex::new(None));
        let (shared, failure) = (Arc::clone(&stats), Arc::clone(&failed));
        let thread = std::thread::Builder::new()
            .name("reduce-crash-driver".to_owned())
            .spawn(move || {
                let mut exec = match make() {
                    Ok(exec) => exec,
                    Err(e) => {
                        *lock(&failure) = Some(e);
                        // Every list sent learns it is not coming.
                        for spread in lists {
                            spread.absent();
                        }
                        return;
                    }
                };
                *lock(&shared) = exec.stats();
                for spread in lists {
                    spread.work(&mut exec, Some(&shared));
                }
            })
            .expect("a thread for an extra driver");
        Helper {
            jobs: Some(jobs),
            stats,
            failed,
            thread: Some(thread),
        }
    }

    /// Why its driver could not start (once).
    pub(super) fn take_error(&self) -> Option<ExecError> {
        lock(&self.failed).take()
    }

    /// Hands it a list; `false` if its thread is gone.
    pub(super) fn send(&self, spread: &Arc<Spread>) -> bool {
        self.jobs
            .as_ref()
            .is_some_and(|j| j.send(Arc::clone(spread)).is_ok())
    }

    pub(super) fn stats(&self) -> ExecStats {
        *lock(&self.stats)
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One list of candidates shared by several drivers.
pub(super) struct Spread {
    candidates: Vec<Vec<u8>>,
    expected: Signature,
    mode: MatchMode,
    /// How many drivers share it.
    workers: usize,
    /// What is left of `--max-tests` and when `--max-time` ends.
    tests_left: Option<u64>,
    deadline: Option<Instant>,
    /// The driver binary, to name in the error if a driver's thread dies.
    program: PathBuf,
    screen: Option<Duration>,
    state: Mutex<SpreadState>,
    /// Signalled when a chunk finishes or a driver leaves.
    changed: Condvar,
}

struct SpreadState {
    /// The first candidate not handed out yet.
    next: usize,
    /// The first interesting candidate found so far (or the list's length):
    /// no chunk starting after it is handed out.
    limit: usize,
    /// Candidates run so far.
    ran: u64,
    per_candidate: Option<Duration>,
    /// Interrupted, out of budget or a driver failed: hand out nothing more.
    stop: bool,
    /// The answer is settled: hand out nothing more, and a chunk cut short
    /// by a crash is not resumed.
    closed: bool,
    /// Drivers still working on it (or that will: a helper busy with an
    /// earlier list).
    active: usize,
    /// Finished chunks not collected yet, in the order they finished.
    chunks: Vec<Chunk>,
}

/// What one driver did with `candidates[start..end]`: ran them in order
/// until the first interesting one (`found`), or all of them, or fewer
/// (cut short: past the answer, or `error`).
pub(super) struct Chunk {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) outcomes: Vec<Outcome>,
    pub(super) found: bool,
    pub(super) error: Option<ExecError>,
}

impl Chunk {
    fn cut_short(&self) -> bool {
        !self.found && self.start + self.outcomes.len() < self.end
    }
}

/// Where a spread's answer stands once settled.
pub(super) struct Settled {
    /// The finished chunks, by position: those up to `path_end` are the
    /// sequential evaluation, the rest ran past it.
    pub(super) chunks: Vec<Chunk>,
    /// Candidates evaluated in order from the start: the chunks before it
    /// are the reduction's path.
    pub(super) path_end: usize,
    pub(super) per_candidate: Option<Duration>,
}

pub(super) struct SpreadParams {
    pub(super) expected: Signature,
    pub(super) mode: MatchMode,
    pub(super) workers: usize,
    pub(super) tests_left: Option<u64>,
    pub(super) deadline: Option<Instant>,
    pub(super) per_candidate: Option<Duration>,
    pub(super) program: PathBuf,
    /// Every driver screens hangs so (the oracle's current screening).
    pub(super) screen: Option<Duration>,
}

impl Spread {
    pub(super) fn new(candidates: Vec<Vec<u8>>, p: SpreadParams) -> Spread {
        let limit = candidates.len();
        Spread {
            candidates,
            expected: p.expected,
            mode: p.mode,
            workers: p.workers,
            tests_left: p.tests_left,
            deadline: p.deadline,
            program: p.program,
            screen: p.screen,
            state: Mutex::new(SpreadState {
                next: 0,
                limit,
                ran: 0,
                per_candidate: p.per_candidate,
                stop: false,
                closed: false,
                active: p.workers,
                chunks: Vec::new(),
            }),
            changed: Condvar::new(),
        }
    }

    /// A driver that was counted in will not come (its thread is gone).
    pub(super) fn absent(&self) {
        lock(&self.state).active -= 1;
        self.changed.notify_all();
    }

    /// One driver's loop: take the next chunk, run it, report it. A helper
    /// publishes its counters (`stats`) before it says it is done.
    pub(super) fn work(&self, exec: &mut Executor, stats: Option<&Mutex<ExecStats>>) {
        // Leaves the spread even if running a chunk panics, so that nobody
        // waits for this driver forever.
        struct Leave<'s> {
            spread: &'s Spread,
            /// The chunk being run, if any.
            running: Option<(usize, usize)>,
        }
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                let mut s = lock(&self.spread.state);
                if let Some((start, end)) = self.running.take() {
                    s.stop = true;
                    s.chunks.push(Chunk {
                        start,
                        end,
                        outcomes: Vec::new(),
                        found: false,
                        error: Some(ExecError::Startup {
                            path: self.spread.program.clone(),
                            detail: "a thread running the driver panicked".to_owned(),
                        }),
                    });
                }
                s.active -= 1;
                drop(s);
                self.spread.changed.notify_all();
            }
        }
        let mut leave = Leave {
            spread: self,
            running: None,
        };
        exec.set_screen_hangs(self.screen);
        while let Some((start, end)) = self.take() {
            leave.running = Some((start, end));
            let chunk = self.run(exec, start, end);
            leave.running = None;
            self.finish(chunk);
        }
        if let Some(stats) = stats {
            *lock(stats) = exec.stats();
        }
    }

    /// Runs `candidates[start..end]` up to the first interesting one.
    fn run(&self, exec: &mut Executor, start: usize, end: usize) -> Chunk {
        let began = Instant::now();
        let mut chunk = Chunk {
            start,
            end,
            outcomes: Vec::with_capacity(end - start),
            found: false,
            error: None,
        };
        // A crash that is not interesting ends the driver's batch: send the
        // rest again, unless the answer is already known to come earlier.
        while !chunk.found && start + chunk.outcomes.len() < end {
            let from = start + chunk.outcomes.len();
            if from > start {
                let s = lock(&self.state);
                if s.closed || from > s.limit {
                    break;
                }
            }
            let batch: Vec<&[u8]> = self.candidates[from..end]
                .iter()
                .map(Vec::as_slice)
                .collect();
            match exec.run_batch_until(&batch, self.deadline) {
                Ok(runs) if !runs.is_empty() => {
                    for run in runs {
                        chunk.found = matches!(&run.outcome,
                            Outcome::Crash(sig) if self.mode.matches(&self.expected, sig));
                        chunk.outcomes.push(run.outcome);
                        if chunk.found {
                            break;
                        }
                    }
                }
                Ok(_) => break,
                Err(e) => {
                    chunk.error = Some(e);
                    break;
                }
            }
        }
        let n = chunk.outcomes.len();
        if n > 0 {
            let mut s = lock(&self.state);
            s.per_candidate = Some(super::average(s.per_candidate, began.elapsed(), n));
        }
        chunk
    }

    /// The next chunk to run, if any: contiguous with the one before, of
    /// about [`CHUNK_TIME`] of work, never more than an even share of what
    /// is left.
    fn take(&self) -> Option<(usize, usize)> {
        let mut s = lock(&self.state);
        if s.stop || s.closed || s.next >= s.limit {
            return None;
        }
        if interrupt::requested()
            || self.tests_left.is_some_and(|left| s.ran >= left)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
        {
            s.stop = true;
            return None;
        }
        let left = self.candidates.len() - s.next;
        let by_time = match s.per_candidate {
            Some(t) if !t.is_zero() => (CHUNK_TIME.as_nanos() / t.as_nanos()) as usize,
            Some(_) => MAX_BATCH,
            None => 1,
        };
        let len = by_time.min(left.div_ceil(self.workers)).clamp(1, MAX_BATCH);
        let start = s.next;
        s.next = start + len;
        Some((start, s.next))
    }

    fn finish(&self, chunk: Chunk) {
        let mut s = lock(&self.state);
        let n = chunk.outcomes.len();
        s.ran += n as u64;
        if chunk.found {
            s.limit = s.limit.min(chunk.start + n - 1);
        }
        if chunk.error.is_some() {
            s.stop = true;
        }
        s.chunks.push(chunk);
        drop(s);
        self.changed.notify_all();
    }

    /// Waits until the answer is settled: the finished chunks from the
    /// start reach one that found an interesting candidate or was cut
    /// short, or the end of the list, or everything handed out before a
    /// stop. Then closes the spread (nothing more is handed out) and
    /// returns what finished so far; what is still running is collected
    /// later with [`Spread::take_finished`].
    pub(super) fn settled(&self) -> Settled {
        let mut s = lock(&self.state);
        loop {
            s.chunks.sort_by_key(|c| c.start);
            let mut reached = 0;
            let mut settled = false;
            for c in &s.chunks {
                if c.start != reached {
                    break;
                }
                if c.found || c.cut_short() {
                    reached = c.start + c.outcomes.len();
                    settled = true;
                    break;
                }
                reached = c.end;
            }
            settled |=
                reached == self.candidates.len() || (s.stop && reached == s.next) || s.active == 0;
            if settled {
                s.closed = true;
                return Settled {
                    chunks: std::mem::take(&mut s.chunks),
                    path_end: reached,
                    per_candidate: s.per_candidate,
                };
            }
            s = self.changed.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Chunks that finished since they were last collected, and whether
    /// every driver is done with this spread. With `wait`, waits for that.
    pub(super) fn take_finished(&self, wait: bool) -> (Vec<Chunk>, bool) {
        let mut s = lock(&self.state);
        while wait && s.active > 0 {
            s = self.changed.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        (std::mem::take(&mut s.chunks), s.active == 0)
    }
}
