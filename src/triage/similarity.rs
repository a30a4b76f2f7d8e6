//! Stack similarity, for grouping crashes whose exact identities differ
//! into one bug: the Position Dependent Model (PDM) of Dang et al.,
//! "ReBucket" (ICSE 2012), with the coefficients CASR uses (`a = 0.04`,
//! `r = 0.13`), and complete-linkage clustering cut at distance 0.3, CASR's
//! threshold (`casr-cluster -c`).
//!
//! Two stacks are lists of function names from the crash down. A pair of
//! equal frames at positions `i` and `j` counts `exp(-a·min(i, j) -
//! r·|i - j|)`: frames near the crash count most, and frames that line up
//! count more than shifted ones. The best alignment's sum (a longest common
//! subsequence weighted so) is divided by what two identical stacks of the
//! shorter length would score, so similarity is 1 for equal stacks and 0
//! for stacks sharing no frame; distance is `1 - similarity`.

/// CASR's PDM coefficients: the weight lost per frame of depth, and per
/// frame of offset between the two positions.
const A: f64 = 0.04;
const R: f64 = 0.13;

/// Complete-linkage clusters merge while their farthest members are closer
/// than this (CASR's `THRESHOLD`).
pub const THRESHOLD: f64 = 0.3;

/// PDM similarity of two stacks (crash first), in `0.0..=1.0`.
pub fn similarity<S: AsRef<str>>(first: &[S], second: &[S]) -> f64 {
    let (k, n) = (first.len() + 1, second.len() + 1);
    if k == 1 || n == 1 {
        return 0.0;
    }
    let mut m = vec![0.0f64; k * n];
    for i in 1..n {
        for j in 1..k {
            let cost = if first[j - 1].as_ref() == second[i - 1].as_ref() {
                (-(i.min(j) as f64 * A + i.abs_diff(j) as f64 * R)).exp()
            } else {
                0.0
            };
            let best = m[i * k + j - 1]
                .max(m[(i - 1) * k + j])
                .max(m[(i - 1) * k + j - 1] + cost);
            m[i * k + j] = best;
        }
    }
    let norm: f64 = (1..k.min(n)).map(|i| (-A * i as f64).exp()).sum();
    (m[n * k - 1] / norm).min(1.0)
}

/// Complete-linkage agglomerative clustering of `count` items under
/// `distance`, cut at [`THRESHOLD`]; `may_join(a, b)` vetoes joining two
/// items (then their clusters never merge). Clusters come back as item
/// indices, each sorted, in the order of their first item.
pub fn clusters(
    count: usize,
    distance: impl Fn(usize, usize) -> f64,
    may_join: impl Fn(usize, usize) -> bool,
) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = (0..count).map(|i| vec![i]).collect();
    let d: Vec<Vec<f64>> = (0..count)
        .map(|i| {
            (0..count)
                .map(|j| if i == j { 0.0 } else { distance(i, j) })
                .collect()
        })
        .collect();
    loop {
        // The closest pair of clusters by their farthest members.
        let mut best: Option<(f64, usize, usize)> = None;
        for a in 0..groups.len() {
            for b in a + 1..groups.len() {
                let mut far = 0.0f64;
                let mut allowed = true;
                for &x in &groups[a] {
                    for &y in &groups[b] {
                        far = far.max(d[x][y]);
                        allowed &= may_join(x, y);
                    }
                }
                if allowed && far < THRESHOLD && best.is_none_or(|(f, _, _)| far < f) {
                    best = Some((far, a, b));
                }
            }
        }
        let Some((_, a, b)) = best else { break };
        let merged = groups.remove(b);
        groups[a].extend(merged);
        groups[a].sort_unstable();
    }
    groups.sort_by_key(|g| g[0]);
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_stacks_are_one_and_disjoint_ones_zero() {
        let a = ["x::f", "x::g", "x::h"];
        assert!((similarity(&a, &a) - 1.0).abs() < 1e-9);
        assert_eq!(similarity(&a, &["y::p", "y::q"]), 0.0);
        assert_eq!(similarity::<&str>(&[], &a), 0.0);
    }

    #[test]
    fn frames_near_the_crash_count_most() {
        // The same helper reached through two callers: the top differs.
        let one = ["lib::copy_into", "lib::caller_a", "lib::parse", "fuzz::run"];
        let two = ["lib::copy_into", "lib::caller_b", "lib::parse", "fuzz::run"];
        let top_differs = ["lib::other", "lib::caller_a", "lib::parse", "fuzz::run"];
        let s_callers = similarity(&one, &two);
        let s_top = similarity(&one, &top_differs);
        assert!(s_callers > s_top, "{s_callers} vs {s_top}");
        assert!(1.0 - s_callers < THRESHOLD, "{s_callers}");
    }

    #[test]
    fn complete_linkage_joins_close_clusters_only_and_obeys_vetoes() {
        let stacks: Vec<Vec<&str>> = vec![
            vec!["a", "b", "c", "d"],
            vec!["a", "b", "c", "e"],
            vec!["z", "y", "x", "w"],
            vec!["a", "b", "c", "d"],
        ];
        let dist = |i: usize, j: usize| 1.0 - similarity(&stacks[i], &stacks[j]);
        assert_eq!(clusters(4, dist, |_, _| true), vec![vec![0, 1, 3], vec![2]]);
        // 0 and 3 may never share a cluster.
        let veto = |i: usize, j: usize| !matches!((i.min(j), i.max(j)), (0, 3));
        let got = clusters(4, dist, veto);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(!got.iter().any(|g| g.contains(&0) && g.contains(&3)));
    }
}
