//! Reducers that work on derivation trees.
//!
//! Every reducer takes a [`Grammar`], a derivation [`Tree`] of an
//! interesting input and an [`Oracle`] over bytes; it tests the bytes of
//! candidate trees (`tree.to_bytes()`) and returns the smallest interesting
//! tree it found. Candidates are derivations of the grammar *by
//! construction*: a node is only ever replaced by a tree of the same
//! nonterminal (a descendant, the symbol's minimal derivation, or another
//! expansion of the symbol filled with existing subtrees), so the target's
//! parser sees only syntactically valid inputs. Each candidate is
//! nevertheless checked with [`check_tree`] before it is tested; one that
//! fails the check is counted in [`TreeStats::invalid_candidates`] and not
//! tested (none are expected).
//!
//! * [`hdd()`] — hierarchical delta debugging (Misherghi & Su 2006): ddmin
//!   over the nodes of each level, top-down;
//! * [`perses()`] — Perses (Sun et al. 2018), largest node first, compatible
//!   descendants;
//! * [`grammar_reducer()`] — the Fuzzing Book's `GrammarReducer`, plain or
//!   depth-oriented, transcribed so its test counts reproduce;
//! * [`gtr()`] — generalised tree reduction (Herfert et al. 2017);
//! * [`production()`] — reduction by production (the Fuzzing Book's
//!   exercise 2): expansions that do not occur in the input;
//! * [`TreeStrategy`] — the choice by name, including the default pipeline
//!   [`TreeStrategy::Grammar`].
//!
//! Conventions shared by all reducers:
//!
//! * the input tree is assumed interesting and is never tested;
//! * the answers are remembered by candidate bytes, so no string is tested
//!   twice within one reduction even without a [`crate::reduce::oracle::Cached`]
//!   wrapper;
//! * a replacement is only accepted when it makes the tree strictly smaller
//!   in (bytes, nodes) order (the Fuzzing Book's reducer: in nodes, as the
//!   book has it), so every reducer and the pipeline terminate;
//! * all of them return early once [`Oracle::exhausted`] is true;
//! * nothing recurses on the tree's depth (an input nested 100,000 deep is
//!   a tree several times as deep): walks use explicit stacks, and so do
//!   [`Tree`]'s own `Clone`, `PartialEq` and `Drop`. Recursion is left only
//!   where the grammar bounds it (an expansion's length in `embeddings`,
//!   a chain of cheapest expansions in `production`).
//!
//! About 1,060 lines, nearly all of them the tests every tree reducer shares
//! (the same trees, predicates and invariants), which live here once.

mod grammar_reducer;
mod gtr;
mod hdd;
mod nest;
mod perses;
mod production;
#[cfg(test)]
pub(crate) mod testing;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

use super::{Grammar, Term, Tree};
use crate::reduce::oracle::Oracle;

pub use grammar_reducer::{grammar_reducer, GrammarReducerMode};
pub use gtr::gtr;
pub use hdd::hdd;
pub use perses::perses;
pub use production::production;

// ------------------------------------------------------------------ results

/// What a tree reducer did, beside its result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeStats {
    /// Candidates the oracle was asked about (answers remembered from
    /// earlier in the same reduction are not counted). With a
    /// [`crate::reduce::oracle::Cached`] oracle that has not seen these strings
    /// before, this equals its `executed` count.
    pub tests: u64,
    /// Candidate trees that were not derivations of the grammar (never
    /// tested). Zero unless a reducer has a bug.
    pub invalid_candidates: u64,
}

/// The result of one tree reducer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reduction {
    /// The smallest interesting tree found (the input tree if none).
    pub tree: Tree,
    pub stats: TreeStats,
}

/// The result of [`TreeStrategy::run`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reduced {
    /// The reduced derivation tree; `None` when the final byte-level polish
    /// of [`TreeStrategy::Grammar`] changed the bytes, so that they need not
    /// be derivable any more.
    pub tree: Option<Tree>,
    /// The reduced input.
    pub bytes: Vec<u8>,
    /// Candidate trees that were not derivations (expected 0).
    pub invalid_candidates: u64,
    /// Candidates the tree reducers asked the oracle about.
    pub tree_tests: u64,
    /// Candidates the final token/byte ddmin polish of
    /// [`TreeStrategy::Grammar`] asked the oracle about (grammar-unaware, so
    /// they may be outside the grammar); 0 for the other strategies.
    pub polish_tests: u64,
}

/// Runs one reducer (`run`) on a fresh [`Tester`] and collects its result.
fn reduce_with<O>(
    grammar: &Grammar,
    tree: &Tree,
    oracle: &mut O,
    run: fn(&mut Tester<'_, O>, Tree) -> Tree,
) -> Reduction
where
    O: Oracle<u8> + ?Sized,
{
    let mut tester = Tester::new(grammar, tree, oracle);
    let tree = run(&mut tester, tree.clone());
    Reduction {
        tree,
        stats: tester.stats,
    }
}

/// Repeats `pass` (which says whether it changed anything) to a fixpoint.
fn to_fixpoint<O: Oracle<u8> + ?Sized>(
    tester: &mut Tester<'_, O>,
    tree: Tree,
    pass: fn(&mut Tester<'_, O>, Tree) -> (Tree, bool),
) -> Tree {
    let mut current = tree;
    loop {
        let (next, changed) = pass(tester, current);
        current = next;
        if !changed || tester.exhausted() {
            return current;
        }
    }
}

// ----------------------------------------------------------------- strategy

/// A tree reduction algorithm selectable by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TreeStrategy {
    /// [`hdd()`].
    Hdd,
    /// [`perses()`].
    Perses,
    /// [`grammar_reducer()`], plain `reduce_tree`.
    GrammarReducer,
    /// [`grammar_reducer()`], depth-oriented `reduce_tree`.
    GrammarReducerDepth,
    /// [`gtr()`].
    Gtr,
    /// [`production()`].
    Production,
    /// The default pipeline: a deep nest first cut by the byte pipeline's
    /// nest passes (with a grammar check) and frozen past its outer levels
    /// (`nest`), then [`grammar_reducer()`] (depth-oriented), then
    /// [`perses()`] → [`gtr()`] → [`production()`] → [`hdd()`] repeated
    /// while they shrink the tree, then ddmin over the leaves (tokens) and
    /// over the bytes so that the result is also 1-minimal (after a deep
    /// nest, the default byte pipeline instead).
    #[default]
    Grammar,
}

impl TreeStrategy {
    /// Every strategy, in the order a CLI would list them.
    pub const ALL: [TreeStrategy; 7] = [
        TreeStrategy::Grammar,
        TreeStrategy::Hdd,
        TreeStrategy::Perses,
        TreeStrategy::GrammarReducer,
        TreeStrategy::GrammarReducerDepth,
        TreeStrategy::Gtr,
        TreeStrategy::Production,
    ];

    /// The name accepted by [`FromStr`] and printed by [`fmt::Display`].
    pub fn name(&self) -> &'static str {
        match self {
            TreeStrategy::Hdd => "hdd",
            TreeStrategy::Perses => "perses",
            TreeStrategy::GrammarReducer => "grammar-reducer",
            TreeStrategy::GrammarReducerDepth => "grammar-reducer-depth",
            TreeStrategy::Gtr => "gtr",
            TreeStrategy::Production => "production",
            TreeStrategy::Grammar => "grammar",
        }
    }

    /// Reduces `tree` (a derivation of an interesting input; not tested).
    pub fn run<O>(&self, grammar: &Grammar, tree: &Tree, oracle: &mut O) -> Reduced
    where
        O: Oracle<u8> + ?Sized,
    {
        oracle.phase(self.name());
        let mut tester = Tester::new(grammar, tree, oracle);
        let mut nested = false;
        let result = match self {
            TreeStrategy::Hdd => hdd::run(&mut tester, tree.clone()),
            TreeStrategy::Perses => perses::run(&mut tester, tree.clone()),
            TreeStrategy::GrammarReducer => {
                grammar_reducer::run(&mut tester, tree, GrammarReducerMode::Plain)
            }
            TreeStrategy::GrammarReducerDepth => {
                grammar_reducer::run(&mut tester, tree, GrammarReducerMode::Depth)
            }
            TreeStrategy::Gtr => gtr::run(&mut tester, tree.clone()),
            TreeStrategy::Production => production::run(&mut tester, tree.clone()),
            TreeStrategy::Grammar => {
                // A deep nest: cut by the byte passes, then frozen past its
                // outer levels (`nest`), so the tree passes never pay per level.
                let cut = nest::cut_nest(&mut tester, tree);
                let (start, subtree) = nest::freeze(cut.unwrap_or_else(|| tree.clone()));
                nested = subtree.is_some();
                let reduced = pipeline(&mut tester, &start);
                nest::thaw(reduced, subtree)
            }
        };
        let tree_tests = tester.stats.tests;
        let tree_bytes = result.to_bytes();
        let bytes = if *self == TreeStrategy::Grammar {
            polish(&mut tester, &result, nested)
        } else {
            tree_bytes.clone()
        };
        let polish_tests = tester.stats.tests - tree_tests;
        Reduced {
            tree: (bytes == tree_bytes).then_some(result),
            bytes,
            invalid_candidates: tester.stats.invalid_candidates,
            tree_tests,
            polish_tests,
        }
    }
}

/// The tree part of [`TreeStrategy::Grammar`].
fn pipeline<O: Oracle<u8> + ?Sized>(tester: &mut Tester<'_, O>, tree: &Tree) -> Tree {
    // The Fuzzing Book's depth-oriented GrammarReducer makes the big jumps
    // (largest subtrees first, alternative expansions built from existing
    // subtrees) and finds results the others miss (on a 4 KB expression,
    // `(7)` where Perses and GTR stop at `(3) - 7`); the others then work
    // on a much smaller tree.
    let mut current = grammar_reducer::run(tester, tree, GrammarReducerMode::Depth);
    loop {
        let before = measure(&current);
        current = perses::run(tester, current);
        current = gtr::run(tester, current);
        current = production::run(tester, current);
        current = hdd::run(tester, current);
        if measure(&current) >= before || tester.exhausted() {
            return current;
        }
    }
}

/// ddmin over the tokens (leaves) of `tree`, then over the bytes. After a
/// deep nest (`nested`), the default byte pipeline instead: what the nest
/// needs past its count and shape is the byte passes' work (a token a
/// level would be ddmin over thousands of tokens first, then over as many
/// bytes), and the result is then a fixpoint of that pipeline too.
fn polish<O: Oracle<u8> + ?Sized>(
    tester: &mut Tester<'_, O>,
    tree: &Tree,
    nested: bool,
) -> Vec<u8> {
    if nested {
        return crate::reduce::reduce(&tree.to_bytes(), &mut BytesOracle(tester));
    }
    let mut tokens = Vec::new();
    collect_leaves(tree, &mut tokens);
    tokens.retain(|t| !t.is_empty());
    let tokens = crate::reduce::ddmin(&tokens, &mut TokenOracle(&mut *tester));
    crate::reduce::ddmin(&tokens.concat(), &mut BytesOracle(tester))
}

fn collect_leaves(tree: &Tree, out: &mut Vec<Vec<u8>>) {
    out.extend(tree.leaves().map(<[u8]>::to_vec));
}

/// The polish's view of the oracle over tokens (each a byte string).
struct TokenOracle<'t, 'a, O: ?Sized>(&'t mut Tester<'a, O>);

impl<O: Oracle<u8> + ?Sized> Oracle<Vec<u8>> for TokenOracle<'_, '_, O> {
    fn test(&mut self, candidate: &[Vec<u8>]) -> bool {
        self.0.test_bytes(&candidate.concat())
    }

    fn exhausted(&self) -> bool {
        self.0.exhausted()
    }
}

/// The polish's view of the oracle over bytes.
struct BytesOracle<'t, 'a, O: ?Sized>(&'t mut Tester<'a, O>);

impl<O: Oracle<u8> + ?Sized> Oracle<u8> for BytesOracle<'_, '_, O> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        self.0.test_bytes(candidate)
    }

    /// Straight to the oracle, without the memo: the byte passes ask for
    /// batches of many thousands of long candidates (every window of a
    /// nest), which the caller's cache answers by fingerprint; keyed by
    /// their bytes here, they cost regex-deep's polish a third more time.
    fn first_interesting(&mut self, candidates: &[Vec<u8>]) -> Option<usize> {
        if self.0.oracle.exhausted() {
            return None;
        }
        let before = self.0.oracle.executed();
        let found = self.0.oracle.first_interesting(candidates);
        // What the oracle ran, where it says (not what its cache answered).
        self.0.stats.tests += match (before, self.0.oracle.executed()) {
            (Some(b), Some(a)) => a - b,
            _ => found.map_or(candidates.len(), |k| k + 1) as u64,
        };
        found
    }

    fn exhausted(&self) -> bool {
        self.0.exhausted()
    }

    fn executed(&self) -> Option<u64> {
        self.0.oracle.executed()
    }

    fn phase(&mut self, name: &'static str) {
        self.0.oracle.phase(name);
    }

    fn spans(&mut self, candidate: &[u8]) -> Option<Vec<crate::reduce::oracle::Span>> {
        self.0.oracle.spans(candidate)
    }

    fn render(&mut self, candidate: &[u8]) -> Option<String> {
        self.0.oracle.render(candidate)
    }

    fn failed_otherwise(&mut self, candidate: &[u8]) -> Option<bool> {
        self.0.oracle.failed_otherwise(candidate)
    }
}

impl fmt::Display for TreeStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that [`TreeStrategy::from_str`] does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTreeStrategy(pub String);

impl fmt::Display for UnknownTreeStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown tree strategy `{}` (expected one of:", self.0)?;
        for strategy in TreeStrategy::ALL {
            write!(f, " {strategy}")?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownTreeStrategy {}

impl FromStr for TreeStrategy {
    type Err = UnknownTreeStrategy;

    /// Accepts [`TreeStrategy::name`], case-insensitive.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        TreeStrategy::ALL
            .into_iter()
            .find(|strategy| strategy.name() == lower)
            .ok_or_else(|| UnknownTreeStrategy(s.to_string()))
    }
}

// --------------------------------------------------------------- validation

/// Why a tree is not a derivation of a grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidTree(pub String);

impl fmt::Display for InvalidTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidTree {}

/// Checks that `tree` is a derivation of `grammar`: every node's
/// `expansion` exists and its children match that expansion term by term (a
/// nonterminal by a node of that symbol, a literal by a leaf with exactly
/// its bytes, a class by a one-byte leaf the class matches).
///
/// The root may be any nonterminal (not necessarily the start symbol).
pub fn check_tree(grammar: &Grammar, tree: &Tree) -> Result<(), InvalidTree> {
    match tree {
        Tree::Leaf(_) => Err(InvalidTree("the root is a leaf".into())),
        Tree::Node { .. } => check_node(grammar, tree),
    }
}

/// Depth-first with an explicit stack, in the order a recursive check goes
/// (child `k`'s term, then child `k`'s subtree, then child `k + 1`'s term),
/// so the error reported is the first one in that order.
fn check_node(grammar: &Grammar, tree: &Tree) -> Result<(), InvalidTree> {
    /// A node whose expansion was checked, its terms, and the next child.
    struct Frame<'t> {
        node: &'t Tree,
        terms: &'t [Term],
        next: usize,
    }
    let terms = expansion_of(grammar, tree)?;
    let mut stack = vec![Frame {
        node: tree,
        terms,
        next: 0,
    }];
    while let Some(frame) = stack.last_mut() {
        let k = frame.next;
        let Some(term) = frame.terms.get(k) else {
            stack.pop();
            continue;
        };
        frame.next += 1;
        let node = frame.node;
        let child = &node.children()[k];
        if !term_matches(term, child) {
            let Tree::Node {
                symbol, expansion, ..
            } = node
            else {
                unreachable!("frames hold nodes")
            };
            return Err(InvalidTree(format!(
                "child {k} of {symbol} #{expansion} does not match {term:?}"
            )));
        }
        if let Tree::Node { .. } = child {
            let terms = expansion_of(grammar, child)?;
            stack.push(Frame {
                node: child,
                terms,
                next: 0,
            });
        }
    }
    Ok(())
}

/// The terms of `node`'s expansion, checked to be as many as its children.
fn expansion_of<'g>(grammar: &'g Grammar, node: &Tree) -> Result<&'g [Term], InvalidTree> {
    let Tree::Node {
        symbol,
        expansion,
        children,
    } = node
    else {
        return Ok(&[]);
    };
    let Some(rules) = grammar.rules.get(symbol) else {
        return Err(InvalidTree(format!("{symbol} is not a nonterminal")));
    };
    if *expansion == nest::FROZEN {
        // A frozen nest: a derivation when frozen, opaque since.
        return match &children[..] {
            [Tree::Leaf(_)] => Ok(&[]),
            _ => Err(InvalidTree(format!("{symbol} frozen without its bytes"))),
        };
    }
    let Some(terms) = rules.get(*expansion) else {
        return Err(InvalidTree(format!(
            "{symbol} has no expansion #{expansion}"
        )));
    };
    if terms.len() != children.len() {
        return Err(InvalidTree(format!(
            "{symbol} #{expansion} has {} terms, the node {} children",
            terms.len(),
            children.len()
        )));
    }
    Ok(terms)
}

/// Can `tree` stand for `term` in an expansion (checking its root only)?
pub(crate) fn term_matches(term: &Term, tree: &Tree) -> bool {
    match (term, tree) {
        (Term::Nonterminal(name), Tree::Node { symbol, .. }) => name == symbol,
        (Term::Literal(bytes), Tree::Leaf(leaf)) => bytes == leaf,
        (Term::Class { .. }, Tree::Leaf(leaf)) => leaf.len() == 1 && term.class_matches(leaf[0]),
        _ => false,
    }
}

// ------------------------------------------------------- minimal derivations

/// For each nonterminal, a derivation with the fewest bytes (then the
/// fewest nodes, then the first expansion in grammar order). Symbols that
/// derive no finite string have none.
#[derive(Debug, Clone)]
pub struct MinDerivations {
    trees: BTreeMap<String, Tree>,
}

impl MinDerivations {
    pub fn new(grammar: &Grammar) -> Self {
        // Bellman-Ford style relaxation on (bytes, nodes): every node adds
        // one to the size, so there are no zero-cost cycles and the chosen
        // expansions form a finite derivation.
        let mut cost: HashMap<&str, (u64, u64)> = HashMap::new();
        loop {
            let mut changed = false;
            for (symbol, rules) in &grammar.rules {
                for terms in rules {
                    let Some(c) = expansion_cost(&cost, terms) else {
                        continue;
                    };
                    let better = cost.get(symbol.as_str()).is_none_or(|&old| c < old);
                    if better {
                        cost.insert(symbol, c);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let mut best: HashMap<&str, usize> = HashMap::new();
        for (symbol, rules) in &grammar.rules {
            let Some(&target) = cost.get(symbol.as_str()) else {
                continue;
            };
            let k = rules
                .iter()
                .position(|terms| expansion_cost(&cost, terms) == Some(target))
                .expect("the minimum is attained by some expansion");
            best.insert(symbol, k);
        }
        let mut trees = BTreeMap::new();
        for symbol in best.keys() {
            let tree = build_min(grammar, &best, symbol);
            trees.insert(symbol.to_string(), tree);
        }
        MinDerivations { trees }
    }

    /// The minimal derivation of `symbol`, if it derives anything.
    pub fn get(&self, symbol: &str) -> Option<&Tree> {
        self.trees.get(symbol)
    }
}

fn expansion_cost(cost: &HashMap<&str, (u64, u64)>, terms: &[Term]) -> Option<(u64, u64)> {
    let (mut bytes, mut nodes) = (0u64, 1u64);
    for term in terms {
        let (b, n) = match term {
            Term::Nonterminal(name) => *cost.get(name.as_str())?,
            Term::Literal(lit) => (lit.len() as u64, 1),
            Term::Class { .. } => {
                class_byte(term)?;
                (1, 1)
            }
        };
        bytes = bytes.saturating_add(b);
        nodes = nodes.saturating_add(n);
    }
    Some((bytes, nodes))
}

/// The byte a generated class leaf gets: the first matching one among
/// digits, lowercase, uppercase, printable ASCII, then any byte.
pub(crate) fn class_byte(term: &Term) -> Option<u8> {
    (b'0'..=b'9')
        .chain(b'a'..=b'z')
        .chain(b'A'..=b'Z')
        .chain(0x20..=0x7e)
        .chain(0..=255)
        .find(|&b| term.class_matches(b))
}

/// The minimal derivation of `symbol` following the `best` expansions,
/// built post-order with an explicit stack (its depth is bounded by the
/// number of nonterminals, not by any input, but grammars can be large).
fn build_min<'g>(grammar: &'g Grammar, best: &HashMap<&str, usize>, symbol: &'g str) -> Tree {
    struct Frame<'g> {
        symbol: &'g str,
        expansion: usize,
        terms: std::slice::Iter<'g, Term>,
        children: Vec<Tree>,
    }
    let frame = |symbol: &'g str| -> Frame<'g> {
        let expansion = best[symbol];
        let terms = &grammar.rules[symbol][expansion];
        Frame {
            symbol,
            expansion,
            terms: terms.iter(),
            children: Vec::with_capacity(terms.len()),
        }
    };
    let mut stack = vec![frame(symbol)];
    loop {
        let top = stack.last_mut().expect("non-empty until the root is built");
        match top.terms.next() {
            Some(Term::Nonterminal(name)) => {
                let next = frame(name);
                stack.push(next);
            }
            Some(Term::Literal(lit)) => top.children.push(Tree::Leaf(lit.clone())),
            Some(term @ Term::Class { .. }) => top
                .children
                .push(Tree::Leaf(vec![class_byte(term).expect("matchable class")])),
            None => {
                let done = stack.pop().expect("just seen");
                let node = Tree::Node {
                    symbol: done.symbol.to_string(),
                    expansion: done.expansion,
                    children: done.children,
                };
                match stack.last_mut() {
                    Some(parent) => parent.children.push(node),
                    None => return node,
                }
            }
        }
    }
}

// ------------------------------------------------------------- tree helpers

/// The order every reducer shrinks in: bytes first, then nodes.
pub(crate) fn measure(tree: &Tree) -> (usize, usize) {
    (byte_len(tree), tree.size())
}

pub(crate) fn byte_len(tree: &Tree) -> usize {
    tree.leaves().map(<[u8]>::len).sum()
}

pub(crate) fn node_at<'t>(tree: &'t Tree, path: &[usize]) -> &'t Tree {
    path.iter().fold(tree, |t, &i| match t {
        Tree::Node { children, .. } => &children[i],
        Tree::Leaf(_) => panic!("path goes through a leaf"),
    })
}

pub(crate) fn node_at_mut<'t>(tree: &'t mut Tree, path: &[usize]) -> &'t mut Tree {
    path.iter().fold(tree, |t, &i| match t {
        Tree::Node { children, .. } => &mut children[i],
        Tree::Leaf(_) => panic!("path goes through a leaf"),
    })
}

/// `tree` with the node at `path` replaced by `node`. Everything beside the
/// path is copied, the node at `path` is not (copying it only to drop it
/// was most of the cost of a candidate whose replaced node is large). Built
/// bottom-up along the path, without recursion.
pub(crate) fn replaced(tree: &Tree, path: &[usize], node: Tree) -> Tree {
    let mut spine: Vec<&Tree> = Vec::with_capacity(path.len());
    let mut at = tree;
    for &i in path {
        spine.push(at);
        at = &at.children()[i];
    }
    let mut built = node;
    for (&ancestor, &i) in spine.iter().zip(path).rev() {
        let Tree::Node {
            symbol,
            expansion,
            children,
        } = ancestor
        else {
            unreachable!("a path goes through nodes")
        };
        let mut copy = Vec::with_capacity(children.len());
        copy.extend(children[..i].iter().cloned());
        copy.push(built);
        copy.extend(children[i + 1..].iter().cloned());
        built = Tree::Node {
            symbol: symbol.clone(),
            expansion: *expansion,
            children: copy,
        };
    }
    built
}

pub(crate) fn children(tree: &Tree) -> &[Tree] {
    tree.children()
}

/// Proper descendants of `tree` with nonterminal `symbol`, in pre-order.
pub(crate) fn descendants_with_symbol<'t>(tree: &'t Tree, symbol: &str) -> Vec<&'t Tree> {
    tree.preorder()
        .skip(1)
        .filter(|t| t.symbol() == Some(symbol))
        .collect()
}

// ------------------------------------------------------------------- tester

/// Candidate trees built per batch by [`Tester::first_interesting_lazy`].
const CHUNK: usize = 16;

/// A tree to put in place of a node: one of the tree's own subtrees, or a
/// new one.
pub(crate) enum Replacement<'t> {
    Borrowed(&'t Tree),
    Owned(Tree),
}

impl Replacement<'_> {
    fn to_tree(&self) -> Tree {
        match self {
            Replacement::Borrowed(t) => (*t).clone(),
            Replacement::Owned(t) => t.clone(),
        }
    }
}

/// The nullable part of Perses' and GTR's candidates: the minimal
/// derivation of `node`'s symbol if it is the empty string and smaller than
/// `node`.
pub(crate) fn empty_derivation<'m>(mins: &'m MinDerivations, node: &Tree) -> Option<&'m Tree> {
    let min = mins.get(node.symbol()?)?;
    (byte_len(min) == 0 && measure(min) < measure(node)).then_some(min)
}

/// `node` re-expanded with each other expansion of its symbol whose terms
/// are a subsequence of its own expansion's, keeping the matching children
/// (`<term> + <expr>` → `<term>`: deleting the tail of a list written as a
/// recursive rule). Strictly smaller than `node` by construction. Expansions
/// in grammar order, embeddings leftmost first, at most
/// [`MAX_EMBEDDINGS`] per expansion.
pub(crate) fn pruned_expansions(grammar: &Grammar, node: &Tree) -> Vec<Tree> {
    let Tree::Node {
        symbol,
        expansion,
        children,
    } = node
    else {
        return Vec::new();
    };
    let Some(rules) = grammar.rules.get(symbol) else {
        return Vec::new();
    };
    let Some(terms) = rules.get(*expansion) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, other) in rules.iter().enumerate() {
        if k == *expansion || other.len() >= terms.len() {
            continue;
        }
        for embedding in embeddings(other, terms) {
            out.push(Tree::Node {
                symbol: symbol.clone(),
                expansion: k,
                children: embedding.iter().map(|&j| children[j].clone()).collect(),
            });
        }
    }
    out
}

/// At most this many ways of embedding one expansion into another.
const MAX_EMBEDDINGS: usize = 16;

/// The ways `small` is a subsequence of `big` (indices into `big`), at most
/// [`MAX_EMBEDDINGS`], leftmost first.
pub(crate) fn embeddings(small: &[Term], big: &[Term]) -> Vec<Vec<usize>> {
    fn go(
        small: &[Term],
        big: &[Term],
        from: usize,
        acc: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
    ) {
        if out.len() >= MAX_EMBEDDINGS {
            return;
        }
        let Some((first, rest)) = small.split_first() else {
            out.push(acc.clone());
            return;
        };
        for j in from..big.len() {
            if &big[j] == first {
                acc.push(j);
                go(rest, big, j + 1, acc, out);
                acc.pop();
            }
        }
    }
    let mut out = Vec::new();
    go(small, big, 0, &mut Vec::new(), &mut out);
    out
}

/// The oracle as the tree reducers see it: validity check, memo by bytes,
/// counters.
pub(crate) struct Tester<'a, O: ?Sized> {
    pub(crate) grammar: &'a Grammar,
    pub(crate) mins: MinDerivations,
    root_symbol: Option<String>,
    oracle: &'a mut O,
    memo: HashMap<Vec<u8>, bool>,
    pub(crate) stats: TreeStats,
}

impl<'a, O: Oracle<u8> + ?Sized> Tester<'a, O> {
    /// `original` is known to be interesting: its bytes are never tested.
    pub(crate) fn new(grammar: &'a Grammar, original: &Tree, oracle: &'a mut O) -> Self {
        let mut memo = HashMap::new();
        memo.insert(original.to_bytes(), true);
        Tester {
            grammar,
            mins: MinDerivations::new(grammar),
            root_symbol: original.symbol().map(str::to_string),
            oracle,
            memo,
            stats: TreeStats::default(),
        }
    }

    pub(crate) fn exhausted(&self) -> bool {
        self.oracle.exhausted()
    }

    fn valid(&mut self, tree: &Tree) -> bool {
        let ok = tree.symbol().map(str::to_string) == self.root_symbol
            && check_tree(self.grammar, tree).is_ok();
        if !ok {
            self.stats.invalid_candidates += 1;
        }
        ok
    }

    /// Is the candidate tree interesting? (Invalid trees are not.)
    pub(crate) fn test(&mut self, tree: &Tree) -> bool {
        self.first_interesting(std::slice::from_ref(tree)) == Some(0)
    }

    /// Memoised test of raw bytes, for the grammar-unaware polish (no
    /// validity check).
    pub(crate) fn test_bytes(&mut self, bytes: &[u8]) -> bool {
        if let Some(&verdict) = self.memo.get(bytes) {
            return verdict;
        }
        if self.oracle.exhausted() {
            return false;
        }
        let verdict = self.oracle.test(bytes);
        self.stats.tests += 1;
        if !self.oracle.exhausted() {
            self.memo.insert(bytes.to_vec(), verdict);
        }
        verdict
    }

    /// The first interesting of `count` candidate trees, `build(i)` making
    /// candidate `i`, as if each were tested in order. Candidates are built
    /// lazily, [`CHUNK`] at a time, and each chunk goes to
    /// [`Tester::first_interesting`] as one batch.
    pub(crate) fn first_interesting_lazy(
        &mut self,
        count: usize,
        mut build: impl FnMut(usize) -> Tree,
    ) -> Option<(usize, Tree)> {
        let mut next = 0;
        while next < count {
            if self.oracle.exhausted() {
                return None;
            }
            let end = count.min(next + CHUNK);
            let mut chunk: Vec<Tree> = (next..end).map(&mut build).collect();
            if let Some(k) = self.first_interesting(&chunk) {
                return Some((next + k, chunk.swap_remove(k)));
            }
            next = end;
        }
        None
    }

    /// The first interesting tree among `current` with the node at `path`
    /// replaced by each of `replacements` in turn.
    pub(crate) fn first_replacement(
        &mut self,
        current: &Tree,
        path: &[usize],
        replacements: &[Replacement<'_>],
    ) -> Option<Tree> {
        self.first_interesting_lazy(replacements.len(), |i| {
            replaced(current, path, replacements[i].to_tree())
        })
        .map(|(_, tree)| tree)
    }

    /// Index of the first interesting candidate, as if each were tested in
    /// order; remembered answers are reused, the rest goes to the oracle as
    /// one batch.
    pub(crate) fn first_interesting(&mut self, candidates: &[Tree]) -> Option<usize> {
        // The valid candidates' bytes, up to the first one known interesting.
        let mut bytes = Vec::new();
        let mut index = Vec::new();
        for (i, candidate) in candidates.iter().enumerate() {
            if !self.valid(candidate) {
                continue;
            }
            let b = candidate.to_bytes();
            let known = self.memo.get(&b) == Some(&true);
            bytes.push(b);
            index.push(i);
            if known {
                break;
            }
        }
        self.first_interesting_bytes(&bytes).map(|k| index[k])
    }

    /// [`Tester::test_bytes`] for the first interesting of `candidates`,
    /// the unknown ones sent as one batch (the oracle may run them on
    /// several drivers).
    pub(crate) fn first_interesting_bytes(&mut self, candidates: &[Vec<u8>]) -> Option<usize> {
        let mut batch: Vec<Vec<u8>> = Vec::new();
        let mut batch_index: Vec<usize> = Vec::new();
        let mut pending: HashSet<&[u8]> = HashSet::new();
        let mut known_true = None;
        for (i, bytes) in candidates.iter().enumerate() {
            match self.memo.get(bytes) {
                Some(true) => {
                    known_true = Some(i);
                    break;
                }
                Some(false) => {}
                None => {
                    if pending.insert(bytes) {
                        batch.push(bytes.clone());
                        batch_index.push(i);
                    }
                }
            }
        }
        if batch.is_empty() {
            return known_true;
        }
        if self.oracle.exhausted() {
            return None;
        }
        let found = self.oracle.first_interesting(&batch);
        let evaluated = found.map_or(batch.len(), |k| k + 1);
        self.stats.tests += evaluated as u64;
        if !self.oracle.exhausted() {
            for (k, bytes) in batch.into_iter().enumerate().take(evaluated) {
                self.memo.insert(bytes, found == Some(k));
            }
        }
        found.map(|k| batch_index[k]).or(known_true)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{expr_grammar, parse_expr};
    use super::*;
    use crate::reduce::oracle::Cached;

    #[test]
    fn names_round_trip() {
        for strategy in TreeStrategy::ALL {
            assert_eq!(strategy.name().parse::<TreeStrategy>(), Ok(strategy));
            assert_eq!(strategy.to_string(), strategy.name());
        }
        assert_eq!("PERSES".parse(), Ok(TreeStrategy::Perses));
        assert_eq!(TreeStrategy::default(), TreeStrategy::Grammar);
        let err = "creduce".parse::<TreeStrategy>().unwrap_err();
        assert!(err.to_string().contains("grammar-reducer-depth"), "{err}");
    }

    #[test]
    fn parsed_trees_are_derivations() {
        let g = expr_grammar();
        let t = parse_expr("1 + ((2 * 3 / 4)) - -5.25").unwrap();
        assert_eq!(check_tree(&g, &t), Ok(()));
        assert_eq!(t.to_bytes(), b"1 + ((2 * 3 / 4)) - -5.25");
        let Tree::Node { children, .. } = &t else {
            unreachable!()
        };
        let bad = Tree::Node {
            symbol: "<start>".into(),
            expansion: 0,
            children: vec![Tree::Leaf(b"1".to_vec())],
        };
        assert!(check_tree(&g, &bad).is_err());
        let wrong_expansion = Tree::Node {
            symbol: "<start>".into(),
            expansion: 1,
            children: children.clone(),
        };
        assert!(check_tree(&g, &wrong_expansion).is_err());
    }

    #[test]
    fn minimal_derivations_of_the_expression_grammar() {
        let g = expr_grammar();
        let mins = MinDerivations::new(&g);
        for symbol in ["<start>", "<expr>", "<term>", "<factor>", "<integer>"] {
            let t = mins.get(symbol).unwrap();
            assert_eq!(t.to_bytes(), b"0", "{symbol}");
            assert_eq!(check_tree(&g, t), Ok(()));
        }
    }

    #[test]
    fn minimal_derivations_handle_empty_and_unproductive_symbols() {
        let nt = |s: &str| Term::Nonterminal(s.into());
        let lit = |s: &str| Term::Literal(s.as_bytes().to_vec());
        let g = Grammar {
            start: "<s>".into(),
            rules: BTreeMap::from([
                (
                    "<s>".into(),
                    vec![vec![nt("<a>"), lit("x")], vec![nt("<loop>")]],
                ),
                ("<a>".into(), vec![vec![nt("<b>")], vec![]]),
                ("<b>".into(), vec![vec![nt("<a>")]]),
                ("<loop>".into(), vec![vec![nt("<loop>"), lit("y")]]),
                (
                    "<c>".into(),
                    vec![vec![Term::Class {
                        ranges: vec![(b'0', b'9'), (b'a', b'z')],
                        negated: true,
                    }]],
                ),
            ]),
        };
        let mins = MinDerivations::new(&g);
        assert_eq!(mins.get("<s>").unwrap().to_bytes(), b"x");
        assert_eq!(mins.get("<a>").unwrap().size(), 1);
        assert_eq!(mins.get("<b>").unwrap().to_bytes(), b"");
        assert!(mins.get("<loop>").is_none());
        assert_eq!(mins.get("<c>").unwrap().to_bytes(), b"A");
        for t in ["<s>", "<a>", "<b>", "<c>"] {
            assert_eq!(check_tree(&g, mins.get(t).unwrap()), Ok(()));
        }
    }

    #[test]
    fn every_strategy_keeps_the_parens() {
        let g = expr_grammar();
        let input = "1 + (2 * 3) - 4 / 5";
        let tree = parse_expr(input).unwrap();
        for strategy in TreeStrategy::ALL {
            let mut invalid = Vec::new();
            let mut oracle = Cached::new(|c: &[u8]| {
                let s = std::str::from_utf8(c).unwrap();
                if parse_expr(s).is_none() {
                    invalid.push(s.to_string());
                    return false;
                }
                s.contains('(')
            });
            let r = strategy.run(&g, &tree, &mut oracle);
            assert_eq!(r.invalid_candidates, 0, "{strategy}");
            let out = String::from_utf8(r.bytes.clone()).unwrap();
            assert!(out.contains('('), "{strategy}");
            // HDD only prunes to minimal derivations: `1 + (0) - 0`;
            // production fills `<expr> ::= <term>` with the first `<term>`,
            // `1`: `1 + (0)`.
            let expected = match strategy {
                TreeStrategy::Hdd => 11,
                TreeStrategy::Production => 7,
                _ => 3,
            };
            assert_eq!(out.len(), expected, "{strategy}: {out}");
            if strategy != TreeStrategy::Grammar {
                drop(oracle);
                assert!(invalid.is_empty(), "{strategy}: {invalid:?}");
            }
        }
    }

    #[test]
    fn grammar_pipeline_polishes_to_one_minimal_bytes() {
        let g = expr_grammar();
        let tree = parse_expr("1 + (2 * 3) - 4 / 5").unwrap();
        // Any bytes with a '(' before a ')' (parse errors allowed): the
        // tree reducers stop at `(0)`, the polish reaches `()`.
        let mut oracle = Cached::new(|c: &[u8]| {
            let open = c.iter().position(|&b| b == b'(');
            let close = c.iter().position(|&b| b == b')');
            matches!((open, close), (Some(o), Some(cl)) if o < cl)
        });
        let r = TreeStrategy::Grammar.run(&g, &tree, &mut oracle);
        assert_eq!(r.bytes, b"()");
        assert_eq!(r.tree, None);
        assert!(r.polish_tests > 0);
        assert_eq!(r.tree_tests + r.polish_tests, oracle.stats().executed);
    }

    /// Interesting iff it contains `(`; exhausted after `limit` calls.
    struct Exhaustible {
        calls: usize,
        limit: usize,
        late: usize,
    }

    impl Oracle<u8> for Exhaustible {
        fn test(&mut self, c: &[u8]) -> bool {
            if self.exhausted() {
                self.late += 1;
                return false;
            }
            self.calls += 1;
            c.contains(&b'(')
        }

        fn exhausted(&self) -> bool {
            self.calls >= self.limit
        }
    }

    #[test]
    fn exhausted_oracle_stops_every_strategy() {
        let g = expr_grammar();
        let tree = parse_expr("1 + (2 * 3) - (4 / 5) * (6 + 7)").unwrap();
        for strategy in TreeStrategy::ALL {
            let mut oracle = Exhaustible {
                calls: 0,
                limit: 3,
                late: 0,
            };
            let r = strategy.run(&g, &tree, &mut oracle);
            assert!(r.bytes.contains(&b'('), "{strategy}");
            // At most the rest of the batch in flight is asked late.
            assert!(oracle.late < 20, "{strategy}: {}", oracle.late);
        }
    }
}
