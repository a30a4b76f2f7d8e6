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
    /// Memory over the limit (`-rss_limit_mb`: the peak RSS with a
    /// sanitizer, the live heap without one) or a failed allocation.
    OutOfMemory,
    /// One allocation of `-malloc_limit_mb` or more (libFuzzer's
    /// `out-of-memory (malloc(N))`, seen through a sanitizer's malloc hook).
    MallocLimit,
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
    /// `out-of-memory`, `malloc-limit`, `timeout`, `signal`, `exit`, `sanitizer`.
    pub fn id(&self) -> &'static str {
        match self {
            CrashKind::Panic => "panic",
            CrashKind::Abort => "abort",
            CrashKind::StackOverflow => "stack-overflow",
            CrashKind::OutOfMemory => "out-of-memory",
            CrashKind::MallocLimit => "malloc-limit",
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
            ("malloc-limit", _) => CrashKind::MallocLimit,
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
            CrashKind::MallocLimit => "out-of-memory (malloc limit)".into(),
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

/// Identity of a crash: kind, plus where (and what) it happened.
///
/// [`Signature::details`] rides along outside the identity: two signatures
/// are equal (and hash alike) by kind, message, location and function only,
/// and the JSON form leaves the details out.
#[derive(Debug, Clone)]
pub struct Signature {
    pub kind: CrashKind,
    /// The panic message; for a sanitizer report the sanitizer and its error
    /// (`AddressSanitizer: heap-buffer-overflow`); a short description for
    /// other kinds.
    pub message: Option<String>,
    /// `file:line:col` of the panic, or of the first frame of a report in
    /// the target's or a dependency's code; panic paths as cargo-fuzz's own
    /// build prints them.
    pub location: Option<String>,
    /// The function of that first frame; for a stack overflow, the
    /// functions of the recursion cycle (`a ↔ b`).
    pub function: Option<String>,
    /// What the report said beyond the identity (the access, the stack),
    /// when the crash came with a report.
    pub details: Option<std::sync::Arc<CrashDetails>>,
}

impl PartialEq for Signature {
    fn eq(&self, other: &Self) -> bool {
        (&self.kind, &self.message, &self.location, &self.function)
            == (
                &other.kind,
                &other.message,
                &other.location,
                &other.function,
            )
    }
}

impl Eq for Signature {}

impl std::hash::Hash for Signature {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (&self.kind, &self.message, &self.location, &self.function).hash(state);
    }
}

/// What a crash report says beyond the crash's identity, for judging how
/// bad a bug is and for telling bugs apart by their stacks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashDetails {
    /// The faulting access: a write or a read, and its size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Access>,
    /// The address the report names (the faulting or freed address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<u64>,
    /// The stack from the crash down, in the target's and its dependencies'
    /// code (the runtime, the standard library and the harness left out),
    /// at most 32 frames.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<StackFrame>,
}

/// One frame of a crash's stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackFrame {
    /// The function, generic arguments dropped.
    pub function: String,
    /// `file:line:col`, when the debug info has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// A memory access a sanitizer reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    pub write: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl Signature {
    pub fn new(kind: CrashKind) -> Self {
        Signature {
            kind,
            message: None,
            location: None,
            function: None,
            details: None,
        }
    }

    pub fn panic(message: impl Into<String>, location: impl Into<String>) -> Self {
        let location = location.into();
        Signature {
            kind: CrashKind::Panic,
            message: Some(message.into()),
            location: (!location.is_empty()).then_some(location),
            function: None,
            details: None,
        }
    }

    /// The same signature with `details`.
    pub fn with_details(mut self, details: CrashDetails) -> Self {
        self.details = Some(std::sync::Arc::new(details));
        self
    }

    /// What a sanitizer calls the error (`heap-buffer-overflow`), which is
    /// part of the kind: a sanitizer message holds no values.
    pub fn sanitizer_error(&self) -> Option<&str> {
        match self.kind {
            CrashKind::Sanitizer => self.message.as_deref(),
            _ => None,
        }
    }

    /// Where a timeout hung: the innermost function of the target's or a
    /// dependency's that stayed on its stack while it was sampled at the
    /// deadline (`None`: no usable stack). Not part of [`identity`]
    /// (a reduction keeps "it hangs"); directory runs and triage keep
    /// two places apart.
    ///
    /// [`identity`]: Signature::identity
    pub fn hang_place(&self) -> Option<&str> {
        match self.kind {
            CrashKind::Timeout => self.function.as_deref(),
            _ => None,
        }
    }

    /// A panic no hook of ours saw (the target replaces the panic hook on
    /// every run): no location, and its message is what unwinding carried.
    /// Its identity under `--match location` is then that message, so that
    /// two such panics are not one.
    pub fn unplaced_panic(&self) -> bool {
        self.kind == CrashKind::Panic && self.location.is_none()
    }

    /// The parts of the signature `mode` compares, as one key: two
    /// signatures match exactly when their keys are equal.
    pub fn identity(&self, mode: MatchMode) -> Identity {
        let mut parts: Vec<Option<String>> = Vec::new();
        if mode == MatchMode::Any {
            return Identity(parts);
        }
        parts.push(Some(self.kind.name()));
        parts.push(self.sanitizer_error().map(str::to_owned));
        if matches!(mode, MatchMode::Location | MatchMode::Message) {
            parts.push(self.location.clone());
            // A stack overflow has no one place: the recursion is its identity.
            if self.kind == CrashKind::StackOverflow {
                parts.push(self.function.clone());
            }
        }
        if mode == MatchMode::Message || (mode == MatchMode::Location && self.unplaced_panic()) {
            parts.push(self.message.clone());
        }
        Identity(parts)
    }
}

/// The parts of a [`Signature`] a [`MatchMode`] compares.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Identity(Vec<Option<String>>);

/// JSON: `{"kind": "panic", "code": null, "message": "...", "location": "src/lib.rs:3:9", "function": null}`.
impl Serialize for Signature {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = ser.serialize_struct("Signature", 5)?;
        st.serialize_field("kind", self.kind.id())?;
        st.serialize_field("code", &self.kind.code())?;
        st.serialize_field("message", &self.message)?;
        st.serialize_field("location", &self.location)?;
        st.serialize_field("function", &self.function)?;
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
            #[serde(default)]
            function: Option<String>,
        }
        let raw = Raw::deserialize(de)?;
        let kind = CrashKind::from_id(&raw.kind, raw.code).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown crash kind `{}`", raw.kind))
        })?;
        Ok(Signature {
            kind,
            message: raw.message,
            location: raw.location,
            function: raw.function,
            details: None,
        })
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.sanitizer_error() {
            // `heap-buffer-overflow at src/lib.rs:7:13 in demo::check (AddressSanitizer)`
            Some(error) => {
                let (sanitizer, error) = error.split_once(": ").unwrap_or(("sanitizer", error));
                f.write_str(error)?;
                if let Some(loc) = &self.location {
                    write!(f, " at {loc}")?;
                }
                if let Some(func) = &self.function {
                    write!(f, " in {func}")?;
                }
                return write!(f, " ({sanitizer})");
            }
            None => f.write_str(&self.kind.name())?,
        }
        if self.unplaced_panic() {
            // `--match location` uses the message: say so.
            f.write_str(
                " (no location: the target's panic hook hides it; told apart by its message)",
            )?;
        }
        if let Some(loc) = &self.location {
            write!(f, " at {loc}")?;
        }
        if let Some(func) = &self.function {
            if self.kind == CrashKind::StackOverflow {
                write!(f, " in the recursion {func}")?;
            } else if self.kind != CrashKind::Panic {
                write!(f, " in {func}")?;
            }
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
    /// Same kind (panic, abort, timeout, a sanitizer's error such as
    /// heap-buffer-overflow, ...).
    Kind,
    /// Same kind and location: the panic's, or the first frame of a report
    /// in the target's or a dependency's code; for a stack overflow, the
    /// recursion's functions (the default).
    #[default]
    Location,
    /// Same kind, location and message.
    Message,
}

impl MatchMode {
    /// Same crash under this mode: the same [`Signature::identity`].
    pub fn matches(self, expected: &Signature, got: &Signature) -> bool {
        expected.identity(self) == got.identity(self)
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
    fn panics_without_a_location_are_told_apart_by_their_message() {
        let a = Signature::panic("called `Option::unwrap()` on a `None` value", "");
        let b = Signature::panic("bug B", "");
        assert!(a.unplaced_panic());
        assert!(!MatchMode::Location.matches(&a, &b));
        assert!(MatchMode::Location.matches(&a, &a.clone()));
        assert!(MatchMode::Kind.matches(&a, &b));
        assert!(b.to_string().contains("told apart by its message"), "{b}");
        // A placed panic still ignores its message.
        let c = Signature::panic("x", "src/lib.rs:1:1");
        assert!(MatchMode::Location.matches(&c, &Signature::panic("y", "src/lib.rs:1:1")));
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
