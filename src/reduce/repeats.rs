//! Repeated units: the nesting behind a stack overflow, cut in a few large
//! steps.
//!
//! A fuzzer's deep-nesting crash is mostly one short *unit* repeated
//! thousands of times (`[a, ` in a YAML flow sequence, `(price * quantity +
//! ` in SQL, `(` … `)` around a regex), and every test of it runs the whole
//! recursion: 10–500 ms under AddressSanitizer. Chunk deletion spends
//! hundreds of those tests to remove one level here and one there, and no
//! contiguous deletion can turn every `[a, ` into `[`. This pass works on
//! the units themselves, before any per-position work:
//!
//! * it finds the unit: the period `p` at which the input best matches
//!   itself shifted, and the most frequent `p`-byte string; when the text
//!   outside the units holds a *closing* unit about as often (the `)` of a
//!   balanced nest), the two are cut together;
//! * **count**: it keeps the first `k` units (and the last `k` closing
//!   units), with `k` found as [`truncate()`](super::truncate()) finds a
//!   length: powers of two in one round trip, then binary search, so
//!   `O(log count)` tests, the cheapest (shortest) first;
//! * **strays**: it deletes the text between two units of one kind (a
//!   fuzzer's glitches inside the nest), or replaces it by a unit (a
//!   mutated level), all at once, then in halves, …, while every level is
//!   still there;
//! * **shape**: it deletes the same byte offsets from *every* unit at once
//!   (halves, quarters, … of the unit, as ddmin would), so `[a, ` becomes
//!   `[` in a handful of tests, then cuts the count again (a smaller unit
//!   may need a different depth);
//! * **reshape**: where no cut works on every unit at their count, the
//!   outer units become more of a cut unit (a cheaper level that needs
//!   more of them), the innermost staying whole where the crash needs
//!   them (`reshape_outer`).
//!
//! Inputs without such a unit (fewer than [`MIN_UNITS`] occurrences, or
//! covering less than a third of the input) cost no test.

use super::batch::Batch;
use crate::reduce::oracle::Oracle;
use std::collections::HashMap;

/// Periods tried, in bytes.
const MAX_PERIOD: usize = 128;

/// The period and unit are found from at most this many leading bytes.
const SAMPLE: usize = 64 * 1024;

/// Fewer occurrences than this are not worth the pass.
pub const MIN_UNITS: usize = 16;

/// One piece of the input, as the pass sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// Bytes of the input between units.
    Text(usize, usize),
    /// An opening unit (the repeated one).
    Open,
    /// A closing unit.
    Close,
}

/// The input cut into units and the text between them.
#[derive(Debug, Clone)]
struct Units {
    input: Vec<u8>,
    pieces: Vec<Piece>,
    open: Vec<u8>,
    close: Vec<u8>,
    opens: usize,
    closes: usize,
}

impl Units {
    /// Finds the repeated unit of `input`, `None` if there is none worth
    /// the pass.
    fn find(input: &[u8]) -> Option<Units> {
        let open = dominant_unit(input)?;
        let opens = occurrences(input, &open).len();
        if opens < MIN_UNITS || opens * open.len() * 3 < input.len() {
            return None;
        }
        // A closing unit: the string of at most the unit's length that the
        // rest of the input holds about as often as the unit (within a
        // third), the closest count winning, then the longest (`]` ×10
        // closes `[0,[1,…[9,`).
        let rest = without(input, &open);
        let close = (1..=open.len())
            .filter_map(|len| {
                let (unit, count) = most_frequent(&rest, len, rest.len())?;
                let near = count * 4 >= opens * 3 && count * 3 <= opens * 4 && unit != open;
                near.then_some((count.abs_diff(opens), std::cmp::Reverse(len), unit))
            })
            .min()
            .map(|(_, _, unit)| unit)
            .unwrap_or_default();
        Some(Units::cut(input, open, close))
    }

    /// `input` cut at the occurrences of `open` (and, between them, of
    /// `close`, when not empty).
    fn cut(input: &[u8], open: Vec<u8>, close: Vec<u8>) -> Units {
        let mut pieces = Vec::new();
        let mut text_from = 0;
        let mut i = 0;
        let (mut opens, mut closes) = (0, 0);
        while i < input.len() {
            let piece = if input[i..].starts_with(&open) {
                Some((Piece::Open, open.len()))
            } else if !close.is_empty() && input[i..].starts_with(&close) {
                Some((Piece::Close, close.len()))
            } else {
                None
            };
            match piece {
                Some((p, len)) => {
                    if text_from < i {
                        pieces.push(Piece::Text(text_from, i));
                    }
                    pieces.push(p);
                    if p == Piece::Open {
                        opens += 1;
                    } else {
                        closes += 1;
                    }
                    i += len;
                    text_from = i;
                }
                None => i += 1,
            }
        }
        if text_from < input.len() {
            pieces.push(Piece::Text(text_from, input.len()));
        }
        Units {
            input: input.to_vec(),
            pieces,
            open,
            close,
            opens,
            closes,
        }
    }

    /// The shapes that write the input back.
    fn shapes(&self) -> Shapes {
        Shapes {
            first: self.open.clone(),
            open: self.open.clone(),
            close: self.close.clone(),
        }
    }

    /// The input with only the first `keep` opening units (and as many
    /// closing units fewer, the first ones: the innermost of a nest),
    /// written in `shapes`. Text between two
    /// dropped units of one kind goes with them.
    fn write(&self, keep: usize, shapes: &Shapes, out: &mut Vec<u8>) {
        out.clear();
        let dropped = self.opens - keep.min(self.opens);
        let drop_closes = if self.close.is_empty() {
            0
        } else {
            dropped.min(self.closes)
        };
        // Whether each piece is a dropped unit.
        let (mut o, mut c) = (0, 0);
        let gone: Vec<bool> = self
            .pieces
            .iter()
            .map(|p| match p {
                Piece::Open => {
                    o += 1;
                    o > keep
                }
                Piece::Close => {
                    c += 1;
                    c <= drop_closes
                }
                Piece::Text(..) => false,
            })
            .collect();
        let mut first = true;
        for (i, p) in self.pieces.iter().enumerate() {
            match *p {
                Piece::Open if !gone[i] => {
                    out.extend_from_slice(if first { &shapes.first } else { &shapes.open });
                    first = false;
                }
                Piece::Close if !gone[i] => out.extend_from_slice(&shapes.close),
                Piece::Text(a, b) => {
                    // Between two dropped units of one kind: a level's text.
                    let dropped_between = i > 0
                        && i + 1 < gone.len()
                        && gone[i - 1]
                        && gone[i + 1]
                        && self.pieces[i - 1] == self.pieces[i + 1];
                    if !dropped_between {
                        out.extend_from_slice(&self.input[a..b]);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Applies the count and shape cuts to `input` (assumed interesting, never
/// tested) until neither works. The result is interesting (or the input
/// itself) and never longer.
pub fn reduce_repeats<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    let mut current = input.to_vec();
    let mut batch = Batch::new();
    while !oracle.exhausted() {
        let Some(units) = Units::find(&current) else {
            break;
        };
        // Strays first: with every level still there, a glitch that is a
        // level of its own can go too.
        current = without_strays(&units, oracle, &mut batch);
        let units = Units::cut(&current, units.open.clone(), units.close.clone());
        let keep = fewest_units(&units, oracle, &mut batch);
        let mut out = Vec::new();
        units.write(keep, &units.shapes(), &mut out);
        current = out;
        // The shape, at that count: each unit loses the same offsets. A
        // new shape may need another count; the same shape does not.
        let units = Units::cut(&current, units.open.clone(), units.close.clone());
        let shapes = smallest_shapes(&units, oracle, &mut batch);
        if shapes == units.shapes() {
            // No cut works on every unit at this count. A shorter unit may
            // need more levels (or the innermost may have to stay): the
            // outer units, cut and written more often.
            if let Some(next) = reshape_outer(&units, oracle, &mut batch) {
                current = next;
                continue;
            }
            // One may still work on a part of them.
            match cut_some_units(&current, &units.open, oracle, &mut batch) {
                Some(next) => {
                    current = next;
                    continue;
                }
                None => break,
            }
        }
        units.write(units.opens, &shapes, &mut current);
    }
    current
}

/// `units` with the outer opening units (all but the first and the inner
/// `inner` ones) written as `count` copies of `shape`, where the first of
/// them was; the text between two of them goes, and closing units are
/// added where the first one is (the innermost), or the first ones
/// dropped, to match the new count: a nest that stays balanced is still
/// parsed to its end.
fn write_reshaped(units: &Units, shape: &[u8], count: usize, inner: usize, out: &mut Vec<u8>) {
    out.clear();
    let outer_end = units.opens - inner;
    let extra = (1 + count + inner).saturating_sub(units.opens);
    let surplus = units
        .opens
        .saturating_sub(1 + count + inner)
        .min(units.closes);
    let (mut o, mut c) = (0, 0);
    let in_outer = |o: usize| o >= 2 && o <= outer_end;
    for (i, p) in units.pieces.iter().enumerate() {
        match *p {
            Piece::Open => {
                o += 1;
                if !in_outer(o) {
                    out.extend_from_slice(&units.open);
                } else if o == 2 {
                    for _ in 0..count {
                        out.extend_from_slice(shape);
                    }
                }
            }
            Piece::Close => {
                c += 1;
                if c == 1 {
                    for _ in 0..extra {
                        out.extend_from_slice(&units.close);
                    }
                }
                if c > surplus {
                    out.extend_from_slice(&units.close);
                }
            }
            Piece::Text(a, b) => {
                let between = i + 1 < units.pieces.len()
                    && units.pieces[i + 1] == Piece::Open
                    && in_outer(o)
                    && in_outer(o + 1);
                if !between {
                    out.extend_from_slice(&units.input[a..b]);
                }
            }
        }
    }
}

/// The input with its outer opening units (all but the first and some
/// innermost ones) replaced by fewer bytes of a shorter unit, the opening
/// unit with a run of bytes deleted, as many times as it needs; `None`
/// unless that is shorter than the input.
///
/// A cut unit can be a cheaper level that needs more of them (`(t+` × 800
/// on a SQL parser: 1,194 `(` overflow, 800 do not), and where the
/// overflow is decided by the innermost levels it may have to leave those
/// whole (`(` alone is another recursion there). Each cut is written with
/// the inner half whole and the right number of outer units found
/// ([`Tries::first_reaching`], or [`Tries::first_in_steps`] with an oracle
/// that cannot tell another crash); the first cut that works gets, by bisection, the
/// fewest outer units, then the fewest inner ones (the outer count grown
/// to match), then the fewest outer ones again: `O(log count)` tests a
/// cut, where chunk deletion took 7,000 on the 1.6 KB nest of sql-deep.
fn reshape_outer<O>(units: &Units, oracle: &mut O, batch: &mut Batch<u8>) -> Option<Vec<u8>>
where
    O: Oracle<u8> + ?Sized,
{
    let n = units.opens;
    let unit = &units.open;
    if n < 4 || unit.len() < 2 {
        return None;
    }
    let mut cuts: Vec<Vec<u8>> = Vec::new();
    let mut size = unit.len() / 2;
    while size > 0 {
        for start in (0..unit.len()).step_by(size) {
            let mut cut = unit.clone();
            cut.drain(start..(start + size).min(unit.len()));
            if !cut.is_empty() && !cuts.contains(&cut) {
                cuts.push(cut);
            }
        }
        size /= 2;
    }
    let half = n / 2;
    let outer = n - 1 - half;
    let tries = Tries {
        units,
        cuts: &cuts,
        half,
    };
    let (found, first_count) = if oracle.failed_otherwise(&units.input).is_some() {
        tries.first_reaching(oracle, batch)?
    } else {
        tries.first_in_steps(oracle, batch)?
    };
    let cut = &cuts[found];
    let mut out = Vec::new();
    let mut holds = |count: usize, inner: usize| {
        write_reshaped(units, cut, count, inner, &mut out);
        oracle.test(&out)
    };
    // The fewest outer units with the inner half whole: then the overflow
    // is at the end, and that shows how many outer units an inner one is
    // worth. With every byte kept it would be among the outer units, the
    // innermost whatever they are.
    let at_half = smallest_holding(first_count, |m| holds(m, half));
    let per_unit = at_half as f64 / outer as f64;
    // The fewest inner units whole, each one that goes replaced by as many
    // outer ones (and a hundredth more, and two: a level's depth is not
    // quite linear), then the fewest outer ones.
    let outer_for = |k: usize| {
        if k == half {
            at_half
        } else {
            at_half + ((half - k) as f64 * per_unit * 1.01).ceil() as usize + 2
        }
    };
    let inner = smallest_holding(half, |k| k == half || holds(outer_for(k), k));
    let outer = smallest_holding(outer_for(inner), |m| holds(m, inner));
    let mut out = Vec::new();
    write_reshaped(units, cut, outer, inner, &mut out);
    (out.len() < units.input.len()).then_some(out)
}

/// The first search of [`reshape_outer`]: its cuts of the opening unit,
/// each written for the outer units with the inner `half` whole.
struct Tries<'a> {
    units: &'a Units,
    cuts: &'a [Vec<u8>],
    half: usize,
}

impl Tries<'_> {
    /// The units with the outer ones written as `count` copies of cut `i`.
    fn write(&self, i: usize, count: usize, out: &mut Vec<u8>) {
        write_reshaped(self.units, &self.cuts[i], count, self.half, out);
    }

    /// How many of cut `i` have as many bytes as the outer units.
    fn as_many_bytes(&self, i: usize) -> usize {
        self.outer() * self.units.open.len() / self.cuts[i].len()
    }

    /// How many outer units there are.
    fn outer(&self) -> usize {
        self.units.opens - 1 - self.half
    }

    /// With an oracle that tells a crash of another kind: the first cut,
    /// and the fewest outer units written in it, that crash as the input
    /// did. Each cut's outer units are first written with as many bytes as
    /// before (every cut in one batch); for a cut whose nest then crashes
    /// another way (overflows among the outer units, which are then the
    /// innermost), the fewest that crash at all are found by bisection:
    /// there the overflow is at the end, as near the inner units as it gets.
    fn first_reaching<O>(&self, oracle: &mut O, batch: &mut Batch<u8>) -> Option<(usize, usize)>
    where
        O: Oracle<u8> + ?Sized,
    {
        let n = self.cuts.len();
        let counts: Vec<usize> = (0..n).map(|i| self.as_many_bytes(i)).collect();
        if let Some(i) = batch.first_interesting(oracle, n, |i, out| self.write(i, counts[i], out))
        {
            return Some((i, counts[i]));
        }
        let mut out = Vec::new();
        for (i, &count) in counts.iter().enumerate() {
            if oracle.exhausted() {
                return None;
            }
            self.write(i, count, &mut out);
            if oracle.failed_otherwise(&out) != Some(true) {
                continue;
            }
            // The fewest that crash at all (`hi` does), and whether as the
            // input did.
            let (mut lo, mut hi, mut same) = (0, count, false);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                self.write(i, mid, &mut out);
                let interesting = oracle.test(&out);
                if interesting || oracle.failed_otherwise(&out) == Some(true) {
                    (hi, same) = (mid, interesting);
                } else {
                    lo = mid + 1;
                }
            }
            if same {
                return Some((i, hi));
            }
        }
        None
    }

    /// With an oracle that only answers yes or no: the first cut, and an
    /// outer count written in it, that crash as the input did, trying
    /// counts from as many levels as the outer units had to as many bytes,
    /// in steps of a half.
    fn first_in_steps<O>(&self, oracle: &mut O, batch: &mut Batch<u8>) -> Option<(usize, usize)>
    where
        O: Oracle<u8> + ?Sized,
    {
        let outer = self.outer();
        let tries: Vec<(usize, usize)> = (0..self.cuts.len())
            .flat_map(|i| {
                let bytes = self.as_many_bytes(i);
                let mut counts = vec![outer];
                while let Some(&m) = counts.last().filter(|&&m| m < bytes) {
                    counts.push((m + m / 2).min(bytes));
                }
                counts.into_iter().map(move |m| (i, m))
            })
            .collect();
        let found = batch.first_interesting(oracle, tries.len(), |t, out| {
            let (i, m) = tries[t];
            self.write(i, m, out)
        })?;
        Some(tries[found])
    }
}

/// The smallest `k` in `0..=known` for which `holds(k)`, by bisection,
/// given that `holds(known)` (and that it holds for every larger `k` once
/// it does for one; where it does not, some `k` that holds).
fn smallest_holding(known: usize, mut holds: impl FnMut(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, known);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if holds(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    hi
}

/// `input` with one offset of the opening unit deleted from a contiguous
/// part of the units (the first unit kept whole): halves, then quarters,
/// each offset in turn (six tests an offset). `None` if no such cut is
/// interesting.
///
/// A nest's overflow is decided by its innermost levels: a cut that makes
/// every level a different recursion fails, while the same cut on the
/// outer half keeps the innermost recursion and still removes a byte a
/// level there (`(t+` × 800 on a SQL parser: `(+` alone is another
/// recursion, so deletion found the mix `(+((+((` one level at a time).
fn cut_some_units<O>(
    input: &[u8],
    unit: &[u8],
    oracle: &mut O,
    batch: &mut Batch<u8>,
) -> Option<Vec<u8>>
where
    O: Oracle<u8> + ?Sized,
{
    // A unit of one repeated byte (`[`, `[[`) loses whole levels to such
    // a cut: that is the count's business, and the outer levels are not
    // the ones to lose (the innermost go, as `fewest_units` drops them).
    if unit.iter().all(|&b| b == unit[0]) {
        return None;
    }
    let at = occurrences(input, unit);
    let units = &at[1.min(at.len())..];
    for offset in 0..unit.len() {
        for parts in [2usize, 4] {
            if units.len() < parts || oracle.exhausted() {
                break;
            }
            let part = |k: usize| &units[k * units.len() / parts..(k + 1) * units.len() / parts];
            let found = batch.first_interesting(oracle, parts, |k, out| {
                out.clear();
                let mut from = 0;
                for &u in part(k) {
                    out.extend_from_slice(&input[from..u + offset]);
                    from = u + offset + 1;
                }
                out.extend_from_slice(&input[from..]);
            });
            if let Some(k) = found {
                let mut out = Vec::with_capacity(input.len());
                let mut from = 0;
                for &u in part(k) {
                    out.extend_from_slice(&input[from..u + offset]);
                    from = u + offset + 1;
                }
                out.extend_from_slice(&input[from..]);
                return Some(out);
            }
        }
    }
    None
}

/// The input with the text between two units of one kind (a fuzzer's
/// glitches inside the nest: a stray space, a doubled bracket, a level
/// mutated) deleted where the search can, then, where that fails, replaced
/// by one opening unit (a glitched level that is still a level): all of it
/// at once, then halves, quarters, … down to a sixteenth of it (one piece
/// at a time when there are at most 16).
fn without_strays<O>(units: &Units, oracle: &mut O, batch: &mut Batch<u8>) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    let p = &units.pieces;
    let text_len = |i: usize| match p[i] {
        Piece::Text(a, b) => b - a,
        _ => 0,
    };
    let mut strays: Vec<usize> = (1..p.len().saturating_sub(1))
        .filter(|&i| matches!(p[i], Piece::Text(..)) && p[i - 1] == p[i + 1])
        .collect();
    // Per piece: `None` as it is, `Some(bytes)` written as these.
    let mut edits: Vec<Option<&[u8]>> = vec![None; p.len()];
    let write = |edits: &[Option<&[u8]>], out: &mut Vec<u8>| {
        out.clear();
        for (i, piece) in p.iter().enumerate() {
            if let Some(with) = edits[i] {
                out.extend_from_slice(with);
                continue;
            }
            match *piece {
                Piece::Open => out.extend_from_slice(&units.open),
                Piece::Close => out.extend_from_slice(&units.close),
                Piece::Text(a, b) => out.extend_from_slice(&units.input[a..b]),
            }
        }
    };
    for with in [&[][..], &units.open[..]] {
        let mut todo: Vec<usize> = strays
            .iter()
            .copied()
            .filter(|&i| text_len(i) > with.len())
            .collect();
        let floor = if todo.len() <= 16 { 1 } else { todo.len() / 16 };
        let mut size = todo.len();
        while size >= floor && !todo.is_empty() && !oracle.exhausted() {
            let starts: Vec<usize> = (0..todo.len()).step_by(size).collect();
            let range = |k: usize| starts[k]..(starts[k] + size).min(todo.len());
            let found = batch.first_interesting(oracle, starts.len(), |k, out| {
                let mut e = edits.clone();
                for &i in &todo[range(k)] {
                    e[i] = Some(with);
                }
                write(&e, out)
            });
            match found {
                Some(k) => {
                    for i in todo.drain(range(k)) {
                        edits[i] = Some(with);
                    }
                    size = size.min(todo.len());
                }
                None => size /= 2,
            }
        }
        strays.retain(|&i| edits[i].is_none());
    }
    let mut out = Vec::new();
    write(&edits, &mut out);
    out
}

/// The fewest opening units to keep that the search finds interesting
/// (`units.opens` if none fewer is).
fn fewest_units<O>(units: &Units, oracle: &mut O, batch: &mut Batch<u8>) -> usize
where
    O: Oracle<u8> + ?Sized,
{
    let all = units.opens;
    let mut counts = Vec::new();
    let mut k = 1;
    while k < all {
        counts.push(k);
        k *= 2;
    }
    let shapes = units.shapes();
    let found = batch.first_interesting(oracle, counts.len(), |i, out| {
        units.write(counts[i], &shapes, out)
    });
    let (mut bad, mut good) = match found {
        Some(0) => return 1,
        Some(i) => (counts[i - 1], counts[i]),
        None => match counts.last() {
            Some(&k) => (k, all),
            None => return all,
        },
    };
    let mut out = Vec::new();
    let shapes = units.shapes();
    while good - bad > 1 && !oracle.exhausted() {
        let mid = bad + (good - bad) / 2;
        units.write(mid, &shapes, &mut out);
        if oracle.test(&out) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    good
}

/// The shapes the units are written with.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Shapes {
    /// The first opening unit (a key or keyword may need the bytes the
    /// others can lose, as `items: [` does its space).
    first: Vec<u8>,
    open: Vec<u8>,
    close: Vec<u8>,
}

/// The units with as many offsets deleted (from every unit at once: every
/// opening unit, then every one but the first, then every closing unit)
/// as the search finds interesting: runs of half the unit, then a quarter,
/// … one byte; a unit never becomes empty.
fn smallest_shapes<O>(units: &Units, oracle: &mut O, batch: &mut Batch<u8>) -> Shapes
where
    O: Oracle<u8> + ?Sized,
{
    let mut shapes = Shapes {
        first: units.open.clone(),
        open: units.open.clone(),
        close: units.close.clone(),
    };
    // 0: every opening unit; 1: all but the first; 2: every closing unit.
    for mode in 0..3 {
        let shape = |s: &Shapes| {
            if mode == 2 {
                s.close.clone()
            } else {
                s.open.clone()
            }
        };
        let with = |s: &Shapes, cut: Vec<u8>| {
            let mut s = s.clone();
            match mode {
                0 => (s.first, s.open) = (cut.clone(), cut),
                1 => s.open = cut,
                _ => s.close = cut,
            }
            s
        };
        let mut size = shape(&shapes).len() / 2;
        while size > 0 && !oracle.exhausted() {
            let current = shape(&shapes);
            let starts: Vec<usize> = (0..current.len()).step_by(size).collect();
            let cut = |i: usize| {
                let mut c = current.clone();
                c.drain(starts[i]..(starts[i] + size).min(current.len()));
                with(&shapes, c)
            };
            let found = batch.first_interesting(oracle, starts.len(), |i, out| {
                units.write(units.opens, &cut(i), out)
            });
            match found {
                // Keep cutting at this size; a one-byte unit is final.
                Some(i) => {
                    shapes = cut(i);
                    let len = shape(&shapes).len();
                    size = size.min(len / 2).max(usize::from(len > 1));
                }
                None => size /= 2,
            }
        }
    }
    shapes
}

/// The unit `input` repeats: the most frequent string of the period at
/// which the input best matches itself shifted (the shortest such period,
/// within 2 % of the best match). `None` when no period matches half the
/// bytes.
fn dominant_unit(input: &[u8]) -> Option<Vec<u8>> {
    let sample = &input[..input.len().min(SAMPLE)];
    let max = MAX_PERIOD.min(sample.len() / MIN_UNITS);
    if max == 0 {
        return None;
    }
    let matches: Vec<f64> = (1..=max)
        .map(|p| {
            let same = sample
                .iter()
                .zip(&sample[p..])
                .filter(|(a, b)| a == b)
                .count();
            same as f64 / (sample.len() - p) as f64
        })
        .collect();
    let best = matches.iter().copied().fold(0.0, f64::max);
    if best < 0.5 {
        return None;
    }
    let period = 1 + matches.iter().position(|&m| m >= best - 0.02)?;
    most_frequent(sample, period, sample.len()).map(|(unit, _)| unit)
}

/// The most frequent `len`-byte string of `input[..limit]` and how often
/// it occurs without overlapping.
fn most_frequent(input: &[u8], len: usize, limit: usize) -> Option<(Vec<u8>, usize)> {
    let input = &input[..limit.min(input.len())];
    if len == 0 || input.len() < len {
        return None;
    }
    let mut counts: HashMap<&[u8], usize> = HashMap::new();
    for w in input.windows(len) {
        *counts.entry(w).or_default() += 1;
    }
    // Windows overlap, so a run of one byte counts `len` times too often:
    // `)))))))` (12,000 `)` closing a nest) outnumbers the 7-byte opening
    // unit `((?:(x|` (4,000 of them) among windows, but not among
    // occurrences. The few most frequent windows are ranked again by
    // occurrences without overlapping.
    let mut top: Vec<(&[u8], usize)> = counts.into_iter().collect();
    top.sort_unstable_by(|(a, m), (b, n)| n.cmp(m).then_with(|| a.cmp(b)));
    top.truncate(RERANKED);
    top.into_iter()
        .map(|(unit, windows)| (occurrences(input, unit).len(), windows, unit))
        .max_by(|(x, m, a), (y, n, b)| x.cmp(y).then(m.cmp(n)).then_with(|| b.cmp(a)))
        .map(|(count, _, unit)| (unit.to_vec(), count))
}

/// How many of the most frequent windows [`most_frequent`] ranks again by
/// their occurrences without overlapping.
const RERANKED: usize = 8;

/// Where `unit` occurs in `input`, left to right, without overlapping.
fn occurrences(input: &[u8], unit: &[u8]) -> Vec<usize> {
    let mut found = Vec::new();
    let mut i = 0;
    while i + unit.len() <= input.len() {
        if input[i..].starts_with(unit) {
            found.push(i);
            i += unit.len();
        } else {
            i += 1;
        }
    }
    found
}

/// `input` without the occurrences of `unit`.
fn without(input: &[u8], unit: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut from = 0;
    for at in occurrences(input, unit) {
        out.extend_from_slice(&input[from..at]);
        from = at + unit.len();
    }
    out.extend_from_slice(&input[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing::{arb_case, shortlex_le, Recorder};
    use super::*;
    use proptest::prelude::*;

    /// Depth of a YAML-like flow sequence: `[` not followed by a `]` later.
    fn opens(input: &[u8], b: u8) -> usize {
        input.iter().filter(|&&c| c == b).count()
    }

    #[test]
    fn a_unit_is_cut_to_its_count_and_shape_in_few_tests() {
        // `items: ` then `[a, ` 6,000 times, a glitch, and a tail; the
        // "crash" needs 4,850 `[` and the `items: ` key, space included
        // (the first unit keeps the byte the others lose).
        let mut input = b"items: ".to_vec();
        for i in 0..6000 {
            input.extend_from_slice(b"[a, ");
            if i == 3000 {
                input.extend_from_slice(b"zz");
            }
        }
        input.extend_from_slice(b"tail");
        let mut rec =
            Recorder::new(|c: &[u8]| c.starts_with(b"items: [") && opens(c, b'[') >= 4850);
        let out = reduce_repeats(&input, &mut rec);
        assert!(out.starts_with(b"items: [[[["), "{:?}", &out[..20]);
        assert_eq!(opens(&out, b'['), 4850);
        assert!(out.len() <= 4850 + 20, "{}", out.len());
        assert!(rec.log.len() <= 80, "{} tests", rec.log.len());
    }

    #[test]
    fn a_balanced_nest_loses_levels_from_both_ends() {
        let mut input = vec![b'('; 11_000];
        input.extend_from_slice(b"[a-z]+@x");
        input.extend(std::iter::repeat_n(b')', 11_000));
        // Balanced, with the inner pattern, at least 9,600 deep.
        let holds = |c: &[u8]| {
            let mut depth = 0i64;
            let mut max = 0;
            for &b in c {
                depth += i64::from(b == b'(') - i64::from(b == b')');
                max = max.max(depth);
                if depth < 0 {
                    return false;
                }
            }
            depth == 0 && max >= 9600 && c.windows(2).any(|w| w == b"@x")
        };
        let mut rec = Recorder::new(holds);
        let out = reduce_repeats(&input, &mut rec);
        assert_eq!(out.len(), 2 * 9600 + 8, "{}", out.len());
        assert!(rec.log.len() <= 40, "{} tests", rec.log.len());
    }

    #[test]
    fn glitches_inside_the_nest_go_in_one_test() {
        let mut input = Vec::new();
        for i in 0..2000 {
            input.push(b'(');
            if i % 100 == 7 {
                input.extend_from_slice(b" \n");
            }
        }
        input.push(b'x');
        input.extend(std::iter::repeat_n(b')', 2000));
        let holds =
            |c: &[u8]| c.iter().filter(|&&b| b == b'(').count() >= 1500 && c.contains(&b'x');
        let mut rec = Recorder::new(holds);
        let out = reduce_repeats(&input, &mut rec);
        assert_eq!(
            out.len(),
            1500 + 1 + 1500,
            "{:?}",
            String::from_utf8_lossy(&out)
        );
        assert!(rec.log.len() <= 40, "{} tests", rec.log.len());
    }

    #[test]
    fn a_mutated_level_becomes_a_unit() {
        // `(t+` levels, every 50th one mutated into a longer level.
        let mut input = b"SELECT ".to_vec();
        for i in 0..1000 {
            input.extend_from_slice(if i % 50 == 3 {
                b"(price * q - d+"
            } else {
                b"(t+"
            });
        }
        let levels = |c: &[u8]| c.windows(3).filter(|w| w == b"(t+").count();
        let holds = |c: &[u8]| c.starts_with(b"SELECT ") && levels(c) >= 800;
        let mut rec = Recorder::new(holds);
        let out = reduce_repeats(&input, &mut rec);
        assert_eq!(
            out.len(),
            7 + 3 * 800,
            "{:?}",
            String::from_utf8_lossy(&out)
        );
        assert!(rec.log.len() <= 60, "{} tests", rec.log.len());
        // Every level counts, and 990 of the 1,000 are needed: half the
        // mutated levels can go, the others become units.
        let levels = |c: &[u8]| {
            c.windows(2)
                .filter(|w| w[0] == b'(' && w[1].is_ascii_alphabetic())
                .count()
        };
        let holds = |c: &[u8]| c.starts_with(b"SELECT ") && levels(c) >= 990;
        let mut rec = Recorder::new(holds);
        let out = reduce_repeats(&input, &mut rec);
        assert_eq!(
            out.len(),
            7 + 2 * 990,
            "{:?}",
            String::from_utf8_lossy(&out)
        );
        // (With the partial cuts at the end: six tests an offset.)
        assert!(rec.log.len() <= 90, "{} tests", rec.log.len());
    }

    #[test]
    fn a_cut_that_fails_on_every_unit_goes_on_the_outer_ones() {
        // 800 `(t+` levels: any 800 `(` overflow, but only if the innermost
        // 100 levels are still `(t+` (another recursion otherwise), so `t`
        // cannot leave every unit, only the outer ones.
        let mut input = b"SELECT ".to_vec();
        for _ in 0..800 {
            input.extend_from_slice(b"(t+");
        }
        let holds = |c: &[u8]| {
            c.starts_with(b"SELECT ")
                && c.iter().filter(|&&b| b == b'(').count() >= 800
                && c.ends_with(&b"(t+".repeat(100))
        };
        let mut rec = Recorder::new(holds);
        let out = reduce_repeats(&input, &mut rec);
        assert!(holds(&out));
        // The outer 700 levels are `(` alone (the least a level can be),
        // the inner 100 kept whole (the first unit and the one after the
        // outer ones keep a byte more), in a few tests.
        assert!(
            out.len() <= 7 + 700 + 3 * 100 + 2,
            "{:?}",
            String::from_utf8_lossy(&out)
        );
        assert!(rec.log.len() <= 200, "{} tests", rec.log.len());
    }

    /// A stack: `(` costs 2, any other byte 1, after `SELECT `; it
    /// overflows at 3,200, and the crash is the input's only if a `t` is
    /// among the three bytes where it does (`(t+` × 800 levels); one that
    /// overflows elsewhere is another crash.
    fn overflow(c: &[u8]) -> Option<bool> {
        let mut stack = 0;
        for (i, &b) in c.iter().enumerate().skip(7) {
            stack += if b == b'(' { 2 } else { 1 };
            if stack >= 3200 {
                return Some(c.starts_with(b"SELECT ") && c[i - 2..=i].contains(&b't'));
            }
        }
        None
    }

    /// [`overflow`] as an oracle that tells the other crash.
    struct Stack {
        tests: usize,
    }

    impl Oracle<u8> for Stack {
        fn test(&mut self, c: &[u8]) -> bool {
            self.tests += 1;
            overflow(c) == Some(true)
        }

        fn failed_otherwise(&mut self, c: &[u8]) -> Option<bool> {
            Some(overflow(c) == Some(false))
        }
    }

    #[test]
    fn where_the_nest_overflows_decides_the_crash() {
        // `(` levels are the cheapest per byte, so all but the last few
        // levels should become `(`: about 1,600 of them.
        let mut input = b"SELECT ".to_vec();
        for _ in 0..1000 {
            input.extend_from_slice(b"(t+");
        }
        let mut stack = Stack { tests: 0 };
        let out = reduce_repeats(&input, &mut stack);
        assert_eq!(overflow(&out), Some(true));
        assert!(
            out.len() <= 7 + 1600 + 8,
            "{} {:?}",
            out.len(),
            String::from_utf8_lossy(&out)
        );
        assert!(stack.tests <= 200, "{} tests", stack.tests);
        // An oracle that only says yes or no finds a cheaper level too.
        let mut rec = Recorder::new(|c: &[u8]| overflow(c) == Some(true));
        let out = reduce_repeats(&input, &mut rec);
        assert_eq!(overflow(&out), Some(true));
        assert!(out.len() <= 7 + 2200, "{}", out.len());
    }

    #[test]
    fn inputs_without_a_unit_cost_nothing() {
        let input: Vec<u8> = (0..5000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let mut rec = Recorder::new(|_: &[u8]| true);
        assert_eq!(reduce_repeats(&input, &mut rec), input);
        assert!(rec.log.is_empty());
        let mut rec = Recorder::new(|_: &[u8]| true);
        assert_eq!(reduce_repeats(b"abababab", &mut rec), b"abababab");
        assert!(rec.log.is_empty());
    }

    #[test]
    fn writing_every_unit_gives_the_input_back() {
        let mut input = b"x".to_vec();
        for _ in 0..40 {
            input.extend_from_slice(b"{\"k\":");
        }
        input.extend_from_slice(b"1");
        for _ in 0..40 {
            input.extend_from_slice(b"}");
        }
        let units = Units::find(&input).expect("a unit");
        assert_eq!(units.opens, 40);
        assert_eq!(units.close, b"}");
        let mut out = Vec::new();
        units.write(units.opens, &units.shapes(), &mut out);
        assert_eq!(out, input);
        units.write(10, &units.shapes(), &mut out);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches('{').count(), 10);
        assert_eq!(text.matches('}').count(), 10);
    }

    #[test]
    fn a_reshaped_nest_stays_balanced() {
        // 40 levels of `{a`, reshaped to fewer or more outer levels of `{`:
        // the closing units follow the count either way.
        let input = [b"{a".repeat(40), b"}".repeat(40)].concat();
        let units = Units::find(&input).expect("a unit");
        let mut out = Vec::new();
        for (count, inner) in [(10, 5), (60, 5), (0, 0), (38, 1)] {
            write_reshaped(&units, b"{", count, inner, &mut out);
            let text = String::from_utf8(out.clone()).unwrap();
            let opens = text.matches('{').count();
            assert_eq!(opens, 1 + count + inner, "{text}");
            assert_eq!(text.matches('}').count(), opens, "{text}");
        }
    }

    #[test]
    fn a_run_of_closing_bytes_does_not_hide_the_opening_unit() {
        // Three group kinds a level: 7 opening bytes for every 3 `)`. Among
        // 7-byte windows `)))))))` is the most frequent; among occurrences,
        // the opening unit.
        let input = [
            b"a|b|".repeat(30),
            b"((?:(x|".repeat(400),
            b"w".to_vec(),
            b")".repeat(1200),
        ]
        .concat();
        let units = Units::find(&input).expect("a unit");
        assert_eq!(units.opens, 400);
        assert_eq!(units.open.len(), 7);
        assert_eq!(units.close, b")))");
        assert_eq!(units.closes, 400);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn result_is_interesting_and_never_larger(case in arb_case()) {
            let holds = |c: &[u8]| case.holds(c);
            let result = reduce_repeats(&case.input, &mut { holds });
            prop_assert!(holds(&result));
            prop_assert!(shortlex_le(&result, &case.input));
        }

        #[test]
        fn repeated_inputs_stay_interesting(unit in proptest::collection::vec(any::<u8>(), 1..6),
                                             count in 16usize..300, need in 1usize..300) {
            let input: Vec<u8> = unit.iter().copied().cycle().take(unit.len() * count).collect();
            let b = unit[0];
            let need = need.min(input.iter().filter(|&&c| c == b).count());
            let holds = |c: &[u8]| c.iter().filter(|&&x| x == b).count() >= need;
            let result = reduce_repeats(&input, &mut { holds });
            prop_assert!(holds(&result));
            prop_assert!(result.len() <= input.len());
        }
    }
}
