//! The repository's history, and a work tree of our own to build revisions
//! in, through the `git` the user already has.
//!
//! The user's checkout is never touched: not its working tree, not its
//! index, not its `HEAD`, not even `.git/worktrees` (where `git worktree
//! add` would register a tree). A revision is checked out into a temporary
//! directory with an index file of our own (`GIT_INDEX_FILE`) by `git
//! read-tree --reset -u`, which rewrites only the files that differ from the
//! revision before, so cargo recompiles only what changed; `git clean`
//! then removes what the last build left that the new revision does not
//! track (a `Cargo.lock` cargo wrote, say). The directory goes when the
//! [`Worktree`] is dropped.
//!
//! Through the `git` command rather than a library: users who bisect have
//! it, and two of its commands do what a library would take a hundred
//! crates (`gix`) or a C library (`git2`) to do.

use crate::error::{Error, Result};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One commit of the chain searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub hash: String,
    pub subject: String,
    /// Committer date, ISO 8601 (`2024-03-01T12:00:00+01:00`).
    pub date: String,
}

/// A git repository, read through its `.git`.
#[derive(Debug, Clone)]
pub struct Repo {
    /// The top of the user's working tree.
    pub top: PathBuf,
    /// Its git directory (for worktrees of ours).
    git_dir: PathBuf,
}

impl Repo {
    /// The repository holding `dir`.
    pub fn containing(dir: &Path) -> Result<Repo> {
        let out = git_in(dir, ["rev-parse", "--show-toplevel", "--absolute-git-dir"]).map_err(
            |detail| Error::NotGit {
                path: dir.to_owned(),
                detail,
            },
        )?;
        let mut lines = out.lines();
        let (Some(top), Some(git_dir)) = (lines.next(), lines.next()) else {
            return Err(Error::NotGit {
                path: dir.to_owned(),
                detail: "git rev-parse printed nothing".into(),
            });
        };
        Ok(Repo {
            top: PathBuf::from(top),
            git_dir: PathBuf::from(git_dir),
        })
    }

    fn git<I, S>(&self, args: I) -> std::result::Result<String, String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        run(Command::new("git")
            .arg("--git-dir")
            .arg(&self.git_dir)
            .args(args))
    }

    /// The full hash of a revision (`HEAD`, a tag, a short hash, `main~3`).
    pub fn resolve(&self, rev: &str) -> Result<String> {
        self.git([
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ])
        .map(|s| s.trim().to_owned())
        .map_err(|_| Error::BadRevision {
            rev: rev.to_owned(),
            repo: self.top.clone(),
        })
    }

    /// Is `a` an ancestor of `b` (or `b` itself)?
    pub fn is_ancestor(&self, a: &str, b: &str) -> bool {
        Command::new("git")
            .arg("--git-dir")
            .arg(&self.git_dir)
            .args(["merge-base", "--is-ancestor", a, b])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// The first-parent chain from `to` back, newest first: `to` itself,
    /// its first parent, and so on, as far as `from` (excluded) or the root.
    pub fn chain_back(&self, to: &str, from: Option<&str>) -> Result<Vec<Commit>> {
        let range = match from {
            Some(from) => format!("{from}..{to}"),
            None => to.to_owned(),
        };
        let out = self
            .git([
                "log",
                "--first-parent",
                "--format=%H%x00%cI%x00%s",
                &range,
                "--",
            ])
            .map_err(|detail| Error::Git {
                repo: self.top.clone(),
                detail,
            })?;
        Ok(out
            .lines()
            .filter_map(|l| {
                let mut parts = l.splitn(3, '\0');
                Some(Commit {
                    hash: parts.next()?.to_owned(),
                    date: parts.next()?.to_owned(),
                    subject: parts.next().unwrap_or("").to_owned(),
                })
            })
            .collect())
    }

    /// The oldest commit of `rev`'s first-parent chain that changed `path`
    /// (where a file was added, unless it was deleted and added again).
    pub fn oldest_touching(&self, rev: &str, path: &Path) -> Result<Option<String>> {
        let out = self
            .git([
                OsStr::new("log"),
                OsStr::new("--first-parent"),
                OsStr::new("--format=%H"),
                OsStr::new(rev),
                OsStr::new("--"),
                path.as_os_str(),
            ])
            .map_err(|detail| Error::Git {
                repo: self.top.clone(),
                detail,
            })?;
        Ok(out.lines().last().map(str::to_owned))
    }

    /// One commit's subject and date.
    pub fn commit(&self, hash: &str) -> Result<Commit> {
        let mut chain = self
            .git(["log", "-1", "--format=%H%x00%cI%x00%s", hash, "--"])
            .map_err(|detail| Error::Git {
                repo: self.top.clone(),
                detail,
            })?;
        if chain.ends_with('\n') {
            chain.pop();
        }
        let mut parts = chain.splitn(3, '\0');
        Ok(Commit {
            hash: parts.next().unwrap_or(hash).to_owned(),
            date: parts.next().unwrap_or("").to_owned(),
            subject: parts.next().unwrap_or("").to_owned(),
        })
    }

    /// A work tree of ours, empty until [`Worktree::checkout`]. Its
    /// top directory is named as the user's (a crash's file paths read the
    /// same in both).
    ///
    /// Its path is the same on every run for this repository
    /// (`reduce-crash-bisect-<hash of the checkout's path>` in the temporary
    /// directory), so cargo names the crates built there the same each time
    /// and the user's build directory keeps one set of them, not one per
    /// run. Created exclusively: a run going on at the same time (or one
    /// killed before it could remove it) makes this one take a random name.
    pub fn worktree(&self) -> Result<Worktree> {
        let key = sha1_smol::Sha1::from(self.top.as_os_str().as_encoded_bytes())
            .digest()
            .to_string();
        let stable = tempfile::Builder::new()
            .prefix(&format!("reduce-crash-bisect-{}", &key[..16]))
            .rand_bytes(0)
            .tempdir();
        let dir = match stable {
            Ok(dir) => dir,
            Err(_) => tempfile::Builder::new()
                .prefix("reduce-crash-bisect-")
                .tempdir()
                .map_err(|source| Error::Write {
                    path: std::env::temp_dir(),
                    source,
                })?,
        };
        let name = self.top.file_name().unwrap_or(OsStr::new("repo"));
        let top = dir.path().join(name);
        std::fs::create_dir(&top).map_err(|source| Error::Write {
            path: top.clone(),
            source,
        })?;
        Ok(Worktree {
            index: dir.path().join("index"),
            top,
            git_dir: self.git_dir.clone(),
            repo: self.top.clone(),
            _dir: dir,
        })
    }
}

/// A directory holding one revision of the repository at a time, with an
/// index of its own; removed when dropped.
#[derive(Debug)]
pub struct Worktree {
    pub top: PathBuf,
    index: PathBuf,
    git_dir: PathBuf,
    repo: PathBuf,
    _dir: tempfile::TempDir,
}

impl Worktree {
    /// Makes the directory hold `hash` (and nothing else git does not track
    /// there).
    pub fn checkout(&self, hash: &str) -> Result<()> {
        let git = |args: &[&str]| {
            run(Command::new("git")
                .arg("--git-dir")
                .arg(&self.git_dir)
                .arg("--work-tree")
                .arg(&self.top)
                .env("GIT_INDEX_FILE", &self.index)
                .current_dir(&self.top)
                .args(args))
            .map_err(|detail| Error::Git {
                repo: self.repo.clone(),
                detail,
            })
        };
        git(&["read-tree", "--reset", "-u", hash])?;
        git(&["clean", "-ffdxq"])?;
        Ok(())
    }
}

/// `git -C dir args…`.
fn git_in<I, S>(dir: &Path, args: I) -> std::result::Result<String, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run(Command::new("git").arg("-C").arg(dir).args(args))
}

/// Runs a git command: its stdout, or its first line of stderr.
fn run(cmd: &mut Command) -> std::result::Result<String, String> {
    let out = cmd
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(err
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("git failed")
            .trim()
            .to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&ok.stderr)
        );
    }

    #[test]
    fn checks_out_revisions_without_touching_the_checkout() {
        let tmp = tempfile::tempdir().unwrap();
        let repo_dir = tmp.path().join("proj");
        std::fs::create_dir(&repo_dir).unwrap();
        sh(&repo_dir, &["init", "-q"]);
        std::fs::write(repo_dir.join("a"), "1").unwrap();
        sh(&repo_dir, &["add", "a"]);
        sh(&repo_dir, &["commit", "-qm", "first"]);
        std::fs::write(repo_dir.join("b"), "2").unwrap();
        std::fs::write(repo_dir.join("a"), "changed").unwrap();
        sh(&repo_dir, &["add", "a", "b"]);
        sh(&repo_dir, &["commit", "-qm", "second"]);
        // Uncommitted work of the user's, which must stay as it is.
        std::fs::write(repo_dir.join("a"), "mine").unwrap();
        let index = std::fs::read(repo_dir.join(".git/index")).unwrap();

        let repo = Repo::containing(&repo_dir).unwrap();
        let chain = repo.chain_back("HEAD", None).unwrap();
        assert_eq!(chain.len(), 2);
        assert_eq!(chain[0].subject, "second");
        assert_eq!(chain[0].hash, repo.resolve("HEAD").unwrap());
        assert!(repo.is_ancestor(&chain[1].hash, &chain[0].hash));
        assert!(!repo.is_ancestor(&chain[0].hash, &chain[1].hash));
        assert!(matches!(
            repo.resolve("no-such-rev"),
            Err(Error::BadRevision { .. })
        ));
        assert_eq!(
            repo.oldest_touching("HEAD", Path::new("b")).unwrap(),
            Some(chain[0].hash.clone())
        );
        assert_eq!(
            repo.oldest_touching("HEAD", Path::new("a")).unwrap(),
            Some(chain[1].hash.clone())
        );
        assert_eq!(repo.oldest_touching("HEAD", Path::new("c")).unwrap(), None);

        let wt = repo.worktree().unwrap();
        assert_eq!(wt.top.file_name().unwrap(), "proj");
        wt.checkout(&chain[1].hash).unwrap();
        assert_eq!(std::fs::read_to_string(wt.top.join("a")).unwrap(), "1");
        assert!(!wt.top.join("b").exists());
        std::fs::write(wt.top.join("Cargo.lock"), "left by a build").unwrap();
        wt.checkout(&chain[0].hash).unwrap();
        assert_eq!(
            std::fs::read_to_string(wt.top.join("a")).unwrap(),
            "changed"
        );
        assert!(wt.top.join("b").exists());
        assert!(!wt.top.join("Cargo.lock").exists());
        // The same path on the next run; a second at the same time gets
        // another.
        let other = repo.worktree().unwrap();
        assert_ne!(other.top, wt.top);
        drop(other);
        let top = wt.top.clone();
        drop(wt);
        assert!(!top.exists());
        assert_eq!(repo.worktree().unwrap().top, top);

        assert_eq!(std::fs::read_to_string(repo_dir.join("a")).unwrap(), "mine");
        assert_eq!(std::fs::read(repo_dir.join(".git/index")).unwrap(), index);
        assert!(!repo_dir.join(".git/worktrees").exists());
    }

    #[test]
    fn outside_a_repository_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(matches!(
            Repo::containing(tmp.path()),
            Err(Error::NotGit { .. })
        ));
    }
}
