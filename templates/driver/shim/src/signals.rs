//! Stack overflows in builds without a sanitizer.
//!
//! The target file is the crate root and says `#![no_main]`, so Rust's own
//! runtime set-up (which reports a main-thread stack overflow as `thread
//! '…' has overflowed its stack`) never runs, as under libFuzzer. With a
//! sanitizer, its SEGV handler reports stack overflows; without one, this
//! handler does the same job on an alternate stack: a fault just below the
//! main thread's stack is reported with Rust's message and aborts, anything
//! else dies of the signal as it would have.

#[cfg(rc_no_sanitizer)]
mod handler {
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Lowest address the main thread's stack may grow to.
    static STACK_LOW: AtomicUsize = AtomicUsize::new(0);
    const ALT_STACK: usize = 64 * 1024;
    const MESSAGE: &[u8] =
        b"\nthread '<unnamed>' has overflowed its stack\nfatal runtime error: stack overflow, aborting\n";

    pub fn install() {
        unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) == 0 {
                let mut addr: *mut libc::c_void = std::ptr::null_mut();
                let mut size: libc::size_t = 0;
                if libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0 {
                    STACK_LOW.store(addr as usize, Ordering::Relaxed);
                }
                libc::pthread_attr_destroy(&mut attr);
            }
            let mem = libc::mmap(
                std::ptr::null_mut(),
                ALT_STACK,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if mem == libc::MAP_FAILED {
                return;
            }
            let stack = libc::stack_t {
                ss_sp: mem,
                ss_flags: 0,
                ss_size: ALT_STACK,
            };
            libc::sigaltstack(&stack, std::ptr::null_mut());
            for sig in [libc::SIGSEGV, libc::SIGBUS] {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fault as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
        }
    }

    extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
        let addr = unsafe { (*info).si_addr() } as usize;
        let low = STACK_LOW.load(Ordering::Relaxed);
        let page = 4096;
        if low != 0 && addr < low + page && addr >= low.saturating_sub(256 * page) {
            unsafe {
                libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
                libc::abort();
            }
        }
        // Not a stack overflow: die of the signal, as without this handler.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
}

/// Installs the stack-overflow handler where the build needs one.
pub fn install() {
    #[cfg(rc_no_sanitizer)]
    handler::install();
}
