//! Zeller & Hildebrandt's `ddmin` ("Simplifying and Isolating
//! Failure-Inducing Input", TSE 2002).
//!
//! This is the algorithm with a proof behind it: its result is 1-minimal
//! (deleting any single element makes it uninteresting), which is why the
//! default pipeline finishes with it after the faster coarse passes. The
//! input is split into `n` chunks; first each chunk alone is tried
//! ("reduce to subset", then `n = 2`), then each complement ("reduce to
//! complement", then `n = n - 1`); when neither works the granularity
//! doubles until chunks are single elements.

use super::batch::Batch;
use super::chunks::Skip;
use crate::reduce::oracle::Oracle;

/// Reduces `input` (assumed interesting, never tested) with ddmin.
///
/// The result is interesting (or the input itself), never longer than the
/// input, and 1-minimal unless the oracle became exhausted. A one-element
/// result is checked against the empty sequence, so the empty result is
/// possible.
pub fn ddmin<E, O>(input: &[E], oracle: &mut O) -> Vec<E>
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    ddmin_with(input, oracle, &mut ())
}

/// [`ddmin`], leaving out the complements (deletions) that `skip` names:
/// the byte pipeline's, the interiors of a nest's long periodic runs
/// ([`NestInteriors`](super::chunks::NestInteriors)), whose deletions are
/// each a full-depth test and fail alike (4,779 tests in 111 s for no byte
/// on a 16 KB regex nest). The result is then 1-minimal except there.
pub fn ddmin_with<E, O>(input: &[E], oracle: &mut O, skip: &mut dyn Skip<E>) -> Vec<E>
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    let mut current = input.to_vec();
    let mut batch = Batch::new();
    let mut n = 2;
    while current.len() >= 2 && !oracle.exhausted() {
        n = n.min(current.len());
        if let Some(i) = first_interesting_subset(&current, n, oracle, &mut batch) {
            let (lo, hi) = chunk(current.len(), n, i);
            current.truncate(hi);
            current.drain(..lo);
            n = 2;
            continue;
        }
        // With two chunks the complements are the subsets just tested.
        if n > 2 {
            if let Some(i) = first_interesting_complement(&current, n, oracle, &mut batch, skip) {
                let (lo, hi) = chunk(current.len(), n, i);
                current.drain(lo..hi);
                n = (n - 1).max(2);
                continue;
            }
        }
        if n == current.len() {
            break;
        }
        n = (2 * n).min(current.len());
    }
    if current.len() == 1 && !oracle.exhausted() && oracle.test(&[]) {
        current.clear();
    }
    current
}

/// Bounds of chunk `i` when `len` elements are split into `n` near-equal
/// chunks.
fn chunk(len: usize, n: usize, i: usize) -> (usize, usize) {
    (i * len / n, (i + 1) * len / n)
}

fn first_interesting_subset<E, O>(
    current: &[E],
    n: usize,
    oracle: &mut O,
    batch: &mut Batch<E>,
) -> Option<usize>
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    batch.first_interesting(oracle, n, |i, out| {
        let (lo, hi) = chunk(current.len(), n, i);
        out.extend_from_slice(&current[lo..hi]);
    })
}

fn first_interesting_complement<E, O>(
    current: &[E],
    n: usize,
    oracle: &mut O,
    batch: &mut Batch<E>,
    skip: &mut dyn Skip<E>,
) -> Option<usize>
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    let tried: Vec<usize> = (0..n)
        .filter(|&i| {
            let (lo, hi) = chunk(current.len(), n, i);
            !skip.skips(current, lo, hi)
        })
        .collect();
    let k = batch.first_interesting(oracle, tried.len(), |k, out| {
        let (lo, hi) = chunk(current.len(), n, tried[k]);
        super::batch::write_without(current, lo, hi, out);
    })?;
    Some(tried[k])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::testing::{arb_case, is_one_minimal, Recorder};
    use proptest::prelude::*;

    #[test]
    fn finds_two_separated_bytes() {
        let input = b"xxxxaxxxxxxxbxxx";
        let pred = |c: &[u8]| c.contains(&b'a') && c.contains(&b'b');
        let mut rec = Recorder::new(pred);
        assert_eq!(ddmin(input, &mut rec), b"ab");
        assert!(
            !rec.log.iter().any(|c| c == input),
            "input must not be tested"
        );
    }

    #[test]
    fn zeller_example_of_eight_deltas() {
        // TSE 2002's 8-delta example: the failure needs deltas 1, 7 and 8.
        // The whole sequence pins the algorithm: subsets first, complements
        // only for n > 2, n = 2 after a subset, n - 1 after a complement.
        let input: Vec<u8> = (1..=8).collect();
        let pred = |c: &[u8]| [1, 7, 8].iter().all(|d| c.contains(d));
        let mut rec = Recorder::new(pred);
        assert_eq!(ddmin(&input, &mut rec), vec![1, 7, 8]);
        let expected: [&[u8]; 27] = [
            &[1, 2, 3, 4],
            &[5, 6, 7, 8],
            &[1, 2],
            &[3, 4],
            &[5, 6],
            &[7, 8],
            &[3, 4, 5, 6, 7, 8],
            &[1, 2, 5, 6, 7, 8], // complement: n = 4 - 1
            &[1, 2],
            &[5, 6],
            &[7, 8],
            &[5, 6, 7, 8],
            &[1, 2, 7, 8], // complement: n = max(3 - 1, 2)
            &[1, 2],
            &[7, 8],
            &[1],
            &[2],
            &[7],
            &[8],
            &[2, 7, 8],
            &[1, 7, 8], // complement: n = 3
            &[1],
            &[7],
            &[8],
            &[7, 8],
            &[1, 8],
            &[1, 7],
        ];
        assert_eq!(rec.log, expected.map(<[u8]>::to_vec));
    }

    #[test]
    fn single_element_is_reduced_to_empty_when_empty_is_interesting() {
        assert_eq!(ddmin(b"ab", &mut |_: &[u8]| true), b"");
        assert_eq!(ddmin(b"a", &mut |c: &[u8]| c.len() <= 1), b"");
        assert_eq!(ddmin(b"a", &mut |c: &[u8]| c == b"a"), b"a");
        assert_eq!(ddmin(b"", &mut |_: &[u8]| true), b"");
    }

    #[test]
    fn uninteresting_everything_returns_input() {
        let input = b"hello world";
        assert_eq!(ddmin(input, &mut |_: &[u8]| false), input);
    }

    #[test]
    fn stops_when_exhausted() {
        let mut rec = Recorder::new(|_: &[u8]| false).exhaust_after(3);
        let input = vec![7u8; 100];
        assert_eq!(ddmin(&input, &mut rec), input);
        assert_eq!(rec.log.len(), 3);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn result_is_interesting_smaller_and_one_minimal(case in arb_case()) {
            let result = ddmin(&case.input, &mut |c: &[u8]| case.holds(c));
            prop_assert!(case.holds(&result));
            prop_assert!(result.len() <= case.input.len());
            prop_assert!(is_one_minimal(&result, |c| case.holds(c)));
        }
    }
}
