//! Grammar-based reduction: grammars, parsing inputs into derivation trees,
//! and reducers that work on the trees.
//!
//! For text inputs, byte-level deletion wastes most tests on candidates the
//! target rejects before reaching the bug. Reducing the derivation tree
//! instead (HDD, Perses, the Fuzzing Book's GrammarReducer, generalised tree
//! reduction) only ever produces inputs the grammar accepts.
//!
//! * [`Grammar`] / [`Term`]: a context-free grammar over bytes;
//! * [`Tree`]: a derivation tree, as the Fuzzing Book represents it
//!   (nonterminal nodes with children, terminal leaves holding bytes).
//!
//! About 600 lines: most of them `Tree`'s hand-written `Clone`,
//! `PartialEq`, `Hash`, `Debug` and `Drop` (iterative, for trees as deep as
//! the inputs are nested) and their tests.

use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};

/// One element of an expansion.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Term {
    /// A nonterminal, by name including the angle brackets: `<expr>`.
    Nonterminal(String),
    /// Literal bytes.
    Literal(Vec<u8>),
    /// One byte from a set of inclusive ranges (`[a-z0-9_]`); `negated`
    /// matches any byte outside them.
    Class {
        ranges: Vec<(u8, u8)>,
        negated: bool,
    },
}

impl Term {
    /// Does this class term match `b`? (`false` for other terms.)
    pub fn class_matches(&self, b: u8) -> bool {
        match self {
            Term::Class { ranges, negated } => {
                ranges.iter().any(|&(lo, hi)| lo <= b && b <= hi) != *negated
            }
            _ => false,
        }
    }
}

/// A context-free grammar: each nonterminal has one or more alternative
/// expansions (an empty expansion derives the empty string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grammar {
    /// The start symbol (`<start>` unless the file says otherwise).
    pub start: String,
    /// Expansions of every nonterminal, in the order the file gives them.
    pub rules: BTreeMap<String, Vec<Vec<Term>>>,
}

/// A derivation tree over an input.
///
/// Trees are as deep as the input is nested (a 45 KB artifact of nested
/// groups is a tree tens of thousands of levels deep), so nothing here
/// recurses on the depth: [`Clone`], [`PartialEq`], [`Hash`], [`fmt::Debug`]
/// and [`Drop`] are written by hand with explicit stacks (the derived ones
/// recurse once per level and overflow the stack), and so are the walks.
pub enum Tree {
    /// A nonterminal and the derivation of one of its expansions
    /// (`expansion` indexes `Grammar::rules[symbol]`).
    Node {
        symbol: String,
        expansion: usize,
        children: Vec<Tree>,
    },
    /// Terminal bytes (a literal, or the byte a class matched).
    Leaf(Vec<u8>),
}

impl Tree {
    /// The bytes this tree derives (the concatenation of its leaves).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_bytes(&mut out);
        out
    }

    pub fn write_bytes(&self, out: &mut Vec<u8>) {
        let children = match self {
            Tree::Leaf(b) => return out.extend_from_slice(b),
            Tree::Node { children, .. } => children,
        };
        // The children still to write at each level.
        let mut stack = Vec::with_capacity(16);
        stack.push(children.iter());
        while let Some(rest) = stack.last_mut() {
            match rest.next() {
                Some(Tree::Leaf(b)) => out.extend_from_slice(b),
                Some(Tree::Node { children, .. }) => stack.push(children.iter()),
                None => {
                    stack.pop();
                }
            }
        }
    }

    /// The nonterminal at this node, if any.
    pub fn symbol(&self) -> Option<&str> {
        match self {
            Tree::Node { symbol, .. } => Some(symbol),
            Tree::Leaf(_) => None,
        }
    }

    /// The children of a node (none for a leaf).
    pub fn children(&self) -> &[Tree] {
        match self {
            Tree::Node { children, .. } => children,
            Tree::Leaf(_) => &[],
        }
    }

    /// Number of nodes (nonterminals and leaves).
    pub fn size(&self) -> usize {
        self.preorder().count()
    }

    /// Levels of nodes from this one down to the deepest leaf (1 for a
    /// leaf or a node without children).
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut todo = vec![(self, 1usize)];
        while let Some((t, d)) = todo.pop() {
            deepest = deepest.max(d);
            todo.extend(t.children().iter().map(|c| (c, d + 1)));
        }
        deepest
    }

    /// This node and all its descendants, in pre-order (a node before its
    /// children, children left to right).
    pub fn preorder(&self) -> Preorder<'_> {
        Preorder {
            root: Some(self),
            stack: Vec::new(),
        }
    }

    /// The bytes of the leaves, left to right.
    pub fn leaves(&self) -> impl Iterator<Item = &[u8]> {
        self.preorder().filter_map(|t| match t {
            Tree::Leaf(b) => Some(&b[..]),
            Tree::Node { .. } => None,
        })
    }
}

/// Pre-order iterator over a [`Tree`] ([`Tree::preorder`]), with an
/// explicit stack: the children still to visit at each level.
pub struct Preorder<'t> {
    root: Option<&'t Tree>,
    stack: Vec<std::slice::Iter<'t, Tree>>,
}

impl<'t> Iterator for Preorder<'t> {
    type Item = &'t Tree;

    fn next(&mut self) -> Option<&'t Tree> {
        let t = match self.root.take() {
            Some(root) => root,
            None => loop {
                match self.stack.last_mut()?.next() {
                    Some(t) => break t,
                    None => {
                        self.stack.pop();
                    }
                }
            },
        };
        if let Tree::Node { children, .. } = t {
            if !children.is_empty() {
                self.stack.push(children.iter());
            }
        }
        Some(t)
    }
}

impl Drop for Tree {
    /// Leaves and nodes whose children have no children are left to the
    /// drop glue (one level down); deeper trees go to `drop_deep`, which
    /// uses an explicit stack.
    #[inline]
    fn drop(&mut self) {
        if let Tree::Node { children, .. } = self {
            if children.iter().any(|c| !c.children().is_empty()) {
                drop_deep(std::mem::take(children));
            }
        }
    }
}

/// Drops `children` and everything below them in the derived drop's order
/// (a node's symbol, its children left to right, then the vector that held
/// them), with an explicit stack of the children still to drop at each
/// level instead of recursion: each node is dropped with its children
/// already taken out. (The order matters: after freeing in reverse order
/// the allocator handed out scattered memory, and the Earley benchmark's
/// 100 KB parse, which follows the previous run's drop, ran 15-25% slower.)
#[inline(never)]
fn drop_deep(children: Vec<Tree>) {
    let mut stack = Vec::with_capacity(16);
    stack.push(children.into_iter());
    while let Some(rest) = stack.last_mut() {
        let Some(mut t) = rest.next() else {
            stack.pop();
            continue;
        };
        if let Tree::Node { children, .. } = &mut t {
            if !children.is_empty() {
                stack.push(std::mem::take(children).into_iter());
            }
        }
        // `t` is dropped here, without children.
    }
}

impl Clone for Tree {
    /// Post-order with an explicit stack: for each node being copied, the
    /// position of the next child to copy; finished copies wait on a second
    /// stack until their parent takes them.
    fn clone(&self) -> Tree {
        let children = match self {
            Tree::Node { children, .. } => children,
            Tree::Leaf(_) => return self.clone_childless(),
        };
        // Children without children (leaves, empty derivations): no stack.
        if children.iter().all(|c| c.children().is_empty()) {
            return self.clone_with(children.iter().map(Tree::clone_childless).collect());
        }
        let mut stack: Vec<(&Tree, usize)> = vec![(self, 0)];
        let mut copies: Vec<Tree> = Vec::new();
        loop {
            let (src, next) = stack
                .last_mut()
                .expect("non-empty until the root is copied");
            let children = src.children();
            if let Some(child) = children.get(*next) {
                *next += 1;
                if child.children().is_empty() {
                    copies.push(child.clone_childless());
                } else {
                    stack.push((child, 0));
                }
                continue;
            }
            let src = *src;
            stack.pop();
            let node = src.clone_with(copies.split_off(copies.len() - children.len()));
            if stack.is_empty() {
                return node;
            }
            copies.push(node);
        }
    }
}

impl Tree {
    /// A node with this one's symbol and expansion and these `children` (a
    /// leaf is copied as it is).
    fn clone_with(&self, children: Vec<Tree>) -> Tree {
        match self {
            Tree::Node {
                symbol, expansion, ..
            } => Tree::Node {
                symbol: symbol.clone(),
                expansion: *expansion,
                children,
            },
            Tree::Leaf(b) => Tree::Leaf(b.clone()),
        }
    }

    /// A copy of a leaf, or of a node without children.
    fn clone_childless(&self) -> Tree {
        match self {
            Tree::Leaf(b) => Tree::Leaf(b.clone()),
            Tree::Node {
                symbol, expansion, ..
            } => Tree::Node {
                symbol: symbol.clone(),
                expansion: *expansion,
                children: Vec::new(),
            },
        }
    }
}

impl PartialEq for Tree {
    fn eq(&self, other: &Tree) -> bool {
        let mut todo = vec![(self, other)];
        while let Some(pair) = todo.pop() {
            match pair {
                (Tree::Leaf(a), Tree::Leaf(b)) => {
                    if a != b {
                        return false;
                    }
                }
                (
                    Tree::Node {
                        symbol: s,
                        expansion: e,
                        children: c,
                    },
                    Tree::Node {
                        symbol: t,
                        expansion: f,
                        children: d,
                    },
                ) => {
                    if s != t || e != f || c.len() != d.len() {
                        return false;
                    }
                    todo.extend(c.iter().zip(d).rev());
                }
                _ => return false,
            }
        }
        true
    }
}

impl Eq for Tree {}

impl Hash for Tree {
    /// Every node in pre-order: a tag, then its fields (children as their
    /// count; they follow).
    fn hash<H: Hasher>(&self, state: &mut H) {
        for t in self.preorder() {
            match t {
                Tree::Node {
                    symbol,
                    expansion,
                    children,
                } => {
                    state.write_u8(0);
                    symbol.hash(state);
                    expansion.hash(state);
                    children.len().hash(state);
                }
                Tree::Leaf(b) => {
                    state.write_u8(1);
                    b.hash(state);
                }
            }
        }
    }
}

impl fmt::Debug for Tree {
    /// What `#[derive(Debug)]` prints (`Node { symbol: "<s>", expansion: 0,
    /// children: [Leaf([120])] }`, and its `{:#?}` form), without recursion.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pretty = f.alternate();
        // What is left to write: a tree at an indentation level, or text
        // (for the pretty form, `Indent` writes a newline and the level).
        enum Step<'t> {
            Tree(&'t Tree, usize),
            Text(&'static str),
            Indent(usize),
        }
        let mut todo = vec![Step::Tree(self, 0)];
        while let Some(step) = todo.pop() {
            match step {
                Step::Text(s) => f.write_str(s)?,
                Step::Indent(level) => {
                    f.write_str("\n")?;
                    indent(f, level)?;
                }
                Step::Tree(Tree::Leaf(b), level) => {
                    if pretty {
                        f.write_str("Leaf(")?;
                        todo.push(Step::Text(")"));
                        todo.push(Step::Indent(level));
                        todo.push(Step::Text(","));
                        // The bytes' own `{:#?}`, indented one level more.
                        let bytes = format!("{b:#?}");
                        let mut lines = bytes.lines();
                        if let Some(first) = lines.next() {
                            f.write_str("\n")?;
                            indent(f, level + 1)?;
                            f.write_str(first)?;
                        }
                        for line in lines {
                            f.write_str("\n")?;
                            indent(f, level + 1)?;
                            f.write_str(line)?;
                        }
                    } else {
                        f.write_str("Leaf(")?;
                        fmt::Debug::fmt(b, f)?;
                        f.write_str(")")?;
                    }
                }
                Step::Tree(
                    Tree::Node {
                        symbol,
                        expansion,
                        children,
                    },
                    level,
                ) => {
                    if pretty {
                        f.write_str("Node {\n")?;
                        indent(f, level + 1)?;
                        writeln!(f, "symbol: {symbol:?},")?;
                        indent(f, level + 1)?;
                        writeln!(f, "expansion: {expansion:?},")?;
                        indent(f, level + 1)?;
                        if children.is_empty() {
                            f.write_str("children: [],\n")?;
                            indent(f, level)?;
                            f.write_str("}")?;
                            continue;
                        }
                        f.write_str("children: [")?;
                        todo.push(Step::Text("}"));
                        todo.push(Step::Indent(level));
                        todo.push(Step::Text("],"));
                        todo.push(Step::Indent(level + 1));
                        for c in children.iter().rev() {
                            todo.push(Step::Text(","));
                            todo.push(Step::Tree(c, level + 2));
                            todo.push(Step::Indent(level + 2));
                        }
                    } else {
                        write!(
                            f,
                            "Node {{ symbol: {symbol:?}, expansion: {expansion:?}, children: ["
                        )?;
                        todo.push(Step::Text("] }"));
                        for (i, c) in children.iter().enumerate().rev() {
                            todo.push(Step::Tree(c, level + 1));
                            if i > 0 {
                                todo.push(Step::Text(", "));
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

fn indent(f: &mut fmt::Formatter<'_>, level: usize) -> fmt::Result {
    for _ in 0..level {
        f.write_str("    ")?;
    }
    Ok(())
}

pub mod earley;
pub mod generate;
pub mod load;
pub mod reduce;

pub use earley::{parse, ParseError, Parser};
pub use load::{
    builtin, builtin_grammar, load_grammar, parse_grammar, GrammarError, GrammarWarning,
    LoadedGrammar, BUILTIN_NAMES,
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::DefaultHasher;

    fn node(symbol: &str, expansion: usize, children: Vec<Tree>) -> Tree {
        Tree::Node {
            symbol: symbol.to_string(),
            expansion,
            children,
        }
    }

    /// `<s> ::= "(" <s> ")" | "x"` nested `depth` levels, built bottom-up.
    fn nested(depth: usize) -> Tree {
        let mut t = node("<s>", 1, vec![Tree::Leaf(b"x".to_vec())]);
        for _ in 0..depth {
            t = node(
                "<s>",
                0,
                vec![Tree::Leaf(b"(".to_vec()), t, Tree::Leaf(b")".to_vec())],
            );
        }
        t
    }

    fn hash(t: &Tree) -> u64 {
        let mut h = DefaultHasher::new();
        t.hash(&mut h);
        h.finish()
    }

    /// A tree 100,000 levels deep, in the test thread's stack (2 MiB): every
    /// method and trait impl, and the drop at the end.
    #[test]
    fn deep_trees_need_no_stack() {
        let depth = 100_000;
        let t = nested(depth);
        assert_eq!(t.depth(), depth + 2);
        assert_eq!(t.size(), 3 * depth + 2);
        let bytes = t.to_bytes();
        assert_eq!(bytes.len(), 2 * depth + 1);
        assert_eq!(bytes[depth], b'x');
        assert_eq!(t.leaves().count(), 2 * depth + 1);
        let copy = t.clone();
        assert_eq!(copy, t);
        assert_eq!(hash(&copy), hash(&t));
        let other = nested(depth - 1);
        assert_ne!(other, t);
        let debug = format!("{t:?}");
        assert!(debug
            .starts_with("Node { symbol: \"<s>\", expansion: 0, children: [Leaf([40]), Node {"));
        assert!(debug.ends_with("Leaf([41])] }"));
        // (The `{:#?}` form indents by level: quadratic in the depth, so it
        // is checked on shallow trees only.)
        drop(copy);
        // Trees moved into each other and dropped piecemeal.
        let mut forest = vec![t, other];
        forest.truncate(1);
    }

    /// The same trees as a derived type, to compare `Debug` output with.
    #[derive(Debug)]
    #[allow(dead_code)] // read by the derived `Debug` only
    enum Derived {
        Node {
            symbol: String,
            expansion: usize,
            children: Vec<Derived>,
        },
        Leaf(Vec<u8>),
    }

    fn derived(t: &Tree) -> Derived {
        match t {
            Tree::Node {
                symbol,
                expansion,
                children,
            } => Derived::Node {
                symbol: symbol.clone(),
                expansion: *expansion,
                children: children.iter().map(derived).collect(),
            },
            Tree::Leaf(b) => Derived::Leaf(b.clone()),
        }
    }

    #[test]
    fn impls_agree_with_derived_ones() {
        let trees = [
            Tree::Leaf(Vec::new()),
            Tree::Leaf(b"ab".to_vec()),
            node("<e>", 0, vec![]),
            nested(3),
            node(
                "<s>",
                2,
                vec![
                    node("<e>", 0, vec![]),
                    Tree::Leaf(Vec::new()),
                    node("<t>", 1, vec![nested(1), Tree::Leaf(b"\"q".to_vec())]),
                ],
            ),
        ];
        assert_eq!(format!("{:#?}", nested(3)).lines().count(), 16 * 3 + 11);
        for t in &trees {
            let d = derived(t);
            assert_eq!(format!("{t:?}"), format!("{d:?}"));
            assert_eq!(format!("{t:#?}"), format!("{d:#?}"));
            assert_eq!(format!("{:?}", Some(t)), format!("{:?}", Some(&d)));
            assert_eq!(format!("{:#?}", Some(t)), format!("{:#?}", Some(&d)));
            assert_eq!(t.clone(), *t);
        }
        for (i, a) in trees.iter().enumerate() {
            for (j, b) in trees.iter().enumerate() {
                assert_eq!(a == b, i == j, "{a:?} {b:?}");
                if i != j {
                    assert_ne!(hash(a), hash(b), "{a:?} {b:?}");
                }
            }
        }
        // Same shape, one leaf differs; same leaves, another expansion.
        let mut changed = nested(3);
        if let Tree::Node { children, .. } = &mut changed {
            children[2] = Tree::Leaf(b"]".to_vec());
        }
        assert_ne!(changed, nested(3));
        let mut changed = nested(3);
        if let Tree::Node { expansion, .. } = &mut changed {
            *expansion = 5;
        }
        assert_ne!(changed, nested(3));
    }
}
