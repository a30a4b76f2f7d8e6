//! What a mutation fuzzer keeps of a mutant that reached new coverage.
//!
//! Shrinking a corpus after a campaign pays (shorter entries run faster and
//! reach more), but shrinking every new member of a population *while*
//! fuzzing is another trade: the tests spent shrinking are mutants not run,
//! and a shorter parent offers fewer places to mutate. The Fuzzing Book's
//! mutation fuzzer with every member shrunk by delta debugging reached 496
//! features against 540 without (issue 38). [`Admit`] names the policies a
//! fuzzer can choose from; `examples/population.rs` runs them at equal wall
//! time (`cargo bench --bench population` on three targets), and
//! `docs/benchmarks.md` ("Population policies") has the numbers behind
//! [`Admit::default`]: keep the mutant whole (no policy reached more
//! features on all three targets), unless members are large (kilobytes),
//! where [`Admit::TrimmedIfGrown`] paid most (Â12 0.99 on sqlparser, 0.28
//! on 28-byte INI members).

use super::shrink::Shrinker;

/// What to keep of a mutant that reached features no member reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// The mutant as it is (libFuzzer with `-reduce_inputs=0`).
    Whole,
    /// The mutant shrunk by the default byte pipeline while it keeps its
    /// new features, within `max_tests` tests.
    Shrunk { max_tests: u64 },
    /// As [`Admit::Shrunk`], but only a mutant longer than its parent; the
    /// others are kept whole.
    ShrunkIfGrown { max_tests: u64 },
    /// AFL's trimming (`trim_case`): delete aligned chunks of a sixteenth
    /// of the length (rounded up to a power of two) down to a 1024th, at
    /// least 4 bytes, each size in one sweep: a few dozen tests at most.
    Trimmed,
    /// As [`Admit::Trimmed`], but only a mutant longer than its parent; the
    /// others are kept whole.
    TrimmedIfGrown,
    /// As [`Admit::Trimmed`], but never shorter than the parent: only what
    /// the mutation added can go, not what the parent already carried.
    TrimmedToParent,
    /// The mutant whole, and its shrunk form as well when that is shorter.
    WholeAndShrunk { max_tests: u64 },
}

/// The default keeps the mutant whole: no policy reached more features than
/// that on every target measured (`docs/benchmarks.md`, "Population
/// policies": 10 seeds of 15 s on three targets). AFL's trimming won where
/// members are kilobytes of text (sqlparser from 4 KB seeds: median 4,110
/// features against 4,012, Â12 0.96), tied on gif (Â12 0.39, p 0.43) and
/// lost on the INI example's short members (506 against 552, Â12 0.14);
/// every policy that shrinks by delta debugging lost on all three.
impl Default for Admit {
    fn default() -> Self {
        Admit::Whole
    }
}

/// What [`Admit::admit`] keeps, and the tests it spent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    /// The new members (one, or two for [`Admit::WholeAndShrunk`]).
    pub members: Vec<Vec<u8>>,
    /// Times `keeps` was called.
    pub tests: u64,
}

/// AFL's trimming bounds (`TRIM_START_STEPS`, `TRIM_END_STEPS`,
/// `TRIM_MIN_BYTES` in `afl-fuzz`).
const TRIM_START_STEPS: usize = 16;
const TRIM_END_STEPS: usize = 1024;
const TRIM_MIN_BYTES: usize = 4;

impl Admit {
    /// Every policy by the name `examples/population.rs` takes.
    pub const ALL: [(&'static str, Admit); 7] = [
        ("whole", Admit::Whole),
        ("shrunk", Admit::Shrunk { max_tests: 500 }),
        ("shrunk-if-grown", Admit::ShrunkIfGrown { max_tests: 500 }),
        ("trimmed", Admit::Trimmed),
        ("trimmed-if-grown", Admit::TrimmedIfGrown),
        ("trimmed-to-parent", Admit::TrimmedToParent),
        ("whole-and-shrunk", Admit::WholeAndShrunk { max_tests: 500 }),
    ];

    /// The policy named `name` in [`Admit::ALL`].
    pub fn named(name: &str) -> Option<Admit> {
        Admit::ALL.iter().find(|(n, _)| *n == name).map(|&(_, a)| a)
    }

    /// What to keep of `child`, a mutant of `parent` that reached new
    /// features; `keeps` says whether a candidate still reaches them (and
    /// does not crash), as [`crate::run::target::RunningTarget::keeps_features`].
    pub fn admit<F>(self, parent: &[u8], child: &[u8], mut keeps: F) -> Admitted
    where
        F: FnMut(&[u8]) -> bool,
    {
        let shrink = |max_tests: u64, keeps: &mut F| {
            let s = Shrinker::new().max_tests(max_tests).shrink(child, keeps);
            (s.input, s.tests)
        };
        match self {
            Admit::Whole => Admitted {
                members: vec![child.to_vec()],
                tests: 0,
            },
            Admit::Shrunk { max_tests } => {
                let (input, tests) = shrink(max_tests, &mut keeps);
                Admitted {
                    members: vec![input],
                    tests,
                }
            }
            Admit::ShrunkIfGrown { max_tests } => {
                if child.len() > parent.len() {
                    Admit::Shrunk { max_tests }.admit(parent, child, keeps)
                } else {
                    Admit::Whole.admit(parent, child, keeps)
                }
            }
            Admit::Trimmed => {
                let (input, tests) = trim(child, 0, &mut keeps);
                Admitted {
                    members: vec![input],
                    tests,
                }
            }
            Admit::TrimmedIfGrown => {
                if child.len() > parent.len() {
                    Admit::Trimmed.admit(parent, child, keeps)
                } else {
                    Admit::Whole.admit(parent, child, keeps)
                }
            }
            Admit::TrimmedToParent => {
                let (input, tests) = trim(child, parent.len(), &mut keeps);
                Admitted {
                    members: vec![input],
                    tests,
                }
            }
            Admit::WholeAndShrunk { max_tests } => {
                let (input, tests) = shrink(max_tests, &mut keeps);
                let mut members = vec![child.to_vec()];
                if input.len() < child.len() {
                    members.push(input);
                }
                Admitted { members, tests }
            }
        }
    }
}

/// AFL's `trim_case`: chunks of `len_p2 / 16` bytes down to `len_p2 /
/// 1024` (never below 4), each size swept once from the start; a deletion
/// that keeps the features stays and the sweep goes on at the same offset.
/// No deletion leaves fewer than `floor` bytes.
fn trim<F: FnMut(&[u8]) -> bool>(input: &[u8], floor: usize, keeps: &mut F) -> (Vec<u8>, u64) {
    let mut current = input.to_vec();
    let mut tests = 0;
    let len_p2 = current.len().next_power_of_two();
    let mut remove = (len_p2 / TRIM_START_STEPS).max(TRIM_MIN_BYTES);
    let end = (len_p2 / TRIM_END_STEPS).max(TRIM_MIN_BYTES);
    let mut candidate = Vec::with_capacity(current.len());
    while remove >= end {
        let mut at = 0;
        while at < current.len() && current.len() > remove {
            let upto = (at + remove).min(current.len());
            if current.len() - (upto - at) < floor {
                at += remove;
                continue;
            }
            candidate.clear();
            candidate.extend_from_slice(&current[..at]);
            candidate.extend_from_slice(&current[upto..]);
            tests += 1;
            if keeps(&candidate) {
                std::mem::swap(&mut current, &mut candidate);
            } else {
                at += remove;
            }
        }
        remove /= 2;
    }
    (current, tests)
}

#[cfg(test)]
mod tests {
    use super::super::testing::contains as has;
    use super::*;

    #[test]
    fn each_policy_keeps_what_it_says() {
        let parent = b"key = value".to_vec();
        let child = [
            b"lots of noise ".repeat(8),
            b"[bug]".to_vec(),
            b" more".repeat(8),
        ]
        .concat();
        let keeps = |c: &[u8]| has(c, b"[bug]");
        let whole = Admit::Whole.admit(&parent, &child, keeps);
        assert_eq!((whole.members, whole.tests), (vec![child.clone()], 0));
        let shrunk = Admit::Shrunk { max_tests: 500 }.admit(&parent, &child, keeps);
        assert_eq!(shrunk.members, vec![b"[bug]".to_vec()]);
        assert!(shrunk.tests > 0);
        // Not longer than its parent: kept whole, no test.
        let short = b"[bug]xx".to_vec();
        let grown = Admit::ShrunkIfGrown { max_tests: 500 }.admit(&parent, &short, keeps);
        assert_eq!((grown.members, grown.tests), (vec![short.clone()], 0));
        let grown = Admit::ShrunkIfGrown { max_tests: 500 }.admit(&parent, &child, keeps);
        assert_eq!(grown.members, vec![b"[bug]".to_vec()]);
        let both = Admit::WholeAndShrunk { max_tests: 500 }.admit(&parent, &child, keeps);
        assert_eq!(both.members, vec![child.clone(), b"[bug]".to_vec()]);
    }

    #[test]
    fn trimming_is_afls_few_sweeps() {
        // 1,000 bytes: chunks of 64, 32, 16, 8, 4 bytes, each size once.
        let child = [vec![b'.'; 500], b"[bug]".to_vec(), vec![b'.'; 495]].concat();
        let keeps = |c: &[u8]| has(c, b"[bug]");
        let t = Admit::Trimmed.admit(b"", &child, keeps);
        let kept = &t.members[0];
        assert!(keeps(kept));
        // Only what a 4-byte-aligned sweep can leave around the marker.
        assert!(kept.len() < 5 + 2 * 4, "{} bytes left", kept.len());
        assert!(t.tests < 120, "{} tests", t.tests);
        // Nothing to remove: each chunk size is one sweep of failures.
        let none = Admit::Trimmed.admit(b"", b"[bug]", keeps);
        assert_eq!(none.members, vec![b"[bug]".to_vec()]);
        assert!(none.tests <= 2, "{} tests", none.tests);
        // Only a mutant longer than its parent is trimmed.
        let grown = Admit::TrimmedIfGrown.admit(b"", &child, keeps);
        assert_eq!(grown, t);
        let same = Admit::TrimmedIfGrown.admit(&child, &child, keeps);
        assert_eq!((same.members, same.tests), (vec![child.clone()], 0));
        // Never below the parent's length.
        let parent = vec![b'x'; 600];
        let floored = Admit::TrimmedToParent.admit(&parent, &child, keeps);
        let kept = &floored.members[0];
        assert!(keeps(kept));
        assert!(
            kept.len() >= 600 && kept.len() < child.len(),
            "{} bytes",
            kept.len()
        );
        let unfloored = Admit::TrimmedToParent.admit(b"", &child, keeps);
        assert_eq!(unfloored, t);
    }

    #[test]
    fn every_policy_has_a_name() {
        for (name, admit) in Admit::ALL {
            assert_eq!(Admit::named(name), Some(admit));
        }
        assert_eq!(Admit::named("nope"), None);
    }
}
