//! Fuzzes the grammar loader, both forms (`load_grammar` tells them apart by
//! the first character: `{` for the Fuzzing Book's JSON form, else BNF).
//!
//! The input is a grammar text, optionally followed by `\n%%` and bytes to
//! parse. Loading must not panic; an error is one line starting with the
//! origin. A loaded grammar must be usable: the Earley parser compiles it;
//! written back as plain BNF (every byte as `\xNN`) it loads to the same
//! grammar; a derivation generated from it (seeded by the input) prints to
//! bytes the parser accepts, and parses to a derivation that prints back to
//! them; the bytes after `%%` parse the same way or are rejected by both
//! `accepts` and `parse` (see `common::check_parse`).
//!
//! `cargo +nightly fuzz run -s none grammar_load corpus/grammar_load seeds/grammar_load`
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use reduce_crash::grammar::{load_grammar, Grammar, Parser, Term};
use std::fmt::Write as _;

/// Longest input parsed (Earley is cubic on ambiguous grammars).
const MAX_INPUT: usize = 128;

fuzz_target!(|data: &[u8]| {
    let (text, input) = match data.windows(3).position(|w| w == b"\n%%") {
        Some(i) => (&data[..i], Some(&data[i + 3..])),
        None => (data, None),
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let loaded = match load_grammar(text, "fuzz") {
        Ok(loaded) => loaded,
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with("fuzz:"), "{message}");
            assert!(!message.contains('\n'), "multi-line message: {message:?}");
            return;
        }
    };
    for w in &loaded.warnings {
        let message = w.to_string();
        assert!(!message.contains('\n'), "multi-line warning: {message:?}");
    }
    let grammar = loaded.grammar;
    check_well_formed(&grammar);

    // Written as plain BNF, it reads back the same (the JSON form's `<>` has
    // no BNF spelling).
    if !grammar.rules.contains_key("<>") {
        let bnf = to_bnf(&grammar);
        match load_grammar(&bnf, "bnf") {
            Ok(again) => assert_eq!(again.grammar, grammar, "BNF round trip changed it:\n{bnf}"),
            Err(e) => panic!("BNF round trip rejected: {e}\n{bnf}"),
        }
    }

    let parser = Parser::new(&grammar).expect("a loaded grammar compiles");
    let seed = common::fnv(data);
    if let Some(tree) = common::Small::new(&grammar).tree(seed, (seed >> 56) as u8, MAX_INPUT) {
        common::assert_derivation(&grammar, &tree, "generated tree");
        let bytes = tree.to_bytes();
        assert!(
            common::check_parse(&grammar, &parser, &bytes).is_some(),
            "a generated string does not parse: {bytes:?}\ntree: {tree:?}"
        );
    }
    if let Some(input) = input {
        if input.len() <= MAX_INPUT {
            common::check_parse(&grammar, &parser, input);
        }
    }
});

/// What the loader promises of every grammar it returns.
fn check_well_formed(grammar: &Grammar) {
    assert!(grammar.rules.contains_key(&grammar.start), "no start rule");
    for (name, expansions) in &grammar.rules {
        assert!(!expansions.is_empty(), "{name} has no expansions");
        for term in expansions.iter().flatten() {
            match term {
                Term::Nonterminal(n) => {
                    assert!(grammar.rules.contains_key(n), "{n} used, not defined")
                }
                Term::Literal(bytes) => assert!(!bytes.is_empty(), "empty literal in {name}"),
                Term::Class { .. } => assert!(
                    (0..=255u8).any(|b| term.class_matches(b)),
                    "class matching nothing in {name}"
                ),
            }
        }
    }
}

/// `grammar` in the BNF form, start rule first, every byte escaped.
fn to_bnf(grammar: &Grammar) -> String {
    let mut out = String::new();
    let rules = std::iter::once((&grammar.start, &grammar.rules[&grammar.start])).chain(
        grammar
            .rules
            .iter()
            .filter(|(name, _)| **name != grammar.start),
    );
    for (name, expansions) in rules {
        let _ = write!(out, "{name} ::=");
        for (k, terms) in expansions.iter().enumerate() {
            if k > 0 {
                out.push_str("\n  |");
            }
            if terms.is_empty() {
                out.push_str(" ε");
            }
            for term in terms {
                out.push(' ');
                match term {
                    Term::Nonterminal(n) => out.push_str(n),
                    Term::Literal(bytes) => {
                        out.push('"');
                        bytes.iter().for_each(|b| {
                            let _ = write!(out, "\\x{b:02x}");
                        });
                        out.push('"');
                    }
                    Term::Class { ranges, negated } => {
                        out.push('[');
                        if *negated {
                            out.push('^');
                        }
                        for &(lo, hi) in ranges {
                            let _ = write!(out, "\\x{lo:02x}");
                            if hi != lo {
                                let _ = write!(out, "-\\x{hi:02x}");
                            }
                        }
                        out.push(']');
                    }
                }
            }
        }
        out.push('\n');
    }
    out
}
