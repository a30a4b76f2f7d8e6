//! Truncation: the shortest prefix that is still interesting.
//!
//! The cheapest coarse pass, run first: most of a large binary crash input
//! is usually a tail the target never reads (or reads only after the bug).
//! Prefixes of 1, 2, 4, 8, … bytes are tried first (one round trip for all
//! of them), then the length is binary-searched between the largest power
//! of two that failed and the smallest that worked. `O(log n)` tests.

use crate::reduce::oracle::Oracle;

/// The shortest interesting prefix of `input` (assumed interesting, never
/// tested) that the search finds; `input` itself if none is.
pub fn truncate<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    let mut lengths = Vec::new();
    let mut p = 1;
    while p < input.len() {
        lengths.push(p);
        p *= 2;
    }
    let candidates: Vec<Vec<u8>> = lengths.iter().map(|&l| input[..l].to_vec()).collect();
    let (mut bad, mut good) = match oracle.first_interesting(&candidates) {
        Some(0) => return input[..1].to_vec(),
        Some(k) => (lengths[k - 1], lengths[k]),
        None => match lengths.last() {
            Some(&l) => (l, input.len()),
            None => return input.to_vec(),
        },
    };
    while good - bad > 1 && !oracle.exhausted() {
        let mid = bad + (good - bad) / 2;
        if oracle.test(&input[..mid]) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    input[..good].to_vec()
}

#[cfg(test)]
mod tests {
    use super::super::testing::{arb_case, shortlex_le, Recorder};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn finds_the_shortest_prefix_in_logarithmic_tests() {
        let input: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
        let mut rec = Recorder::new(|c: &[u8]| c.len() >= 3001);
        assert_eq!(truncate(&input, &mut rec).len(), 3001);
        assert!(rec.log.len() <= 16 + 12, "{}", rec.log.len());
        assert_eq!(truncate(b"abc", &mut |c: &[u8]| c.len() == 3), b"abc");
        assert_eq!(truncate(b"abc", &mut |c: &[u8]| !c.is_empty()), b"a");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn result_is_interesting_and_never_larger(case in arb_case()) {
            let holds = |c: &[u8]| case.holds(c);
            let result = truncate(&case.input, &mut { holds });
            prop_assert!(holds(&result));
            prop_assert!(shortlex_le(&result, &case.input));
        }
    }
}
