//! Finding the artifacts: libFuzzer's crash/OOM/timeout/leak names, never
//! our own outputs and records, nor libFuzzer's by-products.

use crate::error::{Error, Result};
use std::collections::HashSet;
use std::path::PathBuf;

use super::{ARTIFACT_PREFIXES, RECORD_DIR};

/// Files that are ours or libFuzzer's by-products, never crash artifacts.
pub fn is_ignored_name(name: &str) -> bool {
    name.ends_with(".reduced")
        || name.starts_with(".reduce-crash")
        || name.starts_with("minimized-from-")
        || name.starts_with("slow-unit-")
}

/// A name libFuzzer gives a crash, OOM, timeout or leak artifact.
pub fn is_artifact_name(name: &str) -> bool {
    !is_ignored_name(name)
        && ARTIFACT_PREFIXES
            .iter()
            .any(|p| name.len() > p.len() && name.starts_with(p))
}

/// What [`discover`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Discovered {
    /// The artifacts, in the order given (directories sorted by name),
    /// each once.
    pub artifacts: Vec<PathBuf>,
    /// Files named explicitly that are outputs or by-products, skipped.
    pub skipped: Vec<PathBuf>,
}

/// Every artifact under `paths`: files named explicitly are taken (unless
/// they are our outputs or libFuzzer's by-products, as a shell glob would
/// pass them), directories are searched recursively for artifact names,
/// skipping our record directories.
pub fn discover(paths: &[PathBuf]) -> Result<Discovered> {
    let mut found = Discovered::default();
    let mut seen = HashSet::new();
    let mut add = |found: &mut Discovered, path: PathBuf| {
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        if seen.insert(key) {
            found.artifacts.push(path);
        }
    };
    for path in paths {
        if path.is_dir() {
            let walk = walkdir::WalkDir::new(path)
                .sort_by_file_name()
                .into_iter()
                .filter_entry(|e| !(e.file_type().is_dir() && e.file_name() == RECORD_DIR));
            for entry in walk {
                let entry = entry.map_err(|e| Error::ReadDir {
                    path: e.path().unwrap_or(path).to_owned(),
                    detail: e
                        .io_error()
                        .map_or_else(|| e.to_string(), |io| io.to_string()),
                })?;
                let name = entry.file_name().to_string_lossy();
                // A symbolic link to a file counts as that file.
                let file = entry.file_type().is_file()
                    || (entry.path_is_symlink() && entry.path().is_file());
                if file && is_artifact_name(&name) {
                    add(&mut found, entry.into_path());
                }
            }
        } else if path.exists() {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if is_ignored_name(&name) {
                found.skipped.push(path.clone());
            } else {
                add(&mut found, path.clone());
            }
        } else {
            return Err(Error::ArtifactMissing { path: path.clone() });
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_names_are_libfuzzers_and_never_ours() {
        for name in ["crash-0a1b", "oom-ff", "timeout-1", "leak-abc"] {
            assert!(is_artifact_name(name), "{name}");
        }
        for name in [
            "crash-0a1b.reduced",
            "minimized-from-0a1b",
            "slow-unit-0a1b",
            ".reduce-crash-Xy12",
            "crash-",
            "seed-1",
            "README",
        ] {
            assert!(!is_artifact_name(name), "{name}");
        }
    }

    #[test]
    fn discovery_walks_directories_and_skips_outputs_records_and_by_products() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let write = |rel: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, rel).unwrap();
            p
        };
        let a = write("t/crash-b");
        let b = write("t/crash-a");
        let c = write("u/oom-1");
        write("t/crash-a.reduced");
        write("t/minimized-from-aa");
        write("t/slow-unit-bb");
        write("t/.reduce-crash/crash-zz");
        write("t/.reduce-crash-tmp1");
        let found = discover(&[root.to_owned()]).unwrap();
        assert_eq!(found.artifacts, vec![b.clone(), a.clone(), c.clone()]);
        assert!(found.skipped.is_empty());

        // Files named explicitly are taken (once), outputs skipped and said.
        let reduced = root.join("t/crash-a.reduced");
        let other = write("elsewhere/input.bin");
        let found = discover(&[a.clone(), reduced.clone(), other.clone(), root.join("t")]).unwrap();
        assert_eq!(found.artifacts, vec![a, other, b]);
        assert_eq!(found.skipped, vec![reduced]);

        let missing = root.join("nope");
        assert!(matches!(
            discover(&[missing]),
            Err(Error::ArtifactMissing { .. })
        ));
    }
}
