//! `cargo reduce-crash`: parse arguments, call the library, map errors to
//! exit codes (see `reduce_crash::exit_code`).

use reduce_crash::cli::{panic_hook, Cli};
use reduce_crash::session::report::{Format, Reporter};
use reduce_crash::{campaign, exit_code, interrupt, session};

fn main() {
    // A panic of ours is a bug: exit 1 with one line, whatever thread.
    panic_hook::install();
    let cli = Cli::from_env();
    panic_hook::set_json(cli.format() == Format::Json);
    test_panic();
    let mut reporter = Reporter::new(cli.format(), cli.quiet, cli.color());
    std::process::exit(run(&cli, &mut reporter));
}

/// TEST HOOK, not for users: `CARGO_REDUCE_CRASH_TEST_PANIC=main` (or any
/// other non-empty value) panics on the main thread, `=thread` on a helper
/// thread the main thread waits for, as a bug of ours would, so that
/// `tests/cli.rs` (`an_internal_panic_is_exit_1_with_one_line`) can check
/// what a panic looks like from the real binary.
fn test_panic() {
    match std::env::var("CARGO_REDUCE_CRASH_TEST_PANIC").as_deref() {
        Ok("thread") => {
            let (tx, rx) = std::sync::mpsc::channel::<()>();
            std::thread::spawn(move || {
                let _tx = tx;
                panic!("test panic on a helper thread (CARGO_REDUCE_CRASH_TEST_PANIC)");
            });
            // The hook ends the process; this never returns.
            let _ = rx.recv();
        }
        Ok(v) if !v.is_empty() => panic!("test panic (CARGO_REDUCE_CRASH_TEST_PANIC)"),
        _ => {}
    }
}

fn run(cli: &Cli, reporter: &mut Reporter) -> i32 {
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            reporter.error(
                &format!("cannot read the current directory: {e}"),
                exit_code::INTERNAL,
            );
            return exit_code::INTERNAL;
        }
    };
    let opts = match cli.options(cwd) {
        Ok(o) => o,
        Err(msg) => {
            reporter.error(&msg, exit_code::USAGE);
            return exit_code::USAGE;
        }
    };
    let ignored = cli.ignored_libfuzzer_args();
    if !ignored.is_empty() {
        reporter.warn(format!(
            "ignoring libFuzzer flags that do not apply here: {}",
            ignored.join(" ")
        ));
    }
    if cli.corpus {
        interrupt::install();
        let corpus = reduce_crash::campaign::corpus::CorpusCommand {
            dir: cli.artifacts.first().cloned(),
            in_place: cli.in_place,
            shrink: !cli.no_shrink,
        };
        if cli.artifacts.len() > 1 {
            reporter.error("--corpus takes one corpus directory", exit_code::USAGE);
            return exit_code::USAGE;
        }
        return match reduce_crash::campaign::corpus::run(&opts, &corpus, reporter) {
            Ok(summary) => {
                reporter.corpus_finished(&summary);
                if summary.interrupted {
                    exit_code::INTERRUPTED
                } else {
                    exit_code::SUCCESS
                }
            }
            Err(e) => fail(reporter, e),
        };
    }
    if cli.bisect {
        if cli.artifacts.len() != 1 || cli.artifacts[0].is_dir() {
            reporter.error("--bisect takes one artifact file", exit_code::USAGE);
            return exit_code::USAGE;
        }
        interrupt::install();
        let bisect = campaign::bisect::BisectOptions {
            artifact: cli.artifacts[0].clone(),
            good: cli.good.clone(),
            bad: cli.bad.clone(),
            fixed: cli.fixed,
        };
        return match campaign::bisect::run(&opts, &bisect, reporter) {
            Ok(b) if b.interrupted => exit_code::INTERRUPTED,
            Ok(b) if !b.checked => exit_code::FLAKY,
            Ok(_) => exit_code::SUCCESS,
            Err(e) => fail(reporter, e),
        };
    }
    if cli.merge {
        return match campaign::merge::run(&cli.artifacts, &cli.report_outputs(), reporter) {
            Ok(code) => code,
            Err(e) => fail(reporter, e),
        };
    }
    if cli.classify {
        return match session::classify(&opts, &cli.artifacts, reporter) {
            Ok(()) => exit_code::SUCCESS,
            Err(e) => fail(reporter, e),
        };
    }
    // Directories, several artifacts or --all: buckets, one reduction each.
    if let Some(copts) = cli.campaign() {
        interrupt::install();
        return match campaign::run(&opts, &copts, reporter) {
            Ok(report) => {
                let code = report.exit_code();
                match report.error {
                    Some(e) => fail(reporter, e),
                    None => code,
                }
            }
            Err(e) => fail(reporter, e),
        };
    }
    interrupt::install();
    match session::reduce(&opts, &cli.artifacts[0], reporter) {
        Ok(summary) => {
            reporter.finished(&summary);
            if summary.interrupted {
                exit_code::INTERRUPTED
            } else {
                exit_code::SUCCESS
            }
        }
        Err(e) => fail(reporter, e),
    }
}

fn fail(reporter: &mut Reporter, e: reduce_crash::error::Error) -> i32 {
    if let reduce_crash::error::Error::Build { diagnostics, .. } = &e {
        // cargo's rendered diagnostics, then our one-line summary.
        let _ = std::io::Write::write_all(&mut std::io::stderr(), diagnostics.as_bytes());
    }
    let code = e.exit_code();
    reporter.error(&e.to_string(), code);
    code
}
