//! Test support: the Fuzzing Book's `EXPR_GRAMMAR` as a [`Grammar`], a
//! recursive-descent parser that builds its derivation trees, and a
//! proptest strategy for random expressions.
//!
//! Only `crate::grammar::{Grammar, Term, Tree}` and proptest are used, so the
//! integration test `tests/grammar_reference.rs` includes this same file
//! (`#[path]`) with a `grammar` module that re-exports the library's types.

#![allow(dead_code)]

use std::collections::BTreeMap;

use crate::grammar::{Grammar, Term, Tree};
use proptest::prelude::*;

fn nt(name: &str) -> Term {
    Term::Nonterminal(name.to_string())
}

fn lit(s: &str) -> Term {
    Term::Literal(s.as_bytes().to_vec())
}

/// fuzzingbook 1.2.2 `EXPR_GRAMMAR`, expansions in the file's order, split
/// the way fuzzingbook splits them (maximal terminal strings: `" + "`).
pub fn expr_grammar() -> Grammar {
    let mut rules = BTreeMap::new();
    rules.insert("<start>".to_string(), vec![vec![nt("<expr>")]]);
    rules.insert(
        "<expr>".to_string(),
        vec![
            vec![nt("<term>"), lit(" + "), nt("<expr>")],
            vec![nt("<term>"), lit(" - "), nt("<expr>")],
            vec![nt("<term>")],
        ],
    );
    rules.insert(
        "<term>".to_string(),
        vec![
            vec![nt("<factor>"), lit(" * "), nt("<term>")],
            vec![nt("<factor>"), lit(" / "), nt("<term>")],
            vec![nt("<factor>")],
        ],
    );
    rules.insert(
        "<factor>".to_string(),
        vec![
            vec![lit("+"), nt("<factor>")],
            vec![lit("-"), nt("<factor>")],
            vec![lit("("), nt("<expr>"), lit(")")],
            vec![nt("<integer>"), lit("."), nt("<integer>")],
            vec![nt("<integer>")],
        ],
    );
    rules.insert(
        "<integer>".to_string(),
        vec![vec![nt("<digit>"), nt("<integer>")], vec![nt("<digit>")]],
    );
    rules.insert(
        "<digit>".to_string(),
        (0..10).map(|d| vec![lit(&d.to_string())]).collect(),
    );
    Grammar {
        start: "<start>".to_string(),
        rules,
    }
}

/// The derivation tree of `input` in [`expr_grammar`], or `None` when the
/// input is not an expression (whitespace must match exactly: `1 + 2`, not
/// `1+2`).
pub fn parse_expr(input: &str) -> Option<Tree> {
    let mut p = Parser {
        s: input.as_bytes(),
        pos: 0,
    };
    let expr = p.expr()?;
    (p.pos == p.s.len()).then(|| node("<start>", 0, vec![expr]))
}

fn node(symbol: &str, expansion: usize, children: Vec<Tree>) -> Tree {
    Tree::Node {
        symbol: symbol.to_string(),
        expansion,
        children,
    }
}

fn leaf(s: &[u8]) -> Tree {
    Tree::Leaf(s.to_vec())
}

struct Parser<'s> {
    s: &'s [u8],
    pos: usize,
}

impl Parser<'_> {
    fn eat(&mut self, lit: &[u8]) -> bool {
        if self.s[self.pos..].starts_with(lit) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> Option<Tree> {
        let term = self.term()?;
        for (k, op) in [(0, &b" + "[..]), (1, b" - ")] {
            if self.eat(op) {
                let rest = self.expr()?;
                return Some(node("<expr>", k, vec![term, leaf(op), rest]));
            }
        }
        Some(node("<expr>", 2, vec![term]))
    }

    fn term(&mut self) -> Option<Tree> {
        let factor = self.factor()?;
        for (k, op) in [(0, &b" * "[..]), (1, b" / ")] {
            if self.eat(op) {
                let rest = self.term()?;
                return Some(node("<term>", k, vec![factor, leaf(op), rest]));
            }
        }
        Some(node("<term>", 2, vec![factor]))
    }

    fn factor(&mut self) -> Option<Tree> {
        for (k, sign) in [(0, &b"+"[..]), (1, b"-")] {
            if self.eat(sign) {
                let inner = self.factor()?;
                return Some(node("<factor>", k, vec![leaf(sign), inner]));
            }
        }
        if self.eat(b"(") {
            let inner = self.expr()?;
            if !self.eat(b")") {
                return None;
            }
            return Some(node("<factor>", 2, vec![leaf(b"("), inner, leaf(b")")]));
        }
        let int = self.integer()?;
        if self.eat(b".") {
            let frac = self.integer()?;
            return Some(node("<factor>", 3, vec![int, leaf(b"."), frac]));
        }
        Some(node("<factor>", 4, vec![int]))
    }

    fn integer(&mut self) -> Option<Tree> {
        let d = *self.s.get(self.pos).filter(|b| b.is_ascii_digit())?;
        self.pos += 1;
        let digit = node("<digit>", usize::from(d - b'0'), vec![leaf(&[d])]);
        if self.s.get(self.pos).is_some_and(u8::is_ascii_digit) {
            let rest = self.integer()?;
            Some(node("<integer>", 0, vec![digit, rest]))
        } else {
            Some(node("<integer>", 1, vec![digit]))
        }
    }
}

/// Random expressions of [`expr_grammar`] (as strings), up to roughly
/// `size` operators.
pub fn arb_expr(size: u32) -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (0u32..1000).prop_map(|n| n.to_string()),
        (0u32..100, 0u32..100).prop_map(|(a, b)| format!("{a}.{b}")),
    ];
    leaf.prop_recursive(6, size, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop_oneof![Just(" + "), Just(" - ")],
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("{a}{op}{b}")),
            (
                inner.clone(),
                prop_oneof![Just(" * "), Just(" / ")],
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a}){op}{b}")),
            inner.clone().prop_map(|a| format!("({a})")),
            (prop_oneof![Just("+"), Just("-")], inner).prop_map(|(s, a)| format!("{s}({a})")),
        ]
    })
}

/// The grammar of the Fuzzing Book's exercise 2 (`100.99` → `1`), with
/// `<digits> ::= [0-9]+` written as a right-recursive list of classes.
pub fn number_grammar() -> Grammar {
    let digit = Term::Class {
        ranges: vec![(b'0', b'9')],
        negated: false,
    };
    let mut rules = BTreeMap::new();
    rules.insert("<start>".to_string(), vec![vec![nt("<number>")]]);
    rules.insert(
        "<number>".to_string(),
        vec![
            vec![nt("<float>")],
            vec![nt("<integer>")],
            vec![nt("<nan>")],
        ],
    );
    rules.insert(
        "<float>".to_string(),
        vec![vec![nt("<digits>"), lit("."), nt("<digits>")]],
    );
    rules.insert("<integer>".to_string(), vec![vec![nt("<digits>")]]);
    rules.insert("<nan>".to_string(), vec![vec![lit("NaN")]]);
    rules.insert(
        "<digits>".to_string(),
        vec![vec![digit.clone(), nt("<digits>")], vec![digit]],
    );
    Grammar {
        start: "<start>".to_string(),
        rules,
    }
}

/// Parses a `<float>` of [`number_grammar`] (`100.99`).
pub fn parse_float(input: &str) -> Option<Tree> {
    fn digits(s: &[u8]) -> Option<Tree> {
        let (&d, rest) = s.split_first()?;
        if !d.is_ascii_digit() {
            return None;
        }
        if rest.is_empty() {
            Some(node("<digits>", 1, vec![leaf(&[d])]))
        } else {
            Some(node("<digits>", 0, vec![leaf(&[d]), digits(rest)?]))
        }
    }
    let (int, frac) = input.split_once('.')?;
    let float = node(
        "<float>",
        0,
        vec![
            digits(int.as_bytes())?,
            leaf(b"."),
            digits(frac.as_bytes())?,
        ],
    );
    Some(node("<start>", 0, vec![node("<number>", 0, vec![float])]))
}

/// `re.match(r'.*[(][(].*[)][)].*', s)`: a `((` followed later on the first
/// line by a `))`.
pub fn double_paren(s: &[u8]) -> bool {
    let line = s.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let Some(open) = line.windows(2).position(|w| w == b"((") else {
        return false;
    };
    line[open + 2..].windows(2).any(|w| w == b"))")
}
