//! The driver's main loop: read inputs from the parent, run the target on
//! each, report one outcome frame per input.
//!
//! Wire protocol (all integers little-endian; `str` = u32 length + UTF-8):
//!
//! * at start-up the driver sends `HELLO`: `b"RCD1"`, u8 typed, u8 init_ok,
//!   and if `init_ok == 0` the init panic's message and location (`str`, `str`);
//! * the parent sends requests:
//!   - `b'R'` u32 count, then count × (u32 len, bytes): run a batch;
//!   - `b'V'` the same, with value-level caching (typed targets): inputs that
//!     decode to a value already run are answered without running it again;
//!   - `b'F'` u32 count, count × u64: value keys known to kill the driver;
//!   - `b'S'` u32 len, bytes: probe which bytes form which draws (spans);
//!   - `b'D'` u32 len, bytes: the `Debug` form of an input;
//!   - `b'C'` u32 len, bytes: run one input with coverage: its outcome frame
//!     (as for `R`) followed by u32 count, count × u32 features, or by
//!     u32 `0xffff_ffff` when the driver was built without coverage;
//!   - `b'Q'`: quit;
//! * per input run the driver answers: u8 status (0 pass, 1 reject, 2 panic,
//!   3 out-of-memory, 4 known-fatal; bit 0x80 set when answered from the value
//!   cache), u64 elapsed nanoseconds, then for a panic `str` message, `str`
//!   location, for out-of-memory u64 requested bytes, u64 live bytes, and for
//!   known-fatal the u64 value key. With `V`, an input that has to run is
//!   announced first by `b'k'` u64 key, so a death is attributable to a value.
//!   After a crash the rest of the batch is skipped (the parent knows);
//!   out-of-memory is sent by the allocator, which then exits the process;
//! * the answer to `b'S'` is u32 count, count × (u32 start, u32 end, u8 kind:
//!   0 leaf, 1 structural, 2 unused); to `b'D'` one `str`.
//!
//! The protocol uses duplicates of the original stdin/stdout; fd 1 is then
//! pointed at stderr, so whatever the target prints cannot corrupt it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::os::unix::io::FromRawFd;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The functions `fuzz_target!` generated in the target's module.
pub struct Target {
    pub init: fn(),
    pub entry: fn(&[u8]) -> i32,
    pub debug: fn(&[u8]) -> String,
    /// Compact `Debug` of the decoded value (typed targets), else `None`.
    pub value: fn(&[u8]) -> Option<String>,
    pub typed: bool,
}

const STATUS_PASS: u8 = 0;
const STATUS_REJECT: u8 = 1;
const STATUS_PANIC: u8 = 2;
const STATUS_OOM: u8 = 3;
const STATUS_KNOWN_FATAL: u8 = 4;
const CACHED: u8 = 0x80;
const KEY_FRAME: u8 = b'k';

/// Exit status after reporting out-of-memory (libFuzzer uses 71 as well).
const OOM_EXIT: i32 = 71;

static PROTO_OUT: AtomicI32 = AtomicI32::new(-1);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static RSS_LIMIT: AtomicUsize = AtomicUsize::new(0);
static MALLOC_LIMIT: AtomicUsize = AtomicUsize::new(0);

/// SanitizerCoverage inline 8-bit counter arrays, one per instrumented
/// module, registered at start-up (coverage builds only: `-Cpasses=sancov-module
/// -Cllvm-args=-sanitizer-coverage-inline-8bit-counters`, as cargo-fuzz uses).
static COUNTERS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Called by every instrumented module's constructor with its counters.
///
/// # Safety
/// `start..end` must be a counter array that lives as long as the process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __sanitizer_cov_8bit_counters_init(start: *mut u8, end: *mut u8) {
    if start < end {
        if let Ok(mut c) = COUNTERS.lock() {
            c.push((start as usize, end as usize));
        }
    }
}

/// The PC table (`-sanitizer-coverage-pc-table`) is not needed here.
///
/// # Safety
/// Never dereferences its arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __sanitizer_cov_pcs_init(_start: *const usize, _end: *const usize) {}

/// Indirect-call tracing (`-sanitizer-coverage-level=4`): libFuzzer feeds it
/// to value profiling only (`-use_value_profile`, off by default), so
/// features do not depend on it.
#[unsafe(no_mangle)]
pub extern "C" fn __sanitizer_cov_trace_pc_indir(_callee: usize) {}

/// Zeroes every counter before an input runs.
fn reset_counters(arrays: &[(usize, usize)]) {
    for &(start, end) in arrays {
        unsafe { std::ptr::write_bytes(start as *mut u8, 0, end - start) };
    }
}

/// Copies every counter into `snapshot` (sized beforehand) with `memcpy`,
/// which is not instrumented: the driver's own code that runs afterwards
/// (building the answer) cannot change what the input covered.
fn snapshot_counters(arrays: &[(usize, usize)], snapshot: &mut [u8]) {
    let mut at = 0;
    for &(start, end) in arrays {
        let len = end - start;
        unsafe {
            std::ptr::copy_nonoverlapping(start as *const u8, snapshot.as_mut_ptr().add(at), len)
        };
        at += len;
    }
}

/// libFuzzer's features from 8-bit counters: counter index × 8 + the
/// bucket of its hit count (1, 2, 3, 4–7, 8–15, 16–31, 32–127, 128+).
fn append_features(snapshot: &[u8], out: &mut Vec<u8>) {
    let count_at = out.len();
    out.extend_from_slice(&0u32.to_le_bytes());
    let mut count = 0u32;
    for (i, &c) in snapshot.iter().enumerate() {
        if c != 0 {
            let bucket = match c {
                1 => 0,
                2 => 1,
                3 => 2,
                4..=7 => 3,
                8..=15 => 4,
                16..=31 => 5,
                32..=127 => 6,
                _ => 7,
            };
            out.extend_from_slice(&(i as u32 * 8 + bucket).to_le_bytes());
            count += 1;
        }
    }
    out[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
}

/// First panic seen while running the current input: (message, location).
static PANIC: Mutex<Option<(String, String)>> = Mutex::new(None);

/// The system allocator with libFuzzer-style limits: a single allocation
/// larger than the malloc limit, or live heap above the RSS limit, is
/// reported as out-of-memory instead of taking the machine down.
pub struct LimitedAlloc;

unsafe impl GlobalAlloc for LimitedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check_limits(layout.size());
        let p = System.alloc(layout);
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check_limits(layout.size());
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            check_limits(new_size - layout.size());
        }
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            LIVE.fetch_add(new_size, Ordering::Relaxed);
        }
        p
    }
}

#[inline]
fn check_limits(size: usize) {
    let rss = RSS_LIMIT.load(Ordering::Relaxed);
    if rss == 0 {
        return;
    }
    let malloc = MALLOC_LIMIT.load(Ordering::Relaxed);
    let live = LIVE.load(Ordering::Relaxed);
    if size > malloc || live.saturating_add(size) > rss {
        report_oom(size, live);
    }
}

/// Sends the out-of-memory frame and exits, without allocating.
fn report_oom(requested: usize, live: usize) -> ! {
    let mut frame = [0u8; 25];
    frame[0] = STATUS_OOM;
    frame[9..17].copy_from_slice(&(requested as u64).to_le_bytes());
    frame[17..25].copy_from_slice(&(live as u64).to_le_bytes());
    let fd = PROTO_OUT.load(Ordering::Relaxed);
    if fd >= 0 {
        unsafe {
            libc::write(fd, frame.as_ptr().cast(), frame.len());
        }
    }
    unsafe { libc::_exit(OOM_EXIT) }
}

fn env_mb(name: &str) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(0, |mb| mb.saturating_mul(1 << 20))
}

/// Takes over stdin/stdout for the protocol and returns (input, output).
fn take_protocol_fds() -> (File, File) {
    unsafe {
        let inp = libc::dup(0);
        let out = libc::dup(1);
        assert!(inp >= 0 && out >= 0, "cargo-reduce-crash driver: dup failed");
        libc::dup2(2, 1);
        let devnull = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        if devnull >= 0 {
            libc::dup2(devnull, 0);
            libc::close(devnull);
        }
        PROTO_OUT.store(out, Ordering::Relaxed);
        (File::from_raw_fd(inp), File::from_raw_fd(out))
    }
}

fn install_panic_hook() {
    panic::set_hook(Box::new(|info| {
        let message = match info.payload_as_str() {
            Some(s) => s.to_owned(),
            None => "Box<dyn Any>".to_owned(),
        };
        let location = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_default();
        if let Ok(mut slot) = PANIC.lock() {
            if slot.is_none() {
                *slot = Some((message, location));
            }
        }
    }));
}

fn take_panic() -> Option<(String, String)> {
    PANIC.lock().ok().and_then(|mut slot| slot.take())
}

fn put_str(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
    buf.extend_from_slice(s.as_bytes());
}

fn read_u32(r: &mut impl Read) -> Option<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b).ok()?;
    Some(u32::from_le_bytes(b))
}

fn read_bytes(r: &mut impl Read, into: &mut Vec<u8>) -> Option<()> {
    let len = read_u32(r)? as usize;
    into.resize(len, 0);
    r.read_exact(into).ok()
}

/// Reads the request pipe, spinning briefly before blocking: when the
/// parent answers within microseconds (the common case while reducing), this
/// saves the wake-up latency of a blocking read. Bounded, so an idle driver
/// sleeps.
struct SpinReader {
    file: File,
}

const SPIN: std::time::Duration = std::time::Duration::from_micros(50);

impl Read for SpinReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let fd = std::os::unix::io::AsRawFd::as_raw_fd(&self.file);
        let start = Instant::now();
        loop {
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let err = std::io::Error::last_os_error();
            match err.kind() {
                std::io::ErrorKind::WouldBlock => {
                    if start.elapsed() < SPIN {
                        // Yield rather than burn: under load the other side needs this core.
                        unsafe { libc::sched_yield() };
                    } else {
                        let mut pfd = libc::pollfd {
                            fd,
                            events: libc::POLLIN,
                            revents: 0,
                        };
                        unsafe { libc::poll(&mut pfd, 1, -1) };
                    }
                }
                std::io::ErrorKind::Interrupted => {}
                _ => return Err(err),
            }
        }
    }
}

fn set_nonblocking(file: &File) {
    let fd = std::os::unix::io::AsRawFd::as_raw_fd(file);
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// Runs the driver until the parent closes the pipe or sends `Q`.
pub fn run(target: Target) -> ! {
    let (input, mut output) = take_protocol_fds();
    set_nonblocking(&input);
    let mut input = BufReader::with_capacity(1 << 16, SpinReader { file: input });
    install_panic_hook();

    let mut hello = b"RCD1".to_vec();
    hello.push(u8::from(target.typed));
    match panic::catch_unwind(target.init) {
        Ok(()) => hello.push(1),
        Err(_) => {
            let (message, location) = take_panic().unwrap_or_default();
            hello.push(0);
            put_str(&mut hello, &message);
            put_str(&mut hello, &location);
        }
    }
    if output.write_all(&hello).is_err() {
        std::process::exit(0);
    }
    // Limits apply to the target, not to start-up.
    // (Read both first: reading the environment allocates, and the malloc
    // limit must be in place before the heap limit switches checks on.)
    let rss = env_mb("RC_RSS_LIMIT_MB");
    let malloc = env_mb("RC_MALLOC_LIMIT_MB");
    MALLOC_LIMIT.store(if malloc == 0 { usize::MAX } else { malloc }, Ordering::Relaxed);
    RSS_LIMIT.store(rss, Ordering::Relaxed);

    let mut inputs: Vec<Vec<u8>> = Vec::new();
    let mut frame: Vec<u8> = Vec::with_capacity(256);
    let mut values = ValueCache::default();
    // Coverage builds: the counter arrays, and room for a snapshot of them.
    let counters = COUNTERS.lock().map(|c| c.clone()).unwrap_or_default();
    let mut snapshot = vec![0u8; counters.iter().map(|(s, e)| e - s).sum()];
    frame.reserve(4 * snapshot.len() + 4096);
    loop {
        let mut kind = [0u8; 1];
        if input.read_exact(&mut kind).is_err() {
            std::process::exit(0);
        }
        match kind[0] {
            b'R' | b'V' => {
                let Some(count) = read_u32(&mut input) else {
                    std::process::exit(0)
                };
                let count = count as usize;
                if inputs.len() < count {
                    inputs.resize_with(count, Vec::new);
                }
                for buf in inputs.iter_mut().take(count) {
                    if read_bytes(&mut input, buf).is_none() {
                        std::process::exit(0);
                    }
                }
                let cache = if kind[0] == b'V' {
                    Some(&mut values)
                } else {
                    None
                };
                run_batch(&target, &inputs[..count], cache, &mut output, &mut frame);
            }
            b'F' => {
                let Some(count) = read_u32(&mut input) else {
                    std::process::exit(0)
                };
                for _ in 0..count {
                    let mut key = [0u8; 8];
                    if input.read_exact(&mut key).is_err() {
                        std::process::exit(0);
                    }
                    values.fatal.insert(u64::from_le_bytes(key));
                }
            }
            b'S' => {
                let mut data = Vec::new();
                if read_bytes(&mut input, &mut data).is_none() {
                    std::process::exit(0);
                }
                frame.clear();
                let spans = probe_spans(&target, &data);
                frame.extend_from_slice(&(spans.len() as u32).to_le_bytes());
                for (start, end, kind) in spans {
                    frame.extend_from_slice(&(start as u32).to_le_bytes());
                    frame.extend_from_slice(&(end as u32).to_le_bytes());
                    frame.push(kind);
                }
                if output.write_all(&frame).is_err() {
                    std::process::exit(0);
                }
            }
            b'C' => {
                let mut data = Vec::new();
                if read_bytes(&mut input, &mut data).is_none() {
                    std::process::exit(0);
                }
                frame.clear();
                if counters.is_empty() {
                    run_one(&target, &data, &mut frame);
                    frame.extend_from_slice(&u32::MAX.to_le_bytes());
                } else {
                    reset_counters(&counters);
                    // Nothing is flushed before: a death is this input's.
                    run_one(&target, &data, &mut frame);
                    snapshot_counters(&counters, &mut snapshot);
                    append_features(&snapshot, &mut frame);
                }
                if output.write_all(&frame).is_err() {
                    std::process::exit(0);
                }
            }
            b'D' => {
                let mut data = Vec::new();
                if read_bytes(&mut input, &mut data).is_none() {
                    std::process::exit(0);
                }
                let text = panic::catch_unwind(|| (target.debug)(&data))
                    .unwrap_or_else(|_| "<Debug formatting panicked>".to_owned());
                let _ = take_panic();
                frame.clear();
                put_str(&mut frame, &text);
                if output.write_all(&frame).is_err() {
                    std::process::exit(0);
                }
            }
            _ => std::process::exit(0),
        }
    }
}

/// Outcomes by value, for `V` batches.
#[derive(Default)]
struct ValueCache {
    /// Response frames of values that ran (pass, reject, panic).
    frames: HashMap<u64, Vec<u8>>,
    /// Values that killed a driver (the parent knows how).
    fatal: HashSet<u64>,
}

fn value_key(text: &str) -> u64 {
    // Fixed keys: the parent compares keys across driver restarts.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// The compact `Debug` of the input's value, never panicking.
fn value_of(target: &Target, data: &[u8]) -> Option<String> {
    let value = panic::catch_unwind(|| (target.value)(data)).ok().flatten();
    let _ = take_panic();
    value
}

fn flush(output: &mut File, out: &mut Vec<u8>) {
    if !out.is_empty() {
        if output.write_all(out).is_err() {
            std::process::exit(0);
        }
        out.clear();
    }
}

/// Runs inputs until the first crash, writing one frame per input.
fn run_batch(
    target: &Target,
    inputs: &[Vec<u8>],
    mut cache: Option<&mut ValueCache>,
    output: &mut File,
    out: &mut Vec<u8>,
) {
    out.clear();
    for data in inputs {
        let key = match cache.as_deref() {
            Some(_) => value_of(target, data).map(|v| value_key(&v)),
            None => None,
        };
        if let (Some(k), Some(c)) = (key, cache.as_deref()) {
            if c.fatal.contains(&k) {
                out.push(STATUS_KNOWN_FATAL);
                out.extend_from_slice(&0u64.to_le_bytes());
                out.extend_from_slice(&k.to_le_bytes());
                break;
            }
            if let Some(known) = c.frames.get(&k) {
                out.push(known[0] | CACHED);
                out.extend_from_slice(&known[1..]);
                if known[0] == STATUS_PANIC {
                    break;
                }
                continue;
            }
            out.push(KEY_FRAME);
            out.extend_from_slice(&k.to_le_bytes());
        }
        // Everything before this input is reported before it runs: if it
        // kills the process, the parent knows exactly which input did.
        flush(output, out);
        let crashed = run_one(target, data, out);
        if let (Some(k), Some(c)) = (key, cache.as_deref_mut()) {
            // `out` was flushed just before, so it holds exactly this frame.
            c.frames.insert(k, out.clone());
        }
        if crashed {
            break;
        }
    }
    flush(output, out);
}

/// Which bytes form which draws, probed through the value's `Debug` form
/// (see `probe.rs`): (start, end, kind) with kind 0 leaf, 1 structural,
/// 2 unused.
fn probe_spans(target: &Target, data: &[u8]) -> Vec<(usize, usize, u8)> {
    if value_of(target, data).is_none() {
        return Vec::new();
    }
    crate::probe::probe_spans(data, |b| value_of(target, b))
        .into_iter()
        .map(|s| {
            let kind = match s.kind {
                crate::probe::SpanKind::Leaf => 0,
                crate::probe::SpanKind::Structural => 1,
                crate::probe::SpanKind::Unused => 2,
            };
            (s.start, s.end, kind)
        })
        .collect()
}

/// Runs one input and writes its outcome frame; `true` if it panicked.
fn run_one(target: &Target, data: &[u8], frame: &mut Vec<u8>) -> bool {
    let entry = target.entry;
    let start = Instant::now();
    let result = panic::catch_unwind(AssertUnwindSafe(|| entry(data)));
    let elapsed = start.elapsed().as_nanos() as u64;
    // A panic the target caught itself still counts, as under libFuzzer.
    let panicked = take_panic();
    match (panicked, result) {
        (Some((message, location)), _) => {
            frame.push(STATUS_PANIC);
            frame.extend_from_slice(&elapsed.to_le_bytes());
            put_str(frame, &message);
            put_str(frame, &location);
            true
        }
        (None, Err(_)) => {
            frame.push(STATUS_PANIC);
            frame.extend_from_slice(&elapsed.to_le_bytes());
            put_str(frame, "<panic without hook>");
            put_str(frame, "");
            true
        }
        (None, Ok(code)) => {
            frame.push(if code == -1 { STATUS_REJECT } else { STATUS_PASS });
            frame.extend_from_slice(&elapsed.to_le_bytes());
            false
        }
    }
}
