//! Lines only crashing inputs run: where a reduced crash's code path leaves
//! the code every input runs.
//!
//! Hypothesis's explain phase lists the lines that only failing examples
//! executed. Here the examples are the result, the explanation's
//! variations of it and the result with one byte deleted or changed; those
//! that crash the same way are failing, those that do not crash at all are
//! passing. Each is run once more with a coverage request (the build's SanitizerCoverage 8-bit counters, the ones
//! libFuzzer's features come from); a counter every failing input touched
//! and no passing one did is symbolized through the build's PC table and
//! debug info to its source line.
//!
//! Only inputs whose crash the target survives to report (a panic, caught
//! by the driver) have coverage: an input that kills the process (a
//! sanitizer report, a stack overflow, an abort) takes its counters with
//! it, and then no lines are listed (the reason is said).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use crate::reduce::oracle::{Oracle, Span};
use crate::run::exec::Executor;
use crate::run::outcome::{MatchMode, Outcome, Signature};

/// Inputs of each verdict kept from the explanation's tests.
pub const KEEP: usize = 16;

/// Positions of the result deleted or changed to make inputs near it.
const NEIGHBOURS: usize = 32;

/// Inputs run with coverage, the result's included.
const MAX_RUNS: usize = 160;

/// Lines listed in the human report (JSON has them all).
pub const SHOWN: usize = 5;

/// One source line only crashing inputs ran.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FailingLine {
    /// `file:line`, the file as the build's debug info names it (absolute,
    /// or relative to the fuzz workspace when paths were remapped).
    pub location: String,
    /// The function it is in (inlined code: the inlined function).
    pub function: Option<String>,
}

/// The lines, and what they were computed from.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct FailingLines {
    /// Sorted by file, then line.
    pub lines: Vec<FailingLine>,
    /// Crashing inputs whose coverage was compared (the result first).
    pub failing: usize,
    /// Inputs that did not crash.
    pub passing: usize,
    /// Why no lines could be computed, when none were.
    pub unavailable: Option<String>,
}

impl FailingLines {
    fn unavailable(why: &str, failing: usize, passing: usize) -> FailingLines {
        FailingLines {
            lines: Vec::new(),
            failing,
            passing,
            unavailable: Some(why.to_owned()),
        }
    }
}

/// An oracle in front of another that keeps up to [`KEEP`] of the
/// candidates it answered `true` and `false` for (for the coverage
/// comparison after the explanation), answering exactly as the inner one.
pub struct Recording<O> {
    pub inner: O,
    pub interesting: Vec<Vec<u8>>,
    pub uninteresting: Vec<Vec<u8>>,
}

impl<O> Recording<O> {
    pub fn new(inner: O) -> Self {
        Recording {
            inner,
            interesting: Vec::new(),
            uninteresting: Vec::new(),
        }
    }
}

impl<O: Oracle<u8>> Oracle<u8> for Recording<O> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        let answer = self.inner.test(candidate);
        let kept = if answer {
            &mut self.interesting
        } else {
            &mut self.uninteresting
        };
        if kept.len() < KEEP && !self.inner.exhausted() && !kept.iter().any(|k| k == candidate) {
            kept.push(candidate.to_vec());
        }
        answer
    }

    fn exhausted(&self) -> bool {
        self.inner.exhausted()
    }

    fn executed(&self) -> Option<u64> {
        self.inner.executed()
    }

    fn phase(&mut self, name: &'static str) {
        self.inner.phase(name)
    }

    fn spans(&mut self, candidate: &[u8]) -> Option<Vec<Span>> {
        self.inner.spans(candidate)
    }

    fn render(&mut self, candidate: &[u8]) -> Option<String> {
        self.inner.render(candidate)
    }

    fn failed_otherwise(&mut self, candidate: &[u8]) -> Option<bool> {
        self.inner.failed_otherwise(candidate)
    }
}

/// The result with one byte deleted, for up to `NEIGHBOURS` positions
/// spread over it.
pub fn neighbours(result: &[u8]) -> Vec<Vec<u8>> {
    positions(result.len())
        .map(|i| {
            let mut c = result[..i].to_vec();
            c.extend_from_slice(&result[i + 1..]);
            c
        })
        .collect()
}

/// The result with one byte changed (to 0, 255, its top bit or its lowest
/// bit flipped, one more, one less), for up to `NEIGHBOURS` positions:
/// near the result, some of them crash the same way and some do not.
pub fn variations(result: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for i in positions(result.len()) {
        let b = result[i];
        for v in [
            0,
            0xff,
            b ^ 0x80,
            b ^ 1,
            b.wrapping_add(1),
            b.wrapping_sub(1),
        ] {
            if v != b {
                let mut c = result.to_vec();
                c[i] = v;
                out.push(c);
            }
        }
    }
    out
}

/// Up to [`NEIGHBOURS`] positions spread evenly over `len`.
fn positions(len: usize) -> impl Iterator<Item = usize> {
    (0..len).step_by(len.div_ceil(NEIGHBOURS).max(1))
}

/// Counters touched by every set of `failing` and by none of `passing`
/// (each set: counter indices).
pub fn only_failing(failing: &[BTreeSet<u32>], passing: &[BTreeSet<u32>]) -> BTreeSet<u32> {
    let Some((first, rest)) = failing.split_first() else {
        return BTreeSet::new();
    };
    let mut only: BTreeSet<u32> = first
        .iter()
        .copied()
        .filter(|c| rest.iter().all(|f| f.contains(c)))
        .collect();
    for p in passing {
        only.retain(|c| !p.contains(c));
    }
    only
}

/// Runs `result` and the inputs near it with coverage: the explanation's
/// own (`tried`), the result with a byte deleted ([`neighbours`]) or
/// changed ([`variations`]); each counts as crashing when it crashes the
/// way `signature` says under `mode`, as passing when it does not crash,
/// and not at all otherwise (another crash, or coverage lost with the
/// process). Lists the source lines only the crashing ones ran, as the
/// build's debug info names their files, leaving out this tool's driver
/// and Rust's standard library.
pub fn failing_only(
    exec: &mut Executor,
    signature: &Signature,
    mode: MatchMode,
    result: &[u8],
    tried: &[Vec<u8>],
    deadline: Option<Instant>,
) -> FailingLines {
    let offsets = match exec.counter_offsets() {
        Ok(Some(o)) => o,
        _ => {
            return FailingLines::unavailable(
                "the build has no coverage counters: the build without a sanitizer has none, \
                 `cargo fuzz build`'s (nightly) has",
                0,
                0,
            )
        }
    };
    let counters = offsets.len() as u32;
    // `Some(true)`: crashed the same way; `Some(false)`: did not crash.
    let mut covered = |input: &[u8]| -> Option<(bool, BTreeSet<u32>)> {
        let (run, features) = exec.run_coverage(input).ok()?;
        let crashed = match &run.outcome {
            Outcome::Crash(got) if mode.matches(signature, got) => true,
            Outcome::Crash(_) => return None,
            Outcome::Pass | Outcome::Reject => false,
        };
        let set = features?
            .into_iter()
            .map(|f| f / 8)
            .filter(|&c| c < counters)
            .collect();
        Some((crashed, set))
    };
    let Some((true, first)) = covered(result) else {
        return FailingLines::unavailable(
            "the crash ends the process, and its coverage with it (lines are listed for panics)",
            0,
            0,
        );
    };
    let mut crashing = vec![first];
    let mut passing = Vec::new();
    let mut seen: BTreeSet<&[u8]> = BTreeSet::from([result]);
    let near = [neighbours(result), variations(result)].concat();
    for input in tried.iter().chain(&near) {
        // The explanation's deadline (`--max-time`, or its own) holds here
        // too: on a slow target, fewer inputs are compared.
        if crashing.len() + passing.len() >= MAX_RUNS
            || deadline.is_some_and(|d| Instant::now() >= d)
        {
            break;
        }
        if !seen.insert(input) {
            continue;
        }
        match covered(input) {
            Some((true, set)) => crashing.push(set),
            Some((false, set)) => passing.push(set),
            None => {}
        }
    }
    if passing.is_empty() {
        return FailingLines::unavailable(
            "no input near the result runs without crashing",
            crashing.len(),
            0,
        );
    }
    let only = only_failing(&crashing, &passing);
    let mut sorted = offsets.clone();
    sorted.sort_unstable();
    let mut lines: BTreeMap<(String, u32), Option<String>> = BTreeMap::new();
    for c in only {
        let Some((function, file, line)) = block_line(exec, &sorted, offsets[c as usize]) else {
            continue;
        };
        lines.entry((file, line)).or_insert(function);
    }
    FailingLines {
        lines: lines
            .into_iter()
            .map(|((file, line), function)| FailingLine {
                location: format!("{file}:{line}"),
                function,
            })
            .collect(),
        failing: crashing.len(),
        passing: passing.len(),
        unavailable: None,
    }
}

/// How far past a counter's address its block's line is looked for.
const BLOCK_BYTES: u64 = 64;

/// The user's source line of the block at `pc` (an offset; `sorted`: every
/// counter's, sorted): the first of its addresses, up to the next counter's
/// block, whose frames (inlined code is named by the user's line that
/// called it) reach a line of the user's code. The block's first
/// instruction is the counter's increment, which often carries no line, or
/// the line of the macro that generated the code around it.
fn block_line(
    exec: &mut Executor,
    sorted: &[u64],
    pc: u64,
) -> Option<(Option<String>, String, u32)> {
    let next = sorted
        .get(sorted.partition_point(|&o| o <= pc))
        .copied()
        .unwrap_or(u64::MAX)
        .min(pc + BLOCK_BYTES);
    (pc..next).find_map(|at| {
        exec.frames_at(at).into_iter().find_map(|f| {
            let (file, line) = f.location.as_deref().and_then(file_and_line)?;
            (!is_ours(&file)).then_some((f.function, file, line))
        })
    })
}

/// `file:line` from `file:line[:column]`.
fn file_and_line(location: &str) -> Option<(String, u32)> {
    let mut parts = location.rsplitn(3, ':');
    let last = parts.next()?;
    let middle = parts.next()?;
    match (parts.next(), middle.parse::<u32>(), last.parse::<u32>()) {
        (Some(file), Ok(line), Ok(_column)) => Some((file.to_owned(), line)),
        (first, _, Ok(line)) => {
            let file = match first {
                Some(f) => format!("{f}:{middle}"),
                None => middle.to_owned(),
            };
            Some((file, line))
        }
        _ => None,
    }
}

/// Code of this tool's driver (its panic hook runs only for crashing
/// inputs: the generated `shim` package, or the `<package>-shim` that
/// stands in for libfuzzer-sys under `target/reduce-crash`) or of Rust's
/// standard library (generic code instantiated in the target), not the
/// user's.
fn is_ours(file: &str) -> bool {
    file.contains("/reduce-crash/") || file.contains("shim/src/") || file.starts_with("/rustc/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[u32]) -> BTreeSet<u32> {
        v.iter().copied().collect()
    }

    #[test]
    fn only_counters_every_failing_input_and_no_passing_one_touched() {
        let failing = [set(&[1, 2, 3, 7]), set(&[1, 3, 7, 9])];
        let passing = [set(&[1, 4]), set(&[9, 3])];
        assert_eq!(only_failing(&failing, &passing), set(&[7]));
        assert_eq!(only_failing(&[], &passing), set(&[]));
        assert_eq!(only_failing(&failing[..1], &[]), set(&[1, 2, 3, 7]));
    }

    #[test]
    fn neighbours_delete_one_byte_each() {
        assert_eq!(
            neighbours(b"abc"),
            vec![b"bc".to_vec(), b"ac".to_vec(), b"ab".to_vec()]
        );
        assert!(neighbours(b"").is_empty());
        let long = vec![7u8; 1000];
        let n = neighbours(&long);
        assert!(n.len() <= NEIGHBOURS && n.len() >= NEIGHBOURS / 2);
        assert!(n.iter().all(|c| c.len() == 999));
    }

    #[test]
    fn locations_lose_their_column() {
        assert_eq!(
            file_and_line("src/lib.rs:12:5"),
            Some(("src/lib.rs".into(), 12))
        );
        assert_eq!(
            file_and_line("src/lib.rs:12"),
            Some(("src/lib.rs".into(), 12))
        );
        assert_eq!(file_and_line("src/lib.rs"), None);
    }

    #[test]
    fn recording_keeps_what_it_answered_and_answers_the_same() {
        let mut rec = Recording::new(|c: &[u8]| c.contains(&b'x'));
        assert!(rec.test(b"ax"));
        assert!(!rec.test(b"ab"));
        assert!(rec.test(b"ax"));
        assert_eq!(rec.interesting, vec![b"ax".to_vec()]);
        assert_eq!(rec.uninteresting, vec![b"ab".to_vec()]);
        for i in 0..100u8 {
            rec.test(&[i, b'x']);
        }
        assert_eq!(rec.interesting.len(), KEEP);
    }
}
