//! `--emit-test PATH`: writes a ready `#[test]` that replays the reduced
//! input through the fuzz target, from `templates/regression_test.rs`.
//!
//! The test includes the target file unmodified and calls the entry points
//! libfuzzer-sys generates, so it runs the same code `cargo fuzz run` runs;
//! it belongs in the fuzz package's `tests/` directory.

use crate::error::{Error, Result};
use crate::output::write_atomic;
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
    pub signature: String,
    pub reproduce: &'a str,
    pub original_len: usize,
    pub reduced: &'a [u8],
    /// The value's `Debug` form (typed targets).
    pub debug: Option<&'a str>,
}

impl RegressionTest<'_> {
    /// The test source, for a file to be written at `path`.
    pub fn render(&self, path: &Path) -> String {
        let dir = absolute(path.parent().unwrap_or(Path::new(".")));
        let target_path = relative_path(&dir, &absolute(self.target_src));
        let test_file = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "regression".to_owned());
        let debug = match self.debug {
            Some(d) => format!(
                "/// The reduced input, as the target sees it (`cargo fuzz fmt`):\n///\n{}",
                d.lines()
                    .map(|l| format!("///     {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
            None => "/// The reduced input.".to_owned(),
        };
        TEMPLATE
            .replace("{{ARTIFACT}}", &self.artifact.display().to_string())
            .replace("{{ORIGINAL_LEN}}", &self.original_len.to_string())
            .replace("{{REDUCED_LEN}}", &self.reduced.len().to_string())
            .replace("{{SIGNATURE}}", &self.signature.replace('\n', " "))
            .replace("{{REPRODUCE}}", self.reproduce)
            .replace("{{TARGET}}", self.target)
            .replace(
                "{{FUZZ_MANIFEST}}",
                &self.fuzz_manifest.display().to_string(),
            )
            .replace("{{TEST_FILE}}", &test_file)
            .replace(
                "{{TARGET_PATH}}",
                &escape(&target_path.display().to_string()),
            )
            .replace("{{DEBUG_COMMENT}}", &debug)
            .replace("{{BYTES}}", &byte_literal(self.reduced))
            .replace("{{TEST_NAME}}", &test_name(self.target, self.artifact))
    }

    /// Writes the test atomically to `path`.
    pub fn write(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| Error::Write {
                path: dir.to_owned(),
                source,
            })?;
        }
        write_atomic(path, self.render(path).as_bytes())
    }
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
        let t = RegressionTest {
            artifact: Path::new("/p/fuzz/artifacts/t/crash-1"),
            target: "t",
            target_src: Path::new("/p/fuzz/fuzz_targets/t.rs"),
            fuzz_manifest: Path::new("/p/fuzz/Cargo.toml"),
            signature: "panic at src/lib.rs:1:1: boom".into(),
            reproduce: "cargo fuzz run t x",
            original_len: 100,
            reduced: b"ab",
            debug: Some("[\n    Push(0),\n]"),
        };
        let text = t.render(Path::new("/p/fuzz/tests/crash_1.rs"));
        assert!(!text.contains("{{"), "{text}");
        assert!(text.contains("#[path = \"../fuzz_targets/t.rs\"]"));
        assert!(text.contains("fn reduced_t_crash_1()"));
        assert!(text.contains("///         Push(0),"));
        assert!(text.contains("--test crash_1"));
    }
}
