//! The search itself, over positions in a chain of revisions and a probe
//! that says which side of the change a position is on. It knows nothing of
//! git or of running targets, so every path through it is tested here.
//!
//! Two steps, as ClusterFuzz's regression task takes them: without a known
//! "before" revision, [`search_back`] steps back 1, 2, 4, 8… revisions from
//! the known "after" one until one is on the other side; then [`bisect`]
//! halves the range between the last "before" and the first "after",
//! stepping around revisions that cannot be judged (they do not build, lack
//! the target, or crash another way). When only such revisions separate the
//! two, the answer is the range between them, as `git bisect` gives it.

use std::collections::BTreeMap;

/// Which side of the change a revision is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Side {
    /// As the known "before" revision: for a regression, it does not crash
    /// the same way; for `--fixed`, it still does.
    Before,
    /// As the known "after" revision.
    After,
    /// Cannot be judged, and why (one line).
    Skip(String),
}

/// Where the change is, in positions of the chain (`0` is the known
/// "before", the last the known "after").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The last position judged "before".
    pub before: usize,
    /// The first position judged "after": the answer when it follows
    /// `before` directly, else the change is somewhere in
    /// `before + 1 ..= after` (all skipped between).
    pub after: usize,
}

impl Found {
    /// One revision, not a range.
    pub fn exact(&self) -> bool {
        self.after == self.before + 1
    }
}

/// The probe's verdicts so far, by position.
pub type Verdicts = BTreeMap<usize, Side>;

/// Bisects positions `0..len` of a chain whose first is known "before" and
/// last known "after" (`verdicts` may hold more that are known: they are
/// not probed again). `probe` judges one position; it returns `None` to stop
/// (interrupted): the answer is then the range known so far.
pub fn bisect(
    len: usize,
    verdicts: &mut Verdicts,
    mut probe: impl FnMut(usize) -> Option<Side>,
) -> (Found, bool) {
    assert!(len >= 2, "a chain holds its two ends");
    verdicts.insert(0, Side::Before);
    verdicts.insert(len - 1, Side::After);
    loop {
        let found = bracket(verdicts);
        let Some(next) = next_probe(&found, verdicts) else {
            return (found, false);
        };
        match probe(next) {
            Some(side) => {
                verdicts.insert(next, side);
            }
            None => return (found, true),
        }
    }
}

/// The range the verdicts pin down: the first "after", and the last
/// "before" ahead of it.
pub fn bracket(verdicts: &Verdicts) -> Found {
    let after = verdicts
        .iter()
        .find(|(_, s)| **s == Side::After)
        .map(|(&p, _)| p)
        .expect("the chain's last position is known to be after");
    let before = verdicts
        .range(..after)
        .rev()
        .find(|(_, s)| **s == Side::Before)
        .map(|(&p, _)| p)
        .expect("the chain's first position is known to be before");
    Found { before, after }
}

/// The untried position nearest the middle of the range (the earlier of
/// two as near), or `None` when every position inside was tried.
fn next_probe(found: &Found, verdicts: &Verdicts) -> Option<usize> {
    let (lo, hi) = (found.before, found.after);
    if hi <= lo + 1 {
        return None;
    }
    let mid = lo + (hi - lo) / 2;
    (0..hi - lo).find_map(|d| {
        [mid.checked_sub(d), mid.checked_add(d)]
            .into_iter()
            .flatten()
            .find(|&p| p > lo && p < hi && !verdicts.contains_key(&p))
    })
}

/// How far back from the known "after" revision (distance 0) each probe of
/// the search back goes: 1, 2, 4, 8… and, last, the oldest (`oldest`).
pub fn back_steps(oldest: usize) -> Vec<usize> {
    let mut steps = Vec::new();
    let mut d = 1usize;
    while d < oldest {
        steps.push(d);
        d = d.saturating_mul(2);
    }
    if oldest > 0 {
        steps.push(oldest);
    }
    steps
}

/// What the search back found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Back {
    /// A revision this many steps back is "before"; `verdicts` holds every
    /// probe by distance.
    Found(usize),
    /// Nothing back to the oldest revision was "before".
    NoneBefore,
    /// Interrupted.
    Stopped,
}

/// Steps back from the known "after" revision ([`back_steps`]) until one is
/// "before". Verdicts are kept by distance from the "after" one.
pub fn search_back(
    oldest: usize,
    verdicts: &mut Verdicts,
    mut probe: impl FnMut(usize) -> Option<Side>,
) -> Back {
    for d in back_steps(oldest) {
        let Some(side) = probe(d) else {
            return Back::Stopped;
        };
        let before = side == Side::Before;
        verdicts.insert(d, side);
        if before {
            return Back::Found(d);
        }
    }
    Back::NoneBefore
}

/// The search back's verdicts (by distance back from the "after" revision)
/// as positions of the chain from the "before" one found `found` steps back
/// (position 0) to the "after" one (position `found`).
pub fn as_chain(back: &Verdicts, found: usize) -> Verdicts {
    back.range(..=found)
        .map(|(&d, s)| (found - d, s.clone()))
        .chain([(found, Side::After)])
        .collect()
}

/// The most probes [`bisect`] needs for a chain of `len` positions with no
/// skips: ⌈log2(len − 1)⌉.
pub fn probes_needed(len: usize) -> u32 {
    let n = len.saturating_sub(1).max(1);
    usize::BITS - (n - 1).leading_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A chain whose change is at `change` (positions `change..` are after),
    /// with `skipped` positions that cannot be judged.
    fn judge(change: usize, skipped: &[usize]) -> impl Fn(usize) -> Side + '_ {
        move |p| {
            if skipped.contains(&p) {
                Side::Skip("does not build".into())
            } else if p >= change {
                Side::After
            } else {
                Side::Before
            }
        }
    }

    #[test]
    fn finds_the_first_after_in_log_probes() {
        for len in 2..70 {
            for change in 1..len {
                let mut v = Verdicts::new();
                let mut probes = 0;
                let (found, stopped) = bisect(len, &mut v, |p| {
                    probes += 1;
                    Some(judge(change, &[])(p))
                });
                assert!(!stopped);
                assert_eq!(
                    found,
                    Found {
                        before: change - 1,
                        after: change
                    },
                    "len {len}"
                );
                assert!(probes <= probes_needed(len), "len {len}: {probes} probes");
            }
        }
    }

    #[test]
    fn skips_around_unjudgeable_revisions() {
        // The change at 10; 9 cannot be judged, 11 neither: exact anyway.
        let mut v = Verdicts::new();
        let (found, _) = bisect(30, &mut v, |p| Some(judge(10, &[9, 11])(p)));
        assert_eq!(
            found,
            Found {
                before: 8,
                after: 10
            }
        );
        assert!(!found.exact());
        // Only 9 skipped: 8 is before and 9 unknown, so the answer is 9..=10.
        let mut v = Verdicts::new();
        let (found, _) = bisect(30, &mut v, |p| Some(judge(10, &[9])(p)));
        assert_eq!(
            found,
            Found {
                before: 8,
                after: 10
            }
        );
        // Skips away from the change do not blur it.
        let mut v = Verdicts::new();
        let (found, _) = bisect(30, &mut v, |p| Some(judge(10, &[3, 4, 20, 15])(p)));
        assert!(found.exact());
        assert_eq!(found.after, 10);
    }

    #[test]
    fn stops_with_what_is_known() {
        let mut v = Verdicts::new();
        let mut n = 0;
        let (found, stopped) = bisect(100, &mut v, |p| {
            n += 1;
            (n <= 2).then(|| judge(37, &[])(p))
        });
        assert!(stopped);
        assert!(found.before < 37 && found.after >= 37);
        assert!(found.after - found.before <= 26, "{found:?}");
    }

    #[test]
    fn steps_back_by_doubling() {
        assert_eq!(back_steps(0), Vec::<usize>::new());
        assert_eq!(back_steps(1), vec![1]);
        assert_eq!(back_steps(8), vec![1, 2, 4, 8]);
        assert_eq!(back_steps(9), vec![1, 2, 4, 8, 9]);
        let mut v = Verdicts::new();
        // Distance d back is before when d >= 6 (the change 5 back).
        let back = search_back(40, &mut v, |d| {
            Some(if d >= 6 { Side::Before } else { Side::After })
        });
        assert_eq!(back, Back::Found(8));
        let chain = as_chain(&v, 8);
        assert_eq!(chain.get(&0), Some(&Side::Before));
        assert_eq!(chain.get(&4), Some(&Side::After));
        assert_eq!(chain.get(&8), Some(&Side::After));
        let mut v = Verdicts::new();
        assert_eq!(
            search_back(5, &mut v, |_| Some(Side::After)),
            Back::NoneBefore
        );
        assert_eq!(v.len(), back_steps(5).len());
    }

    #[test]
    fn probes_needed_is_ceil_log2() {
        assert_eq!(probes_needed(2), 0);
        assert_eq!(probes_needed(3), 1);
        assert_eq!(probes_needed(5), 2);
        assert_eq!(probes_needed(6), 3);
        assert_eq!(probes_needed(33), 5);
        assert_eq!(probes_needed(34), 6);
    }

    proptest! {
        /// Whatever is skipped, the answer brackets the change, every
        /// position strictly inside the range was skipped, and no position
        /// is probed twice.
        #[test]
        fn the_answer_always_holds_the_change(
            len in 3usize..200,
            change_at in 0.0f64..1.0,
            skipped in proptest::collection::vec(0.0f64..1.0, 0..30),
        ) {
            let change = 1 + ((len - 1) as f64 * change_at) as usize % (len - 1);
            let skipped: Vec<usize> = skipped
                .iter()
                .map(|f| ((len as f64 * f) as usize).clamp(1, len - 2))
                .collect();
            let mut v = Verdicts::new();
            let mut seen = std::collections::HashSet::new();
            let (found, _) = bisect(len, &mut v, |p| {
                assert!(seen.insert(p), "{p} probed twice");
                Some(judge(change, &skipped)(p))
            });
            prop_assert!(found.before < change && change <= found.after);
            for p in found.before + 1..found.after {
                prop_assert!(skipped.contains(&p));
            }
            if !skipped.contains(&change) && !skipped.contains(&(change - 1)) {
                prop_assert!(found.exact());
            }
        }
    }
}
