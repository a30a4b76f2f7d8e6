//! `--emit-test PATH`: writes a ready `#[test]` that replays the reduced
//! input through the fuzz target, from `templates/regression_test.rs`.
//!
//! The test includes the target file unmodified and calls the entry points
//! libfuzzer-sys generates, so it runs the same code `cargo fuzz run` runs;
//! it belongs in the fuzz package's `tests/` directory.

use crate::error::{Error, Result};
use crate::output::Sink;
use crate::run::driver::BuildKind;
use crate::run::outcome::{CrashKind, Signature};
use std::path::{Component, Path, PathBuf};

const TEMPLATE: &str = include_str!("../../templates/regression_test.rs");

/// What goes into the test.
#[derive(Debug, Clone)]
pub struct RegressionTest<'a> {
    pub artifact: &'a Path,
    pub target: &'a str,
    /// The fuzz target's source file.
    pub target_src: &'a Path,
    pub fuzz_manifest: &'a Path,
    pub signature: &'a Signature,
    /// How the driver that found the signature was built (which sanitizer).
    pub build: &'a BuildKind,
    pub reproduce: &'a str,
    pub original_len: usize,
    pub reduced: &'a [u8],
    /// The value's `Debug` form (typed targets).
    pub debug: Option<&'a str>,
    /// The explanation's text ([`crate::session::explain`]): the marked
    /// `Debug` form or hex dump, then its summary line. Shown instead of
    /// `debug` when there is one.
    pub explained: Option<&'a str>,
}

/// What it takes for a regression test to fail while the bug is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failing {
    /// `cargo test …` (the command).
    PlainTest(String),
    /// The bug is a memory error only this sanitizer reports: the test fails
    /// only when built with it (the command).
    Sanitizer { name: String, command: String },
    /// A libFuzzer limit (time, memory, exit) makes it a failure, which a
    /// test does not enforce: replay through the fuzz binary (`what` it is).
    FuzzBinaryOnly { what: &'static str },
}

impl RegressionTest<'_> {
    /// What makes the test fail while the bug is there, for a test file
    /// written at `path`.
    pub fn failing(&self, path: &Path) -> Failing {
        let manifest = self.fuzz_manifest.display();
        let test_file = test_file(path);
        match self.signature.kind {
            CrashKind::Sanitizer => {
                let sanitizer = self.build.sanitizer().unwrap_or("address");
                let name = self
                    .signature
                    .message
                    .as_deref()
                    .and_then(|m| m.split(':').next())
                    .filter(|n| n.ends_with("Sanitizer"))
                    .unwrap_or("AddressSanitizer")
                    .to_owned();
                let build_std = if sanitizer == "memory" {
                    " -Zbuild-std"
                } else {
                    ""
                };
                let triple =
                    crate::run::driver::host_triple().unwrap_or_else(|_| "<host triple>".into());
                Failing::Sanitizer {
                    name,
                    command: format!(
                        "RUSTFLAGS='-Zsanitizer={sanitizer} --cfg fuzzing -Cdebug-assertions' \
                         cargo +nightly test{build_std} --target {triple} --manifest-path {manifest} \
                         --test {test_file}"
                    ),
                }
            }
            CrashKind::Timeout => Failing::FuzzBinaryOnly { what: "a timeout" },
            CrashKind::OutOfMemory | CrashKind::MallocLimit => Failing::FuzzBinaryOnly {
                what: "an out-of-memory",
            },
            CrashKind::Exit(_) => Failing::FuzzBinaryOnly {
                what: "an exit of the process",
            },
            _ => Failing::PlainTest(format!(
                "cargo test --manifest-path {manifest} --test {test_file}"
            )),
        }
    }

    /// The comment lines that say how to run the test so that it fails.
    fn how_to_run(&self, path: &Path) -> String {
        let text = match self.failing(path) {
            Failing::PlainTest(command) => format!(
                "It fails while the bug is there and passes once it is fixed; run it with\n`{command}`."
            ),
            Failing::Sanitizer { name, command } => format!(
                "The crash is a memory error only {name} reports: under a plain `cargo test`\n\
                 this test PASSES even while the bug is there. Built with {name}, as\n\
                 `cargo fuzz run` builds the target, it fails while the bug is there and\n\
                 passes once it is fixed:\n`{command}`\n\
                 (or replay the input through the fuzz binary: `{}`).",
                self.reproduce
            ),
            Failing::FuzzBinaryOnly { what } => format!(
                "The crash is {what} that only libFuzzer's limits (-timeout,\n\
                 -rss_limit_mb, -malloc_limit_mb) or its exit check turn into a failure: a\n\
                 plain `cargo test` does not fail on it. Replay the reduced input through\n\
                 the fuzz binary to see the bug: `{}`.",
                self.reproduce
            ),
        };
        text.lines()
            .map(|l| format!("//! {l}").trim_end().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The test source, for a file to be written at `path`.
    pub fn render(&self, path: &Path) -> String {
        let dir = absolute(path.parent().unwrap_or(Path::new(".")));
        let target_path = relative_path(&dir, &absolute(self.target_src));
        let debug = match (self.explained, self.debug) {
            (Some(text), _) => {
                let (body, summary) = text.rsplit_once('\n').unwrap_or(("", text));
                let what = if self.debug.is_some() {
                    "as the target sees it (`cargo fuzz fmt`)"
                } else {
                    "in hex, the bytes marked `~~` free"
                };
                format!(
                    "/// The reduced input, {what}:\n///\n{}\n///\n/// {summary}.",
                    body.lines()
                        .map(|l| format!("///     {l}").trim_end().to_owned())
                        .collect::<Vec<_>>()
                        .join("\n")
                )
            }
            (None, Some(d)) => format!(
                "/// The reduced input, as the target sees it (`cargo fuzz fmt`):\n///\n{}",
                d.lines()
                    .map(|l| format!("///     {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
            (None, None) => "/// The reduced input.".to_owned(),
        };
        TEMPLATE
            .replace("{{ARTIFACT}}", &self.artifact.display().to_string())
            .replace("{{ORIGINAL_LEN}}", &self.original_len.to_string())
            .replace("{{REDUCED_LEN}}", &self.reduced.len().to_string())
            .replace(
                "{{SIGNATURE}}",
                &self.signature.to_string().replace('\n', " "),
            )
            .replace("{{REPRODUCE}}", self.reproduce)
            .replace("{{TARGET}}", self.target)
            .replace("{{HOW_TO_RUN}}", &self.how_to_run(path))
            .replace(
                "{{TARGET_PATH}}",
                &escape(&target_path.display().to_string()),
            )
            .replace("{{DEBUG_COMMENT}}", &debug)
            .replace("{{BYTES}}", &byte_literal(self.reduced))
            .replace("{{TEST_NAME}}", &test_name(self.target, self.artifact))
    }

    /// Writes the test to `path` ([`crate::output::write`]: atomically
    /// to a file), making its directory first if need be.
    pub fn write(&self, path: &Path) -> Result<()> {
        let file = crate::output::sink(path) == Sink::File;
        if let Some(dir) = path.parent().filter(|d| file && !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| Error::Write {
                path: dir.to_owned(),
                source,
            })?;
        }
        crate::output::write(path, self.render(path).as_bytes())
    }
}

/// The test's name for `cargo test --test`: its file name without `.rs`.
fn test_file(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "regression".to_owned())
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn absolute(p: &Path) -> PathBuf {
    p.canonicalize()
        .unwrap_or_else(|_| std::path::absolute(p).unwrap_or_else(|_| p.to_owned()))
}

/// `to` relative to the directory `from` (both absolute).
fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<Component> = from.components().collect();
    let to_parts: Vec<Component> = to.components().collect();
    let common = from
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to_parts[common..] {
        out.push(c.as_os_str());
    }
    out
}

/// `reduced_<target>_<artifact name>`, as a Rust identifier.
fn test_name(target: &str, artifact: &Path) -> String {
    let name = artifact
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut id = format!("reduced_{target}_{name}");
    id = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    id.truncate(64);
    id
}

/// A byte-string literal, wrapped every 32 bytes.
fn byte_literal(bytes: &[u8]) -> String {
    let mut out = String::from("b\"");
    for (i, &b) in bytes.iter().enumerate() {
        if i > 0 && i % 32 == 0 {
            out.push_str("\\\n    ");
        }
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_names_and_literals() {
        assert_eq!(
            relative_path(
                Path::new("/p/fuzz/tests"),
                Path::new("/p/fuzz/fuzz_targets/t.rs")
            ),
            Path::new("../fuzz_targets/t.rs")
        );
        assert_eq!(
            test_name("parse", Path::new("a/crash-12ab")),
            "reduced_parse_crash_12ab"
        );
        assert_eq!(byte_literal(b"a\"\\\x00"), r#"b"a\"\\\x00""#);
        // A line continuation keeps long inputs readable and the bytes intact.
        assert!(byte_literal(&[b'x'; 40]).contains("\\\n    "));
    }

    #[test]
    fn renders_every_placeholder() {
        let signature = Signature::panic("boom", "src/lib.rs:1:1");
        let t = RegressionTest {
            artifact: Path::new("/p/fuzz/artifacts/t/crash-1"),
            target: "t",
            target_src: Path::new("/p/fuzz/fuzz_targets/t.rs"),
            fuzz_manifest: Path::new("/p/fuzz/Cargo.toml"),
            signature: &signature,
            build: &BuildKind::Generated,
            reproduce: "cargo fuzz run t x",
            original_len: 100,
            reduced: b"ab",
            debug: Some("[\n    Push(0),\n]"),
            explained: None,
        };
        let text = t.render(Path::new("/p/fuzz/tests/crash_1.rs"));
        assert!(!text.contains("{{"), "{text}");
        assert!(text.contains("#[path = \"../fuzz_targets/t.rs\"]"));
        assert!(text.contains("fn reduced_t_crash_1()"));
        assert!(text.contains("///         Push(0),"));
        assert!(text.contains("--test crash_1"));
        assert!(text.contains("It fails while the bug is there"), "{text}");
    }

    #[test]
    fn a_sanitizer_only_bug_says_how_to_make_the_test_fail() {
        let mut signature = Signature::new(CrashKind::Sanitizer);
        signature.message = Some("AddressSanitizer: heap-buffer-overflow".into());
        let build = BuildKind::CargoFuzz {
            sanitizer: "address".into(),
            toolchain: crate::run::driver::Toolchain::Active,
        };
        let t = RegressionTest {
            artifact: Path::new("/p/fuzz/artifacts/t/crash-1"),
            target: "t",
            target_src: Path::new("/p/fuzz/fuzz_targets/t.rs"),
            fuzz_manifest: Path::new("/p/fuzz/Cargo.toml"),
            signature: &signature,
            build: &build,
            reproduce: "cargo fuzz run t x",
            original_len: 100,
            reduced: b"ab",
            debug: None,
            explained: None,
        };
        let path = Path::new("/p/fuzz/tests/crash_1.rs");
        let Failing::Sanitizer { name, command } = t.failing(path) else {
            panic!("{:?}", t.failing(path))
        };
        assert_eq!(name, "AddressSanitizer");
        assert!(command.contains("-Zsanitizer=address") && command.contains("--test crash_1"));
        let text = t.render(path);
        assert!(!text.contains("{{"), "{text}");
        assert!(
            text.contains("PASSES even while the bug is there"),
            "{text}"
        );
        assert!(
            !text.contains("It fails while the bug is there and passes"),
            "{text}"
        );
    }
}
