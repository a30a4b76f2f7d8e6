//! Fast coarse reduction by adaptive chunk deletion.
//!
//! ddmin pays for its guarantee with many tests on large inputs. Most of a
//! fuzzer-generated crash input is usually irrelevant and comes off in long
//! runs, so this pass (in the spirit of Hypothesis's shrinker) sweeps chunk
//! sizes from half the input down to single elements, deleting chunks at
//! successive positions. When a deletion at some position works it is grown
//! exponentially and then binary-searched to the largest deletable run (a
//! `find_integer`-style search), so deleting `k` adjacent chunks costs
//! `O(log k)` tests instead of `k`. Sweeps repeat until one changes nothing;
//! since every sweep ends with single-element deletions at every position,
//! the fixpoint is also 1-minimal (unless the oracle became exhausted).
//!
//! The byte pipeline skips deletions inside the interior of a long periodic
//! run ([`NestInteriors`]): a deep nest's units, whose count and shape the
//! repeats pass settles for every unit at once. Deleting part of one unit
//! in its middle is a distinct candidate at every position, each a
//! full-depth test, and they fail alike: on a 16 KB regex nest of 5- and
//! 6-byte units that was 9,799 tests in 104 s for 6 bytes. The run's first
//! and last [`RUN_ENDS`] units are still tried, as simplification tries
//! the ends of a run of equal bytes.

use super::batch::{write_without, Batch};
use super::simplify::{LONG_RUN, RUN_ENDS};
use crate::reduce::oracle::Oracle;

/// Which deletions a sweep leaves out.
pub trait Skip<E> {
    /// Whether deleting `current[lo..hi]` is left out.
    fn skips(&mut self, current: &[E], lo: usize, hi: usize) -> bool;

    /// Where deleting `current[lo..hi]` works, the starts of the same
    /// deletion in the units alike (nearest first), to try with it.
    fn alike(&mut self, _current: &[E], _lo: usize, _hi: usize) -> Vec<usize> {
        Vec::new()
    }
}

/// Leaves out nothing.
impl<E> Skip<E> for () {
    fn skips(&mut self, _: &[E], _: usize, _: usize) -> bool {
        false
    }
}

/// Periods of the runs [`NestInteriors`] looks for, in elements.
const MAX_PERIOD: usize = 16;

/// Leaves out deletions that lie within the interior of one periodic run:
/// more than [`LONG_RUN`] repetitions of a unit of at most [`MAX_PERIOD`]
/// elements, less the first and last [`RUN_ENDS`] units.
///
/// The interiors are found again whenever the input's length changes: one
/// value serves one pass, whose input only ever loses elements.
#[derive(Debug, Default)]
pub struct NestInteriors {
    /// The length of the input the interiors were found in.
    of: Option<usize>,
    /// Per element, the run whose interior holds it (1-based), or 0.
    run: Vec<u32>,
    /// The runs: start, end, period.
    runs: Vec<(usize, usize, usize)>,
}

impl NestInteriors {
    fn update<E: PartialEq>(&mut self, current: &[E]) {
        if self.of != Some(current.len()) {
            self.of = Some(current.len());
            (self.run, self.runs) = periodic_runs(current);
        }
    }
}

impl<E: PartialEq> Skip<E> for NestInteriors {
    fn skips(&mut self, current: &[E], lo: usize, hi: usize) -> bool {
        if hi <= lo {
            return false;
        }
        self.update(current);
        let run = self.run[lo];
        run != 0 && self.run[hi - 1] == run
    }

    /// A deletion shorter than the unit, within a run: the same offsets in
    /// the run's other units. A success at a run's end (its interior is
    /// left out) is then tried on every unit, nearest first, in
    /// `O(log units)` tests: the chunk pass had eaten into a nest one unit
    /// at a time where its two parts met (`(x((?:` ×1,147 after `(x((:`,
    /// 2,354 bytes in 5,275 tests of 18 ms).
    fn alike(&mut self, current: &[E], lo: usize, hi: usize) -> Vec<usize> {
        self.update(current);
        let Some(&(start, end, p)) = self
            .runs
            .iter()
            .find(|&&(a, b, p)| a <= lo && hi <= b && hi - lo < p)
        else {
            return Vec::new();
        };
        let offset = (lo - start) % p;
        let home = (lo - start) / p;
        let mut units: Vec<usize> = (0..)
            .map(|k| start + k * p)
            .take_while(|u| u + offset + (hi - lo) <= end)
            .filter(|&u| u + offset != lo)
            .collect();
        units.sort_by_key(|u| ((u - start) / p).abs_diff(home));
        units.into_iter().map(|u| u + offset).collect()
    }
}

/// Per element of `input`, the periodic run whose interior holds it
/// (numbered from 1), or 0. A run of period `p` is a maximal stretch where
/// every element equals the one `p` later, at least `p` × ([`LONG_RUN`] + 1)
/// long; its interior leaves out [`RUN_ENDS`] units at each end. Shorter
/// periods are looked for first and keep what they mark.
pub fn interiors<E: PartialEq>(input: &[E]) -> Vec<u32> {
    periodic_runs(input).0
}

/// [`interiors`], and the runs themselves: start, end, period.
fn periodic_runs<E: PartialEq>(input: &[E]) -> (Vec<u32>, Vec<(usize, usize, usize)>) {
    let mut runs = Vec::new();
    let mut run = vec![0u32; input.len()];
    let mut next = 0u32;
    for p in 1..=MAX_PERIOD.min(input.len() / 2) {
        let mut i = 0;
        while i + p < input.len() {
            if input[i] != input[i + p] {
                i += 1;
                continue;
            }
            let start = i;
            while i + p < input.len() && input[i] == input[i + p] {
                i += 1;
            }
            // input[start..i + p] has period p.
            let end = i + p;
            if end - start > p * LONG_RUN {
                let (a, b) = (start + RUN_ENDS * p, end - RUN_ENDS * p);
                if run[a..b].iter().all(|&r| r == 0) {
                    next += 1;
                    run[a..b].fill(next);
                    runs.push((start, end, p));
                }
            }
        }
    }
    (run, runs)
}

/// Deletes chunks from `input` (assumed interesting, never tested) until no
/// single chunk deletion of any size works.
///
/// The result is interesting (or the input itself) and never longer.
pub fn delete_chunks<E, O>(input: &[E], oracle: &mut O) -> Vec<E>
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    delete_chunks_with(input, oracle, &mut ())
}

/// [`delete_chunks`], leaving out the deletions `skip` names (the result is
/// then 1-minimal except there).
pub fn delete_chunks_with<E, O>(input: &[E], oracle: &mut O, skip: &mut dyn Skip<E>) -> Vec<E>
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    delete_chunks_down_to(input, oracle, skip, |_| 1)
}

/// [`delete_chunks_with`] with no chunk smaller than `smallest(len)` for
/// an input of `len` elements: a coarse pass whose result is not 1-minimal.
///
/// The byte pipeline's first round uses it on large binary inputs. The
/// finest sizes are most of the tests (`len` of them at size 1, `len/2` at
/// 2, …), and in a binary format, where a deletion shifts every offset and
/// breaks a length, they remove nothing until the structural passes have
/// cut or zeroed the input: 20 KB of valid stored DEFLATE blocks before the
/// bad one cost 38,956 tests (13.4 s) for no byte, after which the passes
/// that followed removed the prefix in under a second. The next round's
/// full sweep, on what they left, does the fine work.
pub fn delete_chunks_down_to<E, O>(
    input: &[E],
    oracle: &mut O,
    skip: &mut dyn Skip<E>,
    smallest: impl Fn(usize) -> usize,
) -> Vec<E>
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    let mut current = input.to_vec();
    let mut batch = Batch::new();
    loop {
        let before = current.len();
        let floor = smallest(before).max(1);
        sweep(&mut current, oracle, &mut batch, skip, floor);
        if current.len() == before || current.is_empty() || oracle.exhausted() {
            return current;
        }
    }
}

/// One pass over chunk sizes `len/2, len/4, …`, down to `floor` (or the
/// first size below it when no power-of-two step lands on it).
fn sweep<E, O>(
    current: &mut Vec<E>,
    oracle: &mut O,
    batch: &mut Batch<E>,
    skip: &mut dyn Skip<E>,
    floor: usize,
) where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    let mut size = (current.len() / 2).max(1);
    while !current.is_empty() && !oracle.exhausted() {
        delete_chunks_of_size(current, size, oracle, batch, skip);
        if size <= floor {
            break;
        }
        size /= 2;
    }
}

/// Scans positions `0, size, 2·size, …`, deleting (and growing) every chunk
/// whose deletion keeps the input interesting.
fn delete_chunks_of_size<E, O>(
    current: &mut Vec<E>,
    size: usize,
    oracle: &mut O,
    batch: &mut Batch<E>,
    skip: &mut dyn Skip<E>,
) where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    let mut position = 0;
    while position < current.len() {
        let len = current.len();
        let starts: Vec<usize> = (position..len)
            .step_by(size)
            .filter(|&lo| !skip.skips(current, lo, (lo + size).min(len)))
            .collect();
        let found = batch.first_interesting(oracle, starts.len(), |k, out| {
            let lo = starts[k];
            write_without(current, lo, (lo + size).min(len), out);
        });
        let Some(k) = found else {
            return;
        };
        position = starts[k];
        let chunks = largest_deletable_run(current, position, size, oracle);
        let end = (position + chunks * size).min(len);
        let alike = skip.alike(current, position, end);
        let width = end - position;
        let more = largest_alike(current, position, width, &alike, oracle);
        if more == 0 {
            current.drain(position..end);
            continue;
        }
        let mut starts: Vec<usize> = alike[..more].to_vec();
        starts.push(position);
        *current = without_each(current, &mut starts, width);
        // What moved into `position` is tried again, the rest as before.
    }
}

/// `current` without `width` elements at each of `starts` (which do not
/// overlap).
fn without_each<E: Clone>(current: &[E], starts: &mut [usize], width: usize) -> Vec<E> {
    starts.sort_unstable();
    let mut out = Vec::with_capacity(current.len());
    let mut from = 0;
    for &s in starts.iter() {
        out.extend_from_slice(&current[from..s]);
        from = s + width;
    }
    out.extend_from_slice(&current[from..]);
    out
}

/// How many of `alike` (nearest first) can lose `width` elements along
/// with `position`: exponential probing, then binary search, as
/// [`largest_deletable_run`] does.
fn largest_alike<E, O>(
    current: &[E],
    position: usize,
    width: usize,
    alike: &[usize],
    oracle: &mut O,
) -> usize
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    let mut starts = Vec::new();
    largest_holding(0, alike.len(), |m| {
        starts.clear();
        starts.extend_from_slice(&alike[..m]);
        starts.push(position);
        let candidate = without_each(current, &mut starts, width);
        !oracle.exhausted() && oracle.test(&candidate)
    })
}

/// The largest `k` in `known..=max` for which `holds(k)`, given that
/// `holds(known)` (not asked) and that it holds below any `k` it holds
/// for: probes doubling from `known` (`known + 1` first when it is 0),
/// then binary search between the last success and the first failure, so
/// `O(log k)` calls.
pub(super) fn largest_holding(
    known: usize,
    max: usize,
    mut holds: impl FnMut(usize) -> bool,
) -> usize {
    let mut good = known;
    let mut bad = loop {
        let probe = (good * 2).max(good + 1).min(max);
        if probe <= good {
            return good;
        }
        if !holds(probe) {
            break probe;
        }
        good = probe;
    };
    while good + 1 < bad {
        let middle = good + (bad - good) / 2;
        if holds(middle) {
            good = middle;
        } else {
            bad = middle;
        }
    }
    good
}

/// The largest `j` such that deleting `j` chunks of `size` starting at
/// `position` (clamped to the end) is interesting, given that `j = 1` is:
/// exponential probing, then binary search between the last success and
/// the first failure.
fn largest_deletable_run<E, O>(current: &[E], position: usize, size: usize, oracle: &mut O) -> usize
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    let max = (current.len() - position).div_ceil(size);
    let mut candidate = Vec::with_capacity(current.len());
    largest_holding(1, max, |chunks| {
        candidate.clear();
        let end = (position + chunks * size).min(current.len());
        write_without(current, position, end, &mut candidate);
        !oracle.exhausted() && oracle.test(&candidate)
    })
}

/// Widest window [`delete_windows`] tries.
pub const MAX_WINDOW: usize = 8;

/// Deletes runs of 2..=[`MAX_WINDOW`] consecutive elements at *every*
/// offset, not only at chunk boundaries. Catches what aligned chunks and
/// single deletions miss: multi-byte units (a UTF-8 character, an integer
/// field) that are only removable together and straddle a chunk boundary.
/// Widest windows first; repeated until nothing more can be deleted.
pub fn delete_windows<E, O>(input: &[E], oracle: &mut O) -> Vec<E>
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    delete_windows_with(input, oracle, &mut ())
}

/// [`delete_windows`], leaving out the deletions `skip` names.
pub fn delete_windows_with<E, O>(input: &[E], oracle: &mut O, skip: &mut dyn Skip<E>) -> Vec<E>
where
    E: Clone,
    O: Oracle<E> + ?Sized,
{
    let mut current = input.to_vec();
    let mut batch = Batch::new();
    let mut changed = true;
    while changed && !oracle.exhausted() {
        changed = false;
        for width in (2..=MAX_WINDOW.min(current.len())).rev() {
            let mut position = 0;
            while position + width <= current.len() && !oracle.exhausted() {
                let starts: Vec<usize> = (position..=current.len() - width)
                    .filter(|&lo| !skip.skips(&current, lo, lo + width))
                    .collect();
                let found = batch.first_interesting(oracle, starts.len(), |k, out| {
                    let lo = starts[k];
                    write_without(&current, lo, lo + width, out);
                });
                let Some(k) = found else { break };
                position = starts[k];
                current.drain(position..position + width);
                changed = true;
            }
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::testing::{arb_case, is_one_minimal, Recorder};
    use proptest::prelude::*;

    #[test]
    fn windows_delete_units_that_straddle_chunk_boundaries() {
        // A two-byte unit at an odd offset: neither aligned chunks nor single
        // deletions can remove it, a window can.
        let input = b"a\xc2\xa0=\"".to_vec();
        let ok =
            |c: &[u8]| std::str::from_utf8(c).is_ok() && c.starts_with(b"a") && c.ends_with(b"=\"");
        let mut rec = Recorder::new(ok);
        assert_eq!(delete_chunks(&input, &mut rec), input);
        let mut rec = Recorder::new(ok);
        assert_eq!(delete_windows(&input, &mut rec), b"a=\"");
    }

    #[test]
    fn deletes_a_long_run_in_logarithmically_many_tests() {
        // 1000 irrelevant bytes after the 2 that matter.
        let mut input = b"ab".to_vec();
        input.extend(std::iter::repeat_n(b'x', 1000));
        let mut rec = Recorder::new(|c: &[u8]| c.starts_with(b"ab"));
        assert_eq!(delete_chunks(&input, &mut rec), b"ab");
        assert!(rec.log.len() < 60, "{} tests", rec.log.len());
    }

    #[test]
    fn a_floor_leaves_the_finer_sizes_out() {
        // Only single bytes can go (every odd byte of 1,024): the sweep down
        // to chunks of 64 tries no size below it and removes nothing.
        let input: Vec<u8> = (0..1024u32).map(|i| (i % 2) as u8).collect();
        let ok = |c: &[u8]| c.iter().filter(|&&b| b == 0).count() == 512 && c.len() >= 512;
        let mut rec = Recorder::new(ok);
        let out = delete_chunks_down_to(&input, &mut rec, &mut (), |len| len / 16);
        assert_eq!(out, input);
        // Sizes 512, 256, 128, 64: 2 + 4 + 8 + 16 chunks.
        assert_eq!(rec.log.len(), 30);
        let mut rec = Recorder::new(ok);
        let out = delete_chunks_down_to(&input, &mut rec, &mut (), |_| 1);
        assert_eq!(out, vec![0; 512]);
    }

    #[test]
    fn run_search_costs_logarithmically_many_tests() {
        // At position 3 with size 1, exactly 37 elements can go.
        let input: Vec<u8> = (0..50).collect();
        let mut rec = Recorder::new(|c: &[u8]| c.len() >= 13 && c[..3] == [0, 1, 2]);
        assert_eq!(largest_deletable_run(&input, 3, 1, &mut rec), 37);
        // Probes 2, 4, …, 32, 47 (fails), then binary search in 32..47.
        assert_eq!(rec.log.len(), 6 + 4);
        // With size 4 the answer is in chunks: 9 chunks = 36 elements.
        let mut rec = Recorder::new(|c: &[u8]| c.len() >= 13 && c[..3] == [0, 1, 2]);
        assert_eq!(largest_deletable_run(&input, 3, 4, &mut rec), 9);
    }

    #[test]
    fn growth_finds_the_exact_run() {
        // Only the 37 bytes 3..40 are irrelevant.
        let input: Vec<u8> = (0..50).collect();
        let needed: Vec<u8> = (0..3).chain(40..50).collect();
        let mut rec = Recorder::new(|c: &[u8]| needed.iter().all(|b| c.contains(b)));
        assert_eq!(delete_chunks(&input, &mut rec), needed);
    }

    #[test]
    fn result_is_one_minimal_on_scattered_bytes() {
        let input = b"..a....b..c.....d.";
        let pred = |c: &[u8]| [b'a', b'b', b'c', b'd'].iter().all(|x| c.contains(x));
        let mut rec = Recorder::new(pred);
        assert_eq!(delete_chunks(input, &mut rec), b"abcd");
    }

    #[test]
    fn interiors_leave_out_the_ends_of_a_periodic_run() {
        let unit = b"(x((:";
        let input = [b"ab".repeat(3), unit.repeat(100), b"end".to_vec()].concat();
        let run = interiors(&input);
        let start = 6;
        let end = start + 100 * unit.len();
        // The first and last RUN_ENDS units are not interior, the rest is.
        assert!(run[..start + RUN_ENDS * unit.len()].iter().all(|&r| r == 0));
        assert!(run[end - RUN_ENDS * unit.len()..].iter().all(|&r| r == 0));
        assert!(
            run[start + RUN_ENDS * unit.len()..end - RUN_ENDS * unit.len()]
                .iter()
                .all(|&r| r == 1)
        );
        // Too few repetitions: no interior.
        assert!(interiors(&unit.repeat(LONG_RUN)).iter().all(|&r| r == 0));
    }

    #[test]
    fn a_nests_interior_costs_no_test() {
        // A nest whose every unit is needed, between text that is not: each
        // deletion inside a unit is a distinct candidate, and all fail.
        let unit = b"(x((:";
        let input = [b"junk ".repeat(20), unit.repeat(400), b" tail".to_vec()].concat();
        let needed = |c: &[u8]| {
            c.windows(unit.len() * 400)
                .any(|w| w == unit.repeat(400).as_slice())
        };
        let mut plain = Recorder::new(needed);
        let a = delete_chunks(&input, &mut plain);
        let mut skipping = Recorder::new(needed);
        let b = delete_chunks_with(&input, &mut skipping, &mut NestInteriors::default());
        assert_eq!(a, unit.repeat(400));
        assert_eq!(b, a);
        // Every test that is left touches the run's ends or the text.
        assert!(
            skipping.log.len() * 5 < plain.log.len(),
            "{} tests skipping, {} without",
            skipping.log.len(),
            plain.log.len()
        );
        let mut windows = Recorder::new(needed);
        let w = delete_windows_with(&b, &mut windows, &mut NestInteriors::default());
        assert_eq!(w, b);
        assert!(windows.log.len() < 7 * 2 * (RUN_ENDS + 1) * unit.len());
    }

    #[test]
    fn a_deletion_that_works_at_a_runs_end_goes_from_every_unit() {
        // 300 units `(x((?:`; the crash needs the 300 levels and an `x` in
        // each, the `?:` of any unit can go. The run's interior is left
        // out, so the deletion is found at its ends and spread from there,
        // in a logarithmic number of tests rather than one a unit.
        let input = b"(x((?:".repeat(300);
        let holds = |c: &[u8]| {
            c.windows(2).filter(|w| w == b"(x").count() == 300
                && c.iter().filter(|&&b| b == b'(').count() == 900
        };
        let mut plain = Recorder::new(holds);
        assert_eq!(delete_chunks(&input, &mut plain), b"(x((".repeat(300));
        let mut rec = Recorder::new(holds);
        let out = delete_chunks_with(&input, &mut rec, &mut NestInteriors::default());
        assert_eq!(out, b"(x((".repeat(300));
        assert!(
            rec.log.len() * 4 < plain.log.len(),
            "{} tests, {} without",
            rec.log.len(),
            plain.log.len()
        );
    }

    #[test]
    fn can_reach_empty() {
        assert_eq!(delete_chunks(b"abc", &mut |_: &[u8]| true), b"");
    }

    #[test]
    fn stops_when_exhausted() {
        let mut rec = Recorder::new(|_: &[u8]| false).exhaust_after(5);
        let input = vec![3u8; 200];
        assert_eq!(delete_chunks(&input, &mut rec), input);
        assert_eq!(rec.log.len(), 5);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn result_is_interesting_smaller_and_one_minimal(case in arb_case()) {
            let result = delete_chunks(&case.input, &mut |c: &[u8]| case.holds(c));
            prop_assert!(case.holds(&result));
            prop_assert!(result.len() <= case.input.len());
            prop_assert!(is_one_minimal(&result, |c| case.holds(c)));
        }
    }
}
