//! Fuzzes the reducers' invariants: for any input and any predicate built
//! from it, every strategy returns an interesting result that is never
//! larger than the input, and the default pipeline's result is 1-minimal.
//!
//! `cargo fuzz run -s none reducers` (and `cargo reduce-crash` can reduce
//! whatever it finds: the tool dogfoods itself).
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use reduce_crash::reduce::oracle::Cached;
use reduce_crash::reduce::Strategy;

/// A family of monotone-ish predicates over byte strings.
#[derive(Debug, Arbitrary)]
enum Predicate {
    /// Contains these bytes as a subsequence.
    Subsequence(Vec<u8>),
    /// Contains this substring.
    Substring(Vec<u8>),
    /// At least this many bytes equal to this value.
    Count(u8, u8),
    /// Length at least `n` and first byte `b`.
    LenAndFirst(u8, u8),
}

impl Predicate {
    fn holds(&self, c: &[u8]) -> bool {
        match self {
            Predicate::Subsequence(s) => {
                let mut it = c.iter();
                s.iter().all(|b| it.any(|x| x == b))
            }
            Predicate::Substring(s) => s.is_empty() || c.windows(s.len()).any(|w| w == &s[..]),
            Predicate::Count(b, n) => c.iter().filter(|x| *x == b).count() >= usize::from(*n),
            Predicate::LenAndFirst(n, b) => c.len() >= usize::from(*n) && c.first() == Some(b),
        }
    }
}

#[derive(Debug, Arbitrary)]
struct Case {
    predicate: Predicate,
    strategy: u8,
    input: Vec<u8>,
}

fuzz_target!(|case: Case| {
    if case.input.len() > 512 || !case.predicate.holds(&case.input) {
        return;
    }
    let strategy = Strategy::ALL[usize::from(case.strategy) % Strategy::ALL.len()];
    let mut oracle = Cached::new(|c: &[u8]| case.predicate.holds(c));
    let result = strategy.run(&case.input, &mut oracle);
    assert!(case.predicate.holds(&result), "{strategy:?} returned an uninteresting result");
    assert!(result.len() <= case.input.len(), "{strategy:?} grew the input");
    if matches!(strategy, Strategy::Default | Strategy::Ddmin) {
        for i in 0..result.len() {
            let mut smaller = result.clone();
            smaller.remove(i);
            assert!(!case.predicate.holds(&smaller), "{strategy:?} result is not 1-minimal");
        }
    }
});
