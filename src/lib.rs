//! `cargo reduce-crash`: reduce cargo-fuzz crash artifacts to the smallest
//! input that crashes the same way, running the fuzz target in-process.
//!
//! The data path of one reduction, one module each:
//!
//! ```text
//! artifact ─▶ project (fuzz crate, target) ─▶ driver (generate + build the in-process host)
//!   ─▶ exec (long-lived driver process, restarts, timeouts, memory limit) ─▶ outcome (classify, identity)
//!   ─▶ crash_oracle (interesting? best-so-far on disk) ─▶ oracle (cache, counters)
//!   ─▶ reduce (ddmin family, chunks, simplification) ─▶ output (atomic) + report (human, JSON)
//! ```
//!
//! `session` runs that path for the CLI; `campaign` runs it over whole
//! artifact directories (discovery, buckets by crash identity, records,
//! parallel drivers); `cli` and `exit_code` are the command-line surface.
//!
//! Beyond crashes: `coverage` (features from a coverage build of the
//! driver) and `corpus` (shrink a corpus keeping its coverage exactly);
//! `target` (one fuzz target as a library object: run, coverage, ready
//! predicates) and `shrink` (shrink any input under any predicate with a
//! cache and budgets), for mutation fuzzers and corpus tools.

pub mod campaign;
pub mod cli;
pub mod corpus;
pub mod coverage;
pub mod crash_oracle;
pub mod crash_report;
pub mod driver;
pub mod emit_test;
pub mod error;
pub mod exec;
pub mod exit_code;
pub mod grammar;
pub mod interrupt;
pub mod oracle;
pub mod outcome;
pub mod output;
pub mod project;
pub mod reduce;
pub mod report;
pub mod rng;
pub mod session;
pub mod shrink;
pub mod target;
pub mod timeouts;
