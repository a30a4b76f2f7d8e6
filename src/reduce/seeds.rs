//! The seed projects' reducers, transcribed call-for-call.
//!
//! These exist so that the reference results in `tests/data` (produced by
//! running the seeds' Python code) can be reproduced exactly — same result,
//! same sequence of tested candidates — and so that the CLI can offer them
//! for comparison with the crate's own reducers. They are kept faithful
//! rather than improved; see `/work/shared/reference/REFERENCE.md` §3:
//!
//! * [`seed_ddmin`]: seed 000's iterative partition `ddmin` (§3.1), chunk
//!   deletion only, chunk length halved, scan resumed at the deletion point;
//! * [`seed_ddrmin`]: seed 000's recursive `ddrmin` (§3.2);
//! * [`fuzzingbook_dd`]: the Fuzzing Book's `DeltaDebuggingReducer`
//!   (§3.3), with its floating-point chunk boundaries.
//!
//! None of them caches; wrap the oracle in [`crate::reduce::oracle::Cached`] to get
//! the Fuzzing Book's `CachingReducer` counting (`tests` = cache misses).

use super::batch::{write_without, Batch};
use crate::reduce::oracle::Oracle;

/// Seed 000's iterative `ddmin` (not Zeller's): deletes chunks of
/// `len / 2` elements, halving the length after a scan without success.
///
/// Python: `remove_check_each_fragment` tries `instr[:i] + instr[i+part_len:]`
/// for `i` in `range(start, len, part_len)`; after a success the scan
/// resumes at the same `i` with the same chunk length. The input is never
/// tested; an empty candidate that is interesting ends the reduction.
pub fn seed_ddmin<E, O>(input: &[E], oracle: &mut O) -> Vec<E>
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    let mut current = input.to_vec();
    let mut batch = Batch::new();
    let mut start = 0;
    let mut part_len = current.len() / 2;
    while part_len >= 1 && !oracle.exhausted() {
        let len = current.len();
        let count = len.saturating_sub(start).div_ceil(part_len);
        let found = batch.first_interesting(oracle, count, |k, out| {
            let i = start + k * part_len;
            write_without(&current, i, (i + part_len).min(len), out);
        });
        match found {
            Some(k) => {
                start += k * part_len;
                current.drain(start..(start + part_len).min(len));
                if current.is_empty() {
                    break;
                }
            }
            None => {
                start = 0;
                part_len /= 2;
            }
        }
    }
    current
}

/// Seed 000's recursive `ddrmin`: try the first half, then the second half
/// (with the fixed context `pre`/`post` around them); if neither alone is
/// interesting, reduce the first half with the second as context, then the
/// second with the reduced first.
///
/// A length-1 piece is kept without testing, so the result is not 1-minimal
/// in general. The input is never tested. (Python recurses forever on an
/// empty input; here it is returned unchanged.)
pub fn seed_ddrmin<E, O>(input: &[E], oracle: &mut O) -> Vec<E>
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    let mut batch = Batch::new();
    ddrmin_in_context(input, &[], &[], oracle, &mut batch)
}

fn ddrmin_in_context<E, O>(
    current: &[E],
    pre: &[E],
    post: &[E],
    oracle: &mut O,
    batch: &mut Batch<E>,
) -> Vec<E>
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    if current.len() <= 1 || oracle.exhausted() {
        return current.to_vec();
    }
    let (first, second) = current.split_at(current.len() / 2);
    let halves = [first, second];
    let found = batch.first_interesting(oracle, 2, |k, out| {
        out.extend_from_slice(pre);
        out.extend_from_slice(halves[k]);
        out.extend_from_slice(post);
    });
    if let Some(k) = found {
        return ddrmin_in_context(halves[k], pre, post, oracle, batch);
    }
    let post_of_first = [second, post].concat();
    let mut reduced = ddrmin_in_context(first, pre, &post_of_first, oracle, batch);
    let pre_of_second = [pre, &reduced].concat();
    let reduced_second = ddrmin_in_context(second, &pre_of_second, post, oracle, batch);
    reduced.extend(reduced_second);
    reduced
}

/// The Fuzzing Book's `DeltaDebuggingReducer.reduce` (fuzzingbook 1.2.2).
///
/// Test #1 is the whole input (the book asserts it fails; here an
/// uninteresting input is returned unchanged). Then complements only: with
/// `n` chunks of `len / n` elements (an `f64`), `start` accumulated by `+=`
/// and truncated, exactly as Python does; after a success `n = max(n-1, 2)`
/// and the scan restarts at 0, otherwise `n` doubles up to `len`.
pub fn fuzzingbook_dd<E, O>(input: &[E], oracle: &mut O) -> Vec<E>
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    if !oracle.test(input) {
        return input.to_vec();
    }
    let mut current = input.to_vec();
    let mut batch = Batch::new();
    let mut bounds = Vec::new();
    let mut n = 2;
    while current.len() >= 2 && !oracle.exhausted() {
        let len = current.len();
        complement_bounds(len, n, &mut bounds);
        let found = batch.first_interesting(oracle, bounds.len(), |k, out| {
            let (lo, hi) = bounds[k];
            write_without(&current, lo, hi, out);
        });
        match found {
            Some(k) => {
                let (lo, hi) = bounds[k];
                current.drain(lo..hi);
                n = (n - 1).max(2);
            }
            None if n == len => break,
            None => n = (2 * n).min(len),
        }
    }
    current
}

/// The `(int(start), int(start + subset_length))` pairs of one scan of
/// `DeltaDebuggingReducer`, clamped to `len` as Python's slicing does.
fn complement_bounds(len: usize, n: usize, bounds: &mut Vec<(usize, usize)>) {
    bounds.clear();
    let total = len as f64;
    let subset_length = total / n as f64;
    let mut start = 0.0_f64;
    while start < total {
        // `as usize` truncates toward zero, like Python's `int()`.
        let lo = start as usize;
        let hi = ((start + subset_length) as usize).min(len);
        bounds.push((lo, hi));
        start += subset_length;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::oracle::Cached;
    use crate::reduce::testing::{arb_case, Recorder};
    use proptest::prelude::*;

    fn select(c: &[u8]) -> bool {
        c.starts_with(b"<SELECT") && c[7..].contains(&b'>')
    }

    #[test]
    fn seed_ddmin_reproduces_the_select_run() {
        let mut rec = Recorder::new(select);
        let result = seed_ddmin(b"<SELECT NAME=\"priority\" MULTIPLE SIZE=7>", &mut rec);
        assert_eq!(result, b"<SELECT>");
        assert_eq!(rec.log.len(), 27);
        assert_eq!(rec.log[0], b"ty\" MULTIPLE SIZE=7>");
        assert_eq!(rec.log[26], b"<SELECT");
    }

    #[test]
    fn seed_ddrmin_reproduces_the_select_run() {
        let mut rec = Recorder::new(select);
        let result = seed_ddrmin(b"<SELECT NAME=\"priority\" MULTIPLE SIZE=7>", &mut rec);
        assert_eq!(result, b"<SELECT>");
        assert_eq!(rec.log.len(), 26);
        assert_eq!(rec.log[2], b"<SELECT NAty\" MULTIPLE SIZE=7>");
    }

    #[test]
    fn seed_ddmin_may_return_empty() {
        let mut rec = Recorder::new(|_: &[u8]| true);
        assert_eq!(seed_ddmin(b"abcd", &mut rec), b"");
        assert_eq!(rec.log, vec![b"cd".to_vec(), b"".to_vec()]);
    }

    #[test]
    fn seed_ddrmin_keeps_single_elements_and_empty_input() {
        let mut rec = Recorder::new(|_: &[u8]| true);
        assert_eq!(seed_ddrmin(b"a", &mut rec), b"a");
        assert_eq!(seed_ddrmin(b"", &mut rec), b"");
        assert!(rec.log.is_empty());
    }

    #[test]
    fn fuzzingbook_dd_reproduces_the_book_mystery_run() {
        let mystery = |c: &[u8]| {
            let open = c.iter().position(|&b| b == b'(');
            let close = c.iter().position(|&b| b == b')');
            matches!((open, close), (Some(x), Some(y)) if x < y)
        };
        let mut cached = Cached::new(Recorder::new(mystery));
        assert_eq!(fuzzingbook_dd(b"1 + (2 * 3)", &mut cached), b"()");
        let stats = cached.stats();
        assert_eq!((stats.executed, stats.calls), (15, 18));
        let log = &cached.inner().log;
        assert_eq!(log[0], b"1 + (2 * 3)");
        assert_eq!(log[3], b"+ (2 * 3)");
        assert_eq!(log[4], b"+ ( 3)", "cached '2 * 3)' is not executed again");
    }

    #[test]
    fn fuzzingbook_dd_returns_uninteresting_input_unchanged() {
        let mut rec = Recorder::new(|_: &[u8]| false);
        assert_eq!(fuzzingbook_dd(b"abc", &mut rec), b"abc");
        assert_eq!(rec.log.len(), 1);
    }

    #[test]
    fn complement_bounds_follow_python_floats() {
        let mut bounds = Vec::new();
        complement_bounds(10, 3, &mut bounds);
        // 10/3 = 3.333…: starts 0.0, 3.33…35, 6.66…7, then exactly 10.0 ends the scan.
        assert_eq!(bounds, vec![(0, 3), (3, 6), (6, 10)]);
        // Rounding makes a 7th, empty-tailed chunk (Python: (7, 9) → [7:]).
        complement_bounds(8, 6, &mut bounds);
        let python = [(0, 1), (1, 2), (2, 4), (4, 5), (5, 6), (6, 7), (7, 8)];
        assert_eq!(bounds, python);
        complement_bounds(7, 7, &mut bounds);
        assert_eq!(bounds.len(), 7);
        assert!(bounds.iter().all(|&(lo, hi)| hi == lo + 1));
    }

    #[test]
    fn all_stop_when_exhausted() {
        let input = vec![1u8; 64];
        let only_input: fn(&[u8]) -> bool = |c| c.len() == 64;
        for run in [
            seed_ddmin::<u8, Recorder<u8, fn(&[u8]) -> bool>>,
            seed_ddrmin,
            fuzzingbook_dd,
        ] {
            let mut rec = Recorder::new(only_input).exhaust_after(2);
            assert_eq!(run(&input, &mut rec), input);
            assert_eq!(rec.log.len(), 2);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn seed_reducers_return_interesting_and_not_larger(case in arb_case()) {
            let holds = |c: &[u8]| case.holds(c);
            for result in [
                seed_ddmin(&case.input, &mut { holds }),
                seed_ddrmin(&case.input, &mut { holds }),
                fuzzingbook_dd(&case.input, &mut { holds }),
            ] {
                prop_assert!(case.holds(&result));
                prop_assert!(result.len() <= case.input.len());
            }
        }
    }
}
