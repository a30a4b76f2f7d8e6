//! Perses (Sun, Li, Zhang, Gu, Su: "Perses: Syntax-Guided Program
//! Reduction", ICSE 2018), as the seed-004 post describes it.
//!
//! A priority queue holds nodes of the current tree, largest (most leaves)
//! first, ties in the order they were queued. A popped node is replaced,
//! where the grammar allows, by
//!
//! 1. the empty derivation of its symbol, if the symbol derives ε (Perses'
//!    "delete the node"; the minimal derivation is used, so a nullable
//!    symbol that needs a few nodes for ε works too), then
//! 2. a compatible node: a proper descendant with the same nonterminal, in
//!    pre-order (ancestors before their descendants, so larger first), then
//! 3. the node with another expansion of its symbol whose terms are a
//!    subsequence of its own, keeping the matching children
//!    ([`pruned_expansions`](super::pruned_expansions)). Perses deletes list
//!    elements after rewriting the grammar into its normal form (Kleene
//!    stars); with a list written as a recursive rule (`<expr> ::= <term> +
//!    <expr> | <term>`) deleting the first elements is a descendant
//!    replacement, deleting the last one needs this step.
//!
//! The first interesting replacement is kept and the node is queued again
//! (its new content may be replaceable further); when none is interesting,
//! its nonterminal children are queued instead.
//!
//! Differences from the seed-004 reference implementation (`perses_reduction`
//! of the post, `reference/REFERENCE.md` §3.6 B), which explores *every*
//! interesting replacement as a separate tree (a best-first search over
//! trees, smallest tree first, then smallest node): this port keeps one
//! current tree and the first interesting replacement, so it never works on
//! a tree it already knows to be larger than the best one. The reference
//! also has no step 3, and does not descend into `<UPPERCASE>` symbols
//! (ANTLR-style tokens); this port does. On the reference
//! example (`1 + ((2 * 3 / 4))`, doubled parentheses) both test the same 13
//! candidates and return `((4))`; the reference counts one more test, its
//! check of the original.
//!
//! The queued nodes never contain each other (a node's children are queued
//! only after the node itself is done), so replacing one node leaves the
//! paths of all other queued nodes valid.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{
    descendants_with_symbol, empty_derivation, node_at, pruned_expansions, Reduction, Replacement,
    Tester,
};
use crate::grammar::{Grammar, Tree};
use crate::reduce::oracle::Oracle;

/// Reduces `tree` with Perses; see the module documentation.
pub fn perses<O>(grammar: &Grammar, tree: &Tree, oracle: &mut O) -> Reduction
where
    O: Oracle<u8> + ?Sized,
{
    super::reduce_with(grammar, tree, oracle, run)
}

pub(super) fn run<O: Oracle<u8> + ?Sized>(tester: &mut Tester<'_, O>, tree: Tree) -> Tree {
    let mut current = tree;
    // (leaves, Reverse(queue order), path): largest first, then first queued.
    let mut queue: BinaryHeap<(usize, Reverse<u64>, Vec<usize>)> = BinaryHeap::new();
    let mut pushed = 0u64;
    let mut push = |queue: &mut BinaryHeap<_>, current: &Tree, path: Vec<usize>| {
        let leaves = count_leaves(node_at(current, &path));
        queue.push((leaves, Reverse(pushed), path));
        pushed += 1;
    };
    if current.symbol().is_some() {
        push(&mut queue, &current, Vec::new());
    }
    while let Some((_, _, path)) = queue.pop() {
        if tester.exhausted() {
            break;
        }
        let found = {
            let node = node_at(&current, &path);
            let candidates = replacements(tester, node);
            tester.first_replacement(&current, &path, &candidates)
        };
        if let Some(next) = found {
            current = next;
            push(&mut queue, &current, path);
        } else {
            let node = node_at(&current, &path);
            for (i, child) in super::children(node).iter().enumerate() {
                if child.symbol().is_some() {
                    let mut child_path = path.clone();
                    child_path.push(i);
                    push(&mut queue, &current, child_path);
                }
            }
        }
    }
    current
}

/// The replacements of `node` Perses tries, in order; each is strictly
/// smaller than `node` (a proper descendant or a pruned expansion has fewer
/// nodes and no more bytes).
fn replacements<'t, O: Oracle<u8> + ?Sized>(
    tester: &Tester<'_, O>,
    node: &'t Tree,
) -> Vec<Replacement<'t>> {
    let Some(symbol) = node.symbol() else {
        return Vec::new();
    };
    let mut out: Vec<Replacement<'t>> = Vec::new();
    if let Some(empty) = empty_derivation(&tester.mins, node) {
        out.push(Replacement::Owned(empty.clone()));
    }
    out.extend(
        descendants_with_symbol(node, symbol)
            .into_iter()
            .map(Replacement::Borrowed),
    );
    out.extend(
        pruned_expansions(tester.grammar, node)
            .into_iter()
            .map(Replacement::Owned),
    );
    out
}

/// Leaves of a tree; a node without children counts as one (as in the
/// seed's `count_leaves`).
fn count_leaves(tree: &Tree) -> usize {
    tree.preorder().filter(|t| t.children().is_empty()).count()
}

#[cfg(test)]
mod tests {
    use super::super::testing::{double_paren, expr_grammar, parse_expr};
    use super::*;
    use crate::grammar::Term;
    use crate::reduce::oracle::Cached;
    use std::collections::BTreeMap;

    #[test]
    fn reference_example_reaches_doubled_parens_of_four() {
        let g = expr_grammar();
        let tree = parse_expr("1 + ((2 * 3 / 4))").unwrap();
        let mut log: Vec<String> = Vec::new();
        let mut oracle = Cached::new(|c: &[u8]| {
            log.push(String::from_utf8(c.to_vec()).unwrap());
            double_paren(c)
        });
        let r = perses(&g, &tree, &mut oracle);
        assert_eq!(r.tree.to_bytes(), b"((4))");
        assert_eq!(r.stats.invalid_candidates, 0);
        assert_eq!(r.stats.tests, 13);
        drop(oracle);
        // The reference's log without its initial check of the original.
        let reference = [
            "((2 * 3 / 4))",
            "(2 * 3 / 4)",
            "2 * 3 / 4",
            "3 / 4",
            "4",
            "2",
            "3",
            "(3 / 4)",
            "(4)",
            "(2)",
            "(3)",
            "((3 / 4))",
            "((4))",
        ];
        assert_eq!(log, reference);
    }

    #[test]
    fn nullable_nodes_are_deleted() {
        // <list> ::= <item> <list> | ε ; items are letters.
        let nt = |s: &str| Term::Nonterminal(s.into());
        let g = Grammar {
            start: "<start>".into(),
            rules: BTreeMap::from([
                ("<start>".into(), vec![vec![nt("<list>")]]),
                (
                    "<list>".into(),
                    vec![vec![nt("<item>"), nt("<list>")], vec![]],
                ),
                (
                    "<item>".into(),
                    vec![vec![Term::Class {
                        ranges: vec![(b'a', b'z')],
                        negated: false,
                    }]],
                ),
            ]),
        };
        fn list(items: &[u8]) -> Tree {
            match items.split_first() {
                None => Tree::Node {
                    symbol: "<list>".into(),
                    expansion: 1,
                    children: vec![],
                },
                Some((&b, rest)) => Tree::Node {
                    symbol: "<list>".into(),
                    expansion: 0,
                    children: vec![
                        Tree::Node {
                            symbol: "<item>".into(),
                            expansion: 0,
                            children: vec![Tree::Leaf(vec![b])],
                        },
                        list(rest),
                    ],
                },
            }
        }
        let tree = Tree::Node {
            symbol: "<start>".into(),
            expansion: 0,
            children: vec![list(b"abcxdef")],
        };
        let mut oracle = Cached::new(|c: &[u8]| c.contains(&b'x'));
        let r = perses(&g, &tree, &mut oracle);
        assert_eq!(r.tree.to_bytes(), b"x");
        assert_eq!(r.stats.invalid_candidates, 0);
    }
}
