//! Value simplification at constant length, afl-tmin style.
//!
//! Deletion alone leaves whatever bytes the fuzzer happened to produce;
//! replacing them with a canonical value makes the essential ones stand out
//! (`0000(00)0` instead of `q7#(x])&`). Two steps, like afl-tmin's
//! "alphabet minimization" and "character minimization":
//!
//! 1. for each distinct value (ascending), replace all its occurrences at
//!    once by its canonical value;
//! 2. for each position, replace that one element by its canonical value.
//!
//! The canonical value never exceeds the original, so every accepted
//! candidate is shortlex-smaller than the current input: same length,
//! lexicographically smaller.

use super::batch::Batch;
use crate::reduce::oracle::Oracle;

/// An element type with a canonical "simplest" replacement value.
pub trait Canonical: Copy + Ord {
    /// The value to try in place of `self`, strictly smaller than `self`;
    /// `None` when `self` is already as simple as it gets.
    fn canonical(self) -> Option<Self>;
}

impl Canonical for u8 {
    /// `b'0'` for printable ASCII (`0x21..=0x7e`) above `b'0'`, else `0x00`
    /// for anything non-zero.
    fn canonical(self) -> Option<u8> {
        if (0x21..=0x7e).contains(&self) && self > b'0' {
            Some(b'0')
        } else if self != 0 {
            Some(0)
        } else {
            None
        }
    }
}

/// Replaces values of `input` (assumed interesting, never tested) by their
/// canonical values while it stays interesting: first whole values, then
/// single positions, one pass each.
///
/// The result has the input's length, is interesting (or the input itself)
/// and is shortlex-smaller than or equal to the input.
pub fn simplify<E, O>(input: &[E], oracle: &mut O) -> Vec<E>
where
    E: Canonical,
    O: Oracle<E> + ?Sized,
{
    let mut current = input.to_vec();
    let mut batch = Batch::new();
    replace_values(&mut current, oracle, &mut batch);
    replace_positions(&mut current, oracle, &mut batch);
    current
}

/// Step 1: every occurrence of one value at once. Ascending order means a
/// value is handled before any larger value can be replaced into it; a
/// canonical value that replacements made (`x` → `0`, where the input had
/// no `0` or its `0`s all went to NUL) is then tried in turn (`0` → NUL),
/// unless it already failed. Without that second go, a 16 KB regex nest
/// whose `x`s became `0`s had them lowered one position at a time: 156
/// successes and 473 failures, 15 s, and a whole round of the pipeline
/// after it, for what one test does.
fn replace_values<E, O>(current: &mut [E], oracle: &mut O, batch: &mut Batch<E>)
where
    E: Canonical,
    O: Oracle<E> + ?Sized,
{
    let mut values: Vec<E> = current
        .iter()
        .copied()
        .filter(|v| v.canonical().is_some())
        .collect();
    let mut failed = Vec::new();
    loop {
        values.sort_unstable();
        values.dedup();
        values.retain(|v| !failed.contains(v));
        let mut made = Vec::new();
        let mut next = 0;
        while next < values.len() {
            let rest = &values[next..];
            let found = batch.first_interesting(oracle, rest.len(), |k, out| {
                out.extend(current.iter().map(|&x| replaced(x, rest[k])));
            });
            let Some(k) = found else {
                failed.extend_from_slice(rest);
                break;
            };
            failed.extend_from_slice(&rest[..k]);
            let value = rest[k];
            for x in current.iter_mut() {
                *x = replaced(*x, value);
            }
            made.extend(value.canonical().filter(|c| c.canonical().is_some()));
            next += k + 1;
        }
        if made.is_empty() || oracle.exhausted() {
            return;
        }
        values = made;
    }
}

/// A run of equal elements longer than this is tried one position at a
/// time only at its ends ([`RUN_ENDS`] positions each side).
pub const LONG_RUN: usize = 64;

/// How many positions at each end of a long run are tried one at a time.
pub const RUN_ENDS: usize = 16;

/// Step 2: one position at a time, left to right. Inside a run of more
/// than [`LONG_RUN`] equal elements (or repeated units) only the first and
/// last [`RUN_ENDS`] positions (units) are tried: such a run is nearly always the nesting of a stack
/// overflow or padding, whose positions all fail alike (step 1 tried the
/// run's value everywhere at once), and trying each would cost a test per
/// element, each as slow as the deep input (5,375 tests on a TOML stack
/// overflow).
fn replace_positions<E, O>(current: &mut [E], oracle: &mut O, batch: &mut Batch<E>)
where
    E: Canonical,
    O: Oracle<E> + ?Sized,
{
    let positions: Vec<usize> = tried_positions(current)
        .into_iter()
        .filter(|&i| current[i].canonical().is_some())
        .collect();
    let mut next = 0;
    while next < positions.len() {
        let rest = &positions[next..];
        let found = batch.first_interesting(oracle, rest.len(), |k, out| {
            out.extend_from_slice(current);
            let i = rest[k];
            out[i] = replaced(out[i], out[i]);
        });
        let Some(k) = found else {
            return;
        };
        let i = rest[k];
        current[i] = replaced(current[i], current[i]);
        next += k + 1;
    }
}

/// Every position, except the interiors of long periodic runs: runs of
/// equal elements, and of a unit of up to 16 repeated
/// ([`interiors`](super::chunks::interiors): more than [`LONG_RUN`]
/// repetitions, less [`RUN_ENDS`] units at each end). A nest of 5- and
/// 6-byte regex units cost 5,966 tests, 189 s, for no change.
fn tried_positions<E: PartialEq>(current: &[E]) -> Vec<usize> {
    let interior = super::chunks::interiors(current);
    (0..current.len()).filter(|&i| interior[i] == 0).collect()
}

/// `x`, or its canonical value if `x == value`.
fn replaced<E: Canonical>(x: E, value: E) -> E {
    if x == value {
        x.canonical().unwrap_or(x)
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::testing::{arb_case, shortlex_le, Recorder};
    use proptest::prelude::*;

    #[test]
    fn canonical_bytes() {
        assert_eq!(b'a'.canonical(), Some(b'0'));
        assert_eq!(b'~'.canonical(), Some(b'0'));
        assert_eq!(b'1'.canonical(), Some(b'0'));
        assert_eq!(b'0'.canonical(), Some(0));
        assert_eq!(b'('.canonical(), Some(0));
        assert_eq!(b' '.canonical(), Some(0));
        assert_eq!(0x7f_u8.canonical(), Some(0));
        assert_eq!(0xff_u8.canonical(), Some(0));
        assert_eq!(0_u8.canonical(), None);
        for v in 0..=255u8 {
            assert!(v.canonical().is_none_or(|c| c < v), "{v}");
        }
    }

    #[test]
    fn alphabet_step_replaces_all_occurrences_in_one_test() {
        // Interesting while the two ends are equal and the middle is 'b'.
        let pred = |c: &[u8]| c.len() == 3 && c[0] == c[2] && c[1] == b'b';
        let mut rec = Recorder::new(pred);
        assert_eq!(simplify(b"aba", &mut rec), b"\0b\0");
        assert_eq!(rec.log[0], b"0b0");
        assert!(rec.log.contains(&b"\0b\0".to_vec()));
    }

    #[test]
    fn a_value_replacements_made_is_replaced_in_turn() {
        // `a` and `b` go to `0` (one test each), then every `0` to NUL in
        // one more test instead of one per position.
        let input = b"ab".repeat(50);
        let mut rec = Recorder::new(|c: &[u8]| c.len() == 100);
        assert_eq!(simplify(&input, &mut rec), vec![0; 100]);
        assert_eq!(rec.log.len(), 3);
        // A `0` that must stay: the original `0` fails, and the `0`s that
        // `x` became are not tried as a value again.
        let mut rec = Recorder::new(|c: &[u8]| c.len() == 3 && c[0] == b'0');
        assert_eq!(simplify(b"0xx", &mut rec), b"0\0\0");
        assert_eq!(rec.log[..2], [b"\0xx".to_vec(), b"000".to_vec()]);
        assert!(!rec.log.contains(&vec![0; 3]));
    }

    #[test]
    fn per_position_step_keeps_what_matters() {
        let pred = |c: &[u8]| c.contains(&b'(') && c.contains(&b')') && c.len() == 5;
        assert_eq!(simplify(b"x(yz)", &mut |c: &[u8]| pred(c)), b"\0(\0\0)");
    }

    #[test]
    fn long_runs_are_tried_at_their_ends_only() {
        // `a=` then 200 `[` (a stack overflow's nesting): every `[` must stay.
        let mut input = b"a=".to_vec();
        input.extend([b'['; 200]);
        let mut rec = Recorder::new(|c: &[u8]| c.len() == 202 && c[2..].iter().all(|&b| b == b'['));
        let result = simplify(&input, &mut rec);
        assert_eq!(&result[..2], b"\0\0");
        // The run's value once in step 1, then 2 × 16 of its positions.
        let run_tests = rec.log.iter().filter(|c| c[2..].contains(&b'0')).count();
        assert_eq!(run_tests, 1 + 2 * RUN_ENDS);
        // A run of exactly LONG_RUN is still tried everywhere.
        let mut rec = Recorder::new(|c: &[u8]| c.iter().all(|&b| b == b'['));
        simplify(&[b'['; LONG_RUN], &mut rec);
        assert_eq!(rec.log.len(), 1 + LONG_RUN);
    }

    #[test]
    fn stops_when_exhausted() {
        let mut rec = Recorder::new(|_: &[u8]| true).exhaust_after(1);
        let result = simplify(b"abc", &mut rec);
        assert_eq!(rec.log.len(), 1);
        assert!(shortlex_le(&result, b"abc"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn result_is_interesting_same_length_and_shortlex_smaller(case in arb_case()) {
            let mut rec = Recorder::new(|c: &[u8]| case.holds(c));
            let result = simplify(&case.input, &mut rec);
            prop_assert!(case.holds(&result));
            prop_assert_eq!(result.len(), case.input.len());
            prop_assert!(shortlex_le(&result, &case.input));
            // Every candidate offered is shortlex-smaller than the input.
            for candidate in &rec.log {
                prop_assert!(candidate.as_slice() < case.input.as_slice());
            }
        }
    }
}
