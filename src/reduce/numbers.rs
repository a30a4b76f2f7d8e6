//! Numbers that must agree with the bytes after them.
//!
//! A length prefix (`_ZN4core3fmt…`, netstrings, bencode, chunked
//! encodings) or an offset must match what follows, so no deletion keeps it:
//! deleting payload bytes breaks the count, and the count cannot change
//! without the payload. This pass lowers a number *and* deletes the bytes
//! it no longer covers in one candidate.
//!
//! Numbers are found by a scanner (`text_numbers` for decimal and `0x`
//! hexadecimal literals; `fields` for binary words). For each number, the
//! pass first tries its value minus one (a screen: if that does not work,
//! nothing lower is likely to), then zero, then binary-searches the lowest
//! value that works. Every value is tried with these companions, lowering
//! from `v` to `w` (`d = v - w`), the payload starting right after the
//! number (text: also one separator byte later):
//!
//! * nothing else (a count or limit);
//! * deleting the payload's first `d` bytes, or its last `d` of `v`
//!   (a length prefix);
//! * deleting the bytes `w..v` of the input (a binary absolute offset, so
//!   what was at offset `v` is now at `w`).
//!
//! A literal with leading zeros is also tried rewritten without them. Only
//! shortlex-smaller candidates are tried, so the pass terminates.

use super::batch::Batch;
use super::oracle::shortlex_less;
use crate::reduce::oracle::Oracle;
use std::ops::Range;

/// How a number is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Decimal,
    /// `0x` followed by digits; `upper` for `A-F`.
    Hex {
        upper: bool,
    },
    /// A `width`-byte unsigned word.
    Binary {
        width: usize,
        big_endian: bool,
    },
}

impl Format {
    /// `value` written in this format; `None` if it does not fit.
    fn encode(self, value: u64) -> Option<Vec<u8>> {
        match self {
            Format::Decimal => Some(value.to_string().into_bytes()),
            Format::Hex { upper: false } => Some(format!("0x{value:x}").into_bytes()),
            Format::Hex { upper: true } => Some(format!("0x{value:X}").into_bytes()),
            Format::Binary { width, big_endian } => {
                if width < 8 && value >> (8 * width) != 0 {
                    return None;
                }
                let bytes = if big_endian {
                    value.to_be_bytes()[8 - width..].to_vec()
                } else {
                    value.to_le_bytes()[..width].to_vec()
                };
                Some(bytes)
            }
        }
    }

    /// The number written in this format at the start of `bytes`.
    fn decode(self, bytes: &[u8]) -> Option<Number> {
        match self {
            Format::Decimal => {
                let len = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
                let value = std::str::from_utf8(&bytes[..len]).ok()?.parse().ok()?;
                Some(Number::new(0..len, value, self))
            }
            Format::Hex { .. } => {
                let digits = bytes
                    .get(2..)?
                    .iter()
                    .take_while(|b| b.is_ascii_hexdigit())
                    .count();
                if !bytes.starts_with(b"0x") && !bytes.starts_with(b"0X") || digits == 0 {
                    return None;
                }
                let text = std::str::from_utf8(&bytes[2..2 + digits]).ok()?;
                let value = u64::from_str_radix(text, 16).ok()?;
                Some(Number::new(0..2 + digits, value, self))
            }
            Format::Binary { width, big_endian } => {
                let word = bytes.get(..width)?;
                let mut buf = [0u8; 8];
                let value = if big_endian {
                    buf[8 - width..].copy_from_slice(word);
                    u64::from_be_bytes(buf)
                } else {
                    buf[..width].copy_from_slice(word);
                    u64::from_le_bytes(buf)
                };
                Some(Number::new(0..width, value, self))
            }
        }
    }
}

/// A number found in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Number {
    pub(crate) range: Range<usize>,
    pub(crate) value: u64,
    pub(crate) format: Format,
}

impl Number {
    pub(crate) fn new(range: Range<usize>, value: u64, format: Format) -> Number {
        Number {
            range,
            value,
            format,
        }
    }

    /// Re-reads the number at the same place in `input`.
    fn reread(&self, input: &[u8]) -> Option<Number> {
        let mut n = self.format.decode(input.get(self.range.start..)?)?;
        n.range = self.range.start..self.range.start + n.range.end;
        Some(n)
    }
}

/// Decimal literals (maximal digit runs) and `0x` hexadecimal literals.
pub(crate) fn text_numbers(input: &[u8]) -> Vec<Number> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < input.len() {
        if !input[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let rest = &input[i..];
        let upper = rest
            .get(2..)
            .and_then(|r| r.iter().find(|b| b.is_ascii_alphabetic()))
            .is_some_and(u8::is_ascii_uppercase);
        let number = Format::Hex { upper }
            .decode(rest)
            .or_else(|| Format::Decimal.decode(rest));
        match number {
            Some(mut n) => {
                n.range = i..i + n.range.end;
                i = n.range.end;
                found.push(n);
            }
            // Too long for a u64: skip the digits.
            None => i += rest.iter().take_while(|b| b.is_ascii_digit()).count(),
        }
    }
    found
}

/// Where a number's payload may start, relative to its end.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Companions {
    /// Payload starts tried after the number's last byte (`[0]`: right
    /// after it; `[0, 1]`: also after one separator byte).
    pub(crate) payload_gaps: &'static [usize],
    /// Also try the absolute-offset deletion `w..v`.
    pub(crate) absolute: bool,
}

/// Text: the payload right after the literal or after one separator.
pub(crate) const TEXT: Companions = Companions {
    payload_gaps: &[0, 1],
    absolute: false,
};

/// A part of the screen holds the candidates of numbers until it has this
/// many candidates or bytes (as much as [`Batch`] hands over at once).
const SCREEN_CANDIDATES: usize = 128;
const SCREEN_BYTES: usize = 1 << 19;

/// Writes the candidates for lowering `n` to `to` into `out`, skipping
/// those not shortlex-smaller than `input`.
fn candidates(input: &[u8], n: &Number, to: u64, how: Companions, out: &mut Vec<Vec<u8>>) {
    let Some(encoded) = n.format.encode(to) else {
        return;
    };
    let (v, w) = (n.value as usize, to as usize);
    let d = v.saturating_sub(w);
    let mut deletions: Vec<Range<usize>> = Vec::with_capacity(1 + how.payload_gaps.len());
    deletions.push(n.range.end..n.range.end);
    if d > 0 {
        for &gap in how.payload_gaps {
            let s = n.range.end + gap;
            deletions.push(s..s.saturating_add(d));
            deletions.push(s.saturating_add(w)..s.saturating_add(v));
        }
        if how.absolute && w >= n.range.end {
            deletions.push(w..v);
        }
    }
    for del in deletions {
        if del.end > input.len() || del.start < n.range.end {
            continue;
        }
        let mut c = Vec::with_capacity(input.len());
        c.extend_from_slice(&input[..n.range.start]);
        c.extend_from_slice(&encoded);
        c.extend_from_slice(&input[n.range.end..del.start]);
        c.extend_from_slice(&input[del.end..]);
        if shortlex_less(&c, input) && !out.contains(&c) {
            out.push(c);
        }
    }
}

/// Lowers the numbers `find` reports in `input` (assumed interesting, never
/// tested) while it stays interesting, each as far as it goes.
///
/// The result is interesting (or the input itself) and shortlex-smaller
/// than or equal to the input.
pub(crate) fn lower_numbers<O, F>(input: &[u8], oracle: &mut O, find: F, how: Companions) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
    F: Fn(&[u8]) -> Vec<Number>,
{
    let mut current = input.to_vec();
    let mut batch = Batch::new();
    let mut next = 0;
    let mut screen: Vec<(usize, Vec<u8>)> = Vec::new();
    while !oracle.exhausted() {
        let numbers = find(&current);
        // The screen: each number one lower (or rewritten shorter), in order.
        // Built a few numbers at a time, as far as it is tested: a 50 KB
        // binary input holds thousands of digits, each worth a few copies
        // of the input, and the first candidate that works ends the screen.
        let mut found = None;
        let mut k = next;
        while found.is_none() && k < numbers.len() && !oracle.exhausted() {
            screen.clear();
            let mut bytes = 0;
            while k < numbers.len() && screen.len() < SCREEN_CANDIDATES && bytes < SCREEN_BYTES {
                let n = &numbers[k];
                let mut cs = Vec::new();
                candidates(&current, n, n.value, how, &mut cs);
                if n.value > 0 {
                    candidates(&current, n, n.value - 1, how, &mut cs);
                }
                bytes += cs.iter().map(Vec::len).sum::<usize>();
                screen.extend(cs.into_iter().map(|c| (k, c)));
                k += 1;
            }
            found = batch.first_interesting(oracle, screen.len(), |i, out| {
                out.extend_from_slice(&screen[i].1);
            });
        }
        let Some(i) = found else {
            return current;
        };
        let (k, accepted) = screen.swap_remove(i);
        current = accepted;
        if let Some(n) = numbers[k].reread(&current) {
            current = lower_further(current, n, how, oracle);
        }
        next = k + 1;
    }
    current
}

/// Tries zero, then binary-searches the lowest value of `n` that works.
fn lower_further<O>(mut current: Vec<u8>, mut n: Number, how: Companions, oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    let mut lowest_failed = None;
    let probe = |current: &mut Vec<u8>, n: &mut Number, to: u64, oracle: &mut O| -> bool {
        let mut cs = Vec::new();
        candidates(current, n, to, how, &mut cs);
        match oracle.first_interesting(&cs) {
            Some(i) => {
                *current = cs.swap_remove(i);
                match n.reread(current) {
                    Some(again) => *n = again,
                    None => n.value = to,
                }
                true
            }
            None => false,
        }
    };
    while n.value > 0 && !oracle.exhausted() {
        let lo = match lowest_failed {
            None => {
                if probe(&mut current, &mut n, 0, oracle) {
                    return current;
                }
                lowest_failed = Some(0);
                continue;
            }
            Some(lo) => lo,
        };
        if n.value - lo <= 1 {
            break;
        }
        let mid = lo + (n.value - lo) / 2;
        if !probe(&mut current, &mut n, mid, oracle) {
            lowest_failed = Some(mid);
        }
    }
    current
}

/// Lowers the decimal and hexadecimal literals of a text input.
pub fn reduce_numbers<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    lower_numbers(input, oracle, text_numbers, TEXT)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{arb_case, shortlex_le};
    use super::*;
    use proptest::prelude::*;

    /// A netstring list (`<len>:<payload>,`…), well-formed, with an `X`
    /// somewhere in a payload.
    fn netstring_with_x(mut c: &[u8]) -> bool {
        let mut x = false;
        while !c.is_empty() {
            let digits = c.iter().take_while(|b| b.is_ascii_digit()).count();
            let Some(len) = std::str::from_utf8(&c[..digits])
                .ok()
                .and_then(|s| s.parse::<usize>().ok())
            else {
                return false;
            };
            if digits > 1 && c[0] == b'0' || c.get(digits) != Some(&b':') {
                return false;
            }
            let Some(payload) = c.get(digits + 1..digits + 1 + len) else {
                return false;
            };
            if c.get(digits + 1 + len) != Some(&b',') {
                return false;
            }
            x |= payload.contains(&b'X');
            c = &c[digits + 2 + len..];
        }
        x
    }

    #[test]
    fn finds_decimal_and_hex_literals() {
        let ns = text_numbers(b"a12 0x1F 007 99999999999999999999 3");
        let found: Vec<(Range<usize>, u64)> =
            ns.iter().map(|n| (n.range.clone(), n.value)).collect();
        assert_eq!(found, vec![(1..3, 12), (4..8, 31), (9..12, 7), (34..35, 3)]);
        assert_eq!(ns[1].format, Format::Hex { upper: true });
    }

    #[test]
    fn a_length_prefixed_payload_reduces_to_its_shortest_form() {
        let mut input = b"1070:".to_vec();
        input.extend(std::iter::repeat_n(b'a', 1069));
        input.extend_from_slice(b"X,");
        assert!(netstring_with_x(&input));
        let result = reduce_numbers(&input, &mut |c: &[u8]| netstring_with_x(c));
        assert_eq!(result, b"1:X,");
        // The pipeline gets there too (deletion alone cannot).
        let mut cached = crate::reduce::oracle::Cached::new(|c: &[u8]| netstring_with_x(c));
        assert_eq!(super::super::reduce_bytes(&input, &mut cached), b"1:X,");
    }

    #[test]
    fn a_threshold_is_lowered_to_its_least_value_and_leading_zeros_go() {
        let pred = |c: &[u8]| {
            std::str::from_utf8(c)
                .ok()
                .and_then(|s| s.strip_prefix("n="))
                .and_then(|s| s.parse::<u64>().ok())
                .is_some_and(|n| n >= 1234)
        };
        assert_eq!(
            reduce_numbers(b"n=0099999", &mut |c: &[u8]| pred(c)),
            b"n=1234"
        );
    }

    #[test]
    fn the_screen_offers_every_number_in_order_across_its_parts() {
        // 300 numbers, a few candidates each: the screen comes in parts.
        let input: Vec<u8> = (1..=300)
            .map(|i| format!("{i} "))
            .collect::<String>()
            .into();
        let mut expected: Vec<Vec<u8>> = Vec::new();
        for n in text_numbers(&input) {
            let mut cs = Vec::new();
            candidates(&input, &n, n.value, TEXT, &mut cs);
            candidates(&input, &n, n.value - 1, TEXT, &mut cs);
            expected.extend(cs);
        }
        assert!(expected.len() > 2 * SCREEN_CANDIDATES);
        let mut rec = super::super::testing::Recorder::new(|_: &[u8]| false);
        assert_eq!(reduce_numbers(&input, &mut rec), input);
        assert_eq!(rec.log, expected);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn result_is_interesting_and_never_larger(case in arb_case()) {
            let holds = |c: &[u8]| case.holds(c);
            let result = reduce_numbers(&case.input, &mut { holds });
            prop_assert!(holds(&result));
            prop_assert!(shortlex_le(&result, &case.input));
        }
    }
}
