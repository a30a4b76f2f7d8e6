//! The driver's entry point: take over the protocol pipes, run the target's
//! `init:` block, then serve inputs, from a fork server when possible.
//!
//! Wire protocol (all integers little-endian; `str` = u32 length + UTF-8):
//!
//! * at start-up the driver sends `HELLO`: `b"RCD5"`, u8 typed, u8 init_ok,
//!   and if `init_ok == 0` the init panic's message and location (`str`,
//!   `str`) and nothing more; else u8 fork server (0/1) and u32 the pid of
//!   the process that runs inputs;
//! * the parent sends requests:
//!   - `b'R'` u32 count, then count × (u32 prefix, u32 suffix, u32 len,
//!     len bytes): run a batch. Each input is the first `prefix` bytes of the
//!     input before it in the request, the bytes sent, then the last
//!     `suffix` bytes of the input before it (`prefix + suffix` at most its
//!     length; both 0 for the first input);
//!   - `b'V'` the same, with value-level caching (typed targets): inputs that
//!     decode to a value already run are answered without running it again;
//!   - `b'F'` u32 count, count × u64: value keys known to kill the driver;
//!   - `b'K'` u8 on: whether comparisons cost what libFuzzer's hooks make
//!     them cost (`sancov::trace`; at start-up `RC_COMPARES`, default on),
//!     for every input from here on, in later children too;
//!   - `b'S'` u32 len, bytes: probe which bytes form which draws (spans);
//!   - `b'D'` u32 len, bytes: the `Debug` form of an input;
//!   - `b'C'` u32 len, bytes: run one input with coverage: its outcome frame
//!     (as for `R`) followed by u32 count, count × u32 features, or by
//!     u32 `0xffff_ffff` when the driver was built without coverage;
//!   - `b'Q'`: quit;
//! * per input run the driver answers: u8 status (0 pass, 1 reject, 2 panic,
//!   4 known-fatal; bit 0x80 set when answered from the value cache), u64
//!   elapsed nanoseconds, then for a panic `str` message, `str` location,
//!   u32 count and count × u64 stack offsets (only for a panic raised inside
//!   the standard library: the stack from the hook down, as offsets in the
//!   executable, for the parent to find its caller; `stack.rs`), and for
//!   known-fatal the u64 value key. With `V`, an input that has to run is
//!   announced first by `b'k'` u64 key, so a death is attributable to a
//!   value. After a crash the rest of the batch is skipped (the parent knows);
//! * the first panic of an input that runs is announced from the panic hook,
//!   before anything unwinds: `b'p'`, `str` message (cut to 2 KiB), `str`
//!   location, u32 count, count × u64 stack offsets. Its answer follows (status 2), unless the process dies first
//!   (a second panic while unwinding, a hook of the target's that aborts or
//!   exits): then the death is that panic, as libFuzzer, whose hook aborts at
//!   the first panic, reports it;
//! * at a deadline the parent sends the process running the input a
//!   real-time signal (`SIGRTMIN+7`); while an input runs, its handler
//!   answers `b'h'`, u32 count, count × u64: the stack it interrupted;
//! * the answer to `b'S'` is `b's'`, u32 count, count × (u32 start, u32 end,
//!   u8 kind: 0 leaf, 1 structural, 2 unused); to `b'D'` `b'd'` and one `str`;
//! * with a fork server, when the process running inputs dies (a sanitizer
//!   report, an abort, a signal, a memory limit, or killed by the parent at a
//!   deadline), the server sends `b'X'`, i32 wait status, u8 phase (what the
//!   dead process was doing: 0 waiting for a request, 1 working on one, 2 in
//!   the middle of reading one), u32 length and bytes: the end of what it
//!   printed (its stderr and stdout), then u32 the pid of its replacement.
//!   Without a fork
//!   server the driver itself dies and the parent reads its exit status and
//!   stderr.
//!
//! The protocol uses duplicates of the original stdin/stdout; fd 1 is then
//! pointed at stderr, so whatever the target prints cannot corrupt it.

use std::fs::File;
use std::io::Write;
use std::os::unix::io::FromRawFd;
use std::panic;

/// The functions `fuzz_target!` generated in the target's crate.
pub struct Target {
    pub init: fn(),
    pub entry: fn(&[u8]) -> i32,
    pub debug: fn(&[u8]) -> String,
    /// Compact `Debug` of the decoded value (typed targets), else `None`.
    pub value: fn(&[u8]) -> Option<String>,
    pub typed: bool,
}

/// Runs the driver until the parent closes the pipe or sends `Q`.
pub fn main(target: Target) -> i32 {
    if std::env::var_os("RC_DRIVER").is_none() {
        eprintln!(
            "this binary is cargo-reduce-crash's in-process driver for a fuzz target, \
             not the fuzzer: build the fuzzer with `cargo fuzz build`"
        );
        return 2;
    }
    let (input, output) = take_protocol_fds();
    crate::serve::set_protocol_fd(std::os::unix::io::AsRawFd::as_raw_fd(&output));
    // A parent that went away shows up as a failed write, as it does for a
    // Rust `main` (libFuzzer's `main` does the same for its own pipes).
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    crate::sancov::trace::set_faithful_compares(
        std::env::var_os("RC_COMPARES").is_none_or(|v| v != "0"),
    );
    crate::signals::install();
    crate::stack::init();
    crate::serve::install_panic_hook();
    unsafe { libc::atexit(crate::serve::on_exit) };

    let mut hello = b"RCD5".to_vec();
    hello.push(u8::from(target.typed));
    if panic::catch_unwind(target.init).is_ok() {
        // `init:` may have installed a hook of the target's own.
        crate::serve::chain_panic_hook();
        hello.push(1);
    } else {
        let panic = crate::serve::take_panic().unwrap_or_default();
        hello.push(0);
        crate::serve::put_str(&mut hello, &panic.message);
        crate::serve::put_str(&mut hello, &panic.location);
        let _ = (&output).write_all(&hello);
        return 0;
    }
    // Limits apply to the target, not to start-up (as libFuzzer checks
    // allocations only once `LLVMFuzzerInitialize` has run).
    let limits = crate::limits::Limits::from_env();
    limits.activate();

    if crate::fork_server::usable() {
        crate::fork_server::run(&target, input, output, hello, &limits)
    } else {
        hello.push(0);
        hello.extend_from_slice(&std::process::id().to_le_bytes());
        if (&output).write_all(&hello).is_err() {
            return 0;
        }
        limits.watch_rss();
        crate::fork_server::exit_when_orphaned(&input);
        crate::serve::serve(&target, input, output)
    }
}

/// Takes over stdin/stdout for the protocol and returns (input, output).
fn take_protocol_fds() -> (File, File) {
    unsafe {
        let inp = libc::dup(0);
        let out = libc::dup(1);
        assert!(inp >= 0 && out >= 0, "cargo-reduce-crash driver: dup failed");
        libc::fcntl(inp, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(out, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::dup2(2, 1);
        let devnull = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        if devnull >= 0 {
            libc::dup2(devnull, 0);
            libc::close(devnull);
        }
        (File::from_raw_fd(inp), File::from_raw_fd(out))
    }
}
