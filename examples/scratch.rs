use arbitrary::{Arbitrary, Unstructured};
use reduce_crash::oracle::{Oracle, Span};
use reduce_crash::reduce::{shrink_choices, GeneratorOracle};
use reduce_crash::rng::Rng;
use std::time::{Duration, Instant};
#[derive(Debug, Arbitrary, Clone, PartialEq)]
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
struct T<O> {
    o: O,
    spans: (u64, Duration),
    tests: (u64, Duration),
    renders: (u64, Duration),
}
impl<O: Oracle<u8>> Oracle<u8> for T<O> {
    fn test(&mut self, c: &[u8]) -> bool {
        let t = Instant::now();
        let r = self.o.test(c);
        self.tests.0 += 1;
        self.tests.1 += t.elapsed();
        r
    }
    fn spans(&mut self, c: &[u8]) -> Option<Vec<Span>> {
        let t = Instant::now();
        let r = self.o.spans(c);
        self.spans.0 += 1;
        self.spans.1 += t.elapsed();
        r
    }
    fn render(&mut self, c: &[u8]) -> Option<String> {
        let t = Instant::now();
        let r = self.o.render(c);
        self.renders.0 += 1;
        self.renders.1 += t.elapsed();
        r
    }
}
fn main() {
    let mut rng = Rng::from_state(7);
    let input: Vec<u8> = (0..6000).map(|_| rng.byte() | 1).collect();
    let generate = |u: &mut Unstructured| Vec::<Op>::arbitrary(u);
    let ops = generate(&mut Unstructured::new(&input)).unwrap();
    let pushes = |ops: &Vec<Op>| {
        ops.iter()
            .filter(|o| matches!(o, Op::Push(v) if *v > 3))
            .count()
    };
    let want = pushes(&ops) * 9 / 10;
    let mut o = T {
        o: GeneratorOracle::new(generate, |v: &Vec<Op>| pushes(v) >= want),
        spans: Default::default(),
        tests: Default::default(),
        renders: Default::default(),
    };
    let t = Instant::now();
    let shrunk = shrink_choices(&input, &mut o);
    println!(
        "{} bytes, {:?}; spans {:?} tests {:?} renders {:?}",
        shrunk.len(),
        t.elapsed(),
        o.spans,
        o.tests,
        o.renders
    );
}
