//! Hierarchical delta debugging (Misherghi & Su: "HDD: Hierarchical Delta
//! Debugging", ICSE 2006).
//!
//! Level by level from the root, [`ddmin`](crate::reduce::ddmin()) runs
//! over the nonterminal nodes of that level: a configuration is the set of
//! nodes kept, and a node that is not kept is *pruned*, i.e. replaced by the
//! minimal derivation of its symbol (the shortest string the grammar derives
//! from it, computed once from the grammar: the empty string where the
//! symbol is nullable, so pruning is deletion where the grammar allows it).
//! Every candidate is therefore a derivation of the grammar. The pruning
//! ddmin settles on is applied before moving one level down.
//!
//! Only nodes whose minimal derivation is strictly shorter than their
//! current bytes take part (pruning the others gains nothing). One call is
//! one top-down pass (HDD); [`super::TreeStrategy::Grammar`] repeats it with
//! the other reducers until nothing changes (HDD*).

use super::{byte_len, node_at, node_at_mut, Reduction, Tester};
use crate::grammar::{Grammar, Tree};
use crate::reduce::oracle::Oracle;

/// Reduces `tree` with one top-down HDD pass; see the module documentation.
pub fn hdd<O>(grammar: &Grammar, tree: &Tree, oracle: &mut O) -> Reduction
where
    O: Oracle<u8> + ?Sized,
{
    super::reduce_with(grammar, tree, oracle, run)
}

pub(super) fn run<O: Oracle<u8> + ?Sized>(tester: &mut Tester<'_, O>, tree: Tree) -> Tree {
    let mut current = tree;
    // The nodes of the current level. Pruning replaces nodes of this level
    // only, so the paths of the next level are those of the children of
    // these nodes in the pruned tree (what `level_paths(&current, level +
    // 1)` finds from the root, without walking down again: each level costs
    // its own width, not its depth).
    let mut paths = vec![Vec::new()];
    loop {
        if tester.exhausted() {
            return current;
        }
        if paths.is_empty() {
            return current;
        }
        let prunable: Vec<Vec<usize>> = paths
            .iter()
            .filter(|p| {
                let node = node_at(&current, p);
                node.symbol()
                    .and_then(|s| tester.mins.get(s))
                    .is_some_and(|min| byte_len(min) < byte_len(node))
            })
            .cloned()
            .collect();
        if !prunable.is_empty() {
            let all: Vec<usize> = (0..prunable.len()).collect();
            let kept = {
                let mut adapter = LevelOracle {
                    tester: &mut *tester,
                    tree: &current,
                    paths: &prunable,
                };
                crate::reduce::ddmin(&all, &mut adapter)
            };
            if kept.len() < all.len() {
                current = pruned(tester, &current, &prunable, &kept);
            }
        }
        paths = next_level(&current, paths);
    }
}

/// Paths of the nodes (nonterminals and leaves) `level` edges below the
/// root, left to right.
#[cfg(test)]
fn level_paths(tree: &Tree, level: usize) -> Vec<Vec<usize>> {
    let mut paths = vec![Vec::new()];
    for _ in 0..level {
        paths = next_level(tree, paths);
    }
    paths
}

/// The paths of the children of the nodes at `paths`, left to right.
fn next_level(tree: &Tree, paths: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
    paths
        .into_iter()
        .flat_map(|p| {
            let n = node_at(tree, &p).children().len();
            (0..n).map(move |i| {
                let mut q = p.clone();
                q.push(i);
                q
            })
        })
        .collect()
}

/// `tree` with the nodes at `paths` that are not in `kept` (indices into
/// `paths`, ascending) replaced by their minimal derivations.
fn pruned<O: Oracle<u8> + ?Sized>(
    tester: &Tester<'_, O>,
    tree: &Tree,
    paths: &[Vec<usize>],
    kept: &[usize],
) -> Tree {
    let mut out = tree.clone();
    let mut keep = kept.iter().peekable();
    for (i, path) in paths.iter().enumerate() {
        if keep.peek() == Some(&&i) {
            keep.next();
            continue;
        }
        let node = node_at_mut(&mut out, path);
        let symbol = node.symbol().expect("prunable nodes are nonterminals");
        *node = tester.mins.get(symbol).expect("prunable").clone();
    }
    out
}

/// ddmin's view of one level: a configuration is the indices of the nodes
/// kept.
struct LevelOracle<'t, 'a, 'p, O: ?Sized> {
    tester: &'t mut Tester<'a, O>,
    tree: &'p Tree,
    paths: &'p [Vec<usize>],
}

impl<O: Oracle<u8> + ?Sized> Oracle<usize> for LevelOracle<'_, '_, '_, O> {
    fn test(&mut self, kept: &[usize]) -> bool {
        let candidate = pruned(self.tester, self.tree, self.paths, kept);
        self.tester.test(&candidate)
    }

    fn first_interesting(&mut self, configurations: &[Vec<usize>]) -> Option<usize> {
        let candidates: Vec<Tree> = configurations
            .iter()
            .map(|kept| pruned(self.tester, self.tree, self.paths, kept))
            .collect();
        self.tester.first_interesting(&candidates)
    }

    fn exhausted(&self) -> bool {
        self.tester.exhausted()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{expr_grammar, parse_expr};
    use super::*;
    use crate::reduce::oracle::Cached;

    #[test]
    fn prunes_operands_to_minimal_derivations() {
        let g = expr_grammar();
        let tree = parse_expr("12 * (34 + 5) - 678 / 9").unwrap();
        let mut oracle = Cached::new(|c: &[u8]| c.contains(&b'5'));
        let r = hdd(&g, &tree, &mut oracle);
        // Pruning replaces by minimal derivations: the operators stay
        // (HDD cannot delete an operand here), every other operand becomes
        // `0`.
        assert_eq!(r.tree.to_bytes(), b"0 * (0 + 5) - 0");
        assert_eq!(r.stats.invalid_candidates, 0);
    }

    #[test]
    fn level_paths_are_left_to_right() {
        let tree = parse_expr("1 + 2").unwrap();
        // <start> / <expr> / (<term>, " + ", <expr>)
        assert_eq!(level_paths(&tree, 0), vec![Vec::<usize>::new()]);
        assert_eq!(
            level_paths(&tree, 2),
            vec![vec![0, 0], vec![0, 1], vec![0, 2]]
        );
    }
}
