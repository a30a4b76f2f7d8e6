//! Every exit code `cargo reduce-crash` uses, in one place.
//!
//! Scripts and CI jobs branch on these, so they are part of the interface:
//! the README's table is generated from the same list (see `ALL`).

/// Reduced (or classified) and written.
pub const SUCCESS: i32 = 0;
/// An unexpected internal error (a bug in cargo-reduce-crash).
pub const INTERNAL: i32 = 1;
/// Bad command line (clap's own code).
pub const USAGE: i32 = 2;
/// The artifact does not crash the target (it passes or is rejected).
pub const NO_CRASH: i32 = 3;
/// The artifact crashes only sometimes, or differently from run to run.
pub const FLAKY: i32 = 4;
/// The artifact is missing or unreadable, or the output path is unusable.
pub const BAD_INPUT: i32 = 5;
/// No cargo-fuzz project was found, or it could not be read.
pub const NO_PROJECT: i32 = 6;
/// The fuzz target is unknown or could not be inferred.
pub const UNKNOWN_TARGET: i32 = 7;
/// The grammar (`--grammar`) is unknown or invalid.
pub const BAD_GRAMMAR: i32 = 8;
/// The artifact does not parse with the grammar.
pub const NO_PARSE: i32 = 9;
/// The in-process driver for the target did not build or start.
pub const BUILD_FAILED: i32 = 101;
/// Interrupted (SIGINT/SIGTERM); the best result so far was written.
pub const INTERRUPTED: i32 = 130;

/// (code, meaning) for documentation and `--help`.
pub const ALL: &[(i32, &str)] = &[
    (
        SUCCESS,
        "reduced and written (or, with --classify, all files classified)",
    ),
    (INTERNAL, "internal error"),
    (USAGE, "bad command line"),
    (NO_CRASH, "the artifact does not crash the target"),
    (
        FLAKY,
        "the artifact crashes only sometimes, or differently each time",
    ),
    (
        BAD_INPUT,
        "artifact missing or unreadable, or unusable output path",
    ),
    (NO_PROJECT, "no cargo-fuzz project found"),
    (
        UNKNOWN_TARGET,
        "unknown fuzz target, or it cannot be inferred",
    ),
    (BUILD_FAILED, "the in-process driver did not build or start"),
    (
        INTERRUPTED,
        "interrupted; the best result so far was written",
    ),
];
