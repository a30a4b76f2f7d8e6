//! The running input's stack, as code offsets in the driver binary, for the
//! two crashes whose place is not where they are reported:
//!
//! * a panic raised inside the standard library (`capacity overflow` in
//!   `raw_vec`, a `RefCell` borrow, …) says where in std it was raised; the
//!   bug is in its caller. The panic hook takes the stack for such panics
//!   only (the cost is paid only then);
//! * a hang has no report at all: at the deadline the parent sends
//!   [`HANG_SIGNAL`] to the process running the input, and the handler
//!   sends the stack it interrupted (`b'h'`, u32 count, count × u64), as
//!   libFuzzer prints one at its alarm.
//!
//! Offsets are from the executable's load address, as a sanitizer prints
//! `(binary+0xoffset)`: the parent symbolizes them with the same debug-info
//! reader. Frames outside the executable (libc, the unwinder) are left
//! out. The unwinder is libgcc's `_Unwind_Backtrace`, which every Rust
//! binary on Linux links; nothing here allocates, so the signal handler may
//! use it.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

/// At most this many frames are sent (innermost first).
pub const MAX_FRAMES: usize = 64;

/// The frame carrying a hang's stack.
pub const HANG_FRAME: u8 = b'h';

/// The executable's load address and the range of its code.
static BASE: AtomicUsize = AtomicUsize::new(0);
static CODE_LO: AtomicUsize = AtomicUsize::new(0);
static CODE_HI: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" {
    fn _Unwind_Backtrace(
        trace: extern "C" fn(*mut c_void, *mut c_void) -> c_int,
        arg: *mut c_void,
    ) -> c_int;
    fn _Unwind_GetIPInfo(ctx: *mut c_void, ip_before_insn: *mut c_int) -> usize;
}

/// The signal the parent sends at a deadline (a real-time signal: the
/// standard ones may be the target's).
pub fn hang_signal() -> c_int {
    libc::SIGRTMIN() + 7
}

/// Finds the executable's code (call once at start-up, before forking) and
/// installs the hang handler.
pub fn init() {
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        _data: *mut c_void,
    ) -> c_int {
        // The first object is the executable itself.
        let info = unsafe { &*info };
        let base = info.dlpi_addr as usize;
        let (mut lo, mut hi) = (usize::MAX, 0);
        for i in 0..info.dlpi_phnum as usize {
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_X != 0 {
                lo = lo.min(base + ph.p_vaddr as usize);
                hi = hi.max(base + (ph.p_vaddr + ph.p_memsz) as usize);
            }
        }
        BASE.store(base, Ordering::Relaxed);
        CODE_LO.store(lo, Ordering::Relaxed);
        CODE_HI.store(hi, Ordering::Relaxed);
        1
    }
    unsafe {
        libc::dl_iterate_phdr(Some(each), std::ptr::null_mut());
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_hang as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(hang_signal(), &action, std::ptr::null_mut());
    }
}

struct Trace<'a> {
    out: &'a mut [u64],
    len: usize,
}

extern "C" fn step(ctx: *mut c_void, arg: *mut c_void) -> c_int {
    const NO_REASON: c_int = 0;
    const END_OF_STACK: c_int = 5;
    let trace = unsafe { &mut *(arg as *mut Trace<'_>) };
    let mut before: c_int = 0;
    let ip = unsafe { _Unwind_GetIPInfo(ctx, &mut before) };
    if ip == 0 {
        return END_OF_STACK;
    }
    // A return address points after the call: look up the call itself. An
    // interrupted instruction (a signal frame) is exact.
    let pc = if before == 0 { ip - 1 } else { ip };
    let (lo, hi) = (
        CODE_LO.load(Ordering::Relaxed),
        CODE_HI.load(Ordering::Relaxed),
    );
    if (lo..hi).contains(&pc) {
        trace.out[trace.len] = (pc - BASE.load(Ordering::Relaxed)) as u64;
        trace.len += 1;
        if trace.len == trace.out.len() {
            return END_OF_STACK;
        }
    }
    NO_REASON
}

/// Fills `out` with the offsets of the current stack's frames in the
/// executable, innermost first; returns how many.
pub fn capture(out: &mut [u64; MAX_FRAMES]) -> usize {
    if CODE_HI.load(Ordering::Relaxed) == 0 {
        return 0;
    }
    let mut trace = Trace {
        out: &mut out[..],
        len: 0,
    };
    unsafe { _Unwind_Backtrace(step, (&mut trace as *mut Trace<'_>).cast()) };
    trace.len
}

/// Whether a panic location is in the standard library (as rustc records
/// it: `/rustc/<hash>/library/…`, or the rust-src component's path).
pub fn in_std(location: &str) -> bool {
    location.starts_with("/rustc/")
        || ["/library/core/src/", "/library/alloc/src/", "/library/std/src/"]
            .iter()
            .any(|p| location.contains(p))
}

/// The hang handler: while an input runs, send its stack to the parent.
/// Between inputs the driver itself may be writing a frame; then nothing is
/// sent (the parent stops waiting when the answer comes instead).
extern "C" fn on_hang(_sig: c_int, _info: *mut libc::siginfo_t, _ctx: *mut c_void) {
    if !crate::serve::running() {
        return;
    }
    let mut offsets = [0u64; MAX_FRAMES];
    let n = capture(&mut offsets);
    let mut frame = [0u8; 1 + 4 + 8 * MAX_FRAMES];
    frame[0] = HANG_FRAME;
    frame[1..5].copy_from_slice(&(n as u32).to_le_bytes());
    for (i, o) in offsets[..n].iter().enumerate() {
        frame[5 + 8 * i..13 + 8 * i].copy_from_slice(&o.to_le_bytes());
    }
    crate::serve::send_frame(&frame[..5 + 8 * n]);
}
