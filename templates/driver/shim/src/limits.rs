//! libFuzzer's memory limits, reported as libFuzzer reports them.
//!
//! * With a sanitizer (the build `cargo fuzz build` makes by default), as
//!   libFuzzer itself does: a single allocation of `-malloc_limit_mb` or more
//!   is caught by the sanitizer's malloc hook and reported as
//!   `out-of-memory (malloc(N))`; the peak RSS above `-rss_limit_mb` as
//!   `out-of-memory (used: NMb; limit: NMb)`, checked after every input and
//!   every 100 ms while one runs (by the fork server, or a watcher thread). The sanitizer's own reports (e.g.
//!   `allocation-size-too-big` above its maximum) stay what they are.
//! * Without one (`--sanitizer none`, feature `limited-alloc`), the driver
//!   counts the live heap in a global allocator and reports a single
//!   allocation above the malloc limit, or a live heap above the RSS limit,
//!   before the machine suffers (libFuzzer without a sanitizer can only poll
//!   the RSS).
//!
//! Either way the report is a line on stderr and the process exits with
//! libFuzzer's out-of-memory status (71), so the parent classifies it like
//! any other death. Nothing here may allocate while reporting.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Exit status after reporting out-of-memory (libFuzzer's `-error_exitcode` for OOM).
const OOM_EXIT: i32 = 71;

static RSS_LIMIT_MB: AtomicUsize = AtomicUsize::new(0);
static MALLOC_LIMIT_MB: AtomicUsize = AtomicUsize::new(0);

/// The limits the parent asked for (`RC_RSS_LIMIT_MB`, `RC_MALLOC_LIMIT_MB`;
/// 0 = none; the malloc limit defaults to the RSS limit, as in libFuzzer).
pub struct Limits {
    rss_mb: usize,
    malloc_mb: usize,
}

fn env_mb(name: &str) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0)
}

impl Limits {
    pub fn from_env() -> Limits {
        let rss_mb = env_mb("RC_RSS_LIMIT_MB");
        let malloc_mb = match env_mb("RC_MALLOC_LIMIT_MB") {
            0 => rss_mb,
            m => m,
        };
        Limits { rss_mb, malloc_mb }
    }

    /// Switches the allocation checks on (after `init:`).
    pub fn activate(&self) {
        MALLOC_LIMIT_MB.store(self.malloc_mb, Ordering::Relaxed);
        RSS_LIMIT_MB.store(self.rss_mb, Ordering::Relaxed);
        #[cfg(feature = "limited-alloc")]
        alloc::activate(self.rss_mb, self.malloc_mb);
        #[cfg(all(not(feature = "limited-alloc"), rc_sanitizer = "address"))]
        if self.malloc_mb > 0 {
            unsafe { hooks::install() };
        }
    }

    /// The RSS limit in MiB (0: none).
    pub fn rss_mb(&self) -> usize {
        if cfg!(feature = "limited-alloc") {
            0
        } else {
            self.rss_mb
        }
    }

    /// Starts the RSS watcher in a driver without a fork server (sanitizer
    /// builds; the counting allocator covers the others). A fork server
    /// watches its children itself.
    pub fn watch_rss(&self) {
        if cfg!(feature = "limited-alloc") || self.rss_mb == 0 {
            return;
        }
        let _ = std::thread::Builder::new()
            .name("rc-rss-watch".into())
            .spawn(|| loop {
                std::thread::sleep(std::time::Duration::from_millis(100));
                check_rss();
            });
    }
}

/// After each input: the peak RSS it reached counts against it.
pub fn after_input() {
    if !cfg!(feature = "limited-alloc") {
        check_rss();
    }
}

fn peak_rss_mb() -> usize {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0;
    }
    (usage.ru_maxrss.max(0) as usize) >> 10
}

fn check_rss() {
    let limit = RSS_LIMIT_MB.load(Ordering::Relaxed);
    if limit == 0 {
        return;
    }
    let peak = peak_rss_mb();
    if peak > limit {
        let mut line = Line::new();
        line.pid_prefix();
        line.text(" ERROR: libFuzzer: out-of-memory (used: ");
        line.num(peak);
        line.text("Mb; limit: ");
        line.num(limit);
        line.text("Mb)\n   To change the out-of-memory limit use -rss_limit_mb=<N>\n\n");
        line.text("SUMMARY: libFuzzer: out-of-memory\n");
        line.write();
        unsafe { libc::_exit(OOM_EXIT) }
    }
}

/// A message built on the stack (reporting must not allocate).
struct Line {
    buf: [u8; 512],
    len: usize,
}

impl Line {
    fn new() -> Line {
        Line {
            buf: [0; 512],
            len: 0,
        }
    }

    fn text(&mut self, s: &str) {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
    }

    fn num(&mut self, mut v: usize) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        let s = unsafe { std::str::from_utf8_unchecked(&digits[i..]) };
        self.text(s);
    }

    fn pid_prefix(&mut self) {
        self.text("==");
        self.num(std::process::id() as usize);
        self.text("==");
    }

    fn write(&self) {
        let mut at = 0;
        while at < self.len {
            let n = unsafe { libc::write(2, self.buf[at..].as_ptr().cast(), self.len - at) };
            if n <= 0 {
                break;
            }
            at += n as usize;
        }
    }
}

/// libFuzzer's malloc limit through the sanitizer's malloc hooks.
#[cfg(all(not(feature = "limited-alloc"), rc_sanitizer = "address"))]
mod hooks {
    use super::{Line, MALLOC_LIMIT_MB, OOM_EXIT};
    use std::os::raw::c_void;
    use std::sync::atomic::{AtomicUsize, Ordering};

    unsafe extern "C" {
        fn __sanitizer_install_malloc_and_free_hooks(
            malloc_hook: extern "C" fn(*const c_void, usize),
            free_hook: extern "C" fn(*const c_void),
        ) -> i32;
        fn __sanitizer_print_stack_trace();
    }

    pub unsafe fn install() {
        unsafe { __sanitizer_install_malloc_and_free_hooks(malloc_hook, free_hook) };
    }

    /// libFuzzer's hooks count every allocation and free (`MallocFreeTracer`);
    /// so do these, for the same cost per call.
    static MALLOCS: AtomicUsize = AtomicUsize::new(0);
    static FREES: AtomicUsize = AtomicUsize::new(0);

    extern "C" fn malloc_hook(_ptr: *const c_void, size: usize) {
        MALLOCS.fetch_add(1, Ordering::Relaxed);
        let limit = MALLOC_LIMIT_MB.load(Ordering::Relaxed);
        if limit == 0 || (size >> 20) < limit {
            return;
        }
        let mut line = Line::new();
        line.pid_prefix();
        line.text(" ERROR: libFuzzer: out-of-memory (malloc(");
        line.num(size);
        line.text("))\n   To change the out-of-memory limit use -rss_limit_mb=<N>\n\n");
        line.write();
        unsafe { __sanitizer_print_stack_trace() };
        let mut line = Line::new();
        line.text("SUMMARY: libFuzzer: out-of-memory\n");
        line.write();
        unsafe { libc::_exit(OOM_EXIT) }
    }

    extern "C" fn free_hook(_ptr: *const c_void) {
        FREES.fetch_add(1, Ordering::Relaxed);
    }
}

/// The counting allocator of builds without a sanitizer.
#[cfg(feature = "limited-alloc")]
mod alloc {
    use super::{Line, OOM_EXIT};
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicUsize, Ordering};

    static LIVE: AtomicUsize = AtomicUsize::new(0);
    static RSS_LIMIT: AtomicUsize = AtomicUsize::new(0);
    static MALLOC_LIMIT: AtomicUsize = AtomicUsize::new(0);

    pub fn activate(rss_mb: usize, malloc_mb: usize) {
        // The malloc limit must be in place before the heap limit switches
        // checks on.
        MALLOC_LIMIT.store(
            if malloc_mb == 0 {
                usize::MAX
            } else {
                malloc_mb.saturating_mul(1 << 20)
            },
            Ordering::Relaxed,
        );
        RSS_LIMIT.store(rss_mb.saturating_mul(1 << 20), Ordering::Relaxed);
    }

    /// The system allocator with libFuzzer-style limits: a single allocation
    /// larger than the malloc limit, or live heap above the RSS limit, is
    /// reported as out-of-memory instead of taking the machine down.
    pub struct LimitedAlloc;

    #[global_allocator]
    static ALLOCATOR: LimitedAlloc = LimitedAlloc;

    unsafe impl GlobalAlloc for LimitedAlloc {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            check_limits(layout.size());
            let p = unsafe { System.alloc(layout) };
            if !p.is_null() {
                LIVE.fetch_add(layout.size(), Ordering::Relaxed);
            }
            p
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            check_limits(layout.size());
            let p = unsafe { System.alloc_zeroed(layout) };
            if !p.is_null() {
                LIVE.fetch_add(layout.size(), Ordering::Relaxed);
            }
            p
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { System.dealloc(ptr, layout) };
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            if new_size > layout.size() {
                check_limits(new_size - layout.size());
            }
            let p = unsafe { System.realloc(ptr, layout, new_size) };
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
            let mut line = Line::new();
            line.pid_prefix();
            line.text(" ERROR: cargo-reduce-crash: out-of-memory (allocation of ");
            line.num(size);
            line.text(" bytes with ");
            line.num(live);
            line.text(" bytes live exceeds the limit)\n");
            line.write();
            unsafe { libc::_exit(OOM_EXIT) }
        }
    }
}
