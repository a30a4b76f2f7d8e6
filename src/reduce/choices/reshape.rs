//! A pass for local minima that need a structural change and a value change
//! at once.
//!
//! A stack-machine bug "the top of the stack exceeds 1000" shrinks to
//! `[Push(4), Push(251), Mul]` (17 bytes) from some starts and to
//! `[Push(32), Dup, Mul]` (16 bytes) from others. From the first, `Push(251)`
//! cannot become `Dup` (one byte shorter: its payload goes) because `4 * 4`
//! is too small, and `Push(4)` cannot go up because that is not smaller; only
//! both together work. Every other pass changes one thing at a time, so the
//! shrinker stops there.
//!
//! This pass tries, for each enum variant (a *structural* draw followed by
//! *leaf* draws, its payload), every other variant with the last 1..=
//! [`MAX_PAYLOAD`] payload draws deleted, so the sequence gets shorter:
//! first alone, then with one nearby leaf draw (up to [`REACH`] draws before
//! the variant or after its payload) at its maximum; when that works, a
//! binary search finds the draw's smallest value that still works (`32`
//! here). Which top-byte values give different variants is found by
//! rendering ([`Oracle::render`], the value's `Debug` form; no oracle test),
//! so each variant is tried once. Without a rendering the pass does nothing.
//! A second pass does the same for the end of the sequence: the last 1..=
//! [`MAX_RUN`] bytes cut while a leaf draw before them goes up (the cut
//! part may leave a zero-filled element, e.g. `Dup` cut to a `Push(0)`).
//!
//! They cost (variants × deletions × nearby draws) tests per variant draw
//! and (cuts × nearby draws) per round, so the shrinker runs them only once
//! the other passes have nothing left.

use super::edit::Edit;
use super::passes::{max_int, read_int, write_int, Endian, MAX_RUN};
use super::{Shrinker, Unit};
use crate::reduce::oracle::{Oracle, SpanKind};
use std::collections::HashSet;

/// Most payload draws deleted after a changed variant.
const MAX_PAYLOAD: usize = 4;

/// How many leaf draws before a variant and after its payload may take
/// the repair value.
const REACH: usize = 6;

/// Usable as a repair: a leaf integer of a width `arbitrary` reads.
fn repairable(unit: &Unit) -> bool {
    unit.kind == SpanKind::Leaf && matches!(unit.len(), 1 | 2 | 4 | 8)
}

impl<O: Oracle<u8> + ?Sized> Shrinker<'_, O> {
    /// Returns whether it changed the current sequence.
    pub(super) fn shorter_variant(&mut self) -> bool {
        if self.oracle.render(&self.current).is_none() {
            return false;
        }
        let mut changed = false;
        // Ordinal of the structural draw being tried; after a success the
        // same ordinal is tried again on the new sequence.
        let mut index = 0;
        while let Some(units) = self.spans_for_next_step() {
            let list = &units.list;
            let Some(p) = list
                .iter()
                .enumerate()
                .filter(|(_, u)| u.kind == SpanKind::Structural)
                .nth(index)
                .map(|(p, _)| p)
            else {
                break;
            };
            let payload = list[p + 1..]
                .iter()
                .take(MAX_PAYLOAD)
                .take_while(|u| u.kind == SpanKind::Leaf)
                .count();
            if payload == 0 {
                index += 1;
                continue;
            }
            let tag = list[p];
            let payload_end = list[p + payload].end;
            // One top byte per variant, found by rendering.
            let mut seen = HashSet::new();
            let mut tops = Vec::new();
            for top in 0..=u8::MAX {
                let mut candidate = self.current.clone();
                candidate[tag.start..tag.end].fill(0);
                candidate[tag.end - 1] = top;
                if candidate[tag.start..tag.end] == self.current[tag.start..tag.end] {
                    continue;
                }
                if let Some(text) = self.oracle.render(&candidate) {
                    if seen.insert(text) {
                        tops.push(top);
                    }
                }
            }
            let mut shapes = Vec::new();
            for &top in &tops {
                let mut bytes = vec![0; tag.len()];
                bytes[tag.len() - 1] = top;
                for deleted in 1..=payload {
                    let from = list[p + 1 + payload - deleted].start;
                    shapes
                        .push(Edit::write(tag.start, bytes.clone()).and_delete(from, payload_end));
                }
            }
            if self.try_edits(&shapes).is_some() {
                changed = true;
                continue;
            }
            let before = list[..p].iter().rev().filter(|u| repairable(u));
            let after = list[p + 1 + payload..].iter().filter(|u| repairable(u));
            let repairs: Vec<Unit> = before
                .take(REACH)
                .chain(after.take(REACH))
                .copied()
                .collect();
            if self.with_raised_draw(&shapes, &repairs) {
                changed = true;
            } else {
                index += 1;
            }
        }
        changed
    }

    /// Cuts the last 1..=[`MAX_RUN`] bytes while one of the [`REACH`] leaf
    /// draws before the cut goes up: `[Push(121), Dup, Dup, Dup, Dup]`
    /// (the sum of the stack over 600) loses its last `Dup` but for its
    /// continuation byte, so it ends in a zero-filled `Push(0)`, only if
    /// `121` becomes `151`. Cutting alone is the `truncate` pass's.
    /// Returns whether it changed the current sequence.
    pub(super) fn shorter_tail(&mut self) -> bool {
        let mut changed = false;
        while let Some(units) = self.spans_for_next_step() {
            let len = self.current.len();
            let cut_works = |s: &mut Self, cut: usize| {
                let from = len - cut;
                let repairs: Vec<Unit> = units
                    .list
                    .iter()
                    .rev()
                    .filter(|u| u.end <= from && repairable(u))
                    .take(REACH)
                    .copied()
                    .collect();
                s.with_raised_draw(&[Edit::delete(from, len)], &repairs)
            };
            if !(1..=MAX_RUN.min(len)).any(|cut| cut_works(self, cut)) {
                break;
            }
            changed = true;
        }
        changed
    }

    /// Tries each of `shapes` (shorter sequences) with one of `repairs` at
    /// its maximum; the first that works is accepted with the repair draw
    /// lowered again by binary search to the smallest value that works
    /// (assuming larger ones keep working, a threshold). Returns whether one
    /// worked.
    fn with_raised_draw(&mut self, shapes: &[Edit], repairs: &[Unit]) -> bool {
        let repairs: Vec<Unit> = repairs
            .iter()
            .filter(|r| read_int(&self.current[r.start..r.end], Endian::Little) < max_int(r.len()))
            .copied()
            .collect();
        let mut edits = Vec::new();
        let mut pairs = Vec::new();
        for shape in shapes {
            for r in &repairs {
                edits.push(shape.clone().and_write(r.start, vec![u8::MAX; r.len()]));
                pairs.push((shape, *r));
            }
        }
        let Some(k) = self.first_success(&edits) else {
            return false;
        };
        let (shape, r) = pairs.swap_remove(k);
        let at = |c: u64| {
            shape
                .clone()
                .and_write(r.start, write_int(c, r.len(), Endian::Little))
        };
        let good = match self.test(&at(0)) {
            true => 0,
            false => self.lowest_working(0, max_int(r.len()), |s, c| s.test(&at(c))),
        };
        self.accept(&at(good));
        true
    }
}
