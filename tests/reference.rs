//! Reproduces the seeds' reference results (`tests/data/reference_fixtures.json`,
//! a copy of `reference/results/fixtures.json`, produced by running the
//! seeds' Python code) with the Rust transcriptions in
//! `reduce_crash::reduce::seeds`: same result, same `calls`/`distinct`/
//! `tests` counts, and the same sequence of tested candidates where the
//! reference recorded one. Then runs the crate's own reducers on the same
//! inputs and prints their test counts beside the reference's.
//!
//! Run with `cargo test --test reference -- --nocapture` to see the tables.

use std::collections::HashSet;

use reduce_crash::reduce::oracle::{Cached, Oracle};
use reduce_crash::reduce::{ddmin, fuzzingbook_dd, reduce_bytes, seed_ddmin, seed_ddrmin};
use serde_json::Value;

const FIXTURES: &str = include_str!("data/reference_fixtures.json");

const SEED_DDMIN: &str = "ddmin_iterative_seed000";
const SEED_DDRMIN: &str = "ddrmin_recursive_seed000";
const FUZZINGBOOK_DD: &str = "fuzzingbook_DeltaDebuggingReducer";

// ------------------------------------------------------------------ fixtures

/// One reference run, as far as these tests use it.
struct Fixture {
    id: String,
    algorithm: String,
    predicate: Predicate,
    input: Vec<u8>,
    result: Vec<u8>,
    calls: u64,
    distinct: Option<u64>,
    tests: Option<u64>,
    /// Seed 000 logs: `"+  <candidate> <len>"` / `".  <candidate> <len>"`.
    log: Option<Vec<String>>,
    /// Fuzzing Book traces: `[candidate, outcome, cached]`.
    trace: Option<Vec<(Vec<u8>, bool, bool)>>,
}

fn string_field(v: &Value, key: &str) -> String {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("fixture field {key} missing in {v}"))
        .to_string()
}

fn bytes_field(v: &Value, key: &str) -> Vec<u8> {
    let s = string_field(v, key);
    assert!(
        s.is_ascii(),
        "non-ASCII {key}: byte and char reduction differ"
    );
    s.into_bytes()
}

fn parse_trace(v: &Value) -> Vec<(Vec<u8>, bool, bool)> {
    let entries = v.as_array().expect("trace is a list");
    entries
        .iter()
        .map(|e| {
            let candidate = e[0].as_str().expect("trace input").as_bytes().to_vec();
            let fail = e[1].as_str().expect("trace outcome") == "FAIL";
            (candidate, fail, e[2].as_bool().expect("trace cached flag"))
        })
        .collect()
}

/// The fixtures of the three transcribed algorithms.
fn fixtures() -> Vec<Fixture> {
    let all: Vec<Value> = serde_json::from_str(FIXTURES).expect("fixtures parse");
    all.iter()
        .filter(|v| {
            [SEED_DDMIN, SEED_DDRMIN, FUZZINGBOOK_DD].contains(&v["algorithm"].as_str().unwrap())
        })
        .map(|v| Fixture {
            id: string_field(v, "id"),
            algorithm: string_field(v, "algorithm"),
            predicate: Predicate::from_name(&string_field(v, "predicate")),
            input: bytes_field(v, "input"),
            result: bytes_field(v, "result"),
            calls: v["calls"].as_u64().expect("calls"),
            distinct: v["distinct"].as_u64(),
            tests: v["tests"].as_u64(),
            log: v["log"].as_array().map(|l| {
                l.iter()
                    .map(|s| s.as_str().expect("log line").to_string())
                    .collect()
            }),
            trace: (!v["trace"].is_null()).then(|| parse_trace(&v["trace"])),
        })
        .collect()
}

fn fixtures_of(algorithm: &str) -> Vec<Fixture> {
    fixtures()
        .into_iter()
        .filter(|f| f.algorithm == algorithm)
        .collect()
}

// ---------------------------------------------------------------- predicates

/// The reference predicates (REFERENCE.md §3.5), on ASCII bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Predicate {
    /// `re.match("<SELECT.*>", s)`.
    SelectPrefix,
    /// `set('()') <= set(s)`.
    BothParens,
    /// `MysteryRunner`: the first `(` comes before the first `)`.
    Mystery,
    /// `EvalMysteryRunner`: a valid `EXPR_GRAMMAR` expression and `Mystery`.
    EvalMystery,
}

impl Predicate {
    fn from_name(name: &str) -> Self {
        match name {
            "regex_match_prefix:<SELECT.*>" => Predicate::SelectPrefix,
            "contains_both_parens" => Predicate::BothParens,
            "mystery" => Predicate::Mystery,
            "eval_mystery" => Predicate::EvalMystery,
            other => panic!("no Rust version of predicate {other}"),
        }
    }

    fn holds(self, s: &[u8]) -> bool {
        match self {
            Predicate::SelectPrefix => select_prefix(s),
            Predicate::BothParens => s.contains(&b'(') && s.contains(&b')'),
            Predicate::Mystery => mystery(s),
            Predicate::EvalMystery => expr::is_expression(s) && mystery(s),
        }
    }
}

/// `re.match("<SELECT.*>", s)`: anchored at the start; `.` excludes `\n`.
fn select_prefix(s: &[u8]) -> bool {
    let Some(rest) = s.strip_prefix(b"<SELECT") else {
        return false;
    };
    let line = rest.split(|&b| b == b'\n').next().unwrap_or_default();
    line.contains(&b'>')
}

/// `MysteryRunner`: FAIL iff `s.find('(') < s.find(')')`, both found.
fn mystery(s: &[u8]) -> bool {
    let open = s.iter().position(|&b| b == b'(');
    let close = s.iter().position(|&b| b == b')');
    matches!((open, close), (Some(x), Some(y)) if x < y)
}

/// A recogniser for fuzzingbook's `EXPR_GRAMMAR`, accepting exactly what
/// `EarleyParser(EXPR_GRAMMAR).parse` accepts:
///
/// ```text
/// <expr>    ::= <term> " + " <expr> | <term> " - " <expr> | <term>
/// <term>    ::= <factor> " * " <term> | <factor> " / " <term> | <factor>
/// <factor>  ::= "+" <factor> | "-" <factor> | "(" <expr> ")"
///             | <integer> "." <integer> | <integer>
/// <integer> ::= <digit> <integer> | <digit>
/// ```
///
/// The grammar is LL(1) once the operators (with their spaces) are read as
/// single tokens: after a term only `" + "`/`" - "`, `")"` or the end can
/// follow, so greedy descent never needs to back up.
mod expr {
    pub fn is_expression(s: &[u8]) -> bool {
        let mut p = Parser { s, at: 0 };
        p.expr() && p.at == s.len()
    }

    struct Parser<'a> {
        s: &'a [u8],
        at: usize,
    }

    impl Parser<'_> {
        fn eat(&mut self, token: &[u8]) -> bool {
            let found = self.s[self.at..].starts_with(token);
            if found {
                self.at += token.len();
            }
            found
        }

        fn expr(&mut self) -> bool {
            loop {
                if !self.term() {
                    return false;
                }
                if !(self.eat(b" + ") || self.eat(b" - ")) {
                    return true;
                }
            }
        }

        fn term(&mut self) -> bool {
            loop {
                if !self.factor() {
                    return false;
                }
                if !(self.eat(b" * ") || self.eat(b" / ")) {
                    return true;
                }
            }
        }

        fn factor(&mut self) -> bool {
            while self.eat(b"+") || self.eat(b"-") {}
            if self.eat(b"(") {
                return self.expr() && self.eat(b")");
            }
            self.integer() && (!self.eat(b".") || self.integer())
        }

        fn integer(&mut self) -> bool {
            let digits = self.s[self.at..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            self.at += digits;
            digits > 0
        }
    }
}

// ------------------------------------------------------------------- oracles

/// A reference predicate as an (uncached, sequential) oracle.
struct Pred(Predicate);

impl Oracle<u8> for Pred {
    fn test(&mut self, candidate: &[u8]) -> bool {
        self.0.holds(candidate)
    }
}

/// Logs every question in sequential order, including those asked through
/// `first_interesting` (up to the first interesting candidate), so the log
/// matches what a sequential Python loop would have tested.
///
/// In `Batching::Sequential` mode a batch is split into single `test` calls
/// on the inner oracle (the Python semantics); in `Batching::Forward` mode
/// it is forwarded as one `first_interesting` call.
struct Log<O> {
    inner: O,
    batching: Batching,
    calls: Vec<(Vec<u8>, bool)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Batching {
    Sequential,
    Forward,
}

impl<O: Oracle<u8>> Log<O> {
    fn new(inner: O, batching: Batching) -> Self {
        Log {
            inner,
            batching,
            calls: Vec::new(),
        }
    }

    fn distinct(&self) -> u64 {
        let set: HashSet<&[u8]> = self.calls.iter().map(|(c, _)| c.as_slice()).collect();
        set.len() as u64
    }

    /// Seed 000's log format.
    fn seed_lines(&self) -> Vec<String> {
        self.calls
            .iter()
            .map(|(c, verdict)| {
                let mark = if *verdict { '+' } else { '.' };
                format!("{mark}  {} {}", String::from_utf8_lossy(c), c.len())
            })
            .collect()
    }

    /// The Fuzzing Book's trace format; `cached` = seen before.
    fn trace(&self) -> Vec<(Vec<u8>, bool, bool)> {
        let mut seen = HashSet::new();
        self.calls
            .iter()
            .map(|(c, verdict)| (c.clone(), *verdict, !seen.insert(c.as_slice())))
            .collect()
    }
}

impl<O: Oracle<u8>> Oracle<u8> for Log<O> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        let verdict = self.inner.test(candidate);
        self.calls.push((candidate.to_vec(), verdict));
        verdict
    }

    fn first_interesting(&mut self, candidates: &[Vec<u8>]) -> Option<usize> {
        if self.batching == Batching::Sequential {
            return candidates.iter().position(|c| self.test(c));
        }
        let found = self.inner.first_interesting(candidates);
        let asked = found.map_or(candidates.len(), |i| i + 1);
        for (i, c) in candidates[..asked].iter().enumerate() {
            self.calls.push((c.clone(), found == Some(i)));
        }
        found
    }
}

// ------------------------------------------------------------------ checking

/// One row of a comparison table.
struct Row {
    id: String,
    ours: String,
    reference: String,
    mismatches: Vec<String>,
}

fn show(s: &[u8]) -> String {
    let text = String::from_utf8_lossy(s);
    if text.len() > 24 {
        format!("{:?}…({})", &text[..20], s.len())
    } else {
        format!("{text:?}")
    }
}

fn print_table(title: &str, rows: &[Row]) {
    println!("\n{title}");
    println!("{:<34} {:<44} {:<44} ok", "id", "ours", "reference");
    for row in rows {
        let ok = if row.mismatches.is_empty() {
            "yes"
        } else {
            "NO"
        };
        println!("{:<34} {:<44} {:<44} {ok}", row.id, row.ours, row.reference);
    }
}

fn assert_rows(rows: &[Row], expected: usize) {
    assert_eq!(rows.len(), expected, "number of fixtures");
    let failures: Vec<String> = rows
        .iter()
        .flat_map(|r| r.mismatches.iter().map(move |m| format!("{}: {m}", r.id)))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn compare<T: PartialEq + std::fmt::Debug>(
    what: &str,
    ours: T,
    reference: T,
    out: &mut Vec<String>,
) {
    if ours != reference {
        out.push(format!("{what}: ours {ours:?}, reference {reference:?}"));
    }
}

/// Compares a seed-000 run (no cache: `calls` and `distinct` from the log).
fn check_seed_run(f: &Fixture, run: fn(&[u8], &mut Log<Pred>) -> Vec<u8>) -> Row {
    let mut log = Log::new(Pred(f.predicate), Batching::Forward);
    let result = run(&f.input, &mut log);
    let mut mismatches = Vec::new();
    compare("result", show(&result), show(&f.result), &mut mismatches);
    compare("calls", log.calls.len() as u64, f.calls, &mut mismatches);
    compare(
        "distinct",
        Some(log.distinct()),
        f.distinct,
        &mut mismatches,
    );
    if let Some(reference) = &f.log {
        compare("log", &log.seed_lines(), reference, &mut mismatches);
    }
    Row {
        id: f.id.clone(),
        ours: format!(
            "{} calls={} distinct={}",
            show(&result),
            log.calls.len(),
            log.distinct()
        ),
        reference: format!(
            "{} calls={} distinct={}",
            show(&f.result),
            f.calls,
            f.distinct.unwrap_or(0)
        ),
        mismatches,
    }
}

// --------------------------------------------------------------------- tests

#[test]
fn predicates_match_the_reference_semantics() {
    use Predicate::*;
    assert!(SelectPrefix.holds(b"<SELECT>") && SelectPrefix.holds(b"<SELECT x>y"));
    assert!(!SelectPrefix.holds(b"<SELECT") && !SelectPrefix.holds(b" <SELECT>"));
    assert!(!SelectPrefix.holds(b"<SELECT\n>"));
    assert!(BothParens.holds(b")(") && !BothParens.holds(b"(("));
    assert!(Mystery.holds(b"a(b)") && !Mystery.holds(b")()") && !Mystery.holds(b"("));
    // REFERENCE.md §3.5: '1 + 2' PASS; '1+2', '1 +  2', '(3) ', '()', ''
    // UNRESOLVED; '(3)', '-(3)', '(1.5)' FAIL.
    for valid in ["1 + 2", "(3)", "-(3)", "(1.5)", "+-1 * (2 / 3) - 4.0"] {
        assert!(expr::is_expression(valid.as_bytes()), "{valid}");
    }
    for invalid in [
        "1+2", "1 +  2", "(3) ", "()", "", "1.", ".5", "1 + ", "(1", "1)",
    ] {
        assert!(!expr::is_expression(invalid.as_bytes()), "{invalid}");
    }
    assert!(!EvalMystery.holds(b"1 + 2") && EvalMystery.holds(b"-(3)"));
    assert!(!EvalMystery.holds(b"()"));
}

#[test]
fn seed_ddmin_reproduces_reference() {
    let rows: Vec<Row> = fixtures_of(SEED_DDMIN)
        .iter()
        .map(|f| check_seed_run(f, seed_ddmin))
        .collect();
    print_table("seed 000 iterative ddmin (calls, distinct)", &rows);
    assert_rows(&rows, 11);
}

#[test]
fn seed_ddrmin_reproduces_reference() {
    let rows: Vec<Row> = fixtures_of(SEED_DDRMIN)
        .iter()
        .map(|f| check_seed_run(f, seed_ddrmin))
        .collect();
    print_table("seed 000 recursive ddrmin (calls, distinct)", &rows);
    assert_rows(&rows, 11);
}

#[test]
fn fuzzingbook_dd_reproduces_reference() {
    let rows: Vec<Row> = fixtures_of(FUZZINGBOOK_DD)
        .iter()
        .map(check_fuzzingbook_run)
        .collect();
    print_table(
        "fuzzingbook DeltaDebuggingReducer (tests = cache misses, calls)",
        &rows,
    );
    assert_rows(&rows, 24);
}

/// Compares a `DeltaDebuggingReducer` run: the oracle is cached like the
/// book's `CachingReducer`; `tests` = executions, `calls` = all questions.
fn check_fuzzingbook_run(f: &Fixture) -> Row {
    let mut log = Log::new(Cached::new(Pred(f.predicate)), Batching::Sequential);
    let result = fuzzingbook_dd(&f.input, &mut log);
    let stats = log.inner.stats();
    let mut mismatches = Vec::new();
    compare("result", show(&result), show(&f.result), &mut mismatches);
    compare("tests", Some(stats.executed), f.tests, &mut mismatches);
    compare("calls", stats.calls, f.calls, &mut mismatches);
    compare(
        "logged calls",
        log.calls.len() as u64,
        f.calls,
        &mut mismatches,
    );
    if let Some(reference) = &f.trace {
        compare("trace", &log.trace(), reference, &mut mismatches);
    }
    Row {
        id: f.id.clone(),
        ours: format!(
            "{} tests={} calls={}",
            show(&result),
            stats.executed,
            stats.calls
        ),
        reference: format!(
            "{} tests={} calls={}",
            show(&f.result),
            f.tests.unwrap_or(0),
            f.calls
        ),
        mismatches,
    }
}

/// The same runs with batches forwarded to `Cached::first_interesting` (the
/// production path): the questions, answers and executions must be the
/// same as the sequential ones (`Cached` sends a candidate repeated within a
/// batch only once).
#[test]
fn fuzzingbook_dd_batched_through_cache_asks_the_same_questions() {
    let rows: Vec<Row> = fixtures_of(FUZZINGBOOK_DD)
        .iter()
        .map(|f| {
            let mut log = Log::new(Cached::new(Pred(f.predicate)), Batching::Forward);
            let result = fuzzingbook_dd(&f.input, &mut log);
            let stats = log.inner.stats();
            let reference_tests = f.tests.expect("DD fixtures have tests");
            let mut mismatches = Vec::new();
            compare("result", show(&result), show(&f.result), &mut mismatches);
            compare("calls", stats.calls, f.calls, &mut mismatches);
            compare(
                "logged calls",
                log.calls.len() as u64,
                f.calls,
                &mut mismatches,
            );
            if let Some(reference) = &f.trace {
                compare("trace", &log.trace(), reference, &mut mismatches);
            }
            compare("executed", stats.executed, reference_tests, &mut mismatches);
            Row {
                id: f.id.clone(),
                ours: format!("calls={} executed={}", stats.calls, stats.executed),
                reference: format!("calls={} tests={reference_tests}", f.calls),
                mismatches,
            }
        })
        .collect();
    print_table(
        "fuzzingbook DeltaDebuggingReducer, batched through Cached",
        &rows,
    );
    assert_rows(&rows, 24);
}

#[test]
fn crate_reducers_on_reference_inputs() {
    let all = fixtures();
    let mut seen = HashSet::new();
    let mut rows = Vec::new();
    for f in &all {
        if !seen.insert((&f.input, f.predicate)) {
            continue;
        }
        let reference = all
            .iter()
            .filter(|g| g.input == f.input && g.predicate == f.predicate)
            .map(|g| {
                format!(
                    "{}={}",
                    short_name(&g.algorithm),
                    g.tests.unwrap_or(g.calls)
                )
            })
            .collect::<Vec<_>>()
            .join(" ");
        let zeller = run_cached(f, ddmin);
        let pipeline = run_cached(f, reduce_bytes);
        rows.push((f.id.clone(), zeller, pipeline, reference));
    }
    println!(
        "\ncrate reducers on the reference inputs (executed tests; reference: tests or calls)"
    );
    println!(
        "{:<30} {:<32} {:<32} reference",
        "first id", "ddmin", "reduce_bytes"
    );
    for (id, zeller, pipeline, reference) in &rows {
        println!("{id:<30} {zeller:<32} {pipeline:<32} {reference}");
    }
    assert_eq!(rows.len(), 35, "distinct (input, predicate) pairs");
}

fn short_name(algorithm: &str) -> &str {
    match algorithm {
        SEED_DDMIN => "seed-ddmin",
        SEED_DDRMIN => "ddrmin",
        _ => "book-dd",
    }
}

/// Runs a crate reducer behind a cache, asserts its result is interesting,
/// not larger and 1-minimal, and describes result and executed tests.
fn run_cached(f: &Fixture, run: fn(&[u8], &mut Cached<u8, Pred>) -> Vec<u8>) -> String {
    let mut cached = Cached::new(Pred(f.predicate));
    let result = run(&f.input, &mut cached);
    assert!(
        f.predicate.holds(&result),
        "{}: {} not interesting",
        f.id,
        show(&result)
    );
    assert!(result.len() <= f.input.len(), "{}: result grew", f.id);
    for i in 0..result.len() {
        let mut smaller = result.clone();
        smaller.remove(i);
        assert!(
            !f.predicate.holds(&smaller),
            "{}: {} not 1-minimal",
            f.id,
            show(&result)
        );
    }
    format!("{} {}", show(&result), cached.stats().executed)
}
