//! What a dying target printed, turned into a crash signature that names the
//! same bug the same way from run to run.
//!
//! A process that dies running an input leaves an exit status and some
//! text: a sanitizer report with a stack trace, libFuzzer-style
//! out-of-memory lines, Rust's stack-overflow message. This module reads
//! them as a person reading `cargo fuzz run`'s output would:
//!
//! * **Sanitizer reports**: the error (`heap-buffer-overflow`,
//!   `heap-use-after-free`, `SEGV`, `allocation-size-too-big`, …) and the
//!   first frame of the stack in the target's or a dependency's code
//!   (function and `file:line:col`), skipping the sanitizer runtime, the
//!   standard library and the harness. The driver runs with
//!   `symbolize=0`, so frames arrive as `(binary+0xoffset)` and are
//!   symbolized here from the binary's own debug info (no `llvm-symbolizer`
//!   process per crash), once per address.
//! * **Stack overflows**: the frame where the guard page is hit changes from
//!   run to run (and with the input), so the identity is the recursion
//!   itself: the functions of the cycle that repeats down the stack.
//! * **Memory limits**, as libFuzzer reports them: `out-of-memory
//!   (malloc(N))` for one allocation over `-malloc_limit_mb` (with its first
//!   user frame), `out-of-memory (used: …)` for the RSS; the sanitizer's own
//!   `allocation-size-too-big` stays a sanitizer error.
//!
//! About 650 lines with its tests: reports of every kind are parsed side by
//! side, so that what tells them apart is in one place.

use crate::run::outcome::{Access, CrashDetails, CrashKind, Signature, StackFrame};
use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

/// One frame of a stack trace, as printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawFrame {
    /// `(module+0xoffset)`: not symbolized.
    Address { module: String, offset: u64 },
    /// `in function file:line:col` (or without a location).
    Symbolized {
        function: String,
        location: Option<String>,
    },
}

/// A source-level frame: one of possibly several (inlined) per address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub function: Option<String>,
    /// `file:line:col`.
    pub location: Option<String>,
    /// In the driver binary itself (not libc or another shared library).
    pub in_binary: bool,
}

impl Frame {
    /// Code of the sanitizer runtime, the standard library, libFuzzer or
    /// libfuzzer-sys and its stand-in, rather than of the target or its
    /// dependencies.
    pub fn is_runtime(&self) -> bool {
        if !self.in_binary {
            return true;
        }
        let file = self.location.as_deref().unwrap_or("");
        let func = self.function.as_deref().unwrap_or("");
        if file.is_empty() && func.is_empty() {
            return true;
        }
        const RUNTIME_FILES: &[&str] = &[
            "/rustc/",
            "/library/std/",
            "/library/core/",
            "/library/alloc/",
            "compiler-rt/",
            "/sanitizer_common/",
            "/libfuzzer-sys-",
            "/libfuzzer-sys-shim/",
            "/libfuzzer/Fuzzer",
        ];
        const RUNTIME_FUNCTIONS: &[&str] = &[
            "__asan",
            "__sanitizer",
            "__interceptor",
            "___interceptor",
            "__lsan",
            "__ubsan",
            "__msan",
            "__tsan",
            "_Unwind",
            "__rust_",
            "rust_panic",
            "std::",
            "core::",
            "alloc::",
            "<alloc::",
            "<core::",
            "<std::",
            "fuzzer::",
            "libfuzzer_sys::",
            "__libc_",
            "_start",
        ];
        if RUNTIME_FILES.iter().any(|p| file.contains(p)) {
            return true;
        }
        // The shim (our libfuzzer-sys) wherever a build wrote it: beside
        // the faithful build as `<package>-shim`, in a generated package as
        // `shim`, both under the target directory's `reduce-crash/`.
        if file.contains("/reduce-crash/")
            && (file.contains("-shim/src/") || file.contains("/shim/src/"))
        {
            return true;
        }
        if file.is_empty() {
            // No line info: decide by the name (the sanitizer runtime's
            // interceptors, libc's wrappers).
            return RUNTIME_FUNCTIONS.iter().any(|p| func.starts_with(p))
                || matches!(
                    func,
                    "malloc"
                        | "calloc"
                        | "realloc"
                        | "free"
                        | "memcpy"
                        | "memmove"
                        | "memset"
                        | "abort"
                        | "raise"
                        | "main"
                );
        }
        RUNTIME_FUNCTIONS.iter().any(|p| func.starts_with(p))
    }
}

/// Turns code addresses of one binary into functions and source lines.
pub struct Symbolizer {
    binary: PathBuf,
    canonical: Option<PathBuf>,
    /// Loaded on first use; `None` inside when the binary has no usable
    /// debug info.
    loader: Option<Option<addr2line::Loader>>,
    cache: HashMap<u64, Vec<Frame>>,
}

impl Symbolizer {
    pub fn new(binary: &Path) -> Symbolizer {
        Symbolizer {
            binary: binary.to_owned(),
            canonical: binary.canonicalize().ok(),
            loader: None,
            cache: HashMap::new(),
        }
    }

    fn is_binary(&self, module: &str) -> bool {
        let m = Path::new(module);
        if m == self.binary || Some(m) == self.canonical.as_deref() {
            return true;
        }
        if m.canonicalize().ok().as_deref() == self.canonical.as_deref() && self.canonical.is_some()
        {
            return true;
        }
        m.file_name().is_some() && m.file_name() == self.binary.file_name()
    }

    /// The source frames at `offset` in the binary, innermost first.
    pub fn frames_at(&mut self, offset: u64) -> Vec<Frame> {
        if let Some(f) = self.cache.get(&offset) {
            return f.clone();
        }
        let binary = self.binary.clone();
        let loader = self
            .loader
            .get_or_insert_with(|| addr2line::Loader::new(&binary).ok());
        let mut out = Vec::new();
        if let Some(loader) = loader {
            let probe = offset + loader.relative_address_base();
            if let Ok(mut frames) = loader.find_frames(probe) {
                while let Ok(Some(frame)) = frames.next() {
                    let function = frame
                        .function
                        .as_ref()
                        .and_then(|f| f.demangle().ok())
                        .map(|f| strip_hash(&f));
                    let location = frame.location.as_ref().and_then(|l| {
                        let file = l.file?;
                        Some(match (l.line, l.column) {
                            (Some(line), Some(col)) if col > 0 => format!("{file}:{line}:{col}"),
                            (Some(line), _) => format!("{file}:{line}"),
                            _ => file.to_owned(),
                        })
                    });
                    out.push(Frame {
                        function,
                        location,
                        in_binary: true,
                    });
                }
            }
            if out.iter().all(|f| f.function.is_none()) {
                if let Some(name) = loader.find_symbol(probe) {
                    let name = strip_hash(&addr2line::demangle_auto(name.into(), None));
                    match out.first_mut() {
                        Some(f) => f.function = Some(name),
                        None => out.push(Frame {
                            function: Some(name),
                            location: None,
                            in_binary: true,
                        }),
                    }
                }
            }
        }
        if out.is_empty() {
            // No debug info: the offset itself is stable for one build.
            let name = self
                .binary
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push(Frame {
                function: None,
                location: Some(format!("{name}+{offset:#x}")),
                in_binary: true,
            });
        }
        self.cache.insert(offset, out.clone());
        out
    }

    /// The symbol table's name of the function at `offset` (demangled,
    /// hash dropped): the full path, where line tables name a function by
    /// its last segment only.
    fn symbol_at(&mut self, offset: u64) -> Option<String> {
        let binary = self.binary.clone();
        let loader = self
            .loader
            .get_or_insert_with(|| addr2line::Loader::new(&binary).ok())
            .as_ref()?;
        let name = loader.find_symbol(offset + loader.relative_address_base())?;
        Some(strip_hash(&addr2line::demangle_auto(name.into(), None)))
    }

    /// [`frames_at`](Self::frames_at), the function the code is in (the
    /// last frame, not inlined into another) named by its whole path from
    /// the symbol table where line tables give only its last segment: two
    /// crates' `parse` stay apart.
    pub fn frames_qualified(&mut self, offset: u64) -> Vec<Frame> {
        let mut frames = self.frames_at(offset);
        if let Some(f) = frames.last_mut() {
            if let (Some(short), Some(full)) = (f.function.as_deref(), self.symbol_at(offset)) {
                if without_generics(&full).ends_with(&format!("::{}", without_generics(short))) {
                    f.function = Some(full);
                }
            }
        }
        frames
    }

    /// Symbolizes a printed stack, expanding inlined frames.
    pub fn frames(&mut self, raw: &[RawFrame]) -> Vec<Frame> {
        let mut out = Vec::new();
        for r in raw {
            match r {
                RawFrame::Address { module, offset } => {
                    if self.is_binary(module) {
                        out.extend(self.frames_at(*offset));
                    } else {
                        out.push(Frame {
                            function: None,
                            location: None,
                            in_binary: false,
                        });
                    }
                }
                RawFrame::Symbolized { function, location } => out.push(Frame {
                    function: Some(strip_hash(function)),
                    location: location.clone(),
                    in_binary: true,
                }),
            }
        }
        out
    }
}

/// `demo::check::h0123456789abcdef` → `demo::check`.
fn strip_hash(name: &str) -> String {
    match name.rsplit_once("::h") {
        Some((head, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            head.to_owned()
        }
        _ => name.to_owned(),
    }
}

/// Parses one `    #3 0x55d5… …` stack frame line.
pub fn parse_frame(line: &str) -> Option<RawFrame> {
    let line = line.trim();
    let rest = line.strip_prefix('#')?;
    let (num, rest) = rest.split_once(' ')?;
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let rest = rest.trim_start();
    let (_pc, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let mut rest = rest.trim();
    if let Some(i) = rest.find(" (BuildId:") {
        rest = rest[..i].trim_end();
    } else if rest.starts_with("(BuildId:") {
        rest = "";
    }
    let module_offset = |s: &str| -> Option<RawFrame> {
        let inner = s.strip_prefix('(')?.strip_suffix(')')?;
        let (module, off) = inner.rsplit_once("+0x")?;
        Some(RawFrame::Address {
            module: module.to_owned(),
            offset: u64::from_str_radix(off, 16).ok()?,
        })
    };
    if let Some(f) = rest.strip_prefix("in ") {
        // `in FUNCTION LOCATION`; the location is the last word.
        let (function, last) = match f.rsplit_once(' ') {
            Some((func, last)) => (func, Some(last)),
            None => (f, None),
        };
        return Some(match last {
            Some(last) if last.starts_with('(') && last.contains("+0x") => module_offset(last)
                .unwrap_or(RawFrame::Symbolized {
                    function: function.to_owned(),
                    location: None,
                }),
            Some(last) => RawFrame::Symbolized {
                function: function.to_owned(),
                location: Some(last.to_owned()),
            },
            None => RawFrame::Symbolized {
                function: function.to_owned(),
                location: None,
            },
        });
    }
    module_offset(rest)
}

/// The first stack trace after the line at `start`: its frames until the
/// first line that is not one.
fn stack_after(lines: &[&str], start: usize) -> Vec<RawFrame> {
    let mut frames = Vec::new();
    let mut seen = false;
    for line in &lines[start..] {
        match parse_frame(line) {
            Some(f) => {
                seen = true;
                frames.push(f);
            }
            None if seen => break,
            None => {}
        }
    }
    frames
}

/// A panic as the driver's hook reported it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawPanic {
    pub message: String,
    /// `file:line:col` as the panic hook saw it; empty when no hook of
    /// ours saw the panic (the target replaces the hook on every run), and
    /// the message is the payload unwinding carried.
    pub location: String,
    /// For a panic raised inside the standard library, the stack from the
    /// hook down, as offsets in the driver binary.
    pub stack: Vec<u64>,
}

impl RawPanic {
    /// The panic's signature. A panic raised inside the standard library
    /// (`capacity overflow` in `raw_vec`, …) is placed at its caller: the
    /// first frame of its stack in the target's or a dependency's code
    /// (inlined frames expanded), with that frame's function and the stack
    /// from there as the details, so two callers are two bugs. Where no
    /// such frame is found, std's own location stays.
    pub fn signature(self, symbolizer: &mut Symbolizer) -> Signature {
        let mut sig = Signature::panic(self.message, self.location);
        if self.stack.is_empty() {
            return sig;
        }
        let frames: Vec<Frame> = self
            .stack
            .iter()
            .flat_map(|&o| symbolizer.frames_qualified(o))
            .collect();
        if let Some(site) = frames
            .iter()
            .find(|f| !f.is_runtime() && f.location.is_some())
        {
            sig.location = site.location.clone();
            sig.function = site.function.as_deref().map(without_generics);
            let from = frames
                .iter()
                .position(|f| std::ptr::eq(f, site))
                .unwrap_or(0);
            sig = sig.with_details(CrashDetails {
                frames: user_functions(&frames[from..]),
                ..CrashDetails::default()
            });
        }
        sig
    }
}

/// The place of a hang from stacks sampled at the deadline: the innermost
/// function in the target's or a dependency's code that is on every one of
/// them at the same depth (counted from the outermost frame), i.e. a call
/// that never returned while they were taken. A loop calling helpers is
/// then named by the loop's function, not by whichever helper the first
/// sample caught; and the function, not the line, since a loop moves.
/// `None` when no such frame is found.
pub fn hang_function(stacks: &[Vec<u64>], symbolizer: &mut Symbolizer) -> Option<String> {
    let names: Vec<Vec<String>> = stacks
        .iter()
        .map(|stack| {
            stack
                .iter()
                .flat_map(|&o| symbolizer.frames_qualified(o))
                .filter(|f| !f.is_runtime())
                .filter_map(|f| f.function.as_deref().map(without_generics))
                // A closure's line-table name (`{closure#0}`) names no place.
                .filter(|name| !name.starts_with('{'))
                .collect()
        })
        .collect();
    innermost_common(&names)
}

/// The innermost name on every one of `stacks` (innermost first) at the
/// same depth counted from the outermost frame.
fn innermost_common(stacks: &[Vec<String>]) -> Option<String> {
    let first = stacks.first()?;
    let common = (0..first.len())
        .take_while(|&i| {
            stacks
                .iter()
                .all(|n| n.len() > i && n[n.len() - 1 - i] == first[first.len() - 1 - i])
        })
        .count();
    (common > 0).then(|| first[first.len() - common].clone())
}

/// The first frame in the target's or a dependency's code.
fn first_user_frame(frames: &[Frame]) -> Option<&Frame> {
    frames.iter().find(|f| !f.is_runtime())
}

/// The functions of the recursion that overflowed the stack, sorted and
/// joined (`a ↔ b`): the shortest period that repeats at least three times
/// in a row among the frames shown. The innermost frames may be callees of
/// the recursion that happened to be running (a copy, a search, an
/// allocation), so the cycle is looked for anywhere, not only at the top.
pub fn recursion(frames: &[Frame]) -> Option<String> {
    // Generic arguments make names long and differ between instances of
    // one recursion: `deserialize<…>` is `deserialize`.
    let names: Vec<String> = frames
        .iter()
        .filter(|f| !f.is_runtime())
        .filter_map(|f| f.function.as_deref())
        .map(without_generics)
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    for period in 1..=32usize {
        // The longest run of positions matching the one `period` later.
        let mut run = 0;
        for i in 0..names.len().saturating_sub(period) {
            if names[i] == names[i + period] {
                run += 1;
                if run >= 2 * period.max(2) {
                    let start = i + 1 - run;
                    let mut cycle: Vec<&str> = names[start..start + period].to_vec();
                    cycle.sort_unstable();
                    cycle.dedup();
                    return Some(cycle.join(" ↔ "));
                }
            } else {
                run = 0;
            }
        }
    }
    None
}

/// `a::b<T, U>::c<V>` → `a::b::c` (also triage's fingerprints).
pub fn without_generics(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut depth = 0usize;
    for c in name.chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Classifies a process that died while running an input; `None` when
/// libFuzzer would see no crash: the process ended with status 0 without
/// `exit()` (libFuzzer's exit check, an `atexit` handler, says "fuzz target
/// exited" for `exit()`; `_exit(0)`, e.g. from a SIGABRT handler of the
/// target's, ends the fuzzer quietly). `announced`: the input's first panic
/// (message, location), if the driver announced one before the process
/// died: then the death is that panic, as libFuzzer, whose panic hook aborts
/// at the first panic, reports it (a second panic while unwinding, or a
/// panic hook of the target's that aborts or exits, kills the driver only
/// later).
pub fn classify_death(
    status: Option<ExitStatus>,
    printed: &str,
    announced: Option<RawPanic>,
    symbolizer: &mut Symbolizer,
) -> Option<Signature> {
    let quiet = status.is_some_and(|st| st.code() == Some(0))
        && !printed.contains("ERROR: libFuzzer: fuzz target exited");
    if quiet {
        return None;
    }
    if let Some(panic) = announced {
        return Some(panic.signature(symbolizer));
    }
    Some(classify_dead_process(status, printed, symbolizer))
}

/// A death that is a crash, by its report and its exit status.
fn classify_dead_process(
    status: Option<ExitStatus>,
    printed: &str,
    symbolizer: &mut Symbolizer,
) -> Signature {
    let lines: Vec<&str> = printed.lines().collect();
    if let Some(sig) = sanitizer_report(&lines, symbolizer) {
        return sig;
    }
    if let Some(sig) = libfuzzer_oom(&lines, symbolizer) {
        return sig;
    }
    if printed.contains("has overflowed its stack") {
        return Signature::new(CrashKind::StackOverflow);
    }
    if let Some(line) = lines.iter().rev().find(|l| {
        l.contains("ERROR: cargo-reduce-crash: out-of-memory (")
            || l.starts_with("memory allocation of ")
    }) {
        let mut sig = Signature::new(CrashKind::OutOfMemory);
        let text = line
            .split_once("out-of-memory (")
            .map(|(_, rest)| rest.trim_end().trim_end_matches(')').to_owned())
            .unwrap_or_else(|| line.trim().to_owned());
        sig.message = Some(text);
        return sig;
    }
    match status {
        Some(st) => match (st.signal(), st.code()) {
            (Some(libc::SIGABRT), _) => Signature::new(CrashKind::Abort),
            (Some(sig), _) => Signature::new(CrashKind::Signal(sig)),
            (None, Some(code)) => Signature::new(CrashKind::Exit(code)),
            (None, None) => Signature::new(CrashKind::Abort),
        },
        None => Signature::new(CrashKind::Abort),
    }
}

/// `==N==ERROR: AddressSanitizer: heap-buffer-overflow on address …`, its
/// stack, and the `SUMMARY:` line naming the error.
fn sanitizer_report(lines: &[&str], symbolizer: &mut Symbolizer) -> Option<Signature> {
    let start = lines
        .iter()
        .position(|l| l.contains("ERROR: ") && l.contains("Sanitizer: "))?;
    let header = lines[start];
    let after = header.split_once("ERROR: ")?.1;
    let (sanitizer, rest) = after.split_once(": ")?;
    let summary = lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("SUMMARY: "))
        .and_then(|s| s.split_once(": "))
        .filter(|(san, _)| *san == sanitizer)
        .and_then(|(_, rest)| rest.split_whitespace().next());
    let error = summary
        .or_else(|| rest.split_whitespace().next())
        .unwrap_or("unknown-crash")
        .to_owned();
    let frames = symbolizer.frames(&stack_after(lines, start + 1));
    let details = CrashDetails {
        access: access(&lines[start..]),
        address: address_in(header),
        frames: user_functions(&frames),
    };
    if error == "stack-overflow" {
        let mut sig = Signature::new(CrashKind::StackOverflow);
        sig.function = recursion(&frames);
        return Some(sig.with_details(details));
    }
    let user = first_user_frame(&frames);
    Some(
        Signature {
            kind: CrashKind::Sanitizer,
            message: Some(format!("{sanitizer}: {error}")),
            location: user.and_then(|f| f.location.clone()),
            function: user.and_then(|f| f.function.clone()),
            details: None,
        }
        .with_details(details),
    )
}

/// The faulting access of a sanitizer report: `WRITE of size 4 at 0x…`, or
/// for a SEGV `The signal is caused by a READ memory access.`
fn access(lines: &[&str]) -> Option<Access> {
    for line in lines.iter().take(12) {
        let text = line.trim_start_matches(|c: char| c == '=' || c.is_ascii_digit());
        let text = text.trim_start();
        for (word, write) in [("WRITE", true), ("READ", false)] {
            if let Some(rest) = text
                .strip_prefix(word)
                .and_then(|r| r.strip_prefix(" of size "))
            {
                let size = rest.split_whitespace().next().and_then(|n| n.parse().ok());
                return Some(Access { write, size });
            }
            if text.starts_with("The signal is caused by a")
                && text.contains(&format!(" {word} memory access"))
            {
                return Some(Access { write, size: None });
            }
        }
    }
    None
}

/// The address a sanitizer's header line names (`on address 0x…`, `on
/// unknown address 0x…`, `double-free on 0x…`).
fn address_in(header: &str) -> Option<u64> {
    let at = header.find(" 0x")?;
    let hex: String = header[at + 3..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    u64::from_str_radix(&hex, 16).ok()
}

/// The stack in the target's and dependencies' code, from the crash down,
/// generic arguments dropped (at most 32 frames).
fn user_functions(frames: &[Frame]) -> Vec<StackFrame> {
    frames
        .iter()
        .filter(|f| !f.is_runtime())
        .filter_map(|f| {
            Some(StackFrame {
                function: without_generics(f.function.as_deref()?),
                location: f.location.clone(),
            })
        })
        .take(32)
        .collect()
}

/// `==N== ERROR: libFuzzer: out-of-memory (malloc(N))` (with the stack of
/// the allocation) or `(used: NMb; limit: NMb)`.
fn libfuzzer_oom(lines: &[&str], symbolizer: &mut Symbolizer) -> Option<Signature> {
    let start = lines
        .iter()
        .position(|l| l.contains("ERROR: libFuzzer: out-of-memory ("))?;
    let detail = lines[start]
        .split_once("out-of-memory (")?
        .1
        .trim_end()
        .strip_suffix(')')
        .unwrap_or("")
        .to_owned();
    if let Some(size) = detail
        .strip_prefix("malloc(")
        .and_then(|s| s.strip_suffix(')'))
    {
        let frames = symbolizer.frames(&stack_after(lines, start + 1));
        let user = first_user_frame(&frames);
        return Some(
            Signature {
                kind: CrashKind::MallocLimit,
                message: Some(format!("malloc({size})")),
                location: user.and_then(|f| f.location.clone()),
                function: user.and_then(|f| f.function.clone()),
                details: None,
            }
            .with_details(CrashDetails {
                frames: user_functions(&frames),
                ..CrashDetails::default()
            }),
        );
    }
    let mut sig = Signature::new(CrashKind::OutOfMemory);
    sig.message = Some(detail);
    Some(sig)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(status: ExitStatus, printed: &str) -> Signature {
        classify_death(
            Some(status),
            printed,
            None,
            &mut Symbolizer::new(Path::new("/nonexistent/bin")),
        )
        .expect("a crash")
    }

    #[test]
    fn a_death_after_an_announced_panic_is_that_panic() {
        let abrt = ExitStatus::from_raw(libc::SIGABRT);
        let sig = classify_death(
            Some(abrt),
            "thread panicked while processing panic. aborting.\n",
            Some(RawPanic {
                message: "unreachable".into(),
                location: "src/lib.rs:7:9".into(),
                stack: Vec::new(),
            }),
            &mut Symbolizer::new(Path::new("/nonexistent/bin")),
        );
        assert_eq!(sig, Some(Signature::panic("unreachable", "src/lib.rs:7:9")));
    }

    #[test]
    fn a_quiet_exit_0_is_no_crash_and_exit_is() {
        let zero = ExitStatus::from_raw(0);
        let mut sym = Symbolizer::new(Path::new("/nonexistent/bin"));
        // `_exit(0)` (a SIGABRT handler of the target's, say): libFuzzer sees nothing.
        assert_eq!(classify_death(Some(zero), "", None, &mut sym), None);
        assert_eq!(
            classify_death(
                Some(zero),
                "",
                Some(RawPanic {
                    message: "boom".into(),
                    location: "src/lib.rs:1:1".into(),
                    stack: Vec::new(),
                }),
                &mut sym
            ),
            None
        );
        // `exit(0)`: libFuzzer's exit check reports it.
        let exited = "==7== ERROR: libFuzzer: fuzz target exited\n";
        assert_eq!(classify(zero, exited).kind, CrashKind::Exit(0));
    }

    #[test]
    fn deaths_are_classified_from_status_and_stderr() {
        let abrt = ExitStatus::from_raw(libc::SIGABRT);
        assert_eq!(classify(abrt, "").kind, CrashKind::Abort);
        assert_eq!(
            classify(
                abrt,
                "\nthread 'main' has overflowed its stack\nfatal runtime error: stack overflow"
            )
            .kind,
            CrashKind::StackOverflow
        );
        assert_eq!(
            classify(abrt, "memory allocation of 99999999 bytes failed\n").kind,
            CrashKind::OutOfMemory
        );
        let segv = ExitStatus::from_raw(libc::SIGSEGV);
        assert_eq!(classify(segv, "").kind, CrashKind::Signal(libc::SIGSEGV));
        let exit3 = ExitStatus::from_raw(3 << 8);
        assert_eq!(classify(exit3, "").kind, CrashKind::Exit(3));
    }

    const SYMBOLIZED: &str = "\
==3516==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x7b1c801e00b0 at pc 0x555dac250ccd bp 0x7fff32013900 sp 0x7fff320138f8
READ of size 1 at 0x7b1c801e00b0 thread T0
    #0 0x555dac250ccc in read_volatile<u8> /rustc/e50aa6fba4e63ab34c72bf9acfd2c307c1155d1a/library/core/src/ptr/mod.rs:2107:9
    #1 0x555dac250ccc in demo::check /tmp/exp/demo/src/lib.rs:7:13
    #2 0x555dac250560 in rust_fuzzer_test_input /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/libfuzzer-sys-0.4.13/src/lib.rs:276:60
    #15 0x555dac1926b0 in _start (/tmp/exp/demo/fuzz/target/x86_64-unknown-linux-gnu/release/fuzz_target_1+0x866b0) (BuildId: cf3eadb6701d14328457dd6cbdeb57d10ee1272b)

0x7b1c801e00b0 is located 60 bytes after 4-byte region [0x7b1c801e0070,0x7b1c801e0074)
allocated by thread T0 here:
    #0 0x555dac2201e4 in malloc /rustc/llvm/src/llvm-project/compiler-rt/lib/asan/asan_malloc_linux.cpp:67:3
    #1 0x555dac250a9f in demo::other /tmp/exp/demo/src/lib.rs:3:9

SUMMARY: AddressSanitizer: heap-buffer-overflow /tmp/exp/demo/src/lib.rs:7:13 in demo::check
";

    #[test]
    fn sanitizer_reports_give_the_access_address_and_stack() {
        let sig = classify(ExitStatus::from_raw(1 << 8), SYMBOLIZED);
        let details = sig.details.as_deref().expect("details");
        assert_eq!(
            details.access,
            Some(Access {
                write: false,
                size: Some(1)
            })
        );
        assert_eq!(details.address, Some(0x7b1c801e00b0));
        assert_eq!(details.frames.len(), 1);
        assert_eq!(details.frames[0].function, "demo::check");
        assert_eq!(
            details.frames[0].location.as_deref(),
            Some("/tmp/exp/demo/src/lib.rs:7:13")
        );
        let segv = "==9==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000010 (pc 0x1 bp 0x2 sp 0x3 T0)\n\
                    ==9==The signal is caused by a WRITE memory access.\n\
                    ==9==Hint: address points to the zero page.\n\
                    SUMMARY: AddressSanitizer: SEGV (x+0x1)\n";
        let sig = classify(ExitStatus::from_raw(1 << 8), segv);
        let details = sig.details.as_deref().expect("details");
        assert_eq!(
            details.access,
            Some(Access {
                write: true,
                size: None
            })
        );
        assert_eq!(details.address, Some(0x10));
    }

    #[test]
    fn sanitizer_reports_give_the_error_and_the_first_user_frame() {
        let sig = classify(ExitStatus::from_raw(1 << 8), SYMBOLIZED);
        assert_eq!(sig.kind, CrashKind::Sanitizer);
        assert_eq!(
            sig.message.as_deref(),
            Some("AddressSanitizer: heap-buffer-overflow")
        );
        assert_eq!(
            sig.location.as_deref(),
            Some("/tmp/exp/demo/src/lib.rs:7:13")
        );
        assert_eq!(sig.function.as_deref(), Some("demo::check"));
        assert_eq!(
            sig.to_string(),
            "heap-buffer-overflow at /tmp/exp/demo/src/lib.rs:7:13 in demo::check (AddressSanitizer)"
        );
    }

    #[test]
    fn a_hang_is_the_innermost_call_on_every_sample() {
        let s = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        // A loop in `scan` calling helpers: whichever helper a sample caught.
        let samples = [
            s(&["eat_space", "scan", "parse", "target"]),
            s(&["scan", "parse", "target"]),
            s(&["eat_eol", "handler", "scan", "parse", "target"]),
        ];
        assert_eq!(innermost_common(&samples).as_deref(), Some("scan"));
        // One sample: its innermost.
        assert_eq!(
            innermost_common(&samples[..1]).as_deref(),
            Some("eat_space")
        );
        // Nothing in common, or nothing at all: no place.
        assert_eq!(innermost_common(&[s(&["a"]), s(&["b"])]), None);
        assert_eq!(innermost_common(&[]), None);
        assert_eq!(innermost_common(&[s(&[])]), None);
    }

    #[test]
    fn frames_parse_in_both_forms() {
        assert_eq!(
            parse_frame("    #0 0x559e9b3e3ccc  (/tmp/b/fuzz_target_1+0x144ccc) (BuildId: cf3e)"),
            Some(RawFrame::Address {
                module: "/tmp/b/fuzz_target_1".into(),
                offset: 0x144ccc
            })
        );
        assert_eq!(
            parse_frame("    #1 0x555dac250ccc in demo::check /tmp/exp/demo/src/lib.rs:7:13"),
            Some(RawFrame::Symbolized {
                function: "demo::check".into(),
                location: Some("/tmp/exp/demo/src/lib.rs:7:13".into())
            })
        );
        assert_eq!(
            parse_frame("    #9 0x55 in fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long) /x/FuzzerLoop.cpp:619:15"),
            Some(RawFrame::Symbolized {
                function: "fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long)".into(),
                location: Some("/x/FuzzerLoop.cpp:619:15".into())
            })
        );
        assert_eq!(
            parse_frame("READ of size 1 at 0x7b1c801e00b0 thread T0"),
            None
        );
        assert_eq!(parse_frame("#x 0x1 in f"), None);
    }

    fn frame(f: &str) -> Frame {
        Frame {
            function: Some(f.to_owned()),
            location: Some(format!("/src/lib.rs:{}:1", f.len())),
            in_binary: true,
        }
    }

    #[test]
    fn a_stack_overflow_is_named_by_its_recursion_wherever_it_stopped() {
        let stack = |skip: usize| -> Vec<Frame> {
            let mut v = vec![frame("core::ptr::copy"), frame("helper")];
            let cycle = ["walk_group", "walk_body", "walk_item"];
            v.extend((skip..skip + 60).map(|i| frame(cycle[i % 3])));
            v
        };
        let a = recursion(&stack(0)).unwrap();
        assert_eq!(a, "walk_body ↔ walk_group ↔ walk_item");
        assert_eq!(recursion(&stack(1)).as_deref(), Some(a.as_str()));
        assert_eq!(recursion(&stack(2)).as_deref(), Some(a.as_str()));
        let single: Vec<Frame> = (0..40).map(|_| frame("nest")).collect();
        assert_eq!(recursion(&single).as_deref(), Some("nest"));
        assert_eq!(recursion(&[frame("a"), frame("b")]), None);
        // A long tip of other functions (serde_json: memchr, parse_str, …)
        // above the cycle.
        let mut tipped: Vec<Frame> = ["memchr", "find", "parse_str", "scan", "peek", "next"]
            .iter()
            .map(|f| frame(f))
            .collect();
        tipped.extend((0..60).map(|i| frame(["visit_seq", "deserialize"][i % 2])));
        assert_eq!(
            recursion(&tipped).as_deref(),
            Some("deserialize ↔ visit_seq")
        );
    }

    #[test]
    fn memory_limits_are_three_kinds() {
        let malloc = "==7== ERROR: libFuzzer: out-of-memory (malloc(4294967296))\n   To change the out-of-memory limit use -rss_limit_mb=<N>\n\n\
                      #0 0x5 in __sanitizer_print_stack_trace /rustc/llvm/src/llvm-project/compiler-rt/lib/asan/asan_stack.cpp:31:3\n\
                      #1 0x6 in buggy::decode /src/lib.rs:40:17\nSUMMARY: libFuzzer: out-of-memory\n";
        let sig = classify(ExitStatus::from_raw(71 << 8), malloc);
        assert_eq!(sig.kind, CrashKind::MallocLimit);
        assert_eq!(sig.location.as_deref(), Some("/src/lib.rs:40:17"));
        assert_eq!(sig.message.as_deref(), Some("malloc(4294967296)"));
        let rss = "==7== ERROR: libFuzzer: out-of-memory (used: 2100Mb; limit: 2048Mb)\n";
        assert_eq!(
            classify(ExitStatus::from_raw(71 << 8), rss).kind,
            CrashKind::OutOfMemory
        );
        let too_big = "==7==ERROR: AddressSanitizer: requested allocation size 0x20000000000 exceeds maximum supported size of 0x10000000000\n\
                       #0 0x5 in malloc /rustc/llvm/src/llvm-project/compiler-rt/lib/asan/asan_malloc_linux.cpp:67:3\n\
                       #1 0x6 in buggy::decode /src/lib.rs:40:17\n\
                       SUMMARY: AddressSanitizer: allocation-size-too-big /src/lib.rs:40:17 in buggy::decode\n";
        let sig = classify(ExitStatus::from_raw(1 << 8), too_big);
        assert_eq!(sig.kind, CrashKind::Sanitizer);
        assert_eq!(
            sig.message.as_deref(),
            Some("AddressSanitizer: allocation-size-too-big")
        );
    }
}
