//! Test support shared by the reducer modules: a recording oracle, random
//! "interesting" properties derived from a random input (for proptest), and
//! the minimality checks the properties assert.

use crate::reduce::oracle::Oracle;
use proptest::prelude::*;
use proptest::sample::Index;

/// Whether `needle` occurs in `hay` (the predicate of many small tests).
pub(crate) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// An oracle that logs every candidate it is asked about and can pretend
/// to be interrupted after a number of tests.
pub(crate) struct Recorder<E, F> {
    predicate: F,
    pub(crate) log: Vec<Vec<E>>,
    limit: Option<usize>,
}

impl<E: Clone, F: FnMut(&[E]) -> bool> Recorder<E, F> {
    pub(crate) fn new(predicate: F) -> Self {
        Recorder {
            predicate,
            log: Vec::new(),
            limit: None,
        }
    }

    /// Becomes exhausted (answers `false`, stops logging) after `tests`.
    pub(crate) fn exhaust_after(mut self, tests: usize) -> Self {
        self.limit = Some(tests);
        self
    }
}

impl<E: Clone, F: FnMut(&[E]) -> bool> Oracle<E> for Recorder<E, F> {
    fn test(&mut self, candidate: &[E]) -> bool {
        if self.exhausted() {
            return false;
        }
        self.log.push(candidate.to_vec());
        (self.predicate)(candidate)
    }

    fn exhausted(&self) -> bool {
        self.limit.is_some_and(|limit| self.log.len() >= limit)
    }
}

/// A property of byte strings that a random input satisfies by
/// construction.
#[derive(Debug, Clone)]
pub(crate) enum Property {
    /// Contains these bytes in this order, not necessarily adjacent.
    Subsequence(Vec<u8>),
    /// Contains this contiguous substring.
    Substring(Vec<u8>),
    /// At least `min_len` bytes long and starts with `first`.
    LongWithFirst { min_len: usize, first: u8 },
    /// Contains `value` at least `at_least` times.
    Count { value: u8, at_least: usize },
    /// Contains the subsequence and has the same length parity (not
    /// monotone: deleting one more byte can make it interesting again).
    SubsequenceWithParity(Vec<u8>, usize),
}

/// A random input together with a property it has.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub(crate) input: Vec<u8>,
    pub(crate) property: Property,
}

impl Case {
    /// Whether `candidate` has the case's property.
    pub(crate) fn holds(&self, candidate: &[u8]) -> bool {
        match &self.property {
            Property::Subsequence(needle) => is_subsequence(needle, candidate),
            Property::Substring(needle) => candidate.windows(needle.len()).any(|w| w == needle),
            Property::LongWithFirst { min_len, first } => {
                candidate.len() >= *min_len && candidate.first() == Some(first)
            }
            Property::Count { value, at_least } => {
                candidate.iter().filter(|&&b| b == *value).count() >= *at_least
            }
            Property::SubsequenceWithParity(needle, parity) => {
                candidate.len() % 2 == *parity && is_subsequence(needle, candidate)
            }
        }
    }
}

fn is_subsequence(needle: &[u8], haystack: &[u8]) -> bool {
    let mut rest = haystack.iter();
    needle.iter().all(|n| rest.any(|h| h == n))
}

/// Random bytes, half from a small alphabet so that repeats are common.
pub(crate) fn arb_input() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        any::<u8>(),
        prop::sample::select(b"0aab(){} \0~\xff".to_vec())
    ];
    prop::collection::vec(byte, 1..64)
}

/// A random input and a random property it has.
pub(crate) fn arb_case() -> impl Strategy<Value = Case> {
    (
        arb_input(),
        0u8..5,
        prop::collection::vec(any::<Index>(), 1..5),
    )
        .prop_map(|(input, kind, picks)| {
            let property = property_from(&input, kind, &picks);
            Case { input, property }
        })
}

/// [`arb_case`] on a binary input of 512 to 2,048 bytes: the size at
/// which the byte pipeline's first round is coarse.
pub(crate) fn arb_large_binary_case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(any::<u8>(), 512..2048),
        0u8..5,
        prop::collection::vec(any::<Index>(), 1..5),
    )
        .prop_map(|(input, kind, picks)| {
            let property = property_from(&input, kind, &picks);
            Case { input, property }
        })
}

fn property_from(input: &[u8], kind: u8, picks: &[Index]) -> Property {
    let len = input.len();
    let pick = |k: usize, n: usize| picks[k % picks.len()].index(n);
    match kind {
        0 => Property::Subsequence(subsequence(input, picks)),
        1 => {
            let start = pick(0, len);
            let end = start + 1 + pick(1, len - start);
            Property::Substring(input[start..end].to_vec())
        }
        2 => Property::LongWithFirst {
            min_len: 1 + pick(0, len),
            first: input[0],
        },
        3 => {
            let value = input[pick(0, len)];
            let count = input.iter().filter(|&&b| b == value).count();
            Property::Count {
                value,
                at_least: 1 + pick(1, count),
            }
        }
        _ => Property::SubsequenceWithParity(subsequence(input, picks), len % 2),
    }
}

fn subsequence(input: &[u8], picks: &[Index]) -> Vec<u8> {
    let mut positions: Vec<usize> = picks.iter().map(|p| p.index(input.len())).collect();
    positions.sort_unstable();
    positions.dedup();
    positions.iter().map(|&p| input[p]).collect()
}

/// Every single-element deletion of `result` is uninteresting.
pub(crate) fn is_one_minimal<E: Clone>(result: &[E], mut holds: impl FnMut(&[E]) -> bool) -> bool {
    (0..result.len()).all(|i| {
        let mut candidate = result.to_vec();
        candidate.remove(i);
        !holds(&candidate)
    })
}

/// `a` is shortlex-smaller than or equal to `b`.
pub(crate) fn shortlex_le(a: &[u8], b: &[u8]) -> bool {
    (a.len(), a) <= (b.len(), b)
}
