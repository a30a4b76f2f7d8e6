//! Every exit code `cargo reduce-crash` uses, in one place.
//!
//! Scripts and CI jobs branch on these, so they are part of the interface:
//! the README's table is generated from the same list (see `ALL`).

/// Reduced (or classified) and written; for artifact directories, several
/// artifacts or `--all`: every reproducing bucket was reduced (artifacts
/// that do not reproduce are listed, and do not fail the run).
pub const SUCCESS: i32 = 0;
/// An unexpected internal error (a bug in cargo-reduce-crash): a panic on
/// any thread is reported as one line naming its location
/// (`cli::panic_hook`), not as Rust's exit 101.
pub const INTERNAL: i32 = 1;
/// Bad command line (clap's own code).
pub const USAGE: i32 = 2;
/// The artifact does not crash the target (it passes or is rejected); for
/// directories: none of the artifacts does.
pub const NO_CRASH: i32 = 3;
/// The artifact crashes only sometimes, or differently from run to run; for
/// directories: no artifact crashes reproducibly and some are flaky, or a
/// record's classification no longer holds.
pub const FLAKY: i32 = 4;
/// The artifact is missing, unreadable or not a regular file, or an output
/// path is unusable (the original or a link to it, claimed twice, in a
/// missing directory, a name too long; `-o` with a directory, several
/// artifacts or `--all`); a directory holds no artifacts.
pub const BAD_INPUT: i32 = 5;
/// No cargo-fuzz project was found, or it could not be read.
pub const NO_PROJECT: i32 = 6;
/// The fuzz target is unknown or could not be inferred.
pub const UNKNOWN_TARGET: i32 = 7;
/// The grammar (`--grammar`) is unknown or invalid.
pub const BAD_GRAMMAR: i32 = 8;
/// The artifact does not parse with the grammar.
pub const NO_PARSE: i32 = 9;
/// With `--baseline`: every bug was reduced, and at least one is new (not in
/// the baseline report), for a CI job to gate on.
pub const NEW_BUGS: i32 = 10;
/// `--bisect` found no answer: not in a git repository, an unknown
/// revision, `--good` crashes the same way too (or cannot be built),
/// `--fixed` and it still crashes at the other end, or no revision back to
/// the one that added the fuzz target is free of the crash.
pub const BISECT: i32 = 11;
/// The in-process driver for the target did not build or start.
pub const BUILD_FAILED: i32 = 101;
/// Interrupted (SIGINT/SIGTERM); the best result so far was written (for
/// directories: finished buckets and their records are kept). A second
/// signal stops at once, writing nothing more.
pub const INTERRUPTED: i32 = 130;

/// (code, meaning) for documentation and `--help`.
pub const ALL: &[(i32, &str)] = &[
    (
        SUCCESS,
        "reduced and written (with --classify: all files classified; with a directory: every reproducing bucket reduced)",
    ),
    (
        INTERNAL,
        "internal error (a bug: one line says where; please report it with the command line)",
    ),
    (
        USAGE,
        "bad command line (also an unknown -s/--sanitizer, --max-time 0, --max-tests 0, a --timeout shorter than the original's run)",
    ),
    (
        NO_CRASH,
        "the artifact does not crash the target (with a directory: none does)",
    ),
    (
        FLAKY,
        "the artifact crashes only sometimes, or differently each time (with a directory: none reproducibly, some flaky)",
    ),
    (
        BAD_INPUT,
        "artifact missing, unreadable or not a regular file, no artifacts in a directory, or an unusable output path (the original or a link to it, -o and --emit-test the same, a missing directory, a name too long, -o with a directory)",
    ),
    (NO_PROJECT, "no cargo-fuzz project found"),
    (
        UNKNOWN_TARGET,
        "unknown fuzz target, or it cannot be inferred",
    ),
    (BAD_GRAMMAR, "unknown or invalid grammar (--grammar)"),
    (NO_PARSE, "the artifact does not parse with the grammar"),
    (
        NEW_BUGS,
        "with --baseline: bugs reduced, and at least one is new since the baseline",
    ),
    (
        BISECT,
        "--bisect found no answer: not a git repository, an unknown revision, --good crashes too or cannot be built, --fixed and it still crashes at --good/HEAD, or every revision back to the one that added the fuzz target crashes",
    ),
    (BUILD_FAILED, "the in-process driver did not build or start"),
    (
        INTERRUPTED,
        "interrupted; the best result so far (with a directory: every finished bucket) was kept; a second Ctrl-C stops at once, writing nothing more",
    ),
];
