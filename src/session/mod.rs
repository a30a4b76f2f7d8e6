//! One `cargo reduce-crash` run, start to finish.
//!
//! Ties the pieces together in the order the user experiences them: find the
//! project and target, build the driver, check that the artifact reproduces
//! (and always the same way), reduce under the fixed crash identity while
//! keeping the best result on disk, verify the result in a fresh process,
//! and summarise. `classify` is the same pipeline without the reduction.
//! [`report`] shows it (human lines or JSON), [`emit_test`] writes the
//! regression test `--emit-test` asks for.
//!
//! One file, about 1,000 lines: the steps of a run share its options and
//! reporter and read best top to bottom in the order they happen; the
//! reporting itself is in [`report`].

pub mod emit_test;
pub mod explain;
pub mod lines;
pub mod report;

use crate::error::{Error, Result};
use crate::grammar::{self, reduce::TreeStrategy, Grammar, Tree};
use crate::output::{default_output, Destinations, OutputLock};
use crate::reduce::oracle::Cached;
use crate::reduce::Strategy;
use crate::run::crash_oracle::{Budget, CrashOracle, StopReason};
use crate::run::driver::{self, BuildKind, BuildOptions, Driver, Plan};
use crate::run::exec::{ExecConfig, Executor};
use crate::run::fuzzer_binary::FuzzerBinary;
use crate::run::outcome::{CrashKind, MatchMode, Outcome, Signature};
use crate::run::project::{FuzzProject, Locate};
use crate::run::timeouts::{self, TimeoutGoal};
use crate::session::emit_test::{Failing, RegressionTest};
use crate::session::report::{
    preview, FuzzerClock, OtherSignature, Reporter, Summary, TimeoutGuarantee,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// libFuzzer's `-rss_limit_mb` default (its `-malloc_limit_mb` defaults to
/// the RSS limit).
pub const DEFAULT_RSS_LIMIT_MB: u64 = 2048;

/// Time limit for checking the original when no timeout is given.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything a run needs to know.
#[derive(Debug, Clone)]
pub struct Options {
    pub locate: Locate,
    pub fuzz_target: Option<String>,
    pub build: BuildOptions,
    pub output: Option<PathBuf>,
    /// Also write a regression test here.
    pub emit_test: Option<PathBuf>,
    pub match_mode: MatchMode,
    pub strategy: StrategyChoice,
    /// Reduce the derivation tree under this grammar (a shipped name or a file).
    pub grammar: Option<String>,
    /// Per-test time limit (`--timeout`); derived from the original's run
    /// time if `None`. For a timeout artifact: "runs longer than this".
    pub timeout: Option<Duration>,
    /// libFuzzer's `-timeout=N` (after `--`; `0`, libFuzzer's "no timeout",
    /// is `None`): the per-test limit, and for a timeout artifact the
    /// timeout `cargo fuzz run` must still report ([`timeouts`]).
    pub libfuzzer_timeout: Option<u64>,
    pub rss_limit_mb: u64,
    pub malloc_limit_mb: u64,
    /// How many times the original is run before reducing.
    pub reruns: usize,
    pub budget: Budget,
    /// Restart after a crash by forking the driver (see [`ExecConfig::fork_server`]).
    pub fork_server: bool,
    /// Settings of the default byte pipeline (`--seed`, `--random-tests`).
    pub pipeline: crate::reduce::Pipeline,
    /// Drivers that test one artifact's candidates at the same time (`-j N`
    /// with a single artifact): the first and `drivers - 1` more, started
    /// the same way, evaluating candidate lists speculatively with the same
    /// result as one driver alone ([`CrashOracle::with_helpers`]).
    pub drivers: usize,
    /// `-j` was not given for a single artifact: when its tests are slow
    /// ([`SLOW_TEST`]), every available core gets a driver
    /// ([`drivers_for`]).
    pub auto_drivers: bool,
    /// Tests the explanation of a single artifact's result may use
    /// (`--explain-tests`; 0: none, `--no-explain` and directory runs).
    pub explain_tests: u64,
    /// Time it may take (`--explain-time`); `None`: as long as the
    /// reduction took ([`explain::default_time`]).
    pub explain_time: Option<Duration>,
}

/// A test at least this slow is worth more drivers: starting one costs a
/// few milliseconds, and a list of candidates handed out in chunks then
/// finishes up to that many times sooner. Known from the original's slowest
/// run, or else from the candidates' wall time during the reduction (a
/// crash that ends the process, a sanitizer report or a stack overflow,
/// costs its report and a restart, which its run time does not show).
pub const SLOW_TEST: Duration = Duration::from_millis(5);

/// A timeout's candidates are screened as hangs once they run this long
/// (or ten times the slowest that finished, if more): only the results
/// written are run to the full limit (`ExecConfig::screen_hangs`).
pub const SCREEN_HANGS: Duration = Duration::from_millis(250);

/// How much longer than its checked limit a timeout's candidate must run
/// to count while reducing.
const HANG_MARGIN: f64 = 1.1;

/// Drivers for reducing one artifact whose slowest run took `slowest`: as
/// `-j` says, or, without it, one per available core for slow tests.
pub fn drivers_for(opts: &Options, slowest: Duration) -> usize {
    if opts.auto_drivers && slowest >= SLOW_TEST {
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
    } else {
        opts.drivers.max(1)
    }
}

/// Which reducer to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyChoice {
    /// Choice-sequence shrinking for typed targets, the byte pipeline
    /// otherwise; the tree pipeline with `--grammar`.
    Auto,
    Bytes(Strategy),
    Tree(TreeStrategy),
}

/// The target, built and running.
struct Prepared {
    project: FuzzProject,
    target: String,
    kind: BuildKind,
    exec: Executor,
    /// When the driver was built: `--max-time` counts from here.
    ready: Instant,
}

/// Reads an artifact, or says that it is missing, unreadable or not a
/// regular file ([`crate::input::read_file`]).
pub fn read_artifact(path: &Path) -> Result<Vec<u8>> {
    crate::input::read_file(path)
}

/// The project holding `artifact` and the name of its fuzz target.
pub fn locate_target(opts: &Options, artifact: &Path) -> Result<(FuzzProject, String)> {
    let mut locate = opts.locate.clone();
    locate.artifact = Some(artifact.to_owned());
    driver::warm_up();
    let project = FuzzProject::locate(&locate)?;
    let target = project
        .resolve_target(opts.fuzz_target.as_deref(), artifact)?
        .name
        .clone();
    Ok((project, target))
}

/// Decides how targets are built for this run ([`driver::plan`]) and, when
/// the build is not `cargo fuzz build`'s default, says why in one line.
pub fn plan_build(opts: &Options, reporter: &mut Reporter) -> Plan {
    let plan = driver::plan(&opts.build);
    if let Some(note) = &plan.note {
        reporter.note(note.clone());
    }
    plan
}

/// How long a build may take before the run says it is compiling: a no-op
/// cargo build (nothing changed since the last run) takes well under this.
const COMPILING_AFTER: Duration = Duration::from_millis(400);

/// Builds the driver for `target` (a no-op cargo build when nothing
/// changed). Status lines go to the reporter, as cargo words them: `Fresh`
/// when nothing had to compile; `Building` once the build has run longer
/// than a no-op one does, then `Finished`. Each says which build.
pub fn build_driver(
    opts: &Options,
    plan: &Plan,
    project: &FuzzProject,
    target: &str,
    reporter: &mut Reporter,
) -> Result<Driver> {
    let started = Instant::now();
    let what = format!("driver for fuzz target `{target}` {}", plan.kind.describe());
    let built = std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        let build = scope.spawn(move || {
            let _ = tx.send(driver::build_planned(
                project,
                target,
                &opts.build,
                &plan.kind,
            ));
        });
        let built = match rx.recv_timeout(COMPILING_AFTER) {
            Ok(built) => Some(built),
            Err(_) => {
                reporter.status("Building", format!("{what} to run in-process"));
                rx.recv().ok()
            }
        };
        match build.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => built.expect("the build thread sends its result"),
        }
    })?;
    if built.kind != plan.kind {
        reporter.note(format!(
            "`{target}`'s libfuzzer-sys cannot be replaced in its own build (it is not a \
             registry or git dependency named libfuzzer-sys): built {} instead",
            built.kind.describe()
        ));
    }
    for note in &built.notes {
        reporter.note(note);
    }
    if built.fresh {
        reporter.status("Fresh", what);
    } else {
        reporter.status(
            "Finished",
            format!("{what} in {:.1}s", started.elapsed().as_secs_f64()),
        );
    }
    Ok(built)
}

/// Starts a built driver with the options' limits (and the time limit for
/// checking originals).
pub fn start_driver(opts: &Options, binary: &Path) -> Result<Executor> {
    Ok(Executor::new(ExecConfig {
        rss_limit_mb: opts.rss_limit_mb,
        malloc_limit_mb: opts.malloc_limit_mb,
        fork_server: opts.fork_server,
        ..ExecConfig::new(binary.to_owned(), check_timeout(opts))
    })?)
}

/// Builds the driver for `target` and starts it.
fn prepare(
    opts: &Options,
    plan: &Plan,
    project: FuzzProject,
    target: String,
    reporter: &mut Reporter,
) -> Result<Prepared> {
    let built = build_driver(opts, plan, &project, &target, reporter)?;
    let ready = Instant::now();
    let exec = start_driver(opts, &built.binary)?;
    Ok(Prepared {
        project,
        target,
        kind: built.kind,
        exec,
        ready,
    })
}

/// Builds the driver for `target`, starts it and runs the original on it
/// ([`check_reproduces`]). A driver an earlier build left in place is
/// started and tried meanwhile, while cargo checks that it is up to date (a
/// no-op `cargo build` takes longer than starting a driver and reproducing
/// most artifacts); what it found is kept only if the build returns that
/// very file ([`driver::FileIdentity`]), else it all happens again on what
/// was built.
fn prepare_reproduced(
    opts: &Options,
    plan: &Plan,
    project: FuzzProject,
    target: String,
    original: (&[u8], bool),
    reporter: &mut Reporter,
) -> Result<(Prepared, Reproduction)> {
    let (data, named_timeout) = original;
    let reproduce = |binary: &Path| -> Result<(Executor, Reproduction)> {
        let mut exec = start_driver(opts, binary)?;
        let reproduction = check_reproduces(opts, &mut exec, data, named_timeout, Hangs::Confirm)?;
        Ok((exec, reproduction))
    };
    let previous = driver::previous_binary(&project, &target, &opts.build, &plan.kind)
        .and_then(|path| Some((driver::FileIdentity::of(&path)?, path)));
    let (built, early) = std::thread::scope(|scope| {
        let early = previous
            .as_ref()
            .map(|(_, path)| scope.spawn(|| reproduce(path)));
        let built = build_driver(opts, plan, &project, &target, reporter);
        // (An earlier driver may have started the original meanwhile: that
        // time counts from here on, as it would have anyway.)
        let ready = Instant::now();
        let early = early.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        ((built, ready), early)
    });
    let (built, ready) = built;
    let built = built?;
    let unchanged =
        previous.is_some_and(|(id, _)| driver::FileIdentity::of(&built.binary) == Some(id));
    let (exec, reproduction) = match early {
        Some(Ok(early)) if unchanged => early,
        _ => reproduce(&built.binary)?,
    };
    Ok((
        Prepared {
            project,
            target,
            kind: built.kind,
            exec,
            ready,
        },
        reproduction,
    ))
}

/// What running an original `--reruns` times showed.
#[derive(Debug, Clone, PartialEq)]
pub enum Reproduction {
    /// It crashed every time, always the same way (under `--match`).
    Crash {
        signature: Signature,
        /// The slowest run (the reduction's time limit derives from it; for
        /// a timeout, how long the original ran, at most the check limit).
        slowest: Duration,
    },
    /// It never crashed.
    NoCrash {
        /// Every run was rejected (`-1`/`Corpus::Reject`, did not decode).
        rejected: bool,
        runs: usize,
        /// For a `timeout-*` artifact: why it does not count as a timeout.
        timeout: Option<String>,
    },
    /// It crashed only sometimes, or differently from run to run.
    Flaky {
        crashed: usize,
        runs: usize,
        /// Every run's outcome, `; `-separated.
        detail: String,
    },
}

impl Reproduction {
    /// The signature and slowest run, or the error that stops a reduction.
    pub fn into_result(self, artifact: &Path, target: &str) -> Result<(Signature, Duration)> {
        match self {
            Reproduction::Crash { signature, slowest } => Ok((signature, slowest)),
            Reproduction::NoCrash {
                timeout: Some(detail),
                ..
            } => Err(Error::NoTimeout {
                path: artifact.to_owned(),
                target: target.to_owned(),
                detail,
            }),
            Reproduction::NoCrash { rejected, runs, .. } => Err(Error::NoCrash {
                path: artifact.to_owned(),
                target: target.to_owned(),
                outcome: if rejected {
                    "rejected"
                } else {
                    "returned normally on"
                },
                runs,
            }),
            Reproduction::Flaky {
                crashed,
                runs,
                detail,
            } => Err(Error::Flaky {
                path: artifact.to_owned(),
                target: target.to_owned(),
                crashed,
                runs,
                detail,
            }),
        }
    }
}

/// The time limit for the first run of an original.
pub fn check_timeout(opts: &Options) -> Duration {
    timeouts::check_limit(opts.timeout, opts.libfuzzer_timeout, CHECK_TIMEOUT)
}

/// Runs the original `--reruns` times (in whatever state `exec` is: restart
/// it first for a fresh process) and says whether it crashes reproducibly.
/// `named_timeout`: libFuzzer saved it as a `timeout-*` artifact, so a run
/// that finishes is measured against the timeout rule ([`timeouts`]).
/// `hangs`: how much a hang is confirmed.
pub fn check_reproduces(
    opts: &Options,
    exec: &mut Executor,
    data: &[u8],
    named_timeout: bool,
    hangs: Hangs,
) -> Result<Reproduction> {
    let limit = check_timeout(opts);
    exec.set_timeout(limit);
    let first = exec.run(data)?;
    let hung = matches!(&first.outcome, Outcome::Crash(s) if s.kind == CrashKind::Timeout);
    let flags = opts.timeout.is_some() || opts.libfuzzer_timeout.is_some();
    if hung && flags && !named_timeout && limit < CHECK_TIMEOUT {
        // Killed at the user's limit: a hang, or a crash that takes longer
        // (then the limit would turn the crash into a timeout)?
        exec.set_timeout((limit * 4).clamp(Duration::from_secs(1), CHECK_TIMEOUT));
        let longer = exec.run(data)?;
        if let Outcome::Crash(sig) = &longer.outcome {
            if sig.kind != CrashKind::Timeout {
                return Err(Error::TimeoutTooShort {
                    limit: limit.as_secs_f64(),
                    ran: longer.elapsed.as_secs_f64(),
                    signature: sig.to_string(),
                });
            }
        }
        exec.set_timeout(limit);
    }
    // A limit shorter than the original's own run would make its crash a
    // timeout.
    if !hung && !named_timeout && flags && first.elapsed > limit {
        if let Outcome::Crash(sig) = &first.outcome {
            return Err(Error::TimeoutTooShort {
                limit: limit.as_secs_f64(),
                ran: first.elapsed.as_secs_f64(),
                signature: sig.to_string(),
            });
        }
    }
    let measured = if hung { limit } else { first.elapsed };
    if hung || (named_timeout && !matches!(first.outcome, Outcome::Crash(_))) {
        return Ok(check_timeout_reproduces(opts, exec, data, measured, hangs));
    }
    let mut outcomes: Vec<Outcome> = vec![first.outcome];
    let mut slowest = first.elapsed;
    for _ in 1..opts.reruns.max(1) {
        let run = exec.run(data)?;
        slowest = slowest.max(run.elapsed);
        outcomes.push(run.outcome);
    }
    let crashes: Vec<&Signature> = outcomes.iter().filter_map(Outcome::signature).collect();
    if crashes.is_empty() {
        return Ok(Reproduction::NoCrash {
            rejected: outcomes.iter().all(|o| *o == Outcome::Reject),
            runs: outcomes.len(),
            timeout: None,
        });
    }
    let first = crashes[0].clone();
    let differs = crashes.iter().any(|s| !opts.match_mode.matches(&first, s));
    if crashes.len() < outcomes.len() || differs {
        return Ok(flaky(&outcomes));
    }
    Ok(Reproduction::Crash {
        signature: first,
        slowest,
    })
}

/// How [`check_reproduces`] confirms an original that hangs, where every
/// confirming run costs the whole time limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hangs {
    /// Run it again at the deadline its reduction keeps (one artifact: it
    /// is about to be reduced, and a flaky hang would waste the reduction).
    Confirm,
    /// Classifying many files: a first run that lasted twice the deadline
    /// is enough. Only a bug's representative is reduced, and every result
    /// written is rerun in a fresh process before it is kept.
    OnceIfTwiceTheGoal,
}

fn flaky(outcomes: &[Outcome]) -> Reproduction {
    let detail = outcomes
        .iter()
        .map(|o| match o.signature() {
            Some(s) => s.to_string(),
            None => o.label().to_owned(),
        })
        .collect::<Vec<_>>()
        .join("; ");
    Reproduction::Flaky {
        crashed: outcomes.iter().filter(|o| o.signature().is_some()).count(),
        runs: outcomes.len(),
        detail,
    }
}

/// A timeout original (it hung at the check limit, or is a `timeout-*`
/// artifact that ran `measured`): does it time out under the rule, and
/// again when rerun to the rule's deadline?
fn check_timeout_reproduces(
    opts: &Options,
    exec: &mut Executor,
    data: &[u8],
    measured: Duration,
    hangs: Hangs,
) -> Reproduction {
    let Some(goal) = timeouts::goal(opts.timeout, opts.libfuzzer_timeout, measured) else {
        let needed = match (opts.timeout, opts.libfuzzer_timeout) {
            (Some(s), _) => format!("--timeout {}", s.as_secs_f64()),
            (None, Some(n)) => format!(
                "-timeout={n} (libFuzzer reports one input only after it ran {}s)",
                timeouts::reported_after(n).as_secs()
            ),
            (None, None) => {
                "any libFuzzer -timeout (one input must run 2s or more for -timeout=1)".to_owned()
            }
        };
        return Reproduction::NoCrash {
            rejected: false,
            runs: 1,
            timeout: Some(format!(
                "it ran {:.2}s, which does not time out at {needed}",
                measured.as_secs_f64()
            )),
        };
    };
    if hangs == Hangs::OnceIfTwiceTheGoal && measured >= goal.deadline * 2 {
        // It already ran twice as long as a result must: one run is the
        // evidence (what is reduced or written is checked again anyway).
        return Reproduction::Crash {
            signature: Signature::new(CrashKind::Timeout),
            slowest: measured,
        };
    }
    exec.set_timeout(goal.deadline);
    let again = match exec.run(data) {
        Ok(run) => run.outcome,
        Err(_) => Outcome::Pass,
    };
    match &again {
        Outcome::Crash(s) if s.kind == CrashKind::Timeout => Reproduction::Crash {
            signature: s.clone(),
            slowest: measured,
        },
        _ => flaky(&[Outcome::Crash(Signature::new(CrashKind::Timeout)), again]),
    }
}

/// The byte strategy asked for, else the best one for the kind of target.
fn choose_strategy(asked: StrategyChoice, typed: bool) -> Strategy {
    match asked {
        StrategyChoice::Bytes(s) => s,
        _ if typed => Strategy::Choices,
        _ => Strategy::Default,
    }
}

/// Loads `--grammar`: a shipped grammar by name, else a file. Warnings
/// (e.g. unreachable rules, with their line:col) go to the reporter.
pub fn load_grammar(spec: &str, reporter: &mut Reporter) -> Result<Grammar> {
    if let Some(g) = grammar::load::builtin_grammar(spec) {
        return Ok(g);
    }
    let path = Path::new(spec);
    if !path.is_file() {
        return Err(Error::UnknownGrammar {
            name: spec.to_owned(),
            known: grammar::load::BUILTIN_NAMES
                .iter()
                .map(|s| s.to_string())
                .collect(),
        });
    }
    let bytes = crate::input::read_file(path)?;
    let text = String::from_utf8(bytes).map_err(|_| Error::GrammarNotText {
        path: path.to_owned(),
    })?;
    let loaded = grammar::load::load_grammar(&text, &path.display().to_string())?;
    for warning in &loaded.warnings {
        reporter.warn(warning.to_string().replacen(": warning: ", ": ", 1));
    }
    Ok(loaded.grammar)
}

/// The artifact's derivation tree under `grammar` (`spec` names it in errors).
pub fn parse_artifact(grammar: &Grammar, spec: &str, artifact: &Path, data: &[u8]) -> Result<Tree> {
    grammar::earley::parse(grammar, data).map_err(|e| Error::NoParse {
        path: artifact.to_owned(),
        grammar: spec.to_owned(),
        detail: e.to_string(),
    })
}

/// `budget` with its `max_time` made a deadline: counted from `clock`, and
/// ending early enough for the final check (`reserve`: the result's run in
/// a fresh process, and one candidate still running at the deadline) to be
/// done by then. A deadline already passed leaves no time: the reduction
/// stops at once and the original is the result.
fn deadline_budget(budget: Budget, clock: Instant, reserve: Duration) -> Budget {
    Budget {
        max_time: budget
            .max_time
            .map(|t| t.saturating_sub(clock.elapsed()).saturating_sub(reserve)),
        ..budget
    }
}

/// What running the result in a fresh process and one last candidate cost:
/// a hang runs to its limit each time, a crash about as long as the
/// original's slowest run. With a second clock (`cargo fuzz build`'s
/// fuzzer), a hang also runs to the limit there: the result, and either
/// the original (asked once whether it hangs there too, before it is
/// trusted) or the last candidate (checked there too, once it is).
fn final_check(
    sig: &Signature,
    slowest: Duration,
    limit: Duration,
    second_clock: bool,
) -> Duration {
    match sig.kind {
        CrashKind::Timeout if second_clock => limit * 4,
        CrashKind::Timeout => limit * 2,
        _ => (slowest * 2).min(limit),
    }
}

/// The per-test limit for reducing an original with `sig` whose slowest
/// run took `slowest` (also the limit for rerunning its result).
pub fn test_timeout(opts: &Options, sig: &Signature, slowest: Duration) -> Duration {
    reduction_timeout(opts, sig, slowest).0
}

/// The per-test limit for the reduction, and for a timeout what the result
/// is reported at.
fn reduction_timeout(
    opts: &Options,
    sig: &Signature,
    slowest: Duration,
) -> (Duration, Option<TimeoutGoal>) {
    if sig.kind == CrashKind::Timeout {
        if let Some(goal) = timeouts::goal(opts.timeout, opts.libfuzzer_timeout, slowest) {
            return (goal.deadline, Some(goal));
        }
        return (slowest, None);
    }
    if let Some(t) = opts.timeout {
        return (t, None);
    }
    if let Some(n) = opts.libfuzzer_timeout {
        return (Duration::from_secs(n), None);
    }
    (
        (slowest * 10).clamp(Duration::from_secs(1), CHECK_TIMEOUT),
        None,
    )
}

/// Reduces one artifact. Returns the summary (also when interrupted).
pub fn reduce(opts: &Options, artifact: &Path, reporter: &mut Reporter) -> Result<Summary> {
    let data = read_artifact(artifact)?;
    // Where this run writes, decided before any work starts.
    let mut destinations = Destinations::new([artifact]).stdout_used_by(reporter.stdout_user());
    let output = destinations.claim(
        &opts
            .output
            .clone()
            .unwrap_or_else(|| default_output(artifact)),
        "-o/--output",
    )?;
    let emit_test = match &opts.emit_test {
        Some(path) => Some(destinations.claim_creating_dirs(path, "--emit-test")?),
        None => None,
    };
    // A bad grammar or an input it does not parse is found before building.
    let parsed = match &opts.grammar {
        Some(spec) => {
            let grammar = load_grammar(spec, reporter)?;
            let tree = parse_artifact(&grammar, spec, artifact, &data)?;
            Some((grammar, tree))
        }
        None => None,
    };
    let (project, target) = locate_target(opts, artifact)?;
    let plan = plan_build(opts, reporter);
    let named_timeout = timeouts::named_timeout(artifact);
    let (mut p, reproduction) = prepare_reproduced(
        opts,
        &plan,
        project,
        target,
        (&data, named_timeout),
        reporter,
    )?;
    let (signature, slowest) = reproduction.into_result(artifact, &p.target)?;
    reporter.status(
        "Reproduced",
        format!(
            "{} ({} bytes): {signature}",
            display_name(artifact),
            data.len()
        ),
    );
    reporter.started(&p.target, artifact, data.len(), &signature);
    let job = ReduceJob {
        project: &p.project,
        target: &p.target,
        build: &p.kind,
        artifact,
        data: &data,
        signature,
        slowest,
        output,
        emit_test,
        parsed: parsed.as_ref().map(|(g, t)| (g, t)),
        clock: Some(p.ready),
    };
    reduce_reproduced(opts, &mut p.exec, job, Some(reporter))
}

/// One artifact known to crash reproducibly, ready to be reduced.
pub struct ReduceJob<'a> {
    pub project: &'a FuzzProject,
    pub target: &'a str,
    /// How the target's driver was built (for the reproduce line).
    pub build: &'a BuildKind,
    pub artifact: &'a Path,
    pub data: &'a [u8],
    /// Its signature, as [`check_reproduces`] found it.
    pub signature: Signature,
    /// Its slowest run (the per-test limit derives from it).
    pub slowest: Duration,
    /// Where the result goes, and the regression test (`--emit-test`), both
    /// claimed through [`Destinations`].
    pub output: PathBuf,
    pub emit_test: Option<PathBuf>,
    /// `--grammar`: the grammar and the artifact's derivation tree.
    pub parsed: Option<(&'a Grammar, &'a Tree)>,
    /// Where `--max-time` counts from (the driver ready, before the original
    /// ran); `None`: from the start of the reduction.
    pub clock: Option<Instant>,
}

/// Reduces a reproduced artifact with a running driver for its target (the
/// executor is left reusable: value cache off, fresh process next). With a
/// reporter, shows the `Reducing` line and progress; without one (parallel
/// workers), stays silent and leaves reporting to the caller.
pub fn reduce_reproduced(
    opts: &Options,
    exec: &mut Executor,
    job: ReduceJob<'_>,
    reporter: Option<&mut Reporter>,
) -> Result<Summary> {
    reduce_stage(
        opts,
        exec,
        job,
        reporter,
        Stage {
            screen: true,
            trusted_fuzzer: None,
        },
    )
}

/// How a stage of a reduction judges a timeout's candidates.
struct Stage {
    /// Screen them short ([`SCREEN_HANGS`]).
    screen: bool,
    /// `cargo fuzz build`'s fuzzer, known to hang on the original and to
    /// have finished a result the driver kept: every new best must keep it
    /// running to the limit too ([`CrashOracle::with_second_clock`]).
    trusted_fuzzer: Option<FuzzerBinary>,
}

/// [`reduce_reproduced`], one [`Stage`]. When the result a screened
/// reduction found does not keep running to the full limit in a fresh
/// process (or does not keep `cargo fuzz build`'s fuzzer running), and the
/// run was not cut short, the reduction goes on from the best that did,
/// every candidate run to the limit: on cpp_demangle-timeout the screened
/// stages had reached 71 B, the check found it and the best before it
/// finishing, and the command had stopped at the 163 B it fell back on.
/// If it was the fuzzer that finished one, every new best of the next
/// stage must keep the fuzzer running too.
fn reduce_stage(
    opts: &Options,
    exec: &mut Executor,
    job: ReduceJob<'_>,
    mut reporter: Option<&mut Reporter>,
    stage: Stage,
) -> Result<Summary> {
    let screen = stage.screen;
    let ReduceJob {
        project,
        target,
        build,
        artifact,
        data,
        signature,
        slowest,
        output,
        emit_test,
        parsed,
        clock,
    } = job;
    // One run at a time writes this output; a second one waits.
    let _lock = OutputLock::acquire(&output, || {
        if let Some(r) = reporter.as_deref_mut() {
            r.note(format!(
                "waiting for another cargo reduce-crash run that writes {}",
                output.display()
            ));
        }
    })?;
    let previous = crate::output::previous(&output);
    // The executor may have run other artifacts before: count only this one.
    let before = exec.stats();
    let (timeout, timeout_goal) = reduction_timeout(opts, &signature, slowest);
    // A timeout's candidates must keep running a tenth past the limit its
    // result is checked at (`publish`): a candidate just past the limit
    // while other drivers run may finish just before it alone.
    exec.set_timeout(match signature.kind {
        CrashKind::Timeout => timeout.mul_f64(HANG_MARGIN),
        _ => timeout,
    });
    exec.set_value_cache(true);
    let strategy = choose_strategy(opts.strategy, exec.typed());
    let tree_strategy = match opts.strategy {
        StrategyChoice::Tree(t) => t,
        _ => TreeStrategy::Grammar,
    };
    let strategy_name = match &parsed {
        Some(_) => tree_strategy.name(),
        None => strategy.name(),
    };
    let drivers = drivers_for(opts, slowest);
    if let Some(r) = reporter.as_deref_mut() {
        let limit = match (signature.kind, timeout_goal.and_then(|g| g.libfuzzer)) {
            (CrashKind::Timeout, Some(n)) => format!(
                "keeps running {:.2}s: libFuzzer -timeout={n} reports it",
                timeout.as_secs_f64()
            ),
            (CrashKind::Timeout, None) => {
                format!("keeps running {:.2}s", timeout.as_secs_f64())
            }
            _ => format!("timeout {:.2}s", timeout.as_secs_f64()),
        };
        let drivers = match drivers {
            1 => String::new(),
            n if opts.auto_drivers => format!(
                ", {n} drivers: a test takes {:.0}ms",
                slowest.as_secs_f64() * 1e3
            ),
            n => format!(", {n} drivers"),
        };
        r.status(
            "Reducing",
            format!(
                "{} bytes with `{}` (identity: {}, {limit}{drivers})",
                data.len(),
                strategy_name,
                opts.match_mode.name(),
            ),
        );
    }

    // A timeout's candidates are screened short; what is written is
    // confirmed at the full limit (`publish`).
    exec.set_screen_hangs((screen && signature.kind == CrashKind::Timeout).then_some(SCREEN_HANGS));
    // Only a timeout is judged by the clock: a crash's candidates run
    // without libFuzzer's cost of comparisons.
    exec.set_faithful_compares(signature.kind == CrashKind::Timeout);
    // A timeout's result must keep `cargo fuzz build`'s fuzzer running
    // too, where there is one: the driver's clock is not libFuzzer's.
    let second_clock = match &stage.trusted_fuzzer {
        Some(fuzzer) => Some(SecondClock::trusted(fuzzer.clone(), timeout)),
        None if signature.kind == CrashKind::Timeout => {
            SecondClock::for_timeout(opts, project, target, timeout)
        }
        None => None,
    };
    let started = Instant::now();
    let original_len = data.len();
    let mut passes = crate::reduce::PassLog::default();
    let (best, stats, work, invalid_candidates, others, stop, error) = {
        let progress_reporter = std::cell::RefCell::new(reporter.as_deref_mut());
        let oracle = CrashOracle::new(&mut *exec, signature.clone(), opts.match_mode, data)
            .with_budget(deadline_budget(
                opts.budget,
                clock.unwrap_or(started),
                final_check(&signature, slowest, timeout, second_clock.is_some()),
            ))
            .with_new_helpers(drivers - 1)
            .with_helpers_when_slow(
                if opts.auto_drivers && drivers == 1 {
                    std::thread::available_parallelism().map_or(1, std::num::NonZero::get) - 1
                } else {
                    0
                },
                SLOW_TEST,
            )
            .on_progress(|pr| {
                if let Some(r) = progress_reporter.borrow_mut().as_deref_mut() {
                    r.progress(original_len, &pr)
                }
            });
        let oracle = match &stage.trusted_fuzzer {
            Some(fuzzer) => oracle.with_second_clock(fuzzer.clone(), timeout),
            None => oracle,
        };
        let mut cached = Cached::new(oracle);
        cached.remember(data, true);
        let mut invalid = None;
        let result = match parsed {
            Some((grammar, tree)) => {
                let reduced = tree_strategy.run(grammar, tree, &mut cached);
                invalid = Some(reduced.invalid_candidates);
                reduced.bytes
            }
            None => {
                // A timeout pays the whole limit for every candidate that
                // still hangs, and little for one that does not.
                let pipeline = crate::reduce::Pipeline {
                    costly_successes: signature.kind == CrashKind::Timeout,
                    ..opts.pipeline
                };
                strategy.run_with(data, &mut cached, &pipeline, &mut passes)
            }
        };
        let stats = cached.stats();
        let mut oracle = cached.into_inner();
        // What other drivers were still running past an answer counts too.
        oracle.finish();
        // A finished reducer's answer is the result (the choice shrinker
        // orders candidates by value, not by bytes, so it may differ from the
        // oracle's byte-wise best). A run cut short keeps whichever is smaller.
        let best = if oracle.stop_reason().is_none()
            || crate::run::crash_oracle::shortlex_less(&result, oracle.best())
        {
            result
        } else {
            oracle.best().to_vec()
        };
        // What to fall back on if the best crashes only in this process's
        // state: the oracle's best and the bests before it, newest first.
        let mut candidates = vec![best];
        candidates.push(oracle.best().to_vec());
        candidates.extend(oracle.earlier_bests().map(<[u8]>::to_vec));
        let work = Work {
            screen_failures: oracle.screen_failures(),
            clock_rejections: oracle.clock_rejections(),
            executed: oracle.executed(),
            discarded: oracle.discarded(),
            drivers: oracle.drivers(),
            helpers: oracle.helper_stats(),
        };
        (
            candidates,
            stats,
            work,
            invalid,
            oracle.other_signatures(),
            oracle.stop_reason(),
            oracle.take_error(),
        )
    };
    if let Some(e) = error {
        return Err(e);
    }
    let elapsed = started.elapsed();
    let value_cached =
        exec.stats().value_cache_hits - before.value_cache_hits + work.helpers.value_cache_hits;
    // Nothing smaller was found (the original is minimal, or the run was cut
    // short first), or what was found crashes only in the driver's state and
    // the run was cut short: the result may be the original itself, if it
    // still crashes alone in a fresh process.
    let original_may_do = stop.is_some() || best.iter().all(|b| b.as_slice() == data);
    if let (Some(StopReason::Interrupted), Some(r)) = (stop, reporter.as_mut()) {
        // A hang's check runs to the limit, and so does each earlier best
        // tried if the best does not crash in a fresh process: say why
        // Ctrl-C is taking a while.
        let each = if signature.kind == CrashKind::Timeout {
            format!(" (each hang runs {:.1}s)", timeout.as_secs_f64())
        } else {
            String::new()
        };
        r.note(format!(
            "stopping: checking the best result in a fresh process{each}"
        ));
    }
    exec.set_screen_hangs(None);
    exec.set_timeout(timeout);
    let (published, unconfirmed, second_clock) = publish(
        exec,
        (opts.match_mode, &signature),
        &output,
        (data, original_may_do),
        &best,
        previous.as_deref(),
        second_clock,
    )?;
    // Screening was wrong about the results: go on from the newest that
    // holds (the original, if none of the bests kept does), unscreened.
    let screened_wrongly = screen
        && signature.kind == CrashKind::Timeout
        && unconfirmed > 0
        && stop.is_none()
        && !crate::interrupt::requested();
    let resume_from = match &published {
        Published::Wrote(b) if screened_wrongly && b.len() < data.len() => Some(b.as_slice()),
        Published::Nothing if screened_wrongly => Some(data),
        _ => None,
    };
    let fuzzer_clock = second_clock
        .as_ref()
        .and_then(|c| c.report(work.clock_rejections));
    if let Some(b) = resume_from {
        let trusted_fuzzer = second_clock.as_ref().and_then(SecondClock::turned_down_any);
        if let Some(r) = reporter.as_deref_mut() {
            r.note(match &trusted_fuzzer {
                None => format!(
                    "the smallest results stopped hanging at the full limit in a fresh process; \
                     going on from the {} bytes that still hang, every candidate run to the limit",
                    b.len()
                ),
                Some(f) => format!(
                    "`cargo fuzz build`'s fuzzer ({}) finished the smallest results before the \
                     limit; going on from the {} bytes that keep it running, every candidate run \
                     to the limit and every smaller one checked on the fuzzer too",
                    f.path().display(),
                    b.len()
                ),
            });
        }
        drop(_lock);
        let now = exec.stats();
        let first = (
            work.executed - (now.value_cache_hits - before.value_cache_hits),
            stats.cache_hits,
            started.elapsed(),
            (unconfirmed, work.screen_failures),
            (
                now.restarts - before.restarts + work.helpers.restarts,
                now.screened - before.screened + work.helpers.screened,
            ),
            passes,
        );
        let again = ReduceJob {
            project,
            target,
            build,
            artifact,
            data: b,
            signature: signature.clone(),
            slowest,
            output: output.clone(),
            emit_test: emit_test.clone(),
            parsed: None,
            clock: Some(clock.unwrap_or(started)),
        };
        let stage = Stage {
            screen: false,
            trusted_fuzzer,
        };
        let turned_down = fuzzer_clock.map_or(0, |c| c.turned_down);
        let mut summary = reduce_stage(opts, exec, again, reporter, stage)?;
        let (executed, cached, secs, (unconfirmed, wrongly), (restarts, screened), passes) = first;
        summary.original_len = original_len;
        summary.tests_executed += executed;
        summary.tests_cached += cached;
        summary.tests_alike += passes.alike;
        summary.driver_restarts += restarts;
        summary.elapsed_secs += secs.as_secs_f64();
        summary.tests_per_sec = summary.tests_executed as f64 / summary.elapsed_secs.max(1e-9);
        summary.passes = merge_passes(passes.passes, summary.passes);
        if let Some(t) = summary.timeout.as_mut() {
            t.screened += screened;
            t.unconfirmed += unconfirmed;
            t.screened_wrongly += wrongly + unconfirmed;
            if let Some(c) = t.fuzzer.as_mut() {
                c.turned_down += turned_down;
            }
        }
        // The first stage wrote what the second kept.
        if summary.kept_existing {
            (summary.written, summary.kept_existing) = (true, false);
        }
        return Ok(summary);
    }
    let (best, written, kept_existing) = match published {
        Published::Wrote(b) => (b, true, false),
        Published::KeptExisting(b) => (b, false, true),
        Published::OriginalDoesNotCrash(now) => {
            return Err(Error::NotAsClassified {
                path: artifact.to_owned(),
                target: target.to_owned(),
                classified: signature.to_string(),
                now,
            })
        }
        Published::Nothing => {
            return Err(Error::ResultNotReproducible {
                path: output,
                target: target.to_owned(),
                len: best.first().map_or(0, Vec::len),
            })
        }
    };
    if let (true, true, Some(r)) = (kept_existing, screen, reporter.as_mut()) {
        r.note(format!(
            "kept the existing {} ({} bytes): it crashes the same way and is no larger than this run's result",
            output.display(),
            best.len()
        ));
    }
    let debug = if exec.typed() {
        exec.debug_format(&best)?
    } else {
        None
    };
    let exec_stats = exec.stats();
    // Which parts of the result matter: after it is written and checked
    // (and the reduction's counters read), asking questions only. It never
    // costs more than the reduction did (unless asked to); `--max-time` is
    // a deadline: the explanation gets at most what is left of it.
    let explain_time = opts
        .explain_time
        .unwrap_or_else(|| explain::default_time(started.elapsed()));
    let time_left = match opts.budget.max_time {
        Some(t) => t
            .saturating_sub(clock.unwrap_or(started).elapsed())
            .min(explain_time),
        None => explain_time,
    };
    let explanation = match explain::skipped(signature.kind, &best, opts.explain_tests) {
        None if stop.is_none() && !crate::interrupt::requested() && !time_left.is_zero() => {
            Some(explain::explain_result(
                exec,
                &signature,
                opts.match_mode,
                &best,
                (opts.explain_tests, time_left),
                opts.pipeline.seed,
            ))
        }
        _ => None,
    };
    // The next user of this driver may reproduce an artifact (a campaign's
    // next one): the clock counts again. The driver starts anew only if it
    // runs anything more.
    exec.set_faithful_compares(true);
    let reproduce = reproduce_line(
        project,
        target,
        build,
        &output,
        opts,
        timeout_goal.and_then(|g| g.libfuzzer),
    );
    if let Some(path) = &emit_test {
        let test = RegressionTest {
            artifact,
            target,
            target_src: &project.target(target)?.src_path,
            fuzz_manifest: &project.manifest,
            signature: &signature,
            build,
            reproduce: &reproduce,
            original_len,
            reduced: &best,
            debug: debug.as_deref(),
            explained: explanation.as_ref().map(|e| e.text.as_str()),
        };
        write_test(&test, path, reporter)?;
    }
    let timeout = match (signature.kind, timeout_goal) {
        (CrashKind::Timeout, Some(goal)) => Some(TimeoutGuarantee {
            runs_at_least_secs: goal.deadline.as_secs_f64(),
            libfuzzer_timeout: goal.libfuzzer,
            inferred: opts.timeout.is_none() && opts.libfuzzer_timeout.is_none(),
            screened: exec_stats.screened - before.screened + work.helpers.screened,
            screened_wrongly: work.screen_failures,
            unconfirmed,
            fuzzer: fuzzer_clock,
        }),
        _ => None,
    };
    Ok(Summary {
        emitted_test: emit_test,
        reproduce,
        timeout,
        target: target.to_owned(),
        input: artifact.to_owned(),
        output,
        signature,
        match_mode: opts.match_mode.name(),
        strategy: strategy_name.to_owned(),
        grammar: opts.grammar.clone(),
        invalid_candidates,
        original_len,
        reduced_len: best.len(),
        tests_executed: work.executed - value_cached,
        tests_cached: stats.cache_hits,
        tests_value_cached: value_cached,
        tests_discarded: work.discarded,
        tests_alike: passes.alike,
        passes: passes.passes,
        drivers: work.drivers,
        elapsed_secs: elapsed.as_secs_f64(),
        tests_per_sec: work.executed as f64 / elapsed.as_secs_f64().max(1e-9),
        // A helper's first process is no restart.
        driver_restarts: exec_stats.restarts - before.restarts + work.helpers.restarts,
        driver_spawns: exec_stats.spawns - before.spawns
            + work.helpers.spawns.saturating_sub(work.drivers as u64 - 1),
        other_signatures: others
            .into_iter()
            .map(|(signature, count)| OtherSignature { signature, count })
            .collect(),
        interrupted: stop == Some(StopReason::Interrupted),
        budget_exhausted: stop == Some(StopReason::Budget),
        typed: exec.typed(),
        preview: preview(&best, 160),
        debug,
        explanation,
        verified_fresh: written || kept_existing,
        written,
        kept_existing,
    })
}

/// Two stages' pass counts as one list, in the first's order.
fn merge_passes(
    mut first: Vec<crate::reduce::PassStats>,
    second: Vec<crate::reduce::PassStats>,
) -> Vec<crate::reduce::PassStats> {
    for p in second {
        match first.iter_mut().find(|q| q.name == p.name) {
            Some(q) => {
                q.tests += p.tests;
                q.removed += p.removed;
                q.runs += p.runs;
                q.improved += p.improved;
                q.secs += p.secs;
            }
            None => first.push(p),
        }
    }
    first
}

/// What the drivers did during one reduction.
struct Work {
    /// Candidates run (value-cached ones included), on every driver.
    executed: u64,
    /// Of those, run past the first interesting one of their list.
    discarded: u64,
    drivers: usize,
    /// The extra drivers' counters.
    helpers: crate::run::exec::ExecStats,
    /// Screened hangs that finished at the limit ([`CrashOracle::screen_failures`]).
    screen_failures: usize,
    /// Bests the second clock turned down ([`CrashOracle::clock_rejections`]).
    clock_rejections: usize,
}

/// What [`publish`] did with the output.
enum Published {
    /// Wrote this result.
    Wrote(Vec<u8>),
    /// Kept what was there (no larger, crashes the same way).
    KeptExisting(Vec<u8>),
    /// Nothing smaller than the original crashes on its own.
    Nothing,
    /// Nothing smaller crashes, and the original itself, run alone in a
    /// fresh process, does not crash as it was classified (a stale record):
    /// what it did instead.
    OriginalDoesNotCrash(String),
}

/// Writes `test` at `path` and says on the terminal when a plain
/// `cargo test` will not fail on it.
fn write_test(
    test: &RegressionTest<'_>,
    path: &Path,
    reporter: Option<&mut Reporter>,
) -> Result<()> {
    test.write(path)?;
    if let Some(r) = reporter {
        match test.failing(path) {
            Failing::PlainTest(_) => {}
            Failing::Sanitizer { name, command } => r.note(format!(
                "{}: a plain `cargo test` passes it, since only {name} sees this bug; it fails under {name}: {command}",
                path.display()
            )),
            Failing::FuzzBinaryOnly { what } => r.note(format!(
                "{}: a plain `cargo test` does not fail on {what}; replay through the fuzz binary: {}",
                path.display(),
                test.reproduce
            )),
        }
    }
    Ok(())
}

/// A result that is already there (a directory run's bug whose reduction
/// is recorded and whose output was just seen crashing the same way).
pub struct ExistingResult<'a> {
    pub project: &'a FuzzProject,
    pub target: &'a str,
    pub build: &'a BuildKind,
    pub artifact: &'a Path,
    pub original_len: usize,
    pub signature: &'a Signature,
    /// The original's slowest run (what a timeout's result is reported at).
    pub slowest: Duration,
    pub output: &'a Path,
    /// Its explanation's text, if it had one (the test's comment shows it).
    pub explained: Option<&'a str>,
}

/// `--emit-test` for an [`ExistingResult`]: the same test file a reduction
/// writes, from the output's bytes (`exec` renders a typed value).
pub fn emit_test_for_existing(
    opts: &Options,
    exec: &mut Executor,
    result: &ExistingResult<'_>,
    path: &Path,
    reporter: Option<&mut Reporter>,
) -> Result<()> {
    let reduced = crate::input::read_file(result.output)?;
    let debug = if exec.typed() {
        exec.debug_format(&reduced)?
    } else {
        None
    };
    let (_, goal) = reduction_timeout(opts, result.signature, result.slowest);
    let reproduce = reproduce_line(
        result.project,
        result.target,
        result.build,
        result.output,
        opts,
        goal.and_then(|g| g.libfuzzer),
    );
    let test = RegressionTest {
        artifact: result.artifact,
        target: result.target,
        target_src: &result.project.target(result.target)?.src_path,
        fuzz_manifest: &result.project.manifest,
        signature: result.signature,
        build: result.build,
        reproduce: &reproduce,
        original_len: result.original_len,
        reduced: &reduced,
        debug: debug.as_deref(),
        explained: result.explained,
    };
    write_test(&test, path, reporter)
}

/// The one place a result is written. A result is written only if it
/// crashes with the original's signature when run alone in a fresh process
/// (the reduction ran it after thousands of other inputs): the first of
/// `candidates` (the reducer's answer, then the bests before it, newest
/// first) that does, else the original itself when `original.1` allows
/// it. An existing output that crashes the same way and is no larger is kept
/// instead: a later run never makes a result worse. Whatever records or
/// earlier runs claimed, nothing is written that was not just seen crashing.
/// A timeout's result must also run past the deadline in `fuzzer`, the
/// second clock, when there is one (returned with what it saw).
fn publish(
    exec: &mut Executor,
    (mode, signature): (MatchMode, &Signature),
    output: &Path,
    original: (&[u8], bool),
    candidates: &[Vec<u8>],
    previous: Option<&[u8]>,
    mut fuzzer: Option<SecondClock>,
) -> Result<(Published, usize, Option<SecondClock>)> {
    let (original, original_may_do) = original;
    exec.set_value_cache(false);
    let mut last_outcome = String::new();
    let mut reproduces = |input: &[u8]| -> Result<bool> {
        exec.restart();
        let run = exec.run(input)?;
        last_outcome = match run.outcome.signature() {
            Some(s) => s.to_string(),
            None => run.outcome.label().to_owned(),
        };
        if !matches!(run.outcome, Outcome::Crash(ref s) if mode.matches(signature, s)) {
            return Ok(false);
        }
        match fuzzer.as_mut() {
            Some(clock) => clock.runs_past(original, input),
            None => Ok(true),
        }
    };
    let mut chosen = None;
    let mut tried: Vec<&[u8]> = Vec::new();
    for c in candidates {
        if c.as_slice() == original || tried.contains(&c.as_slice()) {
            continue;
        }
        tried.push(c);
        if reproduces(c)? {
            chosen = Some(c.clone());
            break;
        }
    }
    // The candidates that did not reproduce before the one chosen.
    let failed = tried.len() - usize::from(chosen.is_some());
    let published = 'published: {
        if let Some(p) = previous {
            let no_larger = match &chosen {
                Some(c) => !crate::run::crash_oracle::shortlex_less(c, p),
                None => true,
            };
            if no_larger && p != original && reproduces(p)? {
                break 'published Published::KeptExisting(p.to_vec());
            }
        }
        if chosen.is_none() && original_may_do {
            if !reproduces(original)? {
                break 'published Published::OriginalDoesNotCrash(last_outcome);
            }
            chosen = Some(original.to_vec());
        }
        match chosen {
            Some(c) => {
                crate::output::write(output, &c)?;
                Published::Wrote(c)
            }
            None => Published::Nothing,
        }
    };
    Ok((published, failed, fuzzer))
}

/// A timeout's second clock: `cargo fuzz build`'s fuzzer
/// ([`FuzzerBinary`]), trusted once it hangs on the original too.
struct SecondClock {
    fuzzer: FuzzerBinary,
    /// Where the result's run in a fresh process is killed.
    deadline: Duration,
    /// Whether the fuzzer ran the original past the deadline (asked once,
    /// when the first result needs it).
    hangs_on_original: Option<bool>,
    /// Results the driver kept running that the fuzzer finished.
    turned_down: usize,
}

impl SecondClock {
    /// The fuzzer a timeout's result is also judged by, if there is one.
    fn for_timeout(
        opts: &Options,
        project: &FuzzProject,
        target: &str,
        deadline: Duration,
    ) -> Option<SecondClock> {
        let limits = (opts.rss_limit_mb, opts.malloc_limit_mb);
        FuzzerBinary::locate(project, target, &opts.build, limits).map(|fuzzer| SecondClock {
            fuzzer,
            deadline,
            hangs_on_original: None,
            turned_down: 0,
        })
    }

    /// A fuzzer already known to hang on the original.
    fn trusted(fuzzer: FuzzerBinary, deadline: Duration) -> SecondClock {
        SecondClock {
            fuzzer,
            deadline,
            hangs_on_original: Some(true),
            turned_down: 0,
        }
    }

    /// A result the driver kept running to the deadline: does the fuzzer
    /// too? Yes without asking when it did not hang on the original (stale,
    /// or built otherwise): then only the driver's clock can judge.
    fn runs_past(&mut self, original: &[u8], input: &[u8]) -> Result<bool> {
        let trusted = match self.hangs_on_original {
            Some(t) => t,
            None => *self
                .hangs_on_original
                .insert(self.fuzzer.runs_past(original, self.deadline)?),
        };
        if !trusted || input == original {
            return Ok(true);
        }
        let holds = self.fuzzer.runs_past(input, self.deadline)?;
        self.turned_down += usize::from(!holds);
        Ok(holds)
    }

    /// The fuzzer, if it turned a result down (the next stage's second
    /// clock).
    fn turned_down_any(&self) -> Option<FuzzerBinary> {
        (self.turned_down > 0).then(|| self.fuzzer.clone())
    }

    /// What the report says of it (nothing if it was never asked), with
    /// the bests `also_turned_down` while reducing.
    fn report(&self, also_turned_down: usize) -> Option<FuzzerClock> {
        Some(FuzzerClock {
            path: self.fuzzer.path().to_owned(),
            hangs_on_original: self.hangs_on_original?,
            turned_down: self.turned_down + also_turned_down,
        })
    }
}

/// Runs each file once and reports its outcome (no reduction), with the
/// decoded value's `Debug` form for a typed target. Each file's target is
/// inferred separately; one driver per target is built and kept.
pub fn classify(opts: &Options, files: &[PathBuf], reporter: &mut Reporter) -> Result<()> {
    let mut drivers: Vec<Prepared> = Vec::new();
    let mut plan: Option<Plan> = None;
    for file in files {
        let data = read_artifact(file)?;
        let (project, target) = locate_target(opts, file)?;
        let index = match drivers
            .iter()
            .position(|p| p.target == target && p.project.manifest == project.manifest)
        {
            Some(i) => i,
            None => {
                let plan = plan
                    .get_or_insert_with(|| plan_build(opts, reporter))
                    .clone();
                drivers.push(prepare(opts, &plan, project, target, reporter)?);
                drivers.len() - 1
            }
        };
        let exec = &mut drivers[index].exec;
        let run = exec.run(&data)?;
        let debug = if exec.typed() {
            exec.debug_format(&data)?
        } else {
            None
        };
        reporter.classified(file, &run.outcome, run.elapsed, debug.as_deref());
    }
    Ok(())
}

fn display_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// `cargo fuzz run <flags> <target> <output>`, paths relative to the cwd
/// (`RESULT_FILE` where the result went to a stream, not a file),
/// with flags only where this run's build differs from `cargo fuzz run`'s
/// default (and `+nightly` when the active toolchain is not the nightly the
/// driver was built with).
fn reproduce_line(
    project: &FuzzProject,
    target: &str,
    build: &BuildKind,
    output: &Path,
    opts: &Options,
    libfuzzer_timeout: Option<u64>,
) -> String {
    let cwd = &opts.locate.cwd;
    let rel = |p: &Path| -> String {
        let abs = p.canonicalize().unwrap_or_else(|_| p.to_owned());
        let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.clone());
        abs.strip_prefix(&cwd)
            .map(|r| r.display().to_string())
            .unwrap_or_else(|_| abs.display().to_string())
    };
    let mut parts = vec!["cargo".to_owned()];
    if let BuildKind::CargoFuzz { toolchain, .. } = build {
        parts.extend(toolchain.plus());
    }
    parts.extend(["fuzz".to_owned(), "run".to_owned()]);
    let b = &opts.build;
    if b.dev {
        parts.push("--dev".to_owned());
    }
    if b.release {
        parts.push("-O".to_owned());
    }
    if b.debug_assertions {
        parts.push("-a".to_owned());
    }
    if let Some(f) = &b.features {
        parts.push(format!("--features={f}"));
    }
    if b.all_features {
        parts.push("--all-features".to_owned());
    }
    if b.no_default_features {
        parts.push("--no-default-features".to_owned());
    }
    if b.no_cfg_fuzzing {
        parts.push("--no-cfg-fuzzing".to_owned());
    }
    match build.sanitizer() {
        Some("address") => {}
        Some(s) => parts.push(format!("--sanitizer={s}")),
        None => parts.push("--sanitizer=none".to_owned()),
    }
    // cargo-fuzz finds the project from the current directory as we do
    // without an artifact: `--fuzz-dir` only when that finds another one.
    let found_from_cwd = crate::run::project::find_manifest(&Locate {
        cwd: cwd.clone(),
        ..Locate::default()
    })
    .ok()
    .and_then(|m| m.canonicalize().ok());
    if found_from_cwd.as_deref() != Some(project.manifest.as_path()) {
        let dir = match rel(&project.dir) {
            d if d.is_empty() => ".".to_owned(),
            d => d,
        };
        parts.push(format!("--fuzz-dir={}", shell_quote(&dir)));
    }
    parts.push(target.to_owned());
    // A result written through to a stream (`-o -`) is in no file here.
    parts.push(match crate::output::sink(output) {
        crate::output::Sink::File => shell_quote(&rel(output)),
        _ => "RESULT_FILE".to_owned(),
    });
    // libFuzzer's flags where this run's differ from its defaults.
    let mut flags = Vec::new();
    if let Some(n) = libfuzzer_timeout {
        flags.push(format!("-timeout={n}"));
    }
    if opts.rss_limit_mb != DEFAULT_RSS_LIMIT_MB {
        flags.push(format!("-rss_limit_mb={}", opts.rss_limit_mb));
    }
    if opts.malloc_limit_mb != 0 && opts.malloc_limit_mb != opts.rss_limit_mb {
        flags.push(format!("-malloc_limit_mb={}", opts.malloc_limit_mb));
    }
    if !flags.is_empty() {
        parts.push("--".to_owned());
        parts.extend(flags);
    }
    parts.join(" ")
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
