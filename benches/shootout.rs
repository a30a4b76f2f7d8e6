//! The Big Reduction Shoot-Out (Fuzzing Book, "Reducing Failure-Inducing
//! Inputs", exercise 3): byte-level delta debugging against grammar-based
//! reducers, on inputs generated from the shipped grammars.
//!
//! * Inputs: random derivations of the `expr`, `json`, `ini` and `csv`
//!   grammars ([`reduce_crash::grammar::generate`], the Fuzzing Book's
//!   `GrammarFuzzer` scheme, seeded), three size classes per grammar
//!   (about 200–600, 600–1500 and 1500–3500 bytes).
//! * Tests: an input is *unresolved* (not interesting) when the Earley
//!   parser rejects it; it *fails* (interesting) when its derivation
//!   contains the given symbols / terminals (one, a pair or a triple);
//!   otherwise it *passes* (not interesting).
//! * Reducers: byte `ddmin`, the default byte pipeline `reduce_bytes`, and
//!   the tree strategies (HDD, Perses, the book's GrammarReducer plain and
//!   depth-oriented, GTR, reduction by production, and the `grammar`
//!   pipeline).
//!
//! Every run gets a fresh `Cached` oracle (tests = distinct candidates
//! executed) behind a budget of `SHOOTOUT_BUDGET` tests (default 20,000);
//! runs that hit it are marked `capped`. Each predicate runs on one input of
//! its grammar (the size classes rotate); `SHOOTOUT_ALL=1` runs every
//! predicate on every input where it holds.
//!
//! `SHOOTOUT_GRAMMARS=expr,json` restricts the grammars;
//! `SHOOTOUT_PROBE=NAME` only prints generated input sizes per generator
//! bound (for tuning).
//!
//! Run with `cargo bench --bench shootout`.

use std::time::{Duration, Instant};

use reduce_crash::grammar::generate::{GenerateConfig, Generator, Rng};
use reduce_crash::grammar::load::builtin_grammar;
use reduce_crash::grammar::reduce::TreeStrategy;
use reduce_crash::grammar::{Grammar, Parser, Tree};
use reduce_crash::reduce::oracle::{Cached, Oracle};

// ---------------------------------------------------------------- predicates

/// Something that can occur in a derivation tree.
#[derive(Debug, Clone)]
enum Feature {
    /// A node of this nonterminal.
    Sym(&'static str),
    /// A node of this nonterminal using this expansion (index in the rule).
    Exp(&'static str, usize),
    /// A terminal leaf with exactly these bytes.
    Leaf(&'static [u8]),
    /// The feature below a node of this nonterminal.
    Within(&'static str, Box<Feature>),
}

impl Feature {
    fn occurs(&self, tree: &Tree) -> bool {
        let Tree::Node {
            symbol,
            expansion,
            children,
        } = tree
        else {
            return matches!((self, tree), (Feature::Leaf(b), Tree::Leaf(l)) if l == b);
        };
        let here = match self {
            Feature::Sym(s) => symbol == s,
            Feature::Exp(s, k) => symbol == s && expansion == k,
            Feature::Within(s, inner) => symbol == s && children.iter().any(|c| inner.occurs(c)),
            Feature::Leaf(_) => false,
        };
        here || children.iter().any(|c| self.occurs(c))
    }

    /// Panics when the feature names a symbol the grammar lacks (a typo
    /// would make the predicate silently false).
    fn check(&self, grammar: &Grammar) {
        match self {
            Feature::Sym(s) => assert!(grammar.rules.contains_key(*s), "{s}"),
            Feature::Exp(s, k) => assert!(
                grammar.rules.get(*s).is_some_and(|r| *k < r.len()),
                "{s} #{k}"
            ),
            Feature::Within(s, inner) => {
                assert!(grammar.rules.contains_key(*s), "{s}");
                inner.check(grammar);
            }
            Feature::Leaf(_) => {}
        }
    }
}

/// FAIL when all features occur (one, a pair or a triple).
struct Predicate {
    name: &'static str,
    all: Vec<Feature>,
}

impl Predicate {
    fn holds(&self, tree: &Tree) -> bool {
        self.all.iter().all(|f| f.occurs(tree))
    }
}

fn predicates(grammar: &str) -> Vec<Predicate> {
    use Feature::*;
    let p = |name, all| Predicate { name, all };
    match grammar {
        "expr" => vec![
            p("parenthesised `(`…`)`", vec![Exp("<factor>", 2)]),
            p("division", vec![Exp("<term>", 1)]),
            p("unary minus", vec![Exp("<factor>", 1)]),
            p("decimal point", vec![Exp("<factor>", 3)]),
            p(
                "pair: division + unary minus",
                vec![Exp("<term>", 1), Exp("<factor>", 1)],
            ),
            p(
                "triple: parens + `*` + `-` (binary)",
                vec![Exp("<factor>", 2), Exp("<term>", 0), Exp("<expr>", 1)],
            ),
            p(
                "division inside parens",
                vec![Within("<factor>", Box::new(Exp("<term>", 1)))],
            ),
        ],
        "json" => vec![
            p(
                "object inside an array",
                vec![Within("<array>", Box::new(Sym("<object>")))],
            ),
            p(
                "string with an escape",
                vec![Within("<string>", Box::new(Sym("<escape>")))],
            ),
            p("`true`", vec![Leaf(b"true")]),
            p("number with exponent", vec![Sym("<exp>")]),
            p(
                "pair: `null` + fraction",
                vec![Leaf(b"null"), Sym("<frac>")],
            ),
            p(
                "triple: `false` + `\\u` escape + empty array",
                vec![Leaf(b"false"), Exp("<escape>", 1), Exp("<array>", 0)],
            ),
        ],
        "ini" => vec![
            p("section header", vec![Sym("<section>")]),
            p(
                "comment after a section header",
                vec![Within("<section>", Box::new(Sym("<comment>")))],
            ),
            p(
                "pair: key=value line + comment line",
                vec![Sym("<pair>"), Sym("<comment>")],
            ),
            p("CRLF line end", vec![Leaf(b"\r\n")]),
        ],
        "csv" => vec![
            p("quoted field", vec![Sym("<quoted>")]),
            p("doubled quote `\"\"` in a field", vec![Exp("<qchar>", 1)]),
            p(
                "pair: CRLF + quoted field",
                vec![Leaf(b"\r\n"), Sym("<quoted>")],
            ),
            p(
                "triple: CRLF + LF + `\"\"`",
                vec![Leaf(b"\r\n"), Leaf(b"\n"), Exp("<qchar>", 1)],
            ),
        ],
        _ => unreachable!(),
    }
}

// ------------------------------------------------------------------- oracles

/// The test: unresolved (false) when the input does not parse, fail (true)
/// when the predicate holds on its derivation, pass (false) otherwise.
struct Test<'a> {
    parser: &'a Parser,
    predicate: &'a Predicate,
    unresolved: u64,
}

impl Oracle<u8> for Test<'_> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        match self.parser.parse(candidate) {
            Ok(tree) => self.predicate.holds(&tree),
            Err(_) => {
                self.unresolved += 1;
                false
            }
        }
    }
}

/// Answers `false` to everything after `limit` tests, and says so.
struct Budget<O> {
    inner: O,
    limit: u64,
    used: u64,
}

impl<O: Oracle<u8>> Oracle<u8> for Budget<O> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        if self.used >= self.limit {
            return false;
        }
        self.used += 1;
        self.inner.test(candidate)
    }

    fn exhausted(&self) -> bool {
        self.used >= self.limit
    }
}

// ------------------------------------------------------------------ reducers

#[derive(Debug, Clone, Copy, PartialEq)]
enum Reducer {
    Ddmin,
    ReduceBytes,
    Tree(TreeStrategy),
}

impl Reducer {
    const ALL: [Reducer; 9] = [
        Reducer::Ddmin,
        Reducer::ReduceBytes,
        Reducer::Tree(TreeStrategy::Hdd),
        Reducer::Tree(TreeStrategy::Perses),
        Reducer::Tree(TreeStrategy::GrammarReducer),
        Reducer::Tree(TreeStrategy::GrammarReducerDepth),
        Reducer::Tree(TreeStrategy::Gtr),
        Reducer::Tree(TreeStrategy::Production),
        Reducer::Tree(TreeStrategy::Grammar),
    ];

    fn name(&self) -> &'static str {
        match self {
            Reducer::Ddmin => "ddmin (bytes)",
            Reducer::ReduceBytes => "reduce_bytes",
            Reducer::Tree(s) => s.name(),
        }
    }
}

struct Run {
    tests: u64,
    unresolved: u64,
    invalid: Option<u64>,
    bytes: Vec<u8>,
    time: Duration,
    capped: bool,
    /// Tests `Cached` counted as executed that the exhausted budget
    /// answered without running the predicate (the rest of a batch).
    refused: u64,
    interesting: bool,
}

fn run(
    reducer: Reducer,
    grammar: &Grammar,
    parser: &Parser,
    predicate: &Predicate,
    tree: &Tree,
    budget: u64,
) -> Run {
    let input = tree.to_bytes();
    let test = Test {
        parser,
        predicate,
        unresolved: 0,
    };
    let mut oracle = Cached::new(Budget {
        inner: test,
        limit: budget,
        used: 0,
    });
    let start = Instant::now();
    let (bytes, invalid) = match reducer {
        Reducer::Ddmin => (reduce_crash::reduce::ddmin(&input, &mut oracle), None),
        Reducer::ReduceBytes => (
            reduce_crash::reduce::reduce_bytes(&input, &mut oracle),
            None,
        ),
        Reducer::Tree(strategy) => {
            let r = strategy.run(grammar, tree, &mut oracle);
            assert_eq!(
                r.tree_tests + r.polish_tests,
                oracle.stats().executed,
                "{strategy}: tree + polish tests = executed"
            );
            (r.bytes, Some(r.invalid_candidates))
        }
    };
    let time = start.elapsed();
    let capped = oracle.exhausted();
    let tests = oracle.stats().executed;
    let unresolved = oracle.inner().inner.unresolved;
    let refused = tests - oracle.inner().used;
    let interesting = parser.parse(&bytes).is_ok_and(|t| predicate.holds(&t));
    Run {
        tests,
        unresolved,
        invalid,
        bytes,
        time,
        capped,
        refused,
        interesting,
    }
}

// -------------------------------------------------------------------- inputs

const SIZE_CLASSES: [(usize, usize); 3] = [(300, 800), (800, 2000), (2000, 4000)];

/// Random derivations of `grammar` whose bytes fall in `lo..=hi`, in seed
/// order, adapting the generator's nonterminal bounds to the size.
fn inputs_in_range<'a>(
    generator: &'a Generator<'a>,
    parser: &'a Parser,
    lo: usize,
    hi: usize,
    seed_base: u64,
) -> impl Iterator<Item = (u64, Tree)> + 'a {
    let mut max_nt = 8.0f64;
    let mut seed = seed_base;
    std::iter::from_fn(move || {
        for _ in 0..3_000 {
            seed += 1;
            let config = GenerateConfig {
                min_nonterminals: (max_nt / 2.0) as usize,
                max_nonterminals: max_nt as usize,
                max_expansions: 50_000,
                max_depth: 150,
            };
            let tree = generator
                .generate(&mut Rng::new(seed), &config)
                .expect("shipped grammars are productive");
            let bytes = tree.to_bytes();
            if bytes.len() < lo {
                max_nt = (max_nt * 1.1).min(5_000.0);
            } else if bytes.len() > hi {
                max_nt = (max_nt / 1.1).max(2.0);
            } else {
                // Reduce the parser's derivation (the generator's tree is a
                // derivation too, but the target sees bytes).
                let parsed = parser.parse(&bytes).expect("generated inputs parse");
                return Some((seed, parsed));
            }
        }
        None
    })
}

// -------------------------------------------------------------------- output

fn shown(bytes: &[u8], max: usize) -> String {
    let mut s = String::new();
    for &b in bytes.iter().take(max) {
        match b {
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            b'|' => s.push_str("\\|"),
            b'`' => s.push('\''),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    if bytes.len() > max {
        s.push('…');
    }
    format!("`{s}`")
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 10.0 {
        format!("{ms:.2}")
    } else {
        format!("{ms:.0}")
    }
}

fn median(mut v: Vec<usize>) -> f64 {
    v.sort_unstable();
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2] as f64
    } else {
        (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0
    }
}

struct Case {
    grammar: &'static str,
    predicate: &'static str,
    seed: u64,
    input_len: usize,
    runs: Vec<Run>,
}

fn main() {
    let budget: u64 = std::env::var("SHOOTOUT_BUDGET")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let all = std::env::var("SHOOTOUT_ALL").is_ok_and(|v| v == "1");
    let grammars: Vec<&'static str> = match std::env::var("SHOOTOUT_GRAMMARS") {
        Ok(list) => ["expr", "json", "ini", "csv"]
            .into_iter()
            .filter(|g| list.split(',').any(|x| x == *g))
            .collect(),
        Err(_) => vec!["expr", "json", "ini", "csv"],
    };
    let total_start = Instant::now();
    if let Ok(g) = std::env::var("SHOOTOUT_PROBE") {
        let grammar = builtin_grammar(&g).expect("shipped");
        let generator = Generator::new(&grammar);
        for max_nt in [4usize, 8, 16, 32, 64, 128, 256, 512] {
            let sizes: Vec<usize> = (0..12u64)
                .map(|seed| {
                    let config = GenerateConfig {
                        min_nonterminals: max_nt / 2,
                        max_nonterminals: max_nt,
                        max_expansions: 50_000,
                        max_depth: 150,
                    };
                    generator
                        .generate(&mut Rng::new(seed), &config)
                        .unwrap()
                        .to_bytes()
                        .len()
                })
                .collect();
            println!("{max_nt}: {sizes:?}");
        }
        return;
    }
    let mut cases: Vec<Case> = Vec::new();

    println!("# The Big Reduction Shoot-Out\n");
    println!(
        "Budget {budget} tests per run (`capped` = hit it); tests = distinct candidates executed \
         (`Cached` misses); unres. = tests the Earley parser rejected (UNRESOLVED); \
         inv. = invalid candidate trees (tree reducers; expected 0).\n"
    );
    for &gname in &grammars {
        let grammar = builtin_grammar(gname).expect("shipped");
        let parser = Parser::new(&grammar).expect("valid grammar");
        let generator = Generator::new(&grammar);
        let preds = predicates(gname);
        preds
            .iter()
            .flat_map(|p| &p.all)
            .for_each(|f| f.check(&grammar));

        // Three inputs per size class candidates; each size class picks the
        // first input where the most predicates hold (ideally all).
        let mut inputs: Vec<(u64, Tree)> = Vec::new();
        for (c, &(lo, hi)) in SIZE_CLASSES.iter().enumerate() {
            let mut best: Option<(usize, u64, Tree)> = None;
            for (seed, tree) in
                inputs_in_range(&generator, &parser, lo, hi, 1000 * c as u64).take(60)
            {
                let holds = preds.iter().filter(|p| p.holds(&tree)).count();
                if best.as_ref().is_none_or(|b| holds > b.0) {
                    best = Some((holds, seed, tree));
                }
                if holds == preds.len() {
                    break;
                }
            }
            match best {
                Some((_, seed, tree)) => inputs.push((seed, tree)),
                None => println!("(no `{gname}` input of {lo}–{hi} bytes generated)"),
            }
        }
        println!(
            "`{gname}` inputs (seed: bytes): {}",
            inputs
                .iter()
                .map(|(s, t)| format!("{s}: {}", t.to_bytes().len()))
                .collect::<Vec<_>>()
                .join(", ")
        );

        for (k, predicate) in preds.iter().enumerate() {
            // The inputs this predicate runs on.
            let chosen: Vec<usize> = if all {
                (0..inputs.len())
                    .filter(|&i| predicate.holds(&inputs[i].1))
                    .collect()
            } else {
                (0..inputs.len())
                    .map(|j| (k + j) % inputs.len())
                    .find(|&i| predicate.holds(&inputs[i].1))
                    .into_iter()
                    .collect()
            };
            if chosen.is_empty() {
                println!("(no input for `{gname}` / {})", predicate.name);
                continue;
            }
            for i in chosen {
                let (seed, tree) = &inputs[i];
                let runs = Reducer::ALL
                    .iter()
                    .map(|&r| run(r, &grammar, &parser, predicate, tree, budget))
                    .collect();
                cases.push(Case {
                    grammar: gname,
                    predicate: predicate.name,
                    seed: *seed,
                    input_len: tree.to_bytes().len(),
                    runs,
                });
                eprintln!(
                    "done: {gname} / {} ({} s)",
                    predicate.name,
                    total_start.elapsed().as_secs()
                );
            }
        }
    }

    // ----- per case
    println!("\n## Per case\n");
    println!("| # | grammar | predicate | input (B) | reducer | tests | unres. | inv. | result (B) | time (ms) | result | note |");
    println!("|---:|---|---|---:|---|---:|---:|---:|---:|---:|---|---|");
    for (n, case) in cases.iter().enumerate() {
        for (reducer, r) in Reducer::ALL.iter().zip(&case.runs) {
            let mut notes = Vec::new();
            if r.capped {
                notes.push(format!("capped ({} answered `false` unrun)", r.refused));
            }
            if !r.interesting {
                notes.push("NOT INTERESTING".to_string());
            }
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                n + 1,
                case.grammar,
                case.predicate,
                case.input_len,
                reducer.name(),
                r.tests,
                r.unresolved,
                r.invalid.map_or("–".to_string(), |i| i.to_string()),
                r.bytes.len(),
                ms(r.time),
                shown(&r.bytes, 40),
                notes.join(", ")
            );
        }
    }

    // ----- pivot: result size (tests) per case and reducer
    println!("\n## Result bytes (tests) per case\n");
    print!("| # | case | input (B) |");
    for r in Reducer::ALL {
        print!(" {} |", r.name());
    }
    println!();
    print!("|---:|---|---:|");
    for _ in Reducer::ALL {
        print!("---:|");
    }
    println!();
    for (n, case) in cases.iter().enumerate() {
        let best = case.runs.iter().map(|r| r.bytes.len()).min().unwrap_or(0);
        print!(
            "| {} | {}: {} (seed {}) | {} |",
            n + 1,
            case.grammar,
            case.predicate,
            case.seed,
            case.input_len
        );
        for r in &case.runs {
            let size = if r.bytes.len() == best {
                format!("**{}**", r.bytes.len())
            } else {
                r.bytes.len().to_string()
            };
            let cap = if r.capped { "\\*" } else { "" };
            print!(" {size} ({}{cap}) |", r.tests);
        }
        println!();
    }
    println!("\n(**bold**: smallest result of the case; \\* capped at {budget} tests)");

    // ----- summary per reducer
    println!("\n## Summary ({} cases)\n", cases.len());
    println!("| reducer | total tests | unresolved tests | median result (B) | total result (B) | smallest-result cases | capped | invalid candidates | not interesting | total time (s) |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (j, reducer) in Reducer::ALL.iter().enumerate() {
        let runs: Vec<&Run> = cases.iter().map(|c| &c.runs[j]).collect();
        let tests: u64 = runs.iter().map(|r| r.tests).sum();
        let unres: u64 = runs.iter().map(|r| r.unresolved).sum();
        let sizes: Vec<usize> = runs.iter().map(|r| r.bytes.len()).collect();
        let wins = cases
            .iter()
            .filter(|c| {
                c.runs[j].bytes.len() == c.runs.iter().map(|r| r.bytes.len()).min().unwrap()
            })
            .count();
        let capped = runs.iter().filter(|r| r.capped).count();
        let invalid = match reducer {
            Reducer::Tree(_) => runs
                .iter()
                .map(|r| r.invalid.unwrap_or(0))
                .sum::<u64>()
                .to_string(),
            _ => "–".to_string(),
        };
        let bad = runs.iter().filter(|r| !r.interesting).count();
        let time: Duration = runs.iter().map(|r| r.time).sum();
        println!(
            "| {} | {tests} | {unres} ({:.0}%) | {} | {} | {wins} | {capped} | {invalid} | {bad} | {:.2} |",
            reducer.name(),
            100.0 * unres as f64 / tests.max(1) as f64,
            median(sizes.clone()),
            sizes.iter().sum::<usize>(),
            time.as_secs_f64()
        );
    }
    println!(
        "\nTotal wall time {:.1} s (generation, parsing and reductions).",
        total_start.elapsed().as_secs_f64()
    );
}
