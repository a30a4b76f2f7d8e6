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
//!
//! Nothing recurses on the tree's depth: the arena's walks and
//! `reduce_subtree` use explicit stacks, and the node counts, heights and
//! structure hashes the Python code recomputes at every call are
//! remembered until the tree changes (on a tree 100,000 levels deep,
//! `number_of_nodes` of every child was quadratic). About 750 lines with
//! the tests.

use std::hash::{Hash, Hasher};

use super::{Reduction, Tester};
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

/// What [`Arena::summary`] remembers of a node: its `number_of_nodes`, its
/// `max_height`, and a hash of its structure (equal trees, equal hashes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Summary {
    count: usize,
    height: usize,
    hash: u64,
}

/// Trees whose nodes may be shared (a DAG), as Python's nested lists are.
///
/// Nothing here recurses: inputs nest as deep as they like, so every walk
/// uses an explicit stack. Node counts, heights and structure hashes are
/// remembered per node until the next [`Arena::set_child`] (the only way a
/// node changes), so that asking for the size of every child of a deep
/// tree costs linear time, not quadratic.
struct Arena {
    nodes: Vec<Node>,
    /// Per node: its summary and the generation it was computed in.
    memo: std::cell::RefCell<Vec<(u64, Summary)>>,
    /// Bumped by every change; older memo entries are stale. Starts at 1
    /// (0 marks entries never computed).
    generation: u64,
}

impl Default for Arena {
    fn default() -> Self {
        Arena {
            nodes: Vec::new(),
            memo: Default::default(),
            generation: 1,
        }
    }
}

impl Arena {
    /// Adds `tree`, children before their parents (post-order ids, as the
    /// recursive `import` numbered them), and returns the root's id. An
    /// explicit stack holds, for each node being added, the position of the
    /// next child to add; the ids of added children wait on a second stack
    /// until their parent takes them.
    fn import(&mut self, tree: &Tree) -> Id {
        let mut stack: Vec<(&Tree, usize)> = vec![(tree, 0)];
        let mut ids: Vec<Id> = Vec::new();
        loop {
            let (t, next) = stack.last_mut().expect("non-empty until the root is in");
            let children = t.children();
            if let Some(child) = children.get(*next) {
                *next += 1;
                stack.push((child, 0));
                continue;
            }
            let node = match *t {
                Tree::Node {
                    symbol, expansion, ..
                } => Node::Inner {
                    symbol: symbol.clone(),
                    expansion: *expansion,
                    children: ids.split_off(ids.len() - children.len()),
                },
                Tree::Leaf(b) => Node::Leaf(b.clone()),
            };
            stack.pop();
            let id = self.push(node);
            if stack.is_empty() {
                return id;
            }
            ids.push(id);
        }
    }

    fn push(&mut self, node: Node) -> Id {
        self.nodes.push(node);
        self.memo.get_mut().push((0, Summary::default()));
        self.nodes.len() - 1
    }

    /// The tree at `id`, shared nodes copied once per use: post-order, with
    /// an explicit stack of the nodes being copied (each with the position
    /// of the next child to copy); finished copies wait on a second stack
    /// until their parent takes them.
    fn export(&self, id: Id) -> Tree {
        if self.children(id).is_empty() {
            return self.export_flat(id);
        }
        let mut stack: Vec<(Id, usize)> = vec![(id, 0)];
        let mut copies: Vec<Tree> = Vec::new();
        loop {
            let (at, next) = stack.last_mut().expect("non-empty until the root is out");
            let children = self.children(*at);
            if let Some(&child) = children.get(*next) {
                *next += 1;
                if self.children(child).is_empty() {
                    copies.push(self.export_flat(child));
                } else {
                    stack.push((child, 0));
                }
                continue;
            }
            let Node::Inner {
                symbol, expansion, ..
            } = &self.nodes[*at]
            else {
                unreachable!("frames export inner nodes")
            };
            let tree = Tree::Node {
                symbol: symbol.clone(),
                expansion: *expansion,
                children: copies.split_off(copies.len() - children.len()),
            };
            stack.pop();
            if stack.is_empty() {
                return tree;
            }
            copies.push(tree);
        }
    }

    /// The tree at `id`, a leaf or a node without children.
    fn export_flat(&self, id: Id) -> Tree {
        match &self.nodes[id] {
            Node::Leaf(b) => Tree::Leaf(b.clone()),
            Node::Inner {
                symbol, expansion, ..
            } => Tree::Node {
                symbol: symbol.clone(),
                expansion: *expansion,
                children: Vec::new(),
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

    /// Child `i` of `parent` becomes `child`. Forgets every summary: a node
    /// may be shared, so any node above it may have changed.
    fn set_child(&mut self, parent: Id, i: usize, child: Id) {
        self.generation += 1;
        self.swap_child(parent, i, child);
    }

    /// Child `i` of `parent` becomes `child`, and the old child is
    /// returned; the summaries are kept, so the caller must put the old
    /// child back before asking for any.
    fn swap_child(&mut self, parent: Id, i: usize, child: Id) -> Id {
        match &mut self.nodes[parent] {
            Node::Inner { children, .. } => std::mem::replace(&mut children[i], child),
            Node::Leaf(_) => unreachable!("leaves have no children"),
        }
    }

    /// The tree at `root` with child `i` of `parent` replaced by `child`
    /// (the arena is left as it was).
    fn export_with(&mut self, root: Id, parent: Id, i: usize, child: Id) -> Tree {
        let old = self.swap_child(parent, i, child);
        let tree = self.export(root);
        self.swap_child(parent, i, old);
        tree
    }

    /// Count, height and hash of `id`, computed post-order (with an explicit
    /// stack) for the nodes not remembered since the last change.
    fn summary(&self, id: Id) -> Summary {
        let generation = self.generation;
        let mut memo = self.memo.borrow_mut();
        if memo[id].0 == generation {
            return memo[id].1;
        }
        // (node, its children are done)
        let mut stack = vec![(id, false)];
        while let Some((at, expanded)) = stack.pop() {
            if memo[at].0 == generation {
                continue;
            }
            let children = self.children(at);
            if !expanded {
                stack.push((at, true));
                stack.extend(
                    children
                        .iter()
                        .rev()
                        .filter(|&&c| memo[c].0 != generation)
                        .map(|&c| (c, false)),
                );
                continue;
            }
            let mut hasher = crate::grammar::earley::FastHasher::default();
            let (mut count, mut height) = (1usize, 0usize);
            match &self.nodes[at] {
                Node::Leaf(b) => {
                    hasher.write_u8(1);
                    b.hash(&mut hasher);
                }
                Node::Inner {
                    symbol, expansion, ..
                } => {
                    hasher.write_u8(0);
                    symbol.hash(&mut hasher);
                    expansion.hash(&mut hasher);
                    children.len().hash(&mut hasher);
                    for &c in children {
                        let s = memo[c].1;
                        count = count.saturating_add(s.count);
                        height = height.max(s.height);
                        hasher.write_u64(s.hash);
                    }
                }
            }
            memo[at] = (
                generation,
                Summary {
                    count,
                    height: height + 1,
                    hash: hasher.finish(),
                },
            );
        }
        memo[id].1
    }

    /// `number_of_nodes`: every node and leaf, shared ones once per use.
    fn count(&self, id: Id) -> usize {
        self.summary(id).count
    }

    /// `max_height`: a node without children has height 1.
    fn height(&self, id: Id) -> usize {
        self.summary(id).height
    }

    /// Python's `==` on trees.
    fn equal(&self, a: Id, b: Id) -> bool {
        if self.summary(a).hash != self.summary(b).hash {
            return false;
        }
        let mut todo = vec![(a, b)];
        while let Some((a, b)) = todo.pop() {
            if a == b {
                continue;
            }
            match (&self.nodes[a], &self.nodes[b]) {
                (Node::Leaf(x), Node::Leaf(y)) => {
                    if x != y {
                        return false;
                    }
                }
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
                    if s != t || e != f || c.len() != d.len() {
                        return false;
                    }
                    todo.extend(c.iter().copied().zip(d.iter().copied()));
                }
                _ => return false,
            }
        }
        true
    }

    /// Can node `id` stand for `term`?
    fn matches(&self, id: Id, term: &Term) -> bool {
        match (&self.nodes[id], term) {
            (Node::Inner { symbol, .. }, Term::Nonterminal(name)) => symbol == name,
            (Node::Leaf(b), Term::Literal(lit)) => b == lit,
            (Node::Leaf(b), Term::Class { .. }) => b.len() == 1 && term.class_matches(b[0]),
            _ => false,
        }
    }

    /// `subtrees_with_symbol(tree, symbol, depth, ignore_root)`, with the
    /// symbol test given as `term`: pre-order, with an explicit stack.
    fn subtrees(&self, id: Id, term: &Term, depth: i64, ignore_root: bool, out: &mut Vec<Id>) {
        let mut todo = vec![(id, depth, ignore_root)];
        while let Some((id, depth, ignore_root)) = todo.pop() {
            if depth <= 0 && !ignore_root && self.matches(id, term) {
                out.push(id);
            }
            if depth != 0 {
                todo.extend(
                    self.children(id)
                        .iter()
                        .rev()
                        .map(|&c| (c, depth - 1, false)),
                );
            }
        }
    }
}

struct Reducer<'t, 'a, O: ?Sized> {
    arena: Arena,
    order: std::collections::HashMap<String, Vec<usize>>,
    tester: &'t mut Tester<'a, O>,
}

/// What [`Reducer::scan`] did with one subtree.
enum Scan {
    /// Nothing more to do below it (no children, or the oracle ran out):
    /// whether it reduced anything.
    Done(bool),
    /// Its children are to be reduced next; whether the scan reduced
    /// anything.
    Descend(bool),
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
        // Duplicates (by `==`) removed, first occurrences kept; equal trees
        // have equal hashes, so only those are compared.
        let mut unique: Vec<Id> = Vec::new();
        let mut by_hash: std::collections::HashMap<u64, Vec<Id>> = Default::default();
        for r in all {
            let same_hash = by_hash.entry(self.arena.summary(r).hash).or_default();
            if !same_hash.iter().any(|&u| self.arena.equal(u, r)) {
                same_hash.push(r);
                unique.push(r);
            }
        }
        unique
    }

    /// `reduce_subtree(tree, subtree, depth)`. The Python function reduces
    /// the children of `subtree` in place, then calls itself on each child;
    /// here the calls are frames of an explicit stack (each with the
    /// children it has still to visit), in the same order.
    fn reduce_subtree(&mut self, root: Id, subtree: Id, depth: i64) -> bool {
        struct Frame {
            children: Vec<Id>,
            next: usize,
            reduced: bool,
        }
        let mut stack = match self.scan(root, subtree, depth) {
            Scan::Done(reduced) => return reduced,
            Scan::Descend(reduced) => vec![Frame {
                children: self.arena.children(subtree).to_vec(),
                next: 0,
                reduced,
            }],
        };
        loop {
            let frame = stack
                .last_mut()
                .expect("non-empty until the first call returns");
            let Some(&child) = frame.children.get(frame.next) else {
                let done = stack.pop().expect("just seen");
                match stack.last_mut() {
                    Some(caller) => caller.reduced |= done.reduced,
                    None => return done.reduced,
                }
                continue;
            };
            frame.next += 1;
            match self.scan(root, child, depth) {
                Scan::Done(reduced) => {
                    let frame = stack.last_mut().expect("still there");
                    frame.reduced |= reduced;
                }
                Scan::Descend(reduced) => stack.push(Frame {
                    children: self.arena.children(child).to_vec(),
                    next: 0,
                    reduced,
                }),
            }
        }
    }

    /// The part of `reduce_subtree` before it calls itself on the
    /// children: scans of the children of `subtree`, replacing each by its
    /// first interesting reduction, repeated while one was replaced.
    fn scan(&mut self, root: Id, subtree: Id, depth: i64) -> Scan {
        if self.arena.children(subtree).is_empty() {
            return Scan::Done(false);
        }
        let mut reduced = false;
        loop {
            let mut reduced_child = false;
            let mut i = 0;
            while i < self.arena.children(subtree).len() {
                if self.tester.exhausted() {
                    return Scan::Done(reduced);
                }
                let child = self.arena.children(subtree)[i];
                let size = self.arena.count(child);
                let reductions: Vec<Id> = self
                    .symbol_reductions(child, depth)
                    .into_iter()
                    .filter(|&r| self.arena.count(r) < size)
                    .collect();
                let arena = &mut self.arena;
                let found = self
                    .tester
                    .first_interesting_lazy(reductions.len(), |k| {
                        arena.export_with(root, subtree, i, reductions[k])
                    })
                    .map(|(k, _)| k);
                if let Some(k) = found {
                    self.arena.set_child(subtree, i, reductions[k]);
                    reduced = true;
                    reduced_child = true;
                }
                i += 1;
            }
            if !reduced_child {
                break;
            }
        }
        Scan::Descend(reduced)
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
