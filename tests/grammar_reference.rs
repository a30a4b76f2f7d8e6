//! Grammar-based reduction against the seeds' reference results
//! (`tests/data/reference_fixtures.json`, a copy of
//! `reference/results/fixtures.json`; definitions in `REFERENCE.md` §3.4,
//! §3.6):
//!
//! * the Fuzzing Book's `GrammarReducer` (plain and depth-oriented) on
//!   `1 + (2 * 3)` and on the 10 long generated expressions + the book's own
//!   (`s001-expr-small-GR-*`, `s001-long-seed*-GR-*`): same results, no more
//!   tests than the reference (they are the same algorithm);
//! * Perses on `1 + ((2 * 3 / 4))` with the doubled-parentheses predicate
//!   (`s004-perses-*`, `s000-perses`);
//! * every tree strategy on the long expressions beside the reference's
//!   `DeltaDebuggingReducer` (`s001-long-seed*-DD`);
//! * property tests on random expressions: every candidate a tree reducer
//!   tests parses, the result is interesting and no larger than the input.
//!
//! Inputs are parsed as in production: the shipped `expr` grammar
//! (`builtin_grammar("expr")`, the Fuzzing Book's `EXPR_GRAMMAR`) and the
//! Earley parser; `EvalMysteryRunner` rejects what that parser rejects, as
//! the reference's `EarleyParser` does. The unit tests' recursive-descent
//! parser (`src/grammar/reduce/testing.rs`) is checked against both here.
//!
//! Run with `cargo test --test grammar_reference -- --nocapture` to see the
//! tables.

use std::sync::OnceLock;

use reduce_crash::grammar::reduce::{
    check_tree, grammar_reducer, perses, GrammarReducerMode, TreeStrategy,
};
use reduce_crash::grammar::{builtin_grammar, Grammar, Parser, Term, Tree};
use reduce_crash::reduce::fuzzingbook_dd;
use reduce_crash::reduce::oracle::{Cached, Oracle};
use serde_json::Value;

/// `crate::grammar` for the shared test support below.
mod grammar {
    pub use reduce_crash::grammar::{Grammar, Term, Tree};
}

/// The expression grammar, its parser and random expressions, shared with
/// the unit tests.
#[path = "../src/grammar/reduce/testing.rs"]
mod expr;

use expr::{arb_expr, double_paren};

/// The shipped `expr` grammar.
fn expr_grammar() -> Grammar {
    builtin_grammar("expr").expect("shipped expr grammar")
}

fn parser() -> &'static Parser {
    static PARSER: OnceLock<Parser> = OnceLock::new();
    PARSER.get_or_init(|| Parser::new(&expr_grammar()).expect("usable grammar"))
}

/// The Earley parse of `input`, if it is an expression.
fn parse_expr(input: &str) -> Option<Tree> {
    parser().parse(input.as_bytes()).ok()
}

const FIXTURES: &str = include_str!("data/reference_fixtures.json");

fn fixture(id: &str) -> Value {
    let all: Vec<Value> = serde_json::from_str(FIXTURES).expect("fixtures parse");
    all.into_iter()
        .find(|v| v["id"] == id)
        .unwrap_or_else(|| panic!("no fixture {id}"))
}

fn text(v: &Value, key: &str) -> String {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} missing"))
        .to_string()
}

fn number(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} missing"))
}

fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

// ---------------------------------------------------------------- predicates

/// `MysteryRunner`: FAIL iff the first `(` comes before the first `)`.
fn mystery(c: &[u8]) -> bool {
    let open = c.iter().position(|&b| b == b'(');
    let close = c.iter().position(|&b| b == b')');
    matches!((open, close), (Some(o), Some(cl)) if o < cl)
}

fn parses(c: &[u8]) -> bool {
    parser().accepts(c)
}

/// `EvalMysteryRunner`: UNRESOLVED (not interesting) unless the input is an
/// expression, then as `MysteryRunner`.
fn eval_mystery(c: &[u8]) -> bool {
    parses(c) && mystery(c)
}

/// An oracle that logs every candidate it runs and counts those that do
/// not parse.
struct Logged<F> {
    predicate: F,
    log: Vec<Vec<u8>>,
    unparsable: usize,
}

impl<F: FnMut(&[u8]) -> bool> Logged<F> {
    fn new(predicate: F) -> Self {
        Logged {
            predicate,
            log: Vec::new(),
            unparsable: 0,
        }
    }
}

impl<F: FnMut(&[u8]) -> bool> Oracle<u8> for Logged<F> {
    fn test(&mut self, c: &[u8]) -> bool {
        self.log.push(c.to_vec());
        if !parses(c) {
            self.unparsable += 1;
        }
        (self.predicate)(c)
    }
}

// ------------------------------------------------------------------ parsers

#[test]
fn shipped_grammar_and_earley_agree_with_the_test_parser() {
    assert_eq!(expr_grammar(), expr::expr_grammar(), "shipped expr grammar");
    let all: Vec<Value> = serde_json::from_str(FIXTURES).unwrap();
    let mut checked = 0;
    for f in &all {
        let id = f["id"].as_str().unwrap();
        if !(id.starts_with("s001-long")
            || id.starts_with("s001-expr-small")
            || id.contains("perses"))
        {
            continue;
        }
        let input = text(f, "input");
        let Some(ours) = expr::parse_expr(&input) else {
            continue; // the space-less Perses grammar's input
        };
        assert_eq!(parse_expr(&input), Some(ours.clone()), "{id}");
        assert_eq!(check_tree(&expr_grammar(), &ours), Ok(()), "{id}");
        checked += 1;
    }
    assert!(checked >= 30, "{checked}");
    for bad in ["1+2", "1 +  2", "(3) ", "()", "", "1 + (2"] {
        assert!(
            !parses(bad.as_bytes()) && expr::parse_expr(bad).is_none(),
            "{bad:?}"
        );
    }
}

// ------------------------------------------------------------ GrammarReducer

fn mode_of(algorithm: &str) -> GrammarReducerMode {
    match algorithm {
        "fuzzingbook_GrammarReducer_plain" => GrammarReducerMode::Plain,
        "fuzzingbook_GrammarReducer_depth" => GrammarReducerMode::Depth,
        other => panic!("not a GrammarReducer fixture: {other}"),
    }
}

/// Runs the reducer of a `GrammarReducer` fixture; returns (result, tests,
/// invalid candidates, unparsable candidates, executed candidates).
fn run_grammar_reducer_fixture(f: &Value) -> (Vec<u8>, u64, u64, usize, Vec<Vec<u8>>) {
    let predicate: fn(&[u8]) -> bool = match f["predicate"].as_str().unwrap() {
        "eval_mystery" => eval_mystery,
        "mystery" => mystery,
        other => panic!("predicate {other}"),
    };
    let tree = parse_expr(&text(f, "input")).expect("fixture input parses");
    let mut oracle = Cached::new(Logged::new(predicate));
    let r = grammar_reducer(
        &expr_grammar(),
        &tree,
        &mut oracle,
        mode_of(f["algorithm"].as_str().unwrap()),
    );
    let executed = oracle.stats().executed;
    assert_eq!(
        executed, r.stats.tests,
        "the reducer counts what the cache executed"
    );
    let logged = oracle.into_inner();
    (
        r.tree.to_bytes(),
        executed,
        r.stats.invalid_candidates,
        logged.unparsable,
        logged.log,
    )
}

#[test]
fn grammar_reducer_on_the_small_expression_matches_the_reference() {
    println!("\nGrammarReducer on `1 + (2 * 3)` (tests = distinct executions; the input is never tested)");
    println!(
        "{:<40} {:>8} {:>6} | {:>8} {:>6}",
        "fixture", "ours", "tests", "ref", "tests"
    );
    for id in [
        "s001-expr-small-GR-plain-EvalMystery",
        "s001-expr-small-GR-depth-EvalMystery",
        "s001-expr-small-GR-plain-Mystery",
        "s001-expr-small-GR-depth-Mystery",
    ] {
        let f = fixture(id);
        let (result, tests, invalid, unparsable, log) = run_grammar_reducer_fixture(&f);
        println!(
            "{id:<40} {:>8} {tests:>6} | {:>8} {:>6}",
            show(&result),
            text(&f, "result"),
            number(&f, "tests")
        );
        assert_eq!(show(&result), text(&f, "result"), "{id}");
        assert!(tests <= number(&f, "tests"), "{id}: {tests} tests");
        assert_eq!((invalid, unparsable), (0, 0), "{id}");
        // The same candidates, in the same order, as the reference's
        // uncached tests.
        let reference: Vec<Vec<u8>> = f["trace"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| !e[2].as_bool().unwrap())
            .map(|e| e[0].as_str().unwrap().as_bytes().to_vec())
            .collect();
        assert_eq!(log, reference, "{id}");
    }
}

/// The long-expression fixtures: the ten generated ones and the book's.
fn long_ids() -> Vec<String> {
    (0..10)
        .map(|k| format!("s001-long-seed{k}"))
        .chain(["s001-long-seedbook".to_string()])
        .collect()
}

#[test]
fn grammar_reducer_on_long_expressions_matches_the_reference() {
    println!("\nGrammarReducer on the long expressions (EvalMysteryRunner): ours | reference");
    println!(
        "{:<22} {:>5} | {:>9} {:>5} | {:>9} {:>5} | {:>9} {:>5} | {:>9} {:>5}",
        "input", "len", "GR-depth", "tests", "ref", "tests", "GR-plain", "tests", "ref", "tests"
    );
    for base in long_ids() {
        let mut cells = Vec::new();
        let mut len = 0;
        for suffix in ["GR-depth", "GR-plain"] {
            let id = format!("{base}-{suffix}");
            let f = fixture(&id);
            len = text(&f, "input").len();
            let (result, tests, invalid, unparsable, _) = run_grammar_reducer_fixture(&f);
            assert_eq!(show(&result), text(&f, "result"), "{id}");
            assert!(
                tests <= number(&f, "tests"),
                "{id}: {tests} > {}",
                number(&f, "tests")
            );
            assert_eq!((invalid, unparsable), (0, 0), "{id}");
            cells.push(format!(
                "{:>9} {tests:>5} | {:>9} {:>5}",
                show(&result),
                text(&f, "result"),
                number(&f, "tests")
            ));
        }
        println!("{base:<22} {len:>5} | {} | {}", cells[0], cells[1]);
    }
}

// -------------------------------------------------------------------- Perses

/// The seed-004 post's own grammar: `EXPR_GRAMMAR` without the spaces.
fn nospace_grammar() -> Grammar {
    let mut g = expr_grammar();
    for rules in g.rules.values_mut() {
        for terms in rules {
            for term in terms {
                if let Term::Literal(bytes) = term {
                    bytes.retain(|&b| b != b' ');
                }
            }
        }
    }
    g
}

/// A tree of [`expr_grammar`] as a tree of [`nospace_grammar`].
fn strip_spaces(tree: &Tree) -> Tree {
    match tree {
        Tree::Leaf(b) => Tree::Leaf(b.iter().copied().filter(|&b| b != b' ').collect()),
        Tree::Node {
            symbol,
            expansion,
            children,
        } => Tree::Node {
            symbol: symbol.clone(),
            expansion: *expansion,
            children: children.iter().map(strip_spaces).collect(),
        },
    }
}

#[test]
fn perses_on_doubled_parentheses_matches_the_reference() {
    println!("\nPerses, predicate re.match(r'.*[(][(].*[)][)].*')");
    println!(
        "{:<38} {:>6} {:>22} | {:>6} {:>20}",
        "fixture", "ours", "tests (+1 initial)", "ref", "tests incl. initial"
    );
    for (id, grammar, tree) in [
        (
            "s004-perses-B1_fuzzingbook_grammar",
            expr_grammar(),
            parse_expr("1 + ((2 * 3 / 4))").unwrap(),
        ),
        (
            "s004-perses-B2_post_nospace_grammar",
            nospace_grammar(),
            strip_spaces(&parse_expr("1 + ((2 * 3 / 4))").unwrap()),
        ),
    ] {
        let f = fixture(id);
        assert_eq!(show(&tree.to_bytes()), text(&f, "input"));
        let mut oracle = Cached::new(Logged::new(double_paren));
        let r = perses(&grammar, &tree, &mut oracle);
        let tests = oracle.stats().executed;
        let log = oracle.into_inner().log;
        // The reference checks the original once up front and counts it.
        let with_initial = tests + 1;
        println!(
            "{id:<38} {:>6} {:>22} | {:>6} {:>20}",
            show(&r.tree.to_bytes()),
            format!("{tests} (+1 = {with_initial})"),
            text(&f, "result"),
            number(&f, "calls")
        );
        assert_eq!(show(&r.tree.to_bytes()), text(&f, "result"), "{id}");
        assert!(with_initial <= number(&f, "calls"), "{id}");
        assert_eq!(r.stats.invalid_candidates, 0);
        // Same candidates in the same order as the reference's log, after
        // its initial check: `[[candidate, outcome], ...]`.
        let expected: Vec<String> = f["log"]
            .as_array()
            .expect("log")
            .iter()
            .skip(1)
            .map(|e| e[0].as_str().unwrap().to_string())
            .collect();
        let ours: Vec<String> = log.iter().map(|c| show(c)).collect();
        assert_eq!(ours, expected, "{id}");
    }
    // Seed 000's perses_delta_debug: no cache, 20 calls (13 distinct).
    let f = fixture("s000-perses");
    println!(
        "{:<38} {:>6} {:>22} | {:>6} {:>20}",
        "s000-perses (calls / distinct)",
        "",
        "",
        text(&f, "result"),
        format!("{} / {}", number(&f, "calls"), number(&f, "distinct"))
    );
}

// ----------------------------------------------------- strategies vs. ddmin

#[test]
fn tree_strategies_need_far_fewer_tests_than_delta_debugging() {
    println!(
        "\nLong expressions, EvalMysteryRunner: result length / tests per strategy \
         (grammar = tree tests + polish tests); DD = fuzzingbook DeltaDebuggingReducer"
    );
    let strategies = TreeStrategy::ALL;
    print!("{:<20} {:>4}", "input", "len");
    for s in strategies {
        print!(" | {:>23}", s.name());
    }
    println!(" | {:>13} | {:>11}", "DD (ours)", "DD ref");
    let mut totals = vec![0u64; strategies.len()];
    let mut dd_total = 0;
    for base in long_ids() {
        let dd = fixture(&format!("{base}-DD"));
        let input = text(&dd, "input");
        let tree = parse_expr(&input).unwrap();
        print!("{base:<20} {:>4}", input.len());
        for (k, strategy) in strategies.iter().enumerate() {
            let mut oracle = Cached::new(Logged::new(eval_mystery));
            let r = strategy.run(&expr_grammar(), &tree, &mut oracle);
            let executed = oracle.stats().executed;
            let unparsable = oracle.into_inner().unparsable;
            assert!(eval_mystery(&r.bytes), "{base} {strategy}");
            assert_eq!(r.invalid_candidates, 0, "{base} {strategy}");
            if *strategy != TreeStrategy::Grammar {
                assert_eq!(unparsable, 0, "{base} {strategy}");
            }
            totals[k] += executed;
            let cell = if *strategy == TreeStrategy::Grammar {
                format!("{}+{}", r.tree_tests, r.polish_tests)
            } else {
                executed.to_string()
            };
            let mut result = show(&r.bytes);
            if result.len() > 15 {
                result = format!("{}…", &result[..14]);
            }
            print!(" | {result:>15} {cell:>7}");
        }
        // The reference DD, re-run (tests/reference.rs checks it in detail).
        let mut oracle = Cached::new(eval_mystery);
        let dd_result = fuzzingbook_dd(input.as_bytes(), &mut oracle);
        let dd_tests = oracle.stats().executed;
        assert_eq!(show(&dd_result), text(&dd, "result"));
        assert_eq!(dd_tests, number(&dd, "tests"));
        dd_total += dd_tests;
        println!(
            " | {:>3} {:>9} | {:>3} {:>7}",
            dd_result.len(),
            dd_tests,
            text(&dd, "result").len(),
            number(&dd, "tests")
        );
    }
    print!("{:<25}", "total tests");
    for t in &totals {
        print!(" | {t:>23}");
    }
    println!(" | {dd_total:>13} |");
    for (strategy, total) in strategies.iter().zip(&totals) {
        assert!(
            total * 10 < dd_total,
            "{strategy}: {total} tests vs. {dd_total} for delta debugging"
        );
    }
}

// ----------------------------------------------------------------- proptest

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// An interesting property of `input` chosen by `pick`: a valid
    /// expression containing some byte of the input (at least as often as
    /// the input, up to twice), or `EvalMysteryRunner` when it holds.
    fn property(input: &str, pick: usize) -> impl Fn(&[u8]) -> bool + Clone {
        let bytes: Vec<u8> = {
            let mut b: Vec<u8> = input.bytes().filter(|&b| b != b' ').collect();
            b.sort_unstable();
            b.dedup();
            b
        };
        let target = bytes[pick % bytes.len()];
        let count = input
            .bytes()
            .filter(|&b| b == target)
            .count()
            .min(1 + pick % 2);
        let use_mystery = pick.is_multiple_of(5) && eval_mystery(input.as_bytes());
        move |c: &[u8]| {
            if use_mystery {
                return eval_mystery(c);
            }
            parses(c) && c.iter().filter(|&&b| b == target).count() >= count
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 48,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn earley_and_test_parser_build_the_same_trees(input in arb_expr(24)) {
            prop_assert_eq!(parse_expr(&input), expr::parse_expr(&input));
        }

        #[test]
        fn tree_reducers_test_only_valid_candidates(input in arb_expr(24), pick in 0usize..1000) {
            let tree = parse_expr(&input).expect("generated expressions parse");
            let holds = property(&input, pick);
            prop_assert!(holds(input.as_bytes()));
            for strategy in TreeStrategy::ALL {
                let mut oracle = Cached::new(Logged::new(holds.clone()));
                let r = strategy.run(&expr_grammar(), &tree, &mut oracle);
                let logged = oracle.into_inner();
                prop_assert_eq!(r.invalid_candidates, 0, "{}", strategy);
                if strategy == TreeStrategy::Grammar {
                    // Only the byte-level polish may leave the grammar.
                    prop_assert!(logged.unparsable as u64 <= r.polish_tests, "{}", strategy);
                } else {
                    prop_assert_eq!(logged.unparsable, 0, "{}", strategy);
                    let tree = r.tree.as_ref().expect("tree strategies return a tree");
                    prop_assert_eq!(&tree.to_bytes(), &r.bytes);
                    prop_assert!(parses(&r.bytes));
                }
                prop_assert!(holds(&r.bytes), "{}: {:?}", strategy, show(&r.bytes));
                prop_assert!(r.bytes.len() <= input.len(), "{}", strategy);
                // The input itself is never tested.
                prop_assert!(!logged.log.iter().any(|c| c == input.as_bytes()), "{}", strategy);
            }
        }
    }
}

// -------------------------------------------------------------------- scale

/// A deterministic pseudo-random expression of about `len` bytes.
fn big_expression(len: usize, mut seed: u64) -> String {
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    fn go(out: &mut String, budget: usize, next: &mut dyn FnMut(u64) -> u64) {
        if budget < 8 || next(4) == 0 {
            out.push_str(&next(100).to_string());
            return;
        }
        match next(4) {
            0 => {
                out.push('(');
                go(out, budget - 2, next);
                out.push(')');
            }
            1 => {
                out.push(if next(2) == 0 { '-' } else { '+' });
                go(out, budget - 1, next);
            }
            _ => {
                let op = [" + ", " - ", " * ", " / "][next(4) as usize];
                let left = (budget - 3) / 2;
                out.push('(');
                go(out, left, next);
                out.push(')');
                out.push_str(op);
                go(out, budget - 5 - left, next);
            }
        }
    }
    let mut out = String::new();
    while out.len() < len {
        if !out.is_empty() {
            out.push_str(" + ");
        }
        go(&mut out, 200, &mut next);
    }
    out
}

/// Inputs of a few kilobytes: every strategy finishes, tests stay far
/// below the input length. Prints time and tests.
#[test]
fn strategies_scale_to_kilobyte_inputs() {
    let input = big_expression(4000, 7);
    let tree = parse_expr(&input).expect("parses");
    // Interesting: a valid expression with a `7` inside parentheses... any
    // `(` before a `)` will do, plus a digit 7 somewhere.
    let holds = |c: &[u8]| eval_mystery(c) && c.contains(&b'7');
    assert!(holds(input.as_bytes()));
    println!("\n{} bytes, {} nodes", input.len(), tree.size());
    for strategy in TreeStrategy::ALL {
        let start = std::time::Instant::now();
        let mut oracle = Cached::new(holds);
        let r = strategy.run(&expr_grammar(), &tree, &mut oracle);
        let result = if r.bytes.len() <= 20 {
            format!("`{}`", show(&r.bytes))
        } else {
            format!("{} bytes", r.bytes.len())
        };
        println!(
            "{:<22} {result:>12} {:>6} tests {:>8.2?}",
            strategy.name(),
            oracle.stats().executed,
            start.elapsed()
        );
        assert!(holds(&r.bytes));
        assert_eq!(r.invalid_candidates, 0);
    }
}
