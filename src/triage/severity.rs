//! How bad a bug is, from what its classification already knows.
//!
//! CASR's three tiers (EXPLOITABLE, PROBABLY_EXPLOITABLE, NOT_EXPLOITABLE)
//! with a class name per crash, and the `security-severity` number GitHub
//! code scanning reads (over 9.0 critical, 7.0–8.9 high, 4.0–6.9 medium,
//! up to 3.9 low). The mapping, the table in `docs/triage.md`:
//!
//! | crash | class | tier | security-severity |
//! |---|---|---|---|
//! | buffer overflow (heap, stack, global, container), WRITE | `<error>(write)` | EXPLOITABLE | 8.0 |
//! | use-after-free / use-after-return / use-after-scope, WRITE | `<error>(write)` | EXPLOITABLE | 8.0 |
//! | double-free, bad-free (invalid free, free of non-heap memory) | `<error>` | EXPLOITABLE | 8.0 |
//! | SEGV writing at a wild address (64 KiB or more) | `SEGV(write)` | EXPLOITABLE | 9.0 |
//! | buffer overflow, use-after-*, READ (or unknown access) | `<error>(read)` | PROBABLY_EXPLOITABLE | 6.0 |
//! | SEGV reading at a wild address; other memory errors (`memcpy-param-overlap`, `unknown-crash`) | `SEGV(read)`, `<error>` | PROBABLY_EXPLOITABLE | 5.0 |
//! | SEGV near null (under 64 KiB) | `SEGV(near-null)` | NOT_EXPLOITABLE | 3.0 |
//! | stack overflow | `stack-overflow` | NOT_EXPLOITABLE | 3.0 |
//! | out of memory: one allocation over the limit, RSS over the limit, `allocation-size-too-big` | `out-of-memory(malloc)`, `out-of-memory(rss)`, `allocation-size-too-big` | NOT_EXPLOITABLE | 3.0 |
//! | timeout | `timeout` | NOT_EXPLOITABLE | 3.0 |
//! | memory leak | `memory-leak` | NOT_EXPLOITABLE | 2.0 |
//! | Rust panic: arithmetic overflow, index out of bounds, slicing, `unwrap`/`expect`, assertion, explicit `panic!`/`unreachable!` | `panic(overflow)`, `panic(index)`, `panic(unwrap)`, `panic(assert)`, `panic(explicit)` | NOT_EXPLOITABLE | 2.0 |
//! | abort, another signal, `exit()` | `abort`, `signal`, `exit` | NOT_EXPLOITABLE | 2.0 |
//!
//! A Rust panic is a controlled stop (a denial of service at worst); a
//! memory error in `unsafe` code is what an attacker can use, the more so
//! when it writes. Without an access in the report (a build without a
//! sanitizer), an error is taken as a read.

use crate::run::outcome::{CrashDetails, CrashKind, Signature};
use serde::{Deserialize, Serialize};

/// CASR's tiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Tier {
    NotExploitable,
    ProbablyExploitable,
    Exploitable,
}

impl Tier {
    pub fn name(self) -> &'static str {
        match self {
            Tier::Exploitable => "EXPLOITABLE",
            Tier::ProbablyExploitable => "PROBABLY_EXPLOITABLE",
            Tier::NotExploitable => "NOT_EXPLOITABLE",
        }
    }
}

/// A bug's severity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Severity {
    pub tier: Tier,
    /// The crash class, e.g. `heap-buffer-overflow(write)`, `panic(index)`.
    pub class: String,
    /// GitHub code scanning's `security-severity`, 0.0–10.0.
    pub security_severity: f64,
}

/// Addresses below this are near null (CASR's and !exploitable's bound).
const NEAR_NULL: u64 = 64 * 1024;

/// The severity of a crash with `sig` (and its report's `details`).
pub fn severity(sig: &Signature, details: Option<&CrashDetails>) -> Severity {
    let make = |tier, class: String, security_severity| Severity {
        tier,
        class,
        security_severity,
    };
    let write = details.and_then(|d| d.access).map(|a| a.write);
    let rw = |w: Option<bool>| if w == Some(true) { "write" } else { "read" };
    match sig.kind {
        CrashKind::Sanitizer => {
            let error = sig
                .sanitizer_error()
                .and_then(|e| e.split_once(": ").map(|(_, e)| e))
                .unwrap_or("unknown-crash");
            let memory = error.contains("overflow") && !error.contains("stack-overflow")
                || error.starts_with("heap-use-after-free")
                || error.starts_with("stack-use-after")
                || error.starts_with("use-after-poison")
                || error.starts_with("container-overflow");
            if error == "SEGV" {
                let address = details.and_then(|d| d.address);
                if address.is_some_and(|a| a < NEAR_NULL) {
                    return make(Tier::NotExploitable, "SEGV(near-null)".into(), 3.0);
                }
                return match write {
                    Some(true) => make(Tier::Exploitable, "SEGV(write)".into(), 9.0),
                    _ => make(Tier::ProbablyExploitable, "SEGV(read)".into(), 5.0),
                };
            }
            if error == "double-free" || error.starts_with("bad-free") || error == "attempting" {
                return make(Tier::Exploitable, error.to_owned(), 8.0);
            }
            if error == "allocation-size-too-big"
                || error.contains("out-of-memory")
                || error.contains("out of memory")
                || error == "rss-limit-exceeded"
            {
                return make(Tier::NotExploitable, error.to_owned(), 3.0);
            }
            if error.contains("leak") {
                return make(Tier::NotExploitable, "memory-leak".into(), 2.0);
            }
            if memory {
                return match write {
                    Some(true) => make(Tier::Exploitable, format!("{error}(write)"), 8.0),
                    _ => make(
                        Tier::ProbablyExploitable,
                        format!("{error}({})", rw(write)),
                        6.0,
                    ),
                };
            }
            make(Tier::ProbablyExploitable, error.to_owned(), 5.0)
        }
        CrashKind::StackOverflow => make(Tier::NotExploitable, "stack-overflow".into(), 3.0),
        CrashKind::MallocLimit => make(Tier::NotExploitable, "out-of-memory(malloc)".into(), 3.0),
        // Without a sanitizer the driver's counting allocator reports one
        // allocation over the limit as `allocation of N bytes …`.
        CrashKind::OutOfMemory
            if sig
                .message
                .as_deref()
                .is_some_and(|m| m.starts_with("allocation of")) =>
        {
            make(Tier::NotExploitable, "out-of-memory(malloc)".into(), 3.0)
        }
        CrashKind::OutOfMemory => make(Tier::NotExploitable, "out-of-memory(rss)".into(), 3.0),
        CrashKind::Timeout => make(Tier::NotExploitable, "timeout".into(), 3.0),
        CrashKind::Panic => make(
            Tier::NotExploitable,
            format!(
                "panic({})",
                panic_class(sig.message.as_deref().unwrap_or(""))
            ),
            2.0,
        ),
        CrashKind::Abort => make(Tier::NotExploitable, "abort".into(), 2.0),
        CrashKind::Signal(_) => make(Tier::NotExploitable, "signal".into(), 2.0),
        CrashKind::Exit(_) => make(Tier::NotExploitable, "exit".into(), 2.0),
    }
}

/// What kind of panic a message is: `overflow`, `index`, `unwrap`,
/// `assert`, `explicit`.
pub fn panic_class(message: &str) -> &'static str {
    let m = message;
    if m.starts_with("attempt to ") && m.contains("with overflow")
        || m.contains("overflow") && (m.starts_with("attempt to") || m.contains("arithmetic"))
        || m.starts_with("attempt to divide by zero")
        || m.starts_with("attempt to calculate the remainder with a divisor of zero")
        || m == "capacity overflow"
    {
        "overflow"
    } else if m.starts_with("index out of bounds")
        || m.contains("out of range for slice")
        || m.contains("out of range for str")
        || m.starts_with("byte index")
        || m.starts_with("slice index starts at")
        || m.starts_with("range start index")
        || m.starts_with("range end index")
    {
        "index"
    } else if m.starts_with("called `Option::unwrap()`")
        || m.starts_with("called `Result::unwrap()`")
        || m.starts_with("called `Option::expect()`")
        || m.starts_with("called `Result::unwrap_err()`")
    {
        "unwrap"
    } else if m.starts_with("assertion failed") || m.starts_with("assertion `") {
        "assert"
    } else {
        "explicit"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::outcome::Access;

    fn sanitizer(error: &str, write: Option<bool>, address: Option<u64>) -> Severity {
        let mut sig = Signature::new(CrashKind::Sanitizer);
        sig.message = Some(format!("AddressSanitizer: {error}"));
        let details = CrashDetails {
            access: write.map(|write| Access {
                write,
                size: Some(4),
            }),
            address,
            frames: Vec::new(),
        };
        severity(&sig, Some(&details))
    }

    #[test]
    fn writes_are_worse_than_reads_and_panics_are_not_exploitable() {
        let w = sanitizer("heap-buffer-overflow", Some(true), None);
        assert_eq!(
            (w.tier, w.class.as_str()),
            (Tier::Exploitable, "heap-buffer-overflow(write)")
        );
        assert_eq!(w.security_severity, 8.0);
        let r = sanitizer("heap-buffer-overflow", Some(false), None);
        assert_eq!(r.tier, Tier::ProbablyExploitable);
        assert_eq!(
            sanitizer("heap-use-after-free", Some(false), None).class,
            "heap-use-after-free(read)"
        );
        assert_eq!(sanitizer("double-free", None, None).tier, Tier::Exploitable);
        assert_eq!(
            sanitizer("SEGV", Some(false), Some(0x10)).class,
            "SEGV(near-null)"
        );
        assert_eq!(
            sanitizer("SEGV", Some(true), Some(0xdead_0000)).security_severity,
            9.0
        );
        assert_eq!(
            sanitizer("allocation-size-too-big", None, None).tier,
            Tier::NotExploitable
        );
        assert_eq!(
            sanitizer("stack-buffer-overflow", Some(true), None).tier,
            Tier::Exploitable
        );

        let p = |m: &str| severity(&Signature::panic(m, "src/lib.rs:1:1"), None).class;
        assert_eq!(p("attempt to add with overflow"), "panic(overflow)");
        assert_eq!(
            p("index out of bounds: the len is 3 but the index is 7"),
            "panic(index)"
        );
        assert_eq!(
            p("range end index 9 out of range for slice of length 4"),
            "panic(index)"
        );
        assert_eq!(
            p("called `Option::unwrap()` on a `None` value"),
            "panic(unwrap)"
        );
        assert_eq!(p("assertion `left == right` failed"), "panic(assert)");
        assert_eq!(p("boom"), "panic(explicit)");
        let panic = severity(&Signature::panic("boom", "x"), None);
        assert_eq!(
            (panic.tier, panic.security_severity),
            (Tier::NotExploitable, 2.0)
        );
        assert!(Tier::Exploitable > Tier::ProbablyExploitable);
        assert_eq!(
            serde_json::to_value(Tier::ProbablyExploitable).unwrap(),
            "PROBABLY_EXPLOITABLE"
        );
    }
}
