//! The tool's own panics: a bug in cargo-reduce-crash, reported as exit 1
//! (`exit_code::INTERNAL`, what the README promises for an internal error)
//! with one line naming where, instead of Rust's default message and exit
//! 101 (which is `exit_code::BUILD_FAILED`).
//!
//! The hook ends the process itself, whichever thread panicked: a helper
//! thread's panic must not leave the main thread waiting for an answer that
//! never comes. It kills the live drivers first (they are in their own
//! process groups; nothing unwinds to drop them).

use crate::exit_code;
use crate::session::report::FORMAT_VERSION;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// `--message-format json`: the error goes to stdout as a JSON object too.
static JSON: AtomicBool = AtomicBool::new(false);

/// Installs the hook (call first thing in `main`, before parsing arguments).
pub fn install() {
    std::panic::set_hook(Box::new(|info| {
        let location = info.location().map_or_else(
            || "an unknown place".to_owned(),
            |l| format!("{}:{}:{}", l.file(), l.line(), l.column()),
        );
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        let message = format!(
            "internal error at {location}: {}; please report it with the command line",
            message.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        report(&message);
        crate::interrupt::kill_all_drivers();
        std::process::exit(exit_code::INTERNAL);
    }));
}

/// Says whether errors also go to stdout as JSON (`--message-format json`).
pub fn set_json(json: bool) {
    JSON.store(json, Ordering::SeqCst);
}

fn report(message: &str) {
    if JSON.load(Ordering::SeqCst) {
        let object = serde_json::json!({
            "reason": "error", "format_version": FORMAT_VERSION,
            "message": message, "exit_code": exit_code::INTERNAL,
        });
        let _ = writeln!(std::io::stdout(), "{object}");
    }
    let mut stderr = std::io::stderr().lock();
    // A progress line may be on the terminal.
    let clear = if stderr.is_terminal() { "\r\x1b[K" } else { "" };
    let _ = writeln!(stderr, "{clear}error: {message}");
    // A backtrace only when asked for, as Rust's own hook does.
    if std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0") {
        let _ = writeln!(stderr, "{}", std::backtrace::Backtrace::force_capture());
    }
}
