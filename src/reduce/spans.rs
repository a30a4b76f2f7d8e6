//! Deleting whole spans between two boundaries of a text.
//!
//! The other passes delete aligned chunks, runs grown from one position,
//! windows of up to [`super::chunks::MAX_WINDOW`] bytes and
//! single bytes. A 1-minimal result can still hold a long run that only
//! goes as a whole and starts where no chunk starts: on a MIME parser's
//! crash, deleting one 38-byte run of a 109-byte result (from one line
//! start to another) still crashed the same way, and no pass tried it.
//! This pass tries, longest first, the deletion of every span between two
//! *boundaries*: the start and end of the input, line starts, the edges of
//! tokens (runs of letters and digits, runs of blanks, runs of one other
//! byte), and so both ends of every bracketed pair. Its fixpoint guarantees that no
//! single deletion of such a span is still interesting.
//!
//! Spans are quadratic in the boundaries, so the pass keeps to inputs with
//! at most [`MAX_BOUNDARIES`] of them (first trying with line starts only
//! when there are more): it is meant for the last, small stage of a
//! reduction, where every other pass has stalled.

use super::batch::{write_without, Batch};
use super::chunks::MAX_WINDOW;
use crate::reduce::oracle::Oracle;

/// Above this many boundaries the pass tries spans between line starts
/// only, and above it again, nothing: 120 boundaries make about 7,000
/// spans, a second or less of tests on an in-process target.
pub const MAX_BOUNDARIES: usize = 120;

/// Deletes spans between boundaries of `input` (assumed interesting, never
/// tested), longest first, until no such deletion is interesting. The
/// result is interesting (or the input itself) and never longer.
pub fn delete_spans<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    let mut current = input.to_vec();
    let mut batch = Batch::new();
    while !oracle.exhausted() {
        let Some(spans) = spans(&current) else { break };
        let found = batch.first_interesting(oracle, spans.len(), |k, out| {
            let (lo, hi) = spans[k];
            write_without(&current, lo, hi, out);
        });
        let Some(k) = found else { break };
        let (lo, hi) = spans[k];
        current.drain(lo..hi);
    }
    current
}

/// The spans to try on `input`, longest first (then leftmost), each wider
/// than the windows pass's widest; `None` when there are too many
/// boundaries even among line starts.
fn spans(input: &[u8]) -> Option<Vec<(usize, usize)>> {
    let mut cuts = boundaries(input);
    if cuts.len() > MAX_BOUNDARIES {
        cuts = line_starts(input);
        if cuts.len() > MAX_BOUNDARIES {
            return None;
        }
    }
    let mut spans = Vec::new();
    for (a, &lo) in cuts.iter().enumerate() {
        for &hi in &cuts[a + 1..] {
            if hi - lo > MAX_WINDOW {
                spans.push((lo, hi));
            }
        }
    }
    spans.sort_by_key(|&(lo, hi)| (std::cmp::Reverse(hi - lo), lo));
    Some(spans)
}

/// What a byte is, for token edges.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Word,
    Blank,
    /// Every other byte is a token of its own.
    Other,
}

fn class(b: u8) -> Class {
    if b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80 {
        Class::Word
    } else if b == b' ' || b == b'\t' || b == b'\r' || b == b'\n' {
        Class::Blank
    } else {
        Class::Other
    }
}

/// Offsets `0..=len` where a token or a line starts or ends, ascending. A
/// run of one repeated punctuation byte is one token: the brackets of a
/// nesting at its minimal depth would otherwise give a boundary each and
/// thousands of spans, every one of them too shallow to crash (the
/// nesting pass has tried those depths already).
fn boundaries(input: &[u8]) -> Vec<usize> {
    let mut cuts = vec![0];
    for i in 1..input.len() {
        let (a, b) = (class(input[i - 1]), class(input[i]));
        let repeated = input[i - 1] == input[i];
        if a != b || (a == Class::Other && !repeated) || input[i - 1] == b'\n' {
            cuts.push(i);
        }
    }
    if !input.is_empty() {
        cuts.push(input.len());
    }
    cuts
}

/// `0`, every offset after a newline, and the end.
fn line_starts(input: &[u8]) -> Vec<usize> {
    let mut cuts = vec![0];
    cuts.extend(
        input
            .iter()
            .enumerate()
            .filter(|&(i, &b)| b == b'\n' && i + 1 < input.len())
            .map(|(i, _)| i + 1),
    );
    if !input.is_empty() {
        cuts.push(input.len());
    }
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::testing::Recorder;
    use proptest::prelude::*;

    #[test]
    fn a_run_from_one_line_to_another_goes_as_a_whole() {
        // The middle two lines go only together (each alone leaves an
        // unbalanced `(`/`)`), and they start neither at a chunk nor at a
        // window's reach.
        let input = b"head: 1\nx-open: (aaaaaa\nx-close: bbbbbb)\nbody: CRASH\n".to_vec();
        let ok = |c: &[u8]| {
            let text = String::from_utf8_lossy(c);
            text.contains("CRASH")
                && text.starts_with("head")
                && text.matches('(').count() == text.matches(')').count()
        };
        let mut rec = Recorder::new(ok);
        let out = delete_spans(&input, &mut rec);
        assert!(ok(&out));
        assert!(!String::from_utf8_lossy(&out).contains("open"), "{out:?}");
        assert!(rec.log.iter().all(|c| c != &input), "the input was tested");
    }

    #[test]
    fn a_nesting_is_a_few_tokens() {
        // 50 levels: the run of openings, the core, the run of closings.
        let mut input = b"(".repeat(50);
        input.extend_from_slice(b"1");
        input.extend_from_slice(&b")".repeat(50));
        assert_eq!(boundaries(&input), vec![0, 50, 51, 101]);
    }

    #[test]
    fn too_many_boundaries_fall_back_to_lines_then_to_nothing() {
        // 200 one-byte tokens on one line: only the whole line is a span.
        let input = b"+-".repeat(100);
        assert_eq!(spans(&input), Some(vec![(0, 200)]));
        // 200 lines: nothing at all.
        assert_eq!(spans(&b"+-\n".repeat(200)), None);
        // 20 lines of 9 tokens: spans between line starts only.
        let lines = b"+-+-+-+-+\n".repeat(20);
        let spans = spans(&lines).unwrap();
        assert!(spans.iter().all(|&(lo, hi)| lo % 10 == 0 && hi % 10 == 0));
        assert_eq!(spans[0], (0, 200));
    }

    proptest! {
        /// The fixpoint: interesting, no longer, and no span between two
        /// boundaries of the result can still be deleted.
        #[test]
        fn no_span_of_the_result_can_go(
            input in proptest::collection::vec(
                prop_oneof![Just(b'a'), Just(b' '), Just(b'\n'), Just(b'('), Just(b')'), Just(b'X')],
                0..60,
            ),
            keep in 0usize..3,
        ) {
            let count = |c: &[u8]| c.iter().filter(|&&b| b == b'X').count();
            let want = count(&input).min(keep);
            let ok = move |c: &[u8]| count(c) >= want && c.len().is_multiple_of(3) || c.len() >= 40;
            prop_assume!(ok(&input));
            let mut rec = Recorder::new(ok);
            let out = delete_spans(&input, &mut rec);
            prop_assert!(ok(&out));
            prop_assert!(out.len() <= input.len());
            if let Some(spans) = spans(&out) {
                for (lo, hi) in spans {
                    let mut c = out[..lo].to_vec();
                    c.extend_from_slice(&out[hi..]);
                    prop_assert!(!ok(&c), "{:?} without {lo}..{hi} is still interesting", out);
                }
            }
        }
    }
}
