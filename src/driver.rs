//! Generates and builds the in-process driver for a fuzz target.
//!
//! The driver is a small crate written under the target directory (never in
//! the user's tree) from `templates/driver/`: one binary per fuzz target that
//! includes the target file *unmodified* via `#[path]`, with a stand-in crate
//! named `libfuzzer_sys` (the shim) so that `fuzz_target!` expands to plain
//! functions the driver can call in a loop. It depends on everything the fuzz
//! package depends on, with the fuzz workspace's `Cargo.lock` copied in so
//! dependency versions match the real fuzz build.
//!
//! It is built the way cargo-fuzz builds targets (release, `--cfg fuzzing`,
//! debug assertions and overflow checks unless `-O`), minus libFuzzer itself
//! and, unless coverage is asked for (corpus shrinking), the coverage
//! instrumentation. Files are rewritten only when their
//! contents change, so a second run is a no-op cargo build.

use crate::error::{Error, Result};
use crate::project::{cargo, FuzzProject};
use cargo_metadata::{DependencyKind, Message};
use std::fmt::Write as _;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SHIM_MANIFEST: &str = include_str!("../templates/driver/shim/Cargo.toml");
const SHIM_LIB: &str = include_str!("../templates/driver/shim/src/lib.rs");
const SHIM_DRIVER: &str = include_str!("../templates/driver/shim/src/__driver.rs");
const SHIM_PROBE: &str = include_str!("../templates/driver/shim/src/probe.rs");
const MAIN_TEMPLATE: &str = include_str!("../templates/driver/main.rs");

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
    /// `-s/--sanitizer`: `none` (default here) or address/leak/memory/thread (nightly only).
    pub sanitizer: Option<String>,
    /// `--target-dir`: where the driver is generated and built.
    pub target_dir: Option<PathBuf>,
    pub no_cfg_fuzzing: bool,
    /// Print cargo's output while building.
    pub verbose: bool,
    /// Instrument with SanitizerCoverage 8-bit counters (cargo-fuzz's
    /// coverage flags) so the driver can report each input's coverage
    /// features; built in its own directory (`build-cov`).
    pub coverage: bool,
}

impl BuildOptions {
    /// Flags to repeat in the "Reproduce with: cargo fuzz run …" line.
    pub fn cargo_fuzz_flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        if self.dev {
            flags.push("--dev".to_owned());
        }
        if self.release {
            flags.push("-O".to_owned());
        }
        if self.debug_assertions {
            flags.push("-a".to_owned());
        }
        if let Some(f) = &self.features {
            flags.push(format!("--features={f}"));
        }
        if self.all_features {
            flags.push("--all-features".to_owned());
        }
        if self.no_default_features {
            flags.push("--no-default-features".to_owned());
        }
        // Without a sanitizer flag cargo-fuzz uses ASan, which needs nightly.
        flags.push(format!(
            "--sanitizer={}",
            self.sanitizer.as_deref().unwrap_or("none")
        ));
        flags
    }

    fn debug_assertions_on(&self) -> bool {
        !self.release || self.debug_assertions
    }
}

/// A built driver, ready to run.
#[derive(Debug, Clone)]
pub struct Driver {
    pub binary: PathBuf,
    /// Did cargo have to compile anything?
    pub fresh: bool,
}

/// Where the driver crate for this project is generated.
pub fn driver_dir(project: &FuzzProject, opts: &BuildOptions) -> PathBuf {
    build_root(project, opts).join(format!("driver-{}", project.package.name))
}

fn build_root(project: &FuzzProject, opts: &BuildOptions) -> PathBuf {
    match &opts.target_dir {
        Some(dir) => dir.clone(),
        None => project.target_directory.join("reduce-crash"),
    }
}

/// Writes the driver crate (if anything changed) and builds `target`.
pub fn build(project: &FuzzProject, target: &str, opts: &BuildOptions) -> Result<Driver> {
    project.target(target)?;
    let dir = driver_dir(project, opts);
    generate(project, &dir)?;
    let root = build_root(project, opts);
    let build_dir = if opts.coverage { "build-cov" } else { "build" };
    compile(project, &dir, &root.join(build_dir), target, opts)
}

/// Writes the driver crate into `dir`.
pub fn generate(project: &FuzzProject, dir: &Path) -> Result<()> {
    write_if_changed(&dir.join("shim/Cargo.toml"), SHIM_MANIFEST)?;
    write_if_changed(&dir.join("shim/src/lib.rs"), SHIM_LIB)?;
    write_if_changed(&dir.join("shim/src/__driver.rs"), SHIM_DRIVER)?;
    write_if_changed(&dir.join("shim/src/probe.rs"), SHIM_PROBE)?;
    for t in &project.targets {
        let main = MAIN_TEMPLATE.replace("{{TARGET_PATH}}", &escape_path(&t.src_path));
        write_if_changed(&dir.join(format!("bins/{}.rs", t.name)), &main)?;
    }
    write_if_changed(&dir.join("Cargo.toml"), &manifest(project))?;
    sync_lockfile(project, dir)?;
    Ok(())
}

fn escape_path(p: &Path) -> String {
    p.display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
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

fn toml_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// The driver's `Cargo.toml`: the fuzz package's dependencies and features,
/// `libfuzzer-sys` replaced by the shim, one `[[bin]]` per target.
pub fn manifest(project: &FuzzProject) -> String {
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
    let _ = writeln!(out, "autobins = false\n\n[workspace]\n");

    let mut shim_features: Vec<String> = Vec::new();
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
    let shim =
        format!(
        "libfuzzer-sys = {{ package = \"rc-libfuzzer-shim\", path = \"shim\", features = [{}] }}",
        shim_features.iter().map(|f| toml_str(f)).collect::<Vec<_>>().join(", ")
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
            toml_str(&format!("bins/{}.rs", t.name))
        );
    }
    let _ = writeln!(
        out,
        "[profile.release]\ndebug = false\nincremental = false\n\n[profile.dev]\nopt-level = 1"
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
        if let Some(git) = source.strip_prefix("git+") {
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
        || (dep.path.is_none() && dep.source.as_deref().is_none_or(|s| !s.starts_with("git+")))
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

/// The host triple, as cargo-fuzz passes `--target` explicitly (so RUSTFLAGS
/// do not reach build scripts and proc-macros).
fn host_triple() -> Result<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc)
        .arg("-vV")
        .output()
        .map_err(|e| Error::Cargo(format!("cannot run rustc -vV: {e}")))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .ok_or_else(|| Error::Cargo("rustc -vV printed no host triple".into()))
}

/// The flags cargo-fuzz would pass (minus coverage instrumentation), plus a
/// path remapping, then the user's own `RUSTFLAGS`.
fn rustflags(project: &FuzzProject, opts: &BuildOptions) -> Vec<String> {
    let mut flags: Vec<String> = Vec::new();
    if !opts.no_cfg_fuzzing {
        flags.extend(["--cfg".into(), "fuzzing".into()]);
    }
    if opts.debug_assertions_on() {
        // -Cdebug-assertions implies overflow checks, as in cargo-fuzz.
        flags.push("-Cdebug-assertions".into());
    }
    match opts.sanitizer.as_deref() {
        None | Some("none") => {}
        Some(s) => flags.push(format!("-Zsanitizer={s}")),
    }
    if opts.coverage {
        // cargo-fuzz's instrumentation, minus the parts that need libFuzzer's
        // runtime (comparison tracing, stack depth); the driver defines the
        // counter registration hook itself.
        flags.extend(
            [
                "-Cpasses=sancov-module",
                "-Cllvm-args=-sanitizer-coverage-level=4",
                "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
                "-Cllvm-args=-simplifycfg-branch-fold-threshold=0",
            ]
            .map(str::to_owned),
        );
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

fn compile(
    project: &FuzzProject,
    dir: &Path,
    target_dir: &Path,
    target: &str,
    opts: &BuildOptions,
) -> Result<Driver> {
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
        .arg(target_dir)
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
        rustflags(project, opts).join("\x1f"),
    )
    .env_remove("RUSTFLAGS")
    .env_remove("CARGO_BUILD_RUSTFLAGS")
    .env_remove("CARGO_TARGET_DIR")
    .stdout(Stdio::piped())
    .stderr(if opts.verbose {
        Stdio::inherit()
    } else {
        Stdio::piped()
    });
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::Cargo(format!("cannot run {}: {e}", cargo().display())))?;
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
        Some(binary) if status.success() => Ok(Driver { binary, fresh }),
        _ => Err(Error::Build {
            target: target.to_owned(),
            diagnostics,
        }),
    }
}

/// Is a nightly toolchain active (needed for sanitizers)?
pub fn nightly_available() -> bool {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    Command::new(rustc)
        .arg("-vV")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("-nightly"))
        .unwrap_or(false)
}
