//! Reducers: algorithms that turn an interesting input into a smaller one
//! that is still interesting, asking only an [`Oracle`].
//!
//! * [`ddmin()`] — Zeller & Hildebrandt's ddmin, 1-minimal results;
//! * [`delete_chunks`] — fast adaptive chunk deletion for the coarse work;
//! * [`delete_windows`] — short runs at every offset (multi-byte units);
//! * [`simplify()`] — afl-tmin-style value simplification at constant length;
//! * [`seeds`] — the seed projects' reducers, transcribed call-for-call so
//!   the reference results reproduce;
//! * [`reduce`] / [`reduce_bytes`] — the default pipeline combining them;
//! * [`Strategy`] — the choice offered on the command line.
//!
//! Every reducer assumes its input is interesting, never returns anything
//! longer than the input, and only returns candidates the oracle accepted
//! (or the input itself). All of them return early once
//! [`Oracle::exhausted`] is true.

mod batch;
pub mod choices;
pub mod chunks;
pub mod ddmin;
pub mod generator;
pub mod seeds;
pub mod simplify;
#[cfg(test)]
mod testing;

use std::fmt;
use std::str::FromStr;

use crate::oracle::Oracle;

pub use choices::{probe_spans, shrink_choices, ChoiceElement};
pub use chunks::{delete_chunks, delete_windows};
pub use ddmin::ddmin;
pub use generator::{shrink_generated, GeneratorOracle};
pub use seeds::{fuzzingbook_dd, seed_ddmin, seed_ddrmin};
pub use simplify::{simplify, Canonical};

/// The default pipeline: chunk deletion to a fixpoint, deletion of short
/// unaligned windows ([`delete_windows`]), then [`ddmin()`] (for the
/// 1-minimality guarantee), then [`simplify()`]; repeated while
/// simplification changes anything.
///
/// The result is interesting (or the input itself), never longer than the
/// input, 1-minimal, and a fixpoint of [`simplify()`] — unless the oracle
/// became exhausted, in which case the best result so far is returned.
pub fn reduce<E, O>(input: &[E], oracle: &mut O) -> Vec<E>
where
    E: Canonical,
    O: Oracle<E> + ?Sized,
{
    let mut current = input.to_vec();
    loop {
        current = delete_chunks(&current, oracle);
        current = delete_windows(&current, oracle);
        current = ddmin(&current, oracle);
        let simplified = simplify(&current, oracle);
        // Simplification only accepts shortlex-smaller candidates, so this
        // loop terminates.
        let unchanged = simplified == current;
        current = simplified;
        if unchanged || oracle.exhausted() {
            return current;
        }
    }
}

/// [`reduce`] for byte strings, the element type of fuzz artifacts.
pub fn reduce_bytes<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    reduce(input, oracle)
}

/// A reduction algorithm selectable by name (`--strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// [`reduce`]: chunks, ddmin and simplification to a fixpoint.
    #[default]
    Default,
    /// [`ddmin()`] alone.
    Ddmin,
    /// [`delete_chunks`] alone.
    Chunks,
    /// Seed 000's iterative partition ddmin ([`seed_ddmin`]).
    SeedDdmin,
    /// Seed 000's recursive ddrmin ([`seed_ddrmin`]).
    SeedDdrmin,
    /// The Fuzzing Book's `DeltaDebuggingReducer` ([`fuzzingbook_dd`]).
    FuzzingBookDd,
    /// Hypothesis-style choice-sequence shrinking ([`shrink_choices`]), for
    /// typed (`arbitrary`) targets.
    Choices,
}

impl Strategy {
    /// Every strategy, in the order the CLI lists them.
    pub const ALL: [Strategy; 7] = [
        Strategy::Default,
        Strategy::Ddmin,
        Strategy::Chunks,
        Strategy::SeedDdmin,
        Strategy::SeedDdrmin,
        Strategy::FuzzingBookDd,
        Strategy::Choices,
    ];

    /// The name accepted by [`FromStr`] and printed by [`fmt::Display`].
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Default => "default",
            Strategy::Ddmin => "ddmin",
            Strategy::Chunks => "chunks",
            Strategy::SeedDdmin => "seed-ddmin",
            Strategy::SeedDdrmin => "ddrmin",
            Strategy::FuzzingBookDd => "fuzzingbook-dd",
            Strategy::Choices => "choices",
        }
    }

    /// Runs the strategy on `input`, which is assumed interesting.
    pub fn run<E, O>(&self, input: &[E], oracle: &mut O) -> Vec<E>
    where
        E: Canonical + ChoiceElement,
        O: Oracle<E> + ?Sized,
    {
        match self {
            Strategy::Default => reduce(input, oracle),
            Strategy::Ddmin => ddmin(input, oracle),
            Strategy::Chunks => delete_chunks(input, oracle),
            Strategy::SeedDdmin => seed_ddmin(input, oracle),
            Strategy::SeedDdrmin => seed_ddrmin(input, oracle),
            Strategy::FuzzingBookDd => fuzzingbook_dd(input, oracle),
            Strategy::Choices => E::shrink_choices(input, oracle),
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A strategy name that [`Strategy::from_str`] does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStrategy(pub String);

impl fmt::Display for UnknownStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown strategy `{}` (expected one of:", self.0)?;
        for strategy in Strategy::ALL {
            write!(f, " {strategy}")?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownStrategy {}

impl FromStr for Strategy {
    type Err = UnknownStrategy;

    /// Accepts [`Strategy::name`] (case-insensitive) and the alias
    /// `seed-ddrmin` for `ddrmin`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        let name = if lower == "seed-ddrmin" {
            "ddrmin"
        } else {
            &lower
        };
        Strategy::ALL
            .into_iter()
            .find(|strategy| strategy.name() == name)
            .ok_or_else(|| UnknownStrategy(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{arb_case, is_one_minimal, shortlex_le, Recorder};
    use super::*;
    use crate::oracle::Cached;
    use proptest::prelude::*;
    // Not proptest's `Strategy` trait.
    use super::Strategy;

    #[test]
    fn names_round_trip() {
        for strategy in Strategy::ALL {
            assert_eq!(strategy.name().parse::<Strategy>(), Ok(strategy));
            assert_eq!(strategy.to_string(), strategy.name());
        }
        assert_eq!("DDMIN".parse(), Ok(Strategy::Ddmin));
        assert_eq!("seed-ddrmin".parse(), Ok(Strategy::SeedDdrmin));
        let err = "zeller".parse::<Strategy>().unwrap_err();
        assert!(err.to_string().contains("fuzzingbook-dd"), "{err}");
    }

    #[test]
    fn pipeline_reduces_and_simplifies() {
        let input = b"GET /index.html?q=(((x)))&z=1 HTTP/1.1\r\n";
        let pred = |c: &[u8]| c.windows(2).any(|w| w == b"((") && c.contains(&b')');
        let mut cached = Cached::new(|c: &[u8]| pred(c));
        assert_eq!(reduce_bytes(input, &mut cached), b"(()");
    }

    #[test]
    fn pipeline_repeats_after_simplification() {
        // Simplifying 'b' to '0' makes the 'a' deletable: only a second
        // round of deletion finds `0`.
        let pred = |c: &[u8]| c == b"ab" || c == b"a0" || c == b"0";
        assert_eq!(reduce_bytes(b"ab", &mut |c: &[u8]| pred(c)), b"0");
    }

    #[test]
    fn pipeline_stops_when_exhausted() {
        let mut rec = Recorder::new(|c: &[u8]| c.contains(&b'!')).exhaust_after(10);
        let input = b"hello, world!";
        let result = reduce_bytes(input, &mut rec);
        assert_eq!(rec.log.len(), 10);
        assert!(result.contains(&b'!') && result.len() <= input.len());
    }

    #[test]
    fn every_strategy_runs_on_bytes() {
        let input = b"xxxx(yyyy)zzzz";
        let pred = |c: &[u8]| c.contains(&b'(') && c.contains(&b')');
        for strategy in Strategy::ALL {
            let result = strategy.run(input, &mut |c: &[u8]| pred(c));
            assert!(pred(&result), "{strategy}");
            assert_eq!(result.len(), 2, "{strategy}");
        }
    }

    #[test]
    fn strategies_accept_a_trait_object() {
        let mut pred = |c: &[u8]| c.contains(&b'!');
        let oracle: &mut dyn Oracle<u8> = &mut pred;
        assert_eq!(Strategy::Default.run(b"hi!", oracle), b"!");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn pipeline_result_is_interesting_minimal_and_simplified(case in arb_case()) {
            let holds = |c: &[u8]| case.holds(c);
            let result = reduce_bytes(&case.input, &mut { holds });
            prop_assert!(holds(&result));
            prop_assert!(shortlex_le(&result, &case.input));
            prop_assert!(is_one_minimal(&result, holds));
            prop_assert_eq!(simplify(&result, &mut { holds }), result);
        }

        #[test]
        fn every_strategy_result_is_interesting_and_not_larger(case in arb_case()) {
            let holds = |c: &[u8]| case.holds(c);
            for strategy in Strategy::ALL {
                let result = strategy.run(&case.input, &mut { holds });
                prop_assert!(holds(&result), "{}", strategy);
                prop_assert!(result.len() <= case.input.len(), "{}", strategy);
            }
        }
    }
}
