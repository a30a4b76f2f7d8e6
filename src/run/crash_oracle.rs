//! The oracle that answers "does this input still crash the same way?" by
//! running the fuzz target, and remembers every new best as it goes.
//!
//! It adapts the [`Executor`] to the reducers' [`Oracle`] interface:
//! a candidate is interesting iff it crashes with a signature that the
//! [`MatchMode`] accepts as the original's. Crashes with other signatures are
//! counted (they are the slips a looser tool would have taken). Each new best
//! is kept in order (`CrashOracle::history`), so that when the run ends —
//! finished, interrupted, out of budget — the session can write the smallest
//! one that still crashes when rerun in a fresh process. After Ctrl-C (or
//! when a budget runs out) the oracle is *exhausted* and answers `false`
//! without running anything.
//!
//! With extra drivers ([`CrashOracle::with_helpers`], `-j N` for one
//! artifact) a list of candidates is evaluated speculatively: the drivers
//! take contiguous chunks of it in order and run them at the same time, and
//! the answer is still the sequential one, the first interesting candidate
//! in order ([`CrashOracle::first_interesting`], `spread`).

mod spread;

use crate::error::Error;
use crate::interrupt;
pub use crate::reduce::oracle::shortlex_less;
use crate::reduce::oracle::{Fingerprint, Oracle, Span};
use crate::run::exec::{ExecError, Executor, SCREEN_FACTOR};
use crate::run::fuzzer_binary::FuzzerBinary;
use crate::run::outcome::{MatchMode, Outcome, Signature};
use spread::{Chunk, Helper, Spread, SpreadParams};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How many earlier bests are kept, to fall back on when the best does not
/// crash in a fresh process.
const HISTORY: usize = 16;

/// Most candidates sent to the driver in one round trip.
const MAX_BATCH: usize = 512;

/// With several drivers, each takes chunks of about this much of the
/// target's time (at least one candidate): a driver still running a chunk
/// past the answer holds the others up by at most about this long.
const CHUNK_TIME: Duration = Duration::from_millis(1);

/// A list whose candidates would take less than this on one driver (as
/// measured so far) is not shared: handing chunks to other threads and
/// drivers costs more than it saves on a fast target.
const SPREAD_WORK: Duration = Duration::from_millis(2);

/// Snapshot passed to the progress callback.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub executed: u64,
    pub best_len: usize,
    pub elapsed: Duration,
    /// The pass the reducer said it is in ([`Oracle::phase`]), if any.
    pub phase: Option<&'static str>,
    /// Since the best so far last got smaller (or since the start).
    pub since_improvement: Duration,
}

/// Limits on a reduction.
#[derive(Debug, Clone, Copy, Default)]
pub struct Budget {
    pub max_tests: Option<u64>,
    pub max_time: Option<Duration>,
}

pub struct CrashOracle<'a> {
    exec: &'a mut Executor,
    expected: Signature,
    mode: MatchMode,
    best: Vec<u8>,
    /// The latest earlier bests, oldest first (at most [`HISTORY`]).
    history: std::collections::VecDeque<Vec<u8>>,
    budget: Budget,
    started: Instant,
    executed: u64,
    other_signatures: HashMap<Signature, u64>,
    /// The candidates judged so far that crashed with another signature
    /// ([`Oracle::failed_otherwise`]).
    crashed_otherwise: HashSet<Fingerprint>,
    stop: Option<StopReason>,
    error: Option<Error>,
    on_progress: Option<Box<dyn FnMut(Progress) + 'a>>,
    last_progress: Instant,
    /// The reducer's current pass, as it announced it.
    phase: Option<&'static str>,
    /// When `best` last changed.
    improved_at: Instant,
    /// The last structure probe: reducers ask about the same input repeatedly.
    last_spans: Option<(Vec<u8>, Option<Vec<Span>>)>,
    /// Extra drivers sharing candidate lists with `exec` (none: `exec` alone).
    helpers: Vec<Helper>,
    /// Lists whose answer is settled but on which a helper may still be
    /// running a chunk past it (collected and counted later).
    pending: Vec<Arc<Spread>>,
    /// How long one candidate takes, as the drivers measured it (whether a
    /// list is shared, and the size of the chunks handed out).
    per_candidate: Option<Duration>,
    /// Lists estimated to take less than this stay on `exec` alone.
    spread_work: Duration,
    /// Candidates run past the first interesting one and discarded.
    discarded: u64,
    /// Helpers to start once candidates prove slow ([`Self::with_helpers_when_slow`]).
    when_slow: Option<(usize, Duration)>,
    /// Wall time and count of the candidates `exec` ran alone (for `when_slow`).
    alone: (Duration, u64),
    /// `exec`'s hang sampling, put back when the reduction ends.
    hang_samples: usize,
    /// Hangs screened at a shorter limit than the timeout
    /// ([`crate::run::exec::ExecConfig::screen_hangs`]), while the
    /// screening holds: `None` once a screened hang finished when run to
    /// the limit (a slow input, not a hang: a blow-up with the input's size).
    screen: Option<Duration>,
    screen_was_on: bool,
    /// Screened hangs that became a best and held when run to the limit;
    /// the first [`SCREEN_PROBATION`] are all checked so.
    screen_confirmed: usize,
    /// A timeout's second clock ([`Self::with_second_clock`]): every new
    /// best must also keep `cargo fuzz build`'s fuzzer running this long.
    second_clock: Option<(FuzzerBinary, Duration)>,
    /// Bests the driver kept that the second clock turned down.
    clock_rejections: usize,
}

/// A timeout's first bests found by screening are each run to the full
/// limit; once this many held, screening is trusted while every run that
/// finished was far shorter than the screening limit (the results written
/// are still checked at the limit).
pub const SCREEN_PROBATION: usize = 3;

impl Drop for CrashOracle<'_> {
    fn drop(&mut self) {
        self.exec.set_hang_samples(self.hang_samples);
        self.exec.set_screen_hangs(None);
    }
}

/// Why the oracle stopped answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Interrupted,
    Budget,
    Error,
}

impl<'a> CrashOracle<'a> {
    /// `original` must already be known to crash with `expected`.
    pub fn new(
        exec: &'a mut Executor,
        expected: Signature,
        mode: MatchMode,
        original: &[u8],
    ) -> Self {
        // A hang's place is not part of the identity: no time on it.
        let hang_samples = exec.config().hang_samples;
        exec.set_hang_samples(0);
        let screen = exec.config().screen_hangs;
        CrashOracle {
            hang_samples,
            screen,
            screen_was_on: screen.is_some(),
            screen_confirmed: 0,
            second_clock: None,
            clock_rejections: 0,
            exec,
            expected,
            mode,
            best: original.to_vec(),
            history: std::collections::VecDeque::new(),
            budget: Budget::default(),
            started: Instant::now(),
            executed: 0,
            other_signatures: HashMap::new(),
            crashed_otherwise: HashSet::new(),
            stop: None,
            error: None,
            on_progress: None,
            last_progress: Instant::now(),
            phase: None,
            improved_at: Instant::now(),
            last_spans: None,
            helpers: Vec::new(),
            pending: Vec::new(),
            per_candidate: None,
            spread_work: SPREAD_WORK,
            when_slow: None,
            alone: (Duration::ZERO, 0),
            discarded: 0,
        }
    }

    /// Extra drivers (started like `exec`, same binary and limits) that
    /// evaluate candidate lists alongside it, each from a thread of its own.
    /// Single tests, structure probes and renderings stay on `exec`. Call
    /// [`CrashOracle::finish`] before reading the counters.
    pub fn with_helpers(mut self, helpers: Vec<Executor>) -> Self {
        self.helpers = helpers.into_iter().map(Helper::start).collect();
        self
    }

    /// `n` extra drivers like `exec` (same binary, limits and time limit,
    /// the value cache on), each started in its own thread while `exec`
    /// goes on alone: they join the lists handed out once they are up. A
    /// driver that cannot start ends the reduction with its error.
    pub fn with_new_helpers(mut self, n: usize) -> Self {
        let config = self.exec.config().clone();
        self.helpers = (0..n).map(|_| Helper::start_new(config.clone())).collect();
        self
    }

    /// Starts `n` helpers as [`Self::with_new_helpers`] does, but only once
    /// the candidates `exec` ran took `slow` or more each on average, wall
    /// time (a crash that ends the process costs its report and a restart,
    /// which the original's own run time does not show). Lists are shared
    /// from then on; the answers are the same either way.
    pub fn with_helpers_when_slow(mut self, n: usize, slow: Duration) -> Self {
        if n > 0 && self.helpers.is_empty() {
            self.when_slow = Some((n, slow));
        }
        self
    }

    /// Counts `runs` candidates that took `took` on `exec` alone, and starts
    /// the helpers [`Self::with_helpers_when_slow`] asked for once they are
    /// slow: after at least 4 candidates, or one that took 4 times the mark.
    fn measured_alone(&mut self, took: Duration, runs: usize) {
        let Some((n, slow)) = self.when_slow else {
            return;
        };
        self.alone.0 += took;
        self.alone.1 += runs as u64;
        let (total, count) = self.alone;
        let slow_enough = (count >= 4 && total >= slow * count as u32)
            || (count > 0 && total >= slow * 4 * count as u32);
        if slow_enough {
            self.when_slow = None;
            let config = self.exec.config().clone();
            self.helpers = (0..n).map(|_| Helper::start_new(config.clone())).collect();
            self.per_candidate = Some(total / count as u32);
        }
    }

    /// Share lists whose candidates are estimated to take at least `work`
    /// on one driver (default `SPREAD_WORK`); with zero, every list of two
    /// or more, even before anything was measured.
    pub fn spread_above(mut self, work: Duration) -> Self {
        self.spread_work = work;
        self
    }

    /// How many drivers run candidates: `exec` and its helpers.
    pub fn drivers(&self) -> usize {
        1 + self.helpers.len()
    }

    /// Waits for the helpers to finish what they were still running past an
    /// answer, and counts it: [`CrashOracle::executed`],
    /// [`CrashOracle::discarded`], [`CrashOracle::other_signatures`] and
    /// [`CrashOracle::helper_stats`] are then complete.
    pub fn finish(&mut self) {
        self.collect_discarded(true);
    }

    /// The helpers' counters, summed (`exec`'s are its own), as of their
    /// last list.
    pub fn helper_stats(&self) -> crate::run::exec::ExecStats {
        let mut sum = crate::run::exec::ExecStats::default();
        for h in &self.helpers {
            let s = h.stats();
            sum.executions += s.executions;
            sum.value_cache_hits += s.value_cache_hits;
            sum.restarts += s.restarts;
            sum.spawns += s.spawns;
        }
        sum
    }

    /// Candidates that ran after the first interesting one of their list
    /// (on another driver, at the same time) and were discarded; they are
    /// part of [`CrashOracle::executed`].
    pub fn discarded(&self) -> u64 {
        self.discarded
    }

    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    pub fn on_progress(mut self, f: impl FnMut(Progress) + 'a) -> Self {
        self.on_progress = Some(Box::new(f));
        self
    }

    pub fn best(&self) -> &[u8] {
        &self.best
    }

    /// The latest bests before the current one, newest first.
    pub fn earlier_bests(&self) -> impl Iterator<Item = &[u8]> {
        self.history.iter().rev().map(Vec::as_slice)
    }

    pub fn executed(&self) -> u64 {
        self.executed
    }

    /// Screened hangs that, on probation, finished when run to the limit
    /// (at most one: screening ends there).
    pub fn screen_failures(&self) -> usize {
        usize::from(self.screen_was_on && self.screen.is_none())
    }

    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stop
    }

    /// Crashes seen with a different signature, most frequent first.
    pub fn other_signatures(&self) -> Vec<(Signature, u64)> {
        let mut v: Vec<_> = self
            .other_signatures
            .iter()
            .map(|(s, n)| (s.clone(), *n))
            .collect();
        v.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then_with(|| a.0.to_string().cmp(&b.0.to_string()))
        });
        v
    }

    /// An error that stopped the reduction (the driver could not restart).
    pub fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }

    fn check_stop(&mut self) -> bool {
        if self.stop.is_some() {
            return true;
        }
        if interrupt::requested() {
            self.stop = Some(StopReason::Interrupted);
        } else if self.budget.max_tests.is_some_and(|m| self.executed >= m)
            || self
                .budget
                .max_time
                .is_some_and(|t| self.started.elapsed() >= t)
        {
            self.stop = Some(StopReason::Budget);
        }
        self.stop.is_some()
    }

    /// Every new best must also keep `fuzzer` running to `deadline`: after
    /// `cargo fuzz build`'s fuzzer finished a result the driver had kept
    /// running to the limit (its clock and the driver's differ on this
    /// target), the reduction goes on judged by both.
    pub fn with_second_clock(mut self, fuzzer: FuzzerBinary, deadline: Duration) -> Self {
        self.second_clock = Some((fuzzer, deadline));
        self
    }

    /// Bests the driver kept and the second clock turned down.
    pub fn clock_rejections(&self) -> usize {
        self.clock_rejections
    }

    /// A candidate about to become the best still runs to the deadline on
    /// the second clock (or there is none).
    fn second_clock_holds(&mut self, candidate: &[u8]) -> bool {
        let Some((fuzzer, deadline)) = &self.second_clock else {
            return true;
        };
        match fuzzer.runs_past(candidate, *deadline) {
            Ok(true) => true,
            Ok(false) => {
                self.clock_rejections += 1;
                false
            }
            Err(e) => {
                self.error = Some(e);
                self.stop = Some(StopReason::Error);
                false
            }
        }
    }

    fn fail(&mut self, e: ExecError) {
        self.error = Some(e.into());
        self.stop = Some(StopReason::Error);
    }

    /// Counts one executed candidate (and a crash with another signature);
    /// says whether it is interesting.
    fn count(&mut self, outcome: &Outcome) -> bool {
        self.executed += 1;
        match outcome {
            Outcome::Crash(sig) if self.mode.matches(&self.expected, sig) => true,
            Outcome::Crash(sig) => {
                *self.other_signatures.entry(sig.clone()).or_default() += 1;
                false
            }
            _ => false,
        }
    }

    /// Judges one executed candidate; records a new best.
    fn judge(&mut self, candidate: &[u8], outcome: &Outcome) -> bool {
        let mut interesting = self.count(outcome);
        if interesting
            && shortlex_less(candidate, &self.best)
            && !(self.screening_holds(candidate) && self.second_clock_holds(candidate))
        {
            interesting = false;
        }
        if !interesting && matches!(outcome, Outcome::Crash(_)) {
            self.crashed_otherwise.insert(Fingerprint::of(candidate));
        }
        if interesting && shortlex_less(candidate, &self.best) {
            let old = std::mem::replace(&mut self.best, candidate.to_vec());
            self.improved_at = Instant::now();
            if self.history.len() == HISTORY {
                self.history.pop_front();
            }
            self.history.push_back(old);
        }
        self.report_progress();
        interesting
    }

    /// A timeout's candidate screened as a hang is about to become the best:
    /// while on probation, it is run to the full limit first. One that
    /// finishes there ends the screening for the rest of the reduction (the
    /// target slows down with its input rather than hanging) and is not
    /// interesting. `true`: it stands (or there is no screening).
    fn screening_holds(&mut self, candidate: &[u8]) -> bool {
        let Some(min) = self.screen else {
            return true;
        };
        // Trusted after probation only while every run that finished was
        // far shorter than the screening limit: a target some of whose
        // inputs run for a while and finish (an exponential parse) has
        // inputs that run past the limit and finish too.
        let gap = self.exec.slowest_finished() * SCREEN_FACTOR < min;
        if self.expected.kind != crate::run::outcome::CrashKind::Timeout
            || (self.screen_confirmed >= SCREEN_PROBATION && gap)
        {
            return true;
        }
        self.exec.set_screen_hangs(None);
        let held = match self.exec.run(candidate) {
            Ok(run) => {
                self.executed += 1;
                matches!(&run.outcome, Outcome::Crash(s) if self.mode.matches(&self.expected, s))
            }
            Err(e) => {
                self.fail(e);
                false
            }
        };
        if held {
            self.screen_confirmed += 1;
            self.exec.set_screen_hangs(self.screen);
        } else {
            self.screen = None;
        }
        held
    }

    fn report_progress(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.last_progress) < Duration::from_millis(100) {
            return;
        }
        self.last_progress = now;
        let p = Progress {
            executed: self.executed,
            best_len: self.best.len(),
            elapsed: self.started.elapsed(),
            phase: self.phase,
            since_improvement: now.duration_since(self.improved_at),
        };
        if let Some(f) = self.on_progress.as_mut() {
            f(p);
        }
    }
}

impl CrashOracle<'_> {
    /// [`Oracle::first_interesting`] on `exec` alone.
    fn first_interesting_alone(&mut self, candidates: &[Vec<u8>]) -> Option<usize> {
        // The driver stops a batch at its first crash, and only crashes can be
        // interesting, so batching runs exactly what the sequential loop would.
        let mut start = 0;
        while start < candidates.len() {
            if self.check_stop() {
                return None;
            }
            let end = (start + MAX_BATCH).min(candidates.len());
            let batch: Vec<&[u8]> = candidates[start..end].iter().map(Vec::as_slice).collect();
            let began = Instant::now();
            let deadline = self
                .budget
                .max_time
                .and_then(|t| self.started.checked_add(t));
            let runs = match self.exec.run_batch_until(&batch, deadline) {
                Ok(runs) => runs,
                Err(e) => {
                    self.fail(e);
                    return None;
                }
            };
            if runs.is_empty() {
                // Cut at the deadline.
                self.check_stop();
                return None;
            }
            if !self.helpers.is_empty() {
                self.per_candidate = Some(average(self.per_candidate, began.elapsed(), runs.len()));
            } else {
                self.measured_alone(began.elapsed(), runs.len());
            }
            for (k, run) in runs.iter().enumerate() {
                if self.judge(batch[k], &run.outcome) {
                    return Some(start + k);
                }
            }
            start += runs.len().max(1);
        }
        None
    }

    /// [`Oracle::first_interesting`] on every driver at once. The drivers
    /// take contiguous chunks of the list in order ([`Spread`]); the answer
    /// is the first interesting candidate of the first chunk that found
    /// one, all chunks before it having found none. Only those candidates
    /// count as the reduction's path (bests, history); what other drivers
    /// ran past the answer is counted as executed and discarded, when it
    /// finishes (not waited for). A round that ended before the answer was
    /// settled (a chunk cut short) goes on from the first candidate not
    /// evaluated.
    fn first_interesting_spread(&mut self, candidates: &[Vec<u8>]) -> Option<usize> {
        let mut from = 0;
        while from < candidates.len() {
            self.collect_discarded(false);
            if self.check_stop() {
                return None;
            }
            let rest = &candidates[from..];
            let workers = (1 + self.helpers.len()).min(rest.len());
            let spread = Arc::new(Spread::new(
                rest.to_vec(),
                SpreadParams {
                    expected: self.expected.clone(),
                    mode: self.mode,
                    workers,
                    tests_left: self
                        .budget
                        .max_tests
                        .map(|m| m.saturating_sub(self.executed)),
                    deadline: self
                        .budget
                        .max_time
                        .and_then(|t| self.started.checked_add(t)),
                    per_candidate: self.per_candidate,
                    program: self.exec.config().program.clone(),
                    screen: self.screen,
                },
            ));
            for helper in &self.helpers[..workers - 1] {
                if !helper.send(&spread) {
                    spread.absent();
                }
            }
            let failed: Vec<_> = self.helpers.iter().filter_map(Helper::take_error).collect();
            for e in failed {
                self.fail_once(e);
            }
            spread.work(self.exec, None);
            let settled = spread.settled();
            self.per_candidate = settled.per_candidate;
            let mut answer = None;
            for chunk in settled.chunks {
                if chunk.start >= settled.path_end {
                    self.count_discarded(chunk);
                    continue;
                }
                for (k, outcome) in chunk.outcomes.iter().enumerate() {
                    if self.judge(&rest[chunk.start + k], outcome) {
                        answer = Some(chunk.start + k);
                    }
                }
                if let Some(e) = chunk.error {
                    self.fail_once(e);
                }
            }
            self.pending.push(spread);
            self.report_progress();
            if let Some(i) = answer {
                return Some(from + i);
            }
            if settled.path_end == 0 && !self.check_stop() {
                // No driver answered anything (they always do): go on alone.
                return self.first_interesting_alone(rest).map(|i| from + i);
            }
            from += settled.path_end;
        }
        None
    }

    /// Counts what ran past an answer. A driver that failed there changed
    /// nothing: if it cannot go on, its next chunk on a path says so.
    fn count_discarded(&mut self, chunk: Chunk) {
        for outcome in &chunk.outcomes {
            self.count(outcome);
            self.discarded += 1;
        }
    }

    /// Collects the chunks helpers finished past earlier answers (with
    /// `wait`, all of them, once every helper is done).
    fn collect_discarded(&mut self, wait: bool) {
        let pending = std::mem::take(&mut self.pending);
        for spread in pending {
            let (chunks, done) = spread.take_finished(wait);
            for chunk in chunks {
                self.count_discarded(chunk);
            }
            if !done {
                self.pending.push(spread);
            }
        }
    }

    fn fail_once(&mut self, e: ExecError) {
        if self.error.is_none() {
            self.fail(e);
        }
    }
}

/// The time per candidate, `took` for `n` of them folded into the running
/// estimate `before` (recent batches weigh more).
fn average(before: Option<Duration>, took: Duration, n: usize) -> Duration {
    let each = took / n.max(1) as u32;
    match before {
        Some(p) => (p * 3 + each) / 4,
        None => each,
    }
}

impl Oracle<u8> for CrashOracle<'_> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        if self.check_stop() {
            return false;
        }
        let began = Instant::now();
        match self.exec.run(candidate) {
            Ok(run) => {
                if self.helpers.is_empty() {
                    self.measured_alone(began.elapsed(), 1);
                }
                self.judge(candidate, &run.outcome)
            }
            Err(e) => {
                self.fail(e);
                false
            }
        }
    }

    /// The first interesting candidate, as if each were tested in order.
    /// With helpers, the drivers evaluate a list that is worth it
    /// speculatively (`CrashOracle::first_interesting_spread`); the answer
    /// is the same.
    fn first_interesting(&mut self, candidates: &[Vec<u8>]) -> Option<usize> {
        let worth_it = match self.per_candidate {
            _ if self.helpers.is_empty() || candidates.len() < 2 => false,
            None => self.spread_work.is_zero(),
            Some(t) => t.saturating_mul(candidates.len() as u32) >= self.spread_work,
        };
        if worth_it {
            self.first_interesting_spread(candidates)
        } else {
            self.first_interesting_alone(candidates)
        }
    }

    fn exhausted(&self) -> bool {
        self.stop.is_some()
    }

    fn phase(&mut self, name: &'static str) {
        self.phase = Some(name);
    }

    fn spans(&mut self, candidate: &[u8]) -> Option<Vec<Span>> {
        if let Some((input, spans)) = &self.last_spans {
            if input == candidate {
                return spans.clone();
            }
        }
        let spans = match self.exec.spans(candidate) {
            Ok(spans) => spans,
            Err(e) => {
                self.fail(e);
                None
            }
        };
        self.last_spans = Some((candidate.to_vec(), spans.clone()));
        spans
    }

    fn failed_otherwise(&mut self, candidate: &[u8]) -> Option<bool> {
        Some(self.crashed_otherwise.contains(&Fingerprint::of(candidate)))
    }

    fn render(&mut self, candidate: &[u8]) -> Option<String> {
        if self.check_stop() {
            return None;
        }
        match self.exec.debug_format(candidate) {
            Ok(text) => text,
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }
}
