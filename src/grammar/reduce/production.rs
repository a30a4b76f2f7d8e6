//! Reduction by production (the Fuzzing Book's Reducer chapter, exercise 2,
//! `GenerativeGrammarReducer`).
//!
//! The Fuzzing Book's `GrammarReducer` only uses subtrees that occur in the
//! input, so `100.99` (a `<float>`) can never become an `<integer>` if no
//! `<integer>` occurs. This reducer also *produces* trees: for a node of
//! symbol `S` it tries
//!
//! * the minimal derivation of `S`, and
//! * every expansion of `S`, its children filled from the node's subtree
//!   where a subtree of the needed symbol (or a matching leaf) exists
//!   (first in pre-order, as `alternate_reductions` does), and otherwise
//!   produced: a missing nonterminal gets its cheapest expansion, filled the
//!   same way; a class gets its [`class_byte`](super::class_byte).
//!
//! Candidates strictly smaller than the node (bytes, then nodes) are tried
//! shortest first; the first interesting one replaces the node, which is
//! then tried again. Nodes are visited breadth-first, top-down, and passes
//! repeat until one changes nothing.

use std::collections::VecDeque;

use super::{class_byte, measure, node_at, Reduction, Replacement, Tester};
use crate::grammar::{Grammar, Term, Tree};
use crate::reduce::oracle::Oracle;

/// Reduces `tree` by production; see the module documentation.
pub fn production<O>(grammar: &Grammar, tree: &Tree, oracle: &mut O) -> Reduction
where
    O: Oracle<u8> + ?Sized,
{
    super::reduce_with(grammar, tree, oracle, run)
}

pub(super) fn run<O: Oracle<u8> + ?Sized>(tester: &mut Tester<'_, O>, tree: Tree) -> Tree {
    super::to_fixpoint(tester, tree, pass)
}

fn pass<O: Oracle<u8> + ?Sized>(tester: &mut Tester<'_, O>, tree: Tree) -> (Tree, bool) {
    let mut current = tree;
    let mut changed = false;
    let mut queue: VecDeque<Vec<usize>> = VecDeque::from([Vec::new()]);
    while let Some(path) = queue.pop_front() {
        if tester.exhausted() {
            break;
        }
        loop {
            let found = {
                let node = node_at(&current, &path);
                let candidates: Vec<Replacement<'_>> = productions(tester, node)
                    .into_iter()
                    .map(Replacement::Owned)
                    .collect();
                tester.first_replacement(&current, &path, &candidates)
            };
            match found {
                Some(next) => {
                    current = next;
                    changed = true;
                }
                None => break,
            }
        }
        let node = node_at(&current, &path);
        for (i, child) in super::children(node).iter().enumerate() {
            if child.symbol().is_some() {
                let mut child_path = path.clone();
                child_path.push(i);
                queue.push_back(child_path);
            }
        }
    }
    (current, changed)
}

/// The produced replacements of `node`, strictly smaller, shortest first.
fn productions<O: Oracle<u8> + ?Sized>(tester: &Tester<'_, O>, node: &Tree) -> Vec<Tree> {
    let Some(symbol) = node.symbol() else {
        return Vec::new();
    };
    let size = measure(node);
    let mut out: Vec<Tree> = Vec::new();
    if let Some(min) = tester.mins.get(symbol) {
        out.push(min.clone());
    }
    for (k, terms) in tester.grammar.rules[symbol].iter().enumerate() {
        if let Some(t) = fill(tester, node, symbol, k, terms, 0) {
            out.push(t);
        }
    }
    out.retain(|t| measure(t) < size);
    // Stable: equal sizes keep the order above (minimal derivation, then
    // grammar order).
    out.sort_by_key(measure);
    out.dedup();
    out
}

/// A tree for expansion `k` (`terms`) of `symbol`, children taken from the
/// proper subtrees of `source` where possible and produced otherwise.
/// `None` when some child can be neither found nor produced.
fn fill<O: Oracle<u8> + ?Sized>(
    tester: &Tester<'_, O>,
    source: &Tree,
    symbol: &str,
    k: usize,
    terms: &[Term],
    depth: usize,
) -> Option<Tree> {
    let mut children = Vec::with_capacity(terms.len());
    for term in terms {
        let child = match find(source, term) {
            Some(found) => found.clone(),
            None => produce(tester, source, term, depth)?,
        };
        children.push(child);
    }
    Some(Tree::Node {
        symbol: symbol.to_string(),
        expansion: k,
        children,
    })
}

/// A tree for `term` when `source` has none: a literal or class leaf, or the
/// cheapest expansion of a nonterminal (filled from `source` again).
fn produce<O: Oracle<u8> + ?Sized>(
    tester: &Tester<'_, O>,
    source: &Tree,
    term: &Term,
    depth: usize,
) -> Option<Tree> {
    match term {
        Term::Literal(lit) => Some(Tree::Leaf(lit.clone())),
        Term::Class { .. } => Some(Tree::Leaf(vec![class_byte(term)?])),
        Term::Nonterminal(name) => {
            let min = tester.mins.get(name)?;
            // Following the minimal derivation's expansions can only go as
            // deep as that derivation; past the grammar's size, fall back
            // to the minimal derivation itself.
            if depth > tester.grammar.rules.len() {
                return Some(min.clone());
            }
            let Tree::Node { expansion, .. } = min else {
                return None;
            };
            let terms = &tester.grammar.rules[name.as_str()][*expansion];
            fill(tester, source, name, *expansion, terms, depth + 1)
        }
    }
}

/// The first proper subtree of `source` (pre-order) that can stand for
/// `term`.
fn find<'t>(source: &'t Tree, term: &Term) -> Option<&'t Tree> {
    source
        .preorder()
        .skip(1)
        .find(|t| super::term_matches(term, t))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{number_grammar, parse_float};
    use super::*;
    use crate::reduce::oracle::Cached;

    /// The exercise's example: `100.99` fails; so does any number ≥ 1
    /// (and `NaN` does not).
    fn at_least_one(c: &[u8]) -> bool {
        std::str::from_utf8(c)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .is_some_and(|v| v >= 1.0)
    }

    #[test]
    fn float_becomes_an_integer_that_never_occurred() {
        let g = number_grammar();
        let tree = parse_float("100.99").unwrap();
        let mut oracle = Cached::new(at_least_one);
        let r = production(&g, &tree, &mut oracle);
        assert_eq!(r.tree.to_bytes(), b"1");
        assert_eq!(r.stats.invalid_candidates, 0);
        // Subtree replacement alone cannot leave the `<float>`.
        let gr = super::super::grammar_reducer(
            &g,
            &tree,
            &mut Cached::new(at_least_one),
            super::super::GrammarReducerMode::Depth,
        );
        assert!(gr.tree.to_bytes().contains(&b'.'));
    }

    #[test]
    fn produces_not_a_number() {
        let g = number_grammar();
        let tree = parse_float("100.99").unwrap();
        let mut oracle =
            Cached::new(|c: &[u8]| c.iter().any(u8::is_ascii_uppercase) || c.len() > 3);
        let r = production(&g, &tree, &mut oracle);
        assert_eq!(r.tree.to_bytes(), b"NaN");
    }
}
