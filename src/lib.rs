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
//!
//! Linux only. The `cli` feature (on by default) is the command line; with
//! `default-features = false` the library stands alone, for shrinking a
//! mutation fuzzer's population or post-processing corpora:
//! [`reduce::shrink::Shrinker`] shrinks any input under a predicate,
//! [`run::target::RunningTarget`] runs a fuzz target in its driver,
//! [`reduce::population::Admit`] says what a mutation fuzzer keeps of a new
//! member, and
//! [`reduce::oracle::Oracle`] is the interface every reducer works against.

// Elsewhere, one sentence and nothing more: every module is Linux's.
#[cfg(not(target_os = "linux"))]
compile_error!(
    "cargo-reduce-crash runs fuzz targets on Linux only (its driver uses /proc, personality(2) and memfd): use it in a Linux container or VM"
);

#[cfg(target_os = "linux")]
pub mod campaign;
#[cfg(all(target_os = "linux", feature = "cli"))]
pub mod cli;
#[cfg(target_os = "linux")]
pub mod error;
#[cfg(target_os = "linux")]
pub mod exit_code;
#[cfg(target_os = "linux")]
pub mod grammar;
#[cfg(target_os = "linux")]
pub mod input;
#[cfg(target_os = "linux")]
pub mod interrupt;
#[cfg(target_os = "linux")]
pub mod output;
#[cfg(target_os = "linux")]
pub mod reduce;
#[cfg(target_os = "linux")]
pub mod run;
#[cfg(target_os = "linux")]
pub mod session;
#[cfg(target_os = "linux")]
pub mod triage;
