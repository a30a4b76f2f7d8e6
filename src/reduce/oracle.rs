//! The one interface every reducer talks to.
//!
//! A reducer proposes candidates (sequences of elements: bytes, tokens, tree
//! nodes, choices) and asks an [`Oracle`] whether each is still *interesting*
//! (for `cargo reduce-crash`: crashes with the same signature as the
//! original). Reducers never learn how the answer is produced, so the same
//! algorithm runs against a pure predicate in unit tests and against a fuzz
//! target running in another process in production.
//!
//! [`Cached`] sits in front of any oracle: repeated candidates are answered
//! from memory and counted separately, the way the Fuzzing Book's
//! `CachingReducer` counts `tests`.
//!
//! Any `FnMut(&[E]) -> bool` is an oracle; a type of one's own can say
//! more (here: that it stops after a budget). Either runs any reducer:
//!
//! ```
//! use reduce_crash::reduce::ddmin::ddmin;
//! use reduce_crash::reduce::oracle::{Cached, Oracle};
//!
//! /// Interesting while the tokens still hold both `(` and `)`, for at
//! /// most `left` more tests.
//! struct Parens {
//!     left: u32,
//! }
//!
//! impl Oracle<&'static str> for Parens {
//!     fn test(&mut self, candidate: &[&'static str]) -> bool {
//!         if self.left == 0 {
//!             return false;
//!         }
//!         self.left -= 1;
//!         candidate.contains(&"(") && candidate.contains(&")")
//!     }
//!
//!     fn exhausted(&self) -> bool {
//!         self.left == 0
//!     }
//! }
//!
//! let tokens = ["let", "x", "=", "f", "(", "1", ",", "2", ")", ";"];
//! let mut oracle = Cached::new(Parens { left: 1_000 });
//! assert_eq!(ddmin(&tokens, &mut oracle), ["(", ")"]);
//!
//! // A closure is an oracle too.
//! let mut even = |c: &[u8]| c.iter().filter(|&&b| b == b'x').count() == 2;
//! assert!(even.test(b"axbxc"));
//! ```

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// Decides whether a candidate keeps the property being reduced for.
pub trait Oracle<E> {
    /// `true` when `candidate` is still interesting.
    fn test(&mut self, candidate: &[E]) -> bool;

    /// Index of the first interesting candidate, as if each were passed to
    /// [`Oracle::test`] in order until one succeeds. Implementations may
    /// evaluate several candidates at once (speculatively); the answer must
    /// be the same as the sequential one.
    fn first_interesting(&mut self, candidates: &[Vec<E>]) -> Option<usize> {
        candidates.iter().position(|c| self.test(c))
    }

    /// `true` once the oracle will answer `false` to everything from now on
    /// (the user interrupted, a budget ran out). Reducers may return early.
    fn exhausted(&self) -> bool {
        false
    }

    /// How many candidates this oracle has actually run so far, if it counts
    /// them (a cache in front does: its misses); `None` when it cannot tell.
    fn executed(&self) -> Option<u64> {
        None
    }

    /// The reducer is entering the pass `name` (`truncate`, `ddmin`, …):
    /// for progress shown to a person only, never for answers.
    fn phase(&mut self, _name: &'static str) {}

    /// Where the draws of a choice sequence begin and end, if the oracle can
    /// tell (a typed fuzz target's driver probes its own decoder); `None`
    /// when it cannot. Reducers use it only to aim their candidates: every
    /// candidate is still judged by [`Oracle::test`].
    fn spans(&mut self, _candidate: &[E]) -> Option<Vec<Span>> {
        None
    }

    /// How a candidate reads to a person (a typed target's `Debug` form), if
    /// the oracle can tell; `None` when it cannot. Reducers use it only to
    /// choose among interesting candidates of the same length.
    fn render(&mut self, _candidate: &[E]) -> Option<String> {
        None
    }

    /// Whether `candidate`, which [`Oracle::test`] found not interesting,
    /// still failed another way (a different crash), if the oracle can
    /// tell; `None` when it cannot. Reducers use it only to aim their
    /// candidates (a nest that overflows the stack in the wrong place is
    /// deep enough, one that does not crash is not): every candidate is
    /// still judged by [`Oracle::test`].
    fn failed_otherwise(&mut self, _candidate: &[E]) -> Option<bool> {
        None
    }
}

/// A run of elements that one draw consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span {
    /// First element of the run.
    pub start: usize,
    /// One past the last element.
    pub end: usize,
    pub kind: SpanKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpanKind {
    /// Changing these elements changes one leaf value (an integer, a
    /// character, a bool) and nothing else.
    Leaf,
    /// Changing any of these elements changes the shape of the value (a
    /// collection's continuation flag, an enum variant, an `Option` tag, a
    /// length): what follows is read differently.
    Structural,
    /// Changing these elements changes nothing (not consumed, or ignored).
    Unused,
}

impl<E, F: FnMut(&[E]) -> bool> Oracle<E> for F {
    fn test(&mut self, candidate: &[E]) -> bool {
        self(candidate)
    }
}

/// How many questions an oracle was asked and how many it had to execute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Every `test` call, cached or not.
    pub calls: u64,
    /// Calls that reached the inner oracle (cache misses).
    pub executed: u64,
    /// Calls answered from the cache.
    pub cache_hits: u64,
    /// Executed calls that answered `true`.
    pub interesting: u64,
}

/// A candidate as the cache knows it: its length and a 128-bit hash of its
/// elements, never the elements themselves. Keeping whole candidates cost a
/// copy of every one tested (gigabytes for a reduction of a 50 KB input)
/// and three SipHash passes over each (40% of the time on 50 KB inputs);
/// this is one XXH3 pass. Two different candidates of the same length would
/// have to collide in 128 bits to be confused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    len: usize,
    hash: u128,
}

impl Fingerprint {
    pub fn of<E: Hash>(candidate: &[E]) -> Fingerprint {
        // `[u8]` (and every integer slice) hashes as its length and then
        // all its bytes in one `write`.
        let mut hasher = Xxh3(twox_hash::XxHash3_128::new());
        candidate.hash(&mut hasher);
        Fingerprint {
            len: candidate.len(),
            hash: hasher.0.finish_128(),
        }
    }
}

/// XXH3-128 as a [`Hasher`], for elements of any [`Hash`] type.
struct Xxh3(twox_hash::XxHash3_128);

impl Hasher for Xxh3 {
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }

    fn finish(&self) -> u64 {
        self.0.finish_128() as u64
    }
}

/// A result cache in front of an oracle, with counters.
pub struct Cached<E, O> {
    inner: O,
    cache: HashMap<Fingerprint, bool>,
    stats: Stats,
    /// Buffers for the candidates passed on when some are left out (kept:
    /// fresh 50 KB copies cost page faults).
    scratch: Vec<Vec<E>>,
}

impl<E: Hash + Eq + Clone, O: Oracle<E>> Cached<E, O> {
    pub fn new(inner: O) -> Self {
        Cached {
            inner,
            cache: HashMap::new(),
            stats: Stats::default(),
            scratch: Vec::new(),
        }
    }

    /// Records a verdict learnt elsewhere (e.g. the original input, which
    /// the caller has already verified) without counting a test.
    pub fn remember(&mut self, candidate: &[E], verdict: bool) {
        self.cache.insert(Fingerprint::of(candidate), verdict);
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    pub fn inner(&self) -> &O {
        &self.inner
    }

    pub fn inner_mut(&mut self) -> &mut O {
        &mut self.inner
    }

    pub fn into_inner(self) -> O {
        self.inner
    }
}

impl<E: Hash + Eq + Clone, O: Oracle<E>> Oracle<E> for Cached<E, O> {
    fn test(&mut self, candidate: &[E]) -> bool {
        self.stats.calls += 1;
        let key = Fingerprint::of(candidate);
        if let Some(&verdict) = self.cache.get(&key) {
            self.stats.cache_hits += 1;
            return verdict;
        }
        let verdict = self.inner.test(candidate);
        self.stats.executed += 1;
        self.stats.interesting += u64::from(verdict);
        // Answers given while exhausted are not facts about the candidate.
        if !self.inner.exhausted() {
            self.cache.insert(key, verdict);
        }
        verdict
    }

    fn first_interesting(&mut self, candidates: &[Vec<E>]) -> Option<usize> {
        // Sequential semantics: the answer is the first interesting candidate
        // in order. Candidates before the first cached-`true` one that are not
        // cached go to the inner oracle as one batch.
        // A candidate repeated within the list is sent once: its later copies
        // can only be reached if the first answered `false`.
        let mut batch_index: Vec<usize> = Vec::new();
        let mut batch_keys: Vec<Fingerprint> = Vec::new();
        let mut pending: HashSet<Fingerprint> = HashSet::new();
        let mut cached_true = None;
        for (i, c) in candidates.iter().enumerate() {
            let key = Fingerprint::of(c);
            match self.cache.get(&key) {
                Some(true) => {
                    cached_true = Some(i);
                    break;
                }
                Some(false) => {}
                None => {
                    if pending.insert(key) {
                        batch_index.push(i);
                        batch_keys.push(key);
                    }
                }
            }
        }
        let found = if batch_index.is_empty() {
            None
        } else if batch_index.last() == Some(&(batch_index.len() - 1)) {
            // No candidate left out before the last one sent: the batch is a
            // prefix of the list, passed as it is.
            self.inner
                .first_interesting(&candidates[..batch_index.len()])
        } else {
            let mut batch = std::mem::take(&mut self.scratch);
            if batch.len() < batch_index.len() {
                batch.resize_with(batch_index.len(), Vec::new);
            }
            for (buffer, &i) in batch.iter_mut().zip(&batch_index) {
                buffer.clear();
                buffer.extend_from_slice(&candidates[i]);
            }
            let found = self.inner.first_interesting(&batch[..batch_index.len()]);
            self.scratch = batch;
            found
        };
        let evaluated = found.map_or(batch_index.len(), |k| k + 1);
        let exhausted = self.inner.exhausted();
        for (k, key) in batch_keys.into_iter().enumerate().take(evaluated) {
            let verdict = found == Some(k);
            self.stats.executed += 1;
            self.stats.interesting += u64::from(verdict);
            if !exhausted {
                self.cache.insert(key, verdict);
            }
        }
        let answer = found.map(|k| batch_index[k]).or(cached_true);
        let calls = answer.map_or(candidates.len(), |i| i + 1) as u64;
        self.stats.calls += calls;
        self.stats.cache_hits += calls - evaluated as u64;
        answer
    }

    fn exhausted(&self) -> bool {
        self.inner.exhausted()
    }

    fn phase(&mut self, name: &'static str) {
        self.inner.phase(name);
    }

    fn executed(&self) -> Option<u64> {
        Some(self.stats.executed)
    }

    fn spans(&mut self, candidate: &[E]) -> Option<Vec<Span>> {
        self.inner.spans(candidate)
    }

    fn render(&mut self, candidate: &[E]) -> Option<String> {
        self.inner.render(candidate)
    }

    fn failed_otherwise(&mut self, candidate: &[E]) -> Option<bool> {
        self.inner.failed_otherwise(candidate)
    }
}

/// Shorter, or as long and lexicographically smaller.
pub fn shortlex_less(a: &[u8], b: &[u8]) -> bool {
    (a.len(), a) < (b.len(), b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_answers_repeats_without_executing() {
        let mut runs = 0;
        let mut o = Cached::new(|c: &[u8]| {
            runs += 1;
            c.contains(&b'x')
        });
        assert!(o.test(b"ax"));
        assert!(o.test(b"ax"));
        assert!(!o.test(b"a"));
        let s = o.stats();
        assert_eq!(
            (s.calls, s.executed, s.cache_hits, s.interesting),
            (3, 2, 1, 1)
        );
        drop(o);
        assert_eq!(runs, 2);
    }

    #[test]
    fn first_interesting_matches_sequential_order() {
        let cands: Vec<Vec<u8>> = vec![b"a".to_vec(), b"b".to_vec(), b"xb".to_vec(), b"x".to_vec()];
        let mut o = Cached::new(|c: &[u8]| c.contains(&b'x'));
        assert!(!o.test(b"a"));
        assert_eq!(o.first_interesting(&cands), Some(2));
        assert_eq!(o.first_interesting(&cands[..2]), None);
        // "b" was cached as false by the batch, "a" before it.
        assert_eq!(o.stats().executed, 3);
    }

    #[test]
    fn first_interesting_sends_each_unknown_candidate_once_in_order() {
        let sent = std::cell::RefCell::new(Vec::new());
        let mut o = Cached::new(|c: &[u8]| {
            sent.borrow_mut().push(c.to_vec());
            c == b"d"
        });
        assert!(!o.test(b"b"));
        sent.borrow_mut().clear();
        // "b" is known, the second "a" repeats the first: neither is sent.
        let cands: Vec<Vec<u8>> = [&b"a"[..], b"b", b"c", b"a", b"d", b"e"]
            .map(<[u8]>::to_vec)
            .to_vec();
        assert_eq!(o.first_interesting(&cands), Some(4));
        assert_eq!(
            *sent.borrow(),
            [b"a".to_vec(), b"c".to_vec(), b"d".to_vec()]
        );
        // Everything up to "d" is known now; nothing is sent again.
        sent.borrow_mut().clear();
        assert_eq!(o.first_interesting(&cands), Some(4));
        assert!(sent.borrow().is_empty());
        let s = o.stats();
        assert_eq!((s.calls, s.executed, s.cache_hits), (1 + 5 + 5, 4, 7));
        assert_eq!(o.executed(), Some(4));
    }
}
