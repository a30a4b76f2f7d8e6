//! Cheap restarts: a fork server.
//!
//! A crash that kills the process (a sanitizer report, an abort, a stack
//! overflow, a signal, a memory limit, a kill at a deadline) would otherwise
//! cost a whole new driver: exec, dynamic loading, the sanitizer's start-up
//! and the target's `init:` block. Instead, once `init:` has run, this
//! process becomes a server that never runs an input itself: it forks a
//! child that serves requests; when the child dies, the server reports how
//! (wait status, what the child was doing, the end of what it printed) and
//! forks a new child from its own clean state.
//!
//! The child talks to the parent on the inherited protocol pipes; its
//! stderr and stdout go to a memory file that the server reads after a
//! death. A small shared page tells the server whether the child died while
//! working on a request or between requests.

use crate::__driver::Target;
use crate::limits::Limits;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

/// What the process serving requests is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// Waiting for a request (nothing of the next one has been read).
    Idle = 0,
    /// Working on a request it has read completely.
    Busy = 1,
    /// Part-way through reading a request.
    Reading = 2,
}

/// The shared page's phase byte, once the server has mapped it.
static PHASE: AtomicPtr<AtomicU8> = AtomicPtr::new(std::ptr::null_mut());

/// Records the phase where the server can read it after a death (a plain
/// store to shared memory: cheap enough to do around every request).
pub fn set_phase(phase: Phase) {
    let p = PHASE.load(Ordering::Relaxed);
    if !p.is_null() {
        unsafe { (*p).store(phase as u8, Ordering::Relaxed) };
    }
}

/// The shared page's second byte: whether comparisons cost what they cost
/// under libFuzzer (`K` requests), for the server to hand to the children
/// it forks next.
pub fn set_compares(on: bool) {
    let p = PHASE.load(Ordering::Relaxed);
    if !p.is_null() {
        unsafe { (*p.add(1)).store(u8::from(on), Ordering::Relaxed) };
    }
}

fn compares() -> Option<bool> {
    let p = PHASE.load(Ordering::Relaxed);
    (!p.is_null()).then(|| unsafe { (*p.add(1)).load(Ordering::Relaxed) } != 0)
}

fn phase() -> u8 {
    let p = PHASE.load(Ordering::Relaxed);
    if p.is_null() {
        return Phase::Busy as u8;
    }
    unsafe { (*p).load(Ordering::Relaxed) }
}

/// How much of a dead child's output is sent to the parent.
const TAIL: usize = 64 * 1024;

/// Forking is safe only while this process has one thread (a thread the
/// target's `init:` started would not exist in the children, and could hold
/// a lock they need); `RC_FORK_SERVER=0` turns it off.
pub fn usable() -> bool {
    if std::env::var_os("RC_FORK_SERVER").is_some_and(|v| v == "0") {
        return false;
    }
    match std::fs::read_dir("/proc/self/task") {
        Ok(tasks) => tasks.count() == 1,
        Err(_) => false,
    }
}

/// Serves through forked children until the parent goes away.
pub fn run(target: &Target, input: File, mut output: File, mut hello: Vec<u8>, limits: &Limits) -> ! {
    let page = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if page == libc::MAP_FAILED {
        // No shared page: serve in this process instead.
        hello.push(0);
        hello.extend_from_slice(&std::process::id().to_le_bytes());
        if output.write_all(&hello).is_err() {
            std::process::exit(0);
        }
        limits.watch_rss();
        exit_when_orphaned(&input);
        crate::serve::serve(target, input, output)
    }
    PHASE.store(page.cast(), Ordering::Relaxed);
    set_compares(crate::sancov::trace::faithful_compares());
    hello.push(1);
    // The message to send once the next child's pid is known: the greeting,
    // then a death report per child.
    let mut pending = hello;
    loop {
        set_phase(Phase::Idle);
        if let Some(on) = compares() {
            crate::sancov::trace::set_faithful_compares(on);
        }
        let out = unsafe { libc::memfd_create(c"rc-output".as_ptr(), libc::MFD_CLOEXEC) };
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe {
                if out >= 0 {
                    libc::dup2(out, 1);
                    libc::dup2(out, 2);
                    libc::close(out);
                }
            }
            crate::serve::serve(target, input, output);
        }
        if pid < 0 {
            let _ = writeln!(
                std::io::stderr(),
                "cargo-reduce-crash driver: fork failed: {}",
                std::io::Error::last_os_error()
            );
            std::process::exit(1);
        }
        pending.extend_from_slice(&(pid as u32).to_le_bytes());
        if output.write_all(&pending).is_err() {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            std::process::exit(0);
        }
        let status = wait(pid, out, limits.rss_mb(), input.as_raw_fd());
        let phase = phase();
        let printed = tail(out);
        if out >= 0 {
            unsafe { libc::close(out) };
        }
        let clean_exit = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        if clean_exit && phase != Phase::Busy as u8 {
            // The parent closed the pipe or asked to quit.
            std::process::exit(0);
        }
        pending = Vec::with_capacity(16 + printed.len());
        pending.push(b'X');
        pending.extend_from_slice(&status.to_le_bytes());
        pending.push(phase);
        crate::serve::put_bytes(&mut pending, &printed);
    }
}

/// Serving in this process (no fork server): a thread ends the process
/// once nobody can send requests any more (the tool is gone, even killed
/// with SIGKILL), since an input that hangs would otherwise spin for ever.
pub fn exit_when_orphaned(requests: &File) {
    let fd = requests.as_raw_fd();
    let _ = std::thread::Builder::new()
        .name("rc-orphan-watch".into())
        .spawn(move || loop {
            let mut pfd = libc::pollfd {
                fd,
                events: 0,
                revents: 0,
            };
            let ready = unsafe { libc::poll(&mut pfd, 1, -1) };
            if ready > 0 && pfd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                unsafe { libc::_exit(0) };
            }
        });
}

/// Waits for the child to die, or ends the server (and the child) when the
/// tool is gone. With an RSS limit, checks the child's peak
/// RSS every 100 ms meanwhile (from here, not from a thread in every child:
/// starting a thread per child doubled the cost of a crash), and kills it
/// with libFuzzer's out-of-memory report when it is over: the same check
/// the child makes after every input, for inputs that run long.
fn wait(pid: libc::pid_t, out: i32, rss_limit_mb: usize, requests: i32) -> i32 {
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) as i32 };
    if pidfd >= 0 {
        loop {
            // The child's end, and the end of the requests: when the tool
            // is gone (killed, even with SIGKILL), nobody writes to them any
            // more, and a child stuck in a hang would spin for ever.
            let mut pfd = [
                libc::pollfd {
                    fd: pidfd,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: requests,
                    events: 0,
                    revents: 0,
                },
            ];
            let every = if rss_limit_mb > 0 { 100 } else { 1000 };
            let ready = unsafe { libc::poll(pfd.as_mut_ptr(), 2, every) };
            if ready > 0 && pfd[0].revents != 0 {
                break;
            }
            if ready > 0 && pfd[1].revents & (libc::POLLHUP | libc::POLLERR) != 0 {
                unsafe { libc::kill(pid, libc::SIGKILL) };
                let mut status = 0;
                unsafe { libc::waitpid(pid, &mut status, 0) };
                std::process::exit(0);
            }
            if rss_limit_mb == 0 {
                continue;
            }
            let peak = peak_rss_mb(pid);
            if peak > rss_limit_mb {
                if out >= 0 {
                    let line = format!(
                        "=={pid}== ERROR: libFuzzer: out-of-memory (used: {peak}Mb; limit: {rss_limit_mb}Mb)\n\
                         SUMMARY: libFuzzer: out-of-memory\n"
                    );
                    unsafe { libc::write(out, line.as_ptr().cast(), line.len()) };
                }
                unsafe { libc::kill(pid, libc::SIGKILL) };
                break;
            }
        }
        unsafe { libc::close(pidfd) };
    }
    let mut status = 0;
    loop {
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return status;
        }
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // Cannot happen for our own child; report it as killed.
            return libc::SIGKILL;
        }
    }
}

/// The peak RSS of process `pid` in MiB (`VmHWM`), 0 if unknown.
fn peak_rss_mb(pid: libc::pid_t) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        })
        .map_or(0, |kb| kb >> 10)
}

/// The last [`TAIL`] bytes a child wrote to its output file.
fn tail(fd: i32) -> Vec<u8> {
    if fd < 0 {
        return Vec::new();
    }
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Vec::new();
    }
    let size = st.st_size.max(0) as usize;
    let start = size.saturating_sub(TAIL);
    let mut buf = vec![0u8; size - start];
    let mut got = 0;
    while got < buf.len() {
        let n = unsafe {
            libc::pread(
                fd,
                buf[got..].as_mut_ptr().cast(),
                buf.len() - got,
                (start + got) as libc::off_t,
            )
        };
        if n <= 0 {
            break;
        }
        got += n as usize;
    }
    buf.truncate(got);
    buf
}
