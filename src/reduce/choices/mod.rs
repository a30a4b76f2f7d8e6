//! A Hypothesis-style shrinker for choice sequences: byte strings that a
//! decoder (`arbitrary::Unstructured`, a generator reading one byte per
//! decision) turns into a value.
//!
//! Deleting arbitrary chunks of such a sequence mostly misaligns every later
//! draw; the passes here instead edit whole *draws*: they delete a draw
//! together with the structural byte that announced it, delete characters
//! inside a string while its tail-stored length drops to match
//! (`leaves.rs`), zero a draw, turn a
//! tag off and delete its payload, lower an integer in the byte order the
//! decoder reads it (by binary search, then small values and halvings,
//! since a value used modulo something does not lower monotonically), sort
//! equal-shaped draws, lower duplicated values together, move value between
//! nearby draws or lower both, and lower a draw while a later one takes a
//! repair value (two draws that only work together: a size and an
//! alignment, a product over a threshold, a checksum). Once those have
//! nothing left, one costlier pass (`reshape.rs`) changes an enum variant
//! (shortening its payload) while a nearby value goes up: a structure
//! change and a value change that only work together. Where a draw starts
//! and ends comes from [`Oracle::spans`] when the oracle can tell (a typed fuzz
//! target's driver probes its decoder, see [`probe_spans`]); otherwise every
//! pass falls back to all offsets and widths 1..=9.
//!
//! **Order.** Every candidate offered to the oracle comes strictly before
//! the current sequence: it is shorter, or as long and lexicographically
//! smaller *draw by draw*. Without spans a draw is a byte, so this is plain
//! shortlex order over bytes. With spans it is Hypothesis's sort key
//! (shortlex over choice values): a leaf span of width 2, 4 or 8 is an
//! integer `arbitrary` reads little-endian and compares by its value, so
//! `(1000, 301)` = `e8 03 00 00 2d 01` comes before `(16777216, 512)` =
//! `00 00 00 01 00 02` although its bytes are larger.
//! Since spans are those of the current sequence, a sequence that was
//! current once is never accepted again, which keeps the search finite.
//! Either way the shrinker prefers the values an `arbitrary` decoder reads
//! as simplest (zero bytes: `0`, `false`, `None`, variant 0, empty
//! collections).
//!
//! Each round ends with byte-level [`ddmin`](crate::reduce::ddmin()), so
//! the result is also 1-minimal; rounds repeat until one changes nothing.
//!
//! **Presentation.** Last, when the oracle can render a sequence (a typed
//! target's `Debug` form), a last step (`present.rs`) swaps structural draws (enum variants
//! above all) for ones that read shorter at the same length, and `ddmin`
//! runs again after any change: shortlex order puts `Remove(0)` before
//! `Clear` when `Remove` is declared first, a person reading the result
//! would not.
//!
//! See `/work/shared/notes/reducer-anchors.md` §1 for the Hypothesis passes
//! these follow and `cargo-fuzz-internals.md` §4 for the `arbitrary` byte
//! layout they aim at.
//!
//! About 600 lines, most of them the module's tests.

mod edit;
mod leaves;
mod passes;
mod present;
mod probe;
mod reshape;
#[cfg(test)]
mod tests;

use super::batch::Batch;
use crate::reduce::oracle::{Oracle, Span, SpanKind};
use edit::Edit;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};
use std::rc::Rc;

pub use probe::probe_spans;
pub(crate) use probe::tokens as debug_tokens;

/// Inputs longer than this first go through [`delete_chunks`] (cheap coarse
/// deletion) before the draw-aware passes.
///
/// [`delete_chunks`]: crate::reduce::delete_chunks
const COARSE_ABOVE: usize = 512;

/// Shrinks the choice sequence `input` (assumed interesting, never tested).
///
/// The result is interesting (or the input itself), never longer than the
/// input, and 1-minimal (no single byte can be deleted) — unless the oracle
/// became exhausted, in which case the best sequence so far is returned.
/// When the oracle has no spans every accepted step is shortlex-smaller in
/// bytes, so the result is shortlex-smaller than or equal to the input;
/// with spans, steps of equal length are smaller in the draw order
/// (integers by value, see the module docs), which may mean larger bytes;
/// when the oracle renders sequences, the last step may also trade a
/// structural draw for one that reads shorter at the same length.
///
/// ```
/// use reduce_crash::reduce::shrink_choices;
/// // Interesting: some byte is at least 100, and a later byte is odd.
/// let pred = |c: &[u8]| {
///     c.iter().position(|&b| b >= 100).is_some_and(|i| c[i + 1..].iter().any(|b| b % 2 == 1))
/// };
/// let shrunk = shrink_choices(b"\x07\xc8\x10\x33\x02", &mut |c: &[u8]| pred(c));
/// assert_eq!(shrunk, [100, 1]);
/// ```
pub fn shrink_choices<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    let mut shrinker = Shrinker::new(input, oracle);
    shrinker.run();
    shrinker.current
}

/// Element types [`Strategy::Choices`](crate::reduce::Strategy::Choices) can
/// shrink: the choice-sequence passes need byte arithmetic, so only `u8`
/// implements this (as only `u8` implements
/// [`Canonical`](crate::reduce::Canonical)).
pub trait ChoiceElement: Sized {
    /// [`shrink_choices`] for this element type.
    fn shrink_choices<O>(input: &[Self], oracle: &mut O) -> Vec<Self>
    where
        O: Oracle<Self> + ?Sized;
}

impl ChoiceElement for u8 {
    fn shrink_choices<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
    where
        O: Oracle<u8> + ?Sized,
    {
        shrink_choices(input, oracle)
    }
}

/// `a` comes strictly before `b` in shortlex order.
pub(crate) fn shortlex_lt(a: &[u8], b: &[u8]) -> bool {
    (a.len(), a) < (b.len(), b)
}

/// One draw as the passes see it: a span from the oracle, or (without
/// spans) a single byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unit {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) kind: SpanKind,
}

impl Unit {
    pub(crate) fn len(&self) -> usize {
        self.end - self.start
    }
}

/// The draws of the current sequence.
#[derive(Debug, Clone)]
pub(crate) struct Units {
    /// `true` when the units come from [`Oracle::spans`]; `false` when they
    /// are single bytes (kind [`SpanKind::Leaf`], meaning "unknown").
    pub(crate) typed: bool,
    pub(crate) list: Vec<Unit>,
}

impl Units {
    /// Whether `unit` holds a plain integer (`arbitrary` reads it
    /// little-endian): a leaf span of width 2, 4 or 8.
    pub(crate) fn is_int(&self, unit: &Unit) -> bool {
        self.typed && unit.kind == SpanKind::Leaf && matches!(unit.len(), 2 | 4 | 8)
    }

    /// The *draw order* of two sequences of equal length with these units:
    /// lexicographic over the units, where an integer unit ([`Self::is_int`])
    /// compares by its little-endian value and everything else bytewise.
    /// Without spans this is plain lexicographic order.
    pub(crate) fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        debug_assert_eq!(a.len(), b.len());
        let Some(first) = a.iter().zip(b).position(|(x, y)| x != y) else {
            return Ordering::Equal;
        };
        if self.typed {
            let k = self.list.partition_point(|u| u.end <= first);
            if let Some(unit) = self
                .list
                .get(k)
                .filter(|u| self.is_int(u) && u.start <= first)
            {
                // Bytes before `first` are equal, so this unit decides.
                let (x, y) = (&a[unit.start..unit.end], &b[unit.start..unit.end]);
                return x.iter().rev().cmp(y.iter().rev());
            }
        }
        a[first].cmp(&b[first])
    }
}

/// The shrinker's state: the current sequence and the oracle.
pub(crate) struct Shrinker<'o, O: ?Sized> {
    oracle: &'o mut O,
    pub(crate) current: Vec<u8>,
    batch: Batch<u8>,
    /// Bumped on every accepted candidate.
    version: u64,
    /// Units of `current` as of `version`.
    units: Option<(u64, Rc<Units>)>,
    /// `units` were carried over a same-length edit that may have changed
    /// the structure (a variant, a flag): good enough to aim the rest of
    /// the current pass, probed again before the next pass.
    provisional: bool,
    /// Hashes of every sequence that has been `current`: with spans the
    /// order depends on the current units, so a candidate that was current
    /// before is never accepted again (no cycles).
    visited: HashSet<u64>,
    hasher: RandomState,
    scratch: Vec<u8>,
}

impl<'o, O: Oracle<u8> + ?Sized> Shrinker<'o, O> {
    pub(crate) fn new(input: &[u8], oracle: &'o mut O) -> Self {
        let hasher = RandomState::new();
        Shrinker {
            oracle,
            current: input.to_vec(),
            batch: Batch::new(),
            version: 0,
            units: None,
            provisional: false,
            visited: HashSet::from([hasher.hash_one(input)]),
            hasher,
            scratch: Vec::new(),
        }
    }

    /// Passes to a fixpoint, each round closed by `ddmin`.
    fn run(&mut self) {
        if self.current.len() > COARSE_ABOVE {
            let coarse = super::delete_chunks(&self.current, &mut *self.oracle);
            self.replace(coarse);
        }
        loop {
            let before = self.version;
            for pass in passes::passes::<O>() {
                if self.exhausted() || self.current.is_empty() {
                    return;
                }
                if self.provisional {
                    self.units = None;
                    self.provisional = false;
                }
                self.truncate();
                (pass.run)(self);
            }
            if self.exhausted() {
                return;
            }
            let minimal = super::ddmin(&self.current, &mut *self.oracle);
            self.replace(minimal);
            if self.exhausted() {
                return;
            }
            // The costly pass only once the others have nothing left.
            if self.version == before && !(self.shorter_variant() | self.shorter_tail()) {
                break;
            }
        }
        // Every step shortens the rendering at the same length or shortens
        // the sequence, so this ends.
        while !self.exhausted() && self.present() {
            let minimal = super::ddmin(&self.current, &mut *self.oracle);
            self.replace(minimal);
        }
    }

    /// Adopts an interesting `next` that is not necessarily shortlex-smaller
    /// (the presentation step's choice); never seen again as a candidate.
    fn adopt(&mut self, next: Vec<u8>) {
        self.visited.insert(self.hasher.hash_one(&next));
        self.current = next;
        self.version += 1;
    }

    pub(crate) fn exhausted(&self) -> bool {
        self.oracle.exhausted()
    }

    /// Adopts the result of another reducer (interesting and not larger by
    /// its contract); counts as a change only when it is smaller.
    fn replace(&mut self, result: Vec<u8>) {
        if shortlex_lt(&result, &self.current) {
            self.visited.insert(self.hasher.hash_one(&result));
            self.current = result;
            self.version += 1;
        }
    }

    /// The draws of the current sequence: the oracle's spans, cleaned up
    /// (sorted, clipped, overlaps dropped, gaps filled with `Unused`), or
    /// single bytes when it has none. Asked again after an accepted change
    /// unless [`Self::accept`] could carry them over.
    pub(crate) fn units(&mut self) -> Rc<Units> {
        if let Some((version, units)) = &self.units {
            if *version == self.version {
                return Rc::clone(units);
            }
        }
        let units = match self.oracle.spans(&self.current) {
            Some(spans) => Units {
                typed: true,
                list: clean_spans(spans, self.current.len()),
            },
            None => Units {
                typed: false,
                list: (0..self.current.len())
                    .map(|i| Unit {
                        start: i,
                        end: i + 1,
                        kind: SpanKind::Leaf,
                    })
                    .collect(),
            },
        };
        let units = Rc::new(units);
        self.units = Some((self.version, Rc::clone(&units)));
        units
    }

    /// The units for the next step of a pass that needs spans: `None` once
    /// the oracle is exhausted, or when it has no spans.
    pub(crate) fn spans_for_next_step(&mut self) -> Option<Rc<Units>> {
        if self.exhausted() {
            return None;
        }
        let units = self.units();
        units.typed.then_some(units)
    }

    /// Whether `candidate` comes before the current sequence: shorter, or as
    /// long and smaller in the draw order of the current units
    /// ([`Units::compare`]; plain shortlex without spans).
    fn precedes(&mut self, candidate: &[u8]) -> bool {
        match candidate.len().cmp(&self.current.len()) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => self.units().compare(candidate, &self.current) == Ordering::Less,
        }
    }

    /// Whether `edit` turns the current sequence into one that precedes it
    /// and has never been current.
    fn improves(&mut self, edit: &Edit) -> bool {
        if !edit.apply(&self.current, &mut self.scratch) {
            return false;
        }
        let candidate = std::mem::take(&mut self.scratch);
        let improves =
            self.precedes(&candidate) && !self.visited.contains(&self.hasher.hash_one(&candidate));
        self.scratch = candidate;
        improves
    }

    /// Tests one candidate; `false` without testing when it is not an
    /// improvement or the oracle is exhausted. Does not adopt it.
    pub(crate) fn test(&mut self, edit: &Edit) -> bool {
        if self.exhausted() || !self.improves(edit) {
            return false;
        }
        self.oracle.test(&self.scratch)
    }

    /// Adopts `edit`, which the oracle has just found interesting.
    pub(crate) fn accept(&mut self, edit: &Edit) {
        let mut next = Vec::with_capacity(self.current.len());
        let valid = edit.apply(&self.current, &mut next);
        assert!(valid && self.precedes(&next));
        let carried = self.units_kept_by(edit);
        self.visited.insert(self.hasher.hash_one(&next));
        self.current = next;
        self.version += 1;
        if let Some(units) = carried {
            self.units = Some((self.version, units));
        } else if edit.deletion().is_none() && edit.dropped().is_none() {
            // Same length, a structural byte written: the positions still
            // hold, the kinds after it may not. Probing after every such
            // step (a sweep lowering every variant of a long `Vec<Op>`) cost
            // 583 probes and 25 s on 6,000 bytes; once per pass, 8 and 5 s
            // with the same result (`cargo bench --bench relations`).
            if let Some((_, units)) = self.units.take() {
                self.units = Some((self.version, units));
                self.provisional = true;
            }
        }
    }

    /// The current units, if they still describe the sequence after `edit`
    /// without probing again: the edit only overwrites bytes of leaf units
    /// (a value changed where flipping bytes changed only that value), and
    /// deletes whole units if anything (an element, a run of draws, the
    /// tail), without a tail-stored length to adjust. Probing costs a few
    /// decodes per byte, so this saves probing on long inputs. A value that
    /// does change the structure at its new value (rare: probing tried two
    /// others) leaves the units stale until the next structural edit; they
    /// only aim candidates, every candidate is still tested.
    fn units_kept_by(&self, edit: &Edit) -> Option<Rc<Units>> {
        let (version, units) = self.units.as_ref()?;
        if *version != self.version
            || !units.typed
            || edit.tail() != edit::Tail::Keep
            || edit.dropped().is_some()
        {
            return None;
        }
        if let Some(list) = Self::shortened_leaf(units, edit) {
            return Some(Rc::new(Units { typed: true, list }));
        }
        let in_leaves = |at: usize, len: usize| {
            let first = units.list.partition_point(|u| u.end <= at);
            units.list[first..]
                .iter()
                .take_while(|u| u.start < at + len)
                .all(|u| u.kind == SpanKind::Leaf)
        };
        if !edit
            .writes()
            .iter()
            .all(|(at, bytes)| in_leaves(*at, bytes.len()))
        {
            return None;
        }
        let Some((lo, hi)) = edit.deletion() else {
            return Some(Rc::clone(units));
        };
        let aligned =
            |at: usize| at == self.current.len() || units.list.iter().any(|u| u.start == at);
        if !aligned(lo) || !aligned(hi) {
            return None;
        }
        let list = units
            .list
            .iter()
            .filter(|u| u.end <= lo || u.start >= hi)
            .map(|&u| match u.start >= hi {
                true => Unit {
                    start: u.start - (hi - lo),
                    end: u.end - (hi - lo),
                    kind: u.kind,
                },
                false => u,
            })
            .collect();
        Some(Rc::new(Units { typed: true, list }))
    }

    /// The units after `edit` when it deletes bytes strictly inside one
    /// leaf unit and writes only after the deletion (a string shortened,
    /// its length field lowered to match: `leaves.rs`): the leaf shrinks,
    /// the units after it move.
    fn shortened_leaf(units: &Units, edit: &Edit) -> Option<Vec<Unit>> {
        let (lo, hi) = edit.deletion()?;
        let k = units.list.partition_point(|u| u.end <= lo);
        let leaf = units.list.get(k)?;
        let inside = leaf.kind == SpanKind::Leaf && hi <= leaf.end && hi - lo < leaf.len();
        if !inside || edit.writes().iter().any(|(at, _)| *at < hi) {
            return None;
        }
        let n = hi - lo;
        let list = units
            .list
            .iter()
            .enumerate()
            .map(|(i, &u)| match i.cmp(&k) {
                Ordering::Less => u,
                Ordering::Equal => Unit {
                    end: u.end - n,
                    ..u
                },
                Ordering::Greater => Unit {
                    start: u.start - n,
                    end: u.end - n,
                    ..u
                },
            });
        Some(list.collect())
    }

    /// Index of the first interesting candidate of `edits`, as if tested in
    /// order, skipping those that are not improvements (and duplicates);
    /// batched through [`Oracle::first_interesting`]. Does not adopt it.
    pub(crate) fn first_success(&mut self, edits: &[Edit]) -> Option<usize> {
        let mut seen = HashSet::new();
        let mut kept = Vec::with_capacity(edits.len());
        for (i, edit) in edits.iter().enumerate() {
            if self.improves(edit) && seen.insert(self.hasher.hash_one(&self.scratch)) {
                kept.push(i);
            }
        }
        if kept.is_empty() || self.exhausted() {
            return None;
        }
        let Shrinker {
            oracle,
            current,
            batch,
            ..
        } = self;
        let found = batch.first_interesting(&mut **oracle, kept.len(), |k, out| {
            edits[kept[k]].apply(current, out);
        });
        found.map(|k| kept[k])
    }

    /// [`Self::first_success`], adopting the candidate found.
    pub(crate) fn try_edits(&mut self, edits: &[Edit]) -> Option<usize> {
        let found = self.first_success(edits)?;
        self.accept(&edits[found]);
        Some(found)
    }

    /// The smallest `x` in `bad + 1..=good` with `f(x)`, given that
    /// `f(good)` holds and `f(bad)` does not, assuming `f` is monotone
    /// (larger values keep working, a threshold): a binary search. Stops
    /// narrowing once the oracle is exhausted.
    pub(crate) fn lowest_working(
        &mut self,
        bad: u64,
        good: u64,
        f: impl FnMut(&mut Self, u64) -> bool,
    ) -> u64 {
        self.bisect(good, bad, f)
    }

    /// The largest `n` in `1..=max` with `f(n)`, given that `f(1)` holds,
    /// assuming `f` is monotone: `f(2), f(4), …` until one fails, then a
    /// binary search; `k` successes cost `O(log k)` calls (Hypothesis's
    /// `find_integer`).
    pub(crate) fn find_integer(
        &mut self,
        max: usize,
        mut f: impl FnMut(&mut Self, usize) -> bool,
    ) -> usize {
        let mut good: usize = 1;
        let bad = loop {
            let probe = good.saturating_mul(2).min(max);
            if probe <= good {
                return good;
            }
            if !f(self, probe) {
                break probe;
            }
            good = probe;
        };
        let found = self.bisect(good as u64, bad as u64, |s, n| f(s, n as usize));
        found as usize
    }

    /// Narrows `good` (where `f` holds) and `bad` (where it does not),
    /// from either side, until they are neighbours, and returns `good`:
    /// the boundary of a monotone `f`. Stops narrowing once the oracle is
    /// exhausted.
    fn bisect(
        &mut self,
        mut good: u64,
        mut bad: u64,
        mut f: impl FnMut(&mut Self, u64) -> bool,
    ) -> u64 {
        while good.abs_diff(bad) > 1 && !self.exhausted() {
            let middle = good.min(bad) + good.abs_diff(bad) / 2;
            if f(self, middle) {
                good = middle;
            } else {
                bad = middle;
            }
        }
        good
    }
}

/// Sorted, non-overlapping, non-empty units covering `0..len`: spans out of
/// range are clipped, a span overlapping an earlier one loses the overlap,
/// gaps become `Unused` units.
fn clean_spans(mut spans: Vec<Span>, len: usize) -> Vec<Unit> {
    spans.sort_by_key(|s| (s.start, s.end));
    let mut units = Vec::with_capacity(spans.len() + 1);
    let mut at = 0;
    for span in spans {
        let start = span.start.max(at);
        let end = span.end.min(len);
        if start >= end {
            continue;
        }
        if start > at {
            units.push(Unit {
                start: at,
                end: start,
                kind: SpanKind::Unused,
            });
        }
        units.push(Unit {
            start,
            end,
            kind: span.kind,
        });
        at = end;
    }
    if at < len {
        units.push(Unit {
            start: at,
            end: len,
            kind: SpanKind::Unused,
        });
    }
    units
}
