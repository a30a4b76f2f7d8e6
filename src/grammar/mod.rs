//! Grammar-based reduction: grammars, parsing inputs into derivation trees,
//! and reducers that work on the trees.
//!
//! For text inputs, byte-level deletion wastes most tests on candidates the
//! target rejects before reaching the bug. Reducing the derivation tree
//! instead (HDD, Perses, the Fuzzing Book's GrammarReducer, generalised tree
//! reduction) only ever produces inputs the grammar accepts.
//!
//! * [`Grammar`] / [`Term`]: a context-free grammar over bytes;
//! * [`Tree`]: a derivation tree, as the Fuzzing Book represents it
//!   (nonterminal nodes with children, terminal leaves holding bytes).

use std::collections::BTreeMap;

/// One element of an expansion.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Term {
    /// A nonterminal, by name including the angle brackets: `<expr>`.
    Nonterminal(String),
    /// Literal bytes.
    Literal(Vec<u8>),
    /// One byte from a set of inclusive ranges (`[a-z0-9_]`); `negated`
    /// matches any byte outside them.
    Class {
        ranges: Vec<(u8, u8)>,
        negated: bool,
    },
}

impl Term {
    /// Does this class term match `b`? (`false` for other terms.)
    pub fn class_matches(&self, b: u8) -> bool {
        match self {
            Term::Class { ranges, negated } => {
                ranges.iter().any(|&(lo, hi)| lo <= b && b <= hi) != *negated
            }
            _ => false,
        }
    }
}

/// A context-free grammar: each nonterminal has one or more alternative
/// expansions (an empty expansion derives the empty string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grammar {
    /// The start symbol (`<start>` unless the file says otherwise).
    pub start: String,
    /// Expansions of every nonterminal, in the order the file gives them.
    pub rules: BTreeMap<String, Vec<Vec<Term>>>,
}

/// A derivation tree over an input.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Tree {
    /// A nonterminal and the derivation of one of its expansions
    /// (`expansion` indexes `Grammar::rules[symbol]`).
    Node {
        symbol: String,
        expansion: usize,
        children: Vec<Tree>,
    },
    /// Terminal bytes (a literal, or the byte a class matched).
    Leaf(Vec<u8>),
}

impl Tree {
    /// The bytes this tree derives (the concatenation of its leaves).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_bytes(&mut out);
        out
    }

    pub fn write_bytes(&self, out: &mut Vec<u8>) {
        match self {
            Tree::Leaf(b) => out.extend_from_slice(b),
            Tree::Node { children, .. } => children.iter().for_each(|c| c.write_bytes(out)),
        }
    }

    /// The nonterminal at this node, if any.
    pub fn symbol(&self) -> Option<&str> {
        match self {
            Tree::Node { symbol, .. } => Some(symbol),
            Tree::Leaf(_) => None,
        }
    }

    /// Number of nodes (nonterminals and leaves).
    pub fn size(&self) -> usize {
        match self {
            Tree::Leaf(_) => 1,
            Tree::Node { children, .. } => 1 + children.iter().map(Tree::size).sum::<usize>(),
        }
    }
}
pub mod earley;
pub mod generate;
pub mod load;
pub mod reduce;

pub use earley::{parse, ParseError, Parser};
pub use load::{
    builtin, builtin_grammar, load_grammar, parse_grammar, GrammarError, GrammarWarning,
    LoadedGrammar, BUILTIN_NAMES,
};
