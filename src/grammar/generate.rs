//! Random derivations of a grammar, after the Fuzzing Book's
//! `GrammarFuzzer`: a cost-bounded generator that grows a derivation tree
//! by expanding randomly chosen open nonterminals in three phases.
//!
//! 1. *grow*: while fewer than `min_nonterminals` nonterminals are open,
//!    expand with a recursive expansion (one that can derive its own symbol
//!    again) where there is one;
//! 2. *random*: while fewer than `max_nonterminals` are open (and at most
//!    `max_expansions` expansions were made), expand with a uniformly
//!    random expansion;
//! 3. *close*: expand every remaining open nonterminal with its cheapest
//!    expansion (fewest nodes in a minimal derivation).
//!
//! Nodes deeper than `max_depth` are always closed cheaply. Class terms
//! (`[a-z]`, `[^"]`) produce a random matching byte, preferring printable
//! ASCII (and tab, LF, CR) when the class has any.
//!
//! The result is a [`Tree`] that is a derivation of the grammar by
//! construction; its bytes are `tree.to_bytes()`. Everything is driven by
//! the small seeded [`Rng`], so the same seed gives the same tree.

use std::collections::{BTreeSet, HashMap};

use super::{Grammar, Term, Tree};

pub use crate::reduce::rng::Rng;

/// Size bounds of [`generate`] (the Fuzzing Book's `GrammarFuzzer`
/// parameters, plus a depth bound and an expansion cap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenerateConfig {
    /// Grow with recursive expansions until this many nonterminals are open.
    pub min_nonterminals: usize,
    /// Expand randomly while fewer than this many are open.
    pub max_nonterminals: usize,
    /// At most this many expansions in the grow and random phases.
    pub max_expansions: usize,
    /// Nodes at this depth or deeper are closed with cheapest expansions.
    pub max_depth: usize,
}

impl Default for GenerateConfig {
    fn default() -> Self {
        GenerateConfig {
            min_nonterminals: 0,
            max_nonterminals: 10,
            max_expansions: 10_000,
            max_depth: 64,
        }
    }
}

/// Why a grammar cannot be generated from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GenerateError {
    #[error("{0} is not a nonterminal of the grammar")]
    UnknownSymbol(String),
    #[error("{0} derives no finite string")]
    Unproductive(String),
    #[error("a class term matches no byte")]
    EmptyClass,
}

/// Per-grammar data the generator needs: cheapest expansions and which
/// expansions are recursive.
#[derive(Debug, Clone)]
pub struct Generator<'g> {
    grammar: &'g Grammar,
    /// Nodes in a minimal derivation of each productive symbol.
    cost: HashMap<String, u64>,
    /// Per symbol, per expansion: can it derive the symbol again?
    recursive: HashMap<String, Vec<bool>>,
}

impl<'g> Generator<'g> {
    pub fn new(grammar: &'g Grammar) -> Self {
        // Minimal derivation sizes, by fixpoint (every node costs one, so
        // there are no zero-cost cycles).
        let mut cost: HashMap<String, u64> = HashMap::new();
        loop {
            let mut changed = false;
            for (symbol, rules) in &grammar.rules {
                for terms in rules {
                    let Some(c) = expansion_cost(&cost, terms) else {
                        continue;
                    };
                    if cost.get(symbol).is_none_or(|&old| c < old) {
                        cost.insert(symbol.clone(), c);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // Reachability between nonterminals.
        let direct: HashMap<&str, BTreeSet<&str>> = grammar
            .rules
            .iter()
            .map(|(s, rules)| {
                let next = rules.iter().flatten().filter_map(|t| match t {
                    Term::Nonterminal(n) => Some(n.as_str()),
                    _ => None,
                });
                (s.as_str(), next.collect())
            })
            .collect();
        // One search from each nonterminal: O(N·(N+E)). (Growing every set
        // from its successors' until nothing changed took a pass per level
        // of a chain, each pass quadratic: fuzz/grammar_load timed out on a
        // `*` repeated a hundred times, a chain of a hundred symbols.)
        let reach: HashMap<&str, BTreeSet<&str>> = direct
            .keys()
            .map(|&start| {
                let mut seen: BTreeSet<&str> = BTreeSet::new();
                let mut stack: Vec<&str> = direct[start].iter().copied().collect();
                while let Some(s) = stack.pop() {
                    if seen.insert(s) {
                        if let Some(next) = direct.get(s) {
                            stack.extend(next.iter().copied().filter(|n| !seen.contains(n)));
                        }
                    }
                }
                (start, seen)
            })
            .collect();
        let recursive = grammar
            .rules
            .iter()
            .map(|(s, rules)| {
                let flags = rules
                    .iter()
                    .map(|terms| {
                        terms.iter().any(|t| match t {
                            Term::Nonterminal(n) => {
                                n == s
                                    || reach
                                        .get(n.as_str())
                                        .is_some_and(|r| r.contains(s.as_str()))
                            }
                            _ => false,
                        })
                    })
                    .collect();
                (s.clone(), flags)
            })
            .collect();
        Generator {
            grammar,
            cost,
            recursive,
        }
    }

    /// A random derivation of the start symbol.
    pub fn generate(&self, rng: &mut Rng, config: &GenerateConfig) -> Result<Tree, GenerateError> {
        self.generate_from(&self.grammar.start, rng, config)
    }

    /// A random derivation of `symbol`.
    pub fn generate_from(
        &self,
        symbol: &str,
        rng: &mut Rng,
        config: &GenerateConfig,
    ) -> Result<Tree, GenerateError> {
        if !self.grammar.rules.contains_key(symbol) {
            return Err(GenerateError::UnknownSymbol(symbol.to_string()));
        }
        if !self.cost.contains_key(symbol) {
            return Err(GenerateError::Unproductive(symbol.to_string()));
        }
        let mut arena = vec![Slot {
            symbol: symbol.to_string(),
            depth: 0,
            expansion: None,
            children: Vec::new(),
        }];
        let mut open = vec![0usize];
        let mut expansions = 0usize;
        // Grow and random phases.
        while !open.is_empty() && expansions < config.max_expansions {
            let growing = open.len() < config.min_nonterminals;
            if !growing && open.len() >= config.max_nonterminals {
                break;
            }
            let i = open.swap_remove(rng.below(open.len()));
            let mode = if arena[i].depth >= config.max_depth {
                Mode::Cheapest
            } else if growing {
                Mode::Grow
            } else {
                Mode::Random
            };
            self.expand(&mut arena, &mut open, i, mode, rng)?;
            expansions += 1;
        }
        // Close.
        while let Some(i) = open.pop() {
            self.expand(&mut arena, &mut open, i, Mode::Cheapest, rng)?;
        }
        Ok(build(&arena, 0))
    }

    fn expand(
        &self,
        arena: &mut Vec<Slot>,
        open: &mut Vec<usize>,
        i: usize,
        mode: Mode,
        rng: &mut Rng,
    ) -> Result<(), GenerateError> {
        let symbol = arena[i].symbol.clone();
        let rules = &self.grammar.rules[&symbol];
        // Only expansions whose nonterminals are all productive.
        let viable: Vec<(usize, u64)> = rules
            .iter()
            .enumerate()
            .filter_map(|(k, terms)| expansion_cost(&self.cost, terms).map(|c| (k, c)))
            .collect();
        if viable.is_empty() {
            return Err(GenerateError::Unproductive(symbol));
        }
        let candidates: Vec<usize> = match mode {
            Mode::Cheapest => {
                let min = viable.iter().map(|&(_, c)| c).min().expect("nonempty");
                viable
                    .iter()
                    .filter(|&&(_, c)| c == min)
                    .map(|&(k, _)| k)
                    .collect()
            }
            Mode::Grow => {
                let rec = &self.recursive[&symbol];
                let growing: Vec<usize> =
                    viable.iter().map(|&(k, _)| k).filter(|&k| rec[k]).collect();
                if growing.is_empty() {
                    viable.iter().map(|&(k, _)| k).collect()
                } else {
                    growing
                }
            }
            Mode::Random => viable.iter().map(|&(k, _)| k).collect(),
        };
        let k = candidates[rng.below(candidates.len())];
        let depth = arena[i].depth + 1;
        let mut children = Vec::new();
        for term in &rules[k] {
            match term {
                Term::Nonterminal(n) => {
                    let j = arena.len();
                    arena.push(Slot {
                        symbol: n.clone(),
                        depth,
                        expansion: None,
                        children: Vec::new(),
                    });
                    open.push(j);
                    children.push(Child::Node(j));
                }
                Term::Literal(bytes) => children.push(Child::Leaf(bytes.clone())),
                Term::Class { .. } => children.push(Child::Leaf(vec![class_byte(term, rng)?])),
            }
        }
        arena[i].expansion = Some(k);
        arena[i].children = children;
        Ok(())
    }
}

/// A random derivation of `grammar`'s start symbol (see [`Generator`]).
pub fn generate(
    grammar: &Grammar,
    rng: &mut Rng,
    config: &GenerateConfig,
) -> Result<Tree, GenerateError> {
    Generator::new(grammar).generate(rng, config)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Grow,
    Random,
    Cheapest,
}

#[derive(Debug)]
struct Slot {
    symbol: String,
    depth: usize,
    expansion: Option<usize>,
    children: Vec<Child>,
}

#[derive(Debug)]
enum Child {
    Node(usize),
    Leaf(Vec<u8>),
}

fn build(arena: &[Slot], i: usize) -> Tree {
    // Iterative post-order, so deep trees do not overflow the stack.
    enum Step {
        Enter(usize),
        Exit(usize),
    }
    let mut stack = vec![Step::Enter(i)];
    let mut done: Vec<Tree> = Vec::new();
    while let Some(step) = stack.pop() {
        match step {
            Step::Enter(j) => {
                stack.push(Step::Exit(j));
                for c in arena[j].children.iter().rev() {
                    if let Child::Node(n) = c {
                        stack.push(Step::Enter(*n));
                    }
                }
            }
            Step::Exit(j) => {
                let slot = &arena[j];
                let nodes = slot
                    .children
                    .iter()
                    .filter(|c| matches!(c, Child::Node(_)))
                    .count();
                let mut subtrees = done.split_off(done.len() - nodes).into_iter();
                let children = slot
                    .children
                    .iter()
                    .map(|c| match c {
                        Child::Node(_) => subtrees.next().expect("built"),
                        Child::Leaf(b) => Tree::Leaf(b.clone()),
                    })
                    .collect();
                done.push(Tree::Node {
                    symbol: slot.symbol.clone(),
                    expansion: slot.expansion.expect("every slot is expanded"),
                    children,
                });
            }
        }
    }
    done.pop().expect("root built")
}

fn expansion_cost(cost: &HashMap<String, u64>, terms: &[Term]) -> Option<u64> {
    let mut total = 1u64;
    for t in terms {
        total += match t {
            Term::Nonterminal(n) => *cost.get(n)?,
            _ => 1,
        };
    }
    Some(total)
}

fn class_byte(term: &Term, rng: &mut Rng) -> Result<u8, GenerateError> {
    let nice: Vec<u8> = (0x20u8..=0x7e)
        .chain([b'\t', b'\n', b'\r'])
        .filter(|&b| term.class_matches(b))
        .collect();
    if !nice.is_empty() {
        return Ok(nice[rng.below(nice.len())]);
    }
    let any: Vec<u8> = (0u8..=255).filter(|&b| term.class_matches(b)).collect();
    if any.is_empty() {
        return Err(GenerateError::EmptyClass);
    }
    Ok(any[rng.below(any.len())])
}

/// A deterministic JSON document of at least `target` bytes: nested objects
/// and arrays, strings with escapes and UTF-8, numbers, varied whitespace.
/// For parser tests and benchmarks (it does not use a grammar).
pub fn json_document(target: usize, seed: u64) -> Vec<u8> {
    struct Gen {
        state: u64,
        out: Vec<u8>,
    }
    impl Gen {
        fn next(&mut self, n: u64) -> u64 {
            self.state = self
                .state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.state >> 33) % n
        }
        fn ws(&mut self) {
            for _ in 0..self.next(3) {
                let c = [b' ', b'\n', b'\t', b' ', b'\r'][self.next(5) as usize];
                self.out.push(c);
            }
        }
        fn string(&mut self) {
            self.out.push(b'"');
            for _ in 0..self.next(16) {
                match self.next(20) {
                    0 => self.out.extend_from_slice(b"\\\""),
                    1 => self.out.extend_from_slice(b"\\n"),
                    2 => self.out.extend_from_slice(b"\\u00e9"),
                    3 => self.out.extend_from_slice("é".as_bytes()),
                    4 => self.out.extend_from_slice(b"\\\\"),
                    _ => {
                        let c = b'a' + self.next(26) as u8;
                        self.out.push(c);
                    }
                }
            }
            self.out.push(b'"');
        }
        fn number(&mut self) {
            if self.next(4) == 0 {
                self.out.push(b'-');
            }
            let int = self.next(100000).to_string();
            self.out.extend_from_slice(int.as_bytes());
            if self.next(3) == 0 {
                let frac = format!(".{}", self.next(1000));
                self.out.extend_from_slice(frac.as_bytes());
            }
            if self.next(6) == 0 {
                let exp = format!(
                    "e{}{}",
                    ["", "+", "-"][self.next(3) as usize],
                    self.next(300)
                );
                self.out.extend_from_slice(exp.as_bytes());
            }
        }
        fn value(&mut self, depth: u32) {
            let kind = if depth >= 6 {
                2 + self.next(5)
            } else {
                self.next(7)
            };
            match kind {
                0 | 1 => {
                    let (open, close) = if kind == 0 {
                        (b'{', b'}')
                    } else {
                        (b'[', b']')
                    };
                    self.out.push(open);
                    let width = self.next(8);
                    if width == 0 {
                        self.ws();
                    }
                    for i in 0..width {
                        if i > 0 {
                            self.out.push(b',');
                        }
                        self.ws();
                        if kind == 0 {
                            self.string();
                            self.ws();
                            self.out.push(b':');
                            self.ws();
                        }
                        self.value(depth + 1);
                        self.ws();
                    }
                    self.out.push(close);
                }
                2 | 3 => self.string(),
                4 | 5 => self.number(),
                _ => {
                    let word: &[u8] = [&b"true"[..], b"false", b"null"][self.next(3) as usize];
                    self.out.extend_from_slice(word);
                }
            }
        }
    }
    let mut gen = Gen {
        state: seed,
        out: Vec::with_capacity(target + 1024),
    };
    gen.out.push(b'[');
    let mut first = true;
    while gen.out.len() < target {
        if !first {
            gen.out.push(b',');
        }
        first = false;
        gen.ws();
        gen.value(0);
        gen.ws();
    }
    gen.out.push(b']');
    gen.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::load::{builtin_grammar, BUILTIN_NAMES};
    use crate::grammar::reduce::check_tree;
    use crate::grammar::Parser;

    #[test]
    fn recursion_is_found_along_long_chains() {
        // <a0> -> <a1> -> … -> <a199>, which derives <a0> again in its first
        // expansion and "x" in its second; <b> only reaches the chain.
        let mut text = String::from("<b> ::= <a0>\n");
        for i in 0..199 {
            text += &format!("<a{i}> ::= <a{}> | \"y\"\n", i + 1);
        }
        text += "<a199> ::= <a0> | \"x\"\n";
        let g = crate::grammar::load::parse_grammar(&text, "chain").unwrap();
        let generator = Generator::new(&g);
        assert_eq!(generator.recursive["<b>"], vec![false]);
        for i in 0..200 {
            assert_eq!(
                generator.recursive[&format!("<a{i}>")],
                vec![true, false],
                "a{i}"
            );
        }
    }

    #[test]
    fn generated_trees_are_derivations_that_parse() {
        for name in BUILTIN_NAMES {
            let g = builtin_grammar(name).unwrap();
            let parser = Parser::new(&g).unwrap();
            let generator = Generator::new(&g);
            for seed in 0..20 {
                let config = GenerateConfig {
                    min_nonterminals: 5,
                    max_nonterminals: 30,
                    ..GenerateConfig::default()
                };
                let tree = generator.generate(&mut Rng::new(seed), &config).unwrap();
                assert_eq!(check_tree(&g, &tree), Ok(()), "{name} seed {seed}");
                let bytes = tree.to_bytes();
                assert!(
                    parser.accepts(&bytes),
                    "{name} seed {seed}: {:?}",
                    String::from_utf8_lossy(&bytes)
                );
            }
        }
    }

    #[test]
    fn same_seed_same_tree() {
        let g = builtin_grammar("json").unwrap();
        let config = GenerateConfig::default();
        let a = generate(&g, &mut Rng::new(7), &config).unwrap();
        let b = generate(&g, &mut Rng::new(7), &config).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn larger_bounds_give_larger_inputs() {
        let g = builtin_grammar("expr").unwrap();
        let generator = Generator::new(&g);
        let size = |max: usize| -> usize {
            (0..10)
                .map(|seed| {
                    let config = GenerateConfig {
                        min_nonterminals: max / 2,
                        max_nonterminals: max,
                        ..GenerateConfig::default()
                    };
                    generator
                        .generate(&mut Rng::new(seed), &config)
                        .unwrap()
                        .to_bytes()
                        .len()
                })
                .sum()
        };
        assert!(size(200) > size(10));
    }
}
