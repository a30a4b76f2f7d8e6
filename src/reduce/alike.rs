//! Edits that look alike are answered alike.
//!
//! On a deep nest most of a reduction's tests are the same edit at another
//! level: delete one byte of a unit, lower one byte, cut two. Where the
//! levels have the same shape those candidates fail alike, and each of them
//! runs the whole recursion (about 10 ms on a 16 KB regex nest: its result
//! holds 228 distinct ±16-byte contexts over 16,165 positions, so a round of
//! the passes asked some 10,000 full-depth questions whose answers were
//! known from a few hundred).
//!
//! [`Alike`] sits in front of the byte pipeline's oracle. It describes each
//! candidate by its *edit* against the *base*, the last interesting input:
//! the bytes it removes and inserts (after the longest common prefix and
//! suffix) and [`CONTEXT`] bytes of the base on each side. While the base
//! stays the same, a candidate whose edit is described the same way as one
//! that already failed is answered "not interesting" without being run. Any
//! interesting answer makes a new base and forgets every failure: an edit
//! elsewhere may have made the difference (a definition no longer used),
//! so after each success everything is asked again.
//!
//! What it costs: a result is 1-minimal except where two places look the
//! same for [`CONTEXT`] bytes on each side and mean different things (a
//! repeated line before and after a marker that tells them apart). It never
//! makes a result untrustworthy: only "no" is predicted, and every
//! candidate kept was run.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use crate::reduce::oracle::{Oracle, Span};

/// Bytes of the base on each side of an edit that describe it. Covers two
/// units of a nest of units up to 8 bytes (`(?:(x|` is 7) on each side: a
/// level is judged with its neighbours' shape.
pub const CONTEXT: usize = 16;

/// Answers "not interesting" for an edit alike one that failed on the same
/// base; passes everything else to the inner oracle.
pub struct Alike<'a, O: ?Sized> {
    inner: &'a mut O,
    /// The last interesting input (initially the reduction's input).
    base: Vec<u8>,
    /// Descriptions of the edits of `base` that failed.
    failed: HashSet<u64>,
    /// Candidates answered without a run.
    predicted: u64,
    /// Candidates of the current batch that are run (reused).
    run: Vec<Vec<u8>>,
}

impl<'a, O: Oracle<u8> + ?Sized> Alike<'a, O> {
    /// `base` is assumed interesting (a reduction's input).
    pub fn new(inner: &'a mut O, base: &[u8]) -> Self {
        Alike {
            inner,
            base: base.to_vec(),
            failed: HashSet::new(),
            predicted: 0,
            run: Vec::new(),
        }
    }

    /// Candidates answered "not interesting" without a run.
    pub fn predicted(&self) -> u64 {
        self.predicted
    }

    fn interesting(&mut self, candidate: &[u8]) {
        self.base.clear();
        self.base.extend_from_slice(candidate);
        self.failed.clear();
    }
}

/// How `candidate` differs from `base`: a hash of the bytes removed, the
/// bytes inserted and up to [`CONTEXT`] bytes of `base` on either side
/// (with how many there were, so an edit near an end is its own). The edit
/// is placed as far left as it goes (the longest common prefix first).
///
/// Two deletions with the base's bytes kept between them (a pair of
/// brackets unwrapped, as the nesting pass does) are two edits, each
/// described by its own surroundings: unwrapping one level of a nest is
/// then alike unwrapping another, whatever lies between its brackets.
pub fn describe(base: &[u8], candidate: &[u8]) -> u64 {
    let prefix = common_prefix(base, candidate);
    let room = base.len().min(candidate.len()) - prefix;
    let suffix = common_suffix(&base[prefix..], &candidate[prefix..]).min(room);
    let (removed_end, inserted_end) = (base.len() - suffix, candidate.len() - suffix);
    let (removed, inserted) = (prefix..removed_end, &candidate[prefix..inserted_end]);
    let mut h = DefaultHasher::new();
    // A candidate may be longer than the base (an insertion; or the base
    // is not what the candidate was made from).
    let kept = removed.len().saturating_sub(inserted.len());
    if !inserted.is_empty() && kept > 0 && kept <= 2 * CONTEXT {
        // Is what was inserted the base's own bytes, between two deletions?
        let middle = &base[removed.clone()];
        if let Some(a) = (1..kept).find(|&a| &middle[a..a + inserted.len()] == inserted) {
            let second = prefix + a + inserted.len();
            hunk(base, prefix..prefix + a, &[], &mut h);
            hunk(base, second..removed_end, &[], &mut h);
            return h.finish();
        }
    }
    hunk(base, removed, inserted, &mut h);
    h.finish()
}

/// Hashes one edit: `base[removed]` replaced by `inserted`, with up to
/// [`CONTEXT`] bytes of `base` on each side.
fn hunk(base: &[u8], removed: std::ops::Range<usize>, inserted: &[u8], h: &mut DefaultHasher) {
    base[removed.start.saturating_sub(CONTEXT)..removed.start].hash(h);
    base[removed.clone()].hash(h);
    inserted.hash(h);
    base[removed.end..(removed.end + CONTEXT).min(base.len())].hash(h);
}

/// Length of the longest common prefix, a block at a time.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n]
        .iter()
        .zip(&b[i..n])
        .take_while(|(x, y)| x == y)
        .count()
}

/// Length of the longest common suffix, a block at a time.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut i = 0;
    while i + BLOCK <= n && a[n - i - BLOCK..n - i] == b[n - i - BLOCK..n - i] {
        i += BLOCK;
    }
    i + a[..n - i]
        .iter()
        .rev()
        .zip(b[..n - i].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

impl<O: Oracle<u8> + ?Sized> Oracle<u8> for Alike<'_, O> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        let edit = describe(&self.base, candidate);
        if self.failed.contains(&edit) {
            self.predicted += 1;
            return false;
        }
        if self.inner.test(candidate) {
            self.interesting(candidate);
            true
        } else {
            if !self.inner.exhausted() {
                self.failed.insert(edit);
            }
            false
        }
    }

    fn first_interesting(&mut self, candidates: &[Vec<u8>]) -> Option<usize> {
        let edits: Vec<u64> = candidates.iter().map(|c| describe(&self.base, c)).collect();
        // Within the batch too: the second of two alike edits is answered
        // by the first (the answer is sequential: a success ends it).
        let mut seen = HashSet::new();
        let keep: Vec<usize> = (0..candidates.len())
            .filter(|&i| !self.failed.contains(&edits[i]) && seen.insert(edits[i]))
            .collect();
        self.predicted += (candidates.len() - keep.len()) as u64;
        let found = if keep.len() == candidates.len() {
            self.inner.first_interesting(candidates)
        } else {
            self.run.resize_with(keep.len(), Vec::new);
            for (slot, &i) in self.run.iter_mut().zip(&keep) {
                slot.clear();
                slot.extend_from_slice(&candidates[i]);
            }
            let run = std::mem::take(&mut self.run);
            let found = self.inner.first_interesting(&run).map(|k| keep[k]);
            self.run = run;
            found
        };
        match found {
            Some(i) => {
                // Alike edits before it were answered by ones that failed.
                self.interesting(&candidates[i]);
                Some(i)
            }
            None => {
                if !self.inner.exhausted() {
                    self.failed.extend(keep.iter().map(|&i| edits[i]));
                }
                None
            }
        }
    }

    fn exhausted(&self) -> bool {
        self.inner.exhausted()
    }

    fn executed(&self) -> Option<u64> {
        self.inner.executed()
    }

    fn phase(&mut self, name: &'static str) {
        self.inner.phase(name);
    }

    fn spans(&mut self, candidate: &[u8]) -> Option<Vec<Span>> {
        self.inner.spans(candidate)
    }

    fn render(&mut self, candidate: &[u8]) -> Option<String> {
        self.inner.render(candidate)
    }

    fn failed_otherwise(&mut self, candidate: &[u8]) -> Option<bool> {
        self.inner.failed_otherwise(candidate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_is_placed_leftmost_and_described_by_its_surroundings() {
        let base = b"x(ab(ab(ab(ab(ab(ab(ab(ab(ab(ab(ab(ab(ab(ab(ab)))))))))))))))y";
        // Deleting the `a` of the 7th or of the 9th unit: both far from the
        // ends, the same bytes around them.
        let at = |i: usize| {
            let mut c = base.to_vec();
            c.remove(i);
            c
        };
        assert_eq!(&base[20..21], b"a");
        assert_eq!(&base[26..27], b"a");
        assert_eq!(describe(base, &at(20)), describe(base, &at(26)));
        // Near the start the context is shorter: its own edit.
        assert_ne!(describe(base, &at(2)), describe(base, &at(26)));
        // Another byte, another edit.
        assert_ne!(describe(base, &at(15)), describe(base, &at(26)));
        // A run: deleting any of its bytes is the same candidate, and the
        // same edit.
        assert_eq!(describe(b"abbbbc", b"abbbc"), describe(b"abbbbc", b"abbbc"));
        // Replacing a byte.
        assert_ne!(describe(b"abc", b"aXc"), describe(b"abc", b"aYc"));
        // Inserting, and a candidate unlike the base.
        assert_ne!(describe(b"abc", b"abXc"), describe(b"abc", b"abYc"));
        assert_ne!(describe(b"ab", b"xyzxyz"), describe(b"ab", b""));
        assert_eq!(describe(b"", b""), describe(b"", b""));
        // Unwrapping a level: its two brackets go, whatever is between.
        let unwrap = |i: usize, j: usize| {
            let mut c = base.to_vec();
            c.remove(j);
            c.remove(i);
            c
        };
        assert_eq!(&base[19..20], b"(");
        assert_eq!(&base[28..29], b"(");
        assert_eq!(
            describe(base, &unwrap(19, 50)),
            describe(base, &unwrap(28, 52))
        );
        assert_ne!(
            describe(base, &unwrap(19, 50)),
            describe(base, &unwrap(20, 50))
        );
    }

    proptest::proptest! {
        #[test]
        fn any_pair_is_described(base in proptest::collection::vec(0u8..4, 0..80),
                                 candidate in proptest::collection::vec(0u8..4, 0..80)) {
            describe(&base, &candidate);
        }
    }

    #[test]
    fn common_ends_are_found_a_block_at_a_time() {
        let a: Vec<u8> = (0..200u8).collect();
        for k in [0, 1, 63, 64, 65, 130, 199] {
            let mut b = a.clone();
            b[k] ^= 1;
            assert_eq!(common_prefix(&a, &b), k);
            assert_eq!(common_suffix(&a, &b), 199 - k);
        }
        assert_eq!(common_prefix(&a, &a[..70]), 70);
        assert_eq!(common_suffix(&a, &a[130..]), 70);
        assert_eq!(common_suffix(b"", b"x"), 0);
    }

    #[test]
    fn an_alike_edit_is_answered_without_a_run_until_something_succeeds() {
        let base: Vec<u8> = b"[".repeat(40).into_iter().chain(b"]".repeat(40)).collect();
        let runs = std::cell::Cell::new(0);
        // Interesting while the brackets balance and there are 30 pairs.
        let mut inner = |c: &[u8]| {
            runs.set(runs.get() + 1);
            let open = c.iter().filter(|&&b| b == b'[').count();
            let close = c.iter().filter(|&&b| b == b']').count();
            open == close && open >= 30
        };
        let mut alike = Alike::new(&mut inner, &base);
        let without = |i: usize| {
            let mut c = base.clone();
            c.remove(i);
            c
        };
        // Deleting one `[` fails; deleting another is the same edit.
        assert!(!alike.test(&without(20)));
        assert!(!alike.test(&without(21)));
        assert_eq!((runs.get(), alike.predicted()), (1, 1));
        // A pair goes: a new base, and every question is asked again.
        let mut c = base.clone();
        c.remove(60);
        c.remove(10);
        assert!(alike.test(&c));
        let mut d = c.clone();
        d.remove(20);
        assert!(!alike.test(&d));
        assert_eq!((runs.get(), alike.predicted()), (3, 1));
    }

    #[test]
    fn alike_edits_in_a_batch_are_run_once() {
        let unit = b"(x|";
        let mut base: Vec<u8> = unit.repeat(20);
        base.extend(b")".repeat(20));
        let runs = std::cell::Cell::new(0);
        let mut inner = |c: &[u8]| {
            runs.set(runs.get() + 1);
            c.len() == 1000
        };
        let mut alike = Alike::new(&mut inner, &base);
        // Deleting the `x` of units 6..14: all alike.
        let candidates: Vec<Vec<u8>> = (6..14)
            .map(|k| {
                let mut c = base.clone();
                c.remove(3 * k + 1);
                c
            })
            .collect();
        assert_eq!(alike.first_interesting(&candidates), None);
        assert_eq!(alike.predicted(), 7);
        // And again, all predicted.
        assert_eq!(alike.first_interesting(&candidates), None);
        assert_eq!(alike.predicted(), 15);
        assert_eq!(runs.get(), 1);
    }
}
