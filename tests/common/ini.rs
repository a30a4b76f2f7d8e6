//! A seeded generator of INI-like documents for the `example` project's
//! `parse` target: sections, pairs, quoted values, comments and malformed
//! lines, never an unterminated quote (the example's bug), so no document
//! crashes. Shared by `tests/corpus.rs` and `benches/corpus.rs`
//! (`#[path]`-included there).

pub use reduce_crash::reduce::rng::Rng;

/// An INI-like document; never an unterminated quote (the example's bug).
pub fn ini_document(rng: &mut Rng) -> Vec<u8> {
    let words = [
        "alpha",
        "beta",
        "gamma",
        "port",
        "host",
        "x",
        "long value here",
    ];
    let mut out = String::new();
    for _ in 0..5 + rng.below(60) {
        let w = words[rng.below(words.len())];
        let line = match rng.below(9) {
            0 => format!("[{w} {}]", rng.below(100)),
            1 => format!("{w}_{} = {}", rng.below(50), rng.below(100_000)),
            2 => format!("{w} = \"quoted # {w}\""),
            3 => format!("# comment about {w}"),
            4 => format!("; {w}"),
            5 => format!("{w} = {w} # trailing comment"),
            6 => String::new(),
            7 => format!("[unclosed {w}"),
            _ => format!("= no key {w}"),
        };
        out.push_str(&"  ".repeat(rng.below(2)));
        out.push_str(&line);
        out.push('\n');
    }
    out.into_bytes()
}
