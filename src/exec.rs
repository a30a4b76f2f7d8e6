//! Runs inputs through a long-lived driver process and classifies outcomes.
//!
//! The driver (generated from `templates/driver/`) hosts the fuzz target and
//! runs many inputs per process, catching panics in-process. What it cannot
//! survive (abort, stack overflow, fatal signals, the memory limit, a hang)
//! kills it: the executor notices, classifies the death from the exit status
//! and the driver's stderr, starts a fresh driver, and carries on.
//!
//! The wire protocol is documented in `templates/driver/shim/src/__driver.rs`.
//! This module knows nothing about reduction.

use crate::oracle::{Span, SpanKind};
use crate::outcome::{CrashKind, Outcome, Signature};
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

#[derive(Debug, Clone)]
pub struct ExecConfig {
    /// The built driver binary.
    pub program: PathBuf,
    /// Per-input time limit.
    pub timeout: Duration,
    /// Live heap limit in MiB (libFuzzer's `-rss_limit_mb`); 0 = none.
    pub rss_limit_mb: u64,
    /// Largest single allocation in MiB (`-malloc_limit_mb`); 0 = same as rss.
    pub malloc_limit_mb: u64,
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
    pub restarts: u64,
}

/// Owns the driver process.
pub struct Executor {
    config: ExecConfig,
    driver: Option<Driver>,
    typed: bool,
    starts: u64,
    stats: ExecStats,
    /// Use value-level caching for typed targets (`V` batches).
    value_cache: bool,
    /// Values known to kill the driver, and how.
    fatal_values: HashMap<u64, Signature>,
}

struct Driver {
    child: Child,
    stdin: ChildStdin,
    reader: FrameReader,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    stderr_thread: Option<JoinHandle<()>>,
}

impl Executor {
    /// Starts the driver once to check that it works.
    pub fn new(config: ExecConfig) -> Result<Self, ExecError> {
        let mut exec = Executor {
            config,
            driver: None,
            typed: false,
            starts: 0,
            stats: ExecStats::default(),
            value_cache: false,
            fatal_values: HashMap::new(),
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

    /// Answer inputs of typed targets that decode to an already-run value
    /// from the cache instead of running them. Off by default: reproducing
    /// an artifact must run it every time.
    pub fn set_value_cache(&mut self, on: bool) {
        self.value_cache = on && self.typed;
    }

    /// Stops the current driver; the next input starts a fresh one.
    pub fn restart(&mut self) {
        self.kill_driver();
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
        let mut runs = Vec::with_capacity(inputs.len());
        if inputs.is_empty() {
            return Ok(runs);
        }
        let request = if self.value_cache { b'V' } else { b'R' };
        self.ensure_driver()?;
        if self.driver_mut().send_batch(request, inputs).is_err() {
            // The driver died between batches; restart it and retry once.
            self.kill_driver();
            self.ensure_driver()?;
            self.driver_mut()
                .send_batch(request, inputs)
                .map_err(|e| ExecError::Startup {
                    path: self.config.program.clone(),
                    detail: format!("cannot send inputs: {e}"),
                })?;
        }
        let timeout = self.config.timeout;
        let mut running_key: Option<u64> = None;
        while runs.len() < inputs.len() {
            let deadline = Instant::now() + timeout;
            let response = self.driver_mut().reader.read_response(deadline);
            if let Ok(Response::Key(k)) = response {
                running_key = Some(k);
                continue;
            }
            let run = self.settle(response, running_key.take())?;
            let crashed = matches!(run.outcome, Outcome::Crash(_));
            runs.push(run);
            if crashed {
                break;
            }
        }
        // A crash ends the batch inside the driver; nothing else is pending.
        Ok(runs)
    }

    /// Turns the driver's answer for one input into a [`Run`]: a death
    /// (timeout, out-of-memory, a closed pipe) is classified, the driver is
    /// dropped, and a value known to cause it is remembered.
    fn settle(
        &mut self,
        response: Result<Response, ReadError>,
        running_key: Option<u64>,
    ) -> Result<Run, ExecError> {
        let timeout = self.config.timeout;
        let (outcome, elapsed, cached, fatal) = match response {
            Ok(Response::Key(_)) => unreachable!("keys are consumed by the caller"),
            Ok(Response::Done {
                outcome,
                elapsed,
                cached,
            }) => (outcome, elapsed, cached, false),
            Ok(Response::KnownFatal(k)) => match self.fatal_values.get(&k) {
                Some(sig) => (Outcome::Crash(sig.clone()), Duration::ZERO, true, false),
                None => {
                    // Cannot happen (the parent told the driver); be safe.
                    self.kill_driver();
                    return Err(ExecError::Startup {
                        path: self.config.program.clone(),
                        detail: "the driver reported an unknown fatal value".into(),
                    });
                }
            },
            Ok(Response::OutOfMemory { requested, live }) => {
                let mut sig = Signature::new(CrashKind::OutOfMemory);
                sig.message = Some(format!(
                    "allocation of {requested} bytes with {live} bytes live exceeds the limit"
                ));
                (Outcome::Crash(sig), Duration::ZERO, false, true)
            }
            Err(ReadError::Timeout) => (
                Outcome::Crash(Signature::new(CrashKind::Timeout)),
                timeout,
                false,
                true,
            ),
            Err(ReadError::Closed) => {
                let sig = self.reap_dead_driver();
                (Outcome::Crash(sig), Duration::ZERO, false, true)
            }
        };
        if fatal {
            self.kill_driver();
            if let (Some(k), Outcome::Crash(sig)) = (running_key, &outcome) {
                self.fatal_values.insert(k, sig.clone());
            }
        }
        if cached {
            self.stats.value_cache_hits += 1;
        } else {
            self.stats.executions += 1;
        }
        Ok(Run {
            outcome,
            elapsed,
            cached,
        })
    }

    /// Runs one input on a coverage build ([`BuildOptions::coverage`]) and
    /// returns its outcome with its coverage features (sorted, as libFuzzer
    /// counts them from 8-bit counters). Features are `None` when the input
    /// killed the driver, or [`ExecError::NoCoverage`] when the driver was
    /// built without coverage.
    ///
    /// [`BuildOptions::coverage`]: crate::driver::BuildOptions::coverage
    pub fn run_coverage(&mut self, input: &[u8]) -> Result<(Run, Option<Vec<u32>>), ExecError> {
        self.ensure_driver()?;
        if self.driver_mut().send_request(b'C', input).is_err() {
            self.kill_driver();
            self.ensure_driver()?;
            self.driver_mut()
                .send_request(b'C', input)
                .map_err(|e| ExecError::Startup {
                    path: self.config.program.clone(),
                    detail: format!("cannot send an input: {e}"),
                })?;
        }
        let deadline = Instant::now() + self.config.timeout;
        let response = self.driver_mut().reader.read_response(deadline);
        let completed = matches!(response, Ok(Response::Done { .. }));
        let run = self.settle(response, None)?;
        if !completed {
            return Ok((run, None));
        }
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
        let driver = self.driver_mut();
        if driver.send_request(b'S', input).is_err() {
            self.kill_driver();
            return Ok(None);
        }
        match driver.reader.read_spans(deadline) {
            Ok(spans) => Ok(Some(spans)),
            Err(_) => {
                // Decoding itself hung or crashed; no structure this time.
                self.kill_driver();
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
        let driver = self.driver.as_mut().expect("driver started");
        if driver.send_request(b'D', input).is_err() {
            self.kill_driver();
            return Ok(None);
        }
        match driver.reader.read_string(Instant::now() + timeout) {
            Ok(s) => Ok(Some(s)),
            Err(_) => {
                self.kill_driver();
                Ok(None)
            }
        }
    }

    fn ensure_driver(&mut self) -> Result<(), ExecError> {
        if self.driver.is_some() {
            return Ok(());
        }
        let (mut driver, typed) = Driver::spawn(&self.config)?;
        self.starts += 1;
        self.stats.restarts = self.starts - 1;
        self.typed = typed;
        if !self.fatal_values.is_empty() {
            let keys: Vec<u64> = self.fatal_values.keys().copied().collect();
            // A failure here shows up as a dead driver on the next batch.
            let _ = driver.send_fatal_keys(&keys);
        }
        self.driver = Some(driver);
        Ok(())
    }

    fn kill_driver(&mut self) {
        if let Some(mut d) = self.driver.take() {
            d.kill();
        }
    }

    /// The driver closed its pipe mid-input: wait for it and say why it died.
    fn reap_dead_driver(&mut self) -> Signature {
        let mut d = self.driver.take().expect("driver running");
        let status = d.wait_for_exit(Duration::from_secs(5));
        let stderr = d.stderr_tail();
        classify_death(status, &stderr)
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

/// Classifies a driver that died while running an input.
pub fn classify_death(status: Option<ExitStatus>, stderr: &str) -> Signature {
    if let Some(sig) = sanitizer_report(stderr) {
        return sig;
    }
    if stderr.contains("has overflowed its stack") {
        return Signature::new(CrashKind::StackOverflow);
    }
    if let Some(line) = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("memory allocation of "))
    {
        let mut sig = Signature::new(CrashKind::OutOfMemory);
        sig.message = Some(line.trim().to_owned());
        return sig;
    }
    match status {
        Some(st) => match (st.signal(), st.code()) {
            (Some(libc::SIGABRT), _) => Signature::new(CrashKind::Abort),
            (Some(sig), _) => Signature::new(CrashKind::Signal(sig)),
            (None, Some(code)) => Signature::new(CrashKind::Exit(code)),
            (None, None) => Signature::new(CrashKind::Abort),
        },
        None => Signature::new(CrashKind::Abort),
    }
}

/// Reads a sanitizer's `SUMMARY:` line, e.g.
/// `SUMMARY: AddressSanitizer: heap-buffer-overflow src/lib.rs:10:5 in f`.
/// Without a symbolizer the location is a `(binary+0xoffset)`, which is still
/// stable for one build.
fn sanitizer_report(stderr: &str) -> Option<Signature> {
    let line = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("SUMMARY: ") && l.contains("Sanitizer: "))?;
    let (sanitizer, rest) = line.strip_prefix("SUMMARY: ")?.split_once(": ")?;
    let mut words = rest.split_whitespace();
    let error = words.next()?;
    let location = words.next().filter(|w| *w != "in").map(str::to_owned);
    Some(Signature {
        kind: CrashKind::Sanitizer,
        message: Some(format!("{sanitizer}: {error}")),
        location,
    })
}

impl Driver {
    fn spawn(config: &ExecConfig) -> Result<(Driver, bool), ExecError> {
        let rss = config.rss_limit_mb;
        let malloc = if config.malloc_limit_mb == 0 {
            rss
        } else {
            config.malloc_limit_mb
        };
        let mut cmd = Command::new(&config.program);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("RC_RSS_LIMIT_MB", rss.to_string())
            .env("RC_MALLOC_LIMIT_MB", malloc.to_string())
            .env("RUST_BACKTRACE", "0")
            // As cargo-fuzz: no ODR or leak reports from the driver itself
            // (leaks are checked at exit, long after the input that leaked).
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
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|source| ExecError::Spawn {
            path: config.program.clone(),
            source,
        })?;
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
        if &magic[..4] != b"RCD1" {
            return Err(fail(&mut driver, "unexpected greeting".into()));
        }
        let typed = magic[4] != 0;
        if magic[5] == 0 {
            let message = driver.reader.read_string(deadline).unwrap_or_default();
            let location = driver.reader.read_string(deadline).unwrap_or_default();
            driver.kill();
            return Err(ExecError::InitPanicked(Signature::panic(message, location)));
        }
        Ok((driver, typed))
    }

    fn send_batch(&mut self, request: u8, inputs: &[&[u8]]) -> io::Result<()> {
        let total: usize = inputs.iter().map(|i| i.len() + 4).sum();
        let mut buf = Vec::with_capacity(5 + total);
        buf.push(request);
        buf.extend_from_slice(&(inputs.len() as u32).to_le_bytes());
        for input in inputs {
            buf.extend_from_slice(&(input.len() as u32).to_le_bytes());
            buf.extend_from_slice(input);
        }
        self.stdin.write_all(&buf)
    }

    /// `D` (debug form) or `S` (spans) for one input.
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

    fn kill(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        unsafe {
            // The whole group: the target may have started children.
            libc::kill(-pid, libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
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

/// Our sanitizer defaults, then the user's `ASAN_OPTIONS` (later wins).
fn asan_options() -> String {
    let ours = "detect_leaks=0:detect_odr_violation=0";
    match std::env::var("ASAN_OPTIONS") {
        Ok(user) if !user.is_empty() => format!("{ours}:{user}"),
        _ => ours.to_owned(),
    }
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

enum Response {
    /// The next input to run decodes to this value key (`V` batches).
    Key(u64),
    Done {
        outcome: Outcome,
        elapsed: Duration,
        cached: bool,
    },
    /// The input decodes to a value known to kill the driver.
    KnownFatal(u64),
    OutOfMemory {
        requested: u64,
        live: u64,
    },
}

#[derive(Debug)]
enum ReadError {
    Timeout,
    Closed,
}

/// Buffered reads from the driver's protocol pipe with a deadline.
struct FrameReader {
    pipe: ChildStdout,
    buf: Vec<u8>,
    pos: usize,
}

impl FrameReader {
    fn new(pipe: ChildStdout) -> Self {
        FrameReader {
            pipe,
            buf: Vec::with_capacity(1 << 16),
            pos: 0,
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
        let fd = self.pipe.as_raw_fd();
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

    fn read_response(&mut self, deadline: Instant) -> Result<Response, ReadError> {
        let first = self.read_u8(deadline)?;
        if first == b'k' {
            return Ok(Response::Key(self.read_u64(deadline)?));
        }
        let cached = first & 0x80 != 0;
        let status = first & 0x7f;
        let elapsed = Duration::from_nanos(self.read_u64(deadline)?);
        let outcome = match status {
            0 => Outcome::Pass,
            1 => Outcome::Reject,
            2 => {
                let message = self.read_string(deadline)?;
                let location = self.read_string(deadline)?;
                Outcome::Crash(Signature::panic(message, location))
            }
            3 => {
                let requested = self.read_u64(deadline)?;
                let live = self.read_u64(deadline)?;
                return Ok(Response::OutOfMemory { requested, live });
            }
            4 => return Ok(Response::KnownFatal(self.read_u64(deadline)?)),
            _ => return Err(ReadError::Closed),
        };
        Ok(Response::Done {
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

    fn read_spans(&mut self, deadline: Instant) -> Result<Vec<Span>, ReadError> {
        let count = self.read_u32(deadline)? as usize;
        let mut spans = Vec::with_capacity(count);
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
        Ok(spans)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deaths_are_classified_from_status_and_stderr() {
        let abrt = ExitStatus::from_raw(libc::SIGABRT);
        assert_eq!(classify_death(Some(abrt), "").kind, CrashKind::Abort);
        assert_eq!(
            classify_death(
                Some(abrt),
                "\nthread 'main' has overflowed its stack\nfatal runtime error: stack overflow"
            )
            .kind,
            CrashKind::StackOverflow
        );
        assert_eq!(
            classify_death(Some(abrt), "memory allocation of 99999999 bytes failed\n").kind,
            CrashKind::OutOfMemory
        );
        let segv = ExitStatus::from_raw(libc::SIGSEGV);
        assert_eq!(
            classify_death(Some(segv), "").kind,
            CrashKind::Signal(libc::SIGSEGV)
        );
        let asan = "==9==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6\n\
                    SUMMARY: AddressSanitizer: heap-buffer-overflow src/lib.rs:10:5 in buggy::f\n";
        let sig = classify_death(Some(ExitStatus::from_raw(1 << 8)), asan);
        assert_eq!(sig.kind, CrashKind::Sanitizer);
        assert_eq!(
            sig.message.as_deref(),
            Some("AddressSanitizer: heap-buffer-overflow")
        );
        assert_eq!(sig.location.as_deref(), Some("src/lib.rs:10:5"));
        let exit3 = ExitStatus::from_raw(3 << 8);
        assert_eq!(classify_death(Some(exit3), "").kind, CrashKind::Exit(3));
    }
}
