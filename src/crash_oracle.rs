//! The oracle that answers "does this input still crash the same way?" by
//! running the fuzz target, and remembers every new best as it goes.
//!
//! It adapts the [`Executor`] to the reducers' [`Oracle`] interface:
//! a candidate is interesting iff it crashes with a signature that the
//! [`MatchMode`] accepts as the original's. Crashes with other signatures are
//! counted (they are the slips a looser tool would have taken). Each new best
//! is kept in order ([`CrashOracle::history`]), so that when the run ends —
//! finished, interrupted, out of budget — the session can write the smallest
//! one that still crashes when rerun in a fresh process. After Ctrl-C (or
//! when a budget runs out) the oracle is *exhausted* and answers `false`
//! without running anything.

use crate::error::Error;
use crate::exec::{ExecError, Executor};
use crate::interrupt;
use crate::oracle::{Oracle, Span};
use crate::outcome::{MatchMode, Outcome, Signature};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How many earlier bests are kept, to fall back on when the best does not
/// crash in a fresh process.
const HISTORY: usize = 16;

/// Most candidates sent to the driver in one round trip.
const MAX_BATCH: usize = 512;

/// Snapshot passed to the progress callback.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub executed: u64,
    pub best_len: usize,
    pub elapsed: Duration,
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
    stop: Option<StopReason>,
    error: Option<Error>,
    on_progress: Option<Box<dyn FnMut(Progress) + 'a>>,
    last_progress: Instant,
    /// The last structure probe: reducers ask about the same input repeatedly.
    last_spans: Option<(Vec<u8>, Option<Vec<Span>>)>,
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
        CrashOracle {
            exec,
            expected,
            mode,
            best: original.to_vec(),
            history: std::collections::VecDeque::new(),
            budget: Budget::default(),
            started: Instant::now(),
            executed: 0,
            other_signatures: HashMap::new(),
            stop: None,
            error: None,
            on_progress: None,
            last_progress: Instant::now(),
            last_spans: None,
        }
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

    fn fail(&mut self, e: ExecError) {
        self.error = Some(e.into());
        self.stop = Some(StopReason::Error);
    }

    /// Judges one executed candidate; records a new best.
    fn judge(&mut self, candidate: &[u8], outcome: &Outcome) -> bool {
        self.executed += 1;
        let interesting = match outcome {
            Outcome::Crash(sig) if self.mode.matches(&self.expected, sig) => true,
            Outcome::Crash(sig) => {
                *self.other_signatures.entry(sig.clone()).or_default() += 1;
                false
            }
            _ => false,
        };
        if interesting && shortlex_less(candidate, &self.best) {
            let old = std::mem::replace(&mut self.best, candidate.to_vec());
            if self.history.len() == HISTORY {
                self.history.pop_front();
            }
            self.history.push_back(old);
        }
        self.report_progress();
        interesting
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
        };
        if let Some(f) = self.on_progress.as_mut() {
            f(p);
        }
    }
}

/// Shorter, or as long and lexicographically smaller.
pub fn shortlex_less(a: &[u8], b: &[u8]) -> bool {
    (a.len(), a) < (b.len(), b)
}

impl Oracle<u8> for CrashOracle<'_> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        if self.check_stop() {
            return false;
        }
        match self.exec.run(candidate) {
            Ok(run) => self.judge(candidate, &run.outcome),
            Err(e) => {
                self.fail(e);
                false
            }
        }
    }

    fn first_interesting(&mut self, candidates: &[Vec<u8>]) -> Option<usize> {
        // The driver stops a batch at its first crash, and only crashes can be
        // interesting, so batching runs exactly what the sequential loop would.
        let mut start = 0;
        while start < candidates.len() {
            if self.check_stop() {
                return None;
            }
            let end = (start + MAX_BATCH).min(candidates.len());
            let batch: Vec<&[u8]> = candidates[start..end].iter().map(Vec::as_slice).collect();
            let runs = match self.exec.run_batch(&batch) {
                Ok(runs) => runs,
                Err(e) => {
                    self.fail(e);
                    return None;
                }
            };
            for (k, run) in runs.iter().enumerate() {
                if self.judge(batch[k], &run.outcome) {
                    return Some(start + k);
                }
            }
            start += runs.len().max(1);
        }
        None
    }

    fn exhausted(&self) -> bool {
        self.stop.is_some()
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
