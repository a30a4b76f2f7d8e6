//! The shrink passes, cheapest and most productive first (as Hypothesis
//! orders its own): deletions shorten the sequence, which makes every later
//! pass cheaper; value passes keep the length and lower bytes.
//!
//! Each pass works on the *units* of the current sequence
//! ([`Shrinker::units`]): the oracle's spans when it has them, else single
//! bytes, in which case widths and payload lengths are tried blindly
//! (windows of 1..=[`MAX_RUN`] bytes at every offset, payloads of
//! 1..=[`MAX_PAYLOAD_BYTES`] bytes). Passes that scan positions build the
//! candidates for [`POSITIONS_PER_LIST`] positions at a time and hand them
//! to the oracle as one list ([`Shrinker::first_success`]), then grow a
//! success adaptively ([`Shrinker::find_integer`]) and continue from where
//! it was found.
//!
//! One file, about 840 lines: the passes are short and alike (each builds a
//! candidate list for the same `Shrinker`), and reading them side by side is
//! how one sees what each adds.

use super::edit::Edit;
use super::{Shrinker, Unit, Units};
use crate::reduce::oracle::{Oracle, SpanKind};
use std::collections::HashMap;

/// Most units deleted (or bytes zeroed, or bytes per swapped block without
/// spans) by one candidate before growth.
pub(crate) const MAX_RUN: usize = 9;

/// Positions whose candidates go into one list.
const POSITIONS_PER_LIST: usize = 16;

/// Most units after a tag deleted as its payload.
const MAX_PAYLOAD_UNITS: usize = 8;

/// Most bytes after a tag deleted as its payload without spans.
pub(crate) const MAX_PAYLOAD_BYTES: usize = 16;

/// Most bytes deleted after a byte lowered to a nonzero value, without
/// spans.
const MAX_LOWERED_PAYLOAD_BYTES: usize = 4;

/// Values up to this are lowered by trying every smaller value (one list);
/// larger ones by binary search.
const LINEAR_LIMIT: u8 = 16;

/// How far apart (in units) two draws may be for redistribution.
const NEARBY: usize = 4;

/// Most units per block swapped by the reordering pass.
const MAX_BLOCK: usize = 4;

/// How far after a lowered draw (in units) the draw that repairs it may be.
const REPAIR_REACH: usize = 6;

/// Repair values tried for a draw: its low byte set to each of
/// `0..REPAIR_SMALL` (the other bytes zero), besides its top byte raised.
const REPAIR_SMALL: u8 = 32;

/// A named pass; returns whether it changed anything.
pub(super) struct Pass<'o, O: ?Sized> {
    #[allow(dead_code)]
    pub(super) name: &'static str,
    pub(super) run: fn(&mut Shrinker<'o, O>) -> bool,
}

/// The passes of one round, in order.
pub(super) fn passes<'o, O: Oracle<u8> + ?Sized>() -> [Pass<'o, O>; 10] {
    [
        Pass {
            name: "delete draws",
            run: Shrinker::delete_draws,
        },
        Pass {
            name: "shorten leaves",
            run: Shrinker::shorten_leaves,
        },
        Pass {
            name: "tags off",
            run: Shrinker::tags_off,
        },
        Pass {
            name: "zero draws",
            run: Shrinker::zero_draws,
        },
        Pass {
            name: "lower small values",
            run: Shrinker::lower_small_values,
        },
        Pass {
            name: "lower large values",
            run: Shrinker::lower_large_values,
        },
        Pass {
            name: "lower duplicates",
            run: Shrinker::lower_duplicates,
        },
        Pass {
            name: "reorder draws",
            run: Shrinker::reorder_draws,
        },
        Pass {
            name: "redistribute",
            run: Shrinker::redistribute,
        },
        Pass {
            name: "lower with repair",
            run: Shrinker::lower_with_repair,
        },
    ]
}

/// Byte order of a multi-byte integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endian {
    /// How `arbitrary` reads plain integers.
    Little,
    /// How `int_in_range` accumulates its bytes.
    Big,
}

pub(super) fn read_int(bytes: &[u8], endian: Endian) -> u64 {
    let fold = |acc: u64, &b: &u8| (acc << 8) | u64::from(b);
    match endian {
        Endian::Little => bytes.iter().rev().fold(0, fold),
        Endian::Big => bytes.iter().fold(0, fold),
    }
}

pub(super) fn write_int(value: u64, width: usize, endian: Endian) -> Vec<u8> {
    let le = value.to_le_bytes();
    let mut bytes = le[..width].to_vec();
    if endian == Endian::Big {
        bytes.reverse();
    }
    bytes
}

pub(super) fn max_int(width: usize) -> u64 {
    if width >= 8 {
        u64::MAX
    } else {
        (1 << (8 * width)) - 1
    }
}

fn as_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

impl<'o, O: Oracle<u8> + ?Sized> Shrinker<'o, O> {
    fn is_zero(&self, unit: &Unit) -> bool {
        self.current[unit.start..unit.end].iter().all(|&b| b == 0)
    }

    /// Ends of the payloads that may follow unit `p` (largest first): the
    /// next 1..=`max_units` units, or without spans the next
    /// 1..=`max_bytes` bytes.
    fn payload_ends(
        &self,
        units: &Units,
        p: usize,
        max_units: usize,
        max_bytes: usize,
    ) -> Vec<usize> {
        let list = &units.list;
        if units.typed {
            (p + 1..list.len().min(p + 1 + max_units))
                .rev()
                .map(|q| list[q].end)
                .collect()
        } else {
            let end = list[p].end;
            (1..=max_bytes)
                .rev()
                .map(|d| end + d)
                .filter(|&e| e <= self.current.len())
                .collect()
        }
    }

    /// Sweeps the units in windows of [`POSITIONS_PER_LIST`] positions:
    /// `candidates` lists the edits to try at one position, the window's
    /// edits are tried as one list (the first that works is accepted), and
    /// the sweep resumes at the accepted position (minus `back`) until a
    /// whole pass over the units changes nothing more.
    pub(super) fn sweep(
        &mut self,
        back: usize,
        mut candidates: impl FnMut(&Self, &Units, usize) -> Vec<Edit>,
    ) -> bool {
        self.sweep_and_grow(
            |s, units, p, found| {
                for edit in candidates(s, units, p) {
                    found.push((edit.clone(), (p, edit)));
                }
            },
            |s, _, (p, edit)| {
                s.accept(&edit);
                p.saturating_sub(back)
            },
        )
    }

    /// Like [`Self::sweep`], but a success is then grown by `grow`
    /// (typically with `find_integer`): `candidates` pushes `(edit, key)`
    /// pairs for one position; `grow` gets the key of the first edit that
    /// works, accepts its grown version, and returns where to resume.
    fn sweep_and_grow<K>(
        &mut self,
        mut candidates: impl FnMut(&Self, &Units, usize, &mut Vec<(Edit, K)>),
        mut grow: impl FnMut(&mut Self, &Units, K) -> usize,
    ) -> bool {
        let mut changed = false;
        let mut i = 0;
        while !self.exhausted() {
            let units = self.units();
            let m = units.list.len();
            if i >= m {
                break;
            }
            let end = (i + POSITIONS_PER_LIST).min(m);
            let mut found = Vec::new();
            for p in i..end {
                candidates(self, &units, p, &mut found);
            }
            let (edits, mut keys): (Vec<Edit>, Vec<K>) = found.into_iter().unzip();
            match self.first_success(&edits) {
                Some(f) => {
                    i = grow(self, &units, keys.swap_remove(f));
                    changed = true;
                }
                None => i = end,
            }
        }
        changed
    }

    /// Deletes runs of 1..=[`MAX_RUN`] consecutive units at every position
    /// (a collection element is its continuation byte plus the element's
    /// units), each also with the tail length field lowered to match; a
    /// success is repeated as often as it keeps working (`find_integer`).
    pub(super) fn delete_draws(&mut self) -> bool {
        let truncated = self.truncate();
        let swept = self.sweep_and_grow(
            |s, units, p, out| {
                let list = &units.list;
                for k in (1..=MAX_RUN.min(list.len() - p)).rev() {
                    let deletion = Edit::delete(list[p].start, list[p + k - 1].end);
                    for edit in deletion.with_tails(&s.current) {
                        let tail = edit.tail();
                        out.push((edit, (p, k, tail)));
                    }
                }
            },
            |s, units, (p, k, tail)| {
                let list = &units.list;
                let run =
                    |n: usize| Edit::delete(list[p].start, list[p + k * n - 1].end).with_tail(tail);
                let n = s.find_integer((list.len() - p) / k, |s, n| s.test(&run(n)));
                s.accept(&run(n));
                s.truncate();
                p
            },
        );
        truncated || swept
    }

    /// Deletes the last 1..=[`MAX_RUN`] bytes, whatever the units, and grows
    /// a success as far as it keeps working. Bytes the decoder never reads
    /// pile up at the end after deletions and value changes (Hypothesis
    /// cuts its buffer to what the test read; we have to ask), and a
    /// decoder that zero-fills keeps the low bytes of a cut last draw.
    /// Run before every pass and after every deletion; costs one list when
    /// nothing can go.
    pub(super) fn truncate(&mut self) -> bool {
        let len = self.current.len();
        let edits: Vec<Edit> = (1..=MAX_RUN.min(len))
            .rev()
            .map(|j| Edit::delete(len - j, len))
            .collect();
        let Some(found) = self.first_success(&edits) else {
            return false;
        };
        let j = MAX_RUN.min(len) - found;
        let cut = |n: usize| Edit::delete(len - j * n, len);
        let n = self.find_integer(len / j, |s, n| s.test(&cut(n)));
        self.accept(&cut(n));
        true
    }

    /// Turns tags off: zeroes a structural unit (without spans: any nonzero
    /// byte; an odd byte is also made even, which turns an `arbitrary` bool
    /// off) and deletes the payload that followed it.
    pub(super) fn tags_off(&mut self) -> bool {
        self.sweep(0, |s, units, p| {
            let unit = units.list[p];
            let mut edits = Vec::new();
            if s.is_zero(&unit) || (units.typed && unit.kind != SpanKind::Structural) {
                return edits;
            }
            let mut values = vec![vec![0; unit.len()]];
            let first = s.current[unit.start];
            if unit.len() == 1 && first % 2 == 1 && first > 1 {
                values.push(vec![first & !1]);
            }
            let ends = s.payload_ends(units, p, MAX_PAYLOAD_UNITS, MAX_PAYLOAD_BYTES);
            for value in values {
                for &payload_end in &ends {
                    let edit =
                        Edit::write(unit.start, value.clone()).and_delete(unit.end, payload_end);
                    edits.extend(edit.with_tails(&s.current));
                }
                edits.push(Edit::write(unit.start, value));
            }
            edits
        })
    }

    /// Zeroes units (without spans: windows of 1..=[`MAX_RUN`] bytes), a
    /// success grown over the following units as far as it keeps working.
    pub(super) fn zero_draws(&mut self) -> bool {
        self.sweep_and_grow(
            |s, units, p, out| {
                let unit = units.list[p];
                if units.typed {
                    if !s.is_zero(&unit) {
                        out.push((Edit::zero(unit.start, unit.len()), (p, 1)));
                    }
                } else if s.current[p] != 0 {
                    for w in (1..=MAX_RUN.min(units.list.len() - p)).rev() {
                        out.push((Edit::zero(p, w), (p, w)));
                    }
                }
            },
            |s, units, (p, w)| {
                let (list, m) = (&units.list, units.list.len());
                let len = s.current.len();
                let zeroed = |n: usize| {
                    let (start, stop) = if units.typed {
                        (list[p].start, list[p + n - 1].end)
                    } else {
                        (p, (p + w * n).min(len))
                    };
                    Edit::zero(start, stop - start)
                };
                let max = if units.typed {
                    m - p
                } else {
                    (len - p).div_ceil(w)
                };
                let n = s.find_integer(max, |s, n| s.test(&zeroed(n)));
                s.accept(&zeroed(n));
                p + 1
            },
        )
    }

    /// Byte positions of unit `p` lowered one byte at a time: an enum
    /// variant's most significant (last) byte for a structural unit, every
    /// byte of a leaf (first to last, which is lexicographic order; for a
    /// little-endian integer also after lowering it as a whole), the byte
    /// itself without spans.
    fn byte_targets(units: &Units, unit: &Unit) -> Vec<usize> {
        if !units.typed {
            return vec![unit.start];
        }
        match unit.kind {
            SpanKind::Unused => vec![],
            SpanKind::Structural => vec![unit.end - 1],
            SpanKind::Leaf => (unit.start..unit.end).collect(),
        }
    }

    /// Lowers bytes up to [`LINEAR_LIMIT`] by trying every smaller value
    /// (ascending, so the first success is the smallest); a structural byte
    /// (any byte without spans) lowered also with the units (bytes) after it
    /// deleted, since a simpler variant usually reads less.
    pub(super) fn lower_small_values(&mut self) -> bool {
        self.sweep(0, |s, units, p| {
            let unit = units.list[p];
            let shapes = !units.typed || unit.kind == SpanKind::Structural;
            let ends = if shapes {
                s.payload_ends(units, p, MAX_PAYLOAD_UNITS, MAX_LOWERED_PAYLOAD_BYTES)
            } else {
                vec![]
            };
            let mut edits = Vec::new();
            for pos in Self::byte_targets(units, &unit) {
                let v = s.current[pos];
                if v == 0 || v > LINEAR_LIMIT {
                    continue;
                }
                for w in 0..v {
                    for &payload_end in &ends {
                        let edit = Edit::write(pos, vec![w]).and_delete(unit.end, payload_end);
                        edits.extend(edit.with_tails(&s.current));
                    }
                    edits.push(Edit::write(pos, vec![w]));
                }
            }
            edits
        })
    }

    /// Lowers larger values by binary search: single bytes above
    /// [`LINEAR_LIMIT`], and 2/4/8-byte leaves as integers, little-endian
    /// (how `arbitrary` reads them) and then big-endian (`int_in_range`);
    /// without spans, every pair of bytes as a big-endian integer.
    pub(super) fn lower_large_values(&mut self) -> bool {
        let mut changed = false;
        let mut p = 0;
        while !self.exhausted() {
            let units = self.units();
            let Some(&unit) = units.list.get(p) else {
                break;
            };
            if units.is_int(&unit) {
                for endian in [Endian::Little, Endian::Big] {
                    changed |= self.lower_ints(&[unit.start], unit.len(), endian);
                }
            }
            for pos in Self::byte_targets(&units, &unit) {
                if self.current.get(pos).is_some_and(|&v| v > LINEAR_LIMIT) {
                    changed |= self.lower_ints(&[pos], 1, Endian::Little);
                }
            }
            // A leaf of up to 8 bytes is an integer as `arbitrary` reads it
            // (a last draw cut short reads as its low bytes).
            if units.typed && unit.kind == SpanKind::Leaf && unit.len() <= 8 {
                changed |= self.small_int(unit.start, unit.len());
                changed |= self.shift_int(unit.start, unit.len());
            }
            // Without spans, any two bytes may be a big-endian range value,
            // where lowering the first byte needs a larger second one.
            if !units.typed && p + 1 < self.current.len() && self.current[p] != 0 {
                changed |= self.lower_ints(&[p], 2, Endian::Big);
            }
            p += 1;
        }
        changed
    }

    /// Lowers the equal integers at `starts` (all `width` bytes, all with the
    /// value of the first) together by binary search, trying 0 first.
    fn lower_ints(&mut self, starts: &[usize], width: usize, endian: Endian) -> bool {
        let Some(first) = self.current.get(starts[0]..starts[0] + width) else {
            return false;
        };
        let v = read_int(first, endian);
        if v == 0 {
            return false;
        }
        let set = |x: u64| {
            let bytes = write_int(x, width, endian);
            starts
                .iter()
                .fold(Edit::empty(), |edit, &s| edit.and_write(s, bytes.clone()))
        };
        if self.test(&set(0)) {
            self.accept(&set(0));
            return true;
        }
        // 0 fails, the current value works.
        let hi = self.lowest_working(0, v, |s, x| s.test(&set(x)));
        if hi < v {
            self.accept(&set(hi));
            return true;
        }
        false
    }

    /// Tries every value below [`REPAIR_SMALL`] for the little-endian
    /// integer at `start` (smallest first): where lowering is not monotone
    /// (a value used modulo something), binary search can stop far above a
    /// small value that works.
    fn small_int(&mut self, start: usize, width: usize) -> bool {
        let Some(bytes) = self.current.get(start..start + width) else {
            return false;
        };
        let v = read_int(bytes, Endian::Little);
        let edits: Vec<Edit> = (0..v.min(u64::from(REPAIR_SMALL)))
            .map(|x| Edit::write(start, write_int(x, width, Endian::Little)))
            .collect();
        self.try_edits(&edits).is_some()
    }

    /// Tries the little-endian integer at `start` shifted right by every
    /// amount (`v >> 1`, `v >> 2`, …), smallest first, as Hypothesis's
    /// integer shrinker does: binary search assumes that every value between
    /// a working one and the current one works, which a value used modulo
    /// something (an index into a list, a digit count, a variant picked by
    /// `% n`) breaks, and halving often lands on another working value.
    fn shift_int(&mut self, start: usize, width: usize) -> bool {
        let Some(bytes) = self.current.get(start..start + width) else {
            return false;
        };
        let v = read_int(bytes, Endian::Little);
        let edits: Vec<Edit> = (1..64)
            .rev()
            .map(|k| v >> k)
            .filter(|&x| x > 0 && x < v)
            .map(|x| Edit::write(start, write_int(x, width, Endian::Little)))
            .collect();
        self.try_edits(&edits).is_some()
    }

    /// Lowers a draw to 0, 1 or half its value (as a little-endian integer)
    /// while one of the next [`REPAIR_REACH`] draws takes a repair value:
    /// its low byte `0..REPAIR_SMALL` with the other bytes zero, its top
    /// byte raised (by 1, 2, 4, …, 128, or to 255), all ones, or a value
    /// that compensates the change (moved by the same amount either way, or
    /// XORed with the same bits); draws equal to the lowered one may be
    /// lowered with it; or, so that a later draw can be zeroed or dropped,
    /// this one absorbs it (XOR, sum, difference) or is rounded to a
    /// multiple of 256, 65536, …. This gets out of a local minimum where a draw can
    /// only go down if a later one changes with it: a threshold on a sum or
    /// product of two draws (a smaller size needs a larger alignment), two
    /// draws that must agree modulo something (an index and the length it
    /// is reduced by), a difference or a checksum over draws, a format
    /// whose variant changes what size overflows. The candidate precedes
    /// the current sequence whatever the later draw becomes, since the
    /// earlier draw is smaller. Only with spans (the repair targets whole
    /// draws).
    pub(super) fn lower_with_repair(&mut self) -> bool {
        let mut changed = false;
        let mut p = 0;
        while let Some(units) = self.spans_for_next_step() {
            let list = &units.list;
            let Some(&u) = list.get(p) else {
                break;
            };
            let usable =
                |unit: &Unit| unit.kind != SpanKind::Unused && matches!(unit.len(), 1 | 2 | 4 | 8);
            let bytes_u = &self.current[u.start..u.end];
            let v = read_int(bytes_u, Endian::Little);
            if !usable(&u) || v == 0 {
                p += 1;
                continue;
            }
            let repairs: Vec<Unit> = list
                .iter()
                .skip(p + 1)
                .take(REPAIR_REACH)
                .filter(|q| usable(q))
                .copied()
                .collect();
            let twins: Vec<Unit> = list
                .iter()
                .filter(|t| t.start != u.start && &self.current[t.start..t.end] == bytes_u)
                .copied()
                .collect();
            let mut lowered: Vec<u64> = vec![0, 1, v >> 1];
            lowered.retain(|&c| c < v);
            lowered.dedup();
            let mut edits = Vec::new();
            for &c in &lowered {
                let c_bytes = write_int(c, u.len(), Endian::Little);
                let lower = || Edit::write(u.start, c_bytes.clone());
                for q in &repairs {
                    let compensations = self.compensations(q, v, c);
                    for bytes in self.repairs(q).into_iter().chain(compensations.clone()) {
                        edits.push(lower().and_write(q.start, bytes));
                    }
                    // Equal draws lowered too (a copy of the lowered draw
                    // kept equal), only with the compensating repairs.
                    if twins.iter().any(|t| t.start != q.start) {
                        for bytes in compensations {
                            let edit = lower().and_write(q.start, bytes);
                            edits.push(
                                twins
                                    .iter()
                                    .filter(|t| t.start != q.start)
                                    .fold(edit, |e, t| e.and_write(t.start, c_bytes.clone())),
                            );
                        }
                    }
                }
            }
            // A later draw absorbed into this one (XORed, added or
            // subtracted), so that the later one can be zero or go: zeroed
            // when this one goes down (lowering both by the later one's
            // value is `redistribute`'s), deleted whatever this one becomes
            // (the sequence gets shorter).
            // Or this one rounded to a multiple of 256, 65536, … (up when the
            // later one goes, since that shortens the sequence): a later draw
            // that must equal this one modulo a power of two is then zero.
            for q in &repairs {
                let w = read_int(&self.current[q.start..q.end], Endian::Little);
                let absorbed = [Some(v ^ w), v.checked_add(w), v.checked_sub(w)];
                let rounded = (1..u.len()).flat_map(|k| {
                    let unit = 1u64 << (8 * k);
                    [Some(v - v % unit), (v - v % unit).checked_add(unit)]
                });
                for c in absorbed.into_iter().chain(rounded).flatten() {
                    if c == v || c > max_int(u.len()) {
                        continue;
                    }
                    let write = Edit::write(u.start, write_int(c, u.len(), Endian::Little));
                    if c < v {
                        edits.push(write.clone().and_write(q.start, vec![0; q.len()]));
                    }
                    edits.push(write.and_delete(q.start, q.end));
                }
            }
            if self.try_edits(&edits).is_some() || self.lower_against_ones(&u, v, &repairs) {
                changed = true;
            } else {
                p += 1;
            }
        }
        changed
    }

    /// The smallest value below `v` that unit `u` can take while one of
    /// `repairs` is all ones, found by binary search (after `v - 1`
    /// works): a threshold on a product or sum of two draws is met with the
    /// later one at its maximum, and [`Self::lower_large_values`] lowers
    /// that one again afterwards. `0`, `1` and `v / 2` with the same repair
    /// have already failed when this runs, so the search only narrows.
    fn lower_against_ones(&mut self, u: &Unit, v: u64, repairs: &[Unit]) -> bool {
        for q in repairs {
            let edit = |c: u64| {
                Edit::write(u.start, write_int(c, u.len(), Endian::Little))
                    .and_write(q.start, vec![255; q.len()])
            };
            if v < 2 || !self.test(&edit(v - 1)) {
                continue;
            }
            let good = self.lowest_working(0, v - 1, |s, c| s.test(&edit(c)));
            self.accept(&edit(good));
            return true;
        }
        false
    }

    /// The fixed repair values of [`Self::lower_with_repair`] for unit `q`.
    fn repairs(&self, q: &Unit) -> Vec<Vec<u8>> {
        let current = &self.current[q.start..q.end];
        let mut out: Vec<Vec<u8>> = (0..REPAIR_SMALL)
            .map(|b| {
                let mut bytes = vec![0; q.len()];
                bytes[0] = b;
                bytes
            })
            .collect();
        let top = current[q.len() - 1];
        for raised in (0..8).map(|k| top.saturating_add(1 << k)).chain([255]) {
            if raised > top {
                let mut bytes = current.to_vec();
                bytes[q.len() - 1] = raised;
                out.push(bytes);
            }
        }
        out.push(vec![255; q.len()]);
        out.retain(|bytes| bytes != current);
        out.dedup();
        out
    }

    /// The repair values of [`Self::lower_with_repair`] for unit `q` that
    /// compensate a draw going from `v` down to `c`: `q` moved by the same
    /// amount either way (wrapping), XORed with the same bits, or scaled by
    /// the same ratio (a count kept in proportion to a size).
    fn compensations(&self, q: &Unit, v: u64, c: u64) -> Vec<Vec<u8>> {
        let current = &self.current[q.start..q.end];
        let value = read_int(current, Endian::Little);
        let mut out = Vec::new();
        for compensated in [
            value.wrapping_sub(v - c),
            value.wrapping_add(v - c),
            value ^ v ^ c,
            (u128::from(value) * u128::from(c) / u128::from(v)) as u64,
        ] {
            let bytes = write_int(compensated & max_int(q.len()), q.len(), Endian::Little);
            if bytes != current && !out.contains(&bytes) {
                out.push(bytes);
            }
        }
        out
    }

    /// Lowers every occurrence of a repeated value at once (units with the
    /// same bytes; without spans, equal bytes): small byte values by trying
    /// every smaller value, the rest by binary search.
    pub(super) fn lower_duplicates(&mut self) -> bool {
        let mut changed = false;
        while !self.exhausted() {
            let units = self.units();
            let mut groups: HashMap<&[u8], Vec<usize>> = HashMap::new();
            for unit in &units.list {
                if (units.typed && unit.kind == SpanKind::Unused)
                    || unit.len() > 8
                    || self.is_zero(unit)
                {
                    continue;
                }
                groups
                    .entry(&self.current[unit.start..unit.end])
                    .or_default()
                    .push(unit.start);
            }
            let mut groups: Vec<(usize, Vec<usize>)> = groups
                .into_iter()
                .filter(|(_, starts)| starts.len() > 1)
                .map(|(bytes, starts)| (bytes.len(), starts))
                .collect();
            groups.sort_by_key(|(_, starts)| starts[0]);
            let mut edits = Vec::new();
            for (width, starts) in &groups {
                let v = self.current[starts[0]];
                if *width == 1 && v <= LINEAR_LIMIT {
                    for w in 0..v {
                        edits.push(
                            starts
                                .iter()
                                .fold(Edit::empty(), |edit, &s| edit.and_write(s, vec![w])),
                        );
                    }
                }
            }
            if self.try_edits(&edits).is_some() {
                changed = true;
                continue;
            }
            let mut progress = false;
            for (width, starts) in &groups {
                let large = *width > 1 || self.current[starts[0]] > LINEAR_LIMIT;
                if large
                    && matches!(width, 1 | 2 | 4 | 8)
                    && self.lower_ints(starts, *width, Endian::Little)
                {
                    progress = true;
                    break;
                }
            }
            if !progress {
                break;
            }
            changed = true;
        }
        changed
    }

    /// Sorts equal-shaped neighbours: swaps two adjacent blocks of 1..=
    /// [`MAX_BLOCK`] units with the same widths and kinds (without spans:
    /// windows of 1..=[`MAX_RUN`] bytes) when that comes first in the order.
    /// Repeated swaps bubble-sort a run of equal-shaped draws.
    pub(super) fn reorder_draws(&mut self) -> bool {
        // A swap changes what the units before it can be swapped with.
        self.sweep(MAX_RUN, |s, units, p| {
            let list = &units.list;
            let m = list.len();
            let max_block = if units.typed { MAX_BLOCK } else { MAX_RUN };
            let mut edits = Vec::new();
            for k in 1..=max_block {
                if p + 2 * k > m {
                    break;
                }
                let (a, b) = (&list[p..p + k], &list[p + k..p + 2 * k]);
                let same_shape = a
                    .iter()
                    .zip(b)
                    .all(|(x, y)| x.len() == y.len() && x.kind == y.kind);
                if !same_shape {
                    continue;
                }
                let (a_start, b_start, b_end) = (a[0].start, b[0].start, b[k - 1].end);
                let bytes_a = &s.current[a_start..b_start];
                let bytes_b = &s.current[b_start..b_end];
                // Which order is smaller is for the draw order to say
                // (integers compare by value).
                if bytes_b != bytes_a {
                    edits.push(
                        Edit::write(a_start, bytes_b.to_vec())
                            .and_write(a_start + bytes_b.len(), bytes_a.to_vec()),
                    );
                }
            }
            edits
        })
    }

    /// Changes a draw and one of the next [`NEARBY`] draws by the same
    /// amount `d` (as little-endian integers): the earlier one always goes
    /// down; the later one goes up (*redistribute*, same width only: value
    /// moves between them, e.g. a sum is kept) or down too (*lower
    /// together*, Hypothesis's `lower_integers_together`: a difference is
    /// kept). Tries the largest `d` that fits and `d = 1`, then grows a
    /// working change (`find_integer`).
    pub(super) fn redistribute(&mut self) -> bool {
        let value =
            |s: &Self, unit: &Unit| read_int(&s.current[unit.start..unit.end], Endian::Little);
        let usable = |typed: bool, unit: &Unit| {
            !typed || (unit.kind != SpanKind::Unused && matches!(unit.len(), 1 | 2 | 4 | 8))
        };
        self.sweep_and_grow(
            |s, units, p, out| {
                let list = &units.list;
                let u = list[p];
                let a = value(s, &u);
                if !usable(units.typed, &u) || a == 0 {
                    return;
                }
                for (q, &v) in list.iter().enumerate().take(p + 1 + NEARBY).skip(p + 1) {
                    if !usable(units.typed, &v) {
                        continue;
                    }
                    let b = value(s, &v);
                    for together in [false, true] {
                        let d_max = match together {
                            false if v.len() == u.len() => a.min(max_int(u.len()) - b),
                            false => 0,
                            true => a.min(b),
                        };
                        let mut moves = vec![d_max];
                        if d_max > 1 {
                            moves.push(1);
                        }
                        for d in moves.into_iter().filter(|&d| d > 0) {
                            let key = (p, q, a, b, d, d_max, together);
                            out.push((pair_edit(&u, a - d, &v, b, d, together), key));
                        }
                    }
                }
            },
            |s, units, (p, q, a, b, d, d_max, together)| {
                let (u, v) = (units.list[p], units.list[q]);
                let moved = |d: usize| pair_edit(&u, a - d as u64, &v, b, d as u64, together);
                let d = if d == 1 && d_max > 1 {
                    s.find_integer(as_usize(d_max), |s, d| s.test(&moved(d)))
                } else {
                    as_usize(d)
                };
                s.accept(&moved(d));
                p
            },
        )
    }
}

/// Sets unit `u` to `a` and unit `v` to `b` lowered (`together`) or raised
/// by `d` (little-endian).
fn pair_edit(u: &Unit, a: u64, v: &Unit, b: u64, d: u64, together: bool) -> Edit {
    let b = if together { b - d } else { b + d };
    Edit::write(u.start, write_int(a, u.len(), Endian::Little))
        .and_write(v.start, write_int(b, v.len(), Endian::Little))
}
