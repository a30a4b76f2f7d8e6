//! Fuzzes the tree reducers (`TreeStrategy::run`: HDD, Perses, the Fuzzing
//! Book's GrammarReducer plain and depth-oriented, GTR, production, and the
//! default pipeline) on the shipped grammars.
//!
//! The input is a derivation generated from a shipped grammar (seed and size
//! from the fuzz input; as generated, or as the parser reads its bytes) and
//! a predicate built from it and the fuzz input (contains a substring of
//! it, a subsequence, a number of some byte, a nonterminal in the parse
//! tree, parses at all, a length; and, or, not), kept only when it holds of
//! the input. Whatever the strategy:
//!
//! * the result is interesting, and never larger than the input (bytes; and
//!   bytes then nodes for the tree, nodes for the book's reducer);
//! * the input is never tested, and no string is tested twice;
//! * every candidate of the tree phase parses, no candidate tree was
//!   invalid, and the result tree is a derivation from the start symbol that
//!   prints to the result (every strategy but the pipeline, whose byte-level
//!   polish may leave the grammar, returns a tree);
//! * the pipeline's result is 1-minimal (no single byte can be removed).
//!
//! `cargo +nightly fuzz run -s none tree_reducers corpus/tree_reducers`
#![no_main]

mod common;

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use reduce_crash::grammar::reduce::TreeStrategy;
use reduce_crash::grammar::{Parser, Tree};
use std::collections::HashSet;

/// Largest input reduced (every candidate is parsed by the predicate).
const MAX_BYTES: usize = 128;

/// A predicate as the fuzzer draws it (positions into the input).
#[derive(Debug, Arbitrary)]
enum Spec {
    Substring { at: u16, len: u8 },
    Subsequence(Vec<u16>),
    Count { at: u16, n: u8 },
    Symbol(u16),
    Parses,
    LenAtLeast(u8),
    And(Box<Spec>, Box<Spec>),
    Or(Box<Spec>, Box<Spec>),
    Not(Box<Spec>),
}

/// A predicate over candidate bytes.
#[derive(Debug)]
enum Pred {
    Substring(Vec<u8>),
    Subsequence(Vec<u8>),
    Count(u8, usize),
    /// Parses, and the parse tree has a node of this nonterminal.
    Symbol(String),
    Parses,
    LenAtLeast(usize),
    And(Box<Pred>, Box<Pred>),
    Or(Box<Pred>, Box<Pred>),
    Not(Box<Pred>),
}

impl Spec {
    fn build(&self, input: &[u8], symbols: &[&str]) -> Pred {
        let pos = |at: u16| usize::from(at) % input.len().max(1);
        match self {
            Spec::Substring { at, len } => {
                let start = pos(*at).min(input.len());
                let end = (start + usize::from(*len)).min(input.len());
                Pred::Substring(input[start..end].to_vec())
            }
            Spec::Subsequence(at) => {
                let mut at: Vec<usize> = at.iter().map(|&a| pos(a)).collect();
                at.sort_unstable();
                at.dedup();
                Pred::Subsequence(at.iter().filter_map(|&i| input.get(i).copied()).collect())
            }
            Spec::Count { at, n } => {
                Pred::Count(input.get(pos(*at)).copied().unwrap_or(0), usize::from(*n))
            }
            Spec::Symbol(k) => Pred::Symbol(symbols[usize::from(*k) % symbols.len()].to_string()),
            Spec::Parses => Pred::Parses,
            Spec::LenAtLeast(n) => Pred::LenAtLeast(usize::from(*n)),
            Spec::And(a, b) => Pred::And(
                Box::new(a.build(input, symbols)),
                Box::new(b.build(input, symbols)),
            ),
            Spec::Or(a, b) => Pred::Or(
                Box::new(a.build(input, symbols)),
                Box::new(b.build(input, symbols)),
            ),
            Spec::Not(a) => Pred::Not(Box::new(a.build(input, symbols))),
        }
    }
}

impl Pred {
    fn holds(&self, c: &[u8], parser: &Parser) -> bool {
        match self {
            Pred::Substring(s) => s.is_empty() || c.windows(s.len()).any(|w| w == &s[..]),
            Pred::Subsequence(s) => {
                let mut it = c.iter();
                s.iter().all(|b| it.any(|x| x == b))
            }
            Pred::Count(b, n) => c.iter().filter(|x| *x == b).count() >= *n,
            Pred::Symbol(s) => parser.parse(c).is_ok_and(|t| has_symbol(&t, s)),
            Pred::Parses => parser.accepts(c),
            Pred::LenAtLeast(n) => c.len() >= *n,
            Pred::And(a, b) => a.holds(c, parser) && b.holds(c, parser),
            Pred::Or(a, b) => a.holds(c, parser) || b.holds(c, parser),
            Pred::Not(a) => !a.holds(c, parser),
        }
    }
}

fn has_symbol(tree: &Tree, symbol: &str) -> bool {
    match tree {
        Tree::Leaf(_) => false,
        Tree::Node {
            symbol: s,
            children,
            ..
        } => s == symbol || children.iter().any(|c| has_symbol(c, symbol)),
    }
}

fn symbols<'t>(tree: &'t Tree, out: &mut Vec<&'t str>) {
    if let Tree::Node {
        symbol, children, ..
    } = tree
    {
        out.push(symbol);
        children.iter().for_each(|c| symbols(c, out));
    }
}

#[derive(Debug, Arbitrary)]
struct Case {
    grammar: u8,
    seed: u64,
    size: u8,
    strategy: u8,
    /// Reduce the generated tree itself rather than the parser's.
    generated: bool,
    spec: Spec,
}

fuzz_target!(|case: Case| {
    let shipped = common::shipped();
    let common::Shipped {
        grammar,
        parser,
        small,
    } = &shipped[usize::from(case.grammar) % shipped.len()];
    let Some(generated) = small.tree(case.seed, case.size, MAX_BYTES) else {
        return;
    };
    let input = generated.to_bytes();
    let tree = if case.generated {
        generated
    } else {
        parser.parse(&input).expect("a generated string parses")
    };
    let mut names = Vec::new();
    symbols(&tree, &mut names);
    let pred = case.spec.build(&input, &names);
    if !pred.holds(&input, parser) {
        return;
    }
    let strategy = TreeStrategy::ALL[usize::from(case.strategy) % TreeStrategy::ALL.len()];

    let mut tested: Vec<Vec<u8>> = Vec::new();
    let mut oracle = |c: &[u8]| {
        tested.push(c.to_vec());
        pred.holds(c, parser)
    };
    let reduced = strategy.run(grammar, &tree, &mut oracle);

    assert!(
        pred.holds(&reduced.bytes, parser),
        "{strategy}: uninteresting result {:?}",
        String::from_utf8_lossy(&reduced.bytes)
    );
    assert!(
        reduced.bytes.len() <= input.len(),
        "{strategy}: the result is larger than the input"
    );
    assert_eq!(reduced.invalid_candidates, 0, "{strategy}: invalid candidates");
    assert_eq!(
        reduced.tree_tests + reduced.polish_tests,
        tested.len() as u64,
        "{strategy}: test counts"
    );
    let mut seen = HashSet::new();
    for c in &tested {
        assert!(c != &input, "{strategy}: tested the input");
        assert!(seen.insert(c), "{strategy}: tested {c:?} twice");
    }
    for c in &tested[..reduced.tree_tests as usize] {
        assert!(
            parser.accepts(c),
            "{strategy}: a tree candidate does not parse: {:?}",
            String::from_utf8_lossy(c)
        );
    }
    match &reduced.tree {
        Some(t) => {
            common::assert_derivation(grammar, t, strategy.name());
            assert_eq!(t.to_bytes(), reduced.bytes, "{strategy}: tree and bytes differ");
            let before = (input.len(), tree.size());
            let after = (reduced.bytes.len(), t.size());
            match strategy {
                TreeStrategy::GrammarReducer | TreeStrategy::GrammarReducerDepth => {
                    assert!(after.1 <= before.1, "{strategy}: more nodes")
                }
                _ => assert!(after <= before, "{strategy}: larger tree"),
            }
        }
        None => assert_eq!(
            strategy,
            TreeStrategy::Grammar,
            "{strategy}: no tree returned"
        ),
    }
    if strategy == TreeStrategy::Grammar {
        for i in 0..reduced.bytes.len() {
            let mut smaller = reduced.bytes.clone();
            smaller.remove(i);
            assert!(
                !pred.holds(&smaller, parser),
                "{strategy}: result not 1-minimal: byte {i} of {:?}",
                String::from_utf8_lossy(&reduced.bytes)
            );
        }
    }
});
