//! Inputs nested 100,000 deep, in the test thread's own stack (2 MiB in a
//! debug build; nothing here makes it larger).
//!
//! A 45 KB regex artifact of nested groups `((((…))))` parsed fine and then
//! killed the tool as soon as the tree reduction started ("thread 'main' has
//! overflowed its stack", exit 134, nothing written): the tree reducers, the
//! helpers they share and `Tree`'s derived `Drop`, `Clone` and `PartialEq`
//! recursed once per level of the input. Everything that walks a derivation
//! tree now uses explicit stacks (the byte pipeline's nesting pass did
//! already).
//!
//! Each test parses (or builds) an input nested [`DEPTH`] levels with a
//! shipped grammar and runs the reducers on it under a cheap predicate and a
//! small test budget: the point is that they run, and that what they return
//! is right, not how far they get.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::OnceLock;

use reduce_crash::grammar::reduce::{check_tree, TreeStrategy};
use reduce_crash::grammar::{builtin_grammar, Grammar, Parser, Tree};
use reduce_crash::reduce::oracle::Oracle;
use reduce_crash::reduce::reduce_nesting;
use reduce_crash::reduce::shrink::Shrinker;
use reduce_crash::reduce::Strategy;

/// Levels of nesting of every input here.
const DEPTH: usize = 100_000;

/// Tests each tree strategy may run. A reducer builds its candidates 16 at
/// a time, and each one copies, checks and prints a tree of half a million
/// nodes (about half a second in a debug build): one test per strategy
/// keeps the file around half a minute.
const TREE_BUDGET: u64 = 1;

/// A predicate that runs out after `max` tests.
struct Budget<F> {
    predicate: F,
    /// Candidates asked about, including those answered `false` once the
    /// budget ran out (reducers count what they ask, a batch at a time).
    asked: u64,
    /// Candidates the predicate ran on.
    tests: u64,
    max: u64,
    /// Every candidate tested.
    log: Vec<Vec<u8>>,
}

impl<F: FnMut(&[u8]) -> bool> Budget<F> {
    fn new(max: u64, predicate: F) -> Self {
        Budget {
            predicate,
            asked: 0,
            tests: 0,
            max,
            log: Vec::new(),
        }
    }
}

impl<F: FnMut(&[u8]) -> bool> Oracle<u8> for Budget<F> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        self.asked += 1;
        if self.exhausted() {
            return false;
        }
        self.tests += 1;
        self.log.push(candidate.to_vec());
        (self.predicate)(candidate)
    }

    fn exhausted(&self) -> bool {
        self.tests >= self.max
    }
}

/// `open` × `depth`, `middle`, `close` × `depth`.
fn nested(open: &str, middle: &str, close: &str, depth: usize) -> Vec<u8> {
    let mut out = open.repeat(depth).into_bytes();
    out.extend_from_slice(middle.as_bytes());
    out.extend_from_slice(close.repeat(depth).as_bytes());
    out
}

/// Nesting depth of `open` … `close`, if they balance.
fn depth_of(input: &[u8], open: u8, close: u8) -> Option<usize> {
    let (mut depth, mut max) = (0usize, 0usize);
    for &b in input {
        if b == open {
            depth += 1;
            max = max.max(depth);
        } else if b == close {
            depth = depth.checked_sub(1)?;
        }
    }
    (depth == 0).then_some(max)
}

fn paren_depth(input: &[u8]) -> Option<usize> {
    depth_of(input, b'(', b')')
}

fn bracket_depth(input: &[u8]) -> Option<usize> {
    depth_of(input, b'[', b']')
}

/// Parses `input` with the shipped grammar `name` (Earley) and checks the
/// tree: a derivation from the start symbol, printing back to the input, at
/// least `min_depth` levels deep.
fn parse(name: &str, input: &[u8], min_depth: usize) -> (Grammar, Tree) {
    let grammar = builtin_grammar(name).expect("shipped grammar");
    let tree = Parser::new(&grammar)
        .expect("usable grammar")
        .parse(input)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(tree.symbol(), Some(grammar.start.as_str()));
    assert_eq!(check_tree(&grammar, &tree), Ok(()));
    assert_eq!(tree.to_bytes(), input);
    let depth = tree.depth();
    assert!(depth >= min_depth, "{name}: a tree {depth} levels deep");
    (grammar, tree)
}

/// Runs `strategy` on `tree` under `predicate` (which holds of it) with
/// [`TREE_BUDGET`] tests, and checks the result: interesting, no larger, a
/// derivation printing to the result, no invalid candidate, the budget kept.
fn run_tree_strategy(
    strategy: TreeStrategy,
    grammar: &Grammar,
    tree: &Tree,
    predicate: fn(&[u8]) -> bool,
) {
    let input = tree.to_bytes();
    assert!(predicate(&input));
    let mut oracle = Budget::new(TREE_BUDGET, predicate);
    let reduced = strategy.run(grammar, tree, &mut oracle);
    assert!(predicate(&reduced.bytes), "{strategy}: not interesting");
    assert!(reduced.bytes.len() <= input.len(), "{strategy}: larger");
    assert_eq!(reduced.invalid_candidates, 0, "{strategy}");
    assert!(
        oracle.tests <= TREE_BUDGET,
        "{strategy}: {} tests",
        oracle.tests
    );
    assert_eq!(
        reduced.tree_tests + reduced.polish_tests,
        oracle.asked,
        "{strategy}"
    );
    assert!(
        oracle.log.iter().all(|c| c != &input),
        "{strategy}: tested the input"
    );
    match &reduced.tree {
        Some(t) => {
            assert_eq!(t.symbol(), Some(grammar.start.as_str()), "{strategy}");
            assert_eq!(check_tree(grammar, t), Ok(()), "{strategy}");
            assert_eq!(t.to_bytes(), reduced.bytes, "{strategy}");
            assert!(t.size() <= tree.size(), "{strategy}: more nodes");
        }
        None => assert_eq!(strategy, TreeStrategy::Grammar, "{strategy}: no tree"),
    }
}

/// `(((…1…)))`, [`DEPTH`] pairs, parsed once for all the tests below.
/// `<factor> ::= ( <expr> )`: three nonterminals and two leaves a level,
/// half a million nodes.
fn parenthesised() -> &'static (Grammar, Tree) {
    static PARSED: OnceLock<(Grammar, Tree)> = OnceLock::new();
    PARSED.get_or_init(|| parse("expr", &nested("(", "1", ")", DEPTH), 3 * DEPTH))
}

/// One test per tree strategy on [`parenthesised`] (they run in parallel),
/// and the list of the strategies tested.
macro_rules! parenthesised_tests {
    ($($name:ident: $strategy:expr,)*) => {
        $(
            #[test]
            fn $name() {
                let (grammar, tree) = parenthesised();
                run_tree_strategy($strategy, grammar, tree, |c| c.contains(&b'1'));
            }
        )*
        const PARENTHESISED: &[TreeStrategy] = &[$($strategy),*];
    };
}

parenthesised_tests! {
    parenthesised_grammar_pipeline: TreeStrategy::Grammar,
    parenthesised_hdd: TreeStrategy::Hdd,
    parenthesised_perses: TreeStrategy::Perses,
    parenthesised_grammar_reducer: TreeStrategy::GrammarReducer,
    parenthesised_grammar_reducer_depth: TreeStrategy::GrammarReducerDepth,
    parenthesised_gtr: TreeStrategy::Gtr,
    parenthesised_production: TreeStrategy::Production,
}

#[test]
fn every_strategy_has_a_parenthesised_test() {
    for strategy in TreeStrategy::ALL {
        assert!(PARENTHESISED.contains(&strategy), "{strategy}");
    }
}

#[test]
fn parenthesised_copies_compare_hash_print_and_drop() {
    let (_, tree) = parenthesised();
    let copy = tree.clone();
    assert!(copy == *tree);
    let hash = |t: &Tree| {
        let mut h = DefaultHasher::new();
        t.hash(&mut h);
        h.finish()
    };
    assert_eq!(hash(&copy), hash(tree));
    let (_, shorter) = parse("expr", &nested("(", "1", ")", DEPTH - 1), 0);
    assert!(shorter != *tree);
    assert!(format!("{tree:?}").starts_with("Node { symbol: \"<start>\""));
}

#[test]
fn unary_minus_100_000_deep() {
    // `<factor> ::= -<factor>`: right recursion, which the parser completes
    // with Leo's shortcut and rebuilds from the chain.
    let input = nested("-", "1", "", DEPTH);
    let (grammar, tree) = parse("expr", &input, DEPTH);
    for strategy in TreeStrategy::ALL {
        run_tree_strategy(strategy, &grammar, &tree, |c| c.contains(&b'1'));
    }
}

#[test]
fn json_arrays_100_000_deep() {
    // `<value> ::= <array>`, `<array> ::= "[" <elements> "]"`, …: a million
    // nodes. Parsed and checked only: every reducer's candidate costs a few
    // copies of the tree, and the tests above already run them all.
    let input = nested("[", "7", "]", DEPTH);
    let (_, tree) = parse("json", &input, 4 * DEPTH);
    assert!(tree.clone() == tree);
}

#[test]
fn nesting_pass_and_byte_pipeline_on_100_000_levels() {
    let input = nested("(", "1", ")", DEPTH);
    // A crash that needs 60,000 levels around its `1`: the nesting pass
    // hoists to exactly that depth with exponential and binary searches, a
    // few dozen tests. (Without the `1` in the predicate, hollowing the
    // innermost group is a smaller answer, found once the pass no longer
    // spends its tests inside the run of parentheses.)
    let deep_enough = |c: &[u8]| c.contains(&b'1') && paren_depth(c).is_some_and(|d| d >= 60_000);
    let mut oracle = Budget::new(100, deep_enough);
    let reduced = reduce_nesting(&input, &mut oracle);
    assert!(
        reduced == nested("(", "1", ")", 60_000),
        "{} bytes, depth {:?}, {} tests",
        reduced.len(),
        paren_depth(&reduced),
        oracle.tests,
    );
    let hoisted = oracle.log.iter().position(|c| c.len() == reduced.len());
    assert!(
        hoisted.is_some_and(|k| k < 50),
        "hoisted at test {hoisted:?}"
    );

    // The default byte pipeline (nesting is one of its passes) with a test
    // budget, on levels that differ (`[0,[1,[2,…`): its result is
    // interesting and smaller.
    let mut levels = Vec::new();
    for i in 0..DEPTH {
        levels.extend_from_slice(format!("[{},", i % 10).as_bytes());
    }
    levels.push(b'1');
    levels.extend(std::iter::repeat_n(b']', DEPTH));
    // The repeats pass cuts the 10-level unit `,[1,…[0` and its closing
    // `]` ×10 to the needed count in its first tests. (The passes after it
    // build and hash many candidates of that size that the cache answers:
    // seconds in a release build, minutes in a debug one, hence the time
    // budget.)
    let deep_enough = |c: &[u8]| bracket_depth(c).is_some_and(|d| d >= 60_000);
    let shrunk = Shrinker::new()
        .strategy(Strategy::default())
        .max_tests(300)
        .max_time(std::time::Duration::from_secs(30))
        .shrink(&levels, deep_enough);
    assert!(deep_enough(&shrunk.input));
    assert!(
        shrunk.input.len() <= levels.len() * 65 / 100,
        "{} of {} bytes",
        shrunk.input.len(),
        levels.len()
    );
    assert!(shrunk.tests <= 300);
}
