//! Lazily built candidate lists handed to [`Oracle::first_interesting`].
//!
//! Many reducers scan a list of candidates in order and stop at the first
//! interesting one (ddmin's complements at one granularity, chunk deletions
//! at successive positions, byte replacements). Passing the whole list to
//! `first_interesting` lets a production oracle evaluate several of them in
//! one round trip, but materialising every candidate at once can cost
//! `O(len²)` memory. [`Batch`] builds the list on demand in bounded slices,
//! reuses the candidate buffers between slices and calls, and keeps the
//! sequential meaning: the answer is the index of the first interesting
//! candidate in the whole list.

use crate::reduce::oracle::Oracle;

/// At most this many candidates go to the oracle in one call.
const MAX_CANDIDATES: usize = 128;

/// A slice stops growing once its candidates hold this many elements (a
/// single candidate larger than this still goes alone). Small enough for a
/// slice of byte candidates to stay in the CPU cache while the oracle
/// hashes, compares and sends them: with 50 KB candidates, 4 Mi elements
/// (128 candidates) ran 60k tests/s and 512 Ki (10) about 100k.
const MAX_ELEMENTS: usize = 1 << 19;

/// Reusable candidate buffers for [`Batch::first_interesting`].
pub(crate) struct Batch<E> {
    buffers: Vec<Vec<E>>,
}

impl<E> Batch<E> {
    /// An empty pool; buffers are allocated on first use and kept.
    pub(crate) fn new() -> Self {
        Batch {
            buffers: Vec::new(),
        }
    }

    /// Index of the first interesting candidate among `count` candidates,
    /// where `build(i, buffer)` writes candidate `i` into an empty `buffer`.
    ///
    /// Equivalent to testing candidates `0, 1, …` one by one until one is
    /// interesting. Returns `None` as soon as the oracle is exhausted.
    pub(crate) fn first_interesting<O, F>(
        &mut self,
        oracle: &mut O,
        count: usize,
        mut build: F,
    ) -> Option<usize>
    where
        O: Oracle<E> + ?Sized,
        F: FnMut(usize, &mut Vec<E>),
    {
        let mut next = 0;
        while next < count {
            if oracle.exhausted() {
                return None;
            }
            let filled = self.fill(next, count, &mut build);
            if let Some(k) = oracle.first_interesting(&self.buffers[..filled]) {
                return Some(next + k);
            }
            next += filled;
        }
        None
    }

    /// Builds candidates `first..` into the pool until a limit is reached;
    /// returns how many were built (at least one).
    fn fill<F>(&mut self, first: usize, count: usize, build: &mut F) -> usize
    where
        F: FnMut(usize, &mut Vec<E>),
    {
        let mut filled = 0;
        let mut elements = 0;
        while first + filled < count && filled < MAX_CANDIDATES && elements < MAX_ELEMENTS {
            if filled == self.buffers.len() {
                self.buffers.push(Vec::new());
            }
            let buffer = &mut self.buffers[filled];
            buffer.clear();
            build(first + filled, buffer);
            elements += buffer.len();
            filled += 1;
        }
        filled
    }
}

/// Writes `input` without the elements `lo..hi` into `out`.
pub(crate) fn write_without<E: Clone>(input: &[E], lo: usize, hi: usize, out: &mut Vec<E>) {
    out.reserve(input.len() - (hi - lo));
    out.extend_from_slice(&input[..lo]);
    out.extend_from_slice(&input[hi..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records how candidates reach the oracle.
    struct Spy {
        batches: Vec<usize>,
        /// First element of every tested candidate.
        tested: Vec<u32>,
        interesting: u32,
    }

    impl Oracle<u32> for Spy {
        fn test(&mut self, candidate: &[u32]) -> bool {
            self.tested.push(candidate[0]);
            candidate[0] == self.interesting
        }
        fn first_interesting(&mut self, candidates: &[Vec<u32>]) -> Option<usize> {
            self.batches.push(candidates.len());
            candidates.iter().position(|c| self.test(c))
        }
    }

    #[test]
    fn finds_first_interesting_across_slices() {
        let mut spy = Spy {
            batches: vec![],
            tested: vec![],
            interesting: 300,
        };
        let mut batch = Batch::new();
        let found = batch.first_interesting(&mut spy, 1000, |i, out| out.push(i as u32));
        assert_eq!(found, Some(300));
        assert_eq!(spy.batches, vec![128, 128, 128]);
        assert_eq!(spy.tested, (0..=300).collect::<Vec<u32>>());
    }

    #[test]
    fn none_when_nothing_interesting() {
        let mut spy = Spy {
            batches: vec![],
            tested: vec![],
            interesting: 99,
        };
        let mut batch = Batch::new();
        assert_eq!(
            batch.first_interesting(&mut spy, 5, |i, out| out.push(i as u32)),
            None
        );
        assert_eq!(
            batch.first_interesting(&mut spy, 0, |i, out| out.push(i as u32)),
            None
        );
        assert_eq!(spy.batches, vec![5]);
    }

    #[test]
    fn large_candidates_are_sent_in_smaller_slices() {
        let mut spy = Spy {
            batches: vec![],
            tested: vec![],
            interesting: 7,
        };
        let mut batch = Batch::new();
        let found = batch.first_interesting(&mut spy, 8, |i, out| {
            out.push(i as u32);
            out.resize(MAX_ELEMENTS / 2, 0);
        });
        assert_eq!(found, Some(7));
        assert_eq!(spy.batches, vec![2, 2, 2, 2]);
    }

    #[test]
    fn write_without_removes_the_range() {
        let mut out = Vec::new();
        write_without(&[1, 2, 3, 4, 5], 1, 3, &mut out);
        assert_eq!(out, vec![1, 4, 5]);
    }
}
