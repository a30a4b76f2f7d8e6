//! The Fuzzing Book's `GrammarReducer` ("Reducing Failure-Inducing Inputs",
//! fuzzingbook 1.2.2), transcribed so that its results and test counts
//! reproduce (`reference/REFERENCE.md` §3.4).
//!
//! For every child of a node (top-down), the reductions of the child are:
//!
//! * its proper subtrees with the same symbol (pre-order), then
//! * *alternate reductions*: each expansion of the symbol (fewest children
//!   first, stable), every child of which is found among the child's
//!   subtrees (terminals included); the first combination of found subtrees
//!   with fewer nodes than the child is taken;
//!
//! duplicates removed. The reductions with fewer nodes than the child are
//! tried in order; the first interesting one replaces the child, and the
//! scan goes on with the next child; scans repeat while any child was
//! replaced; then the same is done inside every child.
//!
//! * [`GrammarReducerMode::Plain`]: the chapter's first `reduce_tree`,
//!   subtrees at any depth.
//! * [`GrammarReducerMode::Depth`]: the chapter's final, depth-oriented
//!   `reduce_tree`: subtrees exactly `depth` levels below the child, with
//!   `depth` = 0, 1, 2, … up to the tree's height, back to 0 whenever a pass
//!   reduced something.
//!
//! Quirks kept from the Python code, because they decide which candidates
//! are tested:
//!
//! * an alternate reduction *shares* the subtrees it is built from, so the
//!   same subtree can appear twice (`<integer>.<integer>` from one
//!   `<integer>`), and a later in-place reduction of that subtree changes
//!   both occurrences. The tree is kept in an arena whose node ids play the
//!   part of Python's object identity;
//! * node counts include leaves; a leaf matches a terminal of an expansion
//!   when its bytes equal the literal (or are one byte the class matches).
//!
//! One deliberate difference: an empty expansion has no children here
//! (fuzzingbook would look for a leaf `''`), so it is always applicable.
//! The input is never tested; answers are remembered by bytes, as
//! `CachingReducer` does, so the number of oracle tests equals the book's
//! `tests`.

use super::{term_matches, Reduction, Tester};
use crate::grammar::{Grammar, Term, Tree};
use crate::reduce::oracle::Oracle;

/// Which `reduce_tree` of the chapter to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GrammarReducerMode {
    /// `reduce_tree(tree) = reduce_subtree(tree, tree)`: depth -1.
    Plain,
    /// The depth-oriented strategy (the chapter's final `GrammarReducer`).
    #[default]
    Depth,
}

/// Reduces `tree` with the Fuzzing Book's `GrammarReducer`; see the module
/// documentation.
pub fn grammar_reducer<O>(
    grammar: &Grammar,
    tree: &Tree,
    oracle: &mut O,
    mode: GrammarReducerMode,
) -> Reduction
where
    O: Oracle<u8> + ?Sized,
{
    let mut tester = Tester::new(grammar, tree, oracle);
    let tree = run(&mut tester, tree, mode);
    Reduction {
        tree,
        stats: tester.stats,
    }
}

pub(super) fn run<O: Oracle<u8> + ?Sized>(
    tester: &mut Tester<'_, O>,
    tree: &Tree,
    mode: GrammarReducerMode,
) -> Tree {
    let mut reducer = Reducer {
        arena: Arena::default(),
        order: sorted_expansions(tester.grammar),
        tester,
    };
    let root = reducer.arena.import(tree);
    match mode {
        GrammarReducerMode::Plain => {
            reducer.reduce_subtree(root, root, -1);
        }
        GrammarReducerMode::Depth => {
            let mut depth = 0;
            while depth < reducer.arena.height(root) as i64 {
                if reducer.tester.exhausted() {
                    break;
                }
                if reducer.reduce_subtree(root, root, depth) {
                    depth = 0;
                } else {
                    depth += 1;
                }
            }
        }
    }
    reducer.arena.export(root)
}

/// For every nonterminal, its expansion indices sorted (stably) by number
/// of terms, as `alternate_reductions` sorts `self.grammar[symbol]`.
fn sorted_expansions(grammar: &Grammar) -> std::collections::HashMap<String, Vec<usize>> {
    grammar
        .rules
        .iter()
        .map(|(symbol, rules)| {
            let mut order: Vec<usize> = (0..rules.len()).collect();
            order.sort_by_key(|&k| rules[k].len());
            (symbol.clone(), order)
        })
        .collect()
}

type Id = usize;

#[derive(Debug, Clone)]
enum Node {
    Inner {
        symbol: String,
        expansion: usize,
        children: Vec<Id>,
    },
    Leaf(Vec<u8>),
}

/// Trees whose nodes may be shared (a DAG), as Python's nested lists are.
#[derive(Default)]
struct Arena {
    nodes: Vec<Node>,
}

impl Arena {
    fn import(&mut self, tree: &Tree) -> Id {
        let node = match tree {
            Tree::Leaf(b) => Node::Leaf(b.clone()),
            Tree::Node {
                symbol,
                expansion,
                children,
            } => Node::Inner {
                symbol: symbol.clone(),
                expansion: *expansion,
                children: children.iter().map(|c| self.import(c)).collect(),
            },
        };
        self.push(node)
    }

    fn push(&mut self, node: Node) -> Id {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn export(&self, id: Id) -> Tree {
        match &self.nodes[id] {
            Node::Leaf(b) => Tree::Leaf(b.clone()),
            Node::Inner {
                symbol,
                expansion,
                children,
            } => Tree::Node {
                symbol: symbol.clone(),
                expansion: *expansion,
                children: children.iter().map(|&c| self.export(c)).collect(),
            },
        }
    }

    fn children(&self, id: Id) -> &[Id] {
        match &self.nodes[id] {
            Node::Inner { children, .. } => children,
            Node::Leaf(_) => &[],
        }
    }

    fn symbol(&self, id: Id) -> Option<&str> {
        match &self.nodes[id] {
            Node::Inner { symbol, .. } => Some(symbol),
            Node::Leaf(_) => None,
        }
    }

    /// `number_of_nodes`: every node and leaf, shared ones once per use.
    fn count(&self, id: Id) -> usize {
        1 + self
            .children(id)
            .iter()
            .map(|&c| self.count(c))
            .sum::<usize>()
    }

    /// `max_height`: a node without children has height 1.
    fn height(&self, id: Id) -> usize {
        1 + self
            .children(id)
            .iter()
            .map(|&c| self.height(c))
            .max()
            .unwrap_or(0)
    }

    /// Python's `==` on trees.
    fn equal(&self, a: Id, b: Id) -> bool {
        if a == b {
            return true;
        }
        match (&self.nodes[a], &self.nodes[b]) {
            (Node::Leaf(x), Node::Leaf(y)) => x == y,
            (
                Node::Inner {
                    symbol: s,
                    expansion: e,
                    children: c,
                },
                Node::Inner {
                    symbol: t,
                    expansion: f,
                    children: d,
                },
            ) => {
                s == t
                    && e == f
                    && c.len() == d.len()
                    && c.iter().zip(d).all(|(&x, &y)| self.equal(x, y))
            }
            _ => false,
        }
    }

    /// Can node `id` stand for `term`?
    fn matches(&self, id: Id, term: &Term) -> bool {
        match (&self.nodes[id], term) {
            (Node::Inner { symbol, .. }, Term::Nonterminal(name)) => symbol == name,
            (Node::Leaf(b), _) => term_matches(term, &Tree::Leaf(b.clone())),
            _ => false,
        }
    }

    /// `subtrees_with_symbol(tree, symbol, depth, ignore_root)`, with the
    /// symbol test given as `term`.
    fn subtrees(&self, id: Id, term: &Term, depth: i64, ignore_root: bool, out: &mut Vec<Id>) {
        if depth <= 0 && !ignore_root && self.matches(id, term) {
            out.push(id);
        }
        if depth != 0 {
            for &c in self.children(id) {
                self.subtrees(c, term, depth - 1, false, out);
            }
        }
    }
}

struct Reducer<'t, 'a, O: ?Sized> {
    arena: Arena,
    order: std::collections::HashMap<String, Vec<usize>>,
    tester: &'t mut Tester<'a, O>,
}

impl<O: Oracle<u8> + ?Sized> Reducer<'_, '_, O> {
    /// `alternate_reductions(tree, symbol, depth)` for a node `id` of
    /// nonterminal `symbol`.
    fn alternate_reductions(&mut self, id: Id, symbol: &str, depth: i64) -> Vec<Id> {
        let limit = self.arena.count(id);
        let rules = &self.tester.grammar.rules[symbol];
        let mut reductions: Vec<(usize, Id)> = Vec::new();
        for &k in &self.order[symbol] {
            let terms = &rules[k];
            let mut options: Vec<Vec<Id>> = Vec::with_capacity(terms.len());
            for term in terms {
                let mut found = Vec::new();
                self.arena.subtrees(id, term, depth, true, &mut found);
                if found.is_empty() {
                    break;
                }
                options.push(found);
            }
            if options.len() < terms.len() {
                continue;
            }
            if let Some(children) = first_combination_below(&self.arena, &options, limit) {
                let node = Node::Inner {
                    symbol: symbol.to_string(),
                    expansion: k,
                    children,
                };
                let new = self.arena.push(node);
                reductions.push((self.arena.count(new), new));
            }
        }
        // `reductions.sort(key=number_of_nodes)`: stable.
        reductions.sort_by_key(|&(n, _)| n);
        reductions.into_iter().map(|(_, id)| id).collect()
    }

    /// `symbol_reductions(tree, symbol, depth)`.
    fn symbol_reductions(&mut self, id: Id, depth: i64) -> Vec<Id> {
        let Some(symbol) = self.arena.symbol(id).map(str::to_string) else {
            return Vec::new();
        };
        let mut all = Vec::new();
        let term = Term::Nonterminal(symbol.clone());
        self.arena.subtrees(id, &term, depth, true, &mut all);
        all.extend(self.alternate_reductions(id, &symbol, depth));
        let mut unique: Vec<Id> = Vec::new();
        for r in all {
            if !unique.iter().any(|&u| self.arena.equal(u, r)) {
                unique.push(r);
            }
        }
        unique
    }

    /// `reduce_subtree(tree, subtree, depth)`.
    fn reduce_subtree(&mut self, root: Id, subtree: Id, depth: i64) -> bool {
        if self.arena.children(subtree).is_empty() {
            return false;
        }
        let mut reduced = false;
        loop {
            let mut reduced_child = false;
            let mut i = 0;
            while i < self.arena.children(subtree).len() {
                if self.tester.exhausted() {
                    return reduced;
                }
                let child = self.arena.children(subtree)[i];
                let size = self.arena.count(child);
                let reductions: Vec<Id> = self
                    .symbol_reductions(child, depth)
                    .into_iter()
                    .filter(|&r| self.arena.count(r) < size)
                    .collect();
                let found = self
                    .tester
                    .first_interesting_lazy(reductions.len(), |k| {
                        set_child(&mut self.arena, subtree, i, reductions[k]);
                        let t = self.arena.export(root);
                        set_child(&mut self.arena, subtree, i, child);
                        t
                    })
                    .map(|(k, _)| k);
                if let Some(k) = found {
                    set_child(&mut self.arena, subtree, i, reductions[k]);
                    reduced = true;
                    reduced_child = true;
                }
                i += 1;
            }
            if !reduced_child {
                break;
            }
        }
        let children = self.arena.children(subtree).to_vec();
        for c in children {
            if self.reduce_subtree(root, c, depth) {
                reduced = true;
            }
        }
        reduced
    }
}

fn set_child(arena: &mut Arena, parent: Id, i: usize, child: Id) {
    match &mut arena.nodes[parent] {
        Node::Inner { children, .. } => children[i] = child,
        Node::Leaf(_) => unreachable!("leaves have no children"),
    }
}

/// The first combination in `possible_combinations` order (the first list
/// varies slowest) whose node `1 + Σ count` is below `limit`, found without
/// enumerating the product.
fn first_combination_below(arena: &Arena, options: &[Vec<Id>], limit: usize) -> Option<Vec<Id>> {
    let counts: Vec<Vec<usize>> = options
        .iter()
        .map(|o| o.iter().map(|&id| arena.count(id)).collect())
        .collect();
    // min_rest[j] = Σ_{k ≥ j} min(counts[k])
    let mut min_rest = vec![0usize; options.len() + 1];
    for j in (0..options.len()).rev() {
        min_rest[j] = min_rest[j + 1] + counts[j].iter().min().copied().unwrap_or(0);
    }
    let mut used = 1usize;
    let mut chosen = Vec::with_capacity(options.len());
    for j in 0..options.len() {
        let pick =
            (0..options[j].len()).find(|&i| used + counts[j][i] + min_rest[j + 1] < limit)?;
        used += counts[j][pick];
        chosen.push(options[j][pick]);
    }
    Some(chosen)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{expr_grammar, parse_expr};
    use super::*;
    use crate::reduce::oracle::Cached;

    fn mystery(c: &[u8]) -> bool {
        let open = c.iter().position(|&b| b == b'(');
        let close = c.iter().position(|&b| b == b')');
        matches!((open, close), (Some(o), Some(cl)) if o < cl)
    }

    fn eval_mystery(c: &[u8]) -> bool {
        std::str::from_utf8(c).ok().and_then(parse_expr).is_some() && mystery(c)
    }

    fn run_traced(mode: GrammarReducerMode) -> (Reduction, Vec<String>) {
        let g = expr_grammar();
        let tree = parse_expr("1 + (2 * 3)").unwrap();
        let mut log = Vec::new();
        let mut oracle = Cached::new(|c: &[u8]| {
            log.push(String::from_utf8(c.to_vec()).unwrap());
            eval_mystery(c)
        });
        let r = grammar_reducer(&g, &tree, &mut oracle, mode);
        drop(oracle);
        (r, log)
    }

    #[test]
    fn plain_reproduces_the_books_five_tests() {
        let (r, log) = run_traced(GrammarReducerMode::Plain);
        assert_eq!(r.tree.to_bytes(), b"(3)");
        // The reference trace's uncached tests, in order.
        assert_eq!(log, ["(2 * 3)", "2 * 3", "3", "2", "(3)"]);
        assert_eq!(r.stats.tests, 5);
        assert_eq!(r.stats.invalid_candidates, 0);
    }

    #[test]
    fn depth_oriented_reproduces_the_books_three_tests() {
        let (r, log) = run_traced(GrammarReducerMode::Depth);
        assert_eq!(r.tree.to_bytes(), b"(3)");
        assert_eq!(log, ["(2 * 3)", "(3)", "3"]);
        assert_eq!(r.stats.tests, 3);
    }

    #[test]
    fn subtrees_follow_the_depth_rule() {
        let tree = parse_expr("1 + (2 * 3)").unwrap();
        let mut arena = Arena::default();
        let root = arena.import(&tree);
        let term = Term::Nonterminal("<term>".into());
        let texts = |ids: Vec<Id>| -> Vec<String> {
            ids.iter()
                .map(|&i| String::from_utf8(arena.export(i).to_bytes()).unwrap())
                .collect()
        };
        let at = |depth| {
            let mut out = Vec::new();
            arena.subtrees(root, &term, depth, true, &mut out);
            out
        };
        let (d1, d2, d3, all) = (at(1), at(2), at(3), at(-1));
        assert!(texts(d1).is_empty());
        assert_eq!(texts(d2), ["1"]);
        assert_eq!(texts(d3), ["(2 * 3)"]);
        assert_eq!(texts(all), ["1", "(2 * 3)", "2 * 3", "3"]);
    }

    #[test]
    fn first_combination_matches_the_odometer_order() {
        let tree = parse_expr("1 + 22 + 333").unwrap();
        let mut arena = Arena::default();
        let root = arena.import(&tree);
        let mut ints = Vec::new();
        arena.subtrees(
            root,
            &Term::Nonterminal("<integer>".into()),
            -1,
            true,
            &mut ints,
        );
        let sizes: Vec<usize> = ints.iter().map(|&i| arena.count(i)).collect();
        let options = vec![ints.clone(), ints.clone()];
        for limit in 0..20 {
            let brute = ints
                .iter()
                .flat_map(|&a| ints.iter().map(move |&b| (a, b)))
                .find(|&(a, b)| 1 + arena.count(a) + arena.count(b) < limit)
                .map(|(a, b)| vec![a, b]);
            assert_eq!(
                first_combination_below(&arena, &options, limit),
                brute,
                "{limit} {sizes:?}"
            );
        }
    }
}
