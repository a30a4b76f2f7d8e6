//! Checks shared by the grammar targets (`grammar_load`, `earley`,
//! `tree_reducers`): what must hold of any parse, and bounded generation.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::OnceLock;

use reduce_crash::grammar::earley::line_col;
use reduce_crash::grammar::generate::{GenerateConfig, Generator, Rng};
use reduce_crash::grammar::reduce::check_tree;
use reduce_crash::grammar::{
    builtin_grammar, Grammar, ParseError, Parser, Term, Tree, BUILTIN_NAMES,
};

/// Asserts that `tree` is a derivation of `grammar` from its start symbol.
pub fn assert_derivation(grammar: &Grammar, tree: &Tree, what: &str) {
    assert_eq!(
        tree.symbol(),
        Some(grammar.start.as_str()),
        "{what}: the root is not the start symbol"
    );
    if let Err(e) = check_tree(grammar, tree) {
        panic!("{what}: not a derivation: {e}\ntree: {tree:?}");
    }
}

/// Parses `input` and checks everything a parse promises: `accepts` and
/// `parse` agree; a tree prints back to the input and is a derivation from
/// the start symbol; a syntax error is within the input, its line and
/// column are those of its offset, and it lists "end of input" exactly when
/// the input up to the error parses. Returns the tree, if any.
pub fn check_parse(grammar: &Grammar, parser: &Parser, input: &[u8]) -> Option<Tree> {
    let accepted = parser.accepts(input);
    let parsed = parser.parse(input);
    assert_eq!(
        accepted,
        parsed.is_ok(),
        "accepts and parse disagree on {input:?}: {parsed:?}"
    );
    match parsed {
        Ok(tree) => {
            assert_eq!(
                tree.to_bytes(),
                input,
                "the tree does not print back to the input"
            );
            assert_derivation(grammar, &tree, "parse tree");
            Some(tree)
        }
        Err(e) => {
            let message = e.to_string();
            assert!(!message.contains('\n'), "multi-line message: {message}");
            let ParseError::Syntax {
                offset,
                line,
                col,
                ref expected,
                ..
            } = e
            else {
                panic!("not a syntax error: {e}");
            };
            assert!(offset <= input.len(), "error offset {offset} past the input");
            assert_eq!((line, col), line_col(input, offset), "{message}");
            let ends = expected.iter().any(|x| x == "end of input");
            assert_eq!(
                ends,
                parser.accepts(&input[..offset]),
                "`end of input` expected at {offset} but the prefix does not parse, or vice versa: {message}"
            );
            None
        }
    }
}

/// Nodes in a minimal derivation of each nonterminal (saturating; absent
/// for symbols deriving no finite string).
pub fn min_nodes(grammar: &Grammar) -> HashMap<&str, u64> {
    let mut cost: HashMap<&str, u64> = HashMap::new();
    loop {
        let mut changed = false;
        for (symbol, rules) in &grammar.rules {
            for terms in rules {
                let mut total = 1u64;
                let mut ok = true;
                for t in terms {
                    total = total.saturating_add(match t {
                        Term::Nonterminal(n) => match cost.get(n.as_str()) {
                            Some(&c) => c,
                            None => {
                                ok = false;
                                break;
                            }
                        },
                        _ => 1,
                    });
                }
                if ok && cost.get(symbol.as_str()).is_none_or(|&old| total < old) {
                    cost.insert(symbol, total);
                    changed = true;
                }
            }
        }
        if !changed {
            return cost;
        }
    }
}

/// Random derivations of a grammar, small enough to keep an iteration fast.
pub struct Small<'g> {
    /// `None` when some minimal derivation is large (a grammar whose every
    /// string is huge).
    generator: Option<Generator<'g>>,
}

impl<'g> Small<'g> {
    pub fn new(grammar: &'g Grammar) -> Self {
        let small = min_nodes(grammar).values().all(|&c| c <= 500);
        Small {
            generator: small.then(|| Generator::new(grammar)),
        }
    }

    /// A random derivation of the start symbol, if the grammar is small and
    /// the tree has at most `max_bytes` bytes.
    pub fn tree(&self, seed: u64, size: u8, max_bytes: usize) -> Option<Tree> {
        let config = GenerateConfig {
            min_nonterminals: usize::from(size % 8),
            max_nonterminals: 1 + usize::from(size % 16),
            max_expansions: 40,
            max_depth: 24,
        };
        let tree = self
            .generator
            .as_ref()?
            .generate(&mut Rng::new(seed), &config)
            .expect("a validated grammar generates");
        (tree.size() <= 20_000 && tree.to_bytes().len() <= max_bytes).then_some(tree)
    }
}

/// The shipped grammars, compiled, with their generators.
pub struct Shipped {
    pub grammar: &'static Grammar,
    pub parser: Parser,
    pub small: Small<'static>,
}

pub fn shipped() -> &'static [Shipped] {
    static GRAMMARS: OnceLock<Vec<Grammar>> = OnceLock::new();
    static SHIPPED: OnceLock<Vec<Shipped>> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        let grammars = GRAMMARS.get_or_init(|| {
            BUILTIN_NAMES
                .iter()
                .map(|name| builtin_grammar(name).expect("shipped"))
                .collect()
        });
        grammars
            .iter()
            .map(|grammar| Shipped {
                grammar,
                parser: Parser::new(grammar).expect("shipped grammars compile"),
                small: Small::new(grammar),
            })
            .collect()
    })
}

/// FNV-1a, to derive a seed from bytes.
pub fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
