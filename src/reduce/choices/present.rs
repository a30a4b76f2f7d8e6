//! The last step: among interesting sequences of the final length, prefer
//! the one that reads shortest.
//!
//! The passes minimise the choice sequence in shortlex order (integers by
//! value), which keeps the search finite and usually also gives the simplest
//! value. But the order of an enum's variants is declaration order, not
//! readability: with `enum Op { Insert, …, Remove(u32), …, Clear }`,
//! `[Insert, Remove(0)]` comes before `[Insert, Clear]` (variant 3, its
//! payload zero-filled past the end of the input, against variant 5: the same
//! bytes but one), yet reads longer. So once the passes are done, this step
//! tries, for each *structural* draw (enum variant, `Option` tag,
//! continuation flag, stored length), every value of its most significant
//! byte with the others zero, at the same length, and adopts a candidate only
//! when it is interesting and its rendering ([`Oracle::render`], the target's
//! `Debug` form, whitespace ignored) is strictly shorter. Candidates are
//! rendered first, and only a rendering shorter than the current one and not
//! seen before for this draw is run, so the step costs 256 decodes per
//! draw (for the first [`MAX_DRAWS`] structural draws) and a handful of
//! tests.
//!
//! The result is never longer than the shortlex minimum, but may be
//! lexicographically larger; without a rendering (bytes targets, plain
//! predicates) this step does nothing.

use super::Shrinker;
use crate::reduce::oracle::{Oracle, SpanKind};
use std::collections::HashSet;

/// Structural draws tried, from the start: each costs 256 decodes (one
/// round trip each to a fuzz target's driver), so a value that is still
/// large after shrinking (thousands of elements) does not make the step
/// take seconds.
const MAX_DRAWS: usize = 64;

/// Length of a rendering, whitespace ignored (`{:#?}` and `{:?}` agree).
pub(crate) fn reading_len(text: &str) -> usize {
    text.chars().filter(|c| !c.is_whitespace()).count()
}

impl<O: Oracle<u8> + ?Sized> Shrinker<'_, O> {
    /// Returns whether it changed the current sequence.
    pub(super) fn present(&mut self) -> bool {
        let Some(mut shortest) = self.oracle.render(&self.current).map(|t| reading_len(&t)) else {
            return false;
        };
        let mut changed = false;
        let mut index = 0;
        while index < MAX_DRAWS {
            let units = self.units();
            let Some(unit) = units
                .list
                .iter()
                .filter(|u| u.kind == SpanKind::Structural)
                .nth(index)
                .copied()
            else {
                return changed;
            };
            index += 1;
            let mut seen = HashSet::new();
            for top in 0..=u8::MAX {
                if self.exhausted() {
                    return changed;
                }
                let mut candidate = self.current.clone();
                candidate[unit.start..unit.end].fill(0);
                candidate[unit.end - 1] = top;
                if candidate == self.current {
                    continue;
                }
                let Some(text) = self.oracle.render(&candidate) else {
                    continue;
                };
                let len = reading_len(&text);
                if len >= shortest || !seen.insert(text) {
                    continue;
                }
                if self.oracle.test(&candidate) {
                    self.adopt(candidate);
                    shortest = len;
                    changed = true;
                }
            }
        }
        changed
    }
}
