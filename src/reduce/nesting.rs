//! Nesting without a grammar: balanced pairs.
//!
//! Deleting a chunk of a deeply nested input (the TOML, JSON, regex or SQL
//! behind a stack overflow) usually removes an opening bracket without its
//! partner, so the candidate stops parsing before the recursion starts and
//! deletion-based passes stall. This pass works on *groups* instead: a pair
//! of brackets (`()`, `[]`, `{}`, `<>`, each kind matched on its own), a
//! pair of quotes (`"` or `'`, skipping backslash escapes), or an
//! indentation block (a line and the more-indented lines under it). For
//! each group, largest first, it tries to
//!
//! * **delete** it with its contents;
//! * **hollow** it (delete the contents, keep the delimiters);
//! * **unwrap** it (delete the delimiters, keep the contents);
//! * **strip** it: keep the delimiters and only its largest nested group
//!   (`[1, [2], 3]` becomes `[[2]]`);
//! * **hoist** it: replace it by a group nested `k` levels inside it, with
//!   `k` found by exponential and binary search, so a crash that needs depth
//!   `N` out of `D` levels costs `O(log D)` tests, not `D - N`.
//!
//! In a chain of *wrappers* (groups holding one group and nothing else, as
//! in `((((x))))`), only the lowest wrapper is deleted and none is hollowed:
//! the others' candidates remove a superset of it, and on a nest thousands
//! deep each such test runs the whole recursion. (ddmin, later in the
//! pipeline, still makes the result 1-minimal.)
//!
//! A crash that needs `N` nested pairs ends as the `N` pairs and nothing
//! else. Every accepted candidate is shorter than the current input.

use super::batch::Batch;
use crate::reduce::oracle::Oracle;
use std::ops::Range;

/// Bracket kinds, each matched independently of the others.
const BRACKETS: [(u8, u8); 4] = [(b'(', b')'), (b'[', b']'), (b'{', b'}'), (b'<', b'>')];

/// Quote characters; occurrences pair up in order, escapes skipped.
const QUOTES: [u8; 2] = [b'"', b'\''];

/// A balanced group: `open` and `close` delimit the contents between them.
/// An indentation block's `open` is its first line and its `close` empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub open: Range<usize>,
    pub close: Range<usize>,
}

impl Group {
    /// The group with its delimiters.
    pub fn whole(&self) -> Range<usize> {
        self.open.start..self.close.end
    }

    /// What is between the delimiters.
    pub fn inner(&self) -> Range<usize> {
        self.open.end..self.close.start
    }

    fn len(&self) -> usize {
        self.close.end - self.open.start
    }

    fn contains(&self, other: &Group) -> bool {
        let inner = self.inner();
        inner.start <= other.open.start && other.close.end <= inner.end
    }
}

/// Every group of `input`, largest first (ties: leftmost first).
pub fn groups(input: &[u8]) -> Vec<Group> {
    let mut found = Vec::new();
    for (open, close) in BRACKETS {
        let mut stack = Vec::new();
        for (i, &b) in input.iter().enumerate() {
            if b == open {
                stack.push(i);
            } else if b == close {
                if let Some(o) = stack.pop() {
                    found.push(Group {
                        open: o..o + 1,
                        close: i..i + 1,
                    });
                }
            }
        }
    }
    for quote in QUOTES {
        let mut open = None;
        let mut i = 0;
        while i < input.len() {
            match input[i] {
                b'\\' => i += 1,
                b if b == quote => match open.take() {
                    Some(o) => found.push(Group {
                        open: o..o + 1,
                        close: i..i + 1,
                    }),
                    None => open = Some(i),
                },
                _ => {}
            }
            i += 1;
        }
    }
    found.extend(indentation_blocks(input));
    found.sort_by(|a, b| {
        b.len()
            .cmp(&a.len())
            .then(a.open.start.cmp(&b.open.start))
            .then(a.open.end.cmp(&b.open.end))
    });
    found.dedup();
    found
}

/// Lines followed by more-indented lines: the header line is `open`, the
/// indented lines (up to the last non-blank one) the contents.
fn indentation_blocks(input: &[u8]) -> Vec<Group> {
    // (start, end including the newline, indentation or None when blank)
    let mut lines = Vec::new();
    let mut start = 0;
    while start < input.len() {
        let end = input[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(input.len(), |p| start + p + 1);
        let text = &input[start..end];
        let indent = text
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let blank = text[indent..].iter().all(|b| b.is_ascii_whitespace());
        lines.push((start, end, (!blank).then_some(indent)));
        start = end;
    }
    let mut blocks = Vec::new();
    for (i, &(start, end, indent)) in lines.iter().enumerate() {
        let Some(indent) = indent else { continue };
        let mut last = None;
        for (j, &(_, _, other)) in lines.iter().enumerate().skip(i + 1) {
            match other {
                None => {}
                Some(o) if o > indent => last = Some(j),
                Some(_) => break,
            }
        }
        if let Some(j) = last {
            let body_end = lines[j].1;
            blocks.push(Group {
                open: start..end,
                close: body_end..body_end,
            });
        }
    }
    blocks
}

/// The groups with, for each, its largest group nested directly inside.
struct Forest {
    groups: Vec<Group>,
    largest_child: Vec<Option<usize>>,
}

impl Forest {
    fn new(input: &[u8]) -> Forest {
        let groups = groups(input);
        // By start, enclosing groups before the groups they enclose.
        let mut order: Vec<usize> = (0..groups.len()).collect();
        order.sort_by_key(|&g| (groups[g].open.start, std::cmp::Reverse(groups[g].len())));
        let mut largest_child: Vec<Option<usize>> = vec![None; groups.len()];
        let mut stack: Vec<usize> = Vec::new();
        for g in order {
            while let Some(&top) = stack.last() {
                if groups[top].contains(&groups[g]) {
                    break;
                }
                stack.pop();
            }
            if let Some(&parent) = stack.last() {
                let better =
                    largest_child[parent].is_none_or(|c| groups[c].len() < groups[g].len());
                if better {
                    largest_child[parent] = Some(g);
                }
            }
            stack.push(g);
        }
        Forest {
            groups,
            largest_child,
        }
    }

    /// Whether `g` holds exactly one group and nothing else (a *wrapper*).
    fn wraps(&self, g: usize) -> bool {
        self.largest_child[g].is_some_and(|c| self.groups[c].whole() == self.groups[g].inner())
    }

    /// The chain of largest children below `g`: `chain[k - 1]` is `k`
    /// levels down.
    fn chain(&self, g: usize) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut at = g;
        while let Some(c) = self.largest_child[at] {
            chain.push(c);
            at = c;
        }
        chain
    }
}

/// One way of changing a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edit {
    Delete,
    Hollow,
    Unwrap,
    Strip,
    Hoist,
}

/// Writes `input` with `edit` applied to group `g` (for a hoist, replaced
/// by `to`) into `out`.
fn apply(input: &[u8], g: &Group, edit: Edit, to: Option<&Group>, out: &mut Vec<u8>) {
    out.clear();
    match edit {
        Edit::Delete => {
            out.extend_from_slice(&input[..g.open.start]);
            out.extend_from_slice(&input[g.close.end..]);
        }
        Edit::Hollow => {
            out.extend_from_slice(&input[..g.open.end]);
            out.extend_from_slice(&input[g.close.start..]);
        }
        Edit::Unwrap => {
            out.extend_from_slice(&input[..g.open.start]);
            out.extend_from_slice(&input[g.inner()]);
            out.extend_from_slice(&input[g.close.end..]);
        }
        Edit::Strip => {
            let to = to.expect("a strip keeps a group");
            out.extend_from_slice(&input[..g.open.end]);
            out.extend_from_slice(&input[to.whole()]);
            out.extend_from_slice(&input[g.close.start..]);
        }
        Edit::Hoist => {
            let to = to.expect("a hoist has a target");
            out.extend_from_slice(&input[..g.open.start]);
            out.extend_from_slice(&input[to.whole()]);
            out.extend_from_slice(&input[g.close.end..]);
        }
    }
}

/// Applies the group edits to `input` (assumed interesting, never tested)
/// until none of them works.
///
/// The result is interesting (or the input itself) and never longer.
pub fn reduce_nesting<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    let mut current = input.to_vec();
    let mut batch = Batch::new();
    loop {
        let before = current.len();
        for edit in [
            Edit::Hoist,
            Edit::Delete,
            Edit::Strip,
            Edit::Hollow,
            Edit::Unwrap,
        ] {
            sweep(&mut current, edit, oracle, &mut batch);
        }
        if current.len() == before || oracle.exhausted() {
            return current;
        }
    }
}

/// Tries `edit` on every group, largest first, keeping each that works.
fn sweep<O>(current: &mut Vec<u8>, edit: Edit, oracle: &mut O, batch: &mut Batch<u8>)
where
    O: Oracle<u8> + ?Sized,
{
    let mut next = 0;
    while !oracle.exhausted() {
        let forest = Forest::new(current);
        // A group that opens inside a long periodic run's interior is a
        // level of a nest: its count is the repeats pass's, settled for
        // every level at once, and each of its edits is a distinct
        // full-depth test (5,275 tests in 88 s for no byte on a regex
        // nest of `(x((:` units, whose groups are not wrappers).
        let interior = super::chunks::interiors(current);
        let applicable: Vec<usize> = (next..forest.groups.len())
            .filter(|&g| interior[forest.groups[g].whole().start] == 0)
            .filter(|&g| match edit {
                // In a chain of wrappers, deleting one removes what deleting
                // the wrapper below it removes and more: only the lowest
                // wrapper of the chain is worth a test (on a nest thousands
                // deep, each of these tests runs the recursion).
                Edit::Delete => {
                    !(forest.wraps(g) && forest.largest_child[g].is_some_and(|c| forest.wraps(c)))
                }
                Edit::Unwrap => true,
                // Hollowing a wrapper deletes its child: the Delete sweep's.
                Edit::Hollow => !forest.groups[g].inner().is_empty() && !forest.wraps(g),
                Edit::Hoist => forest.largest_child[g].is_some(),
                Edit::Strip => forest.largest_child[g]
                    .is_some_and(|c| forest.groups[g].inner().len() > forest.groups[c].len()),
            })
            .collect();
        let found = batch.first_interesting(oracle, applicable.len(), |k, out| {
            let g = applicable[k];
            let to = forest.largest_child[g].map(|c| &forest.groups[c]);
            apply(current, &forest.groups[g], edit, to, out);
        });
        let Some(k) = found else {
            return;
        };
        let g = applicable[k];
        let mut out = Vec::new();
        if edit == Edit::Hoist {
            let chain = forest.chain(g);
            let depth = deepest_hoist(current, &forest, g, &chain, oracle);
            apply(
                current,
                &forest.groups[g],
                edit,
                Some(&forest.groups[chain[depth - 1]]),
                &mut out,
            );
        } else {
            let to = forest.largest_child[g].map(|c| &forest.groups[c]);
            apply(current, &forest.groups[g], edit, to, &mut out);
        }
        *current = out;
        next = g;
    }
}

/// The largest `k` such that hoisting `g` to `chain[k - 1]` is interesting,
/// knowing that `k = 1` is: exponential search, then binary search.
fn deepest_hoist<O>(
    input: &[u8],
    forest: &Forest,
    g: usize,
    chain: &[usize],
    oracle: &mut O,
) -> usize
where
    O: Oracle<u8> + ?Sized,
{
    let mut out = Vec::new();
    super::chunks::largest_holding(1, chain.len(), |k| {
        apply(
            input,
            &forest.groups[g],
            Edit::Hoist,
            Some(&forest.groups[chain[k - 1]]),
            &mut out,
        );
        !oracle.exhausted() && oracle.test(&out)
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{arb_case, shortlex_le, Recorder};
    use super::*;
    use crate::reduce::oracle::Cached;
    use proptest::prelude::*;

    /// Nesting depth of `[` brackets, `None` if they do not balance.
    fn depth(input: &[u8]) -> Option<usize> {
        let (mut d, mut max) = (0usize, 0);
        for &b in input {
            match b {
                b'[' => {
                    d += 1;
                    max = max.max(d);
                }
                b']' => d = d.checked_sub(1)?,
                _ => {}
            }
        }
        (d == 0).then_some(max)
    }

    #[test]
    fn groups_pair_each_kind_quotes_and_blocks() {
        let input = b"a(b[c)d]\"e\\\"f\"\nif x:\n  y\n  z\nw\n";
        let gs = groups(input);
        let wholes: Vec<&[u8]> = gs.iter().map(|g| &input[g.whole()]).collect();
        assert!(wholes.contains(&&b"(b[c)"[..]), "{wholes:?}");
        assert!(wholes.contains(&&b"[c)d]"[..]));
        assert!(wholes.contains(&&b"\"e\\\"f\""[..]));
        assert!(wholes.contains(&&b"if x:\n  y\n  z\n"[..]));
        assert_eq!(gs.len(), 4);
        assert!(gs.windows(2).all(|w| w[0].len() >= w[1].len()));
    }

    #[test]
    fn nested_brackets_reduce_to_exactly_the_crashing_depth() {
        let input = b"key = [1, [2, [3, [4, [5, [6, [7]]]]], \"x\"]] # depth 7\n";
        let pred = |c: &[u8]| depth(c).is_some_and(|d| d >= 4);
        let result = reduce_nesting(input, &mut |c: &[u8]| pred(c));
        // The pass alone keeps what is outside every group.
        assert_eq!(result, b"key = [[[[]]]] # depth 7\n");
        // In the pipeline, nothing else is left.
        assert_eq!(
            super::super::reduce_bytes(input, &mut Cached::new(|c: &[u8]| pred(c))),
            b"[[[[]]]]"
        );
    }

    #[test]
    fn deep_nesting_costs_logarithmic_tests() {
        let nested = |levels: usize| {
            let mut input = Vec::new();
            for i in 0..levels {
                input.extend_from_slice(format!("[{i},").as_bytes());
            }
            input.extend(std::iter::repeat_n(b']', levels));
            input
        };
        let tests = |levels: usize| {
            let mut rec = Recorder::new(|c: &[u8]| depth(c).is_some_and(|d| d >= 300));
            let result = reduce_nesting(&nested(levels), &mut rec);
            let mut expected = vec![b'['; 300];
            expected.extend(vec![b']'; 300]);
            assert!(result == expected, "{}", String::from_utf8_lossy(&result));
            rec.log.len()
        };
        // Removing 1700 more levels costs a few more tests of the hoist's
        // searches, not one test per level; the rest is the sweeps over the
        // 300 levels that stay.
        let (t2000, t3700) = (tests(2000), tests(3700));
        assert!(
            t3700 < t2000 + 20,
            "{t2000} tests for 2000 levels, {t3700} for 3700"
        );
    }

    #[test]
    fn a_nests_interior_levels_cost_no_test() {
        // 200 levels of `(x` that all stay: only the levels near the run's
        // ends (and the outermost group) are worth a test.
        let input = [b"[x".repeat(200), b"]".repeat(200)].concat();
        let mut rec = Recorder::new(|c: &[u8]| {
            depth(c).is_some_and(|d| d >= 200) && c.iter().filter(|&&b| b == b'x').count() == 200
        });
        assert_eq!(reduce_nesting(&input, &mut rec), input);
        assert!(rec.log.len() < 5 * 2 * 40, "{} tests", rec.log.len());
    }

    #[test]
    fn indentation_blocks_are_hoisted_and_hollowed() {
        let input = b"a:\n  b:\n    c:\n      d\n  e\nf\n";
        // Interesting: some line indented by at least 4 spaces under a header.
        let pred = |c: &[u8]| c.windows(5).any(|w| w == b"\n    ") && c.ends_with(b"\n");
        let result = reduce_nesting(input, &mut |c: &[u8]| pred(c));
        // `a:` hoisted to `b:`'s block, then to `c:`'s; `e` went with `a:`.
        assert_eq!(String::from_utf8_lossy(&result), "    c:\n      d\nf\n");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn result_is_interesting_and_never_larger(case in arb_case()) {
            let holds = |c: &[u8]| case.holds(c);
            let result = reduce_nesting(&case.input, &mut { holds });
            prop_assert!(holds(&result));
            prop_assert!(shortlex_le(&result, &case.input));
        }
    }
}
