//! How often the choice shrinker reaches the true minimum when draws only
//! work together: sums, differences, products, checksums, copies, ratios.
//!
//! For each relation over a small tuple (`(u8, u8, u8)` or `(u16, u8)`,
//! decoded with `arbitrary`), the global minimum is found by brute force:
//! every byte sequence of up to 3 bytes, ordered as the shrinker orders
//! them (shorter first, then by the decoded values, which is the draw
//! order for these types). Then 40 random 3-byte inputs satisfying the
//! relation (fixed seed) are shrunk with
//! [`shrink_generated`](reduce_crash::reduce::shrink_generated); the table
//! shows how many reached the minimum, the most common local minimum left
//! otherwise, and the mean number of predicate evaluations (distinct
//! values). Rows that miss are known limits, not failures: the README
//! lists why.
//!
//! A second table does the same for programs of a small stack machine
//! (`Vec<Op>`), where structure and values interact; no brute force there
//! (the minima are longer than 3 bytes), so it shows how many distinct
//! results 30 random starts end at and how many reach the shortest of them.
//!
//! A third table shrinks long random programs whose property needs most of
//! them, and shows the time and how often the draws were probed.
//!
//! Run with `cargo bench --bench relations` (about a minute).

use arbitrary::{Arbitrary, Unstructured};
use reduce_crash::reduce::oracle::{Oracle, Span};
use reduce_crash::reduce::rng::Rng;
use reduce_crash::reduce::{shrink_choices, shrink_generated, GeneratorOracle};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::Instant;

/// Random starting points per relation.
const STARTS: usize = 40;

fn decode<T: for<'a> Arbitrary<'a>>(bytes: &[u8]) -> T {
    T::arbitrary(&mut Unstructured::new(bytes)).expect("fixed-size tuples always decode")
}

/// The first sequence in shrink order (length, then decoded value) whose
/// value satisfies `pred`, among all sequences of up to 3 bytes.
fn global_minimum<T>(pred: &dyn Fn(&T) -> bool) -> Option<(usize, T)>
where
    T: for<'a> Arbitrary<'a> + Ord,
{
    for len in 0..=3usize {
        let mut best: Option<T> = None;
        for n in 0..(1u32 << (8 * len)) {
            let bytes: Vec<u8> = (0..len).map(|i| (n >> (8 * i)) as u8).collect();
            let value: T = decode(&bytes);
            if pred(&value) && best.as_ref().is_none_or(|b| value < *b) {
                best = Some(value);
            }
        }
        if let Some(best) = best {
            return Some((len, best));
        }
    }
    None
}

fn row<T>(ty: &str, name: &str, pred: &dyn Fn(&T) -> bool) -> bool
where
    T: for<'a> Arbitrary<'a> + Ord + Debug,
{
    let Some((min_len, min)) = global_minimum(pred) else {
        println!("| `{ty}` | `{name}` | none within 3 bytes | | | |");
        return true;
    };
    let mut rng = Rng::from_state(99);
    let (mut reached, mut evaluations, mut starts) = (0, 0u64, 0);
    let mut left: BTreeMap<String, usize> = BTreeMap::new();
    let mut attempts = 0;
    while starts < STARTS && attempts < 1_000_000 {
        attempts += 1;
        let input: Vec<u8> = (0..3).map(|_| rng.byte()).collect();
        if !pred(&decode::<T>(&input)) {
            continue;
        }
        starts += 1;
        let generate = |u: &mut Unstructured| T::arbitrary(u);
        let shrunk = shrink_generated(&input, generate, |v: &T| {
            evaluations += 1;
            pred(v)
        });
        let value: T = decode(&shrunk);
        assert!(pred(&value), "the shrunk value must still satisfy {name}");
        if shrunk.len() == min_len && value == min {
            reached += 1;
        } else {
            *left
                .entry(format!("{value:?} ({} B)", shrunk.len()))
                .or_default() += 1;
        }
    }
    let most_common = left
        .iter()
        .max_by_key(|(_, n)| **n)
        .map_or(String::new(), |(v, n)| format!("`{v}` ×{n}"));
    println!(
        "| `{ty}` | `{name}` | `{min:?}` ({min_len} B) | {reached}/{starts} | {most_common} | {} |",
        evaluations / starts.max(1) as u64
    );
    reached == starts
}

/// A stack machine's instruction; programs are `Vec<Op>`.
#[derive(Debug, Arbitrary, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    Push(u8),
    Pop,
    Add,
    Mul,
    Dup,
    Swap,
    Store(u8),
    Load(u8),
}

/// The final stack and memory of `ops` (arithmetic wraps; an instruction
/// without enough operands does nothing).
fn execute(ops: &[Op]) -> (Vec<i64>, [i64; 4]) {
    let (mut stack, mut memory) = (Vec::new(), [0i64; 4]);
    for op in ops {
        match *op {
            Op::Push(v) => stack.push(i64::from(v)),
            Op::Pop => {
                stack.pop();
            }
            Op::Add | Op::Mul if stack.len() >= 2 => {
                let (b, a) = (stack.pop().unwrap(), stack.pop().unwrap());
                stack.push(if *op == Op::Add {
                    a.wrapping_add(b)
                } else {
                    a.wrapping_mul(b)
                });
            }
            Op::Add | Op::Mul => {}
            Op::Dup => {
                if let Some(&top) = stack.last() {
                    stack.push(top);
                }
            }
            Op::Swap => {
                let n = stack.len();
                if n >= 2 {
                    stack.swap(n - 1, n - 2);
                }
            }
            Op::Store(i) => {
                if let Some(top) = stack.pop() {
                    memory[usize::from(i % 4)] = top;
                }
            }
            Op::Load(i) => stack.push(memory[usize::from(i % 4)]),
        }
    }
    (stack, memory)
}

fn program_row(name: &str, pred: &dyn Fn(&[Op]) -> bool) {
    const PROGRAMS: usize = 30;
    let generate = |u: &mut Unstructured| Vec::<Op>::arbitrary(u);
    let mut rng = Rng::from_state(7);
    let (mut starts, mut attempts, mut evaluations) = (0, 0, 0u64);
    let mut results: BTreeMap<(usize, String), usize> = BTreeMap::new();
    while starts < PROGRAMS && attempts < 100_000 {
        attempts += 1;
        let len = 20 + usize::from(rng.byte()) % 200;
        let input: Vec<u8> = (0..len).map(|_| rng.byte()).collect();
        if !pred(&decode::<Vec<Op>>(&input)) {
            continue;
        }
        starts += 1;
        let shrunk = shrink_generated(&input, generate, |ops: &Vec<Op>| {
            evaluations += 1;
            pred(ops)
        });
        let value: Vec<Op> = decode(&shrunk);
        assert!(pred(&value), "the shrunk program must still satisfy {name}");
        *results
            .entry((shrunk.len(), format!("{value:?}")))
            .or_default() += 1;
    }
    let ((best_len, best), reached) = results.iter().next().expect("some program satisfies it");
    let next = results
        .iter()
        .skip(1)
        .max_by_key(|(_, n)| **n)
        .map_or(String::new(), |((len, v), n)| {
            format!("`{v}` ({len} B) ×{n}")
        });
    println!(
        "| `{name}` | {} | `{best}` ({best_len} B) | {reached}/{starts} | {next} | {} |",
        results.len(),
        evaluations / starts.max(1) as u64
    );
}

/// Counts how often the shrinker asks for the spans (each a probe: a few
/// decodes per byte).
struct Probes<O> {
    inner: O,
    probes: u64,
}

impl<O: Oracle<u8>> Oracle<u8> for Probes<O> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        self.inner.test(candidate)
    }
    fn spans(&mut self, candidate: &[u8]) -> Option<Vec<Span>> {
        self.probes += 1;
        self.inner.spans(candidate)
    }
    fn render(&mut self, candidate: &[u8]) -> Option<String> {
        self.inner.render(candidate)
    }
}

/// A long random program whose property needs most of it: 90 % of its
/// `Push(v)` with `v > 3` kept. Shows what a long result costs.
fn long_program_row(len: usize) {
    let mut rng = Rng::from_state(7);
    let input: Vec<u8> = (0..len).map(|_| rng.byte() | 1).collect();
    let pushes = |ops: &Vec<Op>| {
        ops.iter()
            .filter(|op| matches!(op, Op::Push(v) if *v > 3))
            .count()
    };
    let start: Vec<Op> = decode(&input);
    let want = pushes(&start) * 9 / 10;
    let generate = |u: &mut Unstructured| Vec::<Op>::arbitrary(u);
    let mut oracle = Probes {
        inner: GeneratorOracle::new(generate, |ops: &Vec<Op>| pushes(ops) >= want),
        probes: 0,
    };
    let clock = Instant::now();
    let shrunk = shrink_choices(&input, &mut oracle);
    let seconds = clock.elapsed().as_secs_f64();
    let value: Vec<Op> = decode(&shrunk);
    assert!(pushes(&value) >= want);
    println!(
        "| {len} | {} | {} | {} | {} | {} | {seconds:.2} |",
        start.len(),
        shrunk.len(),
        value.len(),
        oracle.inner.evaluations,
        oracle.probes
    );
}

type Triple = (u8, u8, u8);
type Wide = (u16, u8);
/// A named relation over `T`.
type Relation<'n, T> = (&'n str, Box<dyn Fn(&T) -> bool>);

fn main() {
    let triples: Vec<Relation<Triple>> = vec![
        (
            "a + b > 300",
            Box::new(|&(a, b, _)| u32::from(a) + u32::from(b) > 300),
        ),
        (
            "a * b > 1000",
            Box::new(|&(a, b, _)| u32::from(a) * u32::from(b) > 1000),
        ),
        (
            "a * b * c > 100000",
            Box::new(|&(a, b, c)| u32::from(a) * u32::from(b) * u32::from(c) > 100_000),
        ),
        (
            "a > b + 50",
            Box::new(|&(a, b, _)| u32::from(a) > u32::from(b) + 50),
        ),
        (
            "a == c && a > 100",
            Box::new(|&(a, _, c)| a == c && a > 100),
        ),
        (
            "b > 0 && a % b == 7",
            Box::new(|&(a, b, _)| b > 0 && a % b == 7),
        ),
        ("a ^ b == 0x5a", Box::new(|&(a, b, _)| a ^ b == 0x5a)),
        (
            "a + b + c == 200 && c > a",
            Box::new(|&(a, b, c)| u32::from(a) + u32::from(b) + u32::from(c) == 200 && c > a),
        ),
        (
            "a < b < c && c - a > 100",
            Box::new(|&(a, b, c)| a < b && b < c && c - a > 100),
        ),
        (
            "a - b == 17 (wrapping) && c == a > 0",
            Box::new(|&(a, b, c)| a > 0 && a.wrapping_sub(b) == 17 && c == a),
        ),
        (
            "a.count_ones() + b.count_ones() >= 12",
            Box::new(|&(a, b, _)| a.count_ones() + b.count_ones() >= 12),
        ),
    ];
    let wides: Vec<Relation<Wide>> = vec![
        (
            "a > 5000 && b > a % 200",
            Box::new(|&(a, b)| a > 5000 && u16::from(b) > a % 200),
        ),
        (
            "a + b > 60000",
            Box::new(|&(a, b)| u32::from(a) + u32::from(b) > 60_000),
        ),
        (
            "a * b > 100000",
            Box::new(|&(a, b)| u32::from(a) * u32::from(b) > 100_000),
        ),
        (
            "a - b == 300 (wrapping)",
            Box::new(|&(a, b)| a.wrapping_sub(b.into()) == 300),
        ),
        (
            "a / 256 == b && b > 10",
            Box::new(|&(a, b)| a / 256 == u16::from(b) && b > 10),
        ),
        (
            "a % 256 == b && a > 1000",
            Box::new(|&(a, b)| a % 256 == u16::from(b) && a > 1000),
        ),
        (
            "a ^ b == 0x1234",
            Box::new(|&(a, b)| a ^ u16::from(b) == 0x1234),
        ),
        (
            "a > b * b && b > 20",
            Box::new(|&(a, b)| u32::from(a) > u32::from(b).pow(2) && b > 20),
        ),
    ];
    println!("| type | relation | minimum | reached | most common local minimum otherwise | evaluations (mean) |");
    println!("|---|---|---|---:|---|---:|");
    let mut all = 0;
    let mut full = 0;
    for (name, pred) in &triples {
        all += 1;
        full += usize::from(row::<Triple>("(u8, u8, u8)", name, pred.as_ref()));
    }
    for (name, pred) in &wides {
        all += 1;
        full += usize::from(row::<Wide>("(u16, u8)", name, pred.as_ref()));
    }
    println!();
    println!("relations where every start reached the minimum: {full} of {all}");
    println!();
    println!("| program property | distinct results | shortest result | reached it | most common other | evaluations (mean) |");
    println!("|---|---:|---|---:|---|---:|");
    let top = |ops: &[Op]| execute(ops).0.last().is_some_and(|&t| t > 1000);
    program_row("top of stack > 1000", &top);
    program_row("memory[3] > 300", &|ops: &[Op]| execute(ops).1[3] > 300);
    program_row("5 values on the stack, sum > 600", &|ops: &[Op]| {
        let stack = execute(ops).0;
        stack.len() >= 5 && stack.iter().sum::<i64>() > 600
    });
    println!();
    println!("| input (B) | ops | result (B) | result ops | evaluations | probes | time (s) |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for len in [1000, 3000, 6000] {
        long_program_row(len);
    }
}
