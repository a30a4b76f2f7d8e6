//! Reducers: algorithms that turn an interesting input into a smaller one
//! that is still interesting, asking only an [`Oracle`].
//!
//! * [`ddmin()`] — Zeller & Hildebrandt's ddmin, 1-minimal results;
//! * [`delete_chunks`] — fast adaptive chunk deletion for the coarse work;
//! * [`delete_windows`] — short runs at every offset (multi-byte units);
//! * [`truncate()`] — the shortest interesting prefix, in `O(log n)` tests;
//! * [`cut_around_nest`] — the statements before and after a deep nest
//!   inside a document cut in a few tests;
//! * [`reduce_repeats`] — a repeated unit (deep nesting) cut to the fewest
//!   copies and the fewest bytes each, in a few large steps;
//! * [`reduce_nesting`] — balanced pairs and indentation blocks: delete,
//!   hollow, unwrap, hoist (deep nesting without a grammar);
//! * [`reduce_numbers`] — decimal and hex literals lowered together with the
//!   bytes they count (length prefixes);
//! * [`reduce_fields`] — binary words lowered and zeroed (offsets, counts);
//! * [`simplify()`] — afl-tmin-style value simplification at constant length;
//! * [`shorten_tiny`] — a result of two or three bytes: every input a byte
//!   shorter with one byte given any value;
//! * [`reduce_randomly`] — a seeded, budgeted random stage: the last one,
//!   and the first where successes are costly (timeouts);
//! * [`seeds`] — the seed projects' reducers, transcribed call-for-call so
//!   the reference results reproduce;
//! * [`reduce`] / [`reduce_with`] — the default pipeline combining them;
//! * [`Strategy`] — the choice offered on the command line.
//!
//! Every reducer assumes its input is interesting, never returns anything
//! longer than the input, and only returns candidates the oracle accepted
//! (or the input itself). All of them return early once
//! [`Oracle::exhausted`] is true.

pub mod alike;
mod batch;
pub mod choices;
pub mod chunks;
pub mod ddmin;
pub mod explain;
pub mod fields;
pub mod generator;
pub mod isolate;
pub mod nesting;
pub mod numbers;
pub mod oracle;
pub mod population;
pub mod random;
pub mod repeats;
pub mod rng;
pub mod seeds;
pub mod shrink;
pub mod simplify;
pub mod spans;
#[cfg(test)]
mod testing;
pub mod tiny;
pub mod truncate;

use std::fmt;
use std::str::FromStr;

use crate::reduce::alike::Alike;
use crate::reduce::oracle::{Oracle, Span};

pub(crate) use choices::debug_tokens;
pub use choices::{probe_spans, shrink_choices, ChoiceElement};
pub use chunks::{
    delete_chunks, delete_chunks_down_to, delete_chunks_with, delete_windows, delete_windows_with,
    NestInteriors,
};
pub use ddmin::{ddmin, ddmin_with};
pub use fields::reduce_fields;
pub use generator::{shrink_generated, GeneratorOracle};
pub use isolate::cut_around_nest;
pub use nesting::reduce_nesting;
pub use numbers::reduce_numbers;
pub use random::{reduce_randomly, reduce_randomly_with, Draws};
pub use repeats::reduce_repeats;
pub use seeds::{fuzzingbook_dd, seed_ddmin, seed_ddrmin};
pub use simplify::{simplify, Canonical};
pub use spans::delete_spans;
pub use tiny::shorten_tiny;
pub use truncate::truncate;

/// Tests the random last stage runs per fixpoint by default: as many runs
/// as `cargo fuzz tmin` gives libFuzzer's `-minimize_crash` per attempt.
pub const DEFAULT_RANDOM_TESTS: u64 = 255;

/// Above this length the pipeline skips [`delete_windows`] for the round.
pub const MAX_WINDOWS_INPUT: usize = 64 * 1024;

/// The first round's chunk sweep goes down to chunks of 1/256 of the
/// input: at most about 512 chunk positions per sweep, a few hundred tests
/// like each structural pass, where sizes down to 1 cost about twice the
/// input's length.
const COARSE_PARTS: usize = 256;

/// Settings of the default pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pipeline {
    /// Seed of the random last stage (`--seed`).
    pub seed: u64,
    /// Tests the random stage may run each time the deterministic passes
    /// reach a fixpoint (`--random-tests`; 0: no random stage), and never
    /// more than the deterministic passes asked for since the last random
    /// stage: it at most doubles the work (on a target whose crashes cost a
    /// fork or a timeout each, that matters).
    pub random_tests: u64,
    /// An interesting candidate costs far more than an uninteresting one
    /// (a timeout: a candidate that still hangs runs to the limit, one that
    /// does not ends at once). Then what matters is bytes removed per
    /// success, and the pipeline leads with random stages of strictly
    /// shorter candidates ([`Draws::Shorter`]) while they pay, and its
    /// random stages never pay for a same-length change. Set by the
    /// session from the crash's kind, not by the user.
    pub costly_successes: bool,
    /// A result of two or three bytes gets [`shorten_tiny`]: about a
    /// thousand tests, worth it for the crash a person reads (the command
    /// line sets it), not for every small member of a fuzzer's population
    /// or corpus (the library's default leaves it off).
    pub tiny: bool,
}

impl Default for Pipeline {
    fn default() -> Self {
        Pipeline {
            seed: 0,
            random_tests: DEFAULT_RANDOM_TESTS,
            costly_successes: false,
            tiny: false,
        }
    }
}

/// A leading random stage goes on for another round while the last one
/// removed at least this share of its input. An eighth stopped them on
/// cpp_demangle-timeout at 78 B, after which the rounds paid a hang (4.4 s)
/// for every few bytes: 65–70 B at 100–120 s against 57–60 B with a
/// thirty-second (tmin: 59 B at 120 s); sql-timeout was 353 B at 120 s
/// either way.
const LEADING_RANDOM_PAYS: f64 = 1.0 / 32.0;

/// What one pass of the pipeline did, summed over its runs.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PassStats {
    pub name: &'static str,
    /// Candidates it ran (cache hits not counted when the oracle can tell).
    pub tests: u64,
    /// Bytes it removed.
    pub removed: u64,
    /// Times it ran.
    pub runs: u64,
    /// Runs of it that changed the input.
    pub improved: u64,
    /// Wall-clock seconds spent in it (its tests included).
    pub secs: f64,
}

/// Per-pass counts of a [`reduce_with`] run, in pipeline order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PassLog {
    pub passes: Vec<PassStats>,
    /// Candidates answered without a run ([`alike`]).
    pub alike: u64,
}

impl PassLog {
    fn record(&mut self, name: &'static str, tests: u64, secs: f64, before: &[u8], after: &[u8]) {
        let i = match self.passes.iter().position(|p| p.name == name) {
            Some(i) => i,
            None => {
                self.passes.push(PassStats {
                    name,
                    tests: 0,
                    removed: 0,
                    runs: 0,
                    improved: 0,
                    secs: 0.0,
                });
                self.passes.len() - 1
            }
        };
        let p = &mut self.passes[i];
        p.tests += tests;
        p.removed += (before.len() - after.len()) as u64;
        p.runs += 1;
        p.improved += u64::from(before != after);
        p.secs += secs;
    }
}

/// Counts what passes through to an oracle, for [`PassLog`].
struct Counting<'a, O: ?Sized> {
    inner: &'a mut O,
    calls: u64,
}

impl<O: Oracle<u8> + ?Sized> Counting<'_, O> {
    /// Tests run so far: executions if the oracle counts them, else calls.
    fn tests(&self) -> u64 {
        self.inner.executed().unwrap_or(self.calls)
    }
}

impl<O: Oracle<u8> + ?Sized> Oracle<u8> for Counting<'_, O> {
    fn test(&mut self, candidate: &[u8]) -> bool {
        self.calls += 1;
        self.inner.test(candidate)
    }

    fn first_interesting(&mut self, candidates: &[Vec<u8>]) -> Option<usize> {
        let found = self.inner.first_interesting(candidates);
        self.calls += found.map_or(candidates.len(), |k| k + 1) as u64;
        found
    }

    fn exhausted(&self) -> bool {
        self.inner.exhausted()
    }

    fn phase(&mut self, name: &'static str) {
        self.inner.phase(name);
    }

    fn executed(&self) -> Option<u64> {
        self.inner.executed()
    }

    fn spans(&mut self, candidate: &[u8]) -> Option<Vec<Span>> {
        self.inner.spans(candidate)
    }

    fn render(&mut self, candidate: &[u8]) -> Option<String> {
        self.inner.render(candidate)
    }

    fn failed_otherwise(&mut self, candidate: &[u8]) -> Option<bool> {
        self.inner.failed_otherwise(candidate)
    }
}

/// The default pipeline with default settings ([`reduce_with`]).
pub fn reduce<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    reduce_with(input, oracle, &Pipeline::default(), &mut PassLog::default())
}

/// The default pipeline. With `pipeline.costly_successes` it first runs
/// random stages of `pipeline.random_tests` strictly shorter candidates
/// while each removes at least `LEADING_RANDOM_PAYS` of its input: on a
/// timeout they remove several times more bytes per hang confirmed than
/// the deterministic passes (see `docs/design.md`). Then each round runs,
/// in order:
///
/// 1. [`reduce_repeats`], [`cut_around_nest`] (then [`reduce_repeats`]
///    again if it cut), [`truncate()`] and [`delete_chunks`]: the coarse
///    work, cheap on big inputs (all but the last in `O(log n)` tests);
/// 2. [`reduce_nesting`], [`reduce_numbers`] and (on binary-looking inputs)
///    [`reduce_fields`]: what deletion cannot do;
/// 3. [`simplify()`], run until it changes nothing;
/// 4. [`delete_windows`] (on inputs of at most [`MAX_WINDOWS_INPUT`] bytes)
///    and [`ddmin()`] (the 1-minimality guarantee), on the simplified
///    input, and [`simplify()`] again if they deleted anything.
///
/// A round whose step 2 changed the input skips step 4 and starts the next
/// round (step 4 would run again there); a round also starts again when
/// the second simplification changes something. A change of values alone
/// in step 3 costs no round: step 4 checks it. On a binary input of
/// 512 bytes or more the first round is coarse: chunks no smaller than
/// 1/256 of the input, no step 4, and a second round always follows (see
/// [`delete_chunks_down_to`]). At the fixpoint,
/// [`delete_spans`] tries every span between two token or line boundaries
/// (on inputs with few enough of them); if it deletes one, the rounds start
/// again. Then the random stage ([`reduce_randomly`]) gets
/// `pipeline.random_tests` tests (at most as many as the rounds asked for
/// since the last random stage); if it finds something, the rounds start
/// again.
///
/// Every pass asks through [`alike::Alike`]: on one base, an edit alike
/// one that failed (the same bytes, 16 of the base on each side) is
/// answered "not interesting" without a run.
///
/// The result is interesting (or the input itself), never longer than the
/// input, 1-minimal (except where two places look alike and mean
/// different things, and inside long periodic runs), a fixpoint of
/// [`simplify()`] and (with at most
/// [`spans::MAX_BOUNDARIES`] boundaries) of [`delete_spans`] — unless the
/// oracle became exhausted, in which case the best result so far is
/// returned.
pub fn reduce_with<O>(
    input: &[u8],
    oracle: &mut O,
    pipeline: &Pipeline,
    log: &mut PassLog,
) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    let mut alike = Alike::new(oracle, input);
    let mut oracle = Counting {
        inner: &mut alike,
        calls: 0,
    };
    // Whether the input is a binary format is the original's: simplification
    // writes NUL bytes into text (a 16 KB regex nest held 3,263 of them),
    // and the fields pass then read every two of its bytes as a length
    // (6,246 tests, 84 s, for 117 bytes of 16,165).
    let binary = looks_binary(input);
    let mut current = input.to_vec();
    let mut seed = pipeline.seed;
    // Candidates asked for since the last random stage (the count is the
    // same on every run, unlike time, so the result depends on the seed only).
    let mut asked_before = 0;
    // The length before the last random stage: random stages go on only
    // while they lead to shorter inputs (a lower byte at the same length is
    // kept, and the rounds after it run, but it does not buy another stage).
    let mut len_before_random = None;
    let draws = if pipeline.costly_successes {
        Draws::Shorter
    } else {
        Draws::Shortlex
    };
    if pipeline.costly_successes && pipeline.random_tests > 0 {
        loop {
            let before = current.len();
            if oracle.exhausted() || before == 0 {
                return current;
            }
            oracle.phase("random-first");
            let tests = oracle.tests();
            let started = std::time::Instant::now();
            let (next, _) =
                reduce_randomly_with(&current, &mut oracle, seed, pipeline.random_tests, draws);
            let secs = started.elapsed().as_secs_f64();
            log.record(
                "random-first",
                oracle.tests() - tests,
                secs,
                &current,
                &next,
            );
            log.alike = oracle.inner.predicted();
            current = next;
            seed = seed.wrapping_add(1);
            if ((before - current.len()) as f64) < before as f64 * LEADING_RANDOM_PAYS {
                break;
            }
        }
        asked_before = oracle.calls;
    }
    // On a binary input the first round's chunk sweep stops at a size of
    // 1/COARSE_PARTS of the input (see [`delete_chunks_down_to`]) and the
    // round leaves ddmin to the next one, which sweeps down to single
    // bytes. Not on text: there the fine sizes are what cut a document
    // around a nest, and the nesting pass after them costs far more on
    // what they would have cut (regex-mixed-deep: 101 s in nesting for
    // the 2,426 bytes the fine sweep removes in 14.5 s).
    let mut first_round = true;
    loop {
        let coarse = first_round && binary && current.len() / COARSE_PARTS > 1;
        first_round = false;
        let mut structural = false;
        macro_rules! pass {
            ($name:literal, $f:expr) => {{
                if oracle.exhausted() {
                    return current;
                }
                oracle.phase($name);
                let tests = oracle.tests();
                let started = std::time::Instant::now();
                let next: Vec<u8> = $f(&current, &mut oracle);
                let secs = started.elapsed().as_secs_f64();
                log.record($name, oracle.tests() - tests, secs, &current, &next);
                log.alike = oracle.inner.predicted();
                let changed = next != current;
                current = next;
                changed
            }};
        }
        // The nest's count first, then the company around it, then the
        // count again if there was company: on yaml-deep (a fuzzer's nest
        // with a 131-byte glitch at one level) cutting the glitch first left
        // the repeats pass 8,301 B to remove instead of 18,130 (14,556 B at
        // 60 s, against 4,854 B in 36 s), and a nest inside a document may
        // cover too little of the input for the repeats pass to see it
        // until the document is cut.
        pass!("repeats", reduce_repeats);
        if pass!("isolate", cut_around_nest) {
            pass!("repeats", reduce_repeats);
        }
        pass!("truncate", truncate);
        pass!("chunks", |c: &[u8], o: &mut Counting<'_, Alike<'_, O>>| {
            let smallest = |len: usize| if coarse { len / COARSE_PARTS } else { 1 };
            delete_chunks_down_to(c, o, &mut NestInteriors::default(), smallest)
        });
        structural |= pass!("nesting", reduce_nesting);
        structural |= pass!("numbers", reduce_numbers);
        if binary {
            structural |= pass!("fields", reduce_fields);
        }
        // Simplification before the last deletions, so that they check
        // the simplified input: a change of values alone then costs no
        // round. After them it did, and the round found nothing on every
        // nest row (yaml-deep 13.9 s, regex-mixed-deep 12.6 s).
        pass!("simplify", simplify_fully);
        // Another round follows anyway: the last deletions wait for it
        // (they removed nothing on every nest row, and ran again in the
        // next round: 9 s a round on regex-mixed-deep).
        if structural || coarse {
            continue;
        }
        let mut deleted = false;
        // Every offset of every width: on a big input, millions of
        // candidates of that size to build and hash, mostly repeats of
        // each other on a nest (and chunks and ddmin still make the result
        // 1-minimal). It runs once a round has brought the input down.
        if current.len() <= MAX_WINDOWS_INPUT {
            deleted |= pass!("windows", |c: &[u8], o: &mut Counting<'_, Alike<'_, O>>| {
                delete_windows_with(c, o, &mut NestInteriors::default())
            });
        }
        deleted |= pass!("ddmin", |c: &[u8], o: &mut Counting<'_, Alike<'_, O>>| {
            ddmin_with(c, o, &mut NestInteriors::default())
        });
        // What the deletions left is simplified again; if that changes a
        // value, the round starts over (as a structural change does).
        if deleted && pass!("simplify", simplify_fully) {
            continue;
        }
        // At the fixpoint only: quadratic in the boundaries, it is for the
        // last, small stage (and finds nothing the passes above would). Its
        // tests do not buy the random stage any (they are many, and almost
        // all fail on a result that is already 1-minimal).
        let before_spans = oracle.calls;
        let spans_changed = pass!("spans", delete_spans);
        asked_before += oracle.calls - before_spans;
        if spans_changed {
            continue;
        }
        // A result of two or three bytes: every input a byte shorter with
        // one byte given any value (a thousand cheap tests; not where a
        // success costs a hang). Its tests buy the random stage none.
        if pipeline.tiny && !pipeline.costly_successes && current.len() <= tiny::TINY {
            let before_tiny = oracle.calls;
            let tiny_changed = pass!("tiny", shorten_tiny);
            asked_before += oracle.calls - before_tiny;
            if tiny_changed {
                continue;
            }
        }
        if pipeline.random_tests == 0
            || current.is_empty()
            || len_before_random.is_some_and(|len| current.len() >= len)
        {
            return current;
        }
        len_before_random = Some(current.len());
        let budget = outside_long_runs(
            pipeline.random_tests.min(oracle.calls - asked_before),
            &current,
        );
        if budget == 0 {
            return current;
        }
        let changed = pass!("random", |c: &[u8], o: &mut Counting<'_, Alike<'_, O>>| {
            reduce_randomly_with(c, o, seed, budget, draws).0
        });
        asked_before = oracle.calls;
        if !changed || oracle.exhausted() {
            return current;
        }
        // The next fixpoint's random stage draws other candidates.
        seed = seed.wrapping_add(1);
    }
}

/// [`simplify()`] until it changes nothing: one run is not its own
/// fixpoint (a byte it lowered to `0` goes to NUL only in the next run).
/// A second run is cheap (1–3 tests on the nest rows): every value and
/// position it tries failed on nearly the same input.
fn simplify_fully<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    let mut current = simplify(input, oracle);
    while !oracle.exhausted() {
        let next = simplify(&current, oracle);
        if next == current {
            break;
        }
        current = next;
    }
    current
}

/// The share of `tests` that the bytes of `input` outside long runs of
/// equal bytes have (rounded down). A random draw inside such a run can
/// only erase part of it (no draw splits one, see [`random`]), and how long
/// a nest must be is what [`reduce_repeats`] settles by bisection: on a
/// stack overflow's nest (`: [`, 4,851 `[`, `0` on yaml-deep) the stage's
/// 220 tests took 12.6 s and removed nothing.
fn outside_long_runs(tests: u64, input: &[u8]) -> u64 {
    if input.is_empty() {
        return tests;
    }
    let inside: usize = input
        .chunk_by(|a, b| a == b)
        .filter(|run| run.len() > simplify::LONG_RUN)
        .map(<[u8]>::len)
        .sum();
    tests * (input.len() - inside) as u64 / input.len() as u64
}

/// More than one byte in eight outside printable ASCII and whitespace: the
/// binary-field pass is worth its tests.
fn looks_binary(input: &[u8]) -> bool {
    let odd = input
        .iter()
        .filter(|&&b| {
            !(b.is_ascii_graphic() || b == b' ' || b == b'\n' || b == b'\r' || b == b'\t')
        })
        .count();
    odd * 8 > input.len()
}

/// [`reduce`] for byte strings, the element type of fuzz artifacts.
pub fn reduce_bytes<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    reduce(input, oracle)
}

/// A reduction algorithm selectable by name (`--strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// [`reduce`]: truncation, chunks, nesting, numbers, binary fields,
    /// ddmin and simplification to a fixpoint, spans between boundaries,
    /// then a random stage.
    #[default]
    Default,
    /// [`ddmin()`] alone.
    Ddmin,
    /// [`delete_chunks`] alone.
    Chunks,
    /// Seed 000's iterative partition ddmin ([`seed_ddmin`]).
    SeedDdmin,
    /// Seed 000's recursive ddrmin ([`seed_ddrmin`]).
    SeedDdrmin,
    /// The Fuzzing Book's `DeltaDebuggingReducer` ([`fuzzingbook_dd`]).
    FuzzingBookDd,
    /// Hypothesis-style choice-sequence shrinking ([`shrink_choices`]), for
    /// typed (`arbitrary`) targets.
    Choices,
}

impl Strategy {
    /// Every strategy, in the order the CLI lists them.
    pub const ALL: [Strategy; 7] = [
        Strategy::Default,
        Strategy::Ddmin,
        Strategy::Chunks,
        Strategy::SeedDdmin,
        Strategy::SeedDdrmin,
        Strategy::FuzzingBookDd,
        Strategy::Choices,
    ];

    /// The name accepted by [`FromStr`] and printed by [`fmt::Display`].
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Default => "default",
            Strategy::Ddmin => "ddmin",
            Strategy::Chunks => "chunks",
            Strategy::SeedDdmin => "seed-ddmin",
            Strategy::SeedDdrmin => "ddrmin",
            Strategy::FuzzingBookDd => "fuzzingbook-dd",
            Strategy::Choices => "choices",
        }
    }

    /// Runs the strategy on `input`, which is assumed interesting.
    pub fn run<O>(&self, input: &[u8], oracle: &mut O) -> Vec<u8>
    where
        O: Oracle<u8> + ?Sized,
    {
        self.run_with(input, oracle, &Pipeline::default(), &mut PassLog::default())
    }

    /// [`Strategy::run`] with the pipeline's settings; the default pipeline
    /// records what each pass did in `log`.
    pub fn run_with<O>(
        &self,
        input: &[u8],
        oracle: &mut O,
        pipeline: &Pipeline,
        log: &mut PassLog,
    ) -> Vec<u8>
    where
        O: Oracle<u8> + ?Sized,
    {
        match self {
            Strategy::Default => reduce_with(input, oracle, pipeline, log),
            Strategy::Ddmin => ddmin(input, oracle),
            Strategy::Chunks => delete_chunks(input, oracle),
            Strategy::SeedDdmin => seed_ddmin(input, oracle),
            Strategy::SeedDdrmin => seed_ddrmin(input, oracle),
            Strategy::FuzzingBookDd => fuzzingbook_dd(input, oracle),
            Strategy::Choices => u8::shrink_choices(input, oracle),
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A strategy name that [`Strategy::from_str`] does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStrategy(pub String);

impl fmt::Display for UnknownStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown strategy `{}` (expected one of:", self.0)?;
        for strategy in Strategy::ALL {
            write!(f, " {strategy}")?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownStrategy {}

impl FromStr for Strategy {
    type Err = UnknownStrategy;

    /// Accepts [`Strategy::name`] (case-insensitive) and the alias
    /// `seed-ddrmin` for `ddrmin`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        let name = if lower == "seed-ddrmin" {
            "ddrmin"
        } else {
            &lower
        };
        Strategy::ALL
            .into_iter()
            .find(|strategy| strategy.name() == name)
            .ok_or_else(|| UnknownStrategy(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{arb_case, arb_large_binary_case, is_one_minimal, shortlex_le, Recorder};
    use super::*;
    use crate::reduce::oracle::Cached;
    use proptest::prelude::*;
    // Not proptest's `Strategy` trait.
    use super::Strategy;

    #[test]
    fn names_round_trip() {
        for strategy in Strategy::ALL {
            assert_eq!(strategy.name().parse::<Strategy>(), Ok(strategy));
            assert_eq!(strategy.to_string(), strategy.name());
        }
        assert_eq!("DDMIN".parse(), Ok(Strategy::Ddmin));
        assert_eq!("seed-ddrmin".parse(), Ok(Strategy::SeedDdrmin));
        let err = "zeller".parse::<Strategy>().unwrap_err();
        assert!(err.to_string().contains("fuzzingbook-dd"), "{err}");
    }

    #[test]
    fn pipeline_reduces_and_simplifies() {
        let input = b"GET /index.html?q=(((x)))&z=1 HTTP/1.1\r\n";
        let pred = |c: &[u8]| c.windows(2).any(|w| w == b"((") && c.contains(&b')');
        let mut cached = Cached::new(|c: &[u8]| pred(c));
        assert_eq!(reduce_bytes(input, &mut cached), b"(()");
    }

    #[test]
    fn levels_alike_are_asked_once() {
        // A nest of three kinds of group, in stretches of irregular length
        // (no run of one unit is long enough for the passes to leave its
        // interior out), interesting while the groups balance and nest 150
        // deep. The levels' edits fail alike.
        let kinds: [&[u8]; 3] = [b"(", b"(?:", b"(x|"];
        let mut input = Vec::new();
        let mut depth = 0;
        for stretch in 0..40usize {
            for _ in 0..(3 + stretch * 7 % 11) {
                input.extend_from_slice(kinds[stretch % 3]);
                depth += 1;
            }
        }
        input.extend(std::iter::repeat_n(b')', depth));
        let deep = |c: &[u8]| {
            let mut level = 0i32;
            let mut most = 0;
            for &b in c {
                level += i32::from(b == b'(') - i32::from(b == b')');
                if level < 0 {
                    return false;
                }
                most = most.max(level);
            }
            level == 0 && most >= 150
        };
        let runs = std::cell::Cell::new(0u64);
        let mut log = PassLog::default();
        let mut cached = Cached::new(|c: &[u8]| {
            runs.set(runs.get() + 1);
            deep(c)
        });
        let result = reduce_with(&input, &mut cached, &Pipeline::default(), &mut log);
        assert!(deep(&result));
        assert_eq!(result.len(), 300, "{}", String::from_utf8_lossy(&result));
        // Most questions were answered by an alike edit that had failed.
        assert!(
            log.alike > runs.get(),
            "{} alike, {} runs",
            log.alike,
            runs.get()
        );
    }

    #[test]
    fn a_nest_leaves_the_random_stage_no_tests() {
        assert_eq!(outside_long_runs(255, b""), 255);
        assert_eq!(outside_long_runs(255, b"no runs here"), 255);
        let mut half = vec![b'['; 100];
        half.extend(0..100u8);
        assert_eq!(outside_long_runs(255, &half), 127);
        // A stack overflow's nest: `: ` then 500 `[` then `0`, interesting
        // from 400 brackets on. Every deterministic pass is at its fixpoint
        // with 400; the random stage would only draw erasures in the nest.
        let mut input = b": ".to_vec();
        input.extend(std::iter::repeat_n(b'[', 500));
        input.push(b'0');
        let pred = |c: &[u8]| c.windows(400).any(|w| w.iter().all(|&b| b == b'['));
        let mut log = PassLog::default();
        let mut cached = Cached::new(|c: &[u8]| pred(c));
        let result = reduce_with(&input, &mut cached, &Pipeline::default(), &mut log);
        assert_eq!(result, vec![b'['; 400]);
        let random = log.passes.iter().find(|p| p.name == "random");
        assert!(random.is_none_or(|p| p.tests == 0), "{:?}", log.passes);
    }

    #[test]
    fn the_command_lines_pipeline_tries_every_shorter_neighbour_of_a_tiny_result() {
        // A deletion and a new value at once: no pass but the tiny one.
        let pred =
            |c: &[u8]| c == [0x0a, 0x00, 0x0d] || (c.len() == 2 && c[0].wrapping_add(c[1]) == 0xf8);
        let run = |tiny: bool| {
            let pipeline = Pipeline {
                tiny,
                random_tests: 0,
                ..Pipeline::default()
            };
            let mut log = PassLog::default();
            let mut cached = Cached::new(|c: &[u8]| pred(c));
            reduce_with(&[0x0a, 0x00, 0x0d], &mut cached, &pipeline, &mut log)
        };
        assert_eq!(run(false), [0x0a, 0x00, 0x0d]);
        assert_eq!(run(true), [0x00, 0xf8]);
    }

    #[test]
    fn pipeline_repeats_after_simplification() {
        // Simplifying 'b' to '0' makes the 'a' deletable: only a second
        // round of deletion finds `0`.
        let pred = |c: &[u8]| c == b"ab" || c == b"a0" || c == b"0";
        assert_eq!(reduce_bytes(b"ab", &mut |c: &[u8]| pred(c)), b"0");
    }

    /// How many times the pass named `name` ran.
    fn runs(log: &PassLog, name: &str) -> u64 {
        log.passes
            .iter()
            .find(|p| p.name == name)
            .map_or(0, |p| p.runs)
    }

    #[test]
    fn a_change_of_values_alone_costs_no_round() {
        // Any eight bytes: nothing can go, every byte can be lowered. The
        // deletions after simplification check what it made; no second
        // round of chunks, nesting or windows follows.
        let mut log = PassLog::default();
        let mut cached = Cached::new(|c: &[u8]| c.len() == 8);
        let result = reduce_with(b"abcdefgh", &mut cached, &Pipeline::default(), &mut log);
        assert_eq!(result, [0; 8]);
        for pass in ["chunks", "nesting", "windows", "ddmin"] {
            assert_eq!(runs(&log, pass), 1, "{pass}: {:?}", log.passes);
        }
    }

    #[test]
    fn the_last_deletions_wait_for_the_round_after_a_structural_change() {
        // Balanced and around `(x)`: no deletion of one contiguous piece
        // keeps that, so only the nesting pass unwraps the outer groups,
        // in the first round, and a second round follows: windows and
        // ddmin run in it only.
        let pred = |c: &[u8]| {
            let mut level = 0i32;
            for &b in c {
                level += i32::from(b == b'(') - i32::from(b == b')');
                if level < 0 {
                    return false;
                }
            }
            level == 0 && c.windows(3).any(|w| w == b"(x)")
        };
        let mut log = PassLog::default();
        let mut cached = Cached::new(|c: &[u8]| pred(c));
        let result = reduce_with(b"(((x)))", &mut cached, &Pipeline::default(), &mut log);
        assert_eq!(result, b"(x)");
        assert!(log
            .passes
            .iter()
            .any(|p| p.name == "nesting" && p.removed > 0));
        assert!(runs(&log, "chunks") >= 2, "{:?}", log.passes);
        assert_eq!(runs(&log, "windows"), 1, "{:?}", log.passes);
        assert_eq!(runs(&log, "ddmin"), 1, "{:?}", log.passes);
    }

    #[test]
    fn pipeline_stops_when_exhausted() {
        let mut rec = Recorder::new(|c: &[u8]| c.contains(&b'!')).exhaust_after(10);
        let input = b"hello, world!";
        let result = reduce_bytes(input, &mut rec);
        assert_eq!(rec.log.len(), 10);
        assert!(result.contains(&b'!') && result.len() <= input.len());
    }

    #[test]
    fn random_stages_go_on_only_while_they_shorten() {
        // Any 40 non-zero bytes: nothing deterministic lowers `0` at this
        // length, but nearly every random change does. One random stage
        // finds one, the rounds after it shorten nothing, and that ends it.
        let pred = |c: &[u8]| c.len() == 40 && !c.contains(&0);
        let mut cached = Cached::new(|c: &[u8]| pred(c));
        let mut log = PassLog::default();
        let pipeline = Pipeline::default();
        let result = reduce_with(&[b'x'; 40], &mut cached, &pipeline, &mut log);
        assert!(pred(&result) && result.as_slice() < [b'0'; 40].as_slice());
        let random = log.passes.iter().find(|p| p.name == "random").unwrap();
        assert_eq!(random.improved, 1);
        assert!(random.tests <= pipeline.random_tests);
    }

    #[test]
    fn costly_successes_lead_with_random_stages_while_they_pay() {
        // A hang needs 'x' and at least 100 bytes. The leading stages take
        // most of 4,000 bytes away, never paying for a candidate of the
        // same length; the rounds after them finish the job.
        let mut input = vec![b'a'; 4000];
        input[2500] = b'x';
        let pred = |c: &[u8]| c.len() >= 100 && c.contains(&b'x');
        let mut lengths = Vec::new();
        let mut oracle = |c: &[u8]| {
            lengths.push(c.len());
            pred(c)
        };
        let mut log = PassLog::default();
        let pipeline = Pipeline {
            costly_successes: true,
            ..Pipeline::default()
        };
        let result = reduce_with(&input, &mut oracle, &pipeline, &mut log);
        assert!(pred(&result) && result.len() == 100, "{}", result.len());
        let lead = &log.passes[0];
        assert_eq!(lead.name, "random-first");
        assert!(lead.removed >= 3000, "{lead:?}");
        let first = &lengths[..lead.tests as usize];
        assert!(first.iter().all(|&n| n < 4000));
        // It stopped once a stage removed less than a thirty-second.
        assert!(lead.tests <= 10 * pipeline.random_tests, "{lead:?}");
    }

    #[test]
    fn every_strategy_runs_on_bytes() {
        let input = b"xxxx(yyyy)zzzz";
        let pred = |c: &[u8]| c.contains(&b'(') && c.contains(&b')');
        for strategy in Strategy::ALL {
            let result = strategy.run(input, &mut |c: &[u8]| pred(c));
            assert!(pred(&result), "{strategy}");
            assert_eq!(result.len(), 2, "{strategy}");
        }
    }

    #[test]
    fn strategies_accept_a_trait_object() {
        let mut pred = |c: &[u8]| c.contains(&b'!');
        let oracle: &mut dyn Oracle<u8> = &mut pred;
        assert_eq!(Strategy::Default.run(b"hi!", oracle), b"!");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn pipeline_result_is_interesting_minimal_and_simplified(case in arb_case()) {
            let holds = |c: &[u8]| case.holds(c);
            let result = reduce_bytes(&case.input, &mut { holds });
            prop_assert!(holds(&result));
            prop_assert!(shortlex_le(&result, &case.input));
            prop_assert!(is_one_minimal(&result, holds));
            prop_assert_eq!(simplify(&result, &mut { holds }), result);
        }

        #[test]
        fn coarse_first_round_still_ends_minimal(case in arb_large_binary_case()) {
            let holds = |c: &[u8]| case.holds(c);
            let result = reduce_bytes(&case.input, &mut { holds });
            prop_assert!(holds(&result));
            prop_assert!(result.len() <= case.input.len());
            prop_assert!(is_one_minimal(&result, holds));
        }

        #[test]
        fn costly_pipeline_result_is_interesting_and_minimal(case in arb_case()) {
            let holds = |c: &[u8]| case.holds(c);
            let pipeline = Pipeline { costly_successes: true, ..Pipeline::default() };
            let result = reduce_with(&case.input, &mut { holds }, &pipeline, &mut PassLog::default());
            prop_assert!(holds(&result));
            prop_assert!(result.len() <= case.input.len());
            prop_assert!(is_one_minimal(&result, holds));
        }

        #[test]
        fn every_strategy_result_is_interesting_and_not_larger(case in arb_case()) {
            let holds = |c: &[u8]| case.holds(c);
            for strategy in Strategy::ALL {
                let result = strategy.run(&case.input, &mut { holds });
                prop_assert!(holds(&result), "{}", strategy);
                prop_assert!(result.len() <= case.input.len(), "{}", strategy);
            }
        }
    }
}
