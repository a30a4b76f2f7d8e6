//! Finds the cargo-fuzz project and the fuzz target an artifact belongs to.
//!
//! Follows cargo-fuzz's own rules (`--fuzz-dir`, else `<crate>/fuzz` found by
//! walking up from the current directory) and adds the one users expect from
//! a tool that takes an artifact path: walk up from the artifact itself, so
//! `cargo reduce-crash fuzz/artifacts/parse/crash-…` works from anywhere.
//! The fuzz package is read with `cargo metadata`; it is a cargo-fuzz package
//! only if it says `[package.metadata] cargo-fuzz = true`.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// A cargo-fuzz package as `cargo metadata` describes it.
#[derive(Debug, Clone)]
pub struct FuzzProject {
    /// The fuzz directory (holds `Cargo.toml`, `fuzz_targets/`, `artifacts/`).
    pub dir: PathBuf,
    pub manifest: PathBuf,
    /// The workspace the fuzz package belongs to (its root holds `Cargo.lock`).
    pub workspace_root: PathBuf,
    /// Where cargo puts build output for this workspace.
    pub target_directory: PathBuf,
    /// Where cargo keeps intermediate artifacts (`deps/`, fingerprints):
    /// the target directory unless `build.build-dir` says otherwise.
    pub build_directory: PathBuf,
    pub package: cargo_metadata::Package,
    /// Fuzz targets (the package's binaries), sorted by name.
    pub targets: Vec<FuzzTarget>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuzzTarget {
    pub name: String,
    pub src_path: PathBuf,
}

/// Where to look for the project.
#[derive(Debug, Clone, Default)]
pub struct Locate {
    pub fuzz_dir: Option<PathBuf>,
    pub manifest_path: Option<PathBuf>,
    /// The artifact being reduced; its ancestors are searched.
    pub artifact: Option<PathBuf>,
    pub cwd: PathBuf,
}

impl FuzzProject {
    pub fn locate(how: &Locate) -> Result<FuzzProject> {
        let manifest = find_manifest(how)?;
        FuzzProject::load(&manifest)
    }

    pub fn load(manifest: &Path) -> Result<FuzzProject> {
        let metadata = cargo_metadata::MetadataCommand::new()
            .cargo_path(cargo())
            .manifest_path(manifest)
            .no_deps()
            .exec()
            .map_err(|e| Error::Metadata {
                manifest: manifest.to_owned(),
                detail: one_line(&e.to_string()),
            })?;
        let canonical = manifest
            .canonicalize()
            .unwrap_or_else(|_| manifest.to_owned());
        let package = metadata
            .packages
            .iter()
            .find(|p| p.manifest_path.as_std_path() == canonical)
            .cloned()
            .ok_or_else(|| Error::Metadata {
                manifest: manifest.to_owned(),
                detail: "cargo metadata does not list this package".into(),
            })?;
        if package.metadata.get("cargo-fuzz").and_then(|v| v.as_bool()) != Some(true) {
            return Err(Error::NotCargoFuzz {
                manifest: manifest.to_owned(),
            });
        }
        let mut targets: Vec<FuzzTarget> = package
            .targets
            .iter()
            .filter(|t| t.is_bin())
            .map(|t| FuzzTarget {
                name: t.name.clone(),
                src_path: t.src_path.clone().into_std_path_buf(),
            })
            .collect();
        targets.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(FuzzProject {
            dir: canonical
                .parent()
                .expect("manifest has a parent")
                .to_owned(),
            manifest: canonical,
            workspace_root: metadata.workspace_root.into_std_path_buf(),
            build_directory: metadata
                .build_directory
                .clone()
                .unwrap_or_else(|| metadata.target_directory.clone())
                .into_std_path_buf(),
            target_directory: metadata.target_directory.into_std_path_buf(),
            package,
            targets,
        })
    }

    pub fn target_names(&self) -> Vec<String> {
        self.targets.iter().map(|t| t.name.clone()).collect()
    }

    pub fn target(&self, name: &str) -> Result<&FuzzTarget> {
        self.targets
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| Error::UnknownTarget {
                name: name.to_owned(),
                known: self.target_names(),
            })
    }

    /// The target named explicitly, else the one whose `artifacts/<target>/`
    /// directory holds the artifact.
    pub fn resolve_target(&self, explicit: Option<&str>, artifact: &Path) -> Result<&FuzzTarget> {
        if let Some(name) = explicit {
            return self.target(name);
        }
        // Where the artifact is named, not where a symbolic link points.
        let abs = std::path::absolute(artifact).unwrap_or_else(|_| absolute(artifact));
        let parent = abs.parent();
        let dir_name = parent.and_then(|p| p.file_name()).and_then(|n| n.to_str());
        let under_artifacts = parent
            .and_then(|p| p.parent())
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == "artifacts");
        if let Some(t) = self.oss_fuzz_target(&abs) {
            return Ok(t);
        }
        match dir_name {
            Some(name) if under_artifacts => self.target(name),
            Some(name) if self.targets.iter().any(|t| t.name == name) => self.target(name),
            _ if self.targets.len() == 1 => Ok(&self.targets[0]),
            _ => Err(Error::TargetNotInferred {
                path: artifact.to_owned(),
                known: self.target_names(),
            }),
        }
    }
}

impl FuzzProject {
    /// OSS-Fuzz names its test cases `clusterfuzz-testcase-[minimized-]<target>-<id>`
    /// (projects keep them, e.g. in `fuzz/regressions/`): the target the
    /// name holds, if it is one of this project's.
    fn oss_fuzz_target(&self, artifact: &Path) -> Option<&FuzzTarget> {
        let name = artifact.file_name()?.to_str()?;
        let rest = name.strip_prefix("clusterfuzz-testcase-")?;
        let rest = rest.strip_prefix("minimized-").unwrap_or(rest);
        // The longest target name followed by `-` and the test case id.
        self.targets
            .iter()
            .filter(|t| {
                rest.strip_prefix(t.name.as_str())
                    .and_then(|r| r.strip_prefix('-'))
                    .is_some_and(|id| !id.is_empty())
            })
            .max_by_key(|t| t.name.len())
    }
}

/// `$CARGO` when run as a cargo subcommand, else `cargo`.
pub fn cargo() -> PathBuf {
    std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from)
}

fn absolute(p: &Path) -> PathBuf {
    p.canonicalize()
        .unwrap_or_else(|_| std::path::absolute(p).unwrap_or_else(|_| p.to_owned()))
}

fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A manifest that declares itself a cargo-fuzz package. A cheap textual
/// check; `load` confirms it through `cargo metadata`.
fn is_fuzz_manifest(manifest: &Path) -> bool {
    std::fs::read_to_string(manifest)
        .map(|text| {
            text.lines().any(|l| {
                let l = l.trim();
                l.starts_with("cargo-fuzz") && l.contains("true")
            })
        })
        .unwrap_or(false)
}

/// The manifest of the cargo-fuzz package `how` points at (no `cargo
/// metadata` yet: cheap, so callers can cache [`FuzzProject::load`] by it).
pub fn find_manifest(how: &Locate) -> Result<PathBuf> {
    if let Some(dir) = &how.fuzz_dir {
        let manifest = how.cwd.join(dir).join("Cargo.toml");
        if !manifest.is_file() {
            return Err(Error::NoProject {
                searched: how.cwd.join(dir),
            });
        }
        return Ok(manifest);
    }
    if let Some(path) = &how.manifest_path {
        let path = how.cwd.join(path);
        if !path.is_file() {
            return Err(Error::NoProject { searched: path });
        }
        if is_fuzz_manifest(&path) {
            return Ok(path);
        }
        let nested = path
            .parent()
            .unwrap_or(Path::new("."))
            .join("fuzz/Cargo.toml");
        if nested.is_file() {
            return Ok(nested);
        }
        return Err(Error::NotCargoFuzz { manifest: path });
    }
    if let Some(artifact) = &how.artifact {
        let abs = absolute(&how.cwd.join(artifact));
        for dir in abs.ancestors().skip(1) {
            let manifest = dir.join("Cargo.toml");
            if manifest.is_file() && is_fuzz_manifest(&manifest) {
                return Ok(manifest);
            }
        }
    }
    // cargo-fuzz's rule: the first Cargo.toml up from cwd that is not a
    // cargo-fuzz manifest, then its `fuzz/` directory.
    for dir in how.cwd.ancestors() {
        let manifest = dir.join("Cargo.toml");
        if !manifest.is_file() {
            continue;
        }
        if is_fuzz_manifest(&manifest) {
            return Ok(manifest);
        }
        let nested = dir.join("fuzz/Cargo.toml");
        if nested.is_file() {
            return Ok(nested);
        }
        break;
    }
    Err(Error::NoProject {
        searched: how.artifact.clone().unwrap_or_else(|| how.cwd.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn finds_the_fuzz_manifest_from_the_artifact() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write(&root.join("Cargo.toml"), "[package]\nname = \"x\"\n");
        write(
            &root.join("fuzz/Cargo.toml"),
            "[package]\nname = \"x-fuzz\"\n[package.metadata]\ncargo-fuzz = true\n",
        );
        let artifact = root.join("fuzz/artifacts/t/crash-1");
        write(&artifact, "x");
        let how = Locate {
            artifact: Some(artifact),
            cwd: PathBuf::from("/"),
            ..Locate::default()
        };
        assert_eq!(
            find_manifest(&how).unwrap().canonicalize().unwrap(),
            root.join("fuzz/Cargo.toml").canonicalize().unwrap()
        );
        // cargo-fuzz's rule from the crate directory.
        let how = Locate {
            cwd: root.join("src"),
            ..Locate::default()
        };
        std::fs::create_dir_all(root.join("src")).unwrap();
        assert_eq!(find_manifest(&how).unwrap(), root.join("fuzz/Cargo.toml"));
    }

    #[test]
    fn no_project_is_an_error_naming_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let how = Locate {
            cwd: tmp.path().to_owned(),
            ..Locate::default()
        };
        let err = find_manifest(&how).unwrap_err();
        assert!(matches!(err, Error::NoProject { .. }), "{err}");
    }
}
