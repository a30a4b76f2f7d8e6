//! What running one input did, and when two crashes are "the same".
//!
//! Reduction is only useful if it keeps the bug: an input that crashes
//! somewhere else is a different bug, not a smaller version of this one
//! (libFuzzer's `-minimize_crash` without sanitizer dedup tokens accepts any
//! crash and slips). Every outcome is classified into an [`Outcome`]; a crash
//! carries a [`Signature`], and [`MatchMode`] decides which signatures count
//! as the original's.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The result of running the target on one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The target returned normally and kept the input.
    Pass,
    /// The target returned `-1`/`Corpus::Reject`, the input was shorter than
    /// the typed target's `size_hint`, or it did not decode.
    Reject,
    /// Anything libFuzzer would report as a failure.
    Crash(Signature),
}

impl Outcome {
    pub fn signature(&self) -> Option<&Signature> {
        match self {
            Outcome::Crash(s) => Some(s),
            _ => None,
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Reject => "reject",
            Outcome::Crash(_) => "crash",
        }
    }
}

/// The kind of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CrashKind {
    /// A Rust panic (including one the target caught itself).
    Panic,
    /// `std::process::abort()` or another SIGABRT that is not a stack overflow.
    Abort,
    /// The main thread ran out of stack.
    StackOverflow,
    /// The heap limit (`--rss-limit-mb`) or a failed allocation.
    OutOfMemory,
    /// The input ran longer than the timeout.
    Timeout,
    /// Killed by another signal (SIGSEGV, SIGILL, SIGBUS, SIGFPE, ...).
    Signal(i32),
    /// The target called `std::process::exit` (libFuzzer reports this too).
    Exit(i32),
    /// A sanitizer report (`-s address` etc. on nightly); the message names
    /// the sanitizer and the error, e.g. `AddressSanitizer: heap-buffer-overflow`.
    Sanitizer,
}

impl CrashKind {
    /// Stable machine name: `panic`, `abort`, `stack-overflow`,
    /// `out-of-memory`, `timeout`, `signal`, `exit`, `sanitizer`.
    pub fn id(&self) -> &'static str {
        match self {
            CrashKind::Panic => "panic",
            CrashKind::Abort => "abort",
            CrashKind::StackOverflow => "stack-overflow",
            CrashKind::OutOfMemory => "out-of-memory",
            CrashKind::Timeout => "timeout",
            CrashKind::Signal(_) => "signal",
            CrashKind::Exit(_) => "exit",
            CrashKind::Sanitizer => "sanitizer",
        }
    }

    /// The signal number or exit status, for `signal` and `exit`.
    pub fn code(&self) -> Option<i32> {
        match self {
            CrashKind::Signal(n) | CrashKind::Exit(n) => Some(*n),
            _ => None,
        }
    }

    /// The inverse of [`id`](Self::id) and [`code`](Self::code).
    pub fn from_id(id: &str, code: Option<i32>) -> Option<CrashKind> {
        Some(match (id, code) {
            ("panic", _) => CrashKind::Panic,
            ("abort", _) => CrashKind::Abort,
            ("stack-overflow", _) => CrashKind::StackOverflow,
            ("out-of-memory", _) => CrashKind::OutOfMemory,
            ("timeout", _) => CrashKind::Timeout,
            ("signal", Some(n)) => CrashKind::Signal(n),
            ("exit", Some(n)) => CrashKind::Exit(n),
            ("sanitizer", _) => CrashKind::Sanitizer,
            _ => return None,
        })
    }

    pub fn name(&self) -> String {
        match self {
            CrashKind::Panic => "panic".into(),
            CrashKind::Abort => "abort".into(),
            CrashKind::StackOverflow => "stack-overflow".into(),
            CrashKind::OutOfMemory => "out-of-memory".into(),
            CrashKind::Timeout => "timeout".into(),
            CrashKind::Signal(n) => format!("signal {} ({})", n, signal_name(*n)),
            CrashKind::Exit(n) => format!("exit {n}"),
            CrashKind::Sanitizer => "sanitizer".into(),
        }
    }
}

fn signal_name(n: i32) -> &'static str {
    match n {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTRAP => "SIGTRAP",
        _ => "signal",
    }
}

/// Identity of a crash: kind, plus where and what for panics.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Signature {
    pub kind: CrashKind,
    /// The panic message (or a short description for other kinds).
    pub message: Option<String>,
    /// `file:line:col` of the panic, paths as cargo-fuzz's own build prints them.
    pub location: Option<String>,
}

impl Signature {
    pub fn new(kind: CrashKind) -> Self {
        Signature {
            kind,
            message: None,
            location: None,
        }
    }

    pub fn panic(message: impl Into<String>, location: impl Into<String>) -> Self {
        let location = location.into();
        Signature {
            kind: CrashKind::Panic,
            message: Some(message.into()),
            location: (!location.is_empty()).then_some(location),
        }
    }
}

/// JSON: `{"kind": "panic", "code": null, "message": "...", "location": "src/lib.rs:3:9"}`.
impl Serialize for Signature {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = ser.serialize_struct("Signature", 4)?;
        st.serialize_field("kind", self.kind.id())?;
        st.serialize_field("code", &self.kind.code())?;
        st.serialize_field("message", &self.message)?;
        st.serialize_field("location", &self.location)?;
        st.end()
    }
}

/// Reads the JSON form back (records of earlier runs store signatures).
impl<'de> Deserialize<'de> for Signature {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            kind: String,
            code: Option<i32>,
            message: Option<String>,
            location: Option<String>,
        }
        let raw = Raw::deserialize(de)?;
        let kind = CrashKind::from_id(&raw.kind, raw.code).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown crash kind `{}`", raw.kind))
        })?;
        Ok(Signature {
            kind,
            message: raw.message,
            location: raw.location,
        })
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.kind.name())?;
        if let Some(loc) = &self.location {
            write!(f, " at {loc}")?;
        }
        if let Some(msg) = &self.message {
            let first = msg.lines().next().unwrap_or("");
            let short: String = first.chars().take(120).collect();
            write!(f, ": {short}")?;
            if short.len() < msg.len() {
                f.write_str("…")?;
            }
        }
        Ok(())
    }
}

/// How strictly a candidate's crash must match the original's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MatchMode {
    /// Any crash, like `cargo fuzz tmin` (may slip to another bug).
    Any,
    /// Same kind (panic, abort, timeout, ...).
    Kind,
    /// Same kind and location (the default).
    #[default]
    Location,
    /// Same kind, location and message.
    Message,
}

impl MatchMode {
    pub fn matches(self, expected: &Signature, got: &Signature) -> bool {
        match self {
            MatchMode::Any => true,
            MatchMode::Kind => expected.kind == got.kind,
            MatchMode::Location => expected.kind == got.kind && expected.location == got.location,
            MatchMode::Message => expected == got,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MatchMode::Any => "any",
            MatchMode::Kind => "kind",
            MatchMode::Location => "location",
            MatchMode::Message => "message",
        }
    }
}

impl FromStr for MatchMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "any" => Ok(MatchMode::Any),
            "kind" => Ok(MatchMode::Kind),
            "location" => Ok(MatchMode::Location),
            "message" => Ok(MatchMode::Message),
            _ => Err(format!(
                "unknown match mode `{s}` (expected any, kind, location or message)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_identity_is_kind_and_location() {
        let a = Signature::panic(
            "index out of bounds: the len is 3 but the index is 9",
            "src/lib.rs:4:5",
        );
        let a2 = Signature::panic(
            "index out of bounds: the len is 2 but the index is 2",
            "src/lib.rs:4:5",
        );
        let b = Signature::panic("boom", "src/lib.rs:9:5");
        let m = MatchMode::default();
        assert!(m.matches(&a, &a2));
        assert!(!m.matches(&a, &b));
        assert!(!MatchMode::Message.matches(&a, &a2));
        assert!(MatchMode::Kind.matches(&a, &b));
        assert!(!MatchMode::Kind.matches(&a, &Signature::new(CrashKind::Abort)));
        assert!(MatchMode::Any.matches(&a, &Signature::new(CrashKind::Timeout)));
    }

    #[test]
    fn signatures_read_back_what_they_write() {
        for sig in [
            Signature::panic("boom", "src/lib.rs:1:2"),
            Signature::new(CrashKind::Signal(11)),
            Signature::new(CrashKind::Exit(3)),
            Signature::new(CrashKind::Timeout),
        ] {
            let json = serde_json::to_string(&sig).unwrap();
            let back: Signature = serde_json::from_str(&json).unwrap();
            assert_eq!(back, sig, "{json}");
        }
        let bad = r#"{"kind":"signal","code":null,"message":null,"location":null}"#;
        assert!(serde_json::from_str::<Signature>(bad).is_err());
    }

    #[test]
    fn display_is_one_line() {
        let s = Signature::panic("line one\nline two", "src/lib.rs:1:1");
        assert_eq!(s.to_string(), "panic at src/lib.rs:1:1: line one…");
        assert_eq!(
            Signature::new(CrashKind::Signal(11)).to_string(),
            "signal 11 (SIGSEGV)"
        );
    }
}
