//! A randomized stage, in the spirit of libFuzzer's `-minimize_crash`.
//!
//! When every deterministic pass is at a fixpoint, some inputs still
//! shrink under a combination of edits no pass tries: an erase here and a
//! changed byte there, a part copied over another. This stage draws such
//! combinations (one to three of libFuzzer's erase, insert, change, flip
//! and copy mutations), keeps only candidates shortlex-smaller than the
//! current input (the size bound), and accepts the first that is still
//! interesting, for a fixed number of tests. The draws come from a seeded
//! generator, so a run is reproducible (`--seed`); candidates go to the
//! oracle in batches whose answer is the sequential one, so the result
//! does not depend on how they are evaluated.
//!
//! Where every success costs far more than a failure (a timeout: a
//! candidate that still hangs runs to the limit, one that does not ends at
//! once), the draws are [`Draws::Shorter`]: strictly shorter candidates
//! only, with erasures of up to half the input as libFuzzer's `EraseBytes`
//! draws them. Each success then removes a lot, where a deterministic pass
//! pays the limit for a few bytes (or, at the same length, for none).
//! Each batch is then tried shortest first: a batch pays for at most one
//! success, and that one removes the most the batch could.
//!
//! No draw splits a long run of equal bytes (more than
//! [`LONG_RUN`]) into two: such a run is nearly always a stack overflow's
//! nesting, and a foreign byte inside it may shorten the input by a byte or
//! two (a literal inside a group takes more stack than the group alone), but
//! every later pass then pays its tests per piece. On regex-deep (19 KB of
//! parentheses) the stage had scattered 34 such bytes through the nest: 32
//! bytes fewer, and a run that had not finished after 300 s instead of 7.7 s.

use super::oracle::shortlex_less;
use super::simplify::LONG_RUN;
use crate::reduce::oracle::Oracle;
use crate::reduce::rng::Rng;

/// Candidates drawn per round trip.
const BATCH: usize = 64;

/// Which candidates a stage draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Draws {
    /// Shortlex-smaller ones (a lower byte at the same length counts);
    /// erasures mostly short.
    Shortlex,
    /// Strictly shorter ones; erasures of up to half the input, of any
    /// length alike (libFuzzer's `EraseBytes`).
    Shorter,
}

/// One of libFuzzer's mutations, applied in place.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>, draws: Draws) {
    let len = data.len();
    match rng.below(6) {
        // Erase a run (libFuzzer's EraseBytes).
        0 | 1 if len > 0 => {
            let longest = match draws {
                // Short runs more likely.
                Draws::Shortlex => len.min(1 << rng.below(8)),
                Draws::Shorter => (len / 2).max(1),
            };
            let n = 1 + rng.below(longest);
            let at = rng.below(len - n + 1);
            data.drain(at..at + n);
        }
        // Insert a byte.
        2 => {
            let at = rng.below(len + 1);
            data.insert(at, rng.byte());
        }
        // Change a byte, to a random value or a smaller one.
        3 if len > 0 => {
            let at = rng.below(len);
            data[at] = match rng.below(2) {
                0 => rng.byte(),
                _ => data[at].saturating_sub(1 + rng.below(16) as u8),
            };
        }
        // Flip a bit.
        4 if len > 0 => {
            let at = rng.below(len);
            data[at] ^= 1 << rng.below(8);
        }
        // Copy a part over another place (CopyPart's overwrite form).
        _ if len > 1 => {
            let n = 1 + rng.below(len / 2);
            let from = rng.below(len - n + 1);
            let to = rng.below(len - n + 1);
            let part = data[from..from + n].to_vec();
            data[to..to + n].copy_from_slice(&part);
        }
        _ => {}
    }
}

/// How many runs of more than [`LONG_RUN`] equal bytes `data` has.
fn long_runs(data: &[u8]) -> usize {
    data.chunk_by(|a, b| a == b)
        .filter(|run| run.len() > LONG_RUN)
        .count()
}

/// Runs `tests` random candidates against `input` (assumed interesting,
/// never tested), moving to each interesting one. Returns the result and
/// how many candidates were tested.
///
/// The result is interesting (or the input itself) and shortlex-smaller
/// than or equal to the input.
pub fn reduce_randomly<O>(input: &[u8], oracle: &mut O, seed: u64, tests: u64) -> (Vec<u8>, u64)
where
    O: Oracle<u8> + ?Sized,
{
    reduce_randomly_with(input, oracle, seed, tests, Draws::Shortlex)
}

/// [`reduce_randomly`] drawing `draws`; with [`Draws::Shorter`] the result
/// is the input itself or strictly shorter.
pub fn reduce_randomly_with<O>(
    input: &[u8],
    oracle: &mut O,
    seed: u64,
    tests: u64,
    draws: Draws,
) -> (Vec<u8>, u64)
where
    O: Oracle<u8> + ?Sized,
{
    let mut rng = Rng::new(seed);
    let mut current = input.to_vec();
    let mut used = 0u64;
    let mut drawn = 0u64;
    let mut runs = long_runs(&current);
    while used < tests && !oracle.exhausted() && !current.is_empty() {
        let mut batch = Vec::with_capacity(BATCH);
        // Bounded so that an input with no smaller mutant ends the stage.
        while batch.len() < BATCH.min((tests - used) as usize) && drawn < 64 * tests {
            drawn += 1;
            let mut c = current.clone();
            for _ in 0..1 + rng.below(3) {
                mutate(&mut rng, &mut c, draws);
            }
            let smaller = match draws {
                Draws::Shortlex => shortlex_less(&c, &current),
                Draws::Shorter => c.len() < current.len(),
            } && long_runs(&c) <= runs;
            if smaller && !batch.contains(&c) {
                batch.push(c);
            }
        }
        if batch.is_empty() {
            break;
        }
        if draws == Draws::Shorter {
            // Failures are cheap and a success is not: the shortest
            // candidates first, so that the one success this batch pays
            // for removes the most.
            batch.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        }
        match oracle.first_interesting(&batch) {
            Some(k) => {
                used += k as u64 + 1;
                current = batch.swap_remove(k);
                runs = long_runs(&current);
            }
            None => used += batch.len() as u64,
        }
    }
    (current, used)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{arb_case, shortlex_le, Recorder};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn same_seed_same_result_and_the_budget_holds() {
        let input = b"the quick brown fox jumps over the lazy dog";
        let pred = |c: &[u8]| c.iter().filter(|&&b| b == b'o').count() >= 2;
        let mut a = Recorder::new(|c: &[u8]| pred(c));
        let mut b = Recorder::new(|c: &[u8]| pred(c));
        let (ra, na) = reduce_randomly(input, &mut a, 7, 500);
        let (rb, nb) = reduce_randomly(input, &mut b, 7, 500);
        assert_eq!((&ra, na), (&rb, nb));
        assert_eq!(a.log, b.log);
        assert!(na <= 500 && a.log.len() as u64 == na);
        assert!(
            pred(&ra) && ra.len() < input.len() / 2,
            "{:?}",
            String::from_utf8_lossy(&ra)
        );
        let (rc, _) = reduce_randomly(input, &mut |c: &[u8]| pred(c), 8, 500);
        assert!(pred(&rc));
    }

    #[test]
    fn shorter_draws_take_big_steps_and_never_pay_for_same_length() {
        // Interesting: at least 40 bytes and 'x' kept. From 4,000 bytes,
        // the first success of the short-biased draws removes at most 128
        // bytes; libFuzzer-sized erasures get most of the way at once.
        let mut input = vec![b'a'; 4000];
        input[1234] = b'x';
        let pred = |c: &[u8]| c.len() >= 40 && c.contains(&b'x');
        let mut rec = Recorder::new(|c: &[u8]| pred(c));
        let (result, used) = reduce_randomly_with(&input, &mut rec, 3, 200, Draws::Shorter);
        assert!(
            pred(&result) && result.len() < 400,
            "{} bytes",
            result.len()
        );
        assert!(used <= 200);
        // Every candidate is shorter than the input it was drawn from.
        let mut current = input.len();
        for c in &rec.log {
            assert!(c.len() < current, "{} bytes drawn at {current}", c.len());
            if pred(c) {
                current = c.len();
            }
        }
    }

    #[test]
    fn no_draw_splits_a_long_run() {
        // A nest whose depth is what crashes: a byte dropped into either run
        // in place of two of its own would still be interesting, and
        // shorter, but it is never drawn.
        let mut input = vec![b'('; 200];
        input.push(b'a');
        input.extend(std::iter::repeat_n(b')', 200));
        let pred = |c: &[u8]| c.len() >= 300 && c.contains(&b'a');
        for draws in [Draws::Shortlex, Draws::Shorter] {
            let mut rec = Recorder::new(|c: &[u8]| pred(c));
            let (result, _) = reduce_randomly_with(&input, &mut rec, 5, 400, draws);
            assert!(pred(&result) && result.len() < input.len());
            assert!(!rec.log.is_empty());
            for c in &rec.log {
                assert!(
                    long_runs(c) <= 2,
                    "{draws:?} drew {:?}",
                    String::from_utf8_lossy(c)
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn result_is_interesting_and_never_larger(case in arb_case(), seed in any::<u64>()) {
            let holds = |c: &[u8]| case.holds(c);
            let (result, _) = reduce_randomly(&case.input, &mut { holds }, seed, 200);
            prop_assert!(holds(&result));
            prop_assert!(shortlex_le(&result, &case.input));
        }

        #[test]
        fn shorter_draws_are_interesting_and_shorter_or_the_input(case in arb_case(), seed in any::<u64>()) {
            let holds = |c: &[u8]| case.holds(c);
            let (result, _) =
                reduce_randomly_with(&case.input, &mut { holds }, seed, 200, Draws::Shorter);
            prop_assert!(holds(&result));
            prop_assert!(result == case.input || result.len() < case.input.len());
        }
    }
}
