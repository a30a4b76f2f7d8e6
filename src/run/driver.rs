//! Builds a fuzz target so that it runs in-process, many inputs per process.
//!
//! The target file is always compiled unmodified, as the crate root of its
//! binary, exactly as `cargo fuzz build` compiles it; only `libfuzzer-sys`
//! is replaced by a stand-in (the *shim*, `templates/driver/shim/`) whose
//! `fuzz_target!` expands to plain functions and which provides the binary's
//! `main`: the driver loop. Two ways to build it:
//!
//! * **As `cargo fuzz build` builds it** (the default when a nightly
//!   toolchain is available, the active one or one installed through
//!   rustup): the user's fuzz package itself, with cargo-fuzz's flags
//!   (AddressSanitizer, SanitizerCoverage, `--cfg fuzzing`, debug
//!   assertions, release with line tables, one codegen unit), with the same
//!   build directory (`build.build-dir`), with `libfuzzer-sys` patched to
//!   the shim through `cargo --config`. Code, stack frames and sanitizer
//!   reports are those of the binary that found the crash, and every
//!   dependency an earlier `cargo fuzz build`/`run` compiled is reused: only
//!   the shim and the target crate compile. The user's files stay untouched:
//!   the patched resolution goes to a copy of `Cargo.lock` (nightly cargo's
//!   `resolver.lockfile-path`), and the target directory, where cargo links
//!   the binaries it built, is one of ours (`<target>/reduce-crash/faithful`),
//!   so the user's fuzzer at `<target>/<triple>/release/<target>` is never
//!   replaced, whatever state the directory is in.
//! * **A generated package** (`--sanitizer none`, or no nightly toolchain):
//!   a package written under the target directory whose binaries are the
//!   target files, with the fuzz package's dependencies, features, edition
//!   and `Cargo.lock`, built with stable-compatible flags in its own
//!   directory. No sanitizer; the shim counts the heap instead.
//!
//! Files are rewritten only when their contents change, so a second run is a
//! no-op cargo build.
//!
//! One file, about 1,200 lines: both builds share the shim, the lockfile
//! handling and the cargo invocation, and each half only makes sense next
//! to the other (what the faithful build keeps, the generated one imitates).

use crate::error::{Error, Result};
use crate::run::project::{cargo, FuzzProject};
use cargo_metadata::{DependencyKind, Message};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

const SHIM_MANIFEST: &str = include_str!("../../templates/driver/shim/Cargo.toml.in");
const SHIM_FILES: &[(&str, &str)] = &[
    (
        "build.rs",
        include_str!("../../templates/driver/shim/build.rs"),
    ),
    (
        "src/lib.rs",
        include_str!("../../templates/driver/shim/src/lib.rs"),
    ),
    (
        "src/__driver.rs",
        include_str!("../../templates/driver/shim/src/__driver.rs"),
    ),
    (
        "src/serve.rs",
        include_str!("../../templates/driver/shim/src/serve.rs"),
    ),
    (
        "src/fork_server.rs",
        include_str!("../../templates/driver/shim/src/fork_server.rs"),
    ),
    (
        "src/limits.rs",
        include_str!("../../templates/driver/shim/src/limits.rs"),
    ),
    (
        "src/sancov.rs",
        include_str!("../../templates/driver/shim/src/sancov.rs"),
    ),
    (
        "src/signals.rs",
        include_str!("../../templates/driver/shim/src/signals.rs"),
    ),
    (
        "src/probe.rs",
        include_str!("../../templates/driver/shim/src/probe.rs"),
    ),
    (
        "src/stack.rs",
        include_str!("../../templates/driver/shim/src/stack.rs"),
    ),
];

/// The shim's version in a generated package (any version works there).
const GENERATED_SHIM_VERSION: &str = "0.4.99";

/// Build settings, named as cargo-fuzz names them.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// `-D/--dev`: debug profile.
    pub dev: bool,
    /// `-O/--release`: release without debug assertions.
    pub release: bool,
    /// `-a/--debug-assertions`: force debug assertions on.
    pub debug_assertions: bool,
    pub features: Option<String>,
    pub all_features: bool,
    pub no_default_features: bool,
    /// `-s/--sanitizer`: `None` is `cargo fuzz build`'s default (address,
    /// when a nightly toolchain is available); `none`, `address`, `leak`,
    /// `memory`, `thread`.
    pub sanitizer: Option<String>,
    /// `--target-dir`: where to build (default: the fuzz workspace's own
    /// target directory for the faithful build, `<it>/reduce-crash` for the
    /// generated package).
    pub target_dir: Option<PathBuf>,
    pub no_cfg_fuzzing: bool,
    /// Print cargo's output while building.
    pub verbose: bool,
    /// Instrument with SanitizerCoverage 8-bit counters (cargo-fuzz's
    /// coverage flags) so the driver can report each input's coverage
    /// features; built as a generated package in its own directory
    /// (`build-cov`).
    pub coverage: bool,
}

impl BuildOptions {
    fn debug_assertions_on(&self) -> bool {
        !self.release || self.debug_assertions
    }

    /// The sanitizer asked for, `None` for cargo-fuzz's default.
    fn sanitizer_asked(&self) -> Option<&str> {
        self.sanitizer.as_deref()
    }
}

/// How to run a nightly cargo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Toolchain {
    /// The active toolchain is a nightly one.
    Active,
    /// An installed toolchain, run through `rustup run <name>`.
    Rustup(String),
}

impl Toolchain {
    /// `+nightly` for the reproduce line, when the active toolchain is not it.
    pub fn plus(&self) -> Option<String> {
        match self {
            Toolchain::Active => None,
            Toolchain::Rustup(name) => Some(format!("+{name}")),
        }
    }

    /// Whether this toolchain's cargo has `build.build-dir` (stable since
    /// 1.91): the faithful build then reuses `cargo fuzz build`'s compiled
    /// dependencies while linking its drivers into a directory of ours. Asked
    /// once per toolchain (`cargo -V`).
    fn supports_build_dir(&self) -> bool {
        static KNOWN: std::sync::Mutex<Vec<(Toolchain, bool)>> = std::sync::Mutex::new(Vec::new());
        let mut known = KNOWN.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, yes)) = known.iter().find(|(t, _)| t == self) {
            return *yes;
        }
        let version = self
            .cargo()
            .arg("-V")
            .stderr(Stdio::null())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let yes = cargo_minor_version(&version).is_some_and(|minor| minor >= 91);
        known.push((self.clone(), yes));
        yes
    }

    fn cargo(&self) -> Command {
        match self {
            Toolchain::Active => Command::new(cargo()),
            Toolchain::Rustup(name) => match rustup_toolchain_dir(name) {
                // What `rustup run` does, without its extra process.
                Some(dir) => {
                    let bin = dir.join("bin");
                    let mut cmd = Command::new(bin.join("cargo"));
                    let path = std::env::var_os("PATH").unwrap_or_default();
                    let mut paths = vec![bin];
                    paths.extend(std::env::split_paths(&path));
                    if let Ok(joined) = std::env::join_paths(paths) {
                        cmd.env("PATH", joined);
                    }
                    let toolchain = dir
                        .file_name()
                        .map(|n| n.to_os_string())
                        .unwrap_or_default();
                    cmd.env("RUSTUP_TOOLCHAIN", toolchain);
                    cmd
                }
                None => {
                    let mut cmd = Command::new(rustup());
                    cmd.args(["run", name, "cargo"]);
                    cmd
                }
            },
        }
    }
}

/// `91` of `cargo 1.91.0-nightly (…)`.
fn cargo_minor_version(version: &str) -> Option<u32> {
    let number = version.strip_prefix("cargo 1.")?;
    number.split('.').next()?.parse().ok()
}

fn rustup() -> PathBuf {
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        let p = Path::new(&home).join("bin").join("rustup");
        if p.is_file() {
            return p;
        }
    }
    PathBuf::from("rustup")
}

/// `rustc -vV` of the active toolchain (run once per process).
fn rustc_version() -> &'static str {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION.get_or_init(|| {
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        Command::new(rustc)
            .arg("-vV")
            .stderr(Stdio::null())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    })
}

/// The directory of an installed rustup toolchain, `<RUSTUP_HOME>/toolchains/<name>-<host>`.
fn rustup_toolchain_dir(name: &str) -> Option<PathBuf> {
    let home = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".rustup")))?;
    let host = rustc_version()
        .lines()
        .find_map(|l| l.strip_prefix("host: "))?;
    let dir = home.join("toolchains").join(format!("{name}-{host}"));
    (dir.join("bin/cargo").is_file() && dir.join("bin/rustc").is_file()).then_some(dir)
}

/// A nightly toolchain to build with, if there is one: the active one, else
/// `nightly` installed through rustup (as nearly every cargo-fuzz user has).
pub fn find_nightly() -> Option<Toolchain> {
    if rustc_version().contains("-nightly") {
        return Some(Toolchain::Active);
    }
    if rustup_toolchain_dir("nightly").is_some() {
        return Some(Toolchain::Rustup("nightly".to_owned()));
    }
    // Not where rustup usually keeps it: ask rustup itself.
    let installed = Command::new(rustup())
        .args(["run", "nightly", "rustc", "-vV"])
        .env("RUSTUP_AUTO_INSTALL", "0")
        .stderr(Stdio::null())
        .output()
        .map(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("-nightly"))
        .unwrap_or(false);
    installed.then(|| Toolchain::Rustup("nightly".to_owned()))
}

/// Which way a target is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildKind {
    /// As `cargo fuzz build` builds it, with this sanitizer and toolchain.
    CargoFuzz {
        sanitizer: String,
        toolchain: Toolchain,
    },
    /// A generated package, no sanitizer (stable).
    Generated,
}

impl BuildKind {
    /// One phrase for the status line.
    pub fn describe(&self) -> String {
        match self {
            BuildKind::CargoFuzz {
                sanitizer,
                toolchain,
            } => {
                let channel = match toolchain {
                    Toolchain::Active => "nightly".to_owned(),
                    Toolchain::Rustup(name) => name.clone(),
                };
                format!(
                    "as `cargo fuzz build` builds it ({channel}, {})",
                    sanitizer_name(sanitizer)
                )
            }
            BuildKind::Generated => "without a sanitizer".to_owned(),
        }
    }

    pub fn sanitizer(&self) -> Option<&str> {
        match self {
            BuildKind::CargoFuzz { sanitizer, .. } => Some(sanitizer),
            BuildKind::Generated => None,
        }
    }
}

fn sanitizer_name(s: &str) -> &str {
    match s {
        "address" => "AddressSanitizer",
        "leak" => "LeakSanitizer",
        "memory" => "MemorySanitizer",
        "thread" => "ThreadSanitizer",
        other => other,
    }
}

/// What will be built, and why not the faithful build if it is not.
#[derive(Debug, Clone)]
pub struct Plan {
    pub kind: BuildKind,
    /// Why the build differs from `cargo fuzz build`'s default (one line), if it does.
    pub note: Option<String>,
}

/// Decides how to build: cargo-fuzz's default build (AddressSanitizer) on a
/// nightly toolchain when there is one; `-s none` and machines without
/// nightly get the generated package. Coverage (corpora) comes from the
/// same build, so its features are those libFuzzer counts on the binary
/// `cargo fuzz build` made (AddressSanitizer's checks included: measured
/// on a build without it, a shrunk corpus lost libFuzzer features on the
/// real one).
pub fn plan(opts: &BuildOptions) -> Plan {
    plan_with(opts, find_nightly)
}

fn plan_with(opts: &BuildOptions, nightly: impl FnOnce() -> Option<Toolchain>) -> Plan {
    let generated = |note: Option<String>| Plan {
        kind: BuildKind::Generated,
        note,
    };
    let asked = opts.sanitizer_asked();
    if asked == Some("none") {
        return generated(None);
    }
    let sanitizer = asked.unwrap_or("address").to_owned();
    match nightly() {
        Some(toolchain) => Plan {
            kind: BuildKind::CargoFuzz {
                sanitizer,
                toolchain,
            },
            note: None,
        },
        None => generated(Some(format!(
            "no nightly toolchain: building without {} (cargo fuzz's default needs nightly), so \
             memory errors it would report (heap-buffer-overflow, use-after-free, …) go unseen and \
             stack depths differ; `rustup toolchain install nightly` for the faithful build",
            sanitizer_name(&sanitizer)
        ))),
    }
}

/// A built driver, ready to run.
#[derive(Debug, Clone)]
pub struct Driver {
    pub binary: PathBuf,
    /// Did cargo have to compile anything?
    pub fresh: bool,
    pub kind: BuildKind,
    /// One line each about how this build differs (e.g. which memory limits apply).
    pub notes: Vec<String>,
}

fn build_root(project: &FuzzProject, opts: &BuildOptions) -> PathBuf {
    match &opts.target_dir {
        Some(dir) => dir.clone(),
        None => project.target_directory.join("reduce-crash"),
    }
}

/// Where the generated package for this project is written.
pub fn driver_dir(project: &FuzzProject, opts: &BuildOptions) -> PathBuf {
    build_root(project, opts).join(format!("driver-{}", project.package.name))
}

/// Where [`build_planned`] puts `target`'s driver for `kind`, when that is
/// known before building and an earlier build left a driver there: a run can
/// start it while cargo checks whether it is up to date, and keep it if the
/// build returns the very same file ([`FileIdentity`]).
pub fn previous_binary(
    project: &FuzzProject,
    target: &str,
    opts: &BuildOptions,
    kind: &BuildKind,
) -> Option<PathBuf> {
    let triple = host_triple().ok()?;
    let path = match kind {
        BuildKind::CargoFuzz { .. } if PatchSource::of(project).is_some() => {
            let profile = if opts.dev { "debug" } else { "release" };
            faithful_dir(project, opts)
                .join(triple)
                .join(profile)
                .join(target)
        }
        BuildKind::CargoFuzz { .. } | BuildKind::Generated => {
            let own_allocator = driver_dir(project, opts)
                .join("own-global-allocator")
                .join(target)
                .exists();
            let profile = if opts.dev { "debug" } else { "release" };
            build_root(project, opts)
                .join(generated_build_dir(own_allocator, opts))
                .join(triple)
                .join(profile)
                .join(target)
        }
    };
    path.is_file().then_some(path)
}

/// What tells one file from another and from its earlier contents: device,
/// inode, size and modification time. A driver started from a file is the
/// driver a build returns if the build returns a file of the same identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileIdentity {
    pub fn of(path: &Path) -> Option<FileIdentity> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(FileIdentity {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            modified: m.modified().ok(),
        })
    }
}

/// Asks the active toolchain for its version, and the nightly one whether
/// it has `build.build-dir`, in the background (what [`plan`] and the build
/// need), so that it runs while the caller waits for `cargo metadata`.
pub fn warm_up() {
    std::thread::spawn(|| {
        rustc_version();
        if let Some(nightly) = find_nightly() {
            nightly.supports_build_dir();
        }
    });
}

/// Builds `target` as planned ([`plan`]).
pub fn build(project: &FuzzProject, target: &str, opts: &BuildOptions) -> Result<Driver> {
    let plan = plan(opts);
    build_planned(project, target, opts, &plan.kind)
}

/// Builds `target` the way `kind` says.
pub fn build_planned(
    project: &FuzzProject,
    target: &str,
    opts: &BuildOptions,
    kind: &BuildKind,
) -> Result<Driver> {
    project.target(target)?;
    // Builds of one build directory take turns (other threads, other runs):
    // cargo locks its own build, but not the files written around it (the
    // generated package, the shim, the driver linked out of cargo's way).
    let root = build_root(project, opts);
    std::fs::create_dir_all(&root).map_err(|source| Error::Write {
        path: root.clone(),
        source,
    })?;
    let _lock = crate::output::lock_exclusive(&root.join(".build.lock"), || {})?;
    match kind {
        BuildKind::CargoFuzz {
            sanitizer,
            toolchain,
        } => {
            let Some(patch) = PatchSource::of(project) else {
                // libfuzzer-sys from a path or under another name: no patch possible.
                return build_generated(project, target, opts);
            };
            build_cargo_fuzz(project, target, opts, sanitizer, toolchain, &patch)
        }
        BuildKind::Generated => build_generated(project, target, opts),
    }
}

// ------------------------------------------------------------------ shim

/// Writes the shim crate into `dir`, as package `name` at `version`, with
/// `features` (those the fuzz package asks of the crate it replaces) as
/// features that do nothing.
fn write_shim(dir: &Path, name: &str, version: &str, features: &[String]) -> Result<()> {
    let own = [
        "default",
        "link_libfuzzer",
        "arbitrary-derive",
        "limited-alloc",
    ];
    let extra: String = features
        .iter()
        .filter(|f| !own.contains(&f.as_str()))
        .map(|f| format!("{} = []\n", toml_str(f)))
        .collect();
    write_if_changed(
        &dir.join("Cargo.toml"),
        &SHIM_MANIFEST
            .replace("{{NAME}}", name)
            .replace("{{VERSION}}", version)
            .replace("{{FEATURES}}", &extra),
    )?;
    for (path, contents) in SHIM_FILES {
        write_if_changed(&dir.join(path), contents)?;
    }
    Ok(())
}

fn write_if_changed(path: &Path, contents: &str) -> Result<()> {
    if std::fs::read(path).ok().as_deref() == Some(contents.as_bytes()) {
        return Ok(());
    }
    let werr = |source| Error::Write {
        path: path.to_owned(),
        source,
    };
    std::fs::create_dir_all(path.parent().expect("file in a directory")).map_err(werr)?;
    // Atomic: concurrent runs may be building from this directory right now.
    crate::output::write_atomic(path, contents.as_bytes())
}

fn toml_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

// ------------------------------------------------------------------ as cargo fuzz builds

/// The packages the shim can stand in for: libfuzzer-sys, and LibAFL's
/// drop-in replacement that `cargo fuzz init --fuzz-engine libafl` writes
/// (`libfuzzer-sys = { package = "libafl_libfuzzer", … }`).
const ENGINES: &[&str] = &["libfuzzer-sys", "libafl_libfuzzer"];

/// Where the fuzz package's `libfuzzer-sys` comes from, for `[patch]`.
struct PatchSource {
    /// The `[patch.<key>]` table: `crates-io`, a registry URL or a git URL.
    key: String,
    /// The package replaced ([`ENGINES`]).
    package: String,
    /// The version the shim must have to replace it.
    version: String,
    /// The features the fuzz package asks of it.
    features: Vec<String>,
}

impl PatchSource {
    fn of(project: &FuzzProject) -> Option<PatchSource> {
        let dep = project.package.dependencies.iter().find(|d| {
            let key = d.rename.as_deref().unwrap_or(&d.name);
            d.kind == DependencyKind::Normal
                && ENGINES.contains(&d.name.as_str())
                && (key == "libfuzzer-sys" || key == "libfuzzer_sys")
        })?;
        let source = dep.source.as_ref().map(|s| s.repr.as_str())?;
        let key = if source == "registry+https://github.com/rust-lang/crates.io-index"
            || source == "sparse+https://index.crates.io/"
        {
            "crates-io".to_owned()
        } else if let Some(git) = source.strip_prefix("git+") {
            git.split(['?', '#']).next().unwrap_or(git).to_owned()
        } else if let Some(url) = source
            .strip_prefix("registry+")
            .or_else(|| source.strip_prefix("sparse+"))
        {
            url.to_owned()
        } else {
            return None;
        };
        let lock = std::fs::read_to_string(project.workspace_root.join("Cargo.lock")).ok();
        let version = lock
            .as_deref()
            .and_then(|l| locked_version(l, &dep.name))
            .or_else(|| {
                // No lockfile yet: a version the requirement accepts.
                let req = dep.req.comparators.first()?;
                let candidate = format!(
                    "{}.{}.{}",
                    req.major,
                    req.minor.unwrap_or(0),
                    req.patch.unwrap_or(0)
                );
                cargo_metadata::semver::Version::parse(&candidate)
                    .ok()
                    .filter(|v| dep.req.matches(v))
                    .map(|_| candidate)
            })
            .or_else(|| {
                ["0.4.13", "0.4.99", "0.3.5"]
                    .into_iter()
                    .find(|v| {
                        cargo_metadata::semver::Version::parse(v).is_ok_and(|v| dep.req.matches(&v))
                    })
                    .map(str::to_owned)
            })?;
        Some(PatchSource {
            key,
            package: dep.name.to_string(),
            version,
            features: dep.features.clone(),
        })
    }

    /// The `--config` value that patches the package to `shim`.
    fn config(&self, shim: &Path) -> String {
        let key = if self.key == "crates-io" {
            self.key.clone()
        } else {
            toml_str(&self.key)
        };
        format!(
            "patch.{key}.{}.path={}",
            self.package,
            toml_str(&shim.display().to_string())
        )
    }
}

/// The version of `name` in a `Cargo.lock` (the first, if several).
fn locked_version(lock: &str, name: &str) -> Option<String> {
    let mut in_package = false;
    let mut found = false;
    for line in lock.lines() {
        let line = line.trim();
        if line == "[[package]]" {
            in_package = true;
            found = false;
            continue;
        }
        if !in_package {
            continue;
        }
        if let Some(v) = line.strip_prefix("name = ") {
            found = v.trim_matches('"') == name;
        } else if let Some(v) = line.strip_prefix("version = ") {
            if found {
                return Some(v.trim_matches('"').to_owned());
            }
        }
    }
    None
}

/// The RUSTFLAGS `cargo fuzz build` passes (cargo-fuzz 0.13, `project.rs`),
/// in its order and spelling, so that cargo's fingerprints of every
/// dependency match those of the user's own fuzz build.
pub fn cargo_fuzz_rustflags(opts: &BuildOptions, sanitizer: &str, linux: bool) -> String {
    let mut f = String::new();
    f.push_str(" -Cpasses=sancov-module");
    f.push_str(" -Cllvm-args=-sanitizer-coverage-level=4");
    f.push_str(" -Cllvm-args=-sanitizer-coverage-inline-8bit-counters");
    f.push_str(" -Cllvm-args=-sanitizer-coverage-pc-table");
    f.push_str(" -Cllvm-args=-sanitizer-coverage-trace-compares");
    if !opts.no_cfg_fuzzing {
        f.push_str(" --cfg fuzzing");
    }
    f.push_str(" -Cllvm-args=-simplifycfg-branch-fold-threshold=0");
    match sanitizer {
        "none" => {}
        "memory" => f.push_str(" -Zsanitizer=memory -Zsanitizer-memory-track-origins"),
        s => {
            let _ = write!(f, " -Zsanitizer={s}");
        }
    }
    if linux {
        f.push_str(" -Cllvm-args=-sanitizer-coverage-stack-depth");
    }
    if opts.debug_assertions_on() {
        f.push_str(" -Cdebug-assertions");
    }
    if !opts.dev {
        f.push_str(" -Ccodegen-units=1");
    }
    if let Ok(user) = std::env::var("RUSTFLAGS") {
        f.push(' ');
        f.push_str(&user);
    }
    f
}

fn build_cargo_fuzz(
    project: &FuzzProject,
    target: &str,
    opts: &BuildOptions,
    sanitizer: &str,
    toolchain: &Toolchain,
    patch: &PatchSource,
) -> Result<Driver> {
    let ours = users_target_dir(project, opts).join("reduce-crash");
    let shim = ours.join(format!("{}-shim", patch.package));
    write_shim(&shim, &patch.package, &patch.version, &patch.features)?;
    let lockfile = sync_lockfile_copy(
        project,
        &ours.join("lock").join(project.package.name.as_str()),
    )?;

    let triple = host_triple()?;
    let mut cmd = toolchain.cargo();
    cmd.arg("build")
        .arg("--manifest-path")
        .arg(&project.manifest)
        .arg("--target")
        .arg(&triple);
    if !opts.dev {
        cmd.args([
            "--release",
            "--config",
            "profile.release.debug=\"line-tables-only\"",
        ]);
    }
    if opts.no_default_features {
        cmd.arg("--no-default-features");
    }
    if opts.all_features {
        cmd.arg("--all-features");
    }
    if let Some(f) = &opts.features {
        cmd.arg("--features").arg(f);
    }
    if sanitizer == "memory" {
        cmd.args(["-Z", "build-std"]);
    }
    // The binaries cargo links out of `deps/` go to a directory of ours, never
    // to `<target>/<triple>/release/<target>`, the user's fuzzer; the
    // intermediate artifacts stay where `cargo fuzz build` keeps them, so
    // every dependency it compiled is reused.
    cmd.arg("--target-dir").arg(faithful_dir(project, opts));
    if toolchain.supports_build_dir() {
        cmd.arg("--config").arg(format!(
            "build.build-dir={}",
            toml_str(&users_build_dir(project, opts).display().to_string())
        ));
    }
    cmd.arg("--bin")
        .arg(target)
        .arg("-Zunstable-options")
        .arg("--config")
        .arg(format!(
            "resolver.lockfile-path={}",
            toml_str(&lockfile.display().to_string())
        ))
        .arg("--config")
        .arg(patch.config(&shim))
        .arg("--message-format=json-render-diagnostics")
        .env(
            "RUSTFLAGS",
            cargo_fuzz_rustflags(opts, sanitizer, triple.contains("-linux-")),
        );
    if matches!(toolchain, Toolchain::Rustup(_)) {
        // The stable toolchain's tools must not leak into the nightly build.
        cmd.env_remove("RUSTC")
            .env_remove("RUSTDOC")
            .env_remove("CARGO");
    }
    let built = run_cargo(cmd, target, opts.verbose)?;
    let mut notes = Vec::new();
    if !toolchain.supports_build_dir() && !built.fresh {
        notes.push(format!(
            "this nightly cargo predates build.build-dir (1.91), so the driver cannot reuse what              `cargo fuzz build` compiled and its dependencies were compiled again in {};              `rustup update nightly` avoids this",
            faithful_dir(project, opts).display()
        ));
    }
    Ok(Driver {
        binary: built.binary,
        fresh: built.fresh,
        kind: BuildKind::CargoFuzz {
            sanitizer: sanitizer.to_owned(),
            toolchain: toolchain.clone(),
        },
        notes,
    })
}

/// The target directory `cargo fuzz build` uses: `--target-dir`, else the
/// workspace's.
fn users_target_dir(project: &FuzzProject, opts: &BuildOptions) -> PathBuf {
    opts.target_dir
        .clone()
        .unwrap_or_else(|| project.target_directory.clone())
}

/// Where `cargo fuzz build` keeps its intermediate artifacts: the
/// `build.build-dir` the user configured, else its target directory.
fn users_build_dir(project: &FuzzProject, opts: &BuildOptions) -> PathBuf {
    if project.build_directory != project.target_directory {
        project.build_directory.clone()
    } else {
        users_target_dir(project, opts)
    }
}

/// The target directory of the faithful build: where cargo links the
/// drivers (only that, with a nightly cargo that has `build.build-dir`; the
/// whole build with an older one). Never the user's target directory
/// itself, whose `<triple>/release/<target>` is their fuzzer.
fn faithful_dir(project: &FuzzProject, opts: &BuildOptions) -> PathBuf {
    users_target_dir(project, opts)
        .join("reduce-crash")
        .join("faithful")
}

/// Copies the fuzz workspace's `Cargo.lock` to `dir/Cargo.lock` when it
/// changed since the last copy; the patched resolution is written there,
/// never to the user's file.
fn sync_lockfile_copy(project: &FuzzProject, dir: &Path) -> Result<PathBuf> {
    let copy = dir.join("Cargo.lock");
    let source = project.workspace_root.join("Cargo.lock");
    let seen = dir.join("Cargo.lock.source");
    match std::fs::read_to_string(&source) {
        Ok(lock) => {
            if std::fs::read_to_string(&seen).ok().as_deref() != Some(lock.as_str())
                || !copy.exists()
            {
                write_if_changed(&copy, &lock)?;
                write_if_changed(&seen, &lock)?;
            }
        }
        Err(_) => {
            // No lockfile: cargo resolves afresh into the copy.
            std::fs::create_dir_all(dir).map_err(|source| Error::Write {
                path: dir.to_owned(),
                source,
            })?;
        }
    }
    Ok(copy)
}

// ------------------------------------------------------------------ generated package

fn build_generated(project: &FuzzProject, target: &str, opts: &BuildOptions) -> Result<Driver> {
    let dir = driver_dir(project, opts);
    // The shim counts the heap in a global allocator; a target (or a
    // dependency) with its own cannot have a second one. Learnt once from
    // the build error and remembered beside the generated package; such
    // targets get a package of their own, without the counting allocator,
    // so the project's other targets keep theirs.
    let marker = dir.join("own-global-allocator").join(target);
    let mut own_allocator = marker.exists();
    let built = loop {
        let build_dir = generated_build_dir(own_allocator, opts);
        let dir = if own_allocator {
            let mut name = dir.file_name().unwrap_or_default().to_os_string();
            name.push("-own-allocator");
            dir.with_file_name(name)
        } else {
            dir.clone()
        };
        generate(project, &dir, !own_allocator)?;
        let cmd = generated_build(project, &dir, build_dir, target, opts)?;
        match run_cargo(cmd, target, opts.verbose) {
            Err(Error::Build { diagnostics, .. })
                if !own_allocator && conflicting_allocators(&diagnostics) =>
            {
                write_if_changed(&marker, "the target defines its own #[global_allocator]\n")?;
                own_allocator = true;
            }
            other => break other?,
        }
    };
    let mut notes = Vec::new();
    if own_allocator {
        notes.push(format!(
            "`{target}` has its own global allocator, which the driver keeps: only -rss_limit_mb \
             applies (the peak RSS, checked after every input and every 100 ms), not \
             -malloc_limit_mb"
        ));
    }
    Ok(Driver {
        binary: built.binary,
        fresh: built.fresh,
        kind: BuildKind::Generated,
        notes,
    })
}

/// The target directory (under the build root) of a generated package's build.
fn generated_build_dir(own_allocator: bool, opts: &BuildOptions) -> &'static str {
    if own_allocator {
        "build-own-allocator"
    } else if opts.coverage {
        "build-cov"
    } else {
        "build"
    }
}

/// rustc's error for two `#[global_allocator]`s in one binary.
fn conflicting_allocators(diagnostics: &str) -> bool {
    diagnostics.contains("global_allocator") && diagnostics.contains("conflicts with")
        || diagnostics.contains("cannot define multiple global allocators")
}

/// The `cargo build` of the generated package.
fn generated_build(
    project: &FuzzProject,
    dir: &Path,
    build_dir: &str,
    target: &str,
    opts: &BuildOptions,
) -> Result<Command> {
    let root = build_root(project, opts);
    let triple = host_triple()?;
    let mut cmd = Command::new(cargo());
    cmd.arg("build")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .arg("--bin")
        .arg(target)
        .arg("--target")
        .arg(&triple)
        .arg("--target-dir")
        .arg(root.join(build_dir))
        .arg("--message-format=json-render-diagnostics");
    if !opts.dev {
        cmd.arg("--release");
    }
    if let Some(f) = &opts.features {
        cmd.arg("--features").arg(f);
    }
    if opts.all_features {
        cmd.arg("--all-features");
    }
    if opts.no_default_features {
        cmd.arg("--no-default-features");
    }
    cmd.env(
        "CARGO_ENCODED_RUSTFLAGS",
        generated_rustflags(project, opts).join("\x1f"),
    )
    .env_remove("RUSTFLAGS")
    .env_remove("CARGO_BUILD_RUSTFLAGS")
    .env_remove("CARGO_TARGET_DIR");
    Ok(cmd)
}

/// Writes the generated package into `dir`; `counting`: the shim's counting
/// global allocator enforces the memory limits.
pub fn generate(project: &FuzzProject, dir: &Path, counting: bool) -> Result<()> {
    write_shim(
        &dir.join("shim"),
        "libfuzzer-sys",
        GENERATED_SHIM_VERSION,
        &[],
    )?;
    write_if_changed(&dir.join("Cargo.toml"), &manifest(project, counting))?;
    sync_lockfile(project, dir)?;
    Ok(())
}

/// Copies the fuzz workspace's `Cargo.lock` when it changed since last time,
/// so the driver resolves the same dependency versions as the fuzz build.
fn sync_lockfile(project: &FuzzProject, dir: &Path) -> Result<()> {
    let source = project.workspace_root.join("Cargo.lock");
    let Ok(lock) = std::fs::read_to_string(&source) else {
        return Ok(());
    };
    let seen = dir.join("Cargo.lock.source");
    if std::fs::read_to_string(&seen).ok().as_deref() == Some(lock.as_str()) {
        return Ok(());
    }
    write_if_changed(&dir.join("Cargo.lock"), &lock)?;
    write_if_changed(&seen, &lock)
}

/// The generated package's `Cargo.toml`: the fuzz package's dependencies,
/// features and edition, `libfuzzer-sys` replaced by the shim, one `[[bin]]`
/// per target whose crate root is the target file itself.
pub fn manifest(project: &FuzzProject, counting: bool) -> String {
    let pkg = &project.package;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Generated by cargo-reduce-crash for {}; rewritten on every run.",
        project.manifest.display()
    );
    let _ = writeln!(out, "[package]");
    let _ = writeln!(
        out,
        "name = {}",
        toml_str(&format!("rc-driver-{}", pkg.name))
    );
    let _ = writeln!(out, "version = \"0.0.0\"\npublish = false");
    let _ = writeln!(out, "edition = {}", toml_str(pkg.edition.as_str()));
    let _ = writeln!(
        out,
        "autobins = false\nautoexamples = false\nautotests = false\nautobenches = false\n\n[workspace]\nexclude = [\"shim\"]\n"
    );

    let mut shim_features: Vec<String> = Vec::new();
    if counting {
        shim_features.push("limited-alloc".to_owned());
    }
    let mut shim_default_features = true;
    let mut sections: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for dep in &pkg.dependencies {
        if dep.kind != DependencyKind::Normal {
            continue;
        }
        let key = dep.rename.clone().unwrap_or_else(|| dep.name.clone());
        if key == "libfuzzer-sys" || key == "libfuzzer_sys" {
            shim_features.extend(
                dep.features
                    .iter()
                    .filter(|f| *f == "arbitrary-derive" || *f == "link_libfuzzer")
                    .cloned(),
            );
            shim_default_features = dep.uses_default_features;
            continue;
        }
        let section = match &dep.target {
            Some(platform) => format!("target.{}.dependencies", toml_str(&platform.to_string())),
            None => "dependencies".to_owned(),
        };
        sections
            .entry(section)
            .or_default()
            .push(dependency_line(&key, dep));
    }
    let shim = format!(
        "libfuzzer-sys = {{ path = \"shim\", default-features = {shim_default_features}, features = [{}] }}",
        shim_features
            .iter()
            .map(|f| toml_str(f))
            .collect::<Vec<_>>()
            .join(", ")
    );
    sections
        .entry("dependencies".to_owned())
        .or_default()
        .push(shim);
    for (section, lines) in &sections {
        let _ = writeln!(out, "[{section}]");
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
        out.push('\n');
    }

    if !pkg.features.is_empty() {
        let _ = writeln!(out, "[features]");
        for (name, enables) in &pkg.features {
            let list: Vec<String> = enables
                .iter()
                .filter(|e| !e.starts_with("libfuzzer-sys/") && !e.starts_with("dep:libfuzzer-sys"))
                .map(|e| toml_str(e))
                .collect();
            let _ = writeln!(out, "{} = [{}]", toml_str(name), list.join(", "));
        }
        out.push('\n');
    }

    for t in &project.targets {
        let _ = writeln!(
            out,
            "[[bin]]\nname = {}\npath = {}\ntest = false\ndoc = false\nbench = false\n",
            toml_str(&t.name),
            toml_str(&t.src_path.display().to_string())
        );
    }
    // Line tables, as `cargo fuzz build`'s: a panic raised inside std is
    // placed at its caller's line, a hang at its function.
    let _ = writeln!(
        out,
        "[profile.release]\ndebug = \"line-tables-only\"\nincremental = false\n\n[profile.dev]\nopt-level = 1"
    );
    out
}

fn dependency_line(key: &str, dep: &cargo_metadata::Dependency) -> String {
    let mut fields: Vec<String> = Vec::new();
    if dep.rename.is_some() {
        fields.push(format!("package = {}", toml_str(&dep.name)));
    }
    let req = dep.req.to_string();
    if let Some(path) = &dep.path {
        fields.push(format!("path = {}", toml_str(path.as_str())));
    } else if let Some(source) = &dep.source {
        if let Some(git) = source.repr.strip_prefix("git+") {
            let (url, query) = git.split_once('?').unwrap_or((git, ""));
            let url = url.split('#').next().unwrap_or(url);
            fields.push(format!("git = {}", toml_str(url)));
            for pair in query.split('#').next().unwrap_or("").split('&') {
                if let Some((k, v)) = pair.split_once('=') {
                    if matches!(k, "branch" | "tag" | "rev") {
                        fields.push(format!("{k} = {}", toml_str(v)));
                    }
                }
            }
        }
    }
    if req != "*"
        || (dep.path.is_none()
            && dep
                .source
                .as_ref()
                .is_none_or(|s| !s.repr.starts_with("git+")))
    {
        fields.push(format!("version = {}", toml_str(&req)));
    }
    if let Some(registry) = &dep.registry {
        fields.push(format!("registry-index = {}", toml_str(registry)));
    }
    if !dep.uses_default_features {
        fields.push("default-features = false".to_owned());
    }
    if !dep.features.is_empty() {
        let list: Vec<String> = dep.features.iter().map(|f| toml_str(f)).collect();
        fields.push(format!("features = [{}]", list.join(", ")));
    }
    if dep.optional {
        fields.push("optional = true".to_owned());
    }
    format!("{} = {{ {} }}", toml_str(key), fields.join(", "))
}

/// The generated package's flags: cargo-fuzz's semantics without a
/// sanitizer (and, unless coverage is asked for, without instrumentation),
/// plus a path remapping, then the user's own `RUSTFLAGS`.
fn generated_rustflags(project: &FuzzProject, opts: &BuildOptions) -> Vec<String> {
    let mut flags: Vec<String> = Vec::new();
    if !opts.no_cfg_fuzzing {
        flags.extend(["--cfg".into(), "fuzzing".into()]);
    }
    if opts.debug_assertions_on() {
        // -Cdebug-assertions implies overflow checks, as in cargo-fuzz.
        flags.push("-Cdebug-assertions".into());
    }
    if opts.coverage {
        // cargo-fuzz's instrumentation, minus comparison tracing (which feeds
        // libFuzzer's dictionaries, not its features); the shim defines the
        // counter registration hook and, on x86-64 Linux, the stack-depth
        // variable itself.
        flags.extend(
            [
                "-Cpasses=sancov-module",
                "-Cllvm-args=-sanitizer-coverage-level=4",
                "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
                "-Cllvm-args=-simplifycfg-branch-fold-threshold=0",
            ]
            .map(str::to_owned),
        );
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            flags.push("-Cllvm-args=-sanitizer-coverage-stack-depth".to_owned());
        }
        if !opts.dev {
            flags.push("-Ccodegen-units=1".to_owned());
        }
    }
    // Panic locations as cargo-fuzz's own build prints them: paths inside the
    // fuzz workspace relative to its root.
    let root = project.workspace_root.display().to_string();
    flags.push(format!(
        "--remap-path-prefix={}/=",
        root.trim_end_matches('/')
    ));
    if let Ok(user) = std::env::var("RUSTFLAGS") {
        flags.extend(user.split_whitespace().map(str::to_owned));
    }
    flags
}

// ------------------------------------------------------------------ running cargo

/// The host triple, as cargo-fuzz passes `--target` explicitly (so RUSTFLAGS
/// do not reach build scripts and proc-macros).
pub fn host_triple() -> Result<String> {
    rustc_version()
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .ok_or_else(|| Error::Cargo("cannot run rustc -vV (is a Rust toolchain installed?)".into()))
}

struct Built {
    binary: PathBuf,
    fresh: bool,
}

/// Whether a failed build was the user's Ctrl-C (or SIGTERM): cargo died
/// of it, or our handler saw it. A terminal's Ctrl-C reaches cargo and us
/// at once, but on a loaded machine cargo can be gone before our handler
/// has run on whichever thread took the signal: it gets a moment.
fn interrupted_build(status: &std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    if status
        .signal()
        .is_some_and(|s| s == libc::SIGINT || s == libc::SIGTERM)
    {
        return true;
    }
    for _ in 0..10 {
        if crate::interrupt::requested() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

/// Runs a `cargo build --message-format=json…` and returns the binary.
fn run_cargo(mut cmd: Command, target: &str, verbose: bool) -> Result<Built> {
    cmd.stdout(Stdio::piped()).stderr(if verbose {
        Stdio::inherit()
    } else {
        Stdio::piped()
    });
    let program: OsString = cmd.get_program().to_owned();
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::Cargo(format!("cannot run {}: {e}", Path::new(&program).display())))?;
    // Drain stderr concurrently so cargo never blocks on a full pipe.
    let stderr_thread = child.stderr.take().map(|mut s| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = s.read_to_string(&mut text);
            text
        })
    });
    let stdout = child.stdout.take().expect("piped stdout");
    let mut binary = None;
    let mut fresh = true;
    for message in Message::parse_stream(BufReader::new(stdout)).flatten() {
        if let Message::CompilerArtifact(a) = message {
            if !a.fresh {
                fresh = false;
            }
            if a.target.name == target && a.target.is_bin() {
                binary = a.executable.map(|p| p.into_std_path_buf());
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| Error::Cargo(format!("cargo build did not finish: {e}")))?;
    let diagnostics = stderr_thread
        .and_then(|t| t.join().ok())
        .unwrap_or_default();
    match binary {
        Some(binary) if status.success() => Ok(Built { binary, fresh }),
        // Ctrl-C reached cargo too: not a build failure.
        _ if interrupted_build(&status) => Err(Error::Interrupted),
        _ => Err(Error::Build {
            target: target.to_owned(),
            diagnostics,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_build_is_cargo_fuzz_s_when_nightly_is_there() {
        let nightly = || Some(Toolchain::Rustup("nightly".into()));
        let default = plan_with(&BuildOptions::default(), nightly);
        assert_eq!(
            default.kind,
            BuildKind::CargoFuzz {
                sanitizer: "address".into(),
                toolchain: Toolchain::Rustup("nightly".into())
            }
        );
        assert!(default.note.is_none());
        let none = BuildOptions {
            sanitizer: Some("none".into()),
            ..Default::default()
        };
        assert_eq!(plan_with(&none, nightly).kind, BuildKind::Generated);
        let stable = plan_with(&BuildOptions::default(), || None);
        assert_eq!(stable.kind, BuildKind::Generated);
        let note = stable.note.unwrap();
        assert!(
            note.contains("no nightly toolchain")
                && note.contains("rustup toolchain install nightly"),
            "{note}"
        );
        assert!(!note.contains('\n'));
    }

    #[test]
    fn rustflags_are_cargo_fuzz_s_in_its_order() {
        let flags = cargo_fuzz_rustflags(&BuildOptions::default(), "address", true);
        let user = std::env::var("RUSTFLAGS")
            .map(|u| format!(" {u}"))
            .unwrap_or_default();
        assert_eq!(
            flags,
            format!(
                " -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
                 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
                 -Cllvm-args=-sanitizer-coverage-pc-table \
                 -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing \
                 -Cllvm-args=-simplifycfg-branch-fold-threshold=0 -Zsanitizer=address \
                 -Cllvm-args=-sanitizer-coverage-stack-depth -Cdebug-assertions -Ccodegen-units=1{user}"
            )
        );
    }

    #[test]
    fn cargo_versions_are_read() {
        assert_eq!(
            cargo_minor_version("cargo 1.97.0-nightly (4d1f98451 2026-05-15)\n"),
            Some(97)
        );
        assert_eq!(
            cargo_minor_version("cargo 1.90.0 (840b83a10 2025-07-30)"),
            Some(90)
        );
        assert_eq!(cargo_minor_version("error: no such toolchain"), None);
    }

    #[test]
    fn locked_versions_are_read_from_the_lockfile() {
        let lock = "version = 4\n\n[[package]]\nname = \"arbitrary\"\nversion = \"1.5.0\"\n\n\
                    [[package]]\nname = \"libfuzzer-sys\"\nversion = \"0.4.13\"\nsource = \"x\"\n";
        assert_eq!(
            locked_version(lock, "libfuzzer-sys").as_deref(),
            Some("0.4.13")
        );
        assert_eq!(locked_version(lock, "arbitrary").as_deref(), Some("1.5.0"));
        assert_eq!(locked_version(lock, "cc"), None);
    }
}
