//! Shortening strings from inside: deleting bytes of a leaf draw while the
//! length field that announced it drops to match.
//!
//! `arbitrary` reads the byte length of a non-last `String`, `&str` or
//! `&[u8]` from the *end* of the data (cargo-fuzz-internals §4: one byte
//! while at most 256 bytes remain, two big-endian bytes above), the first
//! such field from the last byte, the next from the byte before, and so on.
//! The contents are one leaf span. Deleting a whole leaf is
//! [`delete_draws`](super::passes)'s job; keeping part of a long string
//! (`"…KEY=…"` out of 3,000 characters of noise) needs deletions inside it,
//! and each one misaligns everything after it unless the right field drops
//! by as many bytes. Byte-level `ddmin` cannot do that: on a `Vec<String>`
//! of 4 KB it stopped at 3,549 bytes, each of them needed.
//!
//! Which trailing byte (or pair) is a leaf's field is found by decoding
//! ([`Oracle::render`], no test run): deleting the leaf's last byte with
//! the field lowered by one must change that leaf's token and nothing else.
//! A leaf that takes the rest of the data needs no field (deleting its last
//! byte alone passes the same check). Then runs of bytes inside the leaf
//! are deleted, front to back, with the field lowered to match, each
//! success grown with `find_integer`. A string shortened to nothing goes
//! last, with its one-byte field.

use super::edit::Edit;
use super::passes::{max_int, read_int, write_int, Endian};
use super::probe::tokens;
use super::{Shrinker, Unit};
use crate::reduce::oracle::{Oracle, SpanKind};

/// Most trailing bytes considered as length fields.
const FIELD_REACH: usize = 16;

/// Positions inside a leaf whose deletions go into one list.
const POSITIONS_PER_LIST: usize = 16;

/// How a deletion inside a leaf keeps the rest of the sequence aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fix {
    /// Nothing to adjust: the leaf takes the rest of the data.
    Nothing,
    /// Rewrite the big-endian length field at `at..at + width`: to the
    /// leaf's new length when `exact` (the field is read modulo the bytes
    /// left, so a large one does not drop with the deletion), else lowered
    /// by the number of bytes deleted.
    Field {
        at: usize,
        width: usize,
        exact: bool,
    },
    /// The two-byte field at `at..at + 2` is read as one byte once the
    /// bytes left drop to 256 (cargo-fuzz-internals §4): delete its high
    /// byte, write the new length into the low one.
    Narrow { at: usize },
}

impl<'o, O: Oracle<u8> + ?Sized> Shrinker<'o, O> {
    /// Deletes runs of bytes inside every string leaf whose length field
    /// can be found (see the module docs).
    pub(super) fn shorten_leaves(&mut self) -> bool {
        let mut changed = false;
        let mut next = 0;
        // The last field found: the next string's is usually just before.
        let mut hint = None;
        while let Some(units) = self.spans_for_next_step() {
            let Some(leaf) = units
                .list
                .iter()
                .filter(|u| u.kind == SpanKind::Leaf && u.len() >= 2)
                .nth(next)
                .copied()
            else {
                break;
            };
            next += 1;
            let Some(fix) = self.length_field(leaf, hint) else {
                continue;
            };
            let (shortened, fix) = self.delete_inside(leaf, fix);
            changed |= shortened;
            if let Fix::Field { at, .. } = fix {
                hint = Some(at);
            }
        }
        self.drop_strings() || changed
    }

    /// Deletes a whole string element (the structural byte before it, a
    /// continuation flag, and its characters, if any) together with a
    /// trailing byte equal to its length: its one-byte field, which
    /// [`delete_draws`](Self::delete_draws) cannot remove, since it only
    /// adjusts the last byte. What is left once a string is shortened to
    /// nothing.
    fn drop_strings(&mut self) -> bool {
        self.sweep(0, |s, units, p| {
            let unit = units.list[p];
            if !units.typed || unit.kind != SpanKind::Structural {
                return Vec::new();
            }
            let end = match units.list.get(p + 1) {
                Some(next) if next.kind == SpanKind::Leaf => next.end,
                _ => unit.end,
            };
            let Ok(chars) = u8::try_from(end - unit.end) else {
                return Vec::new();
            };
            let len = s.current.len();
            (end.max(len.saturating_sub(FIELD_REACH))..len)
                .rev()
                .filter(|&t| s.current[t] == chars)
                .map(|t| Edit::delete(unit.start, end).and_drop(t))
                .collect()
        })
    }

    /// How deleting inside `leaf` keeps the sequence aligned, if `leaf` is
    /// a string (its token a string literal) and some fix works: deleting
    /// its last byte with the fix must shorten its token and change no
    /// other. Tried: no fix, then each of the last [`FIELD_REACH`] bytes
    /// after the leaf (the one before the last field found first) as a
    /// field of one or two bytes, exact or lowered.
    fn length_field(&mut self, leaf: Unit, hint: Option<usize>) -> Option<Fix> {
        let base = self.oracle.render(&self.current)?;
        let base: Vec<String> = tokens(&base).into_iter().map(str::to_owned).collect();
        let mut flipped = self.current.clone();
        flipped[leaf.end - 1] ^= 1;
        let rendered = self.oracle.render(&flipped)?;
        let t = single_change(&base, &tokens(&rendered))?;
        if !base[t].starts_with('"') {
            return None;
        }
        let len = self.current.len();
        let mut positions: Vec<usize> = (leaf.end.max(len.saturating_sub(FIELD_REACH))..len)
            .rev()
            .collect();
        if let Some(h) = hint {
            for at in [h.wrapping_sub(2), h.wrapping_sub(1)] {
                if let Some(i) = positions.iter().position(|&p| p == at) {
                    positions.remove(i);
                    positions.insert(0, at);
                }
            }
        }
        let fields = positions.into_iter().flat_map(|at| {
            let field = |(width, exact)| Fix::Field { at, width, exact };
            let fits = move |fix: &Fix| match *fix {
                Fix::Field { width, .. } => at + width <= len,
                _ => at + 2 <= len,
            };
            [(1, true), (1, false), (2, true), (2, false)]
                .map(field)
                .into_iter()
                .chain([Fix::Narrow { at }])
                .filter(fits)
        });
        let mut candidate = Vec::new();
        std::iter::once(Fix::Nothing).chain(fields).find(|&fix| {
            let Some(edit) = self.inside(leaf.end - 1, 1, fix, leaf.len()) else {
                return false;
            };
            if !edit.apply(&self.current, &mut candidate) {
                return false;
            }
            let Some(text) = self.oracle.render(&candidate) else {
                return false;
            };
            let after = tokens(&text);
            single_change(&base, &after) == Some(t) && drops_last_char(&base[t], after[t])
        })
    }

    /// Deleting `n` bytes at `at`, inside a leaf of `leaf_len` bytes, with
    /// `fix`; `None` when the field cannot be lowered that far.
    fn inside(&self, at: usize, n: usize, fix: Fix, leaf_len: usize) -> Option<Edit> {
        let deletion = Edit::delete(at, at + n);
        let new_len = leaf_len.checked_sub(n)? as u64;
        match fix {
            Fix::Nothing => Some(deletion),
            Fix::Field {
                at: field,
                width,
                exact,
            } => {
                let bytes = self.current.get(field..field + width)?;
                let value = match exact {
                    true => new_len,
                    false => read_int(bytes, Endian::Big).checked_sub(n as u64)?,
                };
                (value <= max_int(width))
                    .then(|| deletion.and_write(field, write_int(value, width, Endian::Big)))
            }
            Fix::Narrow { at: field } => (new_len <= max_int(1) && field + 2 <= self.current.len())
                .then(|| {
                    deletion
                        .and_write(field + 1, vec![new_len as u8])
                        .and_drop(field)
                }),
        }
    }

    /// Deletes runs of bytes inside `leaf`, front to back, with `fix`;
    /// returns whether anything went, and the fix as it is afterwards (the
    /// field moved forward by the bytes deleted).
    fn delete_inside(&mut self, leaf: Unit, mut fix: Fix) -> (bool, Fix) {
        let mut changed = false;
        let (mut at, mut end) = (leaf.start, leaf.end);
        while at < end && !self.exhausted() {
            let leaf_len = end - leaf.start;
            let window = at..(at + POSITIONS_PER_LIST).min(end);
            let (positions, edits): (Vec<usize>, Vec<Edit>) = window
                .clone()
                .filter_map(|p| Some((p, self.inside(p, 1, fix, leaf_len)?)))
                .unzip();
            let Some(found) = self.first_success(&edits) else {
                at = window.end;
                continue;
            };
            let p = positions[found];
            let n = self.find_integer(end - p, |s, n| {
                s.inside(p, n, fix, leaf_len)
                    .is_some_and(|edit| s.test(&edit))
            });
            let edit = self.inside(p, n, fix, leaf_len).expect("tested");
            self.accept(&edit);
            changed = true;
            end -= n;
            fix = match fix {
                Fix::Nothing => Fix::Nothing,
                Fix::Field { at, width, exact } => Fix::Field {
                    at: at - n,
                    width,
                    exact,
                },
                // Narrowed: one byte from now on, where the low byte was.
                Fix::Narrow { at } => Fix::Field {
                    at: at - n,
                    width: 1,
                    exact: true,
                },
            };
            at = p;
        }
        (changed, fix)
    }
}

/// Whether the string literal `after` is `before` without its last
/// character (`{:?}` escapes included: `\0`, `\u{1d}`, `\\`). A length
/// read modulo the bytes left can also wrap to a shorter string; that is
/// not a field that dropped with the deletion.
fn drops_last_char(before: &str, after: &str) -> bool {
    let inner = |s: &str| s.strip_prefix('"')?.strip_suffix('"').map(str::to_owned);
    let (Some(before), Some(after)) = (inner(before), inner(after)) else {
        return false;
    };
    let Some(rest) = before.strip_prefix(after.as_str()) else {
        return false;
    };
    match rest.strip_prefix('\\') {
        Some(escape) => escape == "\\" || !escape.is_empty() && !escape.contains('\\'),
        None => rest.chars().count() == 1,
    }
}

/// The index of the one token that differs between `a` and `b`, when they
/// have as many tokens and exactly one differs.
fn single_change(a: &[String], b: &[&str]) -> Option<usize> {
    if a.len() != b.len() {
        return None;
    }
    let mut differing = (0..a.len()).filter(|&i| a[i] != b[i]);
    match (differing.next(), differing.next()) {
        (Some(i), None) => Some(i),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::drops_last_char;

    #[test]
    fn the_last_character_goes_escapes_included() {
        assert!(drops_last_char(r#""abc""#, r#""ab""#));
        assert!(drops_last_char(r#""a\0""#, r#""a""#));
        assert!(drops_last_char(r#""a\u{1d}""#, r#""a""#));
        assert!(drops_last_char(r#""a\\""#, r#""a""#));
        assert!(drops_last_char(r#""é""#, r#""""#));
        // Two characters, another character, a wrap to empty, no string.
        assert!(!drops_last_char(r#""abc""#, r#""a""#));
        assert!(!drops_last_char(r#""abc""#, r#""abd""#));
        assert!(!drops_last_char(r#""a\0\0""#, r#""a""#));
        assert!(!drops_last_char("12", "1"));
    }
}
