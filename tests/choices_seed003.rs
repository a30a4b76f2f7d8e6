//! Seed 003 ported: generator-based ("internal") reduction of the choice
//! sequence of an assignment-language generator, compared with the seed's
//! choice-sequence ddmin (reference `REFERENCE.md` §1 row 8, §2d; data in
//! `tests/data/reference_fixtures.json`, ids `s003-choices-*`; script
//! `/work/shared/reference/scripts/s003_choices.py`).
//!
//! The generator is the seed's `ChoiceFuzzer` (`ComplexFuzzer` over
//! `LimitFuzzer`, with `super().__init__` as the reference completes it):
//! depth-first, every expansion of a nonterminal consumes one choice `i` and
//! takes `rules[i % len(rules)]`; beyond `max_depth` = 10 only the
//! cheapest rules remain (costs computed exactly as `LimitFuzzer` does);
//! a right-hand-side `<var>` picks among the variables defined by finished
//! assignments, consuming a choice only if there is one (else it emits
//! `00`).
//!
//! **Byte encoding of choices.** Each choice is one byte.
//! * `lf` (plain): choice `v` is byte `v`; `rules[byte % len]`.
//! * `lfm` (NOP, `lfm.py`): choice `-1` ("use the symbol's default text":
//!   `a=0;\n` for `<start>`/`<assignments>`, `a=0` for `<assign>`, `0` for
//!   `<expr>`/`<digit>`/`<var>`, `000` for a used variable; the default
//!   consumes that one choice) is byte **0**, and choice `v ≥ 0` is byte
//!   `v + 1`, read as `rules[(byte - 1) % len]`. The NOP is thus the
//!   simplest byte, the one a shrinker reaches by zeroing.
//!
//! **Running out of choices.** `Python`: `IndexError` → no string →
//! uninteresting, as in the seed. `ZeroFill`: like `arbitrary::Unstructured`,
//! missing bytes read as 0 (choice 0 for `lf`, the NOP for `lfm`).
//!
//! Run with `--nocapture` to see the comparison table.

use reduce_crash::reduce::oracle::{Cached, Oracle, Span};
use reduce_crash::reduce::{probe_spans, shrink_choices};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

// ------------------------------------------------------------------ grammar

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Nt {
    Start,
    Assignments,
    Assign,
    Expr,
    Digit,
    Var,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Text(&'static str),
    Sym(Nt),
    /// `(';\n', {'post': sync})`: the terminal, then the variables of the
    /// finished assignment become usable.
    Sync,
    /// `('<var>', {'post': defining_var})`.
    DefVar,
    /// `('<var>', {'pre': defined_var})`.
    UseVar,
}

impl Nt {
    const ALL: [Nt; 6] = [
        Nt::Start,
        Nt::Assignments,
        Nt::Assign,
        Nt::Expr,
        Nt::Digit,
        Nt::Var,
    ];

    fn name(self) -> &'static str {
        match self {
            Nt::Start => "<start>",
            Nt::Assignments => "<assignments>",
            Nt::Assign => "<assign>",
            Nt::Expr => "<expr>",
            Nt::Digit => "<digit>",
            Nt::Var => "<var>",
        }
    }

    /// `lfm.py`'s `self.default`.
    fn default_text(self) -> &'static str {
        match self {
            Nt::Start | Nt::Assignments => "a=0;\n",
            Nt::Assign => "a=0",
            Nt::Expr | Nt::Digit | Nt::Var => "0",
        }
    }
}

const LETTERS: [&str; 26] = [
    "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s",
    "t", "u", "v", "w", "x", "y", "z",
];

/// `assignment_grammar` with its `pre`/`post` functions.
fn rules(nt: Nt) -> Vec<Vec<Tok>> {
    use Tok::*;
    match nt {
        Nt::Start => vec![vec![Sym(Nt::Assignments)]],
        Nt::Assignments => vec![
            vec![Sym(Nt::Assign), Sync],
            vec![Sym(Nt::Assign), Sync, Sym(Nt::Assignments)],
        ],
        Nt::Assign => vec![vec![DefVar, Text(" = "), Sym(Nt::Expr)]],
        Nt::Expr => vec![
            vec![Sym(Nt::Expr), Text(" + "), Sym(Nt::Expr)],
            vec![Sym(Nt::Expr), Text(" - "), Sym(Nt::Expr)],
            vec![Text("("), Sym(Nt::Expr), Text(")")],
            vec![UseVar],
            vec![Sym(Nt::Digit)],
        ],
        Nt::Digit => vec![vec![Text("0")], vec![Text("1")]],
        Nt::Var => LETTERS.iter().map(|l| vec![Text(l)]).collect(),
    }
}

/// The symbol a token stands for in the `cfg_rule` view (tuples replaced
/// by their token), `None` for terminals.
fn cfg_symbol(tok: Tok) -> Option<Nt> {
    match tok {
        Tok::Sym(nt) => Some(nt),
        Tok::DefVar | Tok::UseVar => Some(Nt::Var),
        Tok::Text(_) | Tok::Sync => None,
    }
}

/// `LimitFuzzer.compute_cost` over the `cfg` grammar, including its
/// `key_cost` memo (shared across all rules, and caching `inf` for a symbol
/// met while it is being costed): per nonterminal, the cost of each rule.
fn compute_cost() -> HashMap<Nt, Vec<f64>> {
    fn symbol_cost(symbol: Nt, seen: &HashSet<Nt>, memo: &mut HashMap<Nt, f64>) -> f64 {
        if let Some(&c) = memo.get(&symbol) {
            return c;
        }
        if seen.contains(&symbol) {
            memo.insert(symbol, f64::INFINITY);
            return f64::INFINITY;
        }
        let mut inner = seen.clone();
        inner.insert(symbol);
        // Python's `min(generator, default=0)` evaluates every rule.
        let costs: Vec<f64> = rules(symbol)
            .iter()
            .map(|rule| expansion_cost(rule, &inner, memo))
            .collect();
        let v = costs.into_iter().reduce(f64::min).unwrap_or(0.0);
        memo.insert(symbol, v);
        v
    }
    fn expansion_cost(rule: &[Tok], seen: &HashSet<Nt>, memo: &mut HashMap<Nt, f64>) -> f64 {
        let costs: Vec<f64> = rule
            .iter()
            .filter_map(|&t| cfg_symbol(t))
            .map(|s| symbol_cost(s, seen, memo))
            .collect();
        costs.into_iter().reduce(f64::max).unwrap_or(0.0) + 1.0
    }
    let mut memo = HashMap::new();
    let mut cost = HashMap::new();
    for nt in Nt::ALL {
        let per_rule = rules(nt)
            .iter()
            .map(|rule| expansion_cost(rule, &HashSet::new(), &mut memo))
            .collect();
        cost.insert(nt, per_rule);
    }
    cost
}

/// The grammar with, per nonterminal, the rule list used beyond
/// `max_depth`: the minimum-cost rules in their original order (a stable
/// sort by cost, then `c == clst[0][0]`).
struct Grammar {
    rules: HashMap<Nt, Vec<Vec<Tok>>>,
    cheapest: HashMap<Nt, Vec<usize>>,
}

impl Grammar {
    fn new() -> Grammar {
        let cost = compute_cost();
        let mut cheapest = HashMap::new();
        for nt in Nt::ALL {
            let c = &cost[&nt];
            let min = c.iter().copied().fold(f64::INFINITY, f64::min);
            cheapest.insert(nt, (0..c.len()).filter(|&i| c[i] == min).collect());
        }
        Grammar {
            rules: Nt::ALL.iter().map(|&nt| (nt, rules(nt))).collect(),
            cheapest,
        }
    }
}

// ------------------------------------------------------------------ generator

const MAX_DEPTH: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// `lf.py`: plain choices.
    Lf,
    /// `lfm.py`: byte 0 is the NOP (`-1`).
    Lfm,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Lf => "lf",
            Variant::Lfm => "lfm",
        }
    }

    /// The byte for a reference choice.
    fn encode(self, choice: i64) -> u8 {
        let byte = match self {
            Variant::Lf => choice,
            Variant::Lfm => choice + 1,
        };
        u8::try_from(byte).unwrap_or_else(|_| panic!("choice {choice} has no byte in {self:?}"))
    }

    /// The reference choice for a byte.
    fn decode(self, byte: u8) -> i64 {
        match self {
            Variant::Lf => i64::from(byte),
            Variant::Lfm => i64::from(byte) - 1,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exhaust {
    /// `IndexError` → `None` → uninteresting.
    Python,
    /// Missing bytes read as 0.
    ZeroFill,
}

/// The sequence ran out of choices.
struct RanOut;

struct Generator<'a> {
    grammar: &'a Grammar,
    bytes: &'a [u8],
    variant: Variant,
    exhaust: Exhaust,
    /// Choices read so far (zero-filled ones included).
    read: usize,
    vars: Vec<String>,
    pending: Vec<String>,
}

impl Generator<'_> {
    /// `ChoiceSeq.choice`: `None` means the NOP default.
    fn choose(&mut self, n: usize) -> Result<Option<usize>, RanOut> {
        let byte = match self.bytes.get(self.read) {
            Some(&b) => b,
            None if self.exhaust == Exhaust::ZeroFill => 0,
            None => return Err(RanOut),
        };
        self.read += 1;
        Ok(match self.variant {
            Variant::Lf => Some(usize::from(byte) % n),
            Variant::Lfm if byte == 0 => None,
            Variant::Lfm => Some(usize::from(byte - 1) % n),
        })
    }

    fn gen_key(&mut self, nt: Nt, depth: usize) -> Result<String, RanOut> {
        let all = &self.grammar.rules[&nt];
        let candidates: Vec<usize> = if depth > MAX_DEPTH {
            self.grammar.cheapest[&nt].clone()
        } else {
            (0..all.len()).collect()
        };
        match self.choose(candidates.len())? {
            None => Ok(nt.default_text().to_string()),
            Some(i) => self.gen_rule(&all[candidates[i]], depth + 1),
        }
    }

    fn gen_rule(&mut self, rule: &[Tok], depth: usize) -> Result<String, RanOut> {
        let mut out = String::new();
        for &tok in rule {
            match tok {
                Tok::Text(t) => out.push_str(t),
                Tok::Sym(nt) => out += &self.gen_key(nt, depth)?,
                Tok::Sync => {
                    out.push_str(";\n");
                    self.vars.append(&mut self.pending);
                }
                Tok::DefVar => {
                    let var = self.gen_key(Nt::Var, depth)?;
                    out += &var;
                    self.pending.push(var);
                }
                Tok::UseVar => {
                    if self.vars.is_empty() {
                        out.push_str("00");
                    } else {
                        match self.choose(self.vars.len())? {
                            None => out.push_str("000"),
                            Some(i) => out += &self.vars[i].clone(),
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The string generated from `bytes`, and how many choices were read.
fn generate(
    grammar: &Grammar,
    bytes: &[u8],
    variant: Variant,
    exhaust: Exhaust,
) -> Option<(String, usize)> {
    let mut g = Generator {
        grammar,
        bytes,
        variant,
        exhaust,
        read: 0,
        vars: Vec::new(),
        pending: Vec::new(),
    };
    let s = g.gen_key(Nt::Start, 0).ok()?;
    Some((s, g.read))
}

/// The seed's predicate.
fn has_double_parens(s: &str) -> bool {
    s.contains("((") && s.contains("))")
}

/// What the probing spans oracle compares: the generated string as a
/// `Debug` list of tokens (letters, digit runs, punctuation).
fn render(grammar: &Grammar, bytes: &[u8], variant: Variant, exhaust: Exhaust) -> Option<String> {
    let (s, _) = generate(grammar, bytes, variant, exhaust)?;
    let mut tokens: Vec<String> = Vec::new();
    let mut previous_digit = false;
    for c in s.chars().filter(|c| !c.is_whitespace()) {
        if c.is_ascii_digit() && previous_digit {
            tokens.last_mut().unwrap().push(c);
        } else {
            tokens.push(c.to_string());
        }
        previous_digit = c.is_ascii_digit();
    }
    Some(format!("{tokens:?}"))
}

// ------------------------------------------------------------------ oracle

/// The predicate over generated strings, counting round trips (one per
/// `test`, one per `first_interesting` batch) and decodes spent on spans.
struct SeedOracle<'a> {
    grammar: &'a Grammar,
    variant: Variant,
    exhaust: Exhaust,
    with_spans: bool,
    round_trips: u64,
    probe_decodes: u64,
}

impl SeedOracle<'_> {
    fn holds(&self, bytes: &[u8]) -> bool {
        generate(self.grammar, bytes, self.variant, self.exhaust)
            .is_some_and(|(s, _)| has_double_parens(&s))
    }
}

impl Oracle<u8> for SeedOracle<'_> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        self.round_trips += 1;
        self.holds(candidate)
    }

    fn first_interesting(&mut self, candidates: &[Vec<u8>]) -> Option<usize> {
        self.round_trips += 1;
        candidates.iter().position(|c| self.holds(c))
    }

    fn spans(&mut self, candidate: &[u8]) -> Option<Vec<Span>> {
        if !self.with_spans {
            return None;
        }
        let (grammar, variant, exhaust) = (self.grammar, self.variant, self.exhaust);
        let mut decodes = 0;
        let spans = probe_spans(candidate, |b| {
            decodes += 1;
            render(grammar, b, variant, exhaust)
        });
        self.probe_decodes += decodes;
        Some(spans)
    }
}

struct Outcome {
    bytes: Vec<u8>,
    string: String,
    /// Choices the generator read (zero-filled ones included).
    choices_read: usize,
    executed: u64,
    round_trips: u64,
    probe_decodes: u64,
}

fn shrink(
    grammar: &Grammar,
    original: &[u8],
    variant: Variant,
    exhaust: Exhaust,
    with_spans: bool,
) -> Outcome {
    let inner = SeedOracle {
        grammar,
        variant,
        exhaust,
        with_spans,
        round_trips: 0,
        probe_decodes: 0,
    };
    assert!(inner.holds(original));
    let mut cached = Cached::new(inner);
    cached.remember(original, true);
    let bytes = shrink_choices(original, &mut cached);
    let executed = cached.stats().executed;
    let inner = cached.into_inner();
    let (string, choices_read) =
        generate(grammar, &bytes, variant, exhaust).expect("result decodes");
    assert!(has_double_parens(&string));
    Outcome {
        bytes,
        string,
        choices_read,
        executed,
        round_trips: inner.round_trips,
        probe_decodes: inner.probe_decodes,
    }
}

// ------------------------------------------------------------------ reference

struct Reference {
    seed: u64,
    variant: Variant,
    original: String,
    original_choices: Vec<i64>,
    result: String,
    result_choices: Vec<i64>,
    calls: u64,
}

/// Seeds 4…48 (the reference's "10 more"), then the seed text's 1, 5, 9, 16.
const SEEDS: [u64; 14] = [4, 12, 18, 22, 31, 32, 37, 40, 41, 48, 1, 5, 9, 16];

fn references() -> Vec<Reference> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/reference_fixtures.json"
    );
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let fixtures = data.as_array().unwrap();
    let ints = |v: &Value| -> Vec<i64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect()
    };
    let mut out = Vec::new();
    for seed in SEEDS {
        for variant in [Variant::Lf, Variant::Lfm] {
            let id = format!("s003-choices-seed{seed}-{}", variant.name());
            let f = fixtures
                .iter()
                .find(|f| f["id"] == id.as_str())
                .unwrap_or_else(|| panic!("{id} missing"));
            out.push(Reference {
                seed,
                variant,
                original: f["original"].as_str().unwrap().to_string(),
                original_choices: ints(&f["original_choices"]),
                result: f["result"].as_str().unwrap().to_string(),
                result_choices: ints(&f["result_choices"]),
                calls: f["calls"].as_u64().unwrap(),
            });
        }
    }
    out
}

fn encode(variant: Variant, choices: &[i64]) -> Vec<u8> {
    choices.iter().map(|&c| variant.encode(c)).collect()
}

// ------------------------------------------------------------------ tests

#[test]
fn cost_table_matches_the_reference() {
    // REFERENCE.md §3.7: `<expr>`: +, -, () = 3, var/digit = 2;
    // `<assignments>`: 4 vs 5.
    let cost = compute_cost();
    assert_eq!(cost[&Nt::Expr], vec![3.0, 3.0, 3.0, 2.0, 2.0]);
    assert_eq!(cost[&Nt::Assignments], vec![4.0, 5.0]);
    assert_eq!(cost[&Nt::Start], vec![5.0]);
    let g = Grammar::new();
    assert_eq!(g.cheapest[&Nt::Expr], vec![3, 4]);
    assert_eq!(g.cheapest[&Nt::Assignments], vec![0]);
    assert_eq!(g.cheapest[&Nt::Var].len(), 26);
    assert_eq!(Nt::Var.name(), "<var>");
}

#[test]
fn generator_reproduces_the_seed_text() {
    // `lf.py 6` in the seed text: 88 choices.
    let ints: [i64; 88] = [
        9, 1, 7, 4, 0, 0, 2, 9, 7, 5, 5, 0, 4, 7, 3, 6, 8, 8, 1, 3, 9, 8, 4, 9, 1, 6, 5, 1, 5, 6,
        4, 7, 1, 3, 4, 1, 0, 9, 3, 5, 7, 3, 8, 9, 8, 0, 5, 3, 9, 6, 4, 5, 9, 1, 1, 8, 8, 3, 1, 9,
        4, 4, 3, 6, 7, 3, 2, 9, 3, 8, 0, 3, 2, 0, 5, 8, 9, 9, 4, 5, 6, 8, 6, 4, 2, 7, 0, 2,
    ];
    let g = Grammar::new();
    let (s, read) = generate(
        &g,
        &encode(Variant::Lf, &ints),
        Variant::Lf,
        Exhaust::Python,
    )
    .unwrap();
    assert_eq!(
        s,
        "e = (1) + 1 + 00 + 00 - 00 + 00 - 0 + 1;\nf = 1 - e - 1 + 1 + e - e + e + 1 - 1 - e - e;\n\
         e = e;\nc = 1;\nd = (f + 0 + e - e + (e));\n"
    );
    assert_eq!(read, 88);
    // Running out: Python fails, zero-fill completes.
    let short = encode(Variant::Lf, &ints[..40]);
    assert!(generate(&g, &short, Variant::Lf, Exhaust::Python).is_none());
    assert!(generate(&g, &short, Variant::Lf, Exhaust::ZeroFill).is_some());
}

#[test]
fn generator_reproduces_every_reference_original_and_minimal() {
    let g = Grammar::new();
    for r in references() {
        let bytes = encode(r.variant, &r.original_choices);
        let (s, read) = generate(&g, &bytes, r.variant, Exhaust::Python).unwrap();
        assert_eq!(s, r.original, "seed {} {:?}", r.seed, r.variant);
        assert_eq!(read, bytes.len(), "seed {} {:?}", r.seed, r.variant);
        // Zero-fill reads the same when nothing runs out.
        assert_eq!(
            generate(&g, &bytes, r.variant, Exhaust::ZeroFill)
                .unwrap()
                .0,
            r.original
        );
        // The reference minimum, NOPs included, decodes to its string.
        let minimal = encode(r.variant, &r.result_choices);
        let (s, _) = generate(&g, &minimal, r.variant, Exhaust::Python).unwrap();
        assert_eq!(s, r.result, "seed {} {:?} minimal", r.seed, r.variant);
        assert!(has_double_parens(&s));
        let decoded: Vec<i64> = minimal.iter().map(|&b| r.variant.decode(b)).collect();
        assert_eq!(decoded, r.result_choices);
    }
}

/// The comparison: every reference seed, both variants; Python semantics
/// without and with spans (asserted ≤ the reference), zero-fill reported.
#[test]
fn shrinks_at_least_as_far_as_the_reference() {
    let g = Grammar::new();
    let mut table = String::new();
    let mut strings = String::new();
    writeln!(
        table,
        "| seed | var | orig | ref (choices, calls) | python, no spans (choices, tests, trips) \
         | python, spans (choices, tests, trips, probe decodes) | zero-fill, no spans (bytes, read, tests) |"
    )
    .unwrap();
    writeln!(table, "|---|---|---|---|---|---|---|").unwrap();
    let mut failures = Vec::new();
    let mut totals = [0u64; 4];
    for r in references() {
        let original = encode(r.variant, &r.original_choices);
        let plain = shrink(&g, &original, r.variant, Exhaust::Python, false);
        let spans = shrink(&g, &original, r.variant, Exhaust::Python, true);
        let zero = shrink(&g, &original, r.variant, Exhaust::ZeroFill, false);
        let reference_len = r.result_choices.len();
        for (what, o) in [("no spans", &plain), ("spans", &spans)] {
            if o.bytes.len() > reference_len {
                failures.push(format!(
                    "seed {} {} ({what}): {} choices > reference {}",
                    r.seed,
                    r.variant.name(),
                    o.bytes.len(),
                    reference_len
                ));
            }
            // Python semantics: every byte of the result is a choice read.
            assert_eq!(o.choices_read, o.bytes.len());
        }
        totals[0] += reference_len as u64;
        totals[1] += plain.bytes.len() as u64;
        totals[2] += spans.bytes.len() as u64;
        totals[3] += zero.bytes.len() as u64;
        writeln!(
            table,
            "| {} | {} | {} | {}, {} | {}, {}, {} | {}, {}, {}, {} | {}, {}, {} |",
            r.seed,
            r.variant.name(),
            r.original_choices.len(),
            reference_len,
            r.calls,
            plain.bytes.len(),
            plain.executed,
            plain.round_trips,
            spans.bytes.len(),
            spans.executed,
            spans.round_trips,
            spans.probe_decodes,
            zero.bytes.len(),
            zero.choices_read,
            zero.executed,
        )
        .unwrap();
        let choices =
            |o: &Outcome| -> Vec<i64> { o.bytes.iter().map(|&b| r.variant.decode(b)).collect() };
        writeln!(
            strings,
            "{:>2} {:<3} ref {:?} {:?} | ours {:?} {:?} | spans {:?} {:?} | zero-fill {:?} {:?}",
            r.seed,
            r.variant.name(),
            r.result,
            r.result_choices,
            plain.string,
            choices(&plain),
            spans.string,
            choices(&spans),
            zero.string,
            choices(&zero),
        )
        .unwrap();
    }
    println!("{table}");
    println!(
        "total choices: reference {}, ours (no spans) {}, ours (spans) {}, zero-fill bytes {}\n",
        totals[0], totals[1], totals[2], totals[3]
    );
    println!("{strings}");
    assert!(failures.is_empty(), "{failures:#?}");
}
