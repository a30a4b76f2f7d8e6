//! Generalised tree reduction (Herfert, Patra, Pradel: "Automatically
//! Reducing Tree-Structured Test Inputs", ASE 2017), with the grammar
//! supplying the transformations GTR otherwise learns from a corpus.
//!
//! The tree is traversed breadth-first, top-down. At each node the
//! following replacements are tried, first interesting one kept (and the
//! node tried again, since its new content may reduce further):
//!
//! 1. *deletion*: the empty derivation of the node's symbol, if it has one;
//! 2. *pruning children*: another expansion of the same symbol whose terms
//!    are a subsequence of the node's expansion, keeping the matching
//!    children (`<term> + <expr>` → `<term>` or → `<expr>`… where the
//!    grammar has such an expansion);
//! 3. *replacement by a compatible descendant*: proper descendants of the
//!    same nonterminal, nearest first (breadth-first: children, then
//!    grandchildren, …).
//!
//! Passes repeat until one changes nothing (a fixpoint).

use std::collections::VecDeque;

use super::{empty_derivation, node_at, pruned_expansions, Reduction, Replacement, Tester};
use crate::grammar::{Grammar, Tree};
use crate::reduce::oracle::Oracle;

/// Reduces `tree` with generalised tree reduction; see the module
/// documentation.
pub fn gtr<O>(grammar: &Grammar, tree: &Tree, oracle: &mut O) -> Reduction
where
    O: Oracle<u8> + ?Sized,
{
    super::reduce_with(grammar, tree, oracle, run)
}

pub(super) fn run<O: Oracle<u8> + ?Sized>(tester: &mut Tester<'_, O>, tree: Tree) -> Tree {
    super::to_fixpoint(tester, tree, pass)
}

/// One breadth-first pass; returns whether anything was replaced.
fn pass<O: Oracle<u8> + ?Sized>(tester: &mut Tester<'_, O>, tree: Tree) -> (Tree, bool) {
    let mut current = tree;
    let mut changed = false;
    let mut queue: VecDeque<Vec<usize>> = VecDeque::from([Vec::new()]);
    while let Some(path) = queue.pop_front() {
        if tester.exhausted() {
            break;
        }
        if node_at(&current, &path).symbol().is_none() {
            continue;
        }
        loop {
            let found = {
                let node = node_at(&current, &path);
                let candidates = replacements(tester, node);
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
        for i in 0..super::children(node).len() {
            let mut child = path.clone();
            child.push(i);
            queue.push_back(child);
        }
    }
    (current, changed)
}

/// GTR's candidates for `node`, in order; each strictly smaller.
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
        pruned_expansions(tester.grammar, node)
            .into_iter()
            .map(Replacement::Owned),
    );
    // Descendants with the same symbol, breadth-first.
    let mut level: Vec<&'t Tree> = super::children(node).iter().collect();
    while !level.is_empty() {
        let mut next = Vec::new();
        for t in level {
            if t.symbol() == Some(symbol) {
                out.push(Replacement::Borrowed(t));
            }
            next.extend(super::children(t));
        }
        level = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::embeddings;
    use super::super::testing::{double_paren, expr_grammar, parse_expr};
    use super::*;
    use crate::grammar::Term;
    use crate::reduce::oracle::Cached;

    #[test]
    fn embeddings_are_subsequences() {
        let a = Term::Nonterminal("<a>".into());
        let b = Term::Literal(b"+".to_vec());
        assert_eq!(
            embeddings(std::slice::from_ref(&a), &[a.clone(), b.clone(), a.clone()]),
            vec![vec![0], vec![2]]
        );
        assert!(embeddings(&[b.clone(), b.clone()], std::slice::from_ref(&b)).is_empty());
        assert_eq!(embeddings(&[], &[a, b]), vec![Vec::<usize>::new()]);
    }

    #[test]
    fn keeps_the_left_operand_through_an_alternative_expansion() {
        // Descendant replacement alone can only keep the right operand of
        // `+`; `<expr> ::= <term>` keeps the left one.
        let g = expr_grammar();
        let tree = parse_expr("(1 * 7) + 2 - 3").unwrap();
        let mut oracle = Cached::new(|c: &[u8]| c.contains(&b'7'));
        let r = gtr(&g, &tree, &mut oracle);
        assert_eq!(r.tree.to_bytes(), b"7");
        assert_eq!(r.stats.invalid_candidates, 0);
    }

    #[test]
    fn reaches_a_fixpoint() {
        let g = expr_grammar();
        let tree = parse_expr("1 + ((2 * 3 / 4)) - (5 - (6))").unwrap();
        let mut oracle = Cached::new(double_paren);
        let r = gtr(&g, &tree, &mut oracle);
        assert_eq!(r.tree.to_bytes().len(), 5, "{:?}", r.tree.to_bytes());
        assert!(double_paren(&r.tree.to_bytes()));
        let again = gtr(&g, &r.tree, &mut Cached::new(double_paren));
        assert_eq!(again.tree, r.tree);
    }
}
