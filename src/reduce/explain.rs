//! Which parts of a reduced input matter: the explanation that follows a
//! reduction (Hypothesis's explain phase; `notes/triage-anchors.md` §5).
//!
//! A reduced input is 1-minimal: no part of it can go. But a part that
//! must be there need not need its value: `Remove(0)` may crash with any
//! index, a payload byte may be anything while the length field before it
//! may not. For each part (a draw of a typed target's choice sequence, from
//! [`Oracle::spans`]; else each byte) this tries variations of the same
//! width, deterministic ones first (all zeros, all ones, the value plus and
//! minus one as `arbitrary` reads integers, its top bit flipped), then
//! random ones, and calls the part **free** when every variation still
//! crashes the same way (the oracle's identity), **needed** at the first
//! one that does not (kept as the example). Then the free parts are varied
//! together, all at once: each may be free alone while some combination is
//! not (two fields of which one must be set, two that must differ).
//!
//! A variation keeps the input's length and every other byte. For a leaf
//! (an integer, a character) that changes one value and nothing else; for
//! a structural draw (an enum tag, a collection's continuation) what
//! follows may read differently, and "free" then means that whatever the
//! draw turns the value into still crashes.
//!
//! Only questions are asked: the input is never changed, and the answer
//! depends on the seed and the oracle only. The budget is a number of
//! tests, split evenly over the parts (at least [`MIN_TRIES`], at most
//! [`PER_PART`] each: Hypothesis calls a part free after 100 failures),
//! spent in two rounds, every part to [`MIN_TRIES`] first, so that a budget
//! cut short (by time: a crash that ends the process costs a fork) leaves
//! verdicts on every part it can rather than full confidence on a few; the
//! joint check gets what they left, at most [`PER_PART`]. A part the budget
//! did not reach is [`Verdict::Untried`].

use crate::reduce::oracle::{Oracle, Span, SpanKind};
use crate::reduce::rng::Rng;

/// The most variations tried on one part, and on all free parts together.
pub const PER_PART: usize = 100;

/// The fewest variations that make a part free (fewer when a part has
/// fewer possible values than this, which no part of a byte or more has).
pub const MIN_TRIES: usize = 8;

/// What the variations of one part showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every one of `tried` variations still crashed the same way.
    Free { tried: usize },
    /// This variation (the whole input with the part changed) did not.
    Needed { example: Vec<u8> },
    /// The budget ran out first, after `tried` variations that crashed.
    Untried { tried: usize },
}

/// One part of the input and its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Its bytes in the input, `start..end`.
    pub start: usize,
    pub end: usize,
    /// What the oracle's spans say it is ([`SpanKind::Leaf`] for a byte
    /// of an input without spans).
    pub kind: SpanKind,
    pub verdict: Verdict,
}

impl Part {
    pub fn is_free(&self) -> bool {
        matches!(self.verdict, Verdict::Free { .. })
    }
}

/// What varying every free part at once showed (with two or more).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Together {
    /// Every one of `tried` joint variations still crashed the same way.
    Always { tried: usize },
    /// This one did not: the free parts are free one at a time only.
    NotAlways { example: Vec<u8> },
    /// The budget ran out first, after `tried` that crashed.
    Untried { tried: usize },
}

/// The explanation of one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// Whether the parts are the oracle's draws (a typed target) or bytes.
    pub typed: bool,
    /// Every part, in input order (spans the oracle calls unused are left
    /// out: changing them changes nothing).
    pub parts: Vec<Part>,
    /// `None` with fewer than two free parts.
    pub together: Option<Together>,
    /// Tests asked of the oracle.
    pub tests: u64,
}

impl Explanation {
    /// The free parts merged where they touch: `start..end` byte ranges.
    pub fn free_ranges(&self) -> Vec<(usize, usize)> {
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for p in self.parts.iter().filter(|p| p.is_free()) {
            match ranges.last_mut() {
                Some(last) if last.1 == p.start => last.1 = p.end,
                _ => ranges.push((p.start, p.end)),
            }
        }
        ranges
    }
}

/// Explains `input` (interesting, as the reduction left it) with at most
/// `tests` tests; `seed` picks the random variations.
pub fn explain<O>(input: &[u8], oracle: &mut O, tests: u64, seed: u64) -> Explanation
where
    O: Oracle<u8> + ?Sized,
{
    let (typed, mut parts) = match oracle.spans(input) {
        Some(spans) => (true, parts_of(input.len(), &spans)),
        None => (
            false,
            (0..input.len())
                .map(|i| Part {
                    start: i,
                    end: i + 1,
                    kind: SpanKind::Leaf,
                    verdict: Verdict::Untried { tried: 0 },
                })
                .collect(),
        ),
    };
    let mut rng = Rng::new(seed);
    let mut used = 0u64;
    let per_part = usize::try_from(tests / (parts.len() as u64 + 1))
        .unwrap_or(usize::MAX)
        .clamp(MIN_TRIES, PER_PART);
    // The same variations as one part at a time would try, tried in two
    // rounds: first every part up to MIN_TRIES (enough for a verdict),
    // then the free ones on to `per_part`. When time runs short (a crash
    // that ends the process costs a fork each) every part has its verdict
    // before any gets more confidence.
    let variations: Vec<Vec<Vec<u8>>> = parts
        .iter()
        .map(|p| variations(&input[p.start..p.end], &mut rng, per_part))
        .collect();
    let mut tried = vec![0usize; parts.len()];
    let mut needed: Vec<Option<Vec<u8>>> = vec![None; parts.len()];
    let mut candidate = input.to_vec();
    // A typed target's values (leaves) tell most: they go first in each
    // round, the structural draws (tags, lengths) after them.
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| parts[i].kind != SpanKind::Leaf);
    'rounds: for limit in [MIN_TRIES.min(per_part), per_part] {
        for &i in &order {
            let part = &parts[i];
            let value = &input[part.start..part.end];
            while needed[i].is_none() && tried[i] < limit.min(variations[i].len()) {
                if used >= tests || oracle.exhausted() {
                    break 'rounds;
                }
                candidate[part.start..part.end].copy_from_slice(&variations[i][tried[i]]);
                used += 1;
                if oracle.test(&candidate) {
                    tried[i] += 1;
                } else if oracle.exhausted() {
                    // Refused for lack of budget, not answered: no verdict.
                    used -= 1;
                    break 'rounds;
                } else {
                    needed[i] = Some(candidate.clone());
                }
                candidate[part.start..part.end].copy_from_slice(value);
            }
        }
    }
    for ((part, tried), needed) in parts.iter_mut().zip(tried).zip(needed) {
        let width = part.end - part.start;
        part.verdict = match needed {
            Some(example) => Verdict::Needed { example },
            None if tried >= MIN_TRIES.min(alternatives(width)) => Verdict::Free { tried },
            None => Verdict::Untried { tried },
        };
    }
    let free: Vec<(usize, usize)> = parts
        .iter()
        .filter(|p| p.is_free())
        .map(|p| (p.start, p.end))
        .collect();
    let together = (free.len() >= 2).then(|| {
        let mut tried = 0;
        for k in 0..PER_PART {
            if used >= tests || oracle.exhausted() {
                return Together::Untried { tried };
            }
            for &(start, end) in &free {
                for b in &mut candidate[start..end] {
                    *b = match k {
                        0 => 0,
                        1 => 0xff,
                        _ => rng.byte(),
                    };
                }
            }
            if candidate == input {
                tried += 1;
                continue;
            }
            used += 1;
            if !oracle.test(&candidate) {
                if oracle.exhausted() {
                    // Refused for lack of budget, not answered.
                    used -= 1;
                    return Together::Untried { tried };
                }
                return Together::NotAlways {
                    example: candidate.clone(),
                };
            }
            tried += 1;
        }
        Together::Always { tried }
    });
    Explanation {
        typed,
        parts,
        together,
        tests: used,
    }
}

/// The oracle's spans as parts: clipped to the input, in order, without
/// overlaps or unused ones.
fn parts_of(len: usize, spans: &[Span]) -> Vec<Part> {
    let mut spans: Vec<&Span> = spans
        .iter()
        .filter(|s| s.kind != SpanKind::Unused && s.start < s.end.min(len))
        .collect();
    spans.sort_by_key(|s| (s.start, s.end));
    let mut parts: Vec<Part> = Vec::new();
    for s in spans {
        if parts.last().is_some_and(|p| p.end > s.start) {
            continue;
        }
        parts.push(Part {
            start: s.start,
            end: s.end.min(len),
            kind: s.kind,
            verdict: Verdict::Untried { tried: 0 },
        });
    }
    parts
}

/// How many other values a part of `width` bytes can take (saturating).
fn alternatives(width: usize) -> usize {
    1usize
        .checked_shl(8 * width as u32)
        .map_or(usize::MAX, |n| n - 1)
}

/// Up to `n` distinct variations of `value` (none equal to it), the
/// deterministic ones first.
fn variations(value: &[u8], rng: &mut Rng, n: usize) -> Vec<Vec<u8>> {
    let width = value.len();
    let mut out: Vec<Vec<u8>> = Vec::with_capacity(n);
    let push = |v: Vec<u8>, out: &mut Vec<Vec<u8>>| {
        if out.len() < n && v != value && !out.contains(&v) {
            out.push(v);
        }
    };
    push(vec![0; width], &mut out);
    push(vec![0xff; width], &mut out);
    push(add_le(value, 1), &mut out);
    push(add_le(value, u64::MAX), &mut out);
    let mut top = value.to_vec();
    top[width - 1] ^= 0x80;
    push(top, &mut out);
    let want = n.min(alternatives(width));
    // Random draws may repeat (a byte has 255 others): bounded tries.
    for _ in 0..16 * n {
        if out.len() >= want {
            break;
        }
        push((0..width).map(|_| rng.byte()).collect(), &mut out);
    }
    out
}

/// `value` read little-endian (as `arbitrary` reads integers) plus `delta`,
/// wrapping within its width.
fn add_le(value: &[u8], delta: u64) -> Vec<u8> {
    let mut out = value.to_vec();
    let mut carry = delta;
    for b in &mut out {
        let sum = u64::from(*b) + (carry & 0xff);
        *b = sum as u8;
        carry = (carry >> 8) + (sum >> 8);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing::Recorder;
    use super::*;
    use proptest::prelude::*;

    /// A predicate with the draws a typed driver would report.
    struct Typed<F> {
        pred: F,
        spans: Vec<Span>,
        log: Vec<Vec<u8>>,
    }

    impl<F: FnMut(&[u8]) -> bool> Oracle<u8> for Typed<F> {
        fn test(&mut self, candidate: &[u8]) -> bool {
            self.log.push(candidate.to_vec());
            (self.pred)(candidate)
        }
        fn spans(&mut self, _candidate: &[u8]) -> Option<Vec<Span>> {
            Some(self.spans.clone())
        }
    }

    /// Answers `answers` tests, then refuses every one (`false`) and says
    /// it is exhausted, as a budgeted oracle does when its time is up.
    struct Refusing {
        answers: usize,
        spans: Vec<Span>,
    }

    impl Oracle<u8> for Refusing {
        fn test(&mut self, _candidate: &[u8]) -> bool {
            if self.answers == 0 {
                return false;
            }
            self.answers -= 1;
            true
        }
        fn spans(&mut self, _candidate: &[u8]) -> Option<Vec<Span>> {
            Some(self.spans.clone())
        }
        fn exhausted(&self) -> bool {
            self.answers == 0
        }
    }

    #[test]
    fn a_test_refused_for_lack_of_budget_is_no_verdict() {
        // Every variation crashes the same way; the budget ends part-way
        // through the first part, then part-way through the joint check.
        for answers in [1, 2 * MIN_TRIES + 1] {
            let mut oracle = Refusing {
                answers,
                spans: vec![leaf(0, 1), leaf(1, 2)],
            };
            let e = explain(&[1, 1], &mut oracle, 1000, 1);
            assert!(
                e.parts
                    .iter()
                    .all(|p| !matches!(p.verdict, Verdict::Needed { .. })),
                "{answers}: {:?}",
                e.parts
            );
            assert!(
                !matches!(e.together, Some(Together::NotAlways { .. })),
                "{answers}: {:?}",
                e.together
            );
        }
    }

    fn leaf(start: usize, end: usize) -> Span {
        Span {
            start,
            end,
            kind: SpanKind::Leaf,
        }
    }

    fn verdicts(e: &Explanation) -> Vec<&'static str> {
        e.parts
            .iter()
            .map(|p| match p.verdict {
                Verdict::Free { .. } => "free",
                Verdict::Needed { .. } => "needed",
                Verdict::Untried { .. } => "untried",
            })
            .collect()
    }

    #[test]
    fn one_field_of_three_is_free() {
        // (u32 a, u16 b, u8 c): crashes when a == 7 and c > 100; b is free.
        let input = [7, 0, 0, 0, 0x34, 0x12, 200];
        let mut oracle = Typed {
            pred: |c: &[u8]| c[..4] == [7, 0, 0, 0] && c[6] > 100,
            spans: vec![leaf(0, 4), leaf(4, 6), leaf(6, 7)],
            log: Vec::new(),
        };
        let e = explain(&input, &mut oracle, 1000, 1);
        assert!(e.typed);
        assert_eq!(verdicts(&e), ["needed", "free", "needed"]);
        assert_eq!(e.parts[1].verdict, Verdict::Free { tried: PER_PART });
        // The first variation of `a` is zero; of `c`, zero too.
        assert_eq!(
            e.parts[0].verdict,
            Verdict::Needed {
                example: vec![0, 0, 0, 0, 0x34, 0x12, 200]
            }
        );
        assert_eq!(e.together, None);
        assert_eq!(e.tests, oracle.log.len() as u64);
        // Every question keeps the length and changes one part.
        assert!(oracle.log.iter().all(|c| c.len() == input.len()));
    }

    #[test]
    fn two_parts_free_alone_are_not_free_together() {
        // Crashes when either flag is set: each is free while the other
        // holds, not both at once.
        let input = [1, 1];
        let mut oracle = Typed {
            pred: |c: &[u8]| c[0] == 1 || c[1] == 1,
            spans: vec![leaf(0, 1), leaf(1, 2)],
            log: Vec::new(),
        };
        let e = explain(&input, &mut oracle, 1000, 1);
        assert_eq!(verdicts(&e), ["free", "free"]);
        assert_eq!(
            e.together,
            Some(Together::NotAlways {
                example: vec![0, 0]
            })
        );
        // Independent parts are free together.
        let mut oracle = Typed {
            pred: |c: &[u8]| c[0] == 9,
            spans: vec![leaf(0, 1), leaf(1, 2), leaf(2, 3)],
            log: Vec::new(),
        };
        let e = explain(&[9, 1, 1], &mut oracle, 1000, 1);
        assert_eq!(verdicts(&e), ["needed", "free", "free"]);
        assert_eq!(e.together, Some(Together::Always { tried: PER_PART }));
    }

    #[test]
    fn a_length_field_is_needed_and_its_payload_free() {
        // A bytes target: the first byte counts the rest.
        let input = b"\x03xyz";
        let pred = |c: &[u8]| usize::from(c[0]) == c.len() - 1;
        let mut rec = Recorder::new(|c: &[u8]| pred(c));
        let e = explain(input, &mut rec, 2000, 1);
        assert!(!e.typed);
        assert_eq!(verdicts(&e), ["needed", "free", "free", "free"]);
        assert_eq!(e.free_ranges(), [(1, 4)]);
        assert_eq!(e.together, Some(Together::Always { tried: PER_PART }));
    }

    #[test]
    fn the_budget_holds_and_leaves_the_rest_untried() {
        let input = [5u8; 40];
        let mut rec = Recorder::new(|_: &[u8]| true);
        let e = explain(&input, &mut rec, 100, 1);
        assert_eq!(e.tests, 100);
        assert_eq!(rec.log.len(), 100);
        // 100 tests, 8 a part: 12 parts free, the 13th half-way, the rest
        // not reached.
        assert_eq!(e.parts.iter().filter(|p| p.is_free()).count(), 12);
        assert_eq!(e.parts[12].verdict, Verdict::Untried { tried: 4 });
        assert_eq!(e.parts[39].verdict, Verdict::Untried { tried: 0 });
        assert_eq!(e.together, Some(Together::Untried { tried: 0 }));
    }

    #[test]
    fn a_short_budget_gives_every_part_a_verdict_before_more_confidence() {
        // 3 free parts, 400 tests: 100 a part. An oracle that stops after
        // 30 (the time a fork per crash allows) still gives all three
        // their first 8 and the first part 6 more; one part at a time
        // would have spent all 30 on the first.
        struct Stops(u32);
        impl Oracle<u8> for Stops {
            fn test(&mut self, _: &[u8]) -> bool {
                self.0 -= 1;
                true
            }
            fn exhausted(&self) -> bool {
                self.0 == 0
            }
        }
        let input = [1u8, 2, 3];
        let e = explain(&input, &mut Stops(30), 400, 1);
        assert_eq!(verdicts(&e), ["free", "free", "free"]);
        assert_eq!(
            e.parts[0].verdict,
            Verdict::Free {
                tried: MIN_TRIES + 6
            }
        );
        assert_eq!(e.parts[2].verdict, Verdict::Free { tried: MIN_TRIES });
        // A needed part stops at its first failure, in the first round.
        let mut rec = Recorder::new(|c: &[u8]| c[1] == 2);
        let e = explain(&input, &mut rec, 400, 1);
        assert_eq!(verdicts(&e), ["free", "needed", "free"]);
    }

    #[test]
    fn integers_vary_as_arbitrary_reads_them() {
        assert_eq!(add_le(&[0xff, 0x00], 1), [0x00, 0x01]);
        assert_eq!(add_le(&[0x00, 0x01], u64::MAX), [0xff, 0x00]);
        assert_eq!(add_le(&[0xff, 0xff], 1), [0x00, 0x00]);
        let mut rng = crate::reduce::rng::Rng::new(0);
        let v = variations(&[7], &mut rng, 1000);
        assert_eq!(v.len(), 255, "every other byte value");
        assert_eq!(&v[..5], [[0], [0xff], [8], [6], [0x87]]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn verdicts_are_what_the_oracle_said(
            input in proptest::collection::vec(any::<u8>(), 1..24),
            needed in proptest::collection::vec(any::<bool>(), 24),
            seed in any::<u64>(),
            tests in 0u64..3000,
        ) {
            // Interesting: the bytes marked needed keep their values.
            let original = input.clone();
            let marks = needed.clone();
            let pred = move |c: &[u8]| {
                c.len() == original.len()
                    && c.iter().zip(&original).zip(&marks).all(|((a, b), &m)| !m || a == b)
            };
            let mut rec = Recorder::new(|c: &[u8]| pred(c));
            let e = explain(&input, &mut rec, tests, seed);
            prop_assert!(e.tests <= tests);
            prop_assert_eq!(e.tests, rec.log.len() as u64);
            for p in &e.parts {
                match &p.verdict {
                    Verdict::Needed { example } => {
                        prop_assert!(needed[p.start]);
                        prop_assert!(!pred(example));
                    }
                    Verdict::Free { .. } => prop_assert!(!needed[p.start]),
                    Verdict::Untried { .. } => {}
                }
            }
            if let Some(Together::NotAlways { .. }) = e.together {
                prop_assert!(false, "independent free bytes are free together");
            }
        }
    }
}
