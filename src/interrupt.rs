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

/// Installs the SIGINT/SIGTERM handlers (idempotent).
pub fn install() {
    unsafe {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// Has the user asked us to stop?
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}
