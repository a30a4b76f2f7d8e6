//! Ctrl-C and SIGTERM: stop testing, keep the best result; a second one
//! stops at once.
//!
//! The first signal only sets a flag. The oracle checks it before every
//! test and, once it is set, answers "not interesting" to everything, so
//! every reducer winds down within a few cheap steps and the session checks
//! its best result in a fresh process and writes it. The driver runs in its
//! own process group, so the terminal's Ctrl-C does not kill it mid-test.
//!
//! That check can take a while (a hang runs to its limit), so a second
//! signal (Ctrl-C again, or SIGTERM after one) stops at once, from the
//! handler itself: it kills the process group of every live driver (see
//! [`Group`]), says so on stderr and `_exit`s with 130, writing nothing
//! more. Only async-signal-safe calls are made there (`kill`, `write`,
//! `_exit`), on a fixed table of atomics. Two short stretches put it off
//! until they end ([`Hold`]): starting a driver (until its group is
//! registered) and writing a result file (a verified one: letting it finish
//! leaves no temporary file behind).
//!
//! The handlers are installed without `SA_RESTART`: a blocking call on the
//! thread that takes the signal returns `EINTR` and can look at the flag.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering::SeqCst};

/// The first signal came.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// A second signal came while a [`Hold`] was held: the last one to end stops.
static STOP_PENDING: AtomicBool = AtomicBool::new(false);
/// Someone is stopping the process (only one does).
static STOPPING: AtomicBool = AtomicBool::new(false);
/// [`Hold`]s alive.
static HELD: AtomicUsize = AtomicUsize::new(0);
/// Whether stderr is a terminal (a progress line may be on it).
static STDERR_TTY: AtomicBool = AtomicBool::new(false);

/// Live drivers' process groups (0: a free slot). More drivers than slots
/// at once is far beyond any `-j`; one that finds no slot is only not
/// killed by a second signal (it still ends once this process is gone).
const GROUPS: usize = 1024;
static LIVE_GROUPS: [AtomicI32; GROUPS] = [const { AtomicI32::new(0) }; GROUPS];

extern "C" fn on_signal(_: libc::c_int) {
    if !INTERRUPTED.swap(true, SeqCst) {
        return;
    }
    // The second signal. Order matters: a `Hold` ending after this store
    // sees it; one ending before this load is not counted.
    STOP_PENDING.store(true, SeqCst);
    if HELD.load(SeqCst) == 0 {
        stop_now();
    }
}

/// Kills every live driver's process group, says so and exits 130.
/// Async-signal-safe.
fn stop_now() -> ! {
    if STOPPING.swap(true, SeqCst) {
        // Another thread is at it; it exits the process.
        loop {
            unsafe { libc::pause() };
        }
    }
    kill_all_drivers();
    let note: &[u8] = if STDERR_TTY.load(SeqCst) {
        b"\r\x1b[Kinterrupted again: stopped without writing anything more\n"
    } else {
        b"interrupted again: stopped without writing anything more\n"
    };
    unsafe {
        libc::write(2, note.as_ptr().cast(), note.len());
        libc::_exit(crate::exit_code::INTERRUPTED);
    }
}

/// Sends SIGKILL to every live driver's process group. Async-signal-safe
/// (the panic hook uses it too, before exiting).
pub fn kill_all_drivers() {
    for slot in &LIVE_GROUPS {
        let pgid = slot.load(SeqCst);
        if pgid > 0 {
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
    }
}

/// Installs the SIGINT/SIGTERM handlers (idempotent).
pub fn install() {
    STDERR_TTY.store(unsafe { libc::isatty(2) } == 1, SeqCst);
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // No SA_RESTART: a blocking call returns EINTR instead of going on.
        action.sa_flags = 0;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
    }
}

/// Has the user asked us to stop?
pub fn requested() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// A driver's process group, registered while it lives so that a second
/// signal (or the panic hook) can kill it; unregistered by
/// [`Group::release`] once the driver is reaped, or when dropped.
#[derive(Debug)]
pub struct Group {
    slot: Option<usize>,
}

impl Group {
    /// Registers the process group `pgid` (a driver's pid: it leads its
    /// own group).
    pub fn register(pgid: i32) -> Group {
        let slot = (pgid > 0)
            .then(|| {
                LIVE_GROUPS
                    .iter()
                    .position(|s| s.compare_exchange(0, pgid, SeqCst, SeqCst).is_ok())
            })
            .flatten();
        Group { slot }
    }

    /// The group is gone (its leader reaped): never kill it again, since
    /// its number may be reused.
    pub fn release(&mut self) {
        if let Some(i) = self.slot.take() {
            LIVE_GROUPS[i].store(0, SeqCst);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.release();
    }
}

/// Puts off a second signal's stop while it lives (starting a driver until
/// its group is registered; writing a result file): the last `Hold` to end
/// stops then.
#[must_use]
pub struct Hold(());

/// See [`Hold`].
pub fn hold() -> Hold {
    HELD.fetch_add(1, SeqCst);
    Hold(())
}

impl Drop for Hold {
    fn drop(&mut self) {
        if HELD.fetch_sub(1, SeqCst) == 1 && STOP_PENDING.load(SeqCst) {
            stop_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_take_free_slots_and_give_them_back() {
        let value = |g: &Group| LIVE_GROUPS[g.slot.expect("a slot")].load(SeqCst);
        let mut a = Group::register(i32::MAX - 1);
        let b = Group::register(i32::MAX - 2);
        assert_eq!((value(&a), value(&b)), (i32::MAX - 1, i32::MAX - 2));
        let slot = a.slot.unwrap();
        a.release();
        a.release();
        assert_ne!(LIVE_GROUPS[slot].load(SeqCst), i32::MAX - 1);
        let slot = b.slot.unwrap();
        drop(b);
        assert_ne!(LIVE_GROUPS[slot].load(SeqCst), i32::MAX - 2);
        assert!(Group::register(0).slot.is_none());
    }
}
