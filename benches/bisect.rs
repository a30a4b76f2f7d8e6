//! `--bisect` side by side with `git bisect run` over the script a
//! cargo-fuzz user writes ("crashed or not": `cargo fuzz run <target>
//! <artifact> -- -runs=1`, exit 0 good, anything else bad), on the
//! generated histories of `tests/bisect.rs` (`tests/common/history.rs`):
//! where the bug comes in, lines moved above it, a commit that does not
//! build, another crash first, a bug that shows in about half the runs,
//! one that shows only after a build has run a few times.
//!
//! `cargo bench --bench bisect` prints one row per history and tool: the
//! answers of `BISECT_RUNS` runs (default 3; the flaky history answers
//! differently from run to run), how many were right, builds and seconds.
//! Ours runs with `-s none` (no sanitizer: the fixture has no memory bug,
//! and its builds are quick); the script with `cargo fuzz run`, which needs
//! cargo-fuzz and nightly (without them its rows say so).
//!
//! "Right": the commit that brought the bug, or a range holding it whose
//! other revisions cannot be judged (they do not build, or crash another
//! way), each named.

#[path = "../tests/common/history.rs"]
mod history;

mod common;

use common::{env_or, run_limited};
use history::{git, Version};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-reduce-crash");

struct Case {
    name: &'static str,
    story: &'static str,
    /// The commit that brought the bug.
    truth: usize,
    versions: fn(usize) -> Version,
}

const CASES: &[Case] = &[
    Case {
        name: "plain",
        story: "the bug comes in at 17",
        truth: 17,
        versions: |i| Version {
            bug: i >= 17,
            ..Version::default()
        },
    },
    Case {
        name: "moved",
        story: "at 9; three lines more above it at every later commit; 22 does not build",
        truth: 9,
        versions: |i| Version {
            bug: i >= 9,
            pad: if i > 9 { 3 * (i - 9) } else { 0 },
            broken: i == 22,
            ..Version::default()
        },
    },
    Case {
        name: "broken",
        story: "at 14; 13 does not build",
        truth: 14,
        versions: |i| Version {
            bug: i >= 14,
            broken: i == 13,
            ..Version::default()
        },
    },
    Case {
        name: "hidden",
        story: "at 20; another panic comes first at 20 and 21",
        truth: 20,
        versions: |i| Version {
            bug: i >= 20,
            hidden: i == 20 || i == 21,
            ..Version::default()
        },
    },
    Case {
        name: "flaky",
        story: "at 11; it shows in about half the runs",
        truth: 11,
        versions: |i| Version {
            bug: i >= 11,
            flaky: true,
            ..Version::default()
        },
    },
    Case {
        name: "slow-start",
        story: "at 11; at 11-13 it shows only from a build's sixth run on, from 14 on every run",
        truth: 11,
        versions: |i| Version {
            bug: i >= 11,
            slow_start: (11..14).contains(&i).then_some(COUNTERS),
            ..Version::default()
        },
    },
];

/// Where the slow-start history counts its runs (emptied before each run).
const COUNTERS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/target/bench-scratch/bisect/counters"
);

/// Empties [`COUNTERS`].
fn reset_counters() {
    let _ = std::fs::remove_dir_all(COUNTERS);
    std::fs::create_dir_all(COUNTERS).unwrap();
}

/// One run's answer: the commits it names (one, or the ends of a range)
/// by their number in the history, builds and seconds.
struct Answer {
    first: Option<usize>,
    range: Option<(usize, usize)>,
    builds: u64,
    secs: f64,
}

impl Answer {
    fn right(&self, truth: usize) -> bool {
        match (self.first, self.range) {
            (Some(c), None) => c == truth,
            (_, Some((a, b))) => a <= truth && truth <= b,
            _ => false,
        }
    }

    fn describe(&self) -> String {
        match (self.first, self.range) {
            (Some(c), None) => c.to_string(),
            (_, Some((a, b))) => format!("{a}..{b}"),
            _ => "none".to_owned(),
        }
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let runs: usize = env_or("BISECT_RUNS", 3);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-scratch/bisect");
    std::fs::create_dir_all(&root).unwrap();
    let script = root.join("crashed-or-not.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n# What a cargo-fuzz user writes for `git bisect run`: crashed or not.\n\
         cd fuzz || exit 1\n\
         cargo +nightly fuzz run parse \"$ARTIFACT\" -- -runs=1 >/dev/null 2>&1\n\
         rc=$?\necho \"$rc\" >> \"$LOG\"\n[ $rc -eq 0 ] && exit 0\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cargo_fuzz = Command::new("cargo")
        .args(["+nightly", "fuzz", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());

    println!("| history | truth | tool | answers ({runs} runs) | right | builds (median) | seconds (median) |");
    println!("|---|---:|---|---|---:|---:|---:|");
    for case in CASES {
        let (repo, hashes) = history::make(&root.join(case.name), case.versions);
        let number = |hash: &str| hashes.iter().position(|h| h == hash);
        let ours: Vec<Answer> = (0..runs)
            .map(|_| {
                reset_counters();
                ours(&repo, &root, case.name, &number)
            })
            .collect();
        row(case, "`--bisect`", &ours);
        if !cargo_fuzz {
            println!(
                "| {} | {} | `git bisect run` | (cargo-fuzz or nightly missing) | | | |",
                case.name, case.truth
            );
            continue;
        }
        let theirs: Vec<Answer> = (0..runs)
            .map(|_| {
                reset_counters();
                git_bisect_run(&repo, &root, case.name, &script, &number)
            })
            .collect();
        row(case, "`git bisect run`", &theirs);
    }
    println!();
    for case in CASES {
        println!("- {}: {}", case.name, case.story);
    }
}

fn row(case: &Case, tool: &str, answers: &[Answer]) {
    let med = |f: &dyn Fn(&Answer) -> f64| common::median(answers.iter().map(f).collect());
    println!(
        "| {} | {} | {tool} | {} | {}/{} | {} | {:.1} |",
        case.name,
        case.truth,
        answers
            .iter()
            .map(Answer::describe)
            .collect::<Vec<_>>()
            .join(", "),
        answers.iter().filter(|a| a.right(case.truth)).count(),
        answers.len(),
        med(&|a| a.builds as f64),
        med(&|a| a.secs),
    );
}

fn ours(repo: &Path, root: &Path, case: &str, number: &dyn Fn(&str) -> Option<usize>) -> Answer {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(repo).args([
        "--bisect",
        "fuzz/artifacts/parse/crash-bug",
        "-s",
        "none",
        "--message-format",
        "json",
        "--target-dir",
    ]);
    cmd.arg(root.join("target").join(case));
    let done = run_limited(cmd, root, Duration::from_secs(900));
    let line = done
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["reason"] == "bisected")
        .unwrap_or_else(|| panic!("no bisected line: {}", done.stderr));
    let hash = |v: &serde_json::Value| v.as_str().and_then(number);
    Answer {
        first: hash(&line["first_bad"]),
        range: line["range"]
            .as_array()
            .and_then(|r| Some((hash(&r[0])?, hash(&r[1])?))),
        builds: line["builds"].as_u64().unwrap_or(0),
        secs: done.secs,
    }
}

fn git_bisect_run(
    repo: &Path,
    root: &Path,
    case: &str,
    script: &Path,
    number: &dyn Fn(&str) -> Option<usize>,
) -> Answer {
    // A clone of its own: `git bisect` checks revisions out.
    let clone: PathBuf = root.join("clones").join(case);
    if !clone.exists() {
        std::fs::create_dir_all(clone.parent().unwrap()).unwrap();
        let ok = Command::new("git")
            .arg("clone")
            .arg("-q")
            .arg(repo)
            .arg(&clone)
            .status()
            .unwrap();
        assert!(ok.success());
    }
    let _ = Command::new("git")
        .arg("-C")
        .arg(&clone)
        .args(["bisect", "reset"])
        .output();
    let first = git(&clone, &["rev-list", "--max-parents=0", "HEAD"]);
    git(&clone, &["bisect", "start", "HEAD", first.trim()]);
    let log = root.join(format!("{case}.log"));
    let _ = std::fs::remove_file(&log);
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(&clone)
        .args(["bisect", "run"])
        .arg(script)
        .env("ARTIFACT", repo.join("fuzz/artifacts/parse/crash-bug"))
        .env("LOG", &log);
    let done = run_limited(cmd, root, Duration::from_secs(900));
    let answer = done
        .stdout
        .lines()
        .find_map(|l| l.strip_suffix(" is the first bad commit"))
        .and_then(number);
    let _ = Command::new("git")
        .arg("-C")
        .arg(&clone)
        .args(["bisect", "reset"])
        .output();
    Answer {
        first: answer,
        range: None,
        builds: std::fs::read_to_string(&log)
            .map(|s| s.lines().count() as u64)
            .unwrap_or(0),
        secs: done.secs,
    }
}
