//! Buckets: reproducing artifacts that crash the same way under `--match`.

use crate::run::outcome::{Identity, MatchMode, Signature};
use std::collections::BTreeMap;
use std::path::Path;

/// What two crashes must share to be in one bucket: the parts of the
/// signature `--match` compares, per target.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BucketKey {
    pub target: String,
    /// Index of the (project, target) driver, for two projects' same-named targets.
    pub driver: usize,
    /// What `--match` compares ([`Signature::identity`]).
    pub identity: Identity,
    /// Where a timeout hung ([`Signature::hang_place`]): two hangs of one
    /// target are two buckets (never with `--match any` or `kind`).
    pub hang: Option<String>,
}

/// The bucket a crash belongs to under `mode`.
pub fn bucket_key(mode: MatchMode, target: &str, driver: usize, sig: &Signature) -> BucketKey {
    BucketKey {
        target: target.to_owned(),
        driver,
        identity: sig.identity(mode),
        hang: match mode {
            MatchMode::Location | MatchMode::Message => sig.hang_place().map(str::to_owned),
            MatchMode::Any | MatchMode::Kind => None,
        },
    }
}

/// One reproducing artifact, for [`group`].
#[derive(Debug, Clone)]
pub struct Crashed<'a> {
    /// Its index among the discovered artifacts.
    pub index: usize,
    pub path: &'a Path,
    pub len: u64,
    pub target: &'a str,
    pub driver: usize,
    pub signature: &'a Signature,
}

/// Artifacts that crash the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    pub key: BucketKey,
    /// Artifact indices, smallest original first (then by path): the first
    /// is the representative.
    pub members: Vec<usize>,
    /// The representative's signature.
    pub signature: Signature,
}

impl Bucket {
    pub fn representative(&self) -> usize {
        self.members[0]
    }
}

/// Groups reproducing artifacts into buckets, sorted by key.
pub fn group(mode: MatchMode, crashed: &[Crashed<'_>]) -> Vec<Bucket> {
    let mut by_key: BTreeMap<BucketKey, Vec<&Crashed<'_>>> = BTreeMap::new();
    for c in crashed {
        by_key
            .entry(bucket_key(mode, c.target, c.driver, c.signature))
            .or_default()
            .push(c);
    }
    by_key
        .into_iter()
        .map(|(key, mut members)| {
            members.sort_by(|a, b| a.len.cmp(&b.len).then_with(|| a.path.cmp(b.path)));
            Bucket {
                key,
                signature: members[0].signature.clone(),
                members: members.iter().map(|c| c.index).collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::outcome::CrashKind;
    use std::path::PathBuf;

    fn sig(loc: &str, msg: &str) -> Signature {
        Signature::panic(msg, loc)
    }

    #[test]
    fn buckets_follow_the_match_mode_and_the_smallest_original_represents() {
        let s1 = sig("src/lib.rs:1:1", "index 4");
        let s1b = sig("src/lib.rs:1:1", "index 5");
        let s2 = sig("src/lib.rs:2:2", "boom");
        let abort = Signature::new(CrashKind::Abort);
        let paths: Vec<PathBuf> = (0..5)
            .map(|i| PathBuf::from(format!("crash-{i}")))
            .collect();
        let c = |i: usize, len: u64, target: &'static str, s: &'static Signature| Crashed {
            index: i,
            path: &paths[i],
            len,
            target,
            driver: usize::from(target == "u"),
            signature: s,
        };
        let (s1, s1b, s2, abort) = (
            Box::leak(Box::new(s1)),
            Box::leak(Box::new(s1b)),
            Box::leak(Box::new(s2)),
            Box::leak(Box::new(abort)),
        );
        let crashed = vec![
            c(0, 900, "t", s1),
            c(1, 300, "t", s1b),
            c(2, 500, "t", s2),
            c(3, 10, "t", abort),
            c(4, 700, "u", s1),
        ];
        let members = |bs: &[Bucket]| bs.iter().map(|b| b.members.clone()).collect::<Vec<_>>();

        // location: the two index messages share a bucket; target `u` is apart.
        let loc = group(MatchMode::Location, &crashed);
        assert_eq!(members(&loc), vec![vec![3], vec![1, 0], vec![2], vec![4]]);
        assert_eq!(loc[1].signature, *s1b, "the smallest original represents");
        assert_eq!(loc[1].representative(), 1);
        // message: they split.
        assert_eq!(group(MatchMode::Message, &crashed).len(), 5);
        // kind: panics together, the abort apart (per target).
        assert_eq!(
            members(&group(MatchMode::Kind, &crashed)),
            vec![vec![3], vec![1, 2, 0], vec![4]]
        );
        // any: one per target.
        assert_eq!(
            members(&group(MatchMode::Any, &crashed)),
            vec![vec![3, 1, 2, 0], vec![4]]
        );
        // Equal sizes: the path breaks the tie.
        let tie = vec![c(1, 5, "t", s2), c(0, 5, "t", s2)];
        assert_eq!(group(MatchMode::Location, &tie)[0].members, vec![0, 1]);
    }
}
