//! A fuzz target as a library object: build it once, then ask it about
//! inputs.
//!
//! The CLI drives reductions through [`crate::session`]; library users (a
//! corpus post-processor, a mutation fuzzer shrinking its population) want
//! the target itself: run an input, get its [`Outcome`], get its coverage
//! [`Features`], and turn either into a predicate for
//! [`crate::reduce::shrink::Shrinker`]. [`RunningTarget`] is that: the in-process
//! driver of one cargo-fuzz target, with its restarts, timeouts and memory
//! limits, behind three methods.
//!
//! The bundled example's target (`example/fuzz`, an INI parser), its
//! crash shrunk while it crashes the same way, then an input that passes
//! shrunk while it keeps its coverage:
//!
//! ```
//! use reduce_crash::reduce::shrink::Shrinker;
//! use reduce_crash::run::outcome::{MatchMode, Outcome};
//! use reduce_crash::run::target::{RunningTarget, TargetOptions};
//! use std::path::Path;
//!
//! let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("example/fuzz");
//! # let mut opts = TargetOptions { coverage: true, ..TargetOptions::default() };
//! # // The drivers the integration tests build, to build once.
//! # opts.build.target_dir = Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tmp/fixture-driver"));
//! # /*
//! let opts = TargetOptions { coverage: true, ..TargetOptions::default() };
//! # */
//! let mut target = RunningTarget::open(&example, "parse", &opts)?;
//!
//! let crash = b"[server]\nhost = example.org\nmotd = \"hello # there\n";
//! let Outcome::Crash(signature) = target.run(crash)? else { panic!("the example's bug") };
//! let shrunk = Shrinker::new().shrink(crash, target.same_crash(&signature, MatchMode::Location));
//! assert_eq!(shrunk.input.len(), 3); // `a="`: an unterminated quote
//!
//! let input = b"  [section one]\n; a comment\nkey = \"quoted\" \nother = plain # c\n";
//! let (_, features) = target.coverage(input)?;
//! let shrunk = Shrinker::new()
//!     .max_tests(2_000)
//!     .shrink(input, target.keeps_features(&features.unwrap()));
//! assert!(shrunk.input.len() < input.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::error::{Error, Result};
use crate::run::coverage::Features;
use crate::run::driver::{self, BuildOptions};
use crate::run::exec::{ExecConfig, Executor};
use crate::run::outcome::{MatchMode, Outcome, Signature};
use crate::run::project::{FuzzProject, Locate};
use std::path::Path;
use std::time::Duration;

/// How to build and run the target.
#[derive(Debug, Clone)]
pub struct TargetOptions {
    /// Build flags as cargo-fuzz names them; `build.coverage` is set from
    /// [`TargetOptions::coverage`].
    pub build: BuildOptions,
    /// Build with coverage counters ([`RunningTarget::coverage`] needs it).
    pub coverage: bool,
    /// Per-input time limit.
    pub timeout: Duration,
    /// Live heap limit in MiB (0 = none).
    pub rss_limit_mb: u64,
    /// Largest single allocation in MiB (0 = the heap limit).
    pub malloc_limit_mb: u64,
}

impl Default for TargetOptions {
    fn default() -> Self {
        TargetOptions {
            build: BuildOptions::default(),
            coverage: false,
            timeout: Duration::from_secs(1),
            rss_limit_mb: 2048,
            malloc_limit_mb: 0,
        }
    }
}

/// One fuzz target, built and running in its driver.
pub struct RunningTarget {
    project: FuzzProject,
    name: String,
    exec: Executor,
}

impl RunningTarget {
    /// Finds the cargo-fuzz project at or above `dir` (a fuzz directory, a
    /// crate using cargo-fuzz, or anything inside one), builds `name`'s
    /// driver and starts it.
    pub fn open(dir: &Path, name: &str, opts: &TargetOptions) -> Result<RunningTarget> {
        let cwd = if dir.is_dir() {
            dir.to_owned()
        } else {
            return Err(Error::NoProject {
                searched: dir.to_owned(),
            });
        };
        let project = FuzzProject::locate(&Locate {
            fuzz_dir: None,
            manifest_path: None,
            artifact: None,
            cwd,
        })?;
        RunningTarget::start(project, name, opts)
    }

    /// Builds and starts `name` of an already located project.
    pub fn start(project: FuzzProject, name: &str, opts: &TargetOptions) -> Result<RunningTarget> {
        let mut build = opts.build.clone();
        build.coverage = opts.coverage;
        let built = driver::build(&project, name, &build)?;
        let exec = Executor::new(ExecConfig {
            rss_limit_mb: opts.rss_limit_mb,
            malloc_limit_mb: opts.malloc_limit_mb,
            ..ExecConfig::new(built.binary, opts.timeout)
        })?;
        Ok(RunningTarget {
            project,
            name: name.to_owned(),
            exec,
        })
    }

    pub fn project(&self) -> &FuzzProject {
        &self.project
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the target decodes its input with `arbitrary`.
    pub fn typed(&self) -> bool {
        self.exec.typed()
    }

    /// Another driver of the same build with the same limits, in a process
    /// of its own (one per core for work that splits, e.g. a corpus).
    pub fn sibling(&self) -> Result<RunningTarget> {
        Ok(RunningTarget {
            project: self.project.clone(),
            name: self.name.clone(),
            exec: Executor::new(self.exec.config().clone())?,
        })
    }

    /// Inputs the target actually ran so far.
    pub fn executions(&self) -> u64 {
        self.exec.stats().executions
    }

    /// Stops the driver; the next input starts a fresh one.
    pub fn restart(&mut self) {
        self.exec.restart();
    }

    /// Runs one input.
    pub fn run(&mut self, input: &[u8]) -> Result<Outcome> {
        Ok(self.exec.run(input)?.outcome)
    }

    /// Runs one input and returns its outcome and coverage features
    /// (`None` when the input killed the driver: abort, timeout, …).
    pub fn coverage(&mut self, input: &[u8]) -> Result<(Outcome, Option<Features>)> {
        let (run, features) = self.exec.run_coverage(input)?;
        Ok((run.outcome, features.map(Features::from_unsorted)))
    }

    /// Predicate: crashes with `signature` as `mode` compares crashes.
    pub fn same_crash<'a>(
        &'a mut self,
        signature: &'a Signature,
        mode: MatchMode,
    ) -> impl FnMut(&[u8]) -> bool + 'a {
        move |c| match self.run(c) {
            Ok(Outcome::Crash(s)) => mode.matches(signature, &s),
            _ => false,
        }
    }

    /// Predicate: does not crash and covers every feature of `required`.
    pub fn keeps_features<'a>(
        &'a mut self,
        required: &'a Features,
    ) -> impl FnMut(&[u8]) -> bool + 'a {
        move |c| match self.coverage(c) {
            Ok((Outcome::Pass | Outcome::Reject, Some(f))) => f.contains_all(required),
            _ => false,
        }
    }
}
