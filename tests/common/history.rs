//! The generated git histories `--bisect` is tested and measured on
//! (`tests/bisect.rs`, `benches/bisect.rs`): `tests/fixtures/bisect` in a
//! new repository, then about thirty versions of its `src/lib.rs`, each
//! with its own story (where the bug comes in, lines moved, a commit that
//! does not build, another crash first, a bug that shows only sometimes).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Commits in each generated history (the first is the import).
pub const COMMITS: usize = 30;

/// How `src/lib.rs` reads at one commit.
#[derive(Debug, Clone, Copy, Default)]
pub struct Version {
    /// The bug is in (`parse` panics on input starting `BUG`).
    pub bug: bool,
    /// Comment lines above the code (moved lines).
    pub pad: usize,
    /// A syntax error.
    pub broken: bool,
    /// Another panic comes first, on the same input.
    pub hidden: bool,
    /// The bug panics only about every other run.
    pub flaky: bool,
    /// The bug panics only from the sixth run of this commit's build on,
    /// counted in files in this directory: a revision judged on five runs
    /// looks clean, and the last check (more runs) proves it wrong.
    pub slow_start: Option<&'static str>,
}

pub fn lib_rs(i: usize, v: Version) -> String {
    let mut s = String::new();
    for n in 0..v.pad {
        s.push_str(&format!("// a note moved in above the code ({n})\n"));
    }
    s.push_str(&format!(
        "/// Which commit of the generated history this is.\npub fn version() -> u32 {{\n    {i}\n}}\n\n"
    ));
    s.push_str("/// The function under test.\npub fn parse(data: &[u8]) -> usize {\n");
    if v.broken {
        s.push_str("    let half = ;\n");
    }
    if v.hidden {
        s.push_str("    if data.len() > 2 {\n        panic!(\"another bug first\");\n    }\n");
    }
    if v.bug {
        s.push_str("    if data.starts_with(b\"BUG\") {\n");
        if let Some(dir) = v.slow_start {
            let counter = format!("{dir}/runs-{i}");
            s.push_str(&format!(
                "        let counter = {counter:?};\n        let runs: u32 = std::fs::read_to_string(counter).ok().and_then(|s| s.parse().ok()).unwrap_or(0) + 1;\n        std::fs::write(counter, runs.to_string()).unwrap();\n        if runs >= 6 {{\n            panic!(\"the bug\");\n        }}\n"
            ));
        } else if v.flaky {
            s.push_str(
                "        let t = std::time::SystemTime::now()\n            .duration_since(std::time::UNIX_EPOCH)\n            .unwrap()\n            .subsec_nanos();\n        if (t / 1000) % 2 == 0 {\n            panic!(\"the bug\");\n        }\n",
            );
        } else {
            s.push_str("        panic!(\"the bug\");\n");
        }
        s.push_str("    }\n");
    }
    s.push_str("    data.iter().filter(|b| b.is_ascii_uppercase()).count()\n}\n");
    s
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00+00:00")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00+00:00")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A new repository at `root` of `tests/fixtures/bisect` with commit `i`
/// holding `versions(i)`, and the artifact `fuzz/artifacts/parse/crash-bug`
/// (`BUG!`); returns `root` and the commits' hashes, oldest first.
pub fn make(root: &Path, versions: impl Fn(usize) -> Version) -> (PathBuf, Vec<String>) {
    let root = root.to_owned();
    if root.exists() {
        std::fs::remove_dir_all(&root).unwrap();
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bisect");
    for entry in walkdir::WalkDir::new(&source) {
        let entry = entry.unwrap();
        let to = root.join(entry.path().strip_prefix(&source).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
    git(&root, &["init", "-q"]);
    let mut hashes = Vec::new();
    for i in 0..COMMITS {
        std::fs::write(root.join("src/lib.rs"), lib_rs(i, versions(i))).unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", &format!("commit {i}")]);
        hashes.push(git(&root, &["rev-parse", "HEAD"]).trim().to_owned());
    }
    let artifacts = root.join("fuzz/artifacts/parse");
    std::fs::create_dir_all(&artifacts).unwrap();
    std::fs::write(artifacts.join("crash-bug"), b"BUG!").unwrap();
    (root, hashes)
}
