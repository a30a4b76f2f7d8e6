//! Coverage features: what a corpus must keep when it shrinks.
//!
//! A coverage build of the driver (`BuildOptions::coverage`) reports, for
//! each input, the SanitizerCoverage 8-bit counters it touched, bucketed by
//! hit count exactly as libFuzzer turns counters into *features*
//! (counter × 8 + bucket of 1, 2, 3, 4–7, 8–15, 16–31, 32–127, 128+). Two
//! corpora cover the same code the same way when their feature unions are
//! equal; that is the invariant corpus shrinking keeps.

use std::fmt;

/// A set of coverage features, kept sorted and deduplicated.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Features(Vec<u32>);

impl Features {
    /// The empty set.
    pub fn new() -> Self {
        Features(Vec::new())
    }

    /// From any list of features (sorted here).
    pub fn from_unsorted(mut v: Vec<u32>) -> Self {
        v.sort_unstable();
        v.dedup();
        Features(v)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn as_slice(&self) -> &[u32] {
        &self.0
    }

    pub fn contains(&self, feature: u32) -> bool {
        self.0.binary_search(&feature).is_ok()
    }

    /// Every feature of `other` is in `self`.
    pub fn contains_all(&self, other: &Features) -> bool {
        if other.0.len() > self.0.len() {
            return false;
        }
        let mut mine = self.0.iter();
        'outer: for f in &other.0 {
            for m in mine.by_ref() {
                if m == f {
                    continue 'outer;
                }
                if m > f {
                    return false;
                }
            }
            return false;
        }
        true
    }

    /// The counters these features come from, whatever their hit counts
    /// (a feature is counter × 8 + bucket), ascending, each once.
    pub fn counters(&self) -> impl Iterator<Item = u32> + '_ {
        let mut last = None;
        self.0.iter().map(|f| f / 8).filter(move |&c| {
            let new = last != Some(c);
            last = Some(c);
            new
        })
    }

    /// Adds every feature of `other`; returns how many were new.
    pub fn extend(&mut self, other: &Features) -> usize {
        let before = self.0.len();
        let mut merged = Vec::with_capacity(self.0.len() + other.0.len());
        let (mut a, mut b) = (self.0.iter().peekable(), other.0.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (Some(&&x), Some(&&y)) => {
                    if x <= y {
                        merged.push(x);
                        a.next();
                        if x == y {
                            b.next();
                        }
                    } else {
                        merged.push(y);
                        b.next();
                    }
                }
                (Some(&&x), None) => {
                    merged.push(x);
                    a.next();
                }
                (None, Some(&&y)) => {
                    merged.push(y);
                    b.next();
                }
                (None, None) => break,
            }
        }
        self.0 = merged;
        self.0.len() - before
    }

    /// The features of `self` that are not in `other`.
    pub fn difference(&self, other: &Features) -> Features {
        Features(
            self.0
                .iter()
                .copied()
                .filter(|f| !other.contains(*f))
                .collect(),
        )
    }

    /// The features in both.
    pub fn intersection(&self, other: &Features) -> Features {
        Features(
            self.0
                .iter()
                .copied()
                .filter(|f| other.contains(*f))
                .collect(),
        )
    }
}

impl fmt::Display for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} features", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs(v: &[u32]) -> Features {
        Features::from_unsorted(v.to_vec())
    }

    #[test]
    fn counters_are_features_over_eight_each_once() {
        let c: Vec<u32> = fs(&[3, 7, 8, 15, 16, 41]).counters().collect();
        assert_eq!(c, vec![0, 1, 2, 5]);
        assert_eq!(fs(&[]).counters().count(), 0);
    }

    #[test]
    fn set_operations_agree_with_a_naive_model() {
        let mut seed = 0x1234_5678u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 40) as u32
        };
        for _ in 0..500 {
            let a: Vec<u32> = (0..(next() % 12)).map(|_| next()).collect();
            let b: Vec<u32> = (0..(next() % 12)).map(|_| next()).collect();
            let (fa, fb) = (fs(&a), fs(&b));
            let naive_all = b.iter().all(|x| a.contains(x));
            assert_eq!(fa.contains_all(&fb), naive_all, "{a:?} ⊇ {b:?}");
            let mut u = fa.clone();
            let added = u.extend(&fb);
            let mut both: Vec<u32> = a.iter().chain(&b).copied().collect();
            both.sort_unstable();
            both.dedup();
            assert_eq!(u.as_slice(), both.as_slice());
            assert_eq!(added, both.len() - fa.len());
            let d = fa.difference(&fb);
            assert!(d.as_slice().iter().all(|x| a.contains(x) && !b.contains(x)));
            assert_eq!(d.len() + fa.intersection(&fb).len(), fa.len());
        }
    }

    #[test]
    fn empty_sets() {
        assert!(fs(&[1, 2]).contains_all(&Features::new()));
        assert!(!Features::new().contains_all(&fs(&[1])));
        assert_eq!(fs(&[3, 1, 3]).as_slice(), &[1, 3]);
    }
}
