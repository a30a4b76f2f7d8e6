//! What the user sees: cargo-style status lines and a progress line on
//! stderr, or JSON lines on stdout (`--message-format json`).
//!
//! Everything the human report says is also in the JSON (`reason` tells the
//! messages apart, `format_version` versions them), so scripts never parse
//! prose.

use crate::run::outcome::{Outcome, Signature};
use anstyle::{AnsiColor, Style};
#[cfg(feature = "cli")]
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
#[cfg(not(feature = "cli"))]
use no_bar::ProgressBar;

/// Without the `cli` feature (no indicatif) no progress is drawn: this
/// stands in for the bar that is then never made.
#[cfg(not(feature = "cli"))]
mod no_bar {
    pub enum ProgressBar {}

    impl ProgressBar {
        pub fn suspend(&self, _: impl FnOnce()) {
            match *self {}
        }
        pub fn set_message(&self, _: String) {
            match *self {}
        }
        pub fn inc(&self, _: u64) {
            match *self {}
        }
        pub fn set_position(&self, _: u64) {
            match *self {}
        }
        pub fn finish_and_clear(&self) {
            match *self {}
        }
    }
}
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

// Output that never aborts the run: a closed stderr or stdout (a pipe into
// `head`, a closed terminal) only loses the text; the result is still
// written and the exit code is unchanged.
macro_rules! say {
    () => {{
        let _ = writeln!(std::io::stderr());
    }};
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

macro_rules! say_part {
    ($($arg:tt)*) => {{
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

macro_rules! out {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
}

/// What a reduced timeout is guaranteed to do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeoutGuarantee {
    /// The result, run alone in a fresh process, was still running when
    /// killed here.
    pub runs_at_least_secs: f64,
    /// `cargo fuzz run <target> <result> -- -timeout=N` reports it at this
    /// `N` (libFuzzer needs an input to run `2·(N/2 + 1)` s); a larger `N`
    /// may not. `None`: no libFuzzer `-timeout` surely does (`--timeout`
    /// under two seconds).
    pub libfuzzer_timeout: Option<u64>,
    /// `N` was inferred from the original's run, not given with `-- -timeout=N`.
    pub inferred: bool,
    /// Candidates screened as hangs: stopped short of `runs_at_least_secs`,
    /// at ten times the slowest run that finished (at least
    /// [`crate::session::SCREEN_HANGS`]).
    pub screened: u64,
    /// Screened hangs that finished when run to the limit: one found while
    /// reducing (screening then stopped), and the `unconfirmed` results of
    /// a screened stage.
    pub screened_wrongly: usize,
    /// Results that, run alone in a fresh process, did not run to the
    /// limit after all (the one before each was checked next). After a
    /// screened stage, the reduction then goes on from the best that did,
    /// without screening.
    pub unconfirmed: usize,
    /// `cargo fuzz build`'s fuzzer, the second clock the result was
    /// checked on (`None`: there was none, or it was not needed).
    pub fuzzer: Option<FuzzerClock>,
}

/// `cargo fuzz build`'s fuzzer as a timeout's second clock
/// ([`crate::run::fuzzer_binary`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FuzzerClock {
    #[serde(serialize_with = "lossy_path")]
    pub path: PathBuf,
    /// It ran the original past the limit too, so the result had to keep
    /// it running as well; if not (out of date, or built otherwise), the
    /// driver's clock judged alone.
    pub hangs_on_original: bool,
    /// Results (and bests, in a stage checked on it) that the driver kept
    /// running to the limit and the fuzzer finished before it.
    pub turned_down: usize,
}

impl std::fmt::Display for TimeoutGuarantee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let by = match &self.fuzzer {
            Some(c) if c.hangs_on_original => {
                format!(" and by `cargo fuzz build`'s fuzzer ({})", c.path.display())
            }
            _ => String::new(),
        };
        write!(
            f,
            "checked in a fresh process{by}: still running after {:.2}s",
            self.runs_at_least_secs
        )?;
        match self.libfuzzer_timeout {
            Some(n) => write!(
                f,
                ", so `-timeout={n}` reports it (it needs {}s); a larger -timeout may not",
                crate::run::timeouts::reported_after(n).as_secs()
            )?,
            None => write!(f, ", too short for any libFuzzer -timeout to report it")?,
        }
        if self.inferred {
            write!(
                f,
                " (-timeout inferred from the original's run: give `-- -timeout=N` to reduce for yours)"
            )?;
        }
        if self.screened > 0 {
            write!(
                f,
                "; {} candidates screened as hangs at a shorter limit",
                self.screened
            )?;
            if self.screened_wrongly > 0 {
                write!(f, " until one finished when run to the limit")?;
            }
        }
        if self.unconfirmed > 0 {
            write!(
                f,
                "; {} results before it did not run to the limit alone and were not kept",
                self.unconfirmed
            )?;
        }
        if let Some(c) = self.fuzzer.as_ref().filter(|c| !c.hangs_on_original) {
            write!(
                f,
                "; `cargo fuzz build`'s fuzzer ({}) finished the original before then \
                 (out of date? run `cargo fuzz build` to check results on its clock too)",
                c.path.display()
            )?;
        }
        Ok(())
    }
}

/// The facts of one finished (or interrupted) reduction.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub target: String,
    #[serde(serialize_with = "lossy_path")]
    pub input: PathBuf,
    #[serde(serialize_with = "lossy_path")]
    pub output: PathBuf,
    pub signature: Signature,
    pub match_mode: &'static str,
    pub strategy: String,
    /// `--grammar`, if the derivation tree was reduced.
    pub grammar: Option<String>,
    /// Tree reducers' candidates that the grammar would not derive
    /// (expected 0; the final byte-level polish is not counted).
    pub invalid_candidates: Option<u64>,
    pub original_len: usize,
    pub reduced_len: usize,
    /// Tests that ran the target.
    pub tests_executed: u64,
    /// Tests answered from the cache (same bytes as an earlier test).
    pub tests_cached: u64,
    /// Tests answered from the value cache (typed targets: the bytes decode
    /// to a value that already ran).
    pub tests_value_cached: u64,
    /// Of the tests executed, those another driver ran past the first
    /// success of their list, discarded (`-j N` on one artifact).
    pub tests_discarded: u64,
    /// Tests of the default byte pipeline answered "not interesting"
    /// without a run: the same edit, with the same bytes around it, as one
    /// that failed on the same input (`reduce::alike`; a repeat of a
    /// candidate that failed is counted here, not in `tests_cached`).
    pub tests_alike: u64,
    /// What each pass of the default byte pipeline did (tests it ran,
    /// bytes it removed), in pipeline order; empty for other strategies.
    pub passes: Vec<crate::reduce::PassStats>,
    /// Drivers that ran the reduction's tests (`-j N` on one artifact).
    pub drivers: usize,
    pub elapsed_secs: f64,
    pub tests_per_sec: f64,
    /// Fresh processes to run inputs after a death (forks of the fork
    /// server, or new drivers without one), and the final fresh check.
    pub driver_restarts: u64,
    /// Of those, driver processes started from scratch (exec'd).
    pub driver_spawns: u64,
    /// Crashes with other signatures that were not accepted, most frequent first.
    pub other_signatures: Vec<OtherSignature>,
    pub interrupted: bool,
    /// Stopped by `--max-tests`/`--max-time` (the result is the best so far).
    pub budget_exhausted: bool,
    pub typed: bool,
    pub preview: String,
    /// The target's `Debug` form of the reduced input (typed targets).
    pub debug: Option<String>,
    /// Which parts of the result are free ([`crate::session::explain`]);
    /// `None` when not explained (`--no-explain`, a timeout, a long result,
    /// an interrupted run, a directory run).
    pub explanation: Option<crate::session::explain::ExplainReport>,
    /// The result crashes with the original's signature when run alone in a
    /// fresh process (whatever is in the output file always does).
    pub verified_fresh: bool,
    /// This run wrote the output file.
    pub written: bool,
    /// The output file already held a result that crashes the same way and
    /// is no larger; it was kept.
    pub kept_existing: bool,
    pub reproduce: String,
    /// For a timeout: what the result was checked to do.
    pub timeout: Option<TimeoutGuarantee>,
    /// Where `--emit-test` wrote the regression test.
    #[serde(serialize_with = "lossy_path_opt")]
    pub emitted_test: Option<PathBuf>,
}

impl Summary {
    /// The lines only crashing inputs ran, from the explanation (none
    /// without one).
    pub fn failing_lines(&self) -> &[crate::session::lines::FailingLine] {
        self.explanation
            .as_ref()
            .map_or(&[], |e| e.lines.lines.as_slice())
    }
}

/// A path as a JSON string; bytes that are not UTF-8 become U+FFFD (JSON
/// strings are Unicode; serde refuses such paths outright).
pub fn path_json(p: &Path) -> serde_json::Value {
    serde_json::Value::String(p.to_string_lossy().into_owned())
}

pub fn lossy_path<S: serde::Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

pub fn lossy_path_opt<S: serde::Serializer>(p: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match p {
        Some(p) => s.serialize_some(&p.to_string_lossy()),
        None => s.serialize_none(),
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct OtherSignature {
    pub signature: Signature,
    pub count: u64,
}

pub struct Reporter {
    format: Format,
    quiet: bool,
    color: bool,
    tty: bool,
    /// The progress bar or line on a terminal, while one is shown.
    bar: Option<ProgressBar>,
    /// The corpus phase the bar shows.
    corpus_phase: Option<CorpusPhase>,
}

/// `--color` (and `CARGO_TERM_COLOR`), as cargo spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set (or `CLICOLOR_FORCE` asks
    /// for colour elsewhere), as `anstream` decides for cargo and clap.
    #[default]
    Auto,
    Always,
    Never,
}

/// Cargo's own styles: bold green verbs, bold yellow warnings, bold red errors.
const GREEN: Style = AnsiColor::Green.on_default().bold();
const YELLOW: Style = AnsiColor::Yellow.on_default().bold();
const RED: Style = AnsiColor::Red.on_default().bold();

impl Reporter {
    /// Human output goes to stderr, coloured as `color` says (never with
    /// `--message-format json`); progress is drawn only on a terminal.
    pub fn new(format: Format, quiet: bool, color: ColorWhen) -> Self {
        let stderr = std::io::stderr();
        let tty = stderr.is_terminal();
        let color = format == Format::Human
            && match color {
                ColorWhen::Always => true,
                ColorWhen::Never => false,
                ColorWhen::Auto => {
                    anstream::AutoStream::choice(&stderr) != anstream::ColorChoice::Never
                }
            };
        Reporter {
            format,
            quiet,
            color,
            tty,
            bar: None,
            corpus_phase: None,
        }
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// What writes to standard output besides results and reports (for
    /// [`crate::output::Destinations::stdout_used_by`]).
    pub fn stdout_user(&self) -> Option<&'static str> {
        (self.format == Format::Json).then_some("the --message-format json messages")
    }

    fn human(&self) -> bool {
        self.format == Format::Human && !self.quiet
    }

    fn paint(&self, style: Style, text: &str) -> String {
        if self.color {
            format!("{style}{text}{style:#}")
        } else {
            text.to_owned()
        }
    }

    /// Prints above the progress bar, if one is shown.
    fn above_bar(&self, print: impl FnOnce()) {
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    /// `    Verb message`, verb right-aligned to 12 columns like cargo.
    pub fn status(&mut self, verb: &str, message: impl AsRef<str>) {
        if !self.human() {
            return;
        }
        let verb = self.paint(GREEN, &format!("{verb:>12}"));
        self.above_bar(|| say!("{verb} {}", message.as_ref()));
    }

    pub fn warn(&mut self, message: impl AsRef<str>) {
        if self.format == Format::Json {
            self.json(&serde_json::json!({"reason": "warning", "message": message.as_ref()}));
            return;
        }
        let label = self.paint(YELLOW, "warning");
        self.above_bar(|| say!("{label}: {}", message.as_ref()));
    }

    /// A one-line note about how this run differs from what the user may
    /// expect (e.g. which build is used and why).
    pub fn note(&mut self, message: impl AsRef<str>) {
        if self.format == Format::Json {
            self.json(&serde_json::json!({"reason": "note", "message": message.as_ref()}));
            return;
        }
        if self.quiet {
            return;
        }
        let label = self.paint(YELLOW, "note");
        self.above_bar(|| say!("{label}: {}", message.as_ref()));
    }

    pub fn error(&mut self, message: &str, exit_code: i32) {
        if self.format == Format::Json {
            self.json(&serde_json::json!({
                "reason": "error", "format_version": FORMAT_VERSION,
                "message": message, "exit_code": exit_code,
            }));
        }
        self.clear_progress();
        say!("{}: {message}", self.paint(RED, "error"));
    }

    /// Shows `message` on the progress bar, started on first use; only on a
    /// terminal, never with `--message-format json` or `-q`. `len`: a bar of
    /// that many steps, else a line whose message is the progress.
    fn show_progress(&mut self, verb: &str, len: Option<u64>, message: String) {
        if !self.human() || !self.tty {
            return;
        }
        if let Some(bar) = &self.bar {
            bar.set_message(message);
            return;
        }
        self.bar = self.new_bar(verb, len, message);
    }

    #[cfg(not(feature = "cli"))]
    fn new_bar(&self, _: &str, _: Option<u64>, _: String) -> Option<ProgressBar> {
        None
    }

    #[cfg(feature = "cli")]
    fn new_bar(&self, verb: &str, len: Option<u64>, message: String) -> Option<ProgressBar> {
        let template = match len {
            Some(_) => "{prefix} [{bar:30}] {pos}/{len} {msg}, {elapsed}",
            None => "{prefix} {msg}",
        };
        let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(template)
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar.set_prefix(self.paint(GREEN, &format!("{verb:>12}")));
        bar.set_message(message);
        bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(10));
        Some(bar)
    }

    /// A reduction's progress: the pass, best size so far, tests, tests
    /// per second, time, and how long since the best last got smaller (so
    /// that a user can tell whether waiting pays; Ctrl-C keeps the best).
    pub fn progress(&mut self, original: usize, p: &crate::run::crash_oracle::Progress) {
        self.show_progress("Reducing", None, progress_line(original, p));
    }

    /// A directory run: `total` reductions started (a bar on a terminal).
    pub fn reductions_started(&mut self, total: usize) {
        self.show_progress("Reducing", Some(total as u64), "artifacts".to_owned());
    }

    /// A directory run: one more reduction finished.
    pub fn reduction_done(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// Takes the progress bar or line off the terminal.
    pub fn clear_progress(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    pub fn started(&mut self, target: &str, input: &Path, len: usize, sig: &Signature) {
        if self.format == Format::Json {
            self.json(&serde_json::json!({
                "reason": "reduce-started", "format_version": FORMAT_VERSION,
                "target": target, "input": path_json(input), "original_len": len, "signature": sig,
            }));
        }
    }

    pub fn finished(&mut self, s: &Summary) {
        if self.format == Format::Json {
            self.message(
                "reduce-finished",
                serde_json::to_value(s).expect("summary serializes"),
            );
            return;
        }
        if self.quiet {
            return;
        }
        self.clear_progress();
        let pct = 100.0 * (1.0 - s.reduced_len as f64 / s.original_len.max(1) as f64);
        let verb = if s.interrupted {
            "Interrupted"
        } else {
            "Reduced"
        };
        self.status(
            verb,
            format!(
                "{} → {} bytes ({pct:.1}% smaller) in {:.2}s",
                s.original_len, s.reduced_len, s.elapsed_secs
            ),
        );
        self.status(
            "Tests",
            format!(
                "{} executed{}, {} cached{}, {}/s, {} driver restarts ({} new processes)",
                s.tests_executed,
                if s.drivers > 1 {
                    format!(
                        " on {} drivers ({} past a success, discarded)",
                        s.drivers, s.tests_discarded
                    )
                } else {
                    String::new()
                },
                s.tests_cached,
                if s.typed {
                    format!(", {} same value", s.tests_value_cached)
                } else {
                    String::new()
                },
                human_count(s.tests_per_sec),
                s.driver_restarts,
                s.driver_spawns
            ),
        );
        self.status("Signature", s.signature.to_string());
        if let Some(t) = &s.timeout {
            self.status("Timeout", t.to_string());
        }
        if let (Some(grammar), Some(invalid)) = (&s.grammar, s.invalid_candidates) {
            self.status(
                "Grammar",
                format!("{grammar}: {invalid} candidates outside the grammar"),
            );
        }
        if !s.other_signatures.is_empty() {
            let total: u64 = s.other_signatures.iter().map(|o| o.count).sum();
            let first = &s.other_signatures[0];
            self.status(
                "Kept",
                format!(
                    "the signature: rejected {total} candidates that crashed differently (most often: {}, {}×)",
                    first.signature, first.count
                ),
            );
        }
        if s.written {
            self.status("Wrote", s.output.display().to_string());
        } else if s.kept_existing {
            self.status(
                "Kept",
                format!("{} (no larger, same crash)", s.output.display()),
            );
        }
        if let Some(test) = &s.emitted_test {
            self.status("Wrote", format!("regression test {}", test.display()));
        }
        say!();
        say!("Reduced input ({} bytes): {}", s.reduced_len, s.preview);
        if let Some(debug) = &s.debug {
            say!("Debug form:\n{debug}");
        }
        if let Some(e) = &s.explanation {
            say!();
            say!(
                "Explained ({} tests, {:.2}s): which {} can change and still crash the same way\n{}",
                e.tests,
                e.secs,
                if e.typed { "values" } else { "bytes" },
                e.text
            );
            say!("{}", crate::session::explain::lines_text(&e.lines));
        }
        say!();
        say!("Reproduce with:\n\n    {}\n", s.reproduce);
    }

    /// One `--classify` result; `debug` is a typed target's value (JSON
    /// only: the human form stays one line per file).
    pub fn classified(
        &mut self,
        path: &Path,
        outcome: &Outcome,
        elapsed: Duration,
        debug: Option<&str>,
    ) {
        if self.format == Format::Json {
            self.json(&serde_json::json!({
                "reason": "classified", "format_version": FORMAT_VERSION,
                "path": path_json(path), "outcome": outcome.label(), "signature": outcome.signature(),
                "elapsed_secs": elapsed.as_secs_f64(), "debug": debug,
            }));
            return;
        }
        let what = match outcome.signature() {
            Some(sig) => format!("crash: {sig}"),
            None => outcome.label().to_owned(),
        };
        // The classification is the command's output: print it even with -q.
        out!("{}: {what}", path.display());
    }

    /// Corpus shrinking: entries considered so far.
    pub fn corpus_progress(&mut self, p: &CorpusProgress, _elapsed: Duration) {
        let (verb, message) = match p.phase {
            CorpusPhase::Measuring => ("Measuring", "entries".to_owned()),
            CorpusPhase::Shrinking => (
                "Shrinking",
                format!(
                    "kept entries ({} of {} bytes left)",
                    p.bytes_after, p.bytes_before
                ),
            ),
        };
        if self.corpus_phase != Some(p.phase) {
            self.clear_progress();
            self.corpus_phase = Some(p.phase);
        }
        self.show_progress(verb, Some(p.total as u64), message);
        if let Some(bar) = &self.bar {
            bar.set_position(p.done as u64);
        }
    }

    /// Corpus shrinking: the summary.
    pub fn corpus_finished(&mut self, s: &CorpusSummary) {
        if self.format == Format::Json {
            self.message(
                "corpus-finished",
                serde_json::to_value(s).expect("summary serializes"),
            );
            return;
        }
        if self.quiet {
            return;
        }
        self.clear_progress();
        let pct = |a: usize, b: usize| 100.0 * (1.0 - b as f64 / a.max(1) as f64);
        self.status(
            "Shrunk",
            format!(
                "{} files → {} ({:.1}% fewer), {} bytes → {} ({:.1}% smaller) in {:.2}s",
                s.files_before,
                s.files_after,
                pct(s.files_before, s.files_after),
                s.bytes_before,
                s.bytes_after,
                pct(s.bytes_before, s.bytes_after),
                s.elapsed_secs
            ),
        );
        self.status(
            "Coverage",
            format!(
                "{} features before, {} after, none lost (re-measured in a fresh driver){}",
                s.features_before,
                s.features_after,
                if s.unstable_features > 0 {
                    format!("; {} unstable features not required", s.unstable_features)
                } else {
                    String::new()
                }
            ),
        );
        self.status(
            "Runs",
            format!(
                "{} target runs; {} redundant entries dropped{}{}",
                s.runs,
                s.redundant,
                if s.kept_whole > 0 {
                    format!(
                        "; {} kept whole (each the only one to reach some code)",
                        s.kept_whole
                    )
                } else {
                    String::new()
                },
                if s.budget_hit > 0 {
                    format!("; {} entries stopped at the test budget", s.budget_hit)
                } else {
                    String::new()
                }
            ),
        );
        for (path, why) in &s.failed {
            self.warn(format!("left out {} (it fails: {why})", path.display()));
        }
        if s.interrupted {
            self.warn(
                "interrupted: entries not reached yet were kept unshrunk (coverage is complete)",
            );
        }
        self.status(
            if s.replaced { "Replaced" } else { "Wrote" },
            s.output_dir.display().to_string(),
        );
    }

    /// A JSON message (JSON mode only); `reason` and `format_version` are
    /// added to `fields` (an object).
    pub fn message(&mut self, reason: &str, mut fields: serde_json::Value) {
        if self.format != Format::Json {
            return;
        }
        fields["reason"] = reason.into();
        fields["format_version"] = FORMAT_VERSION.into();
        self.json(&fields);
    }

    /// Human output on stderr that is not a status line (a table); nothing
    /// in JSON mode or with `-q`.
    pub fn text(&mut self, text: &str) {
        if !self.human() {
            return;
        }
        self.clear_progress();
        say_part!("{text}");
    }

    fn json(&mut self, v: &serde_json::Value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{v}");
        let _ = out.flush();
    }
}

/// `ddmin: 4096 → 210 bytes, 1.2k tests (560/s), 3.2s, best 0.8s ago`.
fn progress_line(original: usize, p: &crate::run::crash_oracle::Progress) -> String {
    let secs = p.elapsed.as_secs_f64();
    let rate = p.executed as f64 / secs.max(1e-9);
    let phase = p.phase.map(|n| format!("{n}: ")).unwrap_or_default();
    format!(
        "{phase}{original} → {} bytes, {} tests ({}/s), {secs:.1}s, best {:.1}s ago",
        p.best_len,
        p.executed,
        human_count(rate),
        p.since_improvement.as_secs_f64()
    )
}

/// 1234567 → "1.23M".
pub fn human_count(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// Bytes as a Rust byte-string literal, cut after `max` characters.
pub fn preview(bytes: &[u8], max: usize) -> String {
    let mut s = String::from("b\"");
    for (i, &b) in bytes.iter().enumerate() {
        if s.len() >= max {
            s.push_str(&format!("\"… (+{} bytes)", bytes.len() - i));
            return s;
        }
        s.extend(std::ascii::escape_default(b).map(char::from));
    }
    s.push('"');
    s
}

/// What a corpus run is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorpusPhase {
    /// Every entry run twice for its stable features.
    Measuring,
    /// The kept entries shrunk, largest first.
    Shrinking,
}

/// Progress of `campaign::corpus::minimize`, once per entry measured,
/// then once per kept entry shrunk (defined here, with what reports it).
#[derive(Debug, Clone, Copy)]
pub struct CorpusProgress {
    pub phase: CorpusPhase,
    /// Entries measured, or kept entries shrunk, of `total`.
    pub done: usize,
    pub total: usize,
    pub kept: usize,
    pub bytes_before: usize,
    pub bytes_after: usize,
}

/// Result of `campaign::corpus::shrink_corpus` (defined here, with
/// what reports it).
#[derive(Debug, Clone, serde::Serialize)]
pub struct CorpusSummary {
    pub target: String,
    #[serde(serialize_with = "lossy_path")]
    pub input_dir: PathBuf,
    #[serde(serialize_with = "lossy_path")]
    pub output_dir: PathBuf,
    pub files_before: usize,
    pub bytes_before: usize,
    pub files_after: usize,
    pub bytes_after: usize,
    pub features_before: usize,
    /// Re-measured on the written corpus in a fresh driver.
    pub features_after: usize,
    pub redundant: usize,
    pub failed: Vec<(PathBuf, String)>,
    pub unstable_features: usize,
    pub budget_hit: usize,
    /// Entries kept whole: each alone reaches some code.
    pub kept_whole: usize,
    pub runs: u64,
    pub elapsed_secs: f64,
    /// The old corpus was replaced (`--in-place`).
    pub replaced: bool,
    /// Ctrl-C stopped the shrinking; the rest was kept unshrunk.
    pub interrupted: bool,
    /// Drivers that shared the work (`-j`; one per core by default).
    pub drivers: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_escapes_and_truncates() {
        assert_eq!(preview(b"a\x00\"\n", 80), r#"b"a\x00\"\n""#);
        assert_eq!(preview(&[b'x'; 10], 5), "b\"xxx\"… (+7 bytes)");
        assert_eq!(human_count(123_456.0), "123.5k");
    }
}
