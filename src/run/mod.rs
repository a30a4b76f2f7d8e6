//! Running a fuzz target: everything between a cargo-fuzz project on disk
//! and "this input crashed the same way".
//!
//! [`project`] finds the fuzz package and target, [`driver`] builds the
//! target to run in-process (as `cargo fuzz build` builds it, or a
//! generated package), [`exec`] keeps a driver process running inputs
//! (restarts, fork server, time and memory limits), [`outcome`] and
//! [`crash_report`] classify what happened into a crash signature,
//! [`timeouts`] applies libFuzzer's timeout rules, and [`crash_oracle`]
//! turns all that into the one oracle interface the reducers use (with
//! extra drivers for `-j`). [`coverage`] reads the coverage build's
//! features; [`target`] is a running target as a library object.

pub mod coverage;
pub mod crash_oracle;
pub mod crash_report;
pub mod driver;
pub mod exec;
pub mod fuzzer_binary;
pub mod outcome;
pub mod project;
pub mod target;
pub mod timeouts;
