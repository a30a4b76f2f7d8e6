//! The command line: clap definitions, turned into the library's options.
//!
//! Build flags use cargo-fuzz's names so that `cargo fuzz tmin …` users can
//! swap commands; `-- <args>` accepts the libFuzzer flags that mean something
//! here (`-timeout=`, `-rss_limit_mb=`, `-malloc_limit_mb=`).

// The doc comments below are clap's help text, where `<target>` is a
// placeholder as in every cargo command's help, not HTML.
#![allow(rustdoc::invalid_html_tags)]

pub mod panic_hook;

use crate::campaign::CampaignOptions;
use crate::exit_code;
use crate::grammar::reduce::TreeStrategy;
use crate::reduce::Strategy;
use crate::run::crash_oracle::Budget;
use crate::run::driver::BuildOptions;
use crate::run::outcome::MatchMode;
use crate::run::project::Locate;
use crate::session::report::{ColorWhen, Format};
use crate::session::{Options, StrategyChoice};
use clap::{Parser, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// `--color`, as cargo spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MessageFormat {
    Human,
    Json,
}

/// `-s/--sanitizer`'s values: cargo-fuzz 0.13's (its `Sanitizer` enum), so
/// that a typo is a bad command line, not a failed build.
const SANITIZERS: [&str; 5] = ["address", "leak", "memory", "thread", "none"];

fn exit_codes_help() -> String {
    let mut s = String::from("Exit codes:\n");
    for (code, meaning) in exit_code::ALL {
        s.push_str(&format!("  {code:>3}  {meaning}\n"));
    }
    s
}

/// Reduce a cargo-fuzz crash artifact to the smallest input that crashes the same way.
///
/// Builds the fuzz target into an in-process driver (no edits to your files),
/// checks that the artifact reproduces, then reduces it without ever accepting
/// a different crash. The result is written beside the original as
/// `<artifact>.reduced`; the original is never modified.
#[derive(Debug, Parser)]
#[command(name = "cargo-reduce-crash", bin_name = "cargo reduce-crash", version)]
#[command(after_help = exit_codes_help())]
pub struct Cli {
    /// The crash artifact (e.g. fuzz/artifacts/<target>/crash-<sha1>); or artifact directories and several artifacts, bucketed by crash identity with one reduction per bucket; with --classify, one or more files.
    #[arg(required_unless_present_any = ["all", "corpus"], value_name = "ARTIFACT")]
    pub artifacts: Vec<PathBuf>,

    /// Every fuzz target's artifacts (<fuzz dir>/artifacts/*/): bucket and reduce them all.
    #[arg(long, conflicts_with_all = ["artifacts", "classify", "fuzz_target"])]
    pub all: bool,

    /// With directories, several artifacts or --all: reduce every reproducing artifact, not one per bug.
    #[arg(long)]
    pub each: bool,

    /// With directories, several artifacts or --all: classify and group into bugs, write the reports, reduce nothing (fast triage).
    #[arg(long, conflicts_with = "each")]
    pub no_reduce: bool,

    /// With directories, several artifacts or --all: write the bugs found as a JSON report (the --baseline of a later run; what --merge joins; `-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// With directories, several artifacts or --all: write the bugs as SARIF 2.1.0, for GitHub code scanning (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,

    /// With directories, several artifacts or --all: write a Markdown summary (one row per bug), e.g. for $GITHUB_STEP_SUMMARY (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,

    /// An earlier run's --report: each bug is new, known or fixed against it; exit code 10 when there are new bugs.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Reduce only this shard's share of the bugs, `hash:K/N` or `count:K/N` (cargo-nextest's syntax); every shard classifies every artifact, and --merge joins the shards' reports.
    #[arg(long, value_name = "hash:K/N")]
    pub partition: Option<String>,

    /// Join shard reports: the ARTIFACT arguments are --report files of the shards; writes --report, --sarif and --markdown as one unsharded run would.
    #[arg(long, conflicts_with_all = ["all", "classify", "corpus", "partition", "baseline"])]
    pub merge: bool,

    /// Drivers at work at the same time. With directories, several artifacts or --all: artifacts rerun and reduced in parallel (default: available parallelism). With one artifact: N drivers test its candidates speculatively, same result as one driver (default: one per core once a test takes 5 ms or more, else 1).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,

    /// The fuzz target (default: inferred from artifacts/<target>/).
    #[arg(long, short = 't', value_name = "NAME")]
    pub fuzz_target: Option<String>,

    /// The cargo-fuzz directory (default: found from the artifact or the current directory).
    #[arg(long, value_name = "DIR")]
    pub fuzz_dir: Option<PathBuf>,

    /// Path to Cargo.toml of the crate (or of its fuzz package).
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,

    /// Where to write the result (default: <artifact>.reduced beside it; `-`: standard output; a device, FIFO or socket is written through).
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,

    /// Which crashes count as "the same": any, kind, location (kind + panic location) or message.
    #[arg(long = "match", value_name = "MODE", default_value = "location")]
    pub match_mode: MatchMode,

    /// Reduction strategy (default: choices for typed targets, default otherwise): default (chunks, windows, ddmin, simplification), choices (arbitrary-aware choice-sequence shrinking), ddmin, chunks, seed-ddmin, ddrmin, fuzzingbook-dd. With --grammar: grammar (default), hdd, perses, grammar-reducer, grammar-reducer-depth, gtr, production.
    #[arg(long, value_name = "NAME")]
    pub strategy: Option<String>,

    /// Reduce the derivation tree of the input under this grammar: a shipped one (json, expr, csv, ini) or a grammar file (Fuzzing Book JSON or BNF).
    #[arg(long, value_name = "NAME|FILE")]
    pub grammar: Option<String>,

    /// Per-test time limit in seconds (default: 10× the original's run time, from 1 to 10 s); for a timeout artifact, reduce for "runs longer than SECS" (default: what libFuzzer's -timeout reports, see -- -timeout=N).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,

    /// Heap limit in MiB, like libFuzzer's -rss_limit_mb (0 = none).
    #[arg(long, value_name = "MB", default_value_t = crate::session::DEFAULT_RSS_LIMIT_MB)]
    pub rss_limit_mb: u64,

    /// Largest single allocation in MiB, like -malloc_limit_mb (default: the heap limit).
    #[arg(long, value_name = "MB")]
    pub malloc_limit_mb: Option<u64>,

    /// How many times to run the original before reducing.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub reruns: usize,

    /// Stop after this many executed tests (the best result so far is kept).
    #[arg(long, value_name = "N")]
    pub max_tests: Option<u64>,

    /// Be done this many seconds after the target is built, the result checked and written (the best so far; with directories, per artifact).
    #[arg(long, value_name = "SECS")]
    pub max_time: Option<f64>,

    /// Seed of the byte pipeline's random last stage (same seed, same result).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,

    /// Tests the byte pipeline's random last stage may run at each fixpoint (0: none).
    #[arg(long, value_name = "N", default_value_t = crate::reduce::DEFAULT_RANDOM_TESTS)]
    pub random_tests: u64,

    /// Tests the explanation after a reduction may use: which values of the result are free (any value still crashes the same way), alone and all at once [default: 2000, within the reduction's own time]. Given, the explanation takes the time it needs (or --explain-time).
    #[arg(long, value_name = "N")]
    pub explain_tests: Option<u64>,

    /// Time the explanation may take [default: as long as the reduction took, at least 0.1 s and at most 2 s].
    #[arg(long, value_name = "SECS")]
    pub explain_time: Option<f64>,

    /// No explanation after the reduction.
    #[arg(long, conflicts_with_all = ["explain_tests", "explain_time"])]
    pub no_explain: bool,

    /// Also write a ready #[test] that replays the reduced input through the target (put it in the fuzz package's tests/, e.g. fuzz/tests/crash_x.rs). With directories, several artifacts or --all: a directory, one test per bug reduced in this run (crash_<fingerprint>.rs).
    #[arg(long, value_name = "PATH")]
    pub emit_test: Option<PathBuf>,

    /// Only run each file once and print its outcome; no reduction.
    #[arg(long)]
    pub classify: bool,

    /// Shrink a fuzzing corpus instead: the directory given (default fuzz/corpus/<target>) is minimized into -o DIR (default <corpus>.reduced) losing none of its coverage features (a shorter entry may reach more), like `cargo fuzz cmin` plus shrinking every kept entry; --max-tests applies per entry.
    #[arg(long, conflicts_with_all = ["classify", "grammar", "emit_test"])]
    pub corpus: bool,

    /// With --corpus: replace the corpus by the shrunk one once it is verified to cover everything the old one did.
    #[arg(long, requires = "corpus")]
    pub in_place: bool,

    /// With --corpus: only drop redundant entries (like cargo fuzz cmin), do not shrink them.
    #[arg(long, requires = "corpus")]
    pub no_shrink: bool,

    /// Find the commit at which ARTIFACT started crashing the same way: each revision built as cargo fuzz builds it, in a work tree of its own (the checkout is never touched); revisions that do not build, lack the target or crash another way are skipped and named.
    #[arg(long, conflicts_with_all = ["all", "classify", "corpus", "merge", "emit_test", "grammar", "output"])]
    pub bisect: bool,

    /// With --bisect: a revision where the artifact does not crash the same way (default: searched back from --bad 1, 2, 4, 8… commits); with --fixed, where it no longer does (default HEAD).
    #[arg(long, value_name = "REV", requires = "bisect")]
    pub good: Option<String>,

    /// With --bisect: a revision where the artifact crashes (default HEAD; needed with --fixed).
    #[arg(long, value_name = "REV", requires = "bisect")]
    pub bad: Option<String>,

    /// With --bisect: find the first commit after --bad at which the artifact no longer crashes the same way.
    #[arg(long, requires_all = ["bisect", "bad"])]
    pub fixed: bool,

    /// Output format: human (stderr) or json (JSON lines on stdout).
    #[arg(long, value_name = "FMT", default_value = "human")]
    pub message_format: MessageFormat,

    /// No status lines.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Coloring: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(
        long,
        value_name = "WHEN",
        env = "CARGO_TERM_COLOR",
        default_value = "auto"
    )]
    pub color: Color,

    /// Show cargo's output while building the driver.
    #[arg(long, short = 'v')]
    pub verbose: bool,

    /// Build in development mode (as cargo fuzz --dev).
    #[arg(long, short = 'D', conflicts_with = "release")]
    pub dev: bool,

    /// Build in release mode without debug assertions (as cargo fuzz -O).
    #[arg(long, short = 'O')]
    pub release: bool,

    /// Build with debug assertions (the default unless -O).
    #[arg(long, short = 'a')]
    pub debug_assertions: bool,

    /// Features of the fuzz package to activate.
    #[arg(long, short = 'F', value_name = "FEATURES")]
    pub features: Option<String>,

    #[arg(long)]
    pub all_features: bool,

    #[arg(long)]
    pub no_default_features: bool,

    /// Sanitizer: address (cargo fuzz's default: the target is built as `cargo fuzz build` builds it, with a nightly toolchain, the active one or `nightly` through rustup), leak, memory, thread, or none (a build without a sanitizer, on any toolchain).
    #[arg(long, short = 's', value_name = "SANITIZER", value_parser = SANITIZERS)]
    pub sanitizer: Option<String>,

    /// Start a new driver after every crash instead of forking a fresh child (for comparisons).
    #[arg(long, hide = true)]
    pub no_fork_server: bool,

    /// Where to generate and build the driver (default: <fuzz target dir>/reduce-crash).
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,

    /// Do not pass --cfg fuzzing.
    #[arg(long)]
    pub no_cfg_fuzzing: bool,

    /// libFuzzer flags: -timeout=N (for a timeout artifact: the result still times out at it), -rss_limit_mb=N and -malloc_limit_mb=N are honoured.
    #[arg(last = true, value_name = "LIBFUZZER_ARGS")]
    pub libfuzzer_args: Vec<String>,
}

impl Cli {
    /// Parses `std::env::args`, dropping the `reduce-crash` that cargo inserts.
    pub fn from_env() -> Cli {
        let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        if args.get(1).is_some_and(|a| a == "reduce-crash") {
            args.remove(1);
        }
        Cli::parse_from(args)
    }

    pub fn color(&self) -> ColorWhen {
        match self.color {
            Color::Auto => ColorWhen::Auto,
            Color::Always => ColorWhen::Always,
            Color::Never => ColorWhen::Never,
        }
    }

    pub fn format(&self) -> Format {
        match self.message_format {
            MessageFormat::Human => Format::Human,
            MessageFormat::Json => Format::Json,
        }
    }

    /// libFuzzer-style `-name=value` flags from after `--`.
    fn libfuzzer_flag(&self, name: &str) -> Option<&str> {
        self.libfuzzer_args.iter().rev().find_map(|a| {
            a.strip_prefix('-')
                .and_then(|a| a.strip_prefix(name))
                .and_then(|a| a.strip_prefix('='))
        })
    }

    /// Flags after `--` that this tool does not use.
    pub fn ignored_libfuzzer_args(&self) -> Vec<&str> {
        self.libfuzzer_args
            .iter()
            .map(String::as_str)
            .filter(|a| {
                !["timeout", "rss_limit_mb", "malloc_limit_mb"]
                    .iter()
                    .any(|n| {
                        a.strip_prefix('-')
                            .is_some_and(|r| r.starts_with(&format!("{n}=")))
                    })
            })
            .collect()
    }

    /// The directory mode's options, if the command line asks for it:
    /// `--all`, several artifacts, or a directory (not with `--classify`).
    pub fn campaign(&self) -> Option<CampaignOptions> {
        let several =
            self.all || self.artifacts.len() > 1 || self.artifacts.iter().any(|p| p.is_dir());
        (several && !self.classify && !self.bisect).then(|| CampaignOptions {
            paths: self.artifacts.clone(),
            all: self.all,
            each: self.each,
            reduce: !self.no_reduce,
            jobs: self.jobs.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
            }),
            outputs: self.report_outputs(),
            baseline: self.baseline.clone(),
            partition: self
                .partition
                .as_deref()
                .and_then(|p| p.parse::<crate::triage::Partition>().ok()),
        })
    }

    /// Where `--report`, `--sarif` and `--markdown` go.
    pub fn report_outputs(&self) -> crate::triage::ReportOutputs {
        crate::triage::ReportOutputs {
            json: self.report.clone(),
            sarif: self.sarif.clone(),
            markdown: self.markdown.clone(),
        }
    }

    /// The options that make sense only for directories, named if given
    /// for one artifact (a usage error).
    pub fn directory_only(&self) -> Option<&'static str> {
        [
            (self.report.is_some(), "--report"),
            (self.sarif.is_some(), "--sarif"),
            (self.markdown.is_some(), "--markdown"),
            (self.baseline.is_some(), "--baseline"),
            (self.partition.is_some(), "--partition"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }

    pub fn options(&self, cwd: PathBuf) -> Result<Options, String> {
        if self.jobs == Some(0) {
            return Err("-j/--jobs must be at least 1".to_owned());
        }
        let secs = |s: f64, what: &str| -> Result<Duration, String> {
            Duration::try_from_secs_f64(s)
                .map_err(|_| format!("{what} must be a non-negative number of seconds"))
        };
        let parse_u64 = |v: &str, what: &str| -> Result<u64, String> {
            v.parse().map_err(|_| format!("-{what}={v}: not a number"))
        };
        if let Some(p) = &self.partition {
            p.parse::<crate::triage::Partition>()?;
        }
        if self.merge && self.report_outputs().is_empty() {
            return Err(
                "--merge writes what --report, --sarif or --markdown name: give at least one"
                    .to_owned(),
            );
        }
        if !self.merge && self.campaign().is_none() && !self.corpus {
            if let Some(option) = self.directory_only() {
                return Err(format!(
                    "{option} describes the bugs of several artifacts: give a directory, several artifacts or --all"
                ));
            }
        }
        // A budget of nothing would only copy the original.
        if self.max_time.is_some_and(|s| s <= 0.0) {
            return Err(
                "--max-time must be more than 0 seconds (a budget of nothing reduces nothing)"
                    .to_owned(),
            );
        }
        if self.max_tests == Some(0) {
            return Err(
                "--max-tests must be at least 1 (a budget of nothing reduces nothing)".to_owned(),
            );
        }
        // Below a millisecond a limit cannot be kept: the round trip to the
        // driver alone takes tens of microseconds.
        let timeout = match self.timeout {
            Some(s) if s >= 0.001 => Some(secs(s, "--timeout")?),
            Some(s) => {
                return Err(format!(
                    "--timeout {s}: a limit must be at least 0.001 seconds (libFuzzer's -timeout=0 means none)"
                ))
            }
            None => None,
        };
        // libFuzzer's -timeout=0 means no timeout.
        let libfuzzer_timeout = match self.libfuzzer_flag("timeout") {
            Some(v) => Some(parse_u64(v, "timeout")?).filter(|&n| n > 0),
            None => None,
        };
        let rss_limit_mb = match self.libfuzzer_flag("rss_limit_mb") {
            Some(v) => parse_u64(v, "rss_limit_mb")?,
            None => self.rss_limit_mb,
        };
        let malloc_limit_mb = match (self.malloc_limit_mb, self.libfuzzer_flag("malloc_limit_mb")) {
            (Some(m), _) => m,
            (None, Some(v)) => parse_u64(v, "malloc_limit_mb")?,
            (None, None) => 0,
        };
        let strategy = match (&self.strategy, &self.grammar) {
            (None, _) => StrategyChoice::Auto,
            (Some(name), None) => match name.parse::<Strategy>() {
                Ok(s) => StrategyChoice::Bytes(s),
                Err(_) if name.parse::<TreeStrategy>().is_ok() => {
                    return Err(format!(
                        "strategy `{name}` reduces derivation trees: also pass --grammar NAME|FILE"
                    ))
                }
                Err(e) => return Err(e.to_string()),
            },
            (Some(name), Some(_)) => {
                StrategyChoice::Tree(name.parse::<TreeStrategy>().map_err(|e| e.to_string())?)
            }
        };
        Ok(Options {
            locate: Locate {
                fuzz_dir: self.fuzz_dir.clone(),
                manifest_path: self.manifest_path.clone(),
                artifact: None,
                cwd,
            },
            fuzz_target: self.fuzz_target.clone(),
            build: BuildOptions {
                dev: self.dev,
                release: self.release,
                debug_assertions: self.debug_assertions,
                features: self.features.clone(),
                all_features: self.all_features,
                no_default_features: self.no_default_features,
                sanitizer: self.sanitizer.clone(),
                target_dir: self.target_dir.clone(),
                no_cfg_fuzzing: self.no_cfg_fuzzing,
                verbose: self.verbose,
                coverage: false,
            },
            output: self.output.clone(),
            emit_test: self.emit_test.clone(),
            match_mode: self.match_mode,
            strategy,
            grammar: self.grammar.clone(),
            timeout,
            libfuzzer_timeout,
            rss_limit_mb,
            malloc_limit_mb,
            reruns: self.reruns,
            budget: Budget {
                max_tests: self.max_tests,
                max_time: match self.max_time {
                    Some(s) => Some(secs(s, "--max-time")?),
                    None => None,
                },
            },
            fork_server: !self.no_fork_server,
            pipeline: crate::reduce::Pipeline {
                seed: self.seed,
                random_tests: self.random_tests,
                costly_successes: false,
                tiny: true,
            },
            // Directory mode reduces several artifacts in parallel instead.
            // (A corpus directory is not a campaign: its entries share the
            // drivers.)
            drivers: match self.campaign() {
                Some(_) if !self.corpus => 1,
                _ => self.jobs.unwrap_or(1),
            },
            auto_drivers: (self.corpus || self.campaign().is_none()) && self.jobs.is_none(),
            // A directory run explains each bug's result too: its lines only
            // crashing inputs ran go into the report, SARIF and Markdown.
            explain_tests: match (self.no_explain, self.explain_tests) {
                (true, _) => 0,
                (false, n) => n.unwrap_or(crate::session::explain::DEFAULT_EXPLAIN_TESTS),
            },
            // Asked for by a number of tests: as long as they take.
            explain_time: match (self.explain_time, self.explain_tests) {
                (Some(t), _) => Some(secs(t, "--explain-time")?),
                (None, Some(_)) => Some(Duration::MAX),
                (None, None) => None,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    #[test]
    fn directories_several_files_and_all_select_the_directory_mode() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().display().to_string();
        let file = tmp.path().join("crash-1");
        std::fs::write(&file, b"x").unwrap();
        let file = file.display().to_string();
        assert!(Cli::parse_from(["x", &file]).campaign().is_none());
        assert!(Cli::parse_from(["x", "--classify", &dir])
            .campaign()
            .is_none());
        let c = Cli::parse_from(["x", "-j", "3", "--each", &dir])
            .campaign()
            .unwrap();
        assert_eq!((c.jobs, c.each, c.all), (3, true, false));
        assert!(Cli::parse_from(["x", &file, &file]).campaign().is_some());
        let all = Cli::parse_from(["x", "--all"]).campaign().unwrap();
        assert!(all.all && all.paths.is_empty() && all.jobs >= 1);
        assert!(Cli::try_parse_from(["x"]).is_err(), "an artifact or --all");
        assert!(Cli::try_parse_from(["x", "--all", &dir]).is_err());
        let zero = Cli::parse_from(["x", "-j", "0", &dir]);
        assert!(zero.options(PathBuf::from("/")).is_err());
        // One artifact: one driver unless -j says otherwise; directories
        // spread artifacts over the jobs instead.
        let opts = |args: &[&str]| Cli::parse_from(args).options(PathBuf::from("/")).unwrap();
        assert_eq!(opts(&["x", &file]).drivers, 1);
        assert!(opts(&["x", &file]).auto_drivers);
        assert_eq!(opts(&["x", "-j", "2", &file]).drivers, 2);
        assert!(!opts(&["x", "-j", "1", &file]).auto_drivers);
        assert!(!opts(&["x", &dir]).auto_drivers);
        assert_eq!(opts(&["x", "-j", "2", &dir]).drivers, 1);
        assert_eq!(opts(&["x", "-j", "2", &file, &file]).drivers, 1);
    }

    #[test]
    fn libfuzzer_flags_are_honoured() {
        let cli = Cli::parse_from(["x", "a", "--", "-timeout=3", "-rss_limit_mb=100", "-runs=9"]);
        let o = cli.options(PathBuf::from("/")).unwrap();
        assert_eq!(o.timeout, None);
        assert_eq!(o.libfuzzer_timeout, Some(3));
        assert_eq!(o.rss_limit_mb, 100);
        assert_eq!(cli.ignored_libfuzzer_args(), vec!["-runs=9"]);
    }
}
