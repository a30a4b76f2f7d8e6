//! Binary fields: offsets, counts and lengths.
//!
//! In a binary format (ELF, PE, archives, compressed streams) deleting bytes
//! shifts every offset after them, so deletion stalls long before the input
//! is small. What works is lowering and zeroing the fields themselves: a
//! section-table offset lowered from `v` to `w` with the bytes `w..v`
//! deleted keeps the table where the offset says, and a lowered length or
//! count leaves a tail that nothing reads, which the pipeline's deletion
//! passes (or the `truncate` pass) then remove.
//!
//! Fields are 1-, 2-, 4- and 8-byte words, little- and big-endian, at every
//! offset: the wider ones when their value could be an offset, length or
//! count in this input (at most twice its length), bytes on inputs up to
//! [`BYTE_FIELDS_UP_TO`] long. Each is lowered by the `numbers` machinery
//! (one lower, zero, binary search; with the payload and absolute-offset
//! deletions). Before that, runs of bytes are zeroed, largest first.
//!
//! Neither touches the interior of a long periodic run ([`interiors`]), as
//! the deletion passes do not: a deep nest's units are alike, so a field
//! lowered in one of them is tried in the units at the run's ends. Text
//! with control bytes in a nest (a regex nest of `(\0((:` units, 16 KB)
//! counts as binary, and there every two ASCII bytes read as a plausible
//! 16-bit length: the pass spent 11,445 full-depth tests, 104 s, for
//! nothing.

use super::batch::Batch;
use super::chunks::interiors;
use super::numbers::{lower_numbers, Companions, Format, Number};
use crate::reduce::oracle::Oracle;

/// Single bytes are lowered only on inputs up to this long (each costs a
/// few tests).
pub const BYTE_FIELDS_UP_TO: usize = 4096;

/// Zeroing runs stops at this size; single bytes are `simplify`'s work.
const SMALLEST_ZERO_RUN: usize = 4;

/// Binary: the payload right after the field; absolute offsets too.
const BINARY: Companions = Companions {
    payload_gaps: &[0],
    absolute: true,
};

/// Every plausible field of `input`, by offset, widest first, but none
/// within a long periodic run's interior.
fn binary_fields(input: &[u8]) -> Vec<Number> {
    let plausible = 2 * input.len() as u64 + 16;
    let inside = interiors(input);
    let mut found = Vec::new();
    for at in 0..input.len() {
        for width in [8, 4, 2, 1] {
            if width == 1 && input.len() > BYTE_FIELDS_UP_TO {
                continue;
            }
            let Some(word) = input.get(at..at + width) else {
                continue;
            };
            if inside[at] != 0 && inside[at + width - 1] == inside[at] {
                continue;
            }
            for big_endian in [false, true] {
                if width == 1 && big_endian {
                    continue;
                }
                let mut buf = [0u8; 8];
                let value = if big_endian {
                    buf[8 - width..].copy_from_slice(word);
                    u64::from_be_bytes(buf)
                } else {
                    buf[..width].copy_from_slice(word);
                    u64::from_le_bytes(buf)
                };
                // A word whose top byte is zero is also a narrower word.
                let top = if big_endian { word[0] } else { word[width - 1] };
                if value == 0 || (width > 1 && (value > plausible || top == 0)) {
                    continue;
                }
                found.push(Number::new(
                    at..at + width,
                    value,
                    Format::Binary { width, big_endian },
                ));
            }
        }
    }
    found
}

/// Zeroes runs of bytes, then lowers binary fields, in `input` (assumed
/// interesting, never tested) while it stays interesting.
///
/// The result is interesting (or the input itself) and shortlex-smaller
/// than or equal to the input.
pub fn reduce_fields<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    let current = zero_runs(input, oracle);
    lower_numbers(&current, oracle, binary_fields, BINARY)
}

/// Replaces aligned runs of `len/2, len/4, …` bytes that are not all zero
/// by zeros, keeping each that works.
fn zero_runs<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    let mut current = input.to_vec();
    let mut batch = Batch::new();
    let mut size = current.len() / 2;
    while size >= SMALLEST_ZERO_RUN && !oracle.exhausted() {
        let mut from = 0;
        loop {
            let inside = interiors(&current);
            let starts: Vec<usize> = (from..current.len())
                .step_by(size)
                .filter(|&s| {
                    let end = (s + size).min(current.len());
                    current[s..end].iter().any(|&b| b != 0)
                        && (inside[s] == 0 || inside[end - 1] != inside[s])
                })
                .collect();
            let found = batch.first_interesting(oracle, starts.len(), |k, out| {
                let s = starts[k];
                out.extend_from_slice(&current);
                out[s..(s + size).min(current.len())].fill(0);
            });
            let Some(k) = found else { break };
            let s = starts[k];
            let end = (s + size).min(current.len());
            current[s..end].fill(0);
            from = s + size;
        }
        size /= 2;
    }
    current
}

#[cfg(test)]
mod tests {
    use super::super::testing::{arb_case, shortlex_le};
    use super::*;
    use crate::reduce::oracle::Cached;
    use proptest::prelude::*;

    /// "BF", a little-endian u32 offset, and 0xCC at that offset (after the
    /// header).
    fn header_points_at_marker(c: &[u8]) -> bool {
        if c.len() < 6 || &c[..2] != b"BF" {
            return false;
        }
        let off = u32::from_le_bytes(c[2..6].try_into().unwrap()) as usize;
        off >= 6 && c.get(off) == Some(&0xCC)
    }

    /// Seeded bytes in 1..=200 (never zero, never the 0xCC marker).
    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut rng = crate::reduce::rng::Rng::new(seed);
        (0..n).map(|_| rng.byte() % 200 + 1).collect()
    }

    #[test]
    fn a_header_and_offset_reduce_to_their_minimal_bytes() {
        let mut input = b"BF".to_vec();
        input.extend_from_slice(&1000u32.to_le_bytes());
        input.extend(noise(994, 7));
        input.push(0xCC);
        input.extend(noise(100, 9));
        assert!(header_points_at_marker(&input));
        let pred = |c: &[u8]| header_points_at_marker(c);
        let mut cached = Cached::new(pred);
        let result = super::super::reduce_bytes(&input, &mut cached);
        assert_eq!(
            result,
            b"BF\x06\x00\x00\x00\xCC",
            "{}",
            String::from_utf8_lossy(&result)
        );
        // The pass alone already lowers the offset and deletes what it skipped.
        let alone = reduce_fields(&input, &mut |c: &[u8]| pred(c));
        assert_eq!(&alone[..7], b"BF\x06\x00\x00\x00\xCC", "{alone:?}");
    }

    #[test]
    fn big_endian_lengths_and_zero_runs() {
        // A big-endian u16 length; interesting when the bytes it covers
        // contain "abc" (what follows them is not read).
        let valid = |c: &[u8]| {
            if c.len() < 2 {
                return false;
            }
            let n = u16::from_be_bytes([c[0], c[1]]) as usize;
            c.get(2..2 + n)
                .is_some_and(|p| p.windows(3).any(|w| w == b"abc"))
        };
        let mut input = 300u16.to_be_bytes().to_vec();
        input.extend(noise(200, 3));
        input.extend_from_slice(b"abc");
        input.extend(noise(500, 5));
        let mut cached = Cached::new(|c: &[u8]| valid(c));
        let result = super::super::reduce_bytes(&input, &mut cached);
        assert_eq!(
            result,
            b"\x00\x03abc",
            "{}",
            String::from_utf8_lossy(&result)
        );
    }

    #[test]
    fn a_nests_interior_costs_no_test() {
        // Text with a control byte in every unit counts as binary, and every
        // two of its bytes read as a plausible 16-bit length. The nest needs
        // all of its 600 units as they are: only its ends and the text
        // around it are tried.
        let unit = b"(\0((:";
        let nest = unit.repeat(600);
        let input = [b"head ".to_vec(), nest.clone(), b" tail".to_vec()].concat();
        let needed = |c: &[u8]| c.windows(nest.len()).any(|w| w == nest.as_slice());
        let mut recorder = crate::reduce::testing::Recorder::new(needed);
        let result = reduce_fields(&input, &mut recorder);
        assert!(needed(&result));
        let in_interior = |c: &Vec<u8>| {
            // A candidate that differs from the input only inside the nest,
            // at least `RUN_ENDS` units from either end.
            let margin = (super::super::simplify::RUN_ENDS + 1) * unit.len();
            let first = c.iter().zip(&input).position(|(a, b)| a != b);
            let last = c
                .iter()
                .rev()
                .zip(input.iter().rev())
                .position(|(a, b)| a != b);
            match (first, last) {
                (Some(f), Some(l)) => f >= 5 + margin && l >= 5 + margin,
                _ => false,
            }
        };
        let inside = recorder.log.iter().filter(|c| in_interior(c)).count();
        assert_eq!(
            inside,
            0,
            "{} of {} tests inside the nest",
            inside,
            recorder.log.len()
        );
        assert!(recorder.log.len() < 600, "{} tests", recorder.log.len());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn result_is_interesting_and_never_larger(case in arb_case()) {
            let holds = |c: &[u8]| case.holds(c);
            let result = reduce_fields(&case.input, &mut { holds });
            prop_assert!(holds(&result));
            prop_assert!(shortlex_le(&result, &case.input));
        }
    }
}
