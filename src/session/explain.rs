//! The explanation after a reduction: which parts of the written result
//! are free (issue 26). The questions go to the same crash oracle, with
//! the same identity, as the reduction's; the answers are
//! [`crate::reduce::explain`]'s. This module decides when an explanation is
//! worth its tests, and shows it: for a typed target the `Debug` form with
//! a mark after each free value and a path to it (`.note`, `[1].0`), for
//! bytes a hex dump with the free bytes marked; in JSON the parts with
//! their byte ranges, paths and verdicts.
//!
//! It never changes the result: it runs after the result is written and
//! checked, and only reads it.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::reduce::debug_tokens as tokens;
use crate::reduce::explain::{explain, Explanation, Together, Verdict};
use crate::reduce::oracle::{Cached, SpanKind};
use crate::run::crash_oracle::{Budget, CrashOracle};
use crate::run::exec::Executor;
use crate::run::outcome::{CrashKind, MatchMode, Signature};
use crate::session::lines::{failing_only, FailingLines, Recording, SHOWN};

/// Tests an explanation may use when `--explain-tests` is not given: at the
/// in-process speed of an ordinary target (10–50 thousand tests a second)
/// well under a second.
pub const DEFAULT_EXPLAIN_TESTS: u64 = 2000;

/// Results longer than this are not explained: each byte is a part, and a
/// long result is a deep nest or a long valid prefix, whose bytes are all
/// needed alike.
pub const MAX_EXPLAINED_LEN: usize = 1024;

/// An explanation nobody asked for stops after this long (the parts left
/// are reported untried)...
pub const MAX_EXPLAIN_TIME: Duration = Duration::from_secs(2);

/// ...and takes no longer than the reduction did, but may take this long
/// after a reduction of a few milliseconds: under half of what the
/// fastest command costs anyway (about 0.1 s: cargo's no-op build check,
/// the driver's start). At 100 ms it doubled the command on gif (0.10 →
/// 0.22 s after a 14 ms reduction); at 40 ms the bench's small panics
/// still get a verdict on every byte and their lines.
pub const MIN_EXPLAIN_TIME: Duration = Duration::from_millis(40);

/// The time an explanation nobody asked for may take after a reduction
/// that took `reduction`: as long, within [`MIN_EXPLAIN_TIME`] and
/// [`MAX_EXPLAIN_TIME`]. On a target whose crashes end the process (a
/// sanitizer report: a fork each), the two rounds of
/// [`crate::reduce::explain`] give every part a verdict first.
pub fn default_time(reduction: Duration) -> Duration {
    reduction.clamp(MIN_EXPLAIN_TIME, MAX_EXPLAIN_TIME)
}

/// The explanation as reported (`explanation` in `--message-format json`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ExplainReport {
    pub secs: f64,
    pub tests: u64,
    /// The parts are a typed target's draws (else bytes).
    pub typed: bool,
    pub parts: Vec<PartReport>,
    /// `always`, `not-always` (with `example`), `untried`; absent with
    /// fewer than two free parts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub together: Option<TogetherReport>,
    /// The free parts merged where they touch: `[start, end)`.
    pub free_ranges: Vec<[usize; 2]>,
    /// What a person reads: the marked `Debug` form, or the hex dump.
    pub text: String,
    /// Source lines only the crashing inputs ran ([`crate::session::lines`]).
    pub lines: FailingLines,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PartReport {
    pub start: usize,
    pub end: usize,
    /// `leaf` or `structural` (bytes targets: `byte`).
    pub kind: &'static str,
    /// `free`, `needed` or `untried`.
    pub verdict: &'static str,
    /// Variations that still crashed the same way.
    pub tried: usize,
    /// A typed target's value at this part: where it is in the `Debug`
    /// form (`.note`, `[1].0`, empty for the whole value) and how it reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// For `needed`: the variation that no longer crashed the same way
    /// (hex).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TogetherReport {
    pub verdict: &'static str,
    pub tried: usize,
    /// For `not-always`: the joint variation that did not crash the same
    /// way (hex), and a typed target's value for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub debug: Option<String>,
}

/// Why a result gets no explanation, if it does not.
pub fn skipped(kind: CrashKind, result: &[u8], tests: u64) -> Option<&'static str> {
    if tests == 0 {
        Some("--no-explain")
    } else if kind == CrashKind::Timeout {
        Some("a timeout: every variation that still hangs runs to the limit")
    } else if result.is_empty() {
        Some("the result is empty")
    } else if result.len() > MAX_EXPLAINED_LEN {
        Some("the result is longer than 1024 bytes")
    } else {
        None
    }
}

/// Explains `result` (written and checked) with at most `tests` tests,
/// for at most `time` (the caller's budget: [`default_time`], or what was
/// asked for, within what `--max-time` left).
pub fn explain_result(
    exec: &mut Executor,
    signature: &Signature,
    mode: MatchMode,
    result: &[u8],
    (tests, time): (u64, Duration),
    seed: u64,
) -> ExplainReport {
    let started = Instant::now();
    // A panic's lines take a few coverage runs after the variations: they
    // get at least half the time. (Any other crash ends the process and
    // takes its counters with it, and one run tells.) At the 0.1 s floor
    // the variations took it all on gif, after a 14 ms reduction, and the
    // lines found no passing input in time. The variations' first round
    // gives every part a verdict before any gets more confidence.
    let variations_time = if signature.kind == CrashKind::Panic {
        time / 2
    } else {
        time
    };
    let explanation = {
        let oracle =
            CrashOracle::new(&mut *exec, signature.clone(), mode, result).with_budget(Budget {
                max_tests: None,
                max_time: Some(variations_time),
            });
        let mut cached = Cached::new(oracle);
        cached.remember(result, true);
        let mut recording = Recording::new(cached);
        let explanation = explain(result, &mut recording, tests, seed);
        (explanation, recording.interesting, recording.uninteresting)
    };
    let (explanation, crashed, passed) = explanation;
    let tried = [crashed, passed].concat();
    // Asked for by a number of tests: no deadline but theirs.
    let deadline = started.checked_add(time);
    let lines = failing_only(exec, signature, mode, result, &tried, deadline);
    let secs = started.elapsed().as_secs_f64();
    let rendering = if explanation.typed {
        exec.debug_format(result).ok().flatten()
    } else {
        None
    };
    let located = match &rendering {
        Some(debug) => locate_parts(exec, result, debug, &explanation),
        None => vec![None; explanation.parts.len()],
    };
    // What varying the free parts at once gave, as a person reads it.
    let apart = match &explanation.together {
        Some(Together::NotAlways { example }) if rendering.is_some() => exec
            .debug_format(example)
            .ok()
            .flatten()
            .map(|d| one_line(&d)),
        _ => None,
    };
    let mut report = report(&explanation, result, rendering.as_deref(), &located, secs);
    if let Some(t) = report.together.as_mut() {
        t.debug = apart;
    }
    report.text.push_str(&summary_line(&report, result.len()));
    report.lines = lines;
    report.secs = started.elapsed().as_secs_f64();
    report
}

/// A multi-line `Debug` form (`{:#?}`) on one line, as `{:?}` writes it.
fn one_line(debug: &str) -> String {
    let joined = debug
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    [
        (", }", " }"),
        (", )", ")"),
        (", ]", "]"),
        ("( ", "("),
        ("[ ", "["),
        (" )", ")"),
        (" ]", "]"),
    ]
    .iter()
    .fold(joined, |s, (from, to)| s.replace(from, to))
}

/// Where each part's value is in `debug`: the token that changes, alone,
/// when the part does (byte offset in `debug`), if one does.
fn locate_parts(
    exec: &mut Executor,
    result: &[u8],
    debug: &str,
    explanation: &Explanation,
) -> Vec<Option<usize>> {
    let original = tokens(debug);
    explanation
        .parts
        .iter()
        .map(|part| {
            if part.kind != SpanKind::Leaf {
                return None;
            }
            let mut changed = result.to_vec();
            for b in &mut changed[part.start..part.end] {
                *b = b.wrapping_add(1);
            }
            let other = exec.debug_format(&changed).ok().flatten()?;
            let other = tokens(&other);
            if other.len() != original.len() {
                return None;
            }
            let mut differing = original
                .iter()
                .zip(&other)
                .enumerate()
                .filter(|(_, (a, b))| a != b);
            let (k, _) = differing.next()?;
            if differing.next().is_some() {
                return None;
            }
            Some(original[k].as_ptr() as usize - debug.as_ptr() as usize)
        })
        .collect()
}

fn report(
    e: &Explanation,
    result: &[u8],
    debug: Option<&str>,
    located: &[Option<usize>],
    secs: f64,
) -> ExplainReport {
    let parts: Vec<PartReport> = e
        .parts
        .iter()
        .zip(located)
        .map(|(p, at)| {
            let (verdict, tried, example) = match &p.verdict {
                Verdict::Free { tried } => ("free", *tried, None),
                Verdict::Needed { example } => ("needed", 0, Some(hex(example))),
                Verdict::Untried { tried } => ("untried", *tried, None),
            };
            let (path, value) = match (debug, at) {
                (Some(d), Some(at)) => {
                    (Some(debug_path(d, *at)), Some(token_at(d, *at).to_owned()))
                }
                _ => (None, None),
            };
            PartReport {
                start: p.start,
                end: p.end,
                kind: match (e.typed, p.kind) {
                    (false, _) => "byte",
                    (true, SpanKind::Structural) => "structural",
                    (true, _) => "leaf",
                },
                verdict,
                tried,
                path,
                value,
                example,
            }
        })
        .collect();
    let together = e.together.as_ref().map(|t| match t {
        Together::Always { tried } => TogetherReport {
            verdict: "always",
            tried: *tried,
            example: None,
            debug: None,
        },
        Together::NotAlways { example } => TogetherReport {
            verdict: "not-always",
            tried: 0,
            example: Some(hex(example)),
            debug: None,
        },
        Together::Untried { tried } => TogetherReport {
            verdict: "untried",
            tried: *tried,
            example: None,
            debug: None,
        },
    });
    let free_ranges: Vec<[usize; 2]> = e.free_ranges().into_iter().map(|(a, b)| [a, b]).collect();
    let text = match debug {
        Some(d) => marked_debug(d, &parts, located),
        None => hex_dump(result, &parts),
    };
    ExplainReport {
        secs,
        tests: e.tests,
        typed: e.typed,
        parts,
        together,
        free_ranges,
        text,
        lines: FailingLines::default(),
    }
}

/// A line's file as a person reads it: relative to the current directory
/// when it is under it, a dependency's from its `crate-version` directory
/// on (`gif-0.9.0/src/reader/mod.rs:389`), not cargo's registry path before
/// it; else as it is (JSON keeps the whole path).
fn short_path(location: &str) -> std::borrow::Cow<'_, str> {
    if let Some(at) = location.find("/registry/src/") {
        let rest = &location[at + "/registry/src/".len()..];
        if let Some((_index, krate)) = rest.split_once('/') {
            return krate.into();
        }
    }
    if let Ok(cwd) = std::env::current_dir() {
        if let Ok(rel) = std::path::Path::new(location).strip_prefix(&cwd) {
            return rel.display().to_string().into();
        }
    }
    location.into()
}

/// The failing-only lines as a person reads them: the first [`SHOWN`],
/// then how many more (JSON has them all); or why there are none.
pub fn lines_text(lines: &FailingLines) -> String {
    if let Some(why) = &lines.unavailable {
        return format!("Lines only crashing inputs ran: none listed ({why})");
    }
    let mut out = format!(
        "Lines only crashing inputs ran ({} crashing and {} passing inputs compared):",
        lines.failing, lines.passing
    );
    if lines.lines.is_empty() {
        out.push_str(" none");
    }
    for l in lines.lines.iter().take(SHOWN) {
        out.push_str("\n  ");
        out.push_str(&short_path(&l.location));
        if let Some(f) = &l.function {
            out.push_str("  ");
            out.push_str(f);
        }
    }
    if lines.lines.len() > SHOWN {
        out.push_str(&format!("\n  … and {} more", lines.lines.len() - SHOWN));
    }
    out
}

/// The last line: how many parts are free, and whether together.
fn summary_line(r: &ExplainReport, len: usize) -> String {
    // A typed value's values are the parts that show in its `Debug` form;
    // the others (variants, lengths, continuations) are its shape.
    let counted = |p: &&PartReport| !r.typed || p.value.is_some();
    let free = r
        .parts
        .iter()
        .filter(counted)
        .filter(|p| p.verdict == "free")
        .count();
    let untried = r.parts.iter().filter(|p| p.verdict == "untried").count();
    let what = if r.typed { "values" } else { "bytes" };
    let total = if r.typed {
        r.parts.iter().filter(counted).count()
    } else {
        len
    };
    let mut line = match (free, total) {
        (_, 0) => "no values to vary: what crashes is its shape (variants, lengths)".to_owned(),
        (0, 1) => format!(
            "the 1 {} is needed: changing it stops the crash",
            &what[..what.len() - 1]
        ),
        (0, n) => format!("no {what} are free: changing any of the {n} stops the crash"),
        (1, n) => format!("1 of {n} {what} is free: any value still crashes the same way"),
        (k, n) => {
            format!("{k} of {n} {what} are free: any value in each still crashes the same way")
        }
    };
    match &r.together {
        Some(t) if t.verdict == "always" => line.push_str(", all at once too"),
        Some(t) if t.verdict == "not-always" => {
            line.push_str(", one at a time only");
            match (&t.debug, &t.example) {
                (Some(d), _) => line.push_str(&format!(": {d} does not crash the same way")),
                (None, Some(x)) => {
                    line.push_str(&format!(": {x} (hex) does not crash the same way"))
                }
                _ => {}
            }
        }
        Some(_) => line.push_str(" (not varied all at once: out of tests)"),
        None => {}
    }
    if untried > 0 {
        line.push_str(&format!("; {untried} not tried (out of tests or time)"));
    }
    line
}

/// `debug` with each free value marked: `// any value` at the end of its
/// line in the multi-line form (`{:#?}`, one value a line), else
/// ` /* any */` right after it.
fn marked_debug(debug: &str, parts: &[PartReport], located: &[Option<usize>]) -> String {
    let multiline = debug.trim_end().contains('\n');
    let mut marks: Vec<(usize, &str)> = parts
        .iter()
        .zip(located)
        .filter(|(p, _)| p.verdict == "free")
        .filter_map(|(_, at)| *at)
        .map(|at| {
            if multiline {
                let eol = debug[at..].find('\n').map_or(debug.len(), |i| at + i);
                (eol, "  // any value")
            } else {
                (at + token_at(debug, at).len(), " /* any */")
            }
        })
        .collect();
    marks.sort();
    marks.dedup();
    let mut out = String::with_capacity(debug.len() + 16 * marks.len() + 1);
    let mut from = 0;
    for (at, mark) in marks {
        out.push_str(&debug[from..at]);
        out.push_str(mark);
        from = at;
    }
    out.push_str(debug[from..].trim_end());
    out.push('\n');
    out
}

/// 16 bytes a line: offset, hex, ASCII; under it `~~` for each free byte.
fn hex_dump(data: &[u8], parts: &[PartReport]) -> String {
    let mut free = vec![false; data.len()];
    for p in parts.iter().filter(|p| p.verdict == "free") {
        free[p.start..p.end].iter_mut().for_each(|f| *f = true);
    }
    let mut out = String::new();
    for (line, chunk) in data.chunks(16).enumerate().take(DUMP_LINES) {
        let hexes: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
        let ascii: String = chunk
            .iter()
            .map(|&b| {
                if b.is_ascii_graphic() || b == b' ' {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        out.push_str(&format!(
            "{:04x}  {:<47}  {ascii}\n",
            line * 16,
            hexes.join(" ")
        ));
        let marks: Vec<&str> = (0..chunk.len())
            .map(|i| if free[line * 16 + i] { "~~" } else { "  " })
            .collect();
        let marks = marks.join(" ");
        if !marks.trim().is_empty() {
            out.push_str(&format!("      {}\n", marks.trim_end()));
        }
    }
    if data.len() > 16 * DUMP_LINES {
        let rest = &free[16 * DUMP_LINES..];
        out.push_str(&format!(
            "… {} more bytes, {} of them free (all in JSON)\n",
            rest.len(),
            rest.iter().filter(|&&f| f).count()
        ));
    }
    if free.iter().any(|&f| f) {
        out.push_str("~~ any value\n");
    }
    out
}

/// Lines of the hex dump shown (16 bytes each); JSON has every part.
const DUMP_LINES: usize = 16;

/// The token of `debug` that starts at byte `at`.
fn token_at(debug: &str, at: usize) -> &str {
    tokens(&debug[at..]).first().copied().unwrap_or("")
}

/// Where the token at byte `at` sits in the value: `.field`, `.0`, `[1]`
/// from the outside in (empty: the whole value).
pub(crate) fn debug_path(debug: &str, at: usize) -> String {
    #[derive(PartialEq)]
    enum Open {
        Brace,
        Paren,
        Bracket,
    }
    let toks = tokens(&debug[..at]);
    let mut stack: Vec<(Open, usize, String)> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        match *t {
            "{" => stack.push((Open::Brace, 0, String::new())),
            "(" => stack.push((Open::Paren, 0, ".0".into())),
            "[" => stack.push((Open::Bracket, 0, "[0]".into())),
            "}" | ")" | "]" => {
                stack.pop();
            }
            "," => {
                if let Some((open, n, label)) = stack.last_mut() {
                    *n += 1;
                    *label = match open {
                        Open::Brace => String::new(),
                        Open::Paren => format!(".{n}"),
                        Open::Bracket => format!("[{n}]"),
                    };
                }
            }
            ":" => {
                // `field: value` inside braces (not `a::b`).
                let colons = toks.get(i + 1) == Some(&":") || (i > 0 && toks[i - 1] == ":");
                if let (Some((Open::Brace, _, label)), false, Some(name)) =
                    (stack.last_mut(), colons, i.checked_sub(1).map(|k| toks[k]))
                {
                    *label = format!(".{name}");
                }
            }
            _ => {}
        }
    }
    stack.into_iter().map(|(_, _, label)| label).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_paths_start_at_the_crate() {
        assert_eq!(
            short_path("/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/gif-0.9.0/src/reader/mod.rs:389"),
            "gif-0.9.0/src/reader/mod.rs:389"
        );
        assert_eq!(short_path("fuzz_targets/t.rs:3"), "fuzz_targets/t.rs:3");
    }

    #[test]
    fn paths_from_the_outside_in() {
        let d = "Request { kind: 3, note: 0, index: 4 }";
        assert_eq!(debug_path(d, d.find("0,").unwrap()), ".note");
        assert_eq!(debug_path(d, d.find("4 }").unwrap()), ".index");
        let d = "[PushFront(0), PopBack, Insert(\"\", 7)]";
        assert_eq!(debug_path(d, d.find("0)").unwrap()), "[0].0");
        assert_eq!(debug_path(d, d.find("7)").unwrap()), "[2].1");
        let d = "Message { body: Multipart { subtype: \"\\0\", parts: [] } }";
        assert_eq!(debug_path(d, d.find("\"\\0\"").unwrap()), ".body.subtype");
        assert_eq!(debug_path("4", 0), "");
        let d = "Op::Push { at: 1 }";
        assert_eq!(debug_path(d, d.find('1').unwrap()), ".at");
    }

    #[test]
    fn a_long_dump_is_cut_after_sixteen_lines() {
        let data = vec![b'x'; 300];
        let parts: Vec<PartReport> = (0..300)
            .map(|i| PartReport {
                start: i,
                end: i + 1,
                kind: "byte",
                verdict: if i % 2 == 0 { "free" } else { "needed" },
                tried: 0,
                path: None,
                value: None,
                example: None,
            })
            .collect();
        let dump = hex_dump(&data, &parts);
        assert_eq!(dump.lines().count(), 2 * DUMP_LINES + 2, "{dump}");
        assert!(
            dump.contains("… 44 more bytes, 22 of them free (all in JSON)\n"),
            "{dump}"
        );
    }

    #[test]
    fn pretty_debug_on_one_line() {
        assert_eq!(
            one_line("Rect {\n    width: 255,\n    height: 255,\n}\n"),
            "Rect { width: 255, height: 255 }"
        );
        assert_eq!(
            one_line("[\n    PushFront(\n        0,\n    ),\n    PopBack,\n]"),
            "[PushFront(0), PopBack]"
        );
    }

    #[test]
    fn free_bytes_are_marked_under_the_dump() {
        let parts: Vec<PartReport> = [("needed", 0), ("free", 1), ("free", 2), ("free", 3)]
            .iter()
            .map(|&(verdict, i)| PartReport {
                start: i,
                end: i + 1,
                kind: "byte",
                verdict,
                tried: 0,
                path: None,
                value: None,
                example: None,
            })
            .collect();
        assert_eq!(
            hex_dump(b"\x03xyz", &parts),
            "0000  03 78 79 7a                                      .xyz\n         ~~ ~~ ~~\n~~ any value\n"
        );
    }
}
