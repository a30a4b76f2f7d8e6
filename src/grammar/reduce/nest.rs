//! Deep nests under a grammar: cut by the byte passes, then kept out of the
//! per-node tree passes.
//!
//! The tree reducers work node by node: Perses tries every compatible
//! descendant of a node, GTR and HDD every node of a level. On a stack
//! overflow's nest (thousands of `(` … `)` levels, each several tree levels
//! deep) that is tests in proportion to the depth for every level, and the
//! depth itself goes one level a success: a 44 KB nest of regex groups went
//! to 39,600 B in 120 s under `--grammar` where the byte pipeline alone
//! reached 17,040 B. So, before the tree passes:
//!
//! * [`cut_nest`]: the byte pipeline's nest passes ([`reduce_repeats`],
//!   [`cut_around_nest`]: the nest's count and shape, the text around it,
//!   in `O(log depth)` tests each) run on the tree's text; a candidate
//!   counts only if the grammar still derives it (checked on the
//!   interesting ones only, after the target's verdict), so the result is
//!   parsed again into a tree;
//! * [`freeze`]: past its first [`OPEN_LEVELS`] levels, the nest that is
//!   left becomes one opaque node ([`FROZEN`]: the same symbol, its bytes
//!   as one leaf), which the tree passes may keep, move or replace as a
//!   whole but never walk into; [`thaw`] puts the subtree back.
//!
//! What the frozen part needs at the end is byte work, as without a
//! grammar: the pipeline's polish is then the default byte pipeline.
//!
//! [`cut_around_nest`]: crate::reduce::cut_around_nest
//! [`reduce_repeats`]: crate::reduce::reduce_repeats

use std::collections::HashMap;

use super::{node_at_mut, Tester};
use crate::grammar::{earley, Grammar, Tree};
use crate::reduce::oracle::Oracle;

/// The `expansion` of a frozen node: its only child is a leaf holding the
/// bytes of the subtree it stands for.
pub(crate) const FROZEN: usize = usize::MAX;

/// A nest's outer levels left to the tree passes, the rest frozen: their
/// nodes are tested one by one, and what the byte passes left of the
/// outer levels is the same on all of them (on regex-deep, 32 open levels
/// cost 253 tests and removed nothing).
pub(crate) const OPEN_LEVELS: usize = 4;

/// A recursion along the deepest path with fewer levels than this is no
/// nest worth freezing (the byte passes' nest needs 32).
pub(crate) const MIN_LEVELS: usize = 64;

/// The nest passes of the byte pipeline on `tree`'s text, each interesting
/// candidate also derived by the grammar; the result parsed again (`None`:
/// nothing was cut).
pub(super) fn cut_nest<O: Oracle<u8> + ?Sized>(
    tester: &mut Tester<'_, O>,
    tree: &Tree,
) -> Option<Tree> {
    let bytes = tree.to_bytes();
    let grammar = tester.grammar;
    let mut gate = Derived { tester, grammar };
    // In the byte pipeline's order: the count, the company, the count again.
    let mut cut = crate::reduce::reduce_repeats(&bytes, &mut gate);
    let around = crate::reduce::cut_around_nest(&cut, &mut gate);
    if around != cut {
        cut = crate::reduce::reduce_repeats(&around, &mut gate);
    }
    if cut == bytes {
        return None;
    }
    earley::parse(grammar, &cut).ok()
}

/// The oracle of [`cut_nest`]: interesting and derived by the grammar (the
/// target's verdict first: most candidates of a nest are not interesting,
/// and a parse of a long one costs more than a run that fails early).
struct Derived<'t, 'a, O: ?Sized> {
    tester: &'t mut Tester<'a, O>,
    grammar: &'a Grammar,
}

impl<O: Oracle<u8> + ?Sized> Oracle<u8> for Derived<'_, '_, O> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        if !self.tester.test_bytes(candidate) {
            return false;
        }
        let derived = earley::parse(self.grammar, candidate).is_ok();
        if !derived {
            self.tester.stats.invalid_candidates += 1;
        }
        derived
    }

    fn first_interesting(&mut self, candidates: &[Vec<u8>]) -> Option<usize> {
        let mut from = 0;
        while from < candidates.len() {
            let k = from + self.tester.first_interesting_bytes(&candidates[from..])?;
            if earley::parse(self.grammar, &candidates[k]).is_ok() {
                return Some(k);
            }
            self.tester.stats.invalid_candidates += 1;
            from = k + 1;
        }
        None
    }

    fn exhausted(&self) -> bool {
        self.tester.exhausted()
    }

    fn executed(&self) -> Option<u64> {
        self.tester.oracle.executed()
    }

    fn phase(&mut self, name: &'static str) {
        self.tester.oracle.phase(name);
    }

    fn failed_otherwise(&mut self, candidate: &[u8]) -> Option<bool> {
        self.tester.oracle.failed_otherwise(candidate)
    }
}

/// `tree` with its deepest nest frozen past [`OPEN_LEVELS`] levels, and
/// the subtree taken out (`None`: no nest of [`MIN_LEVELS`]).
///
/// The nest is found on the deepest path from the root: the symbol that
/// recurs on it most often, not counting a symbol directly below itself
/// (a list written as a recursive rule, whose elements the tree passes
/// should keep deleting one by one).
pub(super) fn freeze(mut tree: Tree) -> (Tree, Option<Tree>) {
    let path = deepest_path(&tree);
    // The symbol at each depth of the path, the root's first.
    let mut symbols: Vec<&str> = Vec::with_capacity(path.len() + 1);
    let mut at = &tree;
    symbols.extend(at.symbol());
    for &i in &path {
        at = &at.children()[i];
        symbols.extend(at.symbol());
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for (k, s) in symbols.iter().enumerate() {
        if k == 0 || symbols[k - 1] != *s {
            *counts.entry(s).or_default() += 1;
        }
    }
    let Some((symbol, count)) = counts
        .into_iter()
        .max_by(|(a, m), (b, n)| m.cmp(n).then_with(|| b.cmp(a)))
    else {
        return (tree, None);
    };
    if count < MIN_LEVELS {
        return (tree, None);
    }
    // The depth of the nest's level OPEN_LEVELS (0-based) on the path.
    let depth = symbols
        .iter()
        .enumerate()
        .filter(|&(k, s)| *s == symbol && (k == 0 || symbols[k - 1] != *s))
        .nth(OPEN_LEVELS)
        .map(|(k, _)| k)
        .expect("counted above");
    let symbol = symbol.to_owned();
    let node = node_at_mut(&mut tree, &path[..depth]);
    let bytes = node.to_bytes();
    let frozen = Tree::Node {
        symbol,
        expansion: FROZEN,
        children: vec![Tree::Leaf(bytes)],
    };
    let subtree = std::mem::replace(node, frozen);
    (tree, Some(subtree))
}

/// `tree` with every frozen node replaced by `subtree` again.
pub(super) fn thaw(mut tree: Tree, subtree: Option<Tree>) -> Tree {
    let Some(subtree) = subtree else {
        return tree;
    };
    // Paths of the frozen nodes (never inside one another: they hold a leaf).
    let mut found = Vec::new();
    let mut stack: Vec<(&Tree, Vec<usize>)> = vec![(&tree, Vec::new())];
    while let Some((node, path)) = stack.pop() {
        if let Tree::Node { expansion, .. } = node {
            if *expansion == FROZEN {
                found.push(path);
                continue;
            }
        }
        for (i, child) in node.children().iter().enumerate() {
            if let Tree::Node { .. } = child {
                let mut p = path.clone();
                p.push(i);
                stack.push((child, p));
            }
        }
    }
    for path in found {
        *node_at_mut(&mut tree, &path) = subtree.clone();
    }
    tree
}

/// Child indices from the root to a deepest node (first deepest child at
/// each step), without recursion.
fn deepest_path(tree: &Tree) -> Vec<usize> {
    // Heights by node address, post-order with an explicit stack.
    let mut height: HashMap<*const Tree, usize> = HashMap::new();
    let mut stack: Vec<(&Tree, bool)> = vec![(tree, false)];
    while let Some((node, expanded)) = stack.pop() {
        if expanded {
            let h = node
                .children()
                .iter()
                .map(|c| height.get(&(c as *const Tree)).map_or(0, |h| h + 1))
                .max()
                .unwrap_or(0);
            height.insert(node as *const Tree, h);
        } else {
            stack.push((node, true));
            for child in node.children() {
                if let Tree::Node { .. } = child {
                    stack.push((child, false));
                }
            }
        }
    }
    let mut path = Vec::new();
    let mut at = tree;
    loop {
        let best = at
            .children()
            .iter()
            .enumerate()
            .filter_map(|(i, c)| height.get(&(c as *const Tree)).map(|&h| (h, i)))
            .max_by(|(h, i), (g, j)| h.cmp(g).then(j.cmp(i)));
        let Some((_, i)) = best else {
            return path;
        };
        path.push(i);
        at = &at.children()[i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::load::load_grammar;
    use crate::grammar::reduce::{check_tree, TreeStrategy};
    use crate::reduce::oracle::Cached;

    fn groups() -> Grammar {
        let text = r#"
            <start>  ::= <alt>
            <alt>    ::= <concat> ("|" <concat>)*
            <concat> ::= <atom>*
            <atom>   ::= "(" <alt> ")" | [a-z]
        "#;
        load_grammar(text, "groups").unwrap().grammar
    }

    /// Overflows when groups nest `depth` deep or more (a stack model), as
    /// long as the innermost group holds an `x`.
    fn overflows(input: &[u8], depth: usize) -> bool {
        let (mut level, mut deepest) = (0usize, 0usize);
        for &b in input {
            match b {
                b'(' => level += 1,
                b')' => level = level.saturating_sub(1),
                b'x' if level >= depth => deepest = deepest.max(level),
                _ => {}
            }
        }
        deepest >= depth
    }

    fn document(depth: usize) -> Vec<u8> {
        let mut input = b"ab|cd|(ef)|".repeat(40);
        for k in 0..depth {
            input.extend_from_slice(if k % 2 == 0 { b"(" } else { b"(a|" });
        }
        input.push(b'x');
        input.extend(std::iter::repeat_n(b')', depth));
        input.extend_from_slice(&b"|gh".repeat(20));
        input
    }

    #[test]
    fn a_nest_is_frozen_past_its_open_levels_and_thawed_whole() {
        let g = groups();
        let input = document(300);
        let tree = earley::parse(&g, &input).unwrap();
        let (frozen, subtree) = freeze(tree.clone());
        let subtree = subtree.expect("a nest");
        assert_eq!(frozen.to_bytes(), input);
        check_tree(&g, &frozen).unwrap();
        // The frozen node holds the levels past the open ones.
        let opens = subtree.to_bytes().iter().filter(|&&b| b == b'(').count();
        assert_eq!(opens, 300 - OPEN_LEVELS);
        // The frozen node and its leaf stand for the whole subtree.
        assert_eq!(frozen.size() + subtree.size(), tree.size() + 2);
        assert!(thaw(frozen, Some(subtree)) == tree);
    }

    #[test]
    fn a_long_list_is_not_a_nest() {
        let g = groups();
        let input = b"ab|".repeat(500);
        let tree = earley::parse(&g, &input[..input.len() - 1]).unwrap();
        assert!(freeze(tree).1.is_none());
    }

    #[test]
    fn the_grammar_pipeline_cuts_a_deep_nest_in_few_tests() {
        let g = groups();
        let input = document(3000);
        let tree = earley::parse(&g, &input).unwrap();
        let mut oracle = Cached::new(|c: &[u8]| overflows(c, 1000));
        let r = TreeStrategy::Grammar.run(&g, &tree, &mut oracle);
        assert!(overflows(&r.bytes, 1000));
        // The least is 1,000 `(`, the `x` and 1,000 `)`.
        assert!(r.bytes.len() <= 2001 + 8, "{}", r.bytes.len());
        let tests = oracle.stats().executed;
        assert!(tests < 30_000, "{tests} tests");
    }
}
