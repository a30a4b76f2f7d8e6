//! `cargo reduce-crash`: reduce cargo-fuzz crash artifacts to the smallest
//! input that crashes the same way, running the fuzz target in-process.
//!
//! One folder per layer, each using only those below it (`docs/design.md`
//! has the module map; `tests/layers.rs` checks it):
//!
//! ```text
//! cli ─▶ campaign (directories, corpora) ─▶ triage (bugs, severity, reports)
//!   ─▶ session (one artifact, reporting)
//!   ─▶ run (project, driver build, exec, outcomes, crash oracle, coverage, target)
//!   ─▶ reduce (oracle interface, byte and choice reducers, shrink) · grammar (Earley, tree reducers)
//! ```
//!
//! Shared by all: `error`, `exit_code`, `input` (reading only regular files),
//! `output` (where a run may write, atomic writes, locks), `interrupt`.

pub mod campaign;
pub mod cli;
pub mod error;
pub mod exit_code;
pub mod grammar;
pub mod input;
pub mod interrupt;
pub mod output;
pub mod reduce;
pub mod run;
pub mod session;
pub mod triage;
