//! Shrinking one input under any predicate, as a library call.
//!
//! The CLI reduces crashes; a mutation fuzzer wants the same machinery for
//! its own purposes: shrink each new population member while it keeps the
//! coverage that earned it a place (libFuzzer's `-reduce_inputs`, the
//! Fuzzing Book's mutation fuzzer with reduction), or shrink under any
//! property of its own. [`Shrinker`] wraps the reducers behind a closure
//! `FnMut(&[u8]) -> bool` with a cache in front and budgets on tests and
//! time; [`crate::run::target::RunningTarget`] supplies ready predicates for a real
//! fuzz target (same crash, same coverage).
//!
//! ```
//! use reduce_crash::reduce::shrink::Shrinker;
//!
//! // Interesting while it still contains "bug" (a stand-in for running a target).
//! let input = b"lots of noise around a bug and more noise".to_vec();
//! let shrunk = Shrinker::new()
//!     .max_tests(10_000)
//!     .shrink(&input, |c| c.windows(3).any(|w| w == b"bug"));
//! assert_eq!(shrunk.input, b"bug");
//! assert!(shrunk.tests < 200);
//! ```

use super::oracle::shortlex_less;
use crate::reduce::oracle::{Cached, Oracle};
use crate::reduce::Strategy;
use std::time::{Duration, Instant};

/// Shrinks inputs under a predicate. Cheap to build; reusable.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shrinker {
    strategy: Strategy,
    max_tests: Option<u64>,
    max_time: Option<Duration>,
    stop: Option<fn() -> bool>,
    deletions_only: bool,
}

/// What [`Shrinker::shrink`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shrunk {
    /// The smallest input found that satisfies the predicate (the original
    /// when nothing smaller does).
    pub input: Vec<u8>,
    /// Times the predicate was called.
    pub tests: u64,
    /// Candidates answered from the cache instead.
    pub cache_hits: u64,
    /// A budget ran out before the reducer finished (the result is the best
    /// found so far, not necessarily 1-minimal).
    pub budget_exhausted: bool,
}

impl Shrinker {
    /// The default byte pipeline (chunks, ddmin, simplification), no budget.
    pub fn new() -> Self {
        Shrinker::default()
    }

    /// Which reducer to run (e.g. [`Strategy::Choices`] for inputs decoded
    /// by `arbitrary`, [`Strategy::Ddmin`] for 1-minimality alone).
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Stop after this many predicate calls.
    pub fn max_tests(mut self, n: u64) -> Self {
        self.max_tests = Some(n);
        self
    }

    /// Stop after this much time.
    pub fn max_time(mut self, d: Duration) -> Self {
        self.max_time = Some(d);
        self
    }

    /// Accept only candidates made by deleting bytes of the input (a
    /// subsequence of it): no byte changes value. For corpus entries, whose
    /// values (lengths, counts, magic numbers) are what mutation builds on:
    /// on zip's corpus, shrinking that lowered values made entries 85 % NUL
    /// bytes and the fuzzer reached a known panic later than from `cmin`'s
    /// corpus. Candidates that change a value are refused without calling
    /// the predicate and count as no test.
    pub fn deletions_only(mut self, yes: bool) -> Self {
        self.deletions_only = yes;
        self
    }

    /// Stop as soon as `stop` returns `true` (e.g. on Ctrl-C), like a budget.
    pub fn stop_when(mut self, stop: fn() -> bool) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Shrinks `input`, which must satisfy `predicate` (it is not called on
    /// `input` itself). Returns the shortlex-smallest satisfying candidate
    /// seen; with no budget hit, the reducer's own result (1-minimal for the
    /// byte strategies).
    pub fn shrink<F>(&self, input: &[u8], predicate: F) -> Shrunk
    where
        F: FnMut(&[u8]) -> bool,
    {
        let oracle = BudgetOracle {
            predicate,
            max_tests: self.max_tests,
            deadline: self.max_time.and_then(|d| Instant::now().checked_add(d)),
            stop: self.stop,
            tests: 0,
            exhausted: false,
            best: input.to_vec(),
            original: self.deletions_only.then(|| input.to_vec()),
        };
        let mut cached = Cached::new(oracle);
        cached.remember(input, true);
        let result = self.strategy.run(input, &mut cached);
        let cache_hits = cached.stats().cache_hits;
        let oracle = cached.into_inner();
        let input = if !oracle.exhausted || shortlex_less(&result, &oracle.best) {
            result
        } else {
            oracle.best
        };
        Shrunk {
            input,
            tests: oracle.tests,
            cache_hits,
            budget_exhausted: oracle.exhausted,
        }
    }
}

/// A predicate with budgets, remembering the best candidate it accepted.
struct BudgetOracle<F> {
    predicate: F,
    max_tests: Option<u64>,
    deadline: Option<Instant>,
    stop: Option<fn() -> bool>,
    tests: u64,
    exhausted: bool,
    best: Vec<u8>,
    /// Set for [`Shrinker::deletions_only`]: candidates must be subsequences.
    original: Option<Vec<u8>>,
}

/// Whether `candidate` is `of` with some bytes deleted (greedy matching).
pub(crate) fn is_subsequence(candidate: &[u8], of: &[u8]) -> bool {
    let mut rest = of.iter();
    candidate.iter().all(|c| rest.any(|b| b == c))
}

impl<F: FnMut(&[u8]) -> bool> BudgetOracle<F> {
    fn out_of_budget(&mut self) -> bool {
        if !self.exhausted {
            let tests = self.max_tests.is_some_and(|m| self.tests >= m);
            let time = self.deadline.is_some_and(|d| Instant::now() >= d);
            let stop = self.stop.is_some_and(|f| f());
            self.exhausted = tests || time || stop;
        }
        self.exhausted
    }
}

impl<F: FnMut(&[u8]) -> bool> Oracle<u8> for BudgetOracle<F> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        if self.out_of_budget() {
            return false;
        }
        if let Some(original) = &self.original {
            if !is_subsequence(candidate, original) {
                return false;
            }
        }
        self.tests += 1;
        let ok = (self.predicate)(candidate);
        if ok && shortlex_less(candidate, &self.best) {
            self.best = candidate.to_vec();
        }
        ok
    }

    /// Also true once the deadline passed or a stop was asked for, though
    /// no test ran since: a pass whose candidates all come from the cache
    /// runs no test, and must still stop.
    fn exhausted(&self) -> bool {
        self.exhausted
            || self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.stop.is_some_and(|f| f())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::contains;
    use super::*;

    #[test]
    fn reaches_the_minimum_without_a_budget() {
        let input = b"xxxxAxxxxBxxxxCxxxx";
        let s = Shrinker::new().shrink(input, |c| {
            contains(c, b"A") && contains(c, b"B") && contains(c, b"C")
        });
        assert_eq!(s.input, b"ABC");
        assert!(!s.budget_exhausted);
        assert!(s.tests > 0);
    }

    #[test]
    fn a_test_budget_is_respected_and_the_best_so_far_kept() {
        let input: Vec<u8> = (0..2000u32).map(|i| (i % 251) as u8).collect();
        let s = Shrinker::new()
            .max_tests(7)
            .shrink(&input, |c| c.len() >= 10 && c[0] == 0);
        assert_eq!(s.tests, 7);
        assert!(s.budget_exhausted);
        assert!(
            s.input.len() < input.len(),
            "seven tests halve at least once"
        );
        assert!(
            s.input.len() >= 10 && s.input[0] == 0,
            "still satisfies the predicate"
        );
    }

    #[test]
    fn the_result_always_satisfies_the_predicate_and_is_never_larger() {
        let mut seed = 99u64;
        for round in 0..50 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = 1 + (seed >> 33) as usize % 300;
            let input: Vec<u8> = (0..len)
                .map(|i| ((seed >> (i % 50)) as u8) ^ i as u8)
                .collect();
            let key = input[len / 2];
            let pred = |c: &[u8]| c.iter().filter(|&&b| b == key).count() >= 1;
            let s = Shrinker::new()
                .max_tests(1 + round * 3)
                .shrink(&input, pred);
            assert!(pred(&s.input));
            assert!(s.input.len() <= input.len());
        }
    }

    #[test]
    fn deletions_only_keeps_every_value_and_still_deletes() {
        // Interesting while the two large values survive, in order; the
        // default pipeline would also lower the bytes between them.
        let input = b"\x00\x01\xff\x07\x07\x07\xfe\x10\x20".to_vec();
        let pred = |c: &[u8]| contains(c, b"\xff") && contains(c, b"\xfe") && c.len() >= 4;
        let mut called_on_a_changed_value = false;
        let s = Shrinker::new().deletions_only(true).shrink(&input, |c| {
            called_on_a_changed_value |= !is_subsequence(c, &input);
            pred(c)
        });
        assert!(!called_on_a_changed_value);
        assert!(is_subsequence(&s.input, &input));
        assert_eq!(s.input.len(), 4, "{:?}", s.input);
        assert!(pred(&s.input));
        let lowered = Shrinker::new().shrink(&input, pred);
        assert!(
            !is_subsequence(&lowered.input, &input),
            "without the option values are lowered: {:?}",
            lowered.input
        );
    }

    #[test]
    fn subsequences_are_recognised() {
        assert!(is_subsequence(b"", b"abc"));
        assert!(is_subsequence(b"ac", b"abc"));
        assert!(is_subsequence(b"abc", b"abc"));
        assert!(!is_subsequence(b"ca", b"abc"));
        assert!(!is_subsequence(b"abcc", b"abc"));
        assert!(!is_subsequence(b"a\x00", b"abc"));
    }

    #[test]
    fn repeated_candidates_come_from_the_cache() {
        let mut calls = 0;
        let s = Shrinker::new()
            .strategy(Strategy::Ddmin)
            .shrink(b"aaaaaaaaaaaaaaaab", |c| {
                calls += 1;
                c.contains(&b'b')
            });
        assert_eq!(s.input, b"b");
        assert_eq!(s.tests, calls);
        assert!(s.cache_hits > 0, "ddmin asks some subsets twice");
    }
}
