//! Choice-sequence shrinking for any generator that draws from
//! `arbitrary::Unstructured`, not only fuzz targets.
//!
//! A property test, a grammar fuzzer or a mutation fuzzer's population can
//! generate values from bytes with `Unstructured`; when a value is
//! interesting (it fails the property), [`shrink_generated`] shrinks the
//! *bytes* with [`super::shrink_choices`], so the value
//! shrinks with them, staying a value the generator can produce. Values are
//! cached by their `Debug` form (many byte edits decode to a value already
//! seen), and draw boundaries are probed through the same `Debug` form.

use super::choices::{probe_spans, shrink_choices};
use crate::reduce::oracle::{Oracle, Span};
use arbitrary::Unstructured;
use std::collections::HashMap;
use std::fmt::Debug;

/// An [`Oracle`] over byte sequences that decodes each one with a generator
/// and judges the value.
pub struct GeneratorOracle<G, P> {
    generate: G,
    interesting: P,
    by_value: HashMap<String, bool>,
    /// Predicate evaluations (distinct values judged).
    pub evaluations: u64,
}

impl<T, G, P> GeneratorOracle<G, P>
where
    T: Debug,
    G: FnMut(&mut Unstructured) -> arbitrary::Result<T>,
    P: FnMut(&T) -> bool,
{
    pub fn new(generate: G, interesting: P) -> Self {
        GeneratorOracle {
            generate,
            interesting,
            by_value: HashMap::new(),
            evaluations: 0,
        }
    }

    fn render(generate: &mut G, bytes: &[u8]) -> Option<(T, String)> {
        let value = generate(&mut Unstructured::new(bytes)).ok()?;
        let text = format!("{value:?}");
        Some((value, text))
    }
}

impl<T, G, P> Oracle<u8> for GeneratorOracle<G, P>
where
    T: Debug,
    G: FnMut(&mut Unstructured) -> arbitrary::Result<T>,
    P: FnMut(&T) -> bool,
{
    fn test(&mut self, candidate: &[u8]) -> bool {
        let Some((value, text)) = Self::render(&mut self.generate, candidate) else {
            return false;
        };
        if let Some(&known) = self.by_value.get(&text) {
            return known;
        }
        self.evaluations += 1;
        let verdict = (self.interesting)(&value);
        self.by_value.insert(text, verdict);
        verdict
    }

    fn spans(&mut self, candidate: &[u8]) -> Option<Vec<Span>> {
        let generate = &mut self.generate;
        Some(probe_spans(candidate, |b| {
            Self::render(generate, b).map(|(_, text)| text)
        }))
    }

    fn render(&mut self, candidate: &[u8]) -> Option<String> {
        Self::render(&mut self.generate, candidate).map(|(_, text)| text)
    }
}

/// Shrinks `input`, whose generated value is interesting, to the smallest
/// byte sequence (shortlex, integers by value) whose value still is.
///
/// ```
/// use arbitrary::{Arbitrary, Unstructured};
/// use reduce_crash::reduce::shrink_generated;
///
/// // A "bug": some element above 200 followed by a zero.
/// let generate = |u: &mut Unstructured| Vec::<u8>::arbitrary(u);
/// let failing = |v: &Vec<u8>| v.windows(2).any(|w| w[0] > 200 && w[1] == 0);
/// let input = [1, 7, 1, 250, 1, 0, 1, 9, 1, 3];
/// let shrunk = shrink_generated(&input, generate, failing);
/// let value = generate(&mut Unstructured::new(&shrunk)).unwrap();
/// assert_eq!(value, vec![201, 0]);
/// ```
pub fn shrink_generated<T, G, P>(input: &[u8], generate: G, interesting: P) -> Vec<u8>
where
    T: Debug,
    G: FnMut(&mut Unstructured) -> arbitrary::Result<T>,
    P: FnMut(&T) -> bool,
{
    let mut oracle = GeneratorOracle::new(generate, interesting);
    shrink_choices(input, &mut oracle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbitrary::Arbitrary;

    #[derive(Debug, Arbitrary, PartialEq)]
    enum Op {
        Push(u16),
        Pop,
        Clear,
    }

    /// Pops more than it pushed, with a big push somewhere: the shrunk value
    /// is the smallest such program, values included.
    #[test]
    fn shrinks_a_generated_program_to_its_minimal_value() {
        let generate = |u: &mut Unstructured| Vec::<Op>::arbitrary(u);
        let bad = |ops: &Vec<Op>| {
            let mut depth = 0i32;
            let mut big = false;
            for op in ops {
                match op {
                    Op::Push(v) => {
                        depth += 1;
                        big |= *v >= 1000;
                    }
                    Op::Pop => depth -= 1,
                    Op::Clear => depth = 0,
                }
                if depth < 0 && big {
                    return true;
                }
            }
            false
        };
        // Noise ops, then Push(54321), Pop, Pop, then more noise.
        let mut input = Vec::new();
        for k in 0..12u8 {
            input.extend([1, k.wrapping_mul(37), 0, 0, 0x00, k, k]); // Push(k*..)
        }
        input.extend([1, 0xff, 0xff, 0xff, 0xff]); // Clear
        input.extend([1, 0, 0, 0, 0, 0x31, 0xd4]); // Push(54321)
        input.extend([1, 0, 0, 0, 0x60, 1, 0, 0, 0, 0x60]); // Pop, Pop
        input.extend([1, 9, 9, 9, 9, 1, 2, 3]);
        let value = |b: &[u8]| generate(&mut Unstructured::new(b)).unwrap();
        assert!(bad(&value(&input)), "{:?}", value(&input));
        let shrunk = shrink_generated(&input, generate, bad);
        assert_eq!(value(&shrunk), vec![Op::Push(1000), Op::Pop, Op::Pop]);
    }

    #[derive(Debug, Arbitrary)]
    enum Expr {
        Lit(u8),
        Neg(Box<Expr>),
        Add(Box<Expr>, Box<Expr>),
        Mul(Box<Expr>, Box<Expr>),
        Div(Box<Expr>, Box<Expr>),
    }

    impl Expr {
        /// The value (wrapping), and whether somewhere at depth ≥ 2 a
        /// numerator above 1000 is divided by a computed (non-literal) zero.
        fn eval(&self, depth: usize) -> (i64, bool) {
            let pair = |a: &Expr, b: &Expr| {
                let ((x, p), (y, q)) = (a.eval(depth + 1), b.eval(depth + 1));
                (x, y, p || q)
            };
            match self {
                Expr::Lit(v) => (i64::from(*v), false),
                Expr::Neg(a) => {
                    let (x, bug) = a.eval(depth + 1);
                    (x.wrapping_neg(), bug)
                }
                Expr::Add(a, b) => {
                    let (x, y, bug) = pair(a, b);
                    (x.wrapping_add(y), bug)
                }
                Expr::Mul(a, b) => {
                    let (x, y, bug) = pair(a, b);
                    (x.wrapping_mul(y), bug)
                }
                Expr::Div(a, b) => {
                    let (x, y, bug) = pair(a, b);
                    let planted = y == 0 && x > 1000 && depth >= 2 && !matches!(**b, Expr::Lit(_));
                    (x.checked_div(y).unwrap_or(0), bug || planted)
                }
            }
        }

        fn nodes(&self) -> usize {
            match self {
                Expr::Lit(_) => 1,
                Expr::Neg(a) => 1 + a.nodes(),
                Expr::Add(a, b) | Expr::Mul(a, b) | Expr::Div(a, b) => 1 + a.nodes() + b.nodes(),
            }
        }
    }

    /// A recursive type: the failing division sits deep inside a random tree
    /// of 50–200 nodes. Shrinking hoists it (deleting an ancestor's variant
    /// draw with the siblings before the child) to two `Neg` levels and
    /// meets the product threshold with the smallest left factor.
    #[test]
    fn hoists_a_failing_subtree_out_of_a_random_tree() {
        let generate = |u: &mut Unstructured| Expr::arbitrary(u);
        let bad = |e: &Expr| e.eval(0).1;
        let mut state = 12_345u64;
        let mut byte = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        };
        let mut shrunk_trees = 0;
        while shrunk_trees < 6 {
            let input: Vec<u8> = (0..600).map(|_| byte()).collect();
            let Ok(tree) = generate(&mut Unstructured::new(&input)) else {
                continue;
            };
            if !bad(&tree) || !(50..=200).contains(&tree.nodes()) {
                continue;
            }
            shrunk_trees += 1;
            let shrunk = shrink_generated(&input, generate, bad);
            let value = generate(&mut Unstructured::new(&shrunk)).unwrap();
            assert_eq!(
                format!("{value:?}"),
                "Neg(Neg(Div(Mul(Lit(4), Lit(251)), Neg(Lit(0)))))",
                "from a tree of {} nodes",
                tree.nodes()
            );
        }
    }
}
