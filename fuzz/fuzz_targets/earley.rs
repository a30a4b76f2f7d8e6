//! Fuzzes the Earley parser on the shipped grammars (json, expr, csv, ini).
//!
//! Byte 0 picks the grammar. If byte 1 is odd, the input is a derivation
//! generated from the grammar (seeded by the rest), which must parse;
//! otherwise the input is the rest of the bytes, as they are. Either way
//! `accepts` and `parse` must agree, and a tree must print back to the input
//! and be a derivation from the start symbol; a syntax error must point
//! inside the input (see `common::check_parse`).
//!
//! `cargo +nightly fuzz run -s none earley corpus/earley seeds/earley`
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [pick, mode, rest @ ..] = data else {
        return;
    };
    let shipped = common::shipped();
    let common::Shipped {
        grammar,
        parser,
        small,
    } = &shipped[usize::from(*pick) % shipped.len()];
    if mode % 2 == 1 {
        let seed = common::fnv(rest);
        let Some(tree) = small.tree(seed, mode / 2, 4096) else {
            return;
        };
        common::assert_derivation(grammar, &tree, "generated tree");
        let bytes = tree.to_bytes();
        assert!(
            common::check_parse(grammar, parser, &bytes).is_some(),
            "a generated string does not parse: {bytes:?}"
        );
    } else {
        common::check_parse(grammar, parser, rest);
    }
});
