//! From a pile of crashes to a list of bugs.
//!
//! A directory run groups reproducing artifacts into *buckets*, one per
//! target and crash identity. A nightly CI job leaves hundreds of crash
//! files over a dozen targets, and what the team needs is one row per
//! *bug*: the same defect reached from two targets, or through two callers,
//! is one bug. This layer turns buckets into bugs and says how bad each one
//! is; `report/` writes them where they are read (JSON, SARIF for code
//! scanning, Markdown for a job summary).
//!
//! 1. **Exact identity across targets**: buckets whose identity (under
//!    `--match`: kind and panic location, sanitizer error and first user
//!    frame, the recursion of a stack overflow) is the same are one bug,
//!    whatever target reached it, as long as the identity names a place.
//!    An RSS out-of-memory or an abort has no place, so those stay one bug
//!    per target; a timeout's place is the function it hung in (the
//!    innermost of the target's or a dependency's on the stack taken at
//!    the deadline), without one it stays one bug per target. An allocation whose size failed at one place
//!    is one identity however it was reported (malloc limit, the
//!    sanitizer's `allocation-size-too-big`, out-of-memory there).
//! 2. **Stack similarity**: crashes that came with a stack (sanitizer
//!    reports, stack overflows, malloc limits) of the same error are
//!    grouped by PDM similarity with complete linkage cut at 0.3
//!    ([`similarity`], CASR's measure and threshold), except that two crash
//!    sites in the same function at different lines are never joined: two
//!    bugs in one function (ClusterFuzz's top-3-frames grouping merges
//!    distinct Rust `assert_eq!` bugs; this does not).
//! 3. Each bug gets a **fingerprint** that stays put when unrelated lines
//!    move ([`fingerprint`]) and a [`severity`].

pub mod report;
pub mod severity;
pub mod similarity;

use crate::run::outcome::{CrashDetails, CrashKind, MatchMode, Signature};
use serde::{Deserialize, Serialize};
use severity::Severity;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where a directory run writes its bugs (`--report`, `--sarif`,
/// `--markdown`).
#[derive(Debug, Clone, Default)]
pub struct ReportOutputs {
    pub json: Option<PathBuf>,
    pub sarif: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
}

impl ReportOutputs {
    pub fn is_empty(&self) -> bool {
        self.json.is_none() && self.sarif.is_none() && self.markdown.is_none()
    }

    /// (path, option name) of each output given.
    pub fn named(&self) -> Vec<(&Path, &'static str)> {
        [
            (&self.json, "--report"),
            (&self.sarif, "--sarif"),
            (&self.markdown, "--markdown"),
        ]
        .into_iter()
        .filter_map(|(p, n)| Some((p.as_deref()?, n)))
        .collect()
    }

    /// Writes `report` in every form asked for (through [`crate::output::write`]); `category`
    /// names the run in SARIF.
    pub fn write(&self, report: &report::Report, category: &str) -> crate::error::Result<()> {
        if let Some(p) = &self.json {
            crate::output::write(p, report.to_json().as_bytes())?;
        }
        if let Some(p) = &self.sarif {
            crate::output::write(p, report::sarif::render(report, category).as_bytes())?;
        }
        if let Some(p) = &self.markdown {
            crate::output::write(p, report::markdown::render(report).as_bytes())?;
        }
        Ok(())
    }
}

/// A shard of a CI matrix (`--partition`), in cargo-nextest's syntax:
/// `hash:K/N` gives a bug to shard `1 + h mod N` where `h` is a hash of its
/// fingerprint (stable as bugs come and go); `count:K/N` deals the bugs,
/// ordered by fingerprint, round-robin. Every shard classifies every
/// artifact (a bug may span targets, so no shard can know its bugs from
/// its targets alone), then reduces only its own bugs: no bug is reduced
/// twice, and the shards' reports merge into the unsharded run's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    pub hash: bool,
    /// 1-based.
    pub shard: u64,
    pub of: u64,
}

impl std::str::FromStr for Partition {
    type Err = String;
    fn from_str(s: &str) -> Result<Partition, String> {
        let bad = || {
            format!(
                "--partition {s}: expected hash:K/N or count:K/N with 1 <= K <= N, e.g. hash:2/4"
            )
        };
        let (kind, rest) = s.split_once(':').ok_or_else(bad)?;
        let hash = match kind {
            "hash" => true,
            "count" => false,
            _ => return Err(bad()),
        };
        let (k, n) = rest.split_once('/').ok_or_else(bad)?;
        let (shard, of): (u64, u64) =
            (k.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
        if shard == 0 || of == 0 || shard > of {
            return Err(bad());
        }
        Ok(Partition { hash, shard, of })
    }
}

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.hash { "hash" } else { "count" };
        write!(f, "{kind}:{}/{}", self.shard, self.of)
    }
}

impl Partition {
    /// Which of `bugs` this shard reduces.
    pub fn mine(&self, bugs: &[Bug]) -> Vec<bool> {
        if self.hash {
            return bugs
                .iter()
                .map(|b| {
                    let h = u64::from_str_radix(&b.fingerprint[..16.min(b.fingerprint.len())], 16)
                        .unwrap_or_else(|_| {
                            let d = sha1_smol::Sha1::from(b.fingerprint.as_bytes())
                                .digest()
                                .bytes();
                            u64::from_le_bytes(d[..8].try_into().expect("8 bytes"))
                        });
                    h % self.of == self.shard - 1
                })
                .collect();
        }
        let mut order: Vec<usize> = (0..bugs.len()).collect();
        order.sort_by(|&a, &b| bugs[a].fingerprint.cmp(&bugs[b].fingerprint));
        let mut mine = vec![false; bugs.len()];
        for (n, &i) in order.iter().enumerate() {
            mine[i] = n as u64 % self.of == self.shard - 1;
        }
        mine
    }
}

/// One bucket, as triage sees it.
#[derive(Debug, Clone)]
pub struct Crash {
    /// The caller's index of the bucket.
    pub bucket: usize,
    pub target: String,
    pub signature: Signature,
    pub details: Option<CrashDetails>,
    /// The fuzz workspace the target belongs to (relative source paths in
    /// locations are relative to it).
    pub root: PathBuf,
}

/// How a bug's buckets came together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Grouping {
    /// One bucket.
    Single,
    /// The same identity, from several targets.
    Identity,
    /// Similar stacks (and perhaps the same identity too).
    Stack,
}

/// Buckets that are one defect.
#[derive(Debug, Clone)]
pub struct Bug {
    /// Stable across runs while the crash site's code is unchanged.
    pub fingerprint: String,
    /// The buckets (the caller's indices), in the order given.
    pub buckets: Vec<usize>,
    /// The targets that reach it, sorted.
    pub targets: Vec<String>,
    /// The first bucket's signature.
    pub signature: Signature,
    /// The worst of its buckets'.
    pub severity: Severity,
    pub grouping: Grouping,
}

/// Groups `crashes` into bugs (in the order of their first bucket).
pub fn group(crashes: &[Crash], mode: MatchMode) -> Vec<Bug> {
    // 1. Exact identity; across targets only for identities with a place.
    // One allocation site failing as several reports is one identity.
    let mut exact: BTreeMap<(Option<String>, Key), Vec<usize>> = BTreeMap::new();
    let mut order: Vec<(Option<String>, Key)> = Vec::new();
    for (i, c) in crashes.iter().enumerate() {
        let placed = c.signature.location.is_some() || c.signature.function.is_some();
        let identity = match (allocation_site(&c.signature), c.signature.hang_place()) {
            (Some(site), _) if mode != MatchMode::Any => Key::Allocation(site.to_owned()),
            (_, Some(function)) if mode != MatchMode::Any => Key::Hang(function.to_owned()),
            _ => Key::Exact(c.signature.identity(mode)),
        };
        let key = ((!placed).then(|| c.target.clone()), identity);
        let entry = exact.entry(key.clone()).or_default();
        if entry.is_empty() {
            order.push(key);
        }
        entry.push(i);
    }
    let groups: Vec<Vec<usize>> = order.iter().map(|k| exact[k].clone()).collect();

    // 2. Stack similarity between groups that have stacks, same error.
    let stacks: Vec<Vec<&str>> = groups
        .iter()
        .map(|g| {
            crashes[g[0]]
                .details
                .as_ref()
                .map(|d| d.frames.iter().map(|f| f.function.as_str()).collect())
                .unwrap_or_default()
        })
        .collect();
    let stack =
        |g: usize| -> Option<&[&str]> { (!stacks[g].is_empty()).then_some(stacks[g].as_slice()) };
    let error_of = |g: &[usize]| {
        let s = &crashes[g[0]].signature;
        (s.kind, s.sanitizer_error().map(str::to_owned))
    };
    let joined = similarity::clusters(
        groups.len(),
        |a, b| match (stack(a), stack(b)) {
            (Some(x), Some(y)) if error_of(&groups[a]) == error_of(&groups[b]) => {
                1.0 - similarity::similarity(x, y)
            }
            _ => 1.0,
        },
        |a, b| {
            let (x, y) = (
                &crashes[groups[a][0]].signature,
                &crashes[groups[b][0]].signature,
            );
            // Two bugs in one function stay two.
            !(x.function.is_some() && x.function == y.function && x.location != y.location)
        },
    );

    let mut bugs: Vec<Bug> = joined
        .into_iter()
        .map(|members| {
            let buckets: Vec<usize> = {
                let mut b: Vec<usize> = members.iter().flat_map(|&g| groups[g].clone()).collect();
                b.sort_unstable();
                b
            };
            let first = &crashes[buckets[0]];
            let mut targets: Vec<String> =
                buckets.iter().map(|&i| crashes[i].target.clone()).collect();
            targets.sort();
            targets.dedup();
            let severity = buckets
                .iter()
                .map(|&i| severity::severity(&crashes[i].signature, crashes[i].details.as_ref()))
                .max_by(|a, b| {
                    (a.tier, a.security_severity)
                        .partial_cmp(&(b.tier, b.security_severity))
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .expect("a bug has a bucket");
            let grouping = match (members.len(), buckets.len()) {
                (_, 1) => Grouping::Single,
                (1, _) => Grouping::Identity,
                _ => Grouping::Stack,
            };
            let placed = first.signature.location.is_some() || first.signature.function.is_some();
            Bug {
                fingerprint: fingerprint(
                    &first.signature,
                    (!placed).then_some(first.target.as_str()),
                    &first.root,
                ),
                buckets: buckets.iter().map(|&i| crashes[i].bucket).collect(),
                targets,
                signature: first.signature.clone(),
                severity,
                grouping,
            }
        })
        .collect();
    bugs.sort_by_key(|b| b.buckets[0]);
    disambiguate(&mut bugs);
    bugs
}

/// What step 1 of [`group`] compares.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Exact(crate::run::outcome::Identity),
    /// An allocation that failed at this place, however it was reported.
    Allocation(String),
    /// A hang in this function (the innermost of the target's or a
    /// dependency's on the stack at the deadline).
    Hang(String),
}

/// The place of an allocation that failed because of its size, for the
/// reports that differ only in how big the size was or which limit caught
/// it: a size read from the input is over `-malloc_limit_mb`
/// (`malloc-limit`), over what the sanitizer's allocator allows
/// (`allocation-size-too-big`, `calloc-overflow`), or over the memory left
/// (`out-of-memory` with a place). A fuzzer finds all of these for one
/// unchecked length, one file per size; they are one bug.
fn allocation_site(sig: &Signature) -> Option<&str> {
    let location = sig.location.as_deref()?;
    let allocation = match sig.kind {
        CrashKind::MallocLimit | CrashKind::OutOfMemory => true,
        CrashKind::Sanitizer => sig.sanitizer_error().is_some_and(|e| {
            [
                "allocation-size-too-big",
                "calloc-overflow",
                "out-of-memory",
            ]
            .iter()
            .any(|k| e.contains(k))
        }),
        _ => false,
    };
    allocation.then_some(location)
}

/// Two bugs whose sites read alike (the same text on two lines of one
/// file) get `-2`, `-3`, … in the order of their lines.
fn disambiguate(bugs: &mut [Bug]) {
    let mut seen: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, b) in bugs.iter().enumerate() {
        seen.entry(b.fingerprint.clone()).or_default().push(i);
    }
    for (_, mut same) in seen {
        if same.len() < 2 {
            continue;
        }
        same.sort_by_key(|&i| line_of(&bugs[i].signature));
        for (n, &i) in same.iter().enumerate().skip(1) {
            bugs[i].fingerprint = format!("{}-{}", bugs[i].fingerprint, n + 1);
        }
    }
}

fn line_of(sig: &Signature) -> (String, u64) {
    let loc = sig.location.clone().unwrap_or_default();
    let mut parts = loc.rsplitn(3, ':');
    let _col = parts.next();
    let line = parts.next().and_then(|l| l.parse().ok()).unwrap_or(0);
    (parts.next().unwrap_or("").to_owned(), line)
}

/// A bug's fingerprint: 16 hex digits of the SHA-1 of what names its crash
/// site without line numbers, so that it stays put when unrelated lines
/// move: the kind (and sanitizer error), the file as a path inside its crate
/// (`gif/src/reader/mod.rs`, no version, no checkout location), the
/// function's own name (not its path: builds qualify inlined frames
/// differently), and the text of the crash line itself (whitespace collapsed);
/// where the source cannot be read, the line number instead. A crash with
/// no site (a timeout, an RSS limit, an abort) is named by its `target`.
pub fn fingerprint(sig: &Signature, target: Option<&str>, root: &Path) -> String {
    let mut basis = format!("v1|{}", sig.kind.id());
    if let Some(code) = sig.kind.code() {
        basis.push_str(&format!("({code})"));
    }
    if let Some(e) = sig.sanitizer_error() {
        basis.push_str(&format!("|{e}"));
    }
    if let Some(t) = target {
        basis.push_str(&format!("|target={t}"));
    }
    if let Some(f) = &sig.function {
        // The name's last segment: one build names an inlined frame
        // `advance`, another `<parse::Cursor>::advance` (`::advance`
        // without generics).
        let name = crate::run::crash_report::without_generics(f);
        let last = name.rsplit("::").next().unwrap_or(&name);
        basis.push_str(&format!("|fn={last}"));
    }
    if let Some(loc) = &sig.location {
        let (file, line) = split_location(loc);
        let path = resolve(&file, root);
        basis.push_str(&format!("|file={}", crate_relative(&path, root)));
        match source_line(&path, line) {
            Some(text) => basis.push_str(&format!("|text={text}")),
            None => basis.push_str(&format!("|line={line}")),
        }
    }
    if sig.kind == CrashKind::Panic {
        basis.push_str(&format!(
            "|{}",
            severity::panic_class(sig.message.as_deref().unwrap_or(""))
        ));
    }
    let digest = sha1_smol::Sha1::from(basis.as_bytes()).digest().to_string();
    digest[..16].to_owned()
}

/// `file:line:col` → (file, line).
fn split_location(loc: &str) -> (String, u64) {
    let mut parts = loc.rsplitn(3, ':');
    let last = parts.next().unwrap_or("");
    let middle = parts.next();
    match (middle, parts.next()) {
        (Some(line), Some(file)) => (file.to_owned(), line.parse().unwrap_or(0)),
        // `file:line` only.
        (Some(file), None) => (file.to_owned(), last.parse().unwrap_or(0)),
        _ => (loc.to_owned(), 0),
    }
}

/// A location's file on disk: absolute as given, else relative to the
/// fuzz workspace (how cargo-fuzz's builds print workspace paths).
fn resolve(file: &str, root: &Path) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() {
        p.to_owned()
    } else {
        root.join(p)
    }
}

/// The path inside its crate: the nearest directory up with a
/// `Cargo.toml`, named without its version (`gif-0.9.0` → `gif`), then the
/// rest. Paths of the standard library or a missing file stay as given.
fn crate_relative(path: &Path, root: &Path) -> String {
    for dir in path.ancestors().skip(1) {
        if dir.join("Cargo.toml").is_file() {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = strip_version(&name);
            let rest = path.strip_prefix(dir).unwrap_or(path);
            return format!("{name}/{}", rest.display());
        }
        if dir == root.parent().unwrap_or(root) {
            break;
        }
    }
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// `gif-0.9.0` → `gif`; `my-crate` stays.
fn strip_version(name: &str) -> &str {
    match name.rfind('-') {
        Some(i)
            if name[i + 1..].starts_with(|c: char| c.is_ascii_digit())
                && name[i + 1..].contains('.') =>
        {
            &name[..i]
        }
        _ => name,
    }
}

/// Line `line` (1-based) of `path`, whitespace collapsed; `None` if it
/// cannot be read.
fn source_line(path: &Path, line: u64) -> Option<String> {
    if line == 0 {
        return None;
    }
    let text = crate::input::read_file(path).ok()?;
    let text = String::from_utf8_lossy(&text);
    let l = text.lines().nth(line as usize - 1)?;
    let collapsed: Vec<&str> = l.split_whitespace().collect();
    (!collapsed.is_empty()).then(|| collapsed.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::outcome::Access;

    fn panic_at(target: &str, bucket: usize, loc: &str) -> Crash {
        Crash {
            bucket,
            target: target.into(),
            signature: Signature::panic("called `Option::unwrap()` on a `None` value", loc),
            details: None,
            root: PathBuf::from("/nonexistent"),
        }
    }

    fn asan(bucket: usize, func: &str, loc: &str, frames: &[&str]) -> Crash {
        let mut sig = Signature::new(CrashKind::Sanitizer);
        sig.message = Some("AddressSanitizer: heap-buffer-overflow".into());
        sig.function = Some(func.into());
        sig.location = Some(loc.into());
        Crash {
            bucket,
            target: "t".into(),
            signature: sig,
            root: PathBuf::from("/nonexistent"),
            details: Some(CrashDetails {
                access: Some(Access {
                    write: true,
                    size: Some(1),
                }),
                address: None,
                frames: frames
                    .iter()
                    .map(|s| crate::run::outcome::StackFrame {
                        function: s.to_string(),
                        location: None,
                    })
                    .collect(),
            }),
        }
    }

    #[test]
    fn one_place_from_two_targets_is_one_bug_and_placeless_crashes_stay_apart() {
        let root = Path::new("/nonexistent");
        let mut timeout_a = Signature::new(CrashKind::Timeout);
        timeout_a.message = None;
        let crashes = vec![
            panic_at("a", 10, "src/lib.rs:5:9"),
            panic_at("b", 11, "src/lib.rs:5:9"),
            panic_at("a", 12, "src/lib.rs:9:9"),
            Crash {
                bucket: 13,
                target: "a".into(),
                signature: timeout_a.clone(),
                details: None,
                root: root.to_owned(),
            },
            Crash {
                bucket: 14,
                target: "b".into(),
                signature: timeout_a,
                details: None,
                root: root.to_owned(),
            },
        ];
        let bugs = group(&crashes, MatchMode::Location);
        let buckets: Vec<Vec<usize>> = bugs.iter().map(|b| b.buckets.clone()).collect();
        assert_eq!(buckets, vec![vec![10, 11], vec![12], vec![13], vec![14]]);
        assert_eq!(bugs[0].targets, vec!["a", "b"]);
        assert_eq!(bugs[0].grouping, Grouping::Identity);
        let fps: std::collections::BTreeSet<_> = bugs.iter().map(|b| &b.fingerprint).collect();
        assert_eq!(fps.len(), 4, "{bugs:?}");
    }

    #[test]
    fn hangs_in_one_function_from_two_targets_are_one_bug() {
        let root = Path::new("/nonexistent");
        let hang = |bucket: usize, target: &str, function: Option<&str>| {
            let mut sig = Signature::new(CrashKind::Timeout);
            sig.function = function.map(str::to_owned);
            Crash {
                bucket,
                target: target.into(),
                signature: sig,
                details: None,
                root: root.to_owned(),
            }
        };
        let crashes = vec![
            hang(1, "a", Some("md::parse_inline")),
            hang(2, "b", Some("md::parse_inline")),
            hang(3, "b", Some("md::parse_block")),
            hang(4, "a", None),
            hang(5, "b", None),
        ];
        let bugs = group(&crashes, MatchMode::Location);
        let buckets: Vec<Vec<usize>> = bugs.iter().map(|b| b.buckets.clone()).collect();
        assert_eq!(buckets, vec![vec![1, 2], vec![3], vec![4], vec![5]]);
        assert_eq!(bugs[0].targets, vec!["a", "b"]);
        let fps: std::collections::BTreeSet<_> = bugs.iter().map(|b| &b.fingerprint).collect();
        assert_eq!(fps.len(), 4, "{bugs:?}");
    }

    #[test]
    fn one_allocation_site_is_one_bug_whichever_limit_caught_it() {
        let at = |bucket: usize, kind: CrashKind, message: Option<&str>, loc: &str| {
            let mut sig = Signature::new(kind);
            sig.message = message.map(str::to_owned);
            sig.location = Some(loc.into());
            Crash {
                bucket,
                target: "t".into(),
                signature: sig,
                details: None,
                root: PathBuf::from("/nonexistent"),
            }
        };
        let crashes = vec![
            at(
                0,
                CrashKind::MallocLimit,
                Some("malloc(4242424244)"),
                "src/de.rs:202:23",
            ),
            at(
                1,
                CrashKind::Sanitizer,
                Some("AddressSanitizer: allocation-size-too-big"),
                "src/de.rs:202:23",
            ),
            at(2, CrashKind::OutOfMemory, None, "src/de.rs:202:23"),
            // Another site, and another error at the same site.
            at(
                3,
                CrashKind::MallocLimit,
                Some("malloc(9999999999)"),
                "src/de.rs:300:5",
            ),
            at(
                4,
                CrashKind::Sanitizer,
                Some("AddressSanitizer: heap-buffer-overflow"),
                "src/de.rs:202:23",
            ),
        ];
        let bugs = group(&crashes, MatchMode::Location);
        let buckets: Vec<Vec<usize>> = bugs.iter().map(|b| b.buckets.clone()).collect();
        assert_eq!(buckets, vec![vec![0, 1, 2], vec![3], vec![4]]);
        // `--match any` keeps its meaning: everything is one identity.
        assert_eq!(group(&crashes, MatchMode::Any).len(), 1);
    }

    #[test]
    fn similar_stacks_join_but_two_lines_of_one_function_never_do() {
        let crashes = vec![
            asan(
                0,
                "lib::caller_a",
                "src/lib.rs:10:5",
                &["lib::caller_a", "lib::parse", "lib::run", "fuzz::go"],
            ),
            asan(
                1,
                "lib::caller_b",
                "src/lib.rs:20:5",
                &["lib::caller_b", "lib::parse", "lib::run", "fuzz::go"],
            ),
            asan(
                2,
                "lib::check",
                "src/lib.rs:30:5",
                &["lib::check", "lib::parse", "lib::run", "fuzz::go"],
            ),
            asan(
                3,
                "lib::check",
                "src/lib.rs:31:5",
                &["lib::check", "lib::parse", "lib::run", "fuzz::go"],
            ),
        ];
        let bugs = group(&crashes, MatchMode::Location);
        assert!(
            !bugs
                .iter()
                .any(|b| b.buckets.contains(&2) && b.buckets.contains(&3)),
            "{bugs:?}"
        );
        assert_eq!(bugs[0].severity.class, "heap-buffer-overflow(write)");
    }

    #[test]
    fn partitions_split_bugs_without_overlap() {
        assert!("hash:0/3".parse::<Partition>().is_err());
        assert!("hash:4/3".parse::<Partition>().is_err());
        assert!("slice:1/3".parse::<Partition>().is_err());
        let root = Path::new("/nonexistent");
        let crashes: Vec<Crash> = (0..20)
            .map(|i| panic_at("t", i, &format!("src/lib.rs:{}:1", i + 1)))
            .collect();
        let bugs = group(&crashes, MatchMode::Location);
        let _ = root;
        for kind in ["hash", "count"] {
            let mut owners = vec![0; bugs.len()];
            for k in 1..=3 {
                let p: Partition = format!("{kind}:{k}/3").parse().unwrap();
                assert_eq!(p.to_string(), format!("{kind}:{k}/3"));
                for (i, mine) in p.mine(&bugs).into_iter().enumerate() {
                    owners[i] += usize::from(mine);
                }
            }
            assert!(owners.iter().all(|&n| n == 1), "{kind}: {owners:?}");
        }
    }

    #[test]
    fn fingerprints_ignore_moved_lines_and_versions() {
        let dir = tempfile::tempdir().unwrap();
        let krate = dir.path().join("gif-0.9.0");
        std::fs::create_dir_all(krate.join("src")).unwrap();
        std::fs::write(krate.join("Cargo.toml"), "[package]\nname = \"gif\"\n").unwrap();
        std::fs::write(krate.join("src/lib.rs"), "fn f() {\n    let x = v[i];\n}\n").unwrap();
        let at = |line: u32| {
            Signature::panic(
                "index out of bounds: the len is 3 but the index is 7",
                format!("{}:{line}:13", krate.join("src/lib.rs").display()),
            )
        };
        let before = fingerprint(&at(2), None, dir.path());
        // Two lines added above: the crash line moves, its text does not.
        std::fs::write(
            krate.join("src/lib.rs"),
            "// a\n// b\nfn f() {\n    let x =   v[i];\n}\n",
        )
        .unwrap();
        assert_eq!(fingerprint(&at(4), None, dir.path()), before);
        // Another crate version in another place: the same.
        let other = dir.path().join("elsewhere/gif-0.9.1");
        std::fs::create_dir_all(other.join("src")).unwrap();
        std::fs::write(other.join("Cargo.toml"), "").unwrap();
        std::fs::write(other.join("src/lib.rs"), "fn f() {\n    let x = v[i];\n}\n").unwrap();
        let moved = Signature::panic(
            "index out of bounds: the len is 1 but the index is 2",
            format!("{}:2:13", other.join("src/lib.rs").display()),
        );
        assert_eq!(fingerprint(&moved, None, dir.path()), before);
        assert_eq!(before.len(), 16);
        // An inlined frame's name, or the qualified one another build gives.
        let named = |f: &str| {
            let mut sig = at(4);
            sig.function = Some(f.to_owned());
            fingerprint(&sig, None, dir.path())
        };
        assert_eq!(named("advance"), named("<parse::Cursor<'a>>::advance"));
        assert_eq!(
            named("advance"),
            named("proc_macro2::parse::Cursor::advance")
        );
        assert_ne!(named("advance"), named("retreat"));
        assert_eq!(strip_version("gif-0.9.0"), "gif");
        assert_eq!(strip_version("rustc-demangle-0.1.5"), "rustc-demangle");
        assert_eq!(strip_version("my-crate"), "my-crate");
    }
}
