//! The last deterministic pass on a tiny result: every input one byte
//! shorter that keeps all bytes but one where they were and gives one of
//! them any value.
//!
//! On a result of two or three bytes the passes before this one leave
//! inputs where a shorter one needs a byte deleted *and* another changed
//! to a value no lowering reaches: a DEFLATE stream whose three bytes
//! `0a 00 0d` can be two (`03 f5`: about one two-byte input in 55 makes
//! the same panic), which libFuzzer's random mutations (`cargo fuzz tmin -r
//! 10000`) found by chance. With three bytes the whole neighbourhood is
//! about a thousand candidates, a few milliseconds of an in-process
//! target, so this tries all of them, smallest first; with two bytes it is
//! every one-byte input.

use std::collections::BTreeSet;

use crate::reduce::oracle::Oracle;

/// The longest input this pass works on: three bytes give about a
/// thousand candidates; four would give three thousand.
pub const TINY: usize = 3;

/// Shortens `input` (interesting, at most [`TINY`] bytes; longer inputs
/// come back as they are) while some input one byte shorter, with every
/// byte but one in place, is interesting. The result is interesting (or the
/// input itself) and shortlex-smallest among the candidates of each step.
pub fn shorten_tiny<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    let mut current = input.to_vec();
    while (2..=TINY).contains(&current.len()) && !oracle.exhausted() {
        // Ordered: the first interesting candidate is the smallest.
        let mut candidates = BTreeSet::new();
        for deleted in 0..current.len() {
            let mut base = current.clone();
            base.remove(deleted);
            for at in 0..base.len() {
                for value in 0..=u8::MAX {
                    let mut c = base.clone();
                    c[at] = value;
                    candidates.insert(c);
                }
            }
        }
        let candidates: Vec<Vec<u8>> = candidates.into_iter().collect();
        match oracle.first_interesting(&candidates) {
            Some(k) => current.clone_from(&candidates[k]),
            None => break,
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::super::testing::Recorder;
    use super::*;

    #[test]
    fn a_deletion_and_a_new_value_together() {
        // Interesting: two bytes whose sum is 0xf8, or the original three
        // (no single deletion or lowering of them is).
        let pred =
            |c: &[u8]| c == [0x0a, 0x00, 0x0d] || (c.len() == 2 && c[0].wrapping_add(c[1]) == 0xf8);
        let mut rec = Recorder::new(|c: &[u8]| pred(c));
        let result = shorten_tiny(&[0x0a, 0x00, 0x0d], &mut rec);
        // The smallest such pair with a byte of the original in place.
        assert_eq!(result, [0x00, 0xf8]);
        // Two-byte candidates, then (none shorter) every single byte.
        assert!(rec.log.iter().all(|c| c.len() < 3));
        assert!(rec.log.len() <= 1536 + 256);
    }

    #[test]
    fn two_bytes_try_every_byte() {
        let mut rec = Recorder::new(|c: &[u8]| c == b"Az" || c == b"q");
        assert_eq!(shorten_tiny(b"Az", &mut rec), b"q");
        assert_eq!(rec.log.len(), usize::from(b'q') + 1);
        // Nothing shorter: the input comes back, after all 256.
        let mut rec = Recorder::new(|c: &[u8]| c == b"Az");
        assert_eq!(shorten_tiny(b"Az", &mut rec), b"Az");
        assert_eq!(rec.log.len(), 256);
    }

    #[test]
    fn longer_inputs_are_left_alone() {
        let mut rec = Recorder::new(|_: &[u8]| true);
        assert_eq!(shorten_tiny(b"four", &mut rec), b"four");
        assert!(rec.log.is_empty());
    }
}
