//! The request loop: read inputs from the parent, run the target on each,
//! report one outcome frame per input (the protocol is described in
//! `__driver.rs`).

use crate::__driver::Target;
use crate::fork_server::{set_phase, Phase};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufReader, Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

const STATUS_PASS: u8 = 0;
const STATUS_REJECT: u8 = 1;
const STATUS_PANIC: u8 = 2;
const STATUS_KNOWN_FATAL: u8 = 4;
const CACHED: u8 = 0x80;
const KEY_FRAME: u8 = b'k';
const SPANS_FRAME: u8 = b's';
const DEBUG_FRAME: u8 = b'd';
const PCS_FRAME: u8 = b'c';

/// What the target printed is kept (for the parent to read after a death)
/// only up to this size; the file is emptied between requests beyond it.
const OUTPUT_KEEP: i64 = 1 << 20;

/// First panic seen while running the current input.
static PANIC: Mutex<Option<Panic>> = Mutex::new(None);

/// A panic as the hook saw it.
#[derive(Default)]
pub struct Panic {
    pub message: String,
    /// `file:line:col`.
    pub location: String,
    /// For a panic raised inside the standard library, the stack from the
    /// hook down ([`crate::stack`]): the parent finds its caller there.
    pub stack: Vec<u64>,
}

impl Panic {
    /// The panic fields of a frame: `str` message, `str` location, u32
    /// count, count × u64 stack offsets.
    fn put(&self, frame: &mut Vec<u8>) {
        put_str(frame, &self.message);
        put_str(frame, &self.location);
        frame.extend_from_slice(&(self.stack.len() as u32).to_le_bytes());
        for o in &self.stack {
            frame.extend_from_slice(&o.to_le_bytes());
        }
    }
}

/// Whether an input is running (not start-up, not a decode for the value
/// cache): only then is a panic announced to the parent.
static RUNNING: AtomicBool = AtomicBool::new(false);

/// The protocol pipe to the parent, for the panic hook's announcement.
static PROTOCOL_FD: AtomicI32 = AtomicI32::new(-1);

/// A panic's first frame announcement: message and location, sent from the
/// panic hook before anything unwinds, so the parent knows the first panic
/// of an input even when the process dies afterwards (a panic in a `Drop`
/// while unwinding aborts, a hook of the target's aborts or exits).
const PANIC_FRAME: u8 = b'p';

/// The announcement's message is cut to this many bytes (one pipe write).
const ANNOUNCED_MESSAGE: usize = 2048;

pub fn set_protocol_fd(fd: i32) {
    PROTOCOL_FD.store(fd, Ordering::Relaxed);
}

/// Records the first panic of the current input (and announces it to the
/// parent while an input runs).
fn record_panic(info: &panic::PanicHookInfo<'_>) {
    let message = match info.payload_as_str() {
        Some(s) => s.to_owned(),
        None => "Box<dyn Any>".to_owned(),
    };
    let location = info
        .location()
        .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
        .unwrap_or_default();
    let running = RUNNING.load(Ordering::Relaxed);
    {
        let Ok(mut slot) = PANIC.lock() else { return };
        if slot.is_some() {
            return;
        }
        // Raised inside std: where it was called from is the bug's place.
        let stack = match crate::stack::in_std(&location) {
            true => {
                let mut offsets = [0u64; crate::stack::MAX_FRAMES];
                let n = crate::stack::capture(&mut offsets);
                offsets[..n].to_vec()
            }
            false => Vec::new(),
        };
        let panic = Panic {
            message,
            location,
            stack,
        };
        if running {
            announce(&panic);
        }
        *slot = Some(panic);
    }
    // libfuzzer-sys's hook aborts at the first panic. That only matters to a
    // target with a SIGABRT handler of its own (which may, say, exit quietly
    // and hide the panic from libFuzzer): then this one does too.
    if running && target_handles_abort() {
        unsafe { libc::abort() };
    }
}

/// Whether a SIGABRT handler is installed (ours never installs one).
fn target_handles_abort() -> bool {
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::sigaction(libc::SIGABRT, std::ptr::null(), &mut old) } == 0;
    ok && old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN
}

/// Is an input running now?
pub fn running() -> bool {
    RUNNING.load(Ordering::Relaxed)
}

/// Sends the `p` frame for a panic of the running input.
fn announce(panic: &Panic) {
    let message = &panic.message;
    let mut cut = message.len().min(ANNOUNCED_MESSAGE);
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    let cut = Panic {
        message: message[..cut].to_owned(),
        location: panic.location.clone(),
        stack: panic.stack.clone(),
    };
    let mut frame = Vec::with_capacity(64 + cut.message.len() + 8 * cut.stack.len());
    frame.push(PANIC_FRAME);
    cut.put(&mut frame);
    send_frame(&frame);
}

/// Writes a whole frame to the parent from a hook or a signal handler (one
/// `write` for a frame under `PIPE_BUF`, so it never lands inside another).
pub fn send_frame(frame: &[u8]) {
    let fd = PROTOCOL_FD.load(Ordering::Relaxed);
    if fd >= 0 {
        write_all_fd(fd, frame);
    }
}

/// libFuzzer's exit check: an input that calls `exit()` is a crash, "fuzz
/// target exited" (registered with `atexit`, so `_exit()` stays quiet, as
/// under libFuzzer).
pub extern "C" fn on_exit() {
    if running() {
        let line = format!(
            "=={}== ERROR: libFuzzer: fuzz target exited\n",
            std::process::id()
        );
        write_all_fd(2, line.as_bytes());
    }
}

fn write_all_fd(fd: i32, mut buf: &[u8]) {
    while !buf.is_empty() {
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n > 0 {
            buf = &buf[n as usize..];
        } else if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        } else {
            return;
        }
    }
}

pub fn install_panic_hook() {
    panic::set_hook(Box::new(record_panic));
}

/// Puts our recorder in front of whatever hook is installed now (the
/// target's own, installed in `init:` or while running an input), which
/// still runs after it: the location of every panic is known whatever hook
/// the target installs.
pub fn chain_panic_hook() {
    let theirs = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        record_panic(info);
        theirs(info);
    }));
}

pub fn take_panic() -> Option<Panic> {
    PANIC.lock().ok().and_then(|mut slot| slot.take())
}

/// A caught panic's payload as text: its message, or its type where it is
/// not a string.
fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        return (*s).to_owned();
    }
    if let Some(s) = payload.downcast_ref::<String>() {
        return s.clone();
    }
    "Box<dyn Any>".to_owned()
}

pub fn put_str(buf: &mut Vec<u8>, s: &str) {
    put_bytes(buf, s.as_bytes());
}

pub fn put_bytes(buf: &mut Vec<u8>, b: &[u8]) {
    buf.extend_from_slice(&(b.len() as u32).to_le_bytes());
    buf.extend_from_slice(b);
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

/// A batch request as read: each input as an edit of the one before it.
#[derive(Default)]
struct Batch {
    edits: Vec<Edit>,
    /// The bytes the edits insert, one after the other.
    bytes: Vec<u8>,
}

/// Input `i` of a batch: the first `prefix` bytes of input `i - 1`, the
/// next `len` bytes of [`Batch::bytes`], then the last `suffix` bytes of
/// input `i - 1`.
struct Edit {
    prefix: usize,
    suffix: usize,
    len: usize,
}

/// Reads `count` inputs (u32 prefix, u32 suffix, u32 len, len bytes each)
/// into `batch`; `None` if the pipe closed or an edit keeps more of the
/// input before it than there is.
fn read_batch(r: &mut impl Read, count: usize, batch: &mut Batch) -> Option<()> {
    batch.edits.clear();
    batch.bytes.clear();
    let mut previous_len = 0;
    for _ in 0..count {
        let mut header = [0u8; 12];
        r.read_exact(&mut header).ok()?;
        let field = |i: usize| u32::from_le_bytes(header[4 * i..4 * i + 4].try_into().unwrap());
        let (prefix, suffix, len) = (field(0) as usize, field(1) as usize, field(2) as usize);
        if prefix.checked_add(suffix)? > previous_len {
            return None;
        }
        let at = batch.bytes.len();
        batch.bytes.resize(at + len, 0);
        r.read_exact(&mut batch.bytes[at..]).ok()?;
        batch.edits.push(Edit {
            prefix,
            suffix,
            len,
        });
        previous_len = prefix + len + suffix;
    }
    Some(())
}

/// Turns `input` (the input before) into the next input of the batch, in
/// place: the end it keeps moves only if the length changes.
fn apply(input: &mut Vec<u8>, edit: &Edit, inserted: &[u8]) {
    let old = input.len();
    let new = edit.prefix + edit.len + edit.suffix;
    if new > old {
        input.resize(new, 0);
    }
    if old - edit.suffix != edit.prefix + edit.len {
        input.copy_within(old - edit.suffix..old, edit.prefix + edit.len);
    }
    input.truncate(new);
    input[edit.prefix..edit.prefix + edit.len].copy_from_slice(inserted);
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

/// Keeps what the target printed from growing without bound when it is
/// written to a file (a fork server's child): empties the file once it
/// holds more than [`OUTPUT_KEEP`] bytes. Only between requests, so a
/// crash's report is always complete.
fn trim_output() {
    unsafe {
        let at = libc::lseek(2, 0, libc::SEEK_CUR);
        if at > OUTPUT_KEEP && libc::ftruncate(2, 0) == 0 {
            libc::lseek(2, 0, libc::SEEK_SET);
        }
    }
}

/// Serves requests until the parent closes the pipe or sends `Q`.
pub fn serve(target: &Target, input: File, mut output: File) -> ! {
    set_nonblocking(&input);
    let mut input = BufReader::with_capacity(1 << 16, SpinReader { file: input });
    let mut batch = Batch::default();
    // The input being run, edited into the next one.
    let mut current: Vec<u8> = Vec::new();
    let mut frame: Vec<u8> = Vec::with_capacity(256);
    let mut values = ValueCache::default();
    // Coverage builds: the counter arrays, and room for a snapshot of them.
    let counters = crate::sancov::counters();
    let mut snapshot = vec![0u8; counters.iter().map(|(s, e)| e - s).sum()];
    frame.reserve(4 * snapshot.len() + 4096);
    loop {
        set_phase(Phase::Idle);
        trim_output();
        let mut kind = [0u8; 1];
        if input.read_exact(&mut kind).is_err() {
            quit(0);
        }
        set_phase(Phase::Reading);
        match kind[0] {
            b'R' | b'V' => {
                let Some(count) = read_u32(&mut input) else {
                    quit(0)
                };
                // The whole request is read before anything runs, so that a
                // death never leaves part of it in the pipe.
                if read_batch(&mut input, count as usize, &mut batch).is_none() {
                    quit(0);
                }
                set_phase(Phase::Busy);
                let cache = if kind[0] == b'V' {
                    Some(&mut values)
                } else {
                    None
                };
                run_batch(target, &batch, &mut current, cache, &mut output, &mut frame);
            }
            b'F' => {
                let Some(count) = read_u32(&mut input) else {
                    quit(0)
                };
                for _ in 0..count {
                    let mut key = [0u8; 8];
                    if input.read_exact(&mut key).is_err() {
                        quit(0);
                    }
                    values.fatal.insert(u64::from_le_bytes(key));
                }
            }
            b'K' => {
                let mut on = [0u8; 1];
                if input.read_exact(&mut on).is_err() {
                    quit(0);
                }
                crate::sancov::trace::set_faithful_compares(on[0] != 0);
                crate::fork_server::set_compares(on[0] != 0);
            }
            b'S' => {
                let mut data = Vec::new();
                if read_bytes(&mut input, &mut data).is_none() {
                    quit(0);
                }
                set_phase(Phase::Busy);
                frame.clear();
                let spans = probe_spans(target, &data);
                frame.push(SPANS_FRAME);
                frame.extend_from_slice(&(spans.len() as u32).to_le_bytes());
                for (start, end, kind) in spans {
                    frame.extend_from_slice(&(start as u32).to_le_bytes());
                    frame.extend_from_slice(&(end as u32).to_le_bytes());
                    frame.push(kind);
                }
                if output.write_all(&frame).is_err() {
                    quit(0);
                }
            }
            b'C' => {
                let mut data = Vec::new();
                if read_bytes(&mut input, &mut data).is_none() {
                    quit(0);
                }
                set_phase(Phase::Busy);
                frame.clear();
                if counters.is_empty() {
                    run_one(target, &data, &mut frame, None);
                    frame.extend_from_slice(&u32::MAX.to_le_bytes());
                } else {
                    // Nothing is flushed before: a death is this input's.
                    let mut window = Window {
                        counters: &counters,
                        snapshot: &mut snapshot,
                    };
                    run_one(target, &data, &mut frame, Some(&mut window));
                    let depth = STACK_DEPTH.load(Ordering::Relaxed);
                    let stack =
                        crate::sancov::stack_depth_feature(snapshot.len() as u32 * 8, depth);
                    crate::sancov::append_features(&snapshot, stack, &mut frame);
                }
                if output.write_all(&frame).is_err() {
                    quit(0);
                }
            }
            b'P' => {
                let mut data = Vec::new();
                if read_bytes(&mut input, &mut data).is_none() {
                    quit(0);
                }
                frame.clear();
                frame.push(PCS_FRAME);
                let pcs = crate::sancov::pc_offsets(snapshot.len());
                frame.extend_from_slice(&(pcs.len() as u32).to_le_bytes());
                for pc in pcs {
                    frame.extend_from_slice(&pc.to_le_bytes());
                }
                if output.write_all(&frame).is_err() {
                    quit(0);
                }
            }
            b'D' => {
                let mut data = Vec::new();
                if read_bytes(&mut input, &mut data).is_none() {
                    quit(0);
                }
                set_phase(Phase::Busy);
                let text = panic::catch_unwind(|| (target.debug)(&data))
                    .unwrap_or_else(|_| "<Debug formatting panicked>".to_owned());
                let _ = take_panic();
                frame.clear();
                frame.push(DEBUG_FRAME);
                put_str(&mut frame, &text);
                if output.write_all(&frame).is_err() {
                    quit(0);
                }
            }
            _ => quit(0),
        }
    }
}

/// Leaves the loop: the parent closed the pipe, asked to quit, or sent
/// something unreadable.
fn quit(code: i32) -> ! {
    set_phase(Phase::Idle);
    std::process::exit(code)
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
    batch: &Batch,
    current: &mut Vec<u8>,
    mut cache: Option<&mut ValueCache>,
    output: &mut File,
    out: &mut Vec<u8>,
) {
    out.clear();
    let mut inserted = 0;
    for edit in &batch.edits {
        apply(current, edit, &batch.bytes[inserted..inserted + edit.len]);
        inserted += edit.len;
        let data: &[u8] = current;
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
        let crashed = run_one(target, data, out, None);
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

/// The input in a heap block of exactly its size, as libFuzzer hands it to
/// the target (`new uint8_t[Size]` and a copy, in `ExecuteCallback`): a read
/// one byte past the end then lands in the sanitizer's redzone. The buffers
/// the driver reads inputs into are reused and rounded up (a `Vec` holds at
/// least 8 bytes), which would hide overflows of short inputs.
struct ExactCopy {
    ptr: *mut u8,
    len: usize,
}

impl ExactCopy {
    fn new(data: &[u8]) -> ExactCopy {
        // malloc(0) gives a unique zero-sized block, as `new uint8_t[0]` does.
        let ptr = unsafe { libc::malloc(data.len()) }.cast::<u8>();
        assert!(!ptr.is_null() || data.is_empty(), "cargo-reduce-crash driver: out of memory");
        if !data.is_empty() {
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr, data.len()) };
        }
        ExactCopy {
            ptr,
            len: data.len(),
        }
    }

    fn bytes(&self) -> &[u8] {
        if self.ptr.is_null() {
            return &[];
        }
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for ExactCopy {
    fn drop(&mut self) {
        unsafe { libc::free(self.ptr.cast()) };
    }
}

/// How deep (bytes below the starting stack pointer) the last input ran.
static STACK_DEPTH: AtomicUsize = AtomicUsize::new(0);

/// A coverage request's counters: zeroed just before the target runs and
/// copied just after, so that the driver's own code around it (which a
/// faithful build instruments too: reading requests, the memory check after
/// each input) is not counted; it is not the input's coverage.
struct Window<'a> {
    counters: &'a [(usize, usize)],
    snapshot: &'a mut [u8],
}

/// Runs the target on one input, as libFuzzer hands it over.
fn run_entry(
    target: &Target,
    data: &[u8],
    window: Option<&mut Window<'_>>,
) -> (std::thread::Result<i32>, u64) {
    let entry = target.entry;
    let copy = ExactCopy::new(data);
    RUNNING.store(true, Ordering::Relaxed);
    let start = Instant::now();
    if let Some(w) = &window {
        crate::sancov::reset(w.counters);
    }
    let initial = crate::sancov::stack_depth::record_initial();
    let result = panic::catch_unwind(AssertUnwindSafe(|| entry(copy.bytes())));
    let depth = crate::sancov::stack_depth::max_offset(initial);
    if let Some(w) = window {
        crate::sancov::snapshot(w.counters, w.snapshot);
    }
    STACK_DEPTH.store(depth, Ordering::Relaxed);
    let elapsed = start.elapsed().as_nanos() as u64;
    RUNNING.store(false, Ordering::Relaxed);
    drop(copy);
    (result, elapsed)
}

/// Runs one input and writes its outcome frame; `true` if it panicked.
/// With a coverage `window`, its counters hold what the input covered.
fn run_one(
    target: &Target,
    data: &[u8],
    frame: &mut Vec<u8>,
    mut window: Option<&mut Window<'_>>,
) -> bool {
    let (mut result, mut elapsed) = run_entry(target, data, window.as_deref_mut());
    crate::limits::after_input();
    // A panic the target caught itself still counts, as under libFuzzer.
    let mut panicked = take_panic();
    if panicked.is_none() && result.is_err() {
        // It panicked and our recorder did not see it: the target replaced
        // the hook while this input ran. Ours goes in front of theirs, and
        // the input runs once more to learn where it panics.
        chain_panic_hook();
        (result, elapsed) = run_entry(target, data, window);
        crate::limits::after_input();
        panicked = take_panic();
    }
    match (panicked, result) {
        (Some(panic), _) => {
            frame.push(STATUS_PANIC);
            frame.extend_from_slice(&elapsed.to_le_bytes());
            panic.put(frame);
            true
        }
        (None, Err(payload)) => {
            // The target replaces the hook on every run: no location. What
            // unwinding still carries, the payload, tells its panics apart
            // (`panic!("…")` and `unwrap` carry their message); the parent
            // says that the message, not a place, was used.
            frame.push(STATUS_PANIC);
            frame.extend_from_slice(&elapsed.to_le_bytes());
            Panic {
                message: payload_text(payload.as_ref()),
                ..Panic::default()
            }
            .put(frame);
            true
        }
        (None, Ok(code)) => {
            frame.push(if code == -1 { STATUS_REJECT } else { STATUS_PASS });
            frame.extend_from_slice(&elapsed.to_le_bytes());
            false
        }
    }
}
