//! Earley parser speed on JSON documents (the shipped `json` grammar).
//!
//! Generates deterministic JSON documents of about 10 KB, 100 KB and 1 MB
//! (nested objects and arrays, strings with escapes and UTF-8, numbers,
//! varied whitespace: the same generator as the `grammar::earley` unit
//! tests) and prints, as a Markdown table, the time to recognise each one
//! (no tree), to parse it into a derivation tree, and the tree's size. Each
//! time is the best of several runs. The bar: 100 KB in well under a second.
//! A second table shows the cost of long right-recursive chains.
//!
//! Run with `cargo bench --bench earley`.

use reduce_crash::grammar::generate::json_document;
use reduce_crash::grammar::{load::builtin_grammar, Parser, Tree};
use std::time::{Duration, Instant};

/// Best wall time of `runs` calls of `f`, and its last result.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let started = Instant::now();
        let out = f();
        best = best.min(started.elapsed());
        last = Some(out);
    }
    (best, last.expect("runs > 0"))
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn depth(tree: &Tree) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(tree, 1)];
    while let Some((t, d)) = todo.pop() {
        deepest = deepest.max(d);
        if let Tree::Node { children, .. } = t {
            todo.extend(children.iter().map(|c| (c, d + 1)));
        }
    }
    deepest
}

fn main() {
    let grammar = builtin_grammar("json").expect("shipped");
    let (compile, parser) = best(5, || Parser::new(&grammar).expect("valid grammar"));
    println!(
        "Earley parser, `json` grammar (compiled in {} µs)\n",
        compile.as_micros()
    );
    println!("| document | bytes | recognise (ms) | parse + tree (ms) | MB/s (parse) | tree nodes | tree depth |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (label, size, runs) in [
        ("10 KB", 10_000, 20),
        ("100 KB", 100_000, 10),
        ("1 MB", 1_000_000, 3),
    ] {
        let doc = json_document(size, 42);
        assert!(
            serde_json::from_slice::<serde_json::Value>(&doc).is_ok(),
            "generated JSON is valid"
        );
        let (recognise, accepted) = best(runs, || parser.accepts(&doc));
        assert!(accepted);
        let (parse, tree) = best(runs, || parser.parse(&doc).expect("parses"));
        assert_eq!(tree.to_bytes(), doc, "round trip");
        let mbps = doc.len() as f64 / 1e6 / parse.as_secs_f64();
        println!(
            "| {label} | {} | {} | {} | {mbps:.1} | {} | {} |",
            doc.len(),
            ms(recognise),
            ms(parse),
            tree.size(),
            depth(&tree)
        );
    }

    // Right recursion has no Leo optimisation: the book's `<integer> ::=
    // <digit><integer>` is quadratic in the number of digits.
    let expr = Parser::new(&builtin_grammar("expr").expect("shipped")).expect("valid grammar");
    println!("\nRight recursion (`expr` grammar, `<integer> ::= <digit><integer>`)\n");
    println!("| input | bytes | parse + tree (ms) |");
    println!("|---|---:|---:|");
    for digits in [1_000, 4_000] {
        let input: Vec<u8> = (0..digits).map(|i| b'0' + (i % 10) as u8).collect();
        let (parse, tree) = best(3, || expr.parse(&input).expect("parses"));
        assert_eq!(tree.to_bytes(), input);
        println!("| {digits}-digit integer | {digits} | {} |", ms(parse));
    }
}
