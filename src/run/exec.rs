//! Runs inputs through a long-lived driver process and classifies outcomes.
//!
//! The driver (built by [`crate::run::driver`]) hosts the fuzz target and runs
//! many inputs per process, catching panics in-process. What a process
//! cannot survive (a sanitizer report, an abort, a stack overflow, a fatal
//! signal, a memory limit, a hang) kills it. With the driver's fork server
//! (the default), only a forked child dies: the server reports the death
//! and forks a fresh child in microseconds; a hang is killed at its
//! deadline the same way. Without it, the whole driver dies and a new one is
//! started. Either way the death is classified from the exit status and
//! what the process printed ([`crate::run::crash_report`]).
//!
//! The wire protocol is documented in `templates/driver/shim/src/__driver.rs`.
//! This module knows nothing about reduction.
//!
//! One file, about 1,100 lines: the parent's half of the wire protocol
//! (framing, batches, deaths, the fork server's messages) must be read next
//! to itself; split, every change would touch every part.

use crate::reduce::oracle::{Span, SpanKind};
use crate::run::crash_report::{self, RawPanic, Symbolizer};
use crate::run::outcome::{CrashKind, Outcome, Signature};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How much of the driver's stderr is kept to classify a death.
const STDERR_TAIL: usize = 64 * 1024;

/// How long to busy-wait for an answer before sleeping in `poll`.
const SPIN: Duration = Duration::from_micros(50);

/// How long a fresh driver may take to start (its `init:` block included).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// Stack the driver gets beyond `RLIMIT_STACK` (see `Driver::spawn`): more
/// than the spread of where the real binary's stack ends (the kernel's
/// random 8 KiB, environment and start-up frames), less than one level of a
/// recursion with big frames.
const STACK_MARGIN: libc::rlim_t = 16 * 1024;

/// How long the fork server may take to report a child we killed.
const KILL_GRACE: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
pub struct ExecConfig {
    /// The built driver binary.
    pub program: PathBuf,
    /// Per-input time limit.
    pub timeout: Duration,
    /// Memory limit in MiB (libFuzzer's `-rss_limit_mb`); 0 = none.
    pub rss_limit_mb: u64,
    /// Largest single allocation in MiB (`-malloc_limit_mb`); 0 = same as rss.
    pub malloc_limit_mb: u64,
    /// Restart after a death by forking the driver's clean state (the
    /// default) instead of starting a new driver process.
    pub fork_server: bool,
    /// Stacks sampled from an input that passes its deadline, to name the
    /// hang's place ([`crash_report::hang_function`]); 0: none (a reduction,
    /// whose identity does not use it, saves their time).
    pub hang_samples: usize,
    /// Screen hangs (a timeout's reduction): a run is stopped, as a
    /// timeout, once it has run [`SCREEN_FACTOR`] times as long as the
    /// slowest run that finished, and at least this long (never longer
    /// than `timeout`). An input that runs that long is almost always one
    /// that hangs; the results that are written are confirmed at `timeout`
    /// in a fresh process.
    pub screen_hangs: Option<Duration>,
    /// Comparisons cost in the driver what libFuzzer's runtime makes them
    /// cost in the real binary (its comparison-tracing and `memcmp` hooks'
    /// work, in the shim's `sancov::trace`), so that an input runs about
    /// as long here as under `cargo fuzz run`: on wherever the clock
    /// decides (reproducing an artifact, a timeout's reduction); off for a
    /// crash's reduction, where it would only slow each test (up to 2.2
    /// times on cpp_demangle 0.2).
    pub faithful_compares: bool,
}

impl ExecConfig {
    /// A configuration with libFuzzer's default limits and the fork server on.
    pub fn new(program: PathBuf, timeout: Duration) -> ExecConfig {
        ExecConfig {
            program,
            timeout,
            rss_limit_mb: 2048,
            malloc_limit_mb: 0,
            fork_server: true,
            hang_samples: HANG_SAMPLES,
            screen_hangs: None,
            faithful_compares: true,
        }
    }
}

/// One input's outcome and how long it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub outcome: Outcome,
    pub elapsed: Duration,
    /// Answered from the value cache: the input decodes to a value whose
    /// outcome was already known, so the target did not run.
    pub cached: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("cannot start the driver {path}: {source}")]
    Spawn { path: PathBuf, source: io::Error },
    #[error("the driver {path} did not start: {detail}")]
    Startup { path: PathBuf, detail: String },
    #[error("the driver {path} was built without coverage instrumentation")]
    NoCoverage { path: PathBuf },
    #[error("the fuzz target's `init:` block panicked: {0}")]
    InitPanicked(Signature),
}

/// Counters for the report.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExecStats {
    /// Inputs the target actually ran.
    pub executions: u64,
    /// Inputs answered from the value cache instead.
    pub value_cache_hits: u64,
    /// Fresh processes to run inputs after the first: forks of the fork
    /// server, or new drivers without one.
    pub restarts: u64,
    /// Driver processes started (exec'd), the first included.
    pub spawns: u64,
    /// Runs stopped at the screening limit, short of the timeout
    /// ([`ExecConfig::screen_hangs`]).
    pub screened: u64,
}

/// Owns the driver process.
pub struct Executor {
    config: ExecConfig,
    driver: Option<Driver>,
    typed: bool,
    stats: ExecStats,
    /// Use value-level caching for typed targets (`V` batches).
    value_cache: bool,
    /// Values known to kill the driver, and how.
    fatal_values: HashMap<u64, Signature>,
    /// Turns addresses in crash reports into functions and lines.
    symbolizer: Symbolizer,
    /// Ask a hanging input for its stack (until a driver does not answer).
    hang_stacks: bool,
    /// The longest a run that finished took (for screening hangs).
    slowest_finished: Duration,
}

struct Driver {
    child: Child,
    stdin: ChildStdin,
    reader: FrameReader,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    stderr_thread: Option<JoinHandle<()>>,
    /// The process that runs inputs: a fork server's current child, or the
    /// driver itself.
    runner: u32,
    fork_server: bool,
    /// Its process group, for a second Ctrl-C to kill ([`interrupt`]).
    ///
    /// [`interrupt`]: crate::interrupt
    group: crate::interrupt::Group,
}

/// A fork server's report that its child died.
#[derive(Debug, Clone)]
struct Death {
    status: ExitStatus,
    phase: Phase,
    printed: String,
    next: u32,
}

/// What the dead child was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for a request: one sent meanwhile is served by the next child.
    Idle,
    /// Working on the current request: the death is its doing.
    Busy,
    /// Part-way through reading a request: the pipe is out of step.
    Reading,
}

impl Executor {
    /// Starts the driver once to check that it works.
    pub fn new(config: ExecConfig) -> Result<Self, ExecError> {
        let symbolizer = Symbolizer::new(&config.program);
        let mut exec = Executor {
            config,
            driver: None,
            typed: false,
            stats: ExecStats::default(),
            value_cache: false,
            fatal_values: HashMap::new(),
            symbolizer,
            hang_stacks: true,
            slowest_finished: Duration::ZERO,
        };
        exec.ensure_driver()?;
        Ok(exec)
    }

    pub fn config(&self) -> &ExecConfig {
        &self.config
    }

    pub fn set_timeout(&mut self, timeout: Duration) {
        self.config.timeout = timeout;
    }

    /// How many stacks a hang is sampled for ([`ExecConfig::hang_samples`]).
    pub fn set_hang_samples(&mut self, n: usize) {
        self.config.hang_samples = n;
    }

    /// Whether comparisons cost what they cost under libFuzzer
    /// ([`ExecConfig::faithful_compares`]): told to a running driver (a
    /// `K` request, which its later children keep), or a new one is started
    /// so.
    pub fn set_faithful_compares(&mut self, on: bool) {
        if self.config.faithful_compares == on {
            return;
        }
        self.config.faithful_compares = on;
        if let Some(d) = self.driver.as_mut() {
            if d.stdin.write_all(&[b'K', u8::from(on)]).is_err() {
                self.kill_driver();
            }
        }
    }

    /// Screen hangs at a shorter limit than the timeout
    /// ([`ExecConfig::screen_hangs`]), or not (`None`).
    pub fn set_screen_hangs(&mut self, min: Option<Duration>) {
        self.config.screen_hangs = min;
    }

    /// The longest a run that finished took so far.
    pub fn slowest_finished(&self) -> Duration {
        self.slowest_finished
    }

    /// When the next run is stopped: the timeout, or the screening limit.
    fn limit(&self) -> Duration {
        match self.config.screen_hangs {
            Some(min) => (self.slowest_finished * SCREEN_FACTOR)
                .max(min)
                .min(self.config.timeout),
            None => self.config.timeout,
        }
    }

    /// Answer inputs of typed targets that decode to an already-run value
    /// from the cache instead of running them. Off by default: reproducing
    /// an artifact must run it every time.
    pub fn set_value_cache(&mut self, on: bool) {
        self.value_cache = on && self.typed;
    }

    /// Whether inputs run in a fork server's children.
    pub fn forks(&self) -> bool {
        self.driver.as_ref().is_some_and(|d| d.fork_server)
    }

    /// The next input runs in a fresh process: a new child of the fork
    /// server (which never ran an input), or a new driver.
    pub fn restart(&mut self) {
        if !self.replace_runner() {
            self.kill_driver();
        }
    }

    /// Kills the fork server's child and waits for its replacement; `false`
    /// when there is no fork server or it did not answer.
    fn replace_runner(&mut self) -> bool {
        let Some(d) = self.driver.as_mut().filter(|d| d.fork_server) else {
            return false;
        };
        d.kill_runner();
        let deadline = Instant::now() + KILL_GRACE;
        loop {
            match d.reader.read_frame(deadline) {
                Ok(Frame::Death(death)) => {
                    self.runner_replaced(death.next);
                    return true;
                }
                // Frames the child finished just before the kill.
                Ok(_) => continue,
                Err(_) => return false,
            }
        }
    }

    /// The input running now passed its deadline: its stack is sampled a
    /// few times (the hang signal; the handler answers while an input
    /// runs), which names the hang's place ([`crash_report::hang_function`]),
    /// then the next input gets a fresh process. A driver that once did not
    /// answer is not asked again.
    fn timed_out(&mut self) -> Signature {
        let mut sig = Signature::new(CrashKind::Timeout);
        let mut stacks = Vec::new();
        let mut in_step = true;
        while self.hang_stacks && stacks.len() < self.config.hang_samples {
            if !stacks.is_empty() {
                std::thread::sleep(HANG_SAMPLE_GAP);
            }
            let asked = self.driver.as_ref().is_some_and(|d| {
                d.runner != 0
                    && unsafe {
                        libc::syscall(
                            libc::SYS_tgkill,
                            d.runner as libc::pid_t,
                            d.runner as libc::pid_t,
                            libc::SIGRTMIN() + 7,
                        ) == 0
                    }
            });
            if !asked {
                break;
            }
            let deadline = Instant::now() + HANG_STACK_WAIT;
            match self.driver_mut().reader.read_hang_stack(deadline) {
                HangStack::Stack(stack) => stacks.push(stack),
                HangStack::NoAnswer => {
                    // Not answering at all: do not wait on this driver again.
                    self.hang_stacks = !stacks.is_empty();
                    break;
                }
                HangStack::OutOfStep => {
                    in_step = false;
                    break;
                }
            }
        }
        sig.function = crash_report::hang_function(&stacks, &mut self.symbolizer);
        match in_step {
            true => self.restart(),
            false => self.kill_driver(),
        }
        sig
    }

    /// Whether the target takes a typed (`Arbitrary`) argument.
    pub fn typed(&self) -> bool {
        self.typed
    }

    pub fn stats(&self) -> ExecStats {
        self.stats
    }

    /// Runs one input.
    pub fn run(&mut self, input: &[u8]) -> Result<Run, ExecError> {
        let mut runs = self.run_batch(&[input])?;
        Ok(runs.pop().expect("a batch of one yields one run"))
    }

    /// Runs inputs in order until the first crash. Returns one [`Run`] per
    /// input executed: all of them, or up to and including the first crash.
    pub fn run_batch(&mut self, inputs: &[&[u8]]) -> Result<Vec<Run>, ExecError> {
        self.run_batch_until(inputs, None)
    }

    /// [`Executor::run_batch`], cut at `cut` if it comes first: the input
    /// still running then is not judged (the driver is killed, and the next
    /// batch starts a new one), and the runs before it are returned. A
    /// driver runs its batch to the end or the first crash, so without a
    /// cut a batch of slow inputs sent just before a `--max-time` deadline
    /// would end long after it.
    pub fn run_batch_until(
        &mut self,
        inputs: &[&[u8]],
        cut: Option<Instant>,
    ) -> Result<Vec<Run>, ExecError> {
        let mut runs = Vec::with_capacity(inputs.len());
        if cut.is_some_and(|c| Instant::now() >= c) {
            return Ok(runs);
        }
        // Resent (from the first unanswered input) when a driver had to be
        // replaced before it read the whole request.
        let mut send = true;
        let mut retries = 0;
        let mut running_key: Option<u64> = None;
        while runs.len() < inputs.len() {
            if send {
                self.send_rest(&inputs[runs.len()..])?;
                send = false;
            }
            let limit = self.limit();
            let deadline = Instant::now() + limit;
            let cut_first = cut.filter(|&c| c < deadline);
            let frame = self
                .driver_mut()
                .reader
                .read_frame(cut_first.unwrap_or(deadline));
            let run = match frame {
                Ok(Frame::Key(k)) => {
                    running_key = Some(k);
                    continue;
                }
                Ok(Frame::Done {
                    outcome,
                    elapsed,
                    cached,
                }) => Run {
                    outcome,
                    elapsed,
                    cached,
                },
                Ok(Frame::Panicked {
                    panic,
                    elapsed,
                    cached,
                }) => Run {
                    outcome: Outcome::Crash(panic.signature(&mut self.symbolizer)),
                    elapsed,
                    cached,
                },
                Ok(Frame::KnownFatal(k)) => match self.fatal_values.get(&k) {
                    Some(sig) => Run {
                        outcome: Outcome::Crash(sig.clone()),
                        elapsed: Duration::ZERO,
                        cached: true,
                    },
                    None => {
                        // Cannot happen (the parent told the driver); be safe.
                        self.kill_driver();
                        return Err(
                            self.startup_error("the driver reported an unknown fatal value")
                        );
                    }
                },
                Ok(Frame::Death(death)) => match death.phase {
                    Phase::Idle => {
                        // Died between requests (killed from outside): the
                        // request is still in the pipe, for the next child.
                        self.runner_replaced(death.next);
                        continue;
                    }
                    Phase::Reading => {
                        self.kill_driver();
                        retries += 1;
                        if retries > 3 {
                            return Err(
                                self.startup_error("the driver keeps dying while reading inputs")
                            );
                        }
                        send = true;
                        continue;
                    }
                    Phase::Busy => {
                        let announced = self.driver_mut().reader.announced.take();
                        let sig = crash_report::classify_death(
                            Some(death.status),
                            &death.printed,
                            announced,
                            &mut self.symbolizer,
                        );
                        self.runner_replaced(death.next);
                        self.died(sig, running_key.take(), &mut send)
                    }
                },
                Err(ReadError::Timeout) if cut_first.is_some() => {
                    self.kill_driver();
                    return Ok(runs);
                }
                Err(ReadError::Timeout) => {
                    if limit < self.config.timeout {
                        self.stats.screened += 1;
                    }
                    let sig = self.timed_out();
                    self.after_death(running_key.take(), &sig);
                    Run {
                        outcome: Outcome::Crash(sig),
                        elapsed: limit,
                        cached: false,
                    }
                }
                Err(ReadError::Closed) => {
                    let sig = self.reap_dead_driver();
                    self.died(sig, running_key.take(), &mut send)
                }
            };
            if run.cached {
                self.stats.value_cache_hits += 1;
            } else {
                self.stats.executions += 1;
                if !matches!(run.outcome, Outcome::Crash(ref s) if s.kind == CrashKind::Timeout) {
                    self.slowest_finished = self.slowest_finished.max(run.elapsed);
                }
            }
            let crashed = matches!(run.outcome, Outcome::Crash(_));
            runs.push(run);
            if crashed {
                // A crash ends the batch inside the driver; nothing else is pending.
                break;
            }
        }
        Ok(runs)
    }

    /// Sends a batch, starting a driver first if there is none (and once
    /// more if the running one turns out to be dead).
    fn send_rest(&mut self, inputs: &[&[u8]]) -> Result<(), ExecError> {
        let request = if self.value_cache { b'V' } else { b'R' };
        self.ensure_driver()?;
        if self.driver_mut().send_batch(request, inputs).is_err() {
            self.kill_driver();
            self.ensure_driver()?;
            self.driver_mut()
                .send_batch(request, inputs)
                .map_err(|e| self.startup_error(&format!("cannot send inputs: {e}")))?;
        }
        Ok(())
    }

    fn startup_error(&self, detail: &str) -> ExecError {
        ExecError::Startup {
            path: self.config.program.clone(),
            detail: detail.to_owned(),
        }
    }

    /// The fork server replaced a dead child by `next`: inputs go there now,
    /// told which values are known to kill it.
    fn runner_replaced(&mut self, next: u32) {
        self.driver_mut().runner = next;
        self.stats.restarts += 1;
        self.send_fatal_keys();
    }

    /// The run of an input whose process died: a crash, or (`None`: it ended
    /// the process quietly, which libFuzzer does not see as one) a pass,
    /// after which the rest of the batch goes to the new process.
    fn died(&mut self, sig: Option<Signature>, running_key: Option<u64>, send: &mut bool) -> Run {
        let outcome = match sig {
            Some(sig) => {
                self.after_death(running_key, &sig);
                Outcome::Crash(sig)
            }
            None => {
                *send = true;
                Outcome::Pass
            }
        };
        Run {
            outcome,
            elapsed: Duration::ZERO,
            cached: false,
        }
    }

    /// A value whose run killed the process is remembered, so the cache can
    /// answer it next time without dying again.
    fn after_death(&mut self, running_key: Option<u64>, sig: &Signature) {
        if let Some(k) = running_key {
            self.fatal_values.insert(k, sig.clone());
        }
    }

    /// Runs one input on a coverage build ([`BuildOptions::coverage`]) and
    /// returns its outcome with its coverage features (sorted, as libFuzzer
    /// counts them from 8-bit counters). Features are `None` when the input
    /// killed the driver, or [`ExecError::NoCoverage`] when the driver was
    /// built without coverage.
    ///
    /// [`BuildOptions::coverage`]: crate::run::driver::BuildOptions::coverage
    pub fn run_coverage(&mut self, input: &[u8]) -> Result<(Run, Option<Vec<u32>>), ExecError> {
        self.ensure_driver()?;
        if self.driver_mut().send_request(b'C', input).is_err() {
            self.kill_driver();
            self.ensure_driver()?;
            self.driver_mut()
                .send_request(b'C', input)
                .map_err(|e| self.startup_error(&format!("cannot send an input: {e}")))?;
        }
        let deadline = Instant::now() + self.config.timeout;
        let frame = self.driver_mut().reader.read_frame(deadline);
        let (outcome, elapsed) = match frame {
            Ok(Frame::Done {
                outcome, elapsed, ..
            }) => (outcome, elapsed),
            Ok(Frame::Panicked { panic, elapsed, .. }) => (
                Outcome::Crash(panic.signature(&mut self.symbolizer)),
                elapsed,
            ),
            Ok(Frame::Death(death)) => {
                self.stats.executions += 1;
                let announced = self.driver_mut().reader.announced.take();
                let sig = crash_report::classify_death(
                    Some(death.status),
                    &death.printed,
                    announced,
                    &mut self.symbolizer,
                );
                self.runner_replaced(death.next);
                return Ok((dead(sig), None));
            }
            Ok(_) => {
                self.kill_driver();
                return Err(self.startup_error("unexpected answer to a coverage request"));
            }
            Err(ReadError::Timeout) => {
                let sig = self.timed_out();
                self.stats.executions += 1;
                return Ok((crash(sig), None));
            }
            Err(ReadError::Closed) => {
                let sig = self.reap_dead_driver();
                self.stats.executions += 1;
                return Ok((dead(sig), None));
            }
        };
        self.stats.executions += 1;
        let run = Run {
            outcome,
            elapsed,
            cached: false,
        };
        let deadline = Instant::now() + self.config.timeout.max(Duration::from_secs(1));
        match self.driver_mut().reader.read_features(deadline) {
            Ok(Some(features)) => Ok((run, Some(features))),
            Ok(None) => Err(ExecError::NoCoverage {
                path: self.config.program.clone(),
            }),
            Err(_) => {
                self.kill_driver();
                Ok((run, None))
            }
        }
    }

    /// Which bytes of `input` form which draws, probed by the driver's own
    /// decoder (typed targets only; `None` for bytes targets).
    pub fn spans(&mut self, input: &[u8]) -> Result<Option<Vec<Span>>, ExecError> {
        if !self.typed {
            return Ok(None);
        }
        self.ensure_driver()?;
        let deadline = Instant::now() + self.config.timeout.max(Duration::from_secs(10));
        self.probe(b'S', input, deadline, FrameReader::read_spans)
    }

    /// Sends a probe request (`S`pans, `D`ebug) and reads its answer. A
    /// probe that crashes, hangs or cannot be sent answers nothing: the
    /// driver is replaced and the caller goes on without the answer.
    fn probe<T>(
        &mut self,
        kind: u8,
        input: &[u8],
        deadline: Instant,
        read: ReadAnswer<T>,
    ) -> Result<Option<T>, ExecError> {
        if self.driver_mut().send_request(kind, input).is_err() {
            self.kill_driver();
            return Ok(None);
        }
        match read(&mut self.driver_mut().reader, deadline) {
            Ok(Ok(answer)) => Ok(Some(answer)),
            Ok(Err(death)) => {
                // The probe itself crashed; no answer this time.
                self.runner_replaced(death.next);
                Ok(None)
            }
            Err(_) => {
                self.restart();
                Ok(None)
            }
        }
    }

    fn driver_mut(&mut self) -> &mut Driver {
        self.driver.as_mut().expect("driver started")
    }

    /// The target's `Debug` rendering of an input (`cargo fuzz fmt`).
    pub fn debug_format(&mut self, input: &[u8]) -> Result<Option<String>, ExecError> {
        self.ensure_driver()?;
        let timeout = self.config.timeout.max(Duration::from_secs(1));
        self.probe(
            b'D',
            input,
            Instant::now() + timeout,
            FrameReader::read_debug,
        )
    }

    /// Each coverage counter's code as an offset into the driver binary,
    /// in the order of [`Executor::run_coverage`]'s features (`feature / 8`
    /// is a counter's index); `None` when the build has no PC table.
    pub fn counter_offsets(&mut self) -> Result<Option<Vec<u64>>, ExecError> {
        self.ensure_driver()?;
        let offsets = self.probe(
            b'P',
            &[],
            Instant::now() + Duration::from_secs(10),
            FrameReader::read_pcs,
        )?;
        Ok(offsets.filter(|o| !o.is_empty()))
    }

    /// The source frames (innermost first: an inlined function's line, then
    /// its callers') of `offset` in the driver binary.
    pub fn frames_at(&mut self, offset: u64) -> Vec<crate::run::crash_report::Frame> {
        self.symbolizer.frames_at(offset)
    }

    fn ensure_driver(&mut self) -> Result<(), ExecError> {
        if self.driver.is_some() {
            return Ok(());
        }
        let (driver, typed) = Driver::spawn(&self.config)?;
        if self.stats.spawns > 0 {
            self.stats.restarts += 1;
        }
        self.stats.spawns += 1;
        self.typed = typed;
        self.driver = Some(driver);
        self.send_fatal_keys();
        Ok(())
    }

    /// Tells a fresh process which values are known to kill it. A failure
    /// shows up as a dead driver on the next request.
    fn send_fatal_keys(&mut self) {
        if self.fatal_values.is_empty() {
            return;
        }
        let keys: Vec<u64> = self.fatal_values.keys().copied().collect();
        if let Some(d) = self.driver.as_mut() {
            let _ = d.send_fatal_keys(&keys);
        }
    }

    fn kill_driver(&mut self) {
        if let Some(mut d) = self.driver.take() {
            d.kill();
        }
    }

    /// The driver closed its pipe mid-input: wait for it and say why it died
    /// (`None`: quietly, no crash).
    fn reap_dead_driver(&mut self) -> Option<Signature> {
        let mut d = self.driver.take().expect("driver running");
        let status = d.wait_for_exit(Duration::from_secs(5));
        let stderr = d.stderr_tail();
        let announced = d.reader.announced.take();
        crash_report::classify_death(status, &stderr, announced, &mut self.symbolizer)
    }
}

fn crash(sig: Signature) -> Run {
    Run {
        outcome: Outcome::Crash(sig),
        elapsed: Duration::ZERO,
        cached: false,
    }
}

/// The run of an input whose process died: a crash, or a pass if it ended
/// the process quietly ([`crash_report::classify_death`]).
fn dead(sig: Option<Signature>) -> Run {
    match sig {
        Some(sig) => crash(sig),
        None => Run {
            outcome: Outcome::Pass,
            elapsed: Duration::ZERO,
            cached: false,
        },
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        if let Some(mut d) = self.driver.take() {
            let _ = d.stdin.write_all(b"Q");
            d.kill();
        }
    }
}

/// `ASAN_OPTIONS` for the driver: the user's, then what cargo-fuzz adds,
/// then what the driver needs: no leak check at exit (a child that exits
/// between inputs is not a leak report); no in-process symbolization
/// (reports are symbolized here, once per address, instead of starting
/// `llvm-symbolizer` in every crashing child); and a plainer report (no
/// colours, no shadow-byte legend), which changes nothing this tool reads
/// and saves about a millisecond per crash.
fn asan_options() -> String {
    let ours = "detect_odr_violation=0:detect_leaks=0:symbolize=0:color=never:print_legend=0";
    match std::env::var("ASAN_OPTIONS") {
        Ok(user) if !user.is_empty() => format!("{user}:{ours}"),
        _ => ours.to_owned(),
    }
}

impl Driver {
    fn spawn(config: &ExecConfig) -> Result<(Driver, bool), ExecError> {
        let mut cmd = Command::new(&config.program);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("RC_DRIVER", "1")
            .env("RC_RSS_LIMIT_MB", config.rss_limit_mb.to_string())
            .env("RC_MALLOC_LIMIT_MB", config.malloc_limit_mb.to_string())
            .env("RC_FORK_SERVER", if config.fork_server { "1" } else { "0" })
            .env(
                "RC_COMPARES",
                if config.faithful_compares { "1" } else { "0" },
            )
            .env("RUST_BACKTRACE", "0")
            .env("ASAN_OPTIONS", asan_options())
            // Own process group: Ctrl-C in the terminal must reach us, not the driver.
            .process_group(0);
        unsafe {
            cmd.pre_exec(|| {
                // A crashing driver must not write core dumps thousands of times.
                let no_core = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &no_core);
                // No address-space randomization: the kernel otherwise starts
                // the stack up to 8 KiB lower at random, so how deep a
                // recursion may go before the stack overflows would change
                // from run to run. Without it the driver has the most stack
                // any run of the real binary has (the main thread's stack is
                // libFuzzer's, `RLIMIT_STACK`), so a stack overflow reduced
                // here overflows there too, every time.
                let persona = libc::personality(0xffff_ffff);
                if persona != -1 {
                    libc::personality((persona | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong);
                }
                // And a little more than that: `cargo fuzz run` runs the real
                // binary with another environment and another path from
                // `main` to the target, which may leave it a few KiB more.
                let mut stack = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                if libc::getrlimit(libc::RLIMIT_STACK, &mut stack) == 0
                    && stack.rlim_cur != libc::RLIM_INFINITY
                {
                    let more = stack.rlim_cur.saturating_add(STACK_MARGIN);
                    stack.rlim_cur = if stack.rlim_max == libc::RLIM_INFINITY {
                        more
                    } else {
                        more.min(stack.rlim_max)
                    };
                    libc::setrlimit(libc::RLIMIT_STACK, &stack);
                }
                Ok(())
            });
        }
        // A second Ctrl-C waits until the new driver's group is known.
        let starting = crate::interrupt::hold();
        let mut child = cmd.spawn().map_err(|source| ExecError::Spawn {
            path: config.program.clone(),
            source,
        })?;
        let group = crate::interrupt::Group::register(child.id() as i32);
        drop(starting);
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        let stderr = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
        let tail = Arc::clone(&stderr);
        let stderr_thread = std::thread::spawn(move || drain_stderr(stderr_pipe, tail));
        let mut driver = Driver {
            child,
            stdin,
            reader: FrameReader::new(set_nonblocking(stdout)),
            stderr,
            stderr_thread: Some(stderr_thread),
            runner: 0,
            fork_server: false,
            group,
        };
        let fail = |driver: &mut Driver, detail: String| {
            driver.kill();
            let tail = driver.stderr_tail();
            let detail = if tail.trim().is_empty() {
                detail
            } else {
                format!("{detail}; its stderr ends with: {}", last_lines(&tail, 5))
            };
            ExecError::Startup {
                path: config.program.clone(),
                detail,
            }
        };
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        let magic = match driver.reader.read_exact(6, deadline) {
            Ok(m) => m,
            Err(e) => return Err(fail(&mut driver, format!("no greeting ({e:?})"))),
        };
        if &magic[..4] != b"RCD5" {
            return Err(fail(&mut driver, "unexpected greeting".into()));
        }
        let typed = magic[4] != 0;
        if magic[5] == 0 {
            let message = driver.reader.read_string(deadline).unwrap_or_default();
            let location = driver.reader.read_string(deadline).unwrap_or_default();
            driver.kill();
            return Err(ExecError::InitPanicked(Signature::panic(message, location)));
        }
        match driver.reader.read_exact(5, deadline) {
            Ok(rest) => {
                driver.fork_server = rest[0] != 0;
                driver.runner = u32::from_le_bytes(rest[1..5].try_into().expect("4 bytes"));
            }
            Err(e) => return Err(fail(&mut driver, format!("incomplete greeting ({e:?})"))),
        }
        Ok((driver, typed))
    }

    /// An `R` or `V` request: each input as the bytes by which it differs
    /// from the one before it (see [`encode_batch`]).
    fn send_batch(&mut self, request: u8, inputs: &[&[u8]]) -> io::Result<()> {
        self.stdin.write_all(&encode_batch(request, inputs))
    }

    /// `C`, `D` or `S` for one input.
    fn send_request(&mut self, request: u8, input: &[u8]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(5 + input.len());
        buf.push(request);
        buf.extend_from_slice(&(input.len() as u32).to_le_bytes());
        buf.extend_from_slice(input);
        self.stdin.write_all(&buf)
    }

    fn send_fatal_keys(&mut self, keys: &[u64]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(5 + 8 * keys.len());
        buf.push(b'F');
        buf.extend_from_slice(&(keys.len() as u32).to_le_bytes());
        for k in keys {
            buf.extend_from_slice(&k.to_le_bytes());
        }
        self.stdin.write_all(&buf)
    }

    /// Kills the fork server's current child (its death is reported).
    fn kill_runner(&mut self) {
        if self.runner != 0 {
            unsafe {
                libc::kill(self.runner as libc::pid_t, libc::SIGKILL);
            }
        }
    }

    fn kill(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        unsafe {
            // The whole group: the target may have started children.
            libc::kill(-pid, libc::SIGKILL);
        }
        let _ = self.child.kill();
        if self.child.wait().is_ok() {
            self.group.release();
        }
        if let Some(t) = self.stderr_thread.take() {
            let _ = t.join();
        }
    }

    /// Called once the protocol pipe closed, i.e. the driver is exiting and
    /// its status is decided: clear out anything it started, then reap it.
    fn wait_for_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        unsafe {
            // Not reaped yet, so the group id cannot have been reused.
            libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL);
        }
        let deadline = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(st)) => {
                    self.group.release();
                    if let Some(t) = self.stderr_thread.take() {
                        let _ = t.join();
                    }
                    return Some(st);
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_micros(200))
                }
                _ => {
                    self.kill();
                    return None;
                }
            }
        }
    }

    fn stderr_tail(&self) -> String {
        let tail = self
            .stderr
            .lock()
            .map(|t| t.iter().copied().collect::<Vec<u8>>());
        String::from_utf8_lossy(&tail.unwrap_or_default()).into_owned()
    }
}

/// A batch request as the driver reads it: `request`, the count, then each
/// input as (u32 prefix, u32 suffix, u32 length, bytes): the first `prefix`
/// bytes of the input before it, these bytes, and its last `suffix` bytes.
/// A reducer's candidates in a batch mostly differ from each other in a few
/// bytes (one chunk left out, one byte replaced), so 128 candidates of
/// 50 KB cost the pipe and the driver about one input's worth of bytes, not
/// 6 MB.
fn encode_batch(request: u8, inputs: &[&[u8]]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(5 + 12 * inputs.len() + inputs.first().map_or(0, |i| i.len()));
    buf.push(request);
    buf.extend_from_slice(&(inputs.len() as u32).to_le_bytes());
    let mut prev: &[u8] = &[];
    for &input in inputs {
        let prefix = common_prefix(prev, input);
        let suffix = common_suffix(&prev[prefix..], &input[prefix..]);
        let middle = &input[prefix..input.len() - suffix];
        buf.extend_from_slice(&(prefix as u32).to_le_bytes());
        buf.extend_from_slice(&(suffix as u32).to_le_bytes());
        buf.extend_from_slice(&(middle.len() as u32).to_le_bytes());
        buf.extend_from_slice(middle);
        prev = input;
    }
    buf
}

/// Length of the longest common prefix of `a` and `b`.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    // Long runs a page at a time (one `memcmp` call each), then the block
    // that differs 32 bytes at a time (compared inline), then bytes.
    while i + 4096 <= n && a[i..i + 4096] == b[i..i + 4096] {
        i += 4096;
    }
    while i + 32 <= n && block(a, i) == block(b, i) {
        i += 32;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// The 32 bytes of `s` from `at` on, as an array (compared inline, without
/// a call).
fn block(s: &[u8], at: usize) -> &[u8; 32] {
    s[at..at + 32].try_into().expect("32 bytes")
}

/// Length of the longest common suffix of `a` and `b`.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    // `i` bytes at the end are equal; the next ones end at `n - i`.
    let mut i = 0;
    while i + 4096 <= n && a[n - i - 4096..n - i] == b[n - i - 4096..n - i] {
        i += 4096;
    }
    while i + 32 <= n && block(a, n - i - 32) == block(b, n - i - 32) {
        i += 32;
    }
    while i < n && a[n - i - 1] == b[n - i - 1] {
        i += 1;
    }
    i
}

/// Feeds `data` to the decoder of the driver's answers as if the driver had
/// sent it, reading frames of the kinds the first byte selects (two bits per
/// frame: a run's answer, a probe's, a `Debug` form, a coverage answer) until
/// the bytes run out or stop making sense; returns how many frames decoded.
/// For `fuzz/fuzz_targets/protocol.rs`: whatever the bytes, decoding must
/// end without panicking or allocating without bound.
#[doc(hidden)]
pub fn fuzz_decode(data: &[u8]) -> usize {
    let Some((&selector, stream)) = data.split_first() else {
        return 0;
    };
    let mut reader = FrameReader {
        source: Source::Memory {
            bytes: stream.to_vec(),
            at: 0,
        },
        buf: Vec::new(),
        pos: 0,
        announced: None,
    };
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut frames = 0;
    for i in 0.. {
        let ok = match (selector >> (2 * (i % 4))) & 3 {
            0 => reader.read_frame(deadline).is_ok(),
            1 => reader.read_spans(deadline).is_ok(),
            2 => reader.read_debug(deadline).is_ok(),
            _ => reader.read_frame(deadline).is_ok() && reader.read_features(deadline).is_ok(),
        };
        if !ok {
            break;
        }
        frames += 1;
    }
    frames
}

fn set_nonblocking(pipe: ChildStdout) -> ChildStdout {
    let fd = pipe.as_raw_fd();
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    pipe
}

fn last_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

fn drain_stderr(mut pipe: impl Read, tail: Arc<Mutex<VecDeque<u8>>>) {
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf) {
            // A signal landed on this thread (handlers run without SA_RESTART).
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if let Ok(mut t) = tail.lock() {
                    t.extend(&buf[..n]);
                    let excess = t.len().saturating_sub(STDERR_TAIL);
                    t.drain(..excess);
                }
            }
        }
    }
}

/// Reads the answer to a probe (`S`, `D`), or the death of its process.
type ReadAnswer<T> = fn(&mut FrameReader, Instant) -> Result<Result<T, Death>, ReadError>;

/// One answer from the driver.
enum Frame {
    /// The next input to run decodes to this value key (`V` batches).
    Key(u64),
    Done {
        outcome: Outcome,
        elapsed: Duration,
        cached: bool,
    },
    /// The input panicked (its signature needs the executor's symbolizer
    /// to place a panic raised inside std at its caller:
    /// [`RawPanic::signature`]).
    Panicked {
        panic: RawPanic,
        elapsed: Duration,
        cached: bool,
    },
    /// The input decodes to a value known to kill the driver.
    KnownFatal(u64),
    /// The fork server's child died.
    Death(Death),
}

#[derive(Debug)]
enum ReadError {
    Timeout,
    Closed,
}

/// What came back after the hang signal.
enum HangStack {
    Stack(Vec<u64>),
    /// Nothing within the wait: the pipe is still in step.
    NoAnswer,
    /// Something else, or part of it: only a new driver is in step.
    OutOfStep,
}

/// The frame carrying a hang's stack (`stack.rs` in the shim).
const HANG_FRAME: u8 = b'h';

/// At most this many stack offsets come in one frame.
const MAX_STACK: usize = 64;

/// How long the driver's hang handler has to answer.
const HANG_STACK_WAIT: Duration = Duration::from_millis(500);

/// A run is screened as a hang once it has run this many times as long as
/// the slowest run that finished ([`ExecConfig::screen_hangs`]).
pub const SCREEN_FACTOR: u32 = 10;

/// Stacks sampled from a hang by default, and the time between two: over
/// about 0.2 s, so that a function the hanging loop calls and returns from
/// is rarely on every sample.
const HANG_SAMPLES: usize = 12;
const HANG_SAMPLE_GAP: Duration = Duration::from_millis(15);

/// Buffered reads from the driver's protocol pipe with a deadline.
struct FrameReader {
    source: Source,
    buf: Vec<u8>,
    pos: usize,
    /// The first panic of the input running now, as the driver's panic hook
    /// announced it (`p` frame): what the input's death is, if it dies.
    announced: Option<RawPanic>,
}

/// Where the frames come from.
enum Source {
    /// The driver's protocol pipe (non-blocking).
    Pipe(ChildStdout),
    /// Bytes in memory (for fuzzing the decoder: [`fuzz_decode`]).
    Memory { bytes: Vec<u8>, at: usize },
}

impl FrameReader {
    fn new(pipe: ChildStdout) -> Self {
        FrameReader {
            source: Source::Pipe(pipe),
            buf: Vec::with_capacity(1 << 16),
            pos: 0,
            announced: None,
        }
    }

    /// Reads more bytes. The pipe is non-blocking: spin for a few
    /// microseconds first (the driver usually answers that fast), then wait
    /// in `poll` until the deadline.
    fn fill(&mut self, deadline: Instant) -> Result<(), ReadError> {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        let fd = match &mut self.source {
            Source::Pipe(pipe) => pipe.as_raw_fd(),
            Source::Memory { bytes, at } => {
                let n = (bytes.len() - *at).min(1 << 16);
                if n == 0 {
                    return Err(ReadError::Closed);
                }
                self.buf.extend_from_slice(&bytes[*at..*at + n]);
                *at += n;
                return Ok(());
            }
        };
        let old = self.buf.len();
        self.buf.resize(old + (1 << 16), 0);
        let spin_until = Instant::now() + SPIN;
        let result = loop {
            let n = unsafe { libc::read(fd, self.buf[old..].as_mut_ptr().cast(), 1 << 16) };
            if n > 0 {
                break Ok(n as usize);
            }
            if n == 0 {
                break Err(ReadError::Closed);
            }
            match io::Error::last_os_error().kind() {
                io::ErrorKind::WouldBlock => {}
                io::ErrorKind::Interrupted => continue,
                _ => break Err(ReadError::Closed),
            }
            let now = Instant::now();
            if now >= deadline {
                break Err(ReadError::Timeout);
            }
            if now < spin_until {
                // Yield rather than burn: under load the driver needs this core.
                unsafe { libc::sched_yield() };
                continue;
            }
            let ms = (deadline - now).as_millis().clamp(1, i32::MAX as u128) as i32;
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            if unsafe { libc::poll(&mut pfd, 1, ms) } == 0 && Instant::now() >= deadline {
                break Err(ReadError::Timeout);
            }
        };
        self.buf.truncate(old + *result.as_ref().unwrap_or(&0));
        result.map(|_| ())
    }

    fn read_exact(&mut self, n: usize, deadline: Instant) -> Result<Vec<u8>, ReadError> {
        while self.buf.len() - self.pos < n {
            self.fill(deadline)?;
        }
        let out = self.buf[self.pos..self.pos + n].to_vec();
        self.pos += n;
        Ok(out)
    }

    fn read_u8(&mut self, deadline: Instant) -> Result<u8, ReadError> {
        Ok(self.read_exact(1, deadline)?[0])
    }

    fn read_u32(&mut self, deadline: Instant) -> Result<u32, ReadError> {
        let b = self.read_exact(4, deadline)?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    fn read_u64(&mut self, deadline: Instant) -> Result<u64, ReadError> {
        let b = self.read_exact(8, deadline)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    fn read_string(&mut self, deadline: Instant) -> Result<String, ReadError> {
        let len = self.read_u32(deadline)? as usize;
        let b = self.read_exact(len, deadline)?;
        Ok(String::from_utf8_lossy(&b).into_owned())
    }

    /// The rest of a death frame (after its `X`). The server sends it right
    /// after the child died, so a generous deadline is fine.
    fn read_death(&mut self) -> Result<Death, ReadError> {
        let deadline = Instant::now() + KILL_GRACE;
        let status = i32::from_le_bytes(self.read_exact(4, deadline)?.try_into().expect("4"));
        let phase = match self.read_u8(deadline)? {
            0 => Phase::Idle,
            1 => Phase::Busy,
            _ => Phase::Reading,
        };
        let printed = self.read_string(deadline)?;
        let next = self.read_u32(deadline)?;
        Ok(Death {
            status: ExitStatus::from_raw(status),
            phase,
            printed,
            next,
        })
    }

    /// A panic's fields: message, location, stack offsets.
    fn read_panic(&mut self, deadline: Instant) -> Result<RawPanic, ReadError> {
        let message = self.read_string(deadline)?;
        let location = self.read_string(deadline)?;
        let stack = self.read_offsets(deadline)?;
        Ok(RawPanic {
            message,
            location,
            stack,
        })
    }

    /// u32 count, count × u64 (at most [`MAX_STACK`]).
    fn read_offsets(&mut self, deadline: Instant) -> Result<Vec<u64>, ReadError> {
        let count = self.read_u32(deadline)? as usize;
        if count > MAX_STACK {
            return Err(ReadError::Closed);
        }
        let bytes = self.read_exact(8 * count, deadline)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect())
    }

    /// After the hang signal: the stack the driver's handler sends (`h`),
    /// reading a panic announced meanwhile.
    fn read_hang_stack(&mut self, deadline: Instant) -> HangStack {
        loop {
            match self.read_u8(deadline) {
                Ok(b'p') => match self.read_panic(deadline) {
                    Ok(p) => self.announced = Some(p),
                    Err(_) => return HangStack::OutOfStep,
                },
                Ok(HANG_FRAME) => {
                    return match self.read_offsets(deadline) {
                        Ok(stack) => HangStack::Stack(stack),
                        Err(_) => HangStack::OutOfStep,
                    }
                }
                Ok(_) => return HangStack::OutOfStep,
                Err(ReadError::Timeout) => return HangStack::NoAnswer,
                Err(ReadError::Closed) => return HangStack::OutOfStep,
            }
        }
    }

    fn read_frame(&mut self, deadline: Instant) -> Result<Frame, ReadError> {
        let mut first = self.read_u8(deadline)?;
        loop {
            match first {
                b'p' => self.announced = Some(self.read_panic(deadline)?),
                // A hang's stack that came after the parent stopped waiting.
                HANG_FRAME => drop(self.read_offsets(deadline)?),
                _ => break,
            }
            first = self.read_u8(deadline)?;
        }
        match first {
            b'k' => return Ok(Frame::Key(self.read_u64(deadline)?)),
            b'X' => return Ok(Frame::Death(self.read_death()?)),
            _ => self.announced = None,
        }
        let cached = first & 0x80 != 0;
        let status = first & 0x7f;
        let elapsed = Duration::from_nanos(self.read_u64(deadline)?);
        let outcome = match status {
            0 => Outcome::Pass,
            1 => Outcome::Reject,
            2 => {
                return Ok(Frame::Panicked {
                    panic: self.read_panic(deadline)?,
                    elapsed,
                    cached,
                })
            }
            4 => return Ok(Frame::KnownFatal(self.read_u64(deadline)?)),
            _ => return Err(ReadError::Closed),
        };
        Ok(Frame::Done {
            outcome,
            elapsed,
            cached,
        })
    }

    /// The feature list after a `C` answer's outcome frame; `None` when
    /// the driver has no coverage counters.
    fn read_features(&mut self, deadline: Instant) -> Result<Option<Vec<u32>>, ReadError> {
        let count = self.read_u32(deadline)?;
        if count == u32::MAX {
            return Ok(None);
        }
        let bytes = self.read_exact(count as usize * 4, deadline)?;
        Ok(Some(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect(),
        ))
    }

    /// The answer to `S`, or the death of the child that was probing.
    fn read_spans(&mut self, deadline: Instant) -> Result<Result<Vec<Span>, Death>, ReadError> {
        match self.read_u8(deadline)? {
            b's' => {}
            b'X' => return Ok(Err(self.read_death()?)),
            _ => return Err(ReadError::Closed),
        }
        let count = self.read_u32(deadline)? as usize;
        // The count is the driver's word, not a promise: a garbled one must
        // not reserve gigabytes before the spans fail to arrive.
        let mut spans = Vec::with_capacity(count.min(1 << 12));
        for _ in 0..count {
            let start = self.read_u32(deadline)? as usize;
            let end = self.read_u32(deadline)? as usize;
            let kind = match self.read_u8(deadline)? {
                0 => SpanKind::Leaf,
                1 => SpanKind::Structural,
                _ => SpanKind::Unused,
            };
            spans.push(Span { start, end, kind });
        }
        Ok(Ok(spans))
    }

    /// The answer to `P`: every counter's code offset.
    fn read_pcs(&mut self, deadline: Instant) -> Result<Result<Vec<u64>, Death>, ReadError> {
        match self.read_u8(deadline)? {
            b'c' => {}
            b'X' => return Ok(Err(self.read_death()?)),
            _ => return Err(ReadError::Closed),
        }
        let count = self.read_u32(deadline)? as usize;
        let mut pcs = Vec::with_capacity(count.min(1 << 20));
        for _ in 0..count {
            pcs.push(self.read_u64(deadline)?);
        }
        Ok(Ok(pcs))
    }

    /// The answer to `D`, or the death of the child that was formatting.
    fn read_debug(&mut self, deadline: Instant) -> Result<Result<String, Death>, ReadError> {
        match self.read_u8(deadline)? {
            b'd' => Ok(Ok(self.read_string(deadline)?)),
            b'X' => Ok(Err(self.read_death()?)),
            _ => Err(ReadError::Closed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reads a batch request as the driver does (`read_input` in the
    /// shim's `serve.rs`).
    fn decode_batch(buf: &[u8]) -> (u8, Vec<Vec<u8>>) {
        let u32_at = |at: usize| u32::from_le_bytes(buf[at..at + 4].try_into().unwrap()) as usize;
        let count = u32_at(1);
        let mut at = 5;
        let mut inputs: Vec<Vec<u8>> = Vec::new();
        for _ in 0..count {
            let (prefix, suffix, len) = (u32_at(at), u32_at(at + 4), u32_at(at + 8));
            at += 12;
            let prev = inputs.last().map_or(&[][..], Vec::as_slice);
            assert!(prefix + suffix <= prev.len());
            let mut input = prev[..prefix].to_vec();
            input.extend_from_slice(&buf[at..at + len]);
            input.extend_from_slice(&prev[prev.len() - suffix..]);
            at += len;
            inputs.push(input);
        }
        assert_eq!(at, buf.len());
        (buf[0], inputs)
    }

    #[test]
    fn a_batch_sends_what_changed_from_one_input_to_the_next() {
        let base: Vec<u8> = (0..50_000u32).map(|i| (i * 7 % 251) as u8).collect();
        // ddmin's complements: the input without one 400-byte chunk each.
        let complements: Vec<Vec<u8>> = (0..100)
            .map(|i| [&base[..i * 400], &base[(i + 1) * 400..]].concat())
            .collect();
        let refs: Vec<&[u8]> = complements.iter().map(Vec::as_slice).collect();
        let buf = encode_batch(b'R', &refs);
        assert_eq!(decode_batch(&buf), (b'R', complements.clone()));
        // One whole input, then one chunk (the one put back) per input.
        assert_eq!(buf.len(), 5 + 100 * 12 + 49_600 + 99 * 400);
    }

    proptest! {
        #[test]
        fn batches_decode_to_their_inputs(
            base in prop::collection::vec(0u8..3, 0..300),
            edits in prop::collection::vec(
                (0usize..300, 0usize..300, prop::collection::vec(0u8..3, 0..70)),
                0..8,
            ),
        ) {
            // Each input is the base with a range replaced (deleted, grown).
            let inputs: Vec<Vec<u8>> = edits
                .iter()
                .map(|(a, b, with)| {
                    let (lo, hi) = ((*a).min(*b).min(base.len()), (*a).max(*b).min(base.len()));
                    [&base[..lo], with.as_slice(), &base[hi..]].concat()
                })
                .collect();
            let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(decode_batch(&encode_batch(b'V', &refs)), (b'V', inputs.clone()));
        }
    }

    #[test]
    fn the_decoder_reads_well_formed_answers_and_stops_at_garbage() {
        // A pass, a panic ("boom" at "a:1:2"), then a death report.
        let mut stream = vec![0u8];
        stream.extend_from_slice(&7u64.to_le_bytes());
        stream.push(2);
        stream.extend_from_slice(&9u64.to_le_bytes());
        for s in ["boom", "a:1:2"] {
            stream.extend_from_slice(&(s.len() as u32).to_le_bytes());
            stream.extend_from_slice(s.as_bytes());
        }
        // Its stack: two offsets (a panic raised inside std).
        stream.extend_from_slice(&2u32.to_le_bytes());
        stream.extend_from_slice(&0x10u64.to_le_bytes());
        stream.extend_from_slice(&0x20u64.to_le_bytes());
        stream.push(b'X');
        stream.extend_from_slice(&(6i32).to_le_bytes());
        stream.push(1);
        stream.extend_from_slice(&3u32.to_le_bytes());
        stream.extend_from_slice(b"out");
        stream.extend_from_slice(&42u32.to_le_bytes());
        let mut data = vec![0u8]; // every frame read as a run's answer
        data.extend_from_slice(&stream);
        assert_eq!(fuzz_decode(&data), 3);
        // Truncated anywhere: fewer frames, never a panic.
        for cut in 0..data.len() {
            assert!(fuzz_decode(&data[..cut]) <= 3);
        }
        // A huge length field with nothing behind it ends the stream.
        let mut huge = vec![0b10u8, b'd'];
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(fuzz_decode(&huge), 0);
        // fuzz/protocol's first find: a span count of 0x60a40400 reserved
        // 38 GB up front ("memory allocation ... failed", abort).
        assert_eq!(fuzz_decode(&[0xc9, b's', 0x00, 0x04, 0xa4, 0x60]), 0);
        // A stack longer than any driver sends ends the stream.
        let mut long = vec![0u8, 2];
        long.extend_from_slice(&0u64.to_le_bytes());
        long.extend_from_slice(&[0; 8]);
        long.extend_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(fuzz_decode(&long), 0);
    }
}
