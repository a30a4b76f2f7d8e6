//! The library's error type: one variant per way a run can fail that the
//! user can act on, each with a one-line message and an exit code.

use crate::exit_code;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("artifact {path} does not exist: pass the path of a file written by `cargo fuzz run`")]
    ArtifactMissing { path: PathBuf },
    #[error(
        "{path} is a {kind}, not a regular file: pass a file, or copy what it holds into one first"
    )]
    NotAFile { path: PathBuf, kind: &'static str },
    #[error(
        "{path} is not a report this tool can read: {detail}; pass a file written by --report"
    )]
    BadReport { path: PathBuf, detail: String },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{option} {path} is the original artifact (or a link to it), which is never written: choose another path")]
    OutputIsInput { path: PathBuf, option: &'static str },
    #[error("{option} {path} is where this run writes {other} already: choose another path")]
    OutputTwice {
        path: PathBuf,
        option: &'static str,
        other: &'static str,
    },
    #[error("{option} {path} cannot be written: {detail}; choose another path")]
    OutputUnusable {
        path: PathBuf,
        option: &'static str,
        detail: String,
    },
    #[error(
        "no cargo-fuzz project found for {searched}: run from your crate, or pass --fuzz-dir DIR"
    )]
    NoProject { searched: PathBuf },
    #[error("{manifest} is not a cargo-fuzz manifest (no `[package.metadata] cargo-fuzz = true`): pass --fuzz-dir DIR")]
    NotCargoFuzz { manifest: PathBuf },
    #[error("cannot read the cargo-fuzz project {manifest}: {detail}")]
    Metadata { manifest: PathBuf, detail: String },
    #[error("unknown fuzz target `{name}`; known targets: {}", known.join(", "))]
    UnknownTarget { name: String, known: Vec<String> },
    #[error("cannot tell which fuzz target {path} belongs to (it is not under artifacts/<target>/): pass --fuzz-target NAME (known: {})", known.join(", "))]
    TargetNotInferred { path: PathBuf, known: Vec<String> },
    #[error("the driver for `{target}` failed to build (cargo's diagnostics above); fix the build or check --features")]
    Build { target: String, diagnostics: String },
    #[error("unknown grammar `{name}`: pass a grammar file, or one of: {}", known.join(", "))]
    UnknownGrammar { name: String, known: Vec<String> },
    #[error("grammar file {path} is not text (not UTF-8): pass a grammar in the Fuzzing Book's JSON form or BNF")]
    GrammarNotText { path: PathBuf },
    #[error("invalid grammar: {0}")]
    Grammar(#[from] crate::grammar::load::GrammarError),
    #[error("{path} does not parse with grammar {grammar}: {detail}; check the grammar or reduce without --grammar")]
    NoParse {
        path: PathBuf,
        grammar: String,
        detail: String,
    },
    #[error("corpus directory {path} does not exist: pass the directory `cargo fuzz run` fills (fuzz/corpus/<target>)")]
    CorpusMissing { path: PathBuf },
    #[error("output directory {path} already exists and is not empty: remove it or pass -o DIR")]
    OutputExists { path: PathBuf },
    #[error("the shrunk corpus of {dir} covers {after} features instead of {before} ({missing} missing) when re-measured; the old corpus is untouched (is the target deterministic?)")]
    CoverageLost {
        dir: PathBuf,
        before: usize,
        after: usize,
        missing: usize,
    },
    #[error("cannot run cargo: {0}")]
    Cargo(String),
    #[error("{path} is not in a git repository ({detail}): --bisect searches the history of the repository holding the fuzz project")]
    NotGit { path: PathBuf, detail: String },
    #[error("unknown revision `{rev}` in {repo}: pass a commit, tag or branch (`git rev-parse` must know it)")]
    BadRevision { rev: String, repo: PathBuf },
    #[error("git failed in {repo}: {detail}")]
    Git { repo: PathBuf, detail: String },
    #[error("--good {good} is not an ancestor of --bad {bad}: pass revisions on one line of history, the good one older")]
    NotAncestor { good: String, bad: String },
    #[error("cannot judge {rev} ({what}): {why}; pass another revision")]
    Unjudgeable {
        rev: String,
        what: &'static str,
        why: String,
    },
    #[error("{input} does not crash `{target}` at {rev} ({what}): {detail}")]
    NoCrashAt {
        input: PathBuf,
        target: String,
        rev: String,
        what: &'static str,
        detail: String,
    },
    #[error("{input} crashes `{target}` the same way at --good {rev} too: pass an older --good, or none to search back")]
    GoodCrashes {
        input: PathBuf,
        target: String,
        rev: String,
    },
    #[error("{input} still crashes `{target}` the same way at {rev}: nothing to find with --fixed; pass --good REV where it no longer does")]
    NotFixed {
        input: PathBuf,
        target: String,
        rev: String,
    },
    #[error("{input} crashes `{target}` the same way (or cannot be judged) at every revision from {from} back to {oldest} ({tried} tried): the crash is as old as the fuzz target, or pass --good REV")]
    NoneBefore {
        input: PathBuf,
        target: String,
        from: String,
        oldest: String,
        tried: usize,
    },
    #[error("interrupted")]
    Interrupted,
    #[error("interrupted: {known}")]
    BisectInterrupted { known: String },
    #[error("{path}: the smallest input found ({len} bytes) crashes `{target}` only after other inputs ran in the same process, and no smaller one crashes on its own; nothing was written (is the target deterministic?)")]
    ResultNotReproducible {
        path: PathBuf,
        target: String,
        len: usize,
    },
    #[error("{path} does not crash `{target}` as it was classified ({classified}): run alone in a fresh process it gave {now}; nothing was written (an out-of-date record? it is classified again next run)")]
    NotAsClassified {
        path: PathBuf,
        target: String,
        classified: String,
        now: String,
    },
    #[error(transparent)]
    Exec(#[from] crate::run::exec::ExecError),
    #[error("{path} does not crash `{target}`: the target {outcome} it ({runs} runs); nothing to reduce")]
    NoCrash {
        path: PathBuf,
        target: String,
        outcome: &'static str,
        runs: usize,
    },
    #[error("{path} does not time out in `{target}`: {detail}; pass --timeout SECS to reduce for \"runs longer than SECS\"")]
    NoTimeout {
        path: PathBuf,
        target: String,
        detail: String,
    },
    #[error("--timeout/-timeout={limit}s is shorter than the original's own run: given {ran:.2}s it crashes ({signature}); pass a longer timeout")]
    TimeoutTooShort {
        limit: f64,
        ran: f64,
        signature: String,
    },
    #[error("{path} crashes `{target}` only sometimes ({crashed} of {runs} runs: {detail}); reduction needs a reproducible crash")]
    Flaky {
        path: PathBuf,
        target: String,
        crashed: usize,
        runs: usize,
        detail: String,
    },
    #[error("no crash artifacts (crash-*, oom-*, timeout-*, leak-*) under {path}: pass the directory `cargo fuzz run` writes them to, e.g. fuzz/artifacts/<target>")]
    NoArtifacts { path: PathBuf },
    #[error("cannot read the directory {path}: {detail}")]
    ReadDir { path: PathBuf, detail: String },
    #[error("{option} names one file: it cannot be used with an artifact directory, several artifacts or --all ({path}); each result goes beside its artifact as <artifact>.reduced")]
    OneOutputForMany { option: &'static str, path: PathBuf },
    #[error("none of the {count} artifacts under {path} crashes ({detail}); nothing to reduce")]
    NothingCrashes {
        path: PathBuf,
        count: usize,
        detail: String,
    },
    #[error("none of the {count} artifacts under {path} crashes reproducibly ({detail}); reduction needs a reproducible crash")]
    NothingReproducible {
        path: PathBuf,
        count: usize,
        detail: String,
    },
    #[error("{failed} of {bugs} bugs under {path} could not be reduced; the first: {first}")]
    BugsFailed {
        path: PathBuf,
        failed: usize,
        bugs: usize,
        first: String,
        /// The exit code of the first failure.
        code: i32,
    },
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::ArtifactMissing { .. }
            | Error::NotAFile { .. }
            | Error::BadReport { .. }
            | Error::Read { .. }
            | Error::Write { .. }
            | Error::OutputIsInput { .. }
            | Error::OutputTwice { .. }
            | Error::OutputUnusable { .. }
            | Error::OutputExists { .. }
            | Error::CorpusMissing { .. }
            | Error::NoArtifacts { .. }
            | Error::ReadDir { .. }
            | Error::OneOutputForMany { .. } => exit_code::BAD_INPUT,
            Error::NoProject { .. } | Error::NotCargoFuzz { .. } | Error::Metadata { .. } => {
                exit_code::NO_PROJECT
            }
            Error::UnknownTarget { .. } | Error::TargetNotInferred { .. } => {
                exit_code::UNKNOWN_TARGET
            }
            Error::Build { .. } | Error::Cargo(_) | Error::Exec(_) => exit_code::BUILD_FAILED,
            Error::NoCrash { .. } | Error::NoTimeout { .. } | Error::NothingCrashes { .. } => {
                exit_code::NO_CRASH
            }
            Error::TimeoutTooShort { .. } => exit_code::USAGE,
            Error::UnknownGrammar { .. } | Error::GrammarNotText { .. } | Error::Grammar(_) => {
                exit_code::BAD_GRAMMAR
            }
            Error::NoParse { .. } => exit_code::NO_PARSE,
            Error::Interrupted | Error::BisectInterrupted { .. } => exit_code::INTERRUPTED,
            Error::Flaky { .. }
            | Error::ResultNotReproducible { .. }
            | Error::NotAsClassified { .. }
            | Error::NothingReproducible { .. }
            | Error::CoverageLost { .. } => exit_code::FLAKY,
            Error::BugsFailed { code, .. } => *code,
            Error::NoCrashAt { .. } => exit_code::NO_CRASH,
            Error::NotGit { .. }
            | Error::BadRevision { .. }
            | Error::Git { .. }
            | Error::NotAncestor { .. }
            | Error::Unjudgeable { .. }
            | Error::GoodCrashes { .. }
            | Error::NotFixed { .. }
            | Error::NoneBefore { .. } => exit_code::BISECT,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
