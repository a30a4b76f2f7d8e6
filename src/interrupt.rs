//! Ctrl-C and SIGTERM: stop testing, keep the best result.
//!
//! The handler only sets a flag. The oracle checks it before every test and,
//! once it is set, answers "not interesting" to everything, so every reducer
//! winds down within a few cheap steps and the session writes what it has.
//! The driver runs in its own process group, so the terminal's Ctrl-C does
//! not kill it mid-test.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs the SIGINT/SIGTERM handlers (idempotent). Without
/// `SA_RESTART`: a blocking call on the thread that takes the signal
/// returns `EINTR` and can look at the flag.
pub fn install() {
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = 0;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
    }
}

/// Has the user asked us to stop?
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}
