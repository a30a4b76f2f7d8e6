//! Fuzzes the parser, the tree reducers and the byte pipeline's nesting pass
//! on deeply nested inputs (issue 23: a 45 KB regex artifact of nested
//! groups overflowed the tool's stack as soon as the tree reduction began).
//!
//! The input (bytes, laid out in [`Case`]) picks a shipped grammar that
//! nests (`expr`: parentheses, signs, sums and quotients; `json`: arrays,
//! objects), a shape (up to 8 levels, cycled, each an opening and a closing
//! text: `(` … `)`, `-` … ``, `{"k":` … `}`, …), an innermost value and a
//! nesting depth up to 100,000 (log-uniform: most inputs are quick, some
//! very deep; at most 100 KB, 50 KB of `json`). Then:
//!
//! * the text parses, its tree prints back to it, is a derivation from the
//!   start symbol and is deeper than the nesting; a copy of the tree is
//!   equal to it and hashes the same; both drop;
//! * a tree strategy (`TreeStrategy::ALL`) runs under a predicate that holds
//!   of the input (contains the innermost value, brackets nest at least half
//!   as deep, at least half as long, or anything) with a budget of 1 to 3
//!   tests: the result is interesting and no longer, no candidate was an
//!   invalid tree, the input was never tested, the tests counted are those
//!   asked about (a batch may run past the budget, answered `false`), and the
//!   result tree (every strategy but the pipeline returns one) is a
//!   derivation printing to the result. Only for trees small enough for
//!   their budget ([`MAX_REDUCED_WORK`]): every test costs 16 candidate
//!   copies of the tree;
//! * the nesting pass runs on the bytes under the same predicate with a
//!   budget of up to 64 tests: interesting, no longer, the input not tested.
//!
//! Everything runs in libFuzzer's thread, with its default stack.
//!
//! `cargo +nightly fuzz run -s none deep_nesting corpus/deep_nesting seeds/deep_nesting`
#![no_main]

mod common;

use std::hash::{DefaultHasher, Hash, Hasher};

use libfuzzer_sys::fuzz_target;
use reduce_crash::grammar::reduce::TreeStrategy;
use reduce_crash::grammar::{builtin_grammar, Grammar, Parser, Tree};
use reduce_crash::reduce::oracle::Oracle;
use reduce_crash::reduce::reduce_nesting;

/// Deepest nesting generated.
const MAX_DEPTH: u32 = 100_000;

/// Longest input generated (deep levels of long shapes are cut to fit):
/// 100,000 signs, 50,000 parentheses, fewer of longer levels. In the
/// AddressSanitizer build `cargo fuzz run` makes, one execution on 300 KB
/// of `[0,` levels (75,000 deep) took 16.7 s in full (parse 27%, hash 18%,
/// the derivation check 13%, drop 10%: all linear, but every node is an
/// instrumented allocation), past libFuzzer's `-timeout=10`; 100 KB of
/// parentheses takes 3.2 s on an idle machine.
const MAX_BYTES: usize = 100_000;

/// The same for `json`, whose levels make about three times the nodes per
/// byte (6.0 s for 100 KB of `[0,`).
const MAX_JSON_BYTES: usize = 50_000;

/// A tree strategy runs when its tree's nodes times its test budget are at
/// most this: every test costs a batch of 16 candidate copies of the tree
/// (each copied, checked, printed and dropped), and GrammarReducer's first
/// scan walks the whole tree. At 200,000 one test on a tree 39,000
/// parentheses deep took 4.5 s of a 5.8 s execution under
/// AddressSanitizer; 60,000 keeps the strategy near a second.
const MAX_REDUCED_WORK: usize = 60_000;

/// Levels of `expr`: (opening, closing) text around the level below.
const EXPR_LEVELS: [(&str, &str); 6] = [
    ("(", ")"),
    ("-", ""),
    ("+", ""),
    ("(1 + ", ")"),
    ("(", " * 2)"),
    ("2 / (", ")"),
];

/// Innermost values of `expr`.
const EXPR_CORES: [&str; 4] = ["1", "7", "3.25", "42"];

/// Levels of `json`.
const JSON_LEVELS: [(&str, &str); 6] = [
    ("[", "]"),
    ("{\"k\":", "}"),
    ("[0,", "]"),
    ("[", ",true]"),
    (" [ ", " ] "),
    ("{\"a\":1,\"b\":", "}"),
];

/// Innermost values of `json`.
const JSON_CORES: [&str; 4] = ["7", "\"s\"", "null", "[]"];

/// The fuzz input, byte by byte (missing bytes read as 0).
#[derive(Debug)]
struct Case {
    /// Byte 0, even: `expr`; odd: `json`.
    grammar: u8,
    /// Byte 1: the innermost value.
    core: u8,
    /// Bytes 2-5 (little-endian), cut to `bits % 19` bits (at most
    /// 262,143), then to [`MAX_DEPTH`] and [`MAX_BYTES`] ([`MAX_JSON_BYTES`]): the depth.
    raw: u32,
    /// Byte 6.
    bits: u8,
    /// Byte 7: the tree strategy (`TreeStrategy::ALL`).
    strategy: u8,
    /// Byte 8: 1 to 3 tests for the tree strategy.
    budget: u8,
    /// Byte 9: the predicate.
    predicate: u8,
    /// Byte 10: tests for the nesting pass (up to 64).
    nesting_budget: u8,
    /// Bytes 11-18: the levels, outermost first, cycled (indices into the
    /// grammar's levels; none: the first).
    shape: Vec<u8>,
}

impl Case {
    fn new(data: &[u8]) -> Case {
        let byte = |i: usize| data.get(i).copied().unwrap_or(0);
        Case {
            grammar: byte(0),
            core: byte(1),
            raw: u32::from_le_bytes([byte(2), byte(3), byte(4), byte(5)]),
            bits: byte(6),
            strategy: byte(7),
            budget: byte(8),
            predicate: byte(9),
            nesting_budget: byte(10),
            shape: data.iter().skip(11).take(8).copied().collect(),
        }
    }
}

/// What the reduced candidates must keep.
#[derive(Debug, Clone, Copy)]
enum Pred<'a> {
    Contains(&'a [u8]),
    /// Brackets of every kind nest at least this deep (as a counter: any
    /// opening one up, any closing one down).
    NestsAtLeast(usize),
    LongerThan(usize),
    Anything,
}

impl Pred<'_> {
    fn holds(&self, c: &[u8]) -> bool {
        match *self {
            Pred::Contains(s) => c.windows(s.len()).any(|w| w == s),
            Pred::NestsAtLeast(n) => nesting(c) >= n,
            Pred::LongerThan(n) => c.len() > n,
            Pred::Anything => true,
        }
    }
}

/// How deep brackets nest, counting any opening bracket up and any closing
/// one down.
fn nesting(c: &[u8]) -> usize {
    let (mut depth, mut max) = (0i64, 0i64);
    for &b in c {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
    }
    max as usize
}

/// A predicate that runs out after `max` tests, recording what it tested.
struct Budget<'a> {
    pred: Pred<'a>,
    /// Candidates asked about, including those answered `false` once the
    /// budget ran out (a reducer counts what it asks, a batch at a time).
    asked: u64,
    /// Candidates the predicate ran on.
    tests: u64,
    max: u64,
    tested_input: bool,
    input: &'a [u8],
}

impl Oracle<u8> for Budget<'_> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        self.asked += 1;
        if self.exhausted() {
            return false;
        }
        self.tests += 1;
        self.tested_input |= candidate == self.input;
        self.pred.holds(candidate)
    }

    fn exhausted(&self) -> bool {
        self.tests >= self.max
    }
}

fn grammars() -> &'static [(Grammar, Parser); 2] {
    static GRAMMARS: std::sync::OnceLock<[(Grammar, Parser); 2]> = std::sync::OnceLock::new();
    GRAMMARS.get_or_init(|| {
        ["expr", "json"].map(|name| {
            let grammar = builtin_grammar(name).expect("shipped");
            let parser = Parser::new(&grammar).expect("shipped grammars compile");
            (grammar, parser)
        })
    })
}

fn hash(tree: &Tree) -> u64 {
    let mut h = DefaultHasher::new();
    tree.hash(&mut h);
    h.finish()
}

fuzz_target!(|data: &[u8]| {
    let case = Case::new(data);
    let json = case.grammar % 2 == 1;
    let (levels, cores): (&[(&str, &str)], &[&str]) = if json {
        (&JSON_LEVELS, &JSON_CORES)
    } else {
        (&EXPR_LEVELS, &EXPR_CORES)
    };
    let (grammar, parser) = &grammars()[usize::from(json)];
    let shape: Vec<(&str, &str)> = if case.shape.is_empty() {
        vec![levels[0]]
    } else {
        case.shape
            .iter()
            .map(|&k| levels[usize::from(k) % levels.len()])
            .collect()
    };
    let core = cores[usize::from(case.core) % cores.len()];
    let bits = u32::from(case.bits % 19);
    let mut depth = (case.raw & ((1u32 << bits) - 1)).min(MAX_DEPTH) as usize;
    // Cut to MAX_BYTES: a level costs at most this much.
    let widest = shape
        .iter()
        .map(|(o, c)| o.len() + c.len())
        .max()
        .unwrap_or(1);
    let max_bytes = if json { MAX_JSON_BYTES } else { MAX_BYTES };
    depth = depth.min((max_bytes - core.len()) / widest.max(1));

    let mut input = Vec::new();
    for k in 0..depth {
        input.extend_from_slice(shape[k % shape.len()].0.as_bytes());
    }
    input.extend_from_slice(core.as_bytes());
    for k in (0..depth).rev() {
        input.extend_from_slice(shape[k % shape.len()].1.as_bytes());
    }

    // The parse, and what a tree promises.
    let tree = match parser.parse(&input) {
        Ok(tree) => tree,
        Err(e) => panic!("a nested input does not parse: {e}"),
    };
    assert_eq!(
        tree.to_bytes(),
        input,
        "the tree does not print back to the input"
    );
    common::assert_derivation(grammar, &tree, "parse tree");
    assert!(
        tree.depth() > depth,
        "a tree {} levels deep for {depth} levels of nesting",
        tree.depth()
    );
    let copy = tree.clone();
    assert!(copy == tree, "a copy differs");
    assert_eq!(hash(&copy), hash(&tree), "a copy hashes differently");
    drop(copy);

    let pred = match case.predicate % 4 {
        0 => Pred::Contains(core.as_bytes()),
        1 => Pred::NestsAtLeast(nesting(&input) / 2),
        2 => Pred::LongerThan(input.len() / 2),
        _ => Pred::Anything,
    };
    assert!(pred.holds(&input));

    // One tree strategy, a few tests.
    let tests = 1 + usize::from(case.budget % 3);
    if tree.size() * tests <= MAX_REDUCED_WORK {
        reduce_tree(&case, grammar, &tree, &input, pred, tests as u64);
    }
    drop(tree);

    // The nesting pass on the bytes.
    let mut oracle = Budget {
        pred,
        asked: 0,
        tests: 0,
        max: u64::from(case.nesting_budget % 65),
        tested_input: false,
        input: &input,
    };
    let result = reduce_nesting(&input, &mut oracle);
    assert!(pred.holds(&result), "nesting: uninteresting result");
    assert!(result.len() <= input.len(), "nesting: a longer result");
    assert!(!oracle.tested_input, "nesting: tested the input");
});

/// Runs the case's tree strategy on `tree` (of `input`) and checks it.
fn reduce_tree(
    case: &Case,
    grammar: &Grammar,
    tree: &Tree,
    input: &[u8],
    pred: Pred<'_>,
    tests: u64,
) {
    let strategy = TreeStrategy::ALL[usize::from(case.strategy) % TreeStrategy::ALL.len()];
    let mut oracle = Budget {
        pred,
        asked: 0,
        tests: 0,
        max: tests,
        tested_input: false,
        input,
    };
    let reduced = strategy.run(grammar, tree, &mut oracle);
    assert!(
        pred.holds(&reduced.bytes),
        "{strategy}: uninteresting result"
    );
    assert!(
        reduced.bytes.len() <= input.len(),
        "{strategy}: a longer result"
    );
    assert_eq!(
        reduced.invalid_candidates, 0,
        "{strategy}: invalid candidates"
    );
    assert!(!oracle.tested_input, "{strategy}: tested the input");
    assert!(oracle.tests <= oracle.max, "{strategy}: over budget");
    assert_eq!(
        reduced.tree_tests + reduced.polish_tests,
        oracle.asked,
        "{strategy}: test counts"
    );
    match &reduced.tree {
        Some(t) => {
            common::assert_derivation(grammar, t, strategy.name());
            assert_eq!(
                t.to_bytes(),
                reduced.bytes,
                "{strategy}: tree and bytes differ"
            );
        }
        None => assert_eq!(strategy, TreeStrategy::Grammar, "{strategy}: no tree"),
    }
}
