//! Earley parsing: turning an input into a derivation tree of a grammar.
//!
//! Tree reducers work on derivation trees, so before reducing a text input
//! we must parse it with the user's grammar — any context-free grammar, as
//! users write them: ambiguous, left- or right-recursive, with empty rules.
//! Earley's algorithm handles all of these; this implementation works over
//! bytes and is tuned for large inputs (a 100 KB JSON document parses into
//! a tree in about 40–60 ms in release mode, see `benches/earley.rs`).
//!
//! How it works:
//!
//! * the grammar is compiled to integers ([`Parser::new`]): each expansion
//!   is a run of *slots* (symbol after the dot), nonterminals are indices;
//! * recognition builds one Earley set per input position. Nullable
//!   nonterminals use Aycock and Horspool's fix (predicting a nullable
//!   symbol also moves the dot over it), so completions of empty
//!   derivations never need to revisit the current set. Multi-byte
//!   literals are scanned in one step into a later set (a small ring
//!   buffer holds sets not yet processed);
//! * of each finished set only two sorted indexes are kept: the items
//!   waiting for a nonterminal (for completion, and to find predecessors
//!   when building the tree) and the completed items (for the tree);
//! * the tree is built top-down afterwards, iteratively (no recursion here,
//!   so very deep trees build fine), walking each expansion right to left
//!   through the chart. When the input is ambiguous the first expansion in
//!   file order wins; for a sequence, the last child is the shortest
//!   possible (so the earlier children are the longest). Empty subtrees
//!   come from a precomputed derivation per nullable nonterminal.
//!
//! Cyclic grammars (`A ⇒+ A`, e.g. `<a> ::= <a> | "x"`) have infinitely
//! many trees; for them the walk only follows items created before the
//! current one, which always terminates (still preferring the first
//! expansion among those).
//!
//! Right recursion (the Fuzzing Book's `<integer> ::= <digit><integer>`)
//! would cost time quadratic in the length of the chain; Leo's
//! optimisation completes such a chain in one step, straight to its top
//! item, and the tree walk rebuilds the skipped items from the chain (each
//! link is the only item waiting in its set). In an ambiguous grammar such
//! a chain is followed as recognised, which may differ from the
//! preferences above. Cyclic grammars do without Leo.
//!
//! One file, about 1,100 lines without its tests: the chart, completion,
//! Leo's optimisation and tree extraction share one set of invariants.

use super::{Grammar, Term, Tree};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};

/// Why an input does not parse (or the grammar cannot be used).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The input leaves the grammar at `offset` (the furthest position any
    /// derivation reached): `expected` lists the terminals that could have
    /// followed there (`"end of input"` if the input could have ended).
    #[error(
        "{line}:{col} (byte {offset}): expected {}, found {}",
        describe_expected(expected),
        describe_found(found)
    )]
    Syntax {
        offset: usize,
        /// 1-based; lines end at `\n`.
        line: usize,
        /// 1-based, counting UTF-8 characters (bytes that are not
        /// continuation bytes) from the line start.
        col: usize,
        expected: Vec<String>,
        /// The input at `offset`: the character (or byte) there, or, when
        /// an expected literal matches in part, that part and the next
        /// byte (`tru}` where `"true"` was expected). Empty at the end of
        /// the input.
        found: Vec<u8>,
    },
    #[error("unusable grammar: {0}")]
    Grammar(String),
}

impl ParseError {
    /// The byte offset of a syntax error.
    pub fn offset(&self) -> Option<usize> {
        match self {
            ParseError::Syntax { offset, .. } => Some(*offset),
            ParseError::Grammar(_) => None,
        }
    }
}

fn describe_expected(expected: &[String]) -> String {
    const SHOWN: usize = 12;
    match expected {
        [] => "nothing (the grammar derives no string)".to_string(),
        [one] => one.clone(),
        _ => {
            let mut s = String::from("one of ");
            s.push_str(
                &expected
                    .iter()
                    .take(SHOWN)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            if expected.len() > SHOWN {
                let _ = write!(s, " (and {} more)", expected.len() - SHOWN);
            }
            s
        }
    }
}

fn describe_found(found: &[u8]) -> String {
    let text = std::str::from_utf8(found).ok();
    let mut chars = text.into_iter().flat_map(str::chars);
    match (found, chars.next(), chars.next()) {
        ([], ..) => "end of input".to_string(),
        (_, Some(c), None) if !c.is_control() || matches!(c, '\n' | '\t' | '\r') => {
            format!("{c:?}")
        }
        ([b], ..) => format!("byte 0x{b:02x}"),
        _ => format!("{:?}", String::from_utf8_lossy(found)),
    }
}

/// What [`ParseError::Syntax::found`] holds for an error at `at`.
fn found_at(input: &[u8], at: usize, partial: usize) -> Vec<u8> {
    let rest = &input[at.min(input.len())..];
    let char_len = match rest.first() {
        Some(&b) if b >= 0xC0 => {
            let len = b.leading_ones() as usize;
            let valid = len <= 4 && rest.len() >= len && std::str::from_utf8(&rest[..len]).is_ok();
            if valid {
                len
            } else {
                1
            }
        }
        _ => 1,
    };
    rest[..rest.len().min((partial + 1).max(char_len))].to_vec()
}

/// Parses `input` with `grammar`, returning one derivation tree (see the
/// module docs for which one when the input is ambiguous). Compile once
/// with [`Parser::new`] to parse many inputs.
pub fn parse(grammar: &Grammar, input: &[u8]) -> Result<Tree, ParseError> {
    Parser::new(grammar)?.parse(input)
}

/// Symbol after the dot of a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sym {
    Nt(u32),
    Term(u32),
    /// The dot is at the end of expansion (rule) `r`.
    End(u32),
}

#[derive(Debug, Clone)]
enum Terminal {
    Literal(Vec<u8>),
    Class([u64; 4]),
}

impl Terminal {
    /// Length matched at `at`, if any.
    #[inline]
    fn matches(&self, input: &[u8], at: usize) -> Option<usize> {
        match self {
            Terminal::Literal(lit) => input[at..].starts_with(lit).then_some(lit.len()),
            Terminal::Class(bits) => {
                let &b = input.get(at)?;
                ((bits[usize::from(b >> 6)] >> (b & 63)) & 1 == 1).then_some(1)
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Rule {
    lhs: u32,
    /// Index in `Grammar::rules[lhs]`.
    alternative: u32,
    /// Slot of the first symbol.
    first: u32,
    len: u32,
}

/// A grammar compiled for parsing.
#[derive(Debug, Clone)]
pub struct Parser {
    names: Vec<String>,
    /// Rules of each nonterminal: `nt_rules[x]..nt_rules[x + 1]`.
    nt_rules: Vec<u32>,
    rules: Vec<Rule>,
    slots: Vec<Sym>,
    terminals: Vec<Terminal>,
    /// How each terminal reads in "expected ..." messages.
    terminal_names: Vec<String>,
    nullable: Vec<bool>,
    /// A derivation of the empty string for each nullable nonterminal.
    empty_trees: Vec<Option<Tree>>,
    start: u32,
    cyclic: bool,
    /// Use Leo's optimisation for right recursion (not for cyclic
    /// grammars, whose tree walk needs every item).
    leo: bool,
    /// Is the nonterminal the last symbol of some expansion? (Only those
    /// can be links of a Leo chain.)
    last_somewhere: Vec<bool>,
    /// Longest literal (sets up to this far ahead are pending).
    max_scan: usize,
}

/// An Earley item: a slot (rule and dot) and the set its rule started in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Item {
    slot: u32,
    origin: u32,
}

/// An item of a finished set waiting for a nonterminal.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    nt: u32,
    slot: u32,
    origin: u32,
    /// Position in its set's creation order (for cyclic grammars).
    rank: u32,
}

/// A completed item (non-empty span) of a finished set.
#[derive(Debug, Clone, Copy)]
struct Completed {
    lhs: u32,
    origin: u32,
    rule: u32,
    rank: u32,
    /// For an item added by Leo's shortcut, the index in `Chart::leo` of
    /// the completion that triggered it; `NO_LEO` otherwise.
    leo: u32,
}

const NO_LEO: u32 = u32::MAX;

/// Leo's memo: for (set, nonterminal), the top of the deterministic
/// right-recursive chain above it, as (rule, origin), if any.
type LeoMemo = HashMap<(u32, u32), Option<(u32, u32)>, BuildHasherDefault<FastHasher>>;

/// The chart kept after recognition.
struct Chart {
    waiting: Vec<Waiting>,
    /// `waiting[waiting_start[i]..waiting_start[i + 1]]` is set `i`'s,
    /// sorted by (nt, slot, origin).
    waiting_start: Vec<u32>,
    completed: Vec<Completed>,
    /// Likewise, sorted by (lhs, origin descending, rule).
    completed_start: Vec<u32>,
    /// Completions that took Leo's shortcut: (nonterminal, origin) of the
    /// item actually completed at the bottom of the chain.
    leo: Vec<(u32, u32)>,
}

impl Chart {
    fn waiting_in(&self, set: usize) -> &[Waiting] {
        &self.waiting[self.waiting_start[set] as usize..self.waiting_start[set + 1] as usize]
    }

    fn waiting_for(&self, set: usize, nt: u32) -> &[Waiting] {
        let all = self.waiting_in(set);
        let lo = all.partition_point(|w| w.nt < nt);
        let hi = lo + all[lo..].partition_point(|w| w.nt == nt);
        &all[lo..hi]
    }

    /// The item `(slot, origin)` waiting in `set`, if there.
    fn find_waiting(&self, set: usize, nt: u32, slot: u32, origin: u32) -> Option<&Waiting> {
        let all = self.waiting_for(set, nt);
        let i = all.partition_point(|w| (w.slot, w.origin) < (slot, origin));
        all.get(i).filter(|w| w.slot == slot && w.origin == origin)
    }

    fn completed_for(&self, set: usize, lhs: u32) -> &[Completed] {
        let all = &self.completed
            [self.completed_start[set] as usize..self.completed_start[set + 1] as usize];
        let lo = all.partition_point(|c| c.lhs < lhs);
        let hi = lo + all[lo..].partition_point(|c| c.lhs == lhs);
        &all[lo..hi]
    }
}

/// FxHash-style hasher for the parser's per-set duplicate check and memo
/// tables, and for the tree reducers' subtree summaries (a SipHash per
/// item or node cost more than the rest of the work).
#[derive(Default)]
pub(crate) struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.write_u64(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type FastSet = HashSet<u64, BuildHasherDefault<FastHasher>>;

impl Parser {
    /// Compiles `grammar`. Fails if the start symbol or a nonterminal used
    /// in an expansion has no rules (grammars from
    /// [`load::parse_grammar`](super::load::parse_grammar) never do).
    pub fn new(grammar: &Grammar) -> Result<Parser, ParseError> {
        let names: Vec<String> = grammar.rules.keys().cloned().collect();
        let index: HashMap<&str, u32> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i as u32))
            .collect();
        let Some(&start) = index.get(grammar.start.as_str()) else {
            return Err(ParseError::Grammar(format!(
                "no rules for the start symbol {}",
                grammar.start
            )));
        };
        let mut p = Parser {
            names: names.clone(),
            nt_rules: vec![0],
            rules: Vec::new(),
            slots: Vec::new(),
            terminals: Vec::new(),
            terminal_names: Vec::new(),
            nullable: vec![false; names.len()],
            empty_trees: vec![None; names.len()],
            start,
            cyclic: false,
            leo: false,
            last_somewhere: vec![false; names.len()],
            max_scan: 1,
        };
        let mut terminal_index: HashMap<Term, u32> = HashMap::new();
        for (lhs, (name, expansions)) in grammar.rules.iter().enumerate() {
            for (alternative, expansion) in expansions.iter().enumerate() {
                let first = p.slots.len() as u32;
                for term in expansion {
                    let sym = match term {
                        Term::Nonterminal(n) => match index.get(n.as_str()) {
                            Some(&x) => Sym::Nt(x),
                            None => {
                                return Err(ParseError::Grammar(format!(
                                    "undefined nonterminal {n} in an expansion of {name}"
                                )))
                            }
                        },
                        _ => {
                            let next = terminal_index.len() as u32;
                            let t = *terminal_index.entry(term.clone()).or_insert(next);
                            if t == next {
                                p.terminals.push(compile_terminal(term));
                                p.terminal_names.push(terminal_name(term));
                            }
                            Sym::Term(t)
                        }
                    };
                    p.slots.push(sym);
                }
                let rule = p.rules.len() as u32;
                p.slots.push(Sym::End(rule));
                p.rules.push(Rule {
                    lhs: lhs as u32,
                    alternative: alternative as u32,
                    first,
                    len: expansion.len() as u32,
                });
            }
            p.nt_rules.push(p.rules.len() as u32);
        }
        p.max_scan = p
            .terminals
            .iter()
            .map(|t| match t {
                Terminal::Literal(l) => l.len(),
                Terminal::Class(_) => 1,
            })
            .max()
            .unwrap_or(1)
            .max(1);
        p.analyse_nullable();
        p.leo = !p.cyclic;
        for r in 0..p.rules.len() {
            if let Some(&Sym::Nt(x)) = p.rule_symbols(r as u32).last() {
                p.last_somewhere[x as usize] = true;
            }
        }
        Ok(p)
    }

    fn rules_of(&self, nt: u32) -> std::ops::Range<u32> {
        self.nt_rules[nt as usize]..self.nt_rules[nt as usize + 1]
    }

    fn rule_symbols(&self, rule: u32) -> &[Sym] {
        let r = &self.rules[rule as usize];
        &self.slots[r.first as usize..(r.first + r.len) as usize]
    }

    fn sym_nullable(&self, sym: Sym) -> bool {
        match sym {
            Sym::Nt(x) => self.nullable[x as usize],
            Sym::Term(t) => {
                matches!(&self.terminals[t as usize], Terminal::Literal(l) if l.is_empty())
            }
            Sym::End(_) => true,
        }
    }

    /// Nullable nonterminals, whether the grammar is cyclic, and the empty
    /// trees.
    fn analyse_nullable(&mut self) {
        let n = self.names.len();
        loop {
            let mut changed = false;
            for x in 0..n {
                if !self.nullable[x]
                    && self
                        .rules_of(x as u32)
                        .any(|r| self.rule_symbols(r).iter().all(|&s| self.sym_nullable(s)))
                {
                    self.nullable[x] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        // Unit graph: A -> B when A has an expansion whose other symbols are
        // all nullable. A cycle there means A =>+ A.
        let mut edges: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (x, edges) in edges.iter_mut().enumerate() {
            for r in self.rules_of(x as u32) {
                let syms = self.rule_symbols(r);
                for (i, &s) in syms.iter().enumerate() {
                    if let Sym::Nt(y) = s {
                        if syms
                            .iter()
                            .enumerate()
                            .all(|(j, &o)| j == i || self.sym_nullable(o))
                        {
                            edges.push(y);
                        }
                    }
                }
            }
        }
        self.cyclic = has_cycle(&edges);

        // Empty trees. Acyclic grammars: the first expansion that is all
        // nullable, recursively (this terminates: the nullable part of the
        // unit graph is acyclic). Cyclic ones: the first expansion whose
        // nonterminals all have a smaller minimal derivation height.
        let mut height = vec![u32::MAX; n];
        loop {
            let mut changed = false;
            for x in 0..n {
                for r in self.rules_of(x as u32) {
                    let h = self.rule_symbols(r).iter().try_fold(0u32, |h, &s| match s {
                        Sym::Nt(y) if height[y as usize] == u32::MAX => None,
                        Sym::Nt(y) => Some(h.max(height[y as usize])),
                        s if self.sym_nullable(s) => Some(h),
                        _ => None,
                    });
                    if let Some(h) = h {
                        if h + 1 < height[x] {
                            height[x] = h + 1;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let choice: Vec<Option<u32>> = (0..n)
            .map(|x| {
                if !self.nullable[x] {
                    return None;
                }
                self.rules_of(x as u32).find(|&r| {
                    self.rule_symbols(r).iter().all(|&s| match s {
                        Sym::Nt(y) if self.cyclic => height[y as usize] < height[x],
                        s => self.sym_nullable(s),
                    })
                })
            })
            .collect();
        for x in 0..n {
            if self.nullable[x] && self.empty_trees[x].is_none() {
                self.build_empty(x as u32, &choice);
            }
        }
    }

    /// Sets `empty_trees[x]`, and that of every nonterminal its empty tree
    /// needs first: post-order over the chosen expansions, with an explicit
    /// stack (the chosen expansions never lead back to a symbol on the
    /// stack, see above; a chain of nullable symbols is as long as the
    /// grammar is large).
    fn build_empty(&mut self, x: u32, choice: &[Option<u32>]) {
        let rule_of =
            |x: u32| choice[x as usize].expect("nullable nonterminals have an empty expansion");
        // (nonterminal, its children are built)
        let mut stack = vec![(x, false)];
        while let Some((x, ready)) = stack.pop() {
            if self.empty_trees[x as usize].is_some() {
                continue;
            }
            let rule = rule_of(x);
            if !ready {
                stack.push((x, true));
                for &s in self.rule_symbols(rule).iter().rev() {
                    if let Sym::Nt(y) = s {
                        if self.empty_trees[y as usize].is_none() {
                            stack.push((y, false));
                        }
                    }
                }
                continue;
            }
            let children = self
                .rule_symbols(rule)
                .iter()
                .map(|&s| match s {
                    Sym::Nt(y) => self.empty_trees[y as usize]
                        .clone()
                        .expect("built before its parent"),
                    _ => Tree::Leaf(Vec::new()),
                })
                .collect();
            self.empty_trees[x as usize] = Some(Tree::Node {
                symbol: self.names[x as usize].clone(),
                expansion: self.rules[rule as usize].alternative as usize,
                children,
            });
        }
    }

    /// Parses `input`, returning one derivation tree.
    pub fn parse(&self, input: &[u8]) -> Result<Tree, ParseError> {
        let chart = self.recognise(input)?;
        Ok(self.build_tree(&chart, input))
    }

    /// Does `input` parse? (Cheaper than [`Parser::parse`]: no tree.)
    pub fn accepts(&self, input: &[u8]) -> bool {
        self.recognise(input).is_ok()
    }

    fn recognise(&self, input: &[u8]) -> Result<Chart, ParseError> {
        let n = input.len();
        if n > u32::MAX as usize - 1 {
            return Err(ParseError::Grammar("input longer than 4 GiB".to_string()));
        }
        let ring_len = self.max_scan + 1;
        let mut ring: Vec<Vec<Item>> = vec![Vec::new(); ring_len];
        let mut chart = Chart {
            waiting: Vec::new(),
            waiting_start: Vec::with_capacity(n + 2),
            completed: Vec::new(),
            completed_start: Vec::with_capacity(n + 2),
            leo: Vec::new(),
        };
        let mut leo_memo = LeoMemo::default();
        // Items of the current set added by Leo's shortcut -> `Chart::leo`.
        let mut leo_added: HashMap<u64, u32, BuildHasherDefault<FastHasher>> = HashMap::default();
        let mut predicted = vec![u32::MAX; self.names.len()];
        let mut expected = vec![u32::MAX; self.terminals.len()];
        let mut seen = FastSet::default();
        let mut items: Vec<Item> = Vec::new();
        // Last set with items, and the last set where the start symbol
        // spanned everything so far.
        let mut furthest = 0usize;
        let mut accepted_at = usize::MAX;
        if self.nullable[self.start as usize] {
            accepted_at = 0;
        }

        for i in 0..=n {
            let i32_ = i as u32;
            chart.waiting_start.push(chart.waiting.len() as u32);
            chart.completed_start.push(chart.completed.len() as u32);
            items.clear();
            std::mem::swap(&mut items, &mut ring[i % ring_len]);
            seen.clear();
            leo_added.clear();
            if i == 0 {
                predicted[self.start as usize] = 0;
                for r in self.rules_of(self.start) {
                    items.push(Item {
                        slot: self.rules[r as usize].first,
                        origin: 0,
                    });
                }
            }
            if items.is_empty() {
                if ring.iter().all(Vec::is_empty) {
                    break;
                }
                continue;
            }
            furthest = i;
            let waiting_from = chart.waiting.len();
            let completed_from = chart.completed.len();
            let mut k = 0;
            while k < items.len() {
                let item = items[k];
                match self.slots[item.slot as usize] {
                    Sym::Term(t) => {
                        expected[t as usize] = i32_;
                        if let Some(len) = self.terminals[t as usize].matches(input, i) {
                            let next = Item {
                                slot: item.slot + 1,
                                origin: item.origin,
                            };
                            if len == 0 {
                                items.push(next);
                            } else {
                                ring[(i + len) % ring_len].push(next);
                            }
                        }
                    }
                    Sym::Nt(x) => {
                        chart.waiting.push(Waiting {
                            nt: x,
                            slot: item.slot,
                            origin: item.origin,
                            rank: k as u32,
                        });
                        if predicted[x as usize] != i32_ {
                            predicted[x as usize] = i32_;
                            for r in self.rules_of(x) {
                                items.push(Item {
                                    slot: self.rules[r as usize].first,
                                    origin: i32_,
                                });
                            }
                        }
                        if self.nullable[x as usize] {
                            let next = Item {
                                slot: item.slot + 1,
                                origin: item.origin,
                            };
                            if seen.insert(key(next)) {
                                items.push(next);
                            }
                        }
                    }
                    Sym::End(r) => {
                        let lhs = self.rules[r as usize].lhs;
                        if lhs == self.start && item.origin == 0 {
                            accepted_at = i;
                        }
                        // Empty spans (origin == i) were handled when
                        // predicted (Aycock–Horspool).
                        if item.origin < i32_ {
                            let leo = match leo_added.is_empty() {
                                true => NO_LEO,
                                false => leo_added.get(&key(item)).copied().unwrap_or(NO_LEO),
                            };
                            chart.completed.push(Completed {
                                lhs,
                                origin: item.origin,
                                rule: r,
                                rank: k as u32,
                                leo,
                            });
                            // Leo: a right-recursive chain completes in one
                            // step, straight to its top item.
                            let top = match self.leo {
                                true => self.leo_top(&chart, &mut leo_memo, item.origin, lhs),
                                false => None,
                            };
                            if let Some((top_rule, top_origin)) = top {
                                let rule = &self.rules[top_rule as usize];
                                let next = Item {
                                    slot: rule.first + rule.len,
                                    origin: top_origin,
                                };
                                if seen.insert(key(next)) {
                                    items.push(next);
                                    leo_added.insert(key(next), chart.leo.len() as u32);
                                    chart.leo.push((lhs, item.origin));
                                }
                                k += 1;
                                continue;
                            }
                            for w in chart.waiting_for(item.origin as usize, lhs) {
                                let next = Item {
                                    slot: w.slot + 1,
                                    origin: w.origin,
                                };
                                if seen.insert(key(next)) {
                                    items.push(next);
                                }
                            }
                        }
                    }
                }
                k += 1;
            }
            chart.waiting[waiting_from..].sort_unstable_by_key(|w| (w.nt, w.slot, w.origin));
            chart.completed[completed_from..]
                .sort_unstable_by_key(|c| (c.lhs, std::cmp::Reverse(c.origin), c.rule));
        }
        // Close the indexes (sets past a dead end stay empty).
        while chart.waiting_start.len() < n + 2 {
            chart.waiting_start.push(chart.waiting.len() as u32);
            chart.completed_start.push(chart.completed.len() as u32);
        }
        if accepted_at == n {
            return Ok(chart);
        }
        let mut names: Vec<String> = (0..self.terminals.len())
            .filter(|&t| expected[t] == furthest as u32)
            .filter(|&t| !matches!(&self.terminals[t], Terminal::Literal(l) if l.is_empty()))
            .map(|t| self.terminal_names[t].clone())
            .collect();
        names.sort();
        names.dedup();
        if accepted_at == furthest {
            names.push("end of input".to_string());
        }
        let partial = (0..self.terminals.len())
            .filter(|&t| expected[t] == furthest as u32)
            .filter_map(|t| match &self.terminals[t] {
                Terminal::Literal(l) => Some(
                    l.iter()
                        .zip(&input[furthest..])
                        .take_while(|(a, b)| a == b)
                        .count(),
                ),
                Terminal::Class(_) => None,
            })
            .max()
            .unwrap_or(0);
        let (line, col) = line_col(input, furthest);
        Err(ParseError::Syntax {
            offset: furthest,
            line,
            col,
            expected: names,
            found: found_at(input, furthest, partial),
        })
    }

    /// The one item of finished set `set` waiting for `nt`, if there is
    /// exactly one and `nt` is its last symbol: (rule, origin).
    fn penultimate(&self, chart: &Chart, set: u32, nt: u32) -> Option<(u32, u32)> {
        match chart.waiting_for(set as usize, nt) {
            [w] => match self.slots[w.slot as usize + 1] {
                Sym::End(r) => Some((r, w.origin)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Leo's transitive item for `nt` completing from `set`: the top of the
    /// chain of items that would complete one after the other, each the
    /// only item waiting for the previous one's left side. `None` unless
    /// the chain has at least two links (one link is a plain completion).
    fn leo_top(&self, chart: &Chart, memo: &mut LeoMemo, set: u32, nt: u32) -> Option<(u32, u32)> {
        if !self.last_somewhere[nt as usize] {
            return None;
        }
        let (rule, origin) = self.penultimate(chart, set, nt)?;
        let lhs = self.rules[rule as usize].lhs;
        if (lhs == self.start && origin == 0) || !self.last_somewhere[lhs as usize] {
            return None;
        }
        self.penultimate(chart, origin, lhs)?;
        self.leo_top_memo(chart, memo, origin, lhs)
    }

    /// [`Parser::leo_top`] with every chain link allowed (memoised). The
    /// chain never goes through the start symbol from set 0, so that
    /// acceptance stays visible.
    fn leo_top_memo(
        &self,
        chart: &Chart,
        memo: &mut LeoMemo,
        set: u32,
        nt: u32,
    ) -> Option<(u32, u32)> {
        if let Some(&top) = memo.get(&(set, nt)) {
            return top;
        }
        let mut path = Vec::new();
        let (mut at, mut x) = (set, nt);
        let mut above = loop {
            if let Some(&top) = memo.get(&(at, x)) {
                break top;
            }
            let Some(link) = self.penultimate(chart, at, x) else {
                memo.insert((at, x), None);
                break None;
            };
            path.push((at, x, link));
            let lhs = self.rules[link.0 as usize].lhs;
            if lhs == self.start && link.1 == 0 {
                break None;
            }
            (at, x) = (link.1, lhs);
        };
        for &(at, x, link) in path.iter().rev() {
            above = above.or(Some(link));
            memo.insert((at, x), above);
        }
        memo[&(set, nt)]
    }

    /// The links of a Leo chain from its bottom completion `(nt, set)` up to
    /// (excluding) its top `top`, top-down: each is the (rule, origin) of a
    /// skipped completed item, the last child of the one before.
    fn leo_chain(
        &self,
        chart: &Chart,
        (nt, set): (u32, u32),
        top: (u32, u32),
        out: &mut Vec<(u32, u32)>,
    ) {
        let from = out.len();
        let (mut at, mut x) = (set, nt);
        loop {
            let link = self
                .penultimate(chart, at, x)
                .expect("Leo chains are recorded");
            if link == top {
                break;
            }
            out.push(link);
            (at, x) = (link.1, self.rules[link.0 as usize].lhs);
        }
        out[from..].reverse();
    }

    /// Builds the tree top-down from the chart (see the module docs).
    fn build_tree(&self, chart: &Chart, input: &[u8]) -> Tree {
        let n = input.len();
        if n == 0 {
            return self.empty_trees[self.start as usize]
                .clone()
                .expect("accepted empty input: start is nullable");
        }
        let root = *chart
            .completed_for(n, self.start)
            .iter()
            .filter(|c| c.origin == 0)
            .min_by_key(|c| c.rule)
            .expect("accepted: a completed start item spans the input");
        struct Frame {
            rule: u32,
            /// Symbols still to walk (right to left).
            dot: u32,
            origin: u32,
            /// Where the symbols before the dot end.
            end: u32,
            /// Only items ranked below this may be used (cyclic grammars).
            bound: u32,
            /// Leo: the last child is `links[from]`, whose own last child
            /// is `links[from + 1]`, ... up to `links[to - 1]`.
            forced: Option<(u32, u32)>,
            children: Vec<Tree>,
        }
        let mut links: Vec<(u32, u32)> = Vec::new();
        let unbounded = u32::MAX;
        let bound_of = |rank: u32| if self.cyclic { rank } else { unbounded };
        let frame = |c: &Completed, end: u32, links: &mut Vec<(u32, u32)>| {
            let forced = (c.leo != NO_LEO).then(|| {
                let from = links.len() as u32;
                self.leo_chain(chart, chart.leo[c.leo as usize], (c.rule, c.origin), links);
                (from, links.len() as u32)
            });
            Frame {
                rule: c.rule,
                dot: self.rules[c.rule as usize].len,
                origin: c.origin,
                end,
                bound: bound_of(c.rank),
                forced: forced.filter(|(from, to)| from < to),
                children: Vec::with_capacity(self.rules[c.rule as usize].len as usize),
            }
        };
        let mut stack = vec![frame(&root, n as u32, &mut links)];
        loop {
            let f = stack.last_mut().expect("non-empty until the root is done");
            if f.dot == 0 {
                debug_assert_eq!(f.end, f.origin);
                let f = stack.pop().expect("just seen");
                let rule = &self.rules[f.rule as usize];
                let mut children = f.children;
                children.reverse();
                let node = Tree::Node {
                    symbol: self.names[rule.lhs as usize].clone(),
                    expansion: rule.alternative as usize,
                    children,
                };
                match stack.last_mut() {
                    Some(parent) => parent.children.push(node),
                    None => return node,
                }
                continue;
            }
            let slot = self.rules[f.rule as usize].first + f.dot - 1;
            match self.slots[slot as usize] {
                Sym::Term(t) => {
                    let len = match &self.terminals[t as usize] {
                        Terminal::Literal(l) => l.len() as u32,
                        Terminal::Class(_) => 1,
                    };
                    let end = f.end as usize;
                    f.children
                        .push(Tree::Leaf(input[end - len as usize..end].to_vec()));
                    f.dot -= 1;
                    if len > 0 {
                        f.end -= len;
                        f.bound = unbounded;
                    }
                }
                Sym::Nt(_) if f.forced.is_some() => {
                    // A completed item Leo skipped: rebuild it from the chain.
                    let (from, to) = f.forced.take().expect("just checked");
                    let (rule, origin) = links[from as usize];
                    let end = f.end;
                    f.dot -= 1;
                    f.end = origin;
                    let r = &self.rules[rule as usize];
                    stack.push(Frame {
                        rule,
                        dot: r.len,
                        origin,
                        end,
                        bound: unbounded,
                        forced: (from + 1 < to).then_some((from + 1, to)),
                        children: Vec::with_capacity(r.len as usize),
                    });
                }
                Sym::Nt(x) => {
                    let (end, origin, bound) = (f.end, f.origin, f.bound);
                    // The shortest last child first: an empty one...
                    if self.nullable[x as usize] {
                        if let Some(w) = chart.find_waiting(end as usize, x, slot, origin) {
                            if w.rank < bound {
                                f.children
                                    .push(self.empty_trees[x as usize].clone().expect("nullable"));
                                f.dot -= 1;
                                f.bound = bound_of(w.rank);
                                continue;
                            }
                        }
                    }
                    // ... then completed ones, the latest start first.
                    let mut chosen = None;
                    for c in chart.completed_for(end as usize, x) {
                        if c.origin < origin {
                            break;
                        }
                        if c.rank >= bound {
                            continue;
                        }
                        if let Some(w) = chart.find_waiting(c.origin as usize, x, slot, origin) {
                            chosen = Some((*c, w.rank));
                            break;
                        }
                    }
                    let (c, pred_rank) =
                        chosen.expect("a recognised item has a derivation in the chart");
                    f.dot -= 1;
                    f.end = c.origin;
                    f.bound = bound_of(pred_rank);
                    stack.push(frame(&c, end, &mut links));
                }
                Sym::End(_) => unreachable!("slots before the end of a rule are symbols"),
            }
        }
    }
}

#[inline]
fn key(item: Item) -> u64 {
    (u64::from(item.slot) << 32) | u64::from(item.origin)
}

fn compile_terminal(term: &Term) -> Terminal {
    match term {
        Term::Literal(l) => Terminal::Literal(l.clone()),
        Term::Class { .. } => {
            let mut bits = [0u64; 4];
            for b in 0..=255u8 {
                if term.class_matches(b) {
                    bits[usize::from(b >> 6)] |= 1 << (b & 63);
                }
            }
            Terminal::Class(bits)
        }
        Term::Nonterminal(_) => unreachable!("only terminals are compiled here"),
    }
}

/// A terminal as the BNF form would write it: `"abc"`, `[a-z]`, `[^"\\]`.
fn terminal_name(term: &Term) -> String {
    let byte = |s: &mut String, b: u8, special: &[u8]| match b {
        b'\n' => s.push_str("\\n"),
        b'\t' => s.push_str("\\t"),
        b'\r' => s.push_str("\\r"),
        b'\\' => s.push_str("\\\\"),
        _ if special.contains(&b) => {
            s.push('\\');
            s.push(b as char);
        }
        0x20..=0x7e => s.push(b as char),
        _ => {
            let _ = write!(s, "\\x{b:02x}");
        }
    };
    let mut s = String::new();
    match term {
        Term::Literal(l) => {
            s.push('"');
            l.iter().for_each(|&b| byte(&mut s, b, b"\""));
            s.push('"');
        }
        Term::Class { ranges, negated } => {
            s.push('[');
            if *negated {
                s.push('^');
            }
            for &(lo, hi) in ranges {
                byte(&mut s, lo, b"]^-[");
                if hi != lo {
                    s.push('-');
                    byte(&mut s, hi, b"]^-[");
                }
            }
            s.push(']');
        }
        Term::Nonterminal(n) => s.push_str(n),
    }
    s
}

/// 1-based line and column (in UTF-8 characters) of byte `offset`.
pub fn line_col(input: &[u8], offset: usize) -> (usize, usize) {
    let before = &input[..offset.min(input.len())];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let col = 1 + before[start..]
        .iter()
        .filter(|&&b| b & 0xC0 != 0x80)
        .count();
    (line, col)
}

fn has_cycle(edges: &[Vec<u32>]) -> bool {
    // Iterative DFS with colours: 0 new, 1 on the stack, 2 done.
    let mut colour = vec![0u8; edges.len()];
    for root in 0..edges.len() {
        if colour[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        colour[root] = 1;
        while let Some(&mut (x, ref mut next)) = stack.last_mut() {
            if let Some(&y) = edges[x].get(*next) {
                *next += 1;
                match colour[y as usize] {
                    0 => {
                        colour[y as usize] = 1;
                        stack.push((y as usize, 0));
                    }
                    1 => return true,
                    _ => {}
                }
            } else {
                colour[x] = 2;
                stack.pop();
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::generate::json_document;
    use crate::grammar::load::{builtin_grammar, parse_grammar};

    fn g(text: &str) -> Grammar {
        parse_grammar(text, "test").unwrap_or_else(|e| panic!("{e}"))
    }

    /// Checks that every node matches its expansion and returns the tree.
    fn check_tree(grammar: &Grammar, tree: &Tree) {
        let mut todo = vec![tree];
        while let Some(t) = todo.pop() {
            let Tree::Node {
                symbol,
                expansion,
                children,
            } = t
            else {
                panic!("a leaf where a node belongs")
            };
            let terms = &grammar.rules[symbol][*expansion];
            assert_eq!(
                terms.len(),
                children.len(),
                "{symbol} expansion {expansion}"
            );
            for (term, child) in terms.iter().zip(children) {
                match (term, child) {
                    (Term::Nonterminal(n), Tree::Node { symbol, .. }) => {
                        assert_eq!(n, symbol);
                        todo.push(child);
                    }
                    (Term::Literal(l), Tree::Leaf(b)) => assert_eq!(l, b),
                    (Term::Class { .. }, Tree::Leaf(b)) => {
                        assert_eq!(b.len(), 1);
                        assert!(term.class_matches(b[0]));
                    }
                    _ => panic!("{term:?} derived as {child:?}"),
                }
            }
        }
    }

    fn round_trip(grammar: &Grammar, input: &[u8]) -> Tree {
        let tree = parse(grammar, input)
            .unwrap_or_else(|e| panic!("{:?} does not parse: {e}", String::from_utf8_lossy(input)));
        check_tree(grammar, &tree);
        assert_eq!(tree.to_bytes(), input);
        assert_eq!(tree.symbol(), Some(grammar.start.as_str()));
        tree
    }

    /// `symbol(children...)` with leaves as strings, for comparing shapes.
    fn shape(tree: &Tree) -> String {
        match tree {
            Tree::Leaf(b) => format!("{:?}", String::from_utf8_lossy(b)),
            Tree::Node {
                symbol,
                expansion,
                children,
            } => {
                let inner: Vec<String> = children.iter().map(shape).collect();
                format!("{symbol}#{expansion}({})", inner.join(" "))
            }
        }
    }

    fn syntax_error(grammar: &Grammar, input: &[u8]) -> (usize, usize, usize, Vec<String>, String) {
        match parse(grammar, input) {
            Err(e @ ParseError::Syntax { .. }) => {
                let text = e.to_string();
                let ParseError::Syntax {
                    offset,
                    line,
                    col,
                    expected,
                    ..
                } = e
                else {
                    unreachable!()
                };
                assert!(!text.contains('\n'));
                (offset, line, col, expected, text)
            }
            other => panic!("expected a syntax error, got {other:?}"),
        }
    }

    #[test]
    fn json_round_trips() {
        let json = builtin_grammar("json").unwrap();
        let inputs = [
            "0",
            "-0",
            "-12.5e+10",
            "1E-7",
            "120",
            "true",
            " \t\r\n null \n",
            "\"\"",
            "\"a\\\"b\\\\c\\/\\b\\f\\n\\r\\t\\u00E9\\uD83D\\uDE00\"",
            "\"é ✓ \u{1F600}\"",
            "[]",
            "[ ]",
            "{}",
            "{ }",
            "[1,2 , 3 ,4]",
            "{\"a\":{\"b\":[1,2,{\"c\":null}]},\"d\" : \"e\" }",
            "[[[[[[[[[[[]]]]]]]]]]]",
            "{\"\": {\"\": {\"\": []}}}",
        ];
        for input in inputs {
            round_trip(&json, input.as_bytes());
        }
        for seed in 0..20 {
            round_trip(&json, &json_document(2000, seed));
        }
        let tree = round_trip(&json, b"[1]");
        assert_eq!(
            shape(&tree),
            "<start>#0(<element>#0(<ws>#0() <value>#1(<array>#1(\"[\" <elements>#0(<element>#0(<ws>#0() \
             <value>#3(<number>#0(<int>#0(<int-opt-1>#0() <natural>#1(\"1\" <natural-opt-1>#0())) <number-opt-1>#0() \
             <number-opt-2>#0())) <ws>#0()) <elements-star-1>#0()) \"]\")) <ws>#0()))"
        );
    }

    #[test]
    fn json_agrees_with_serde_json_on_mutants() {
        let json = Parser::new(&builtin_grammar("json").unwrap()).unwrap();
        let alphabet = b"{}[],:\"\\ 0123456789-+.eEtrufalsn\n";
        let mut state = 7u64;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % n
        };
        let (mut accepted, mut rejected) = (0, 0);
        for seed in 0..300 {
            let mut doc = json_document(40 + seed as usize % 80, seed);
            for _ in 0..1 + next(3) {
                let at = next(doc.len() + 1);
                match next(3) {
                    0 if at < doc.len() => {
                        doc.remove(at);
                    }
                    1 if at < doc.len() => doc[at] = alphabet[next(alphabet.len())],
                    _ => doc.insert(at, alphabet[next(alphabet.len())]),
                }
            }
            if std::str::from_utf8(&doc).is_err() {
                continue; // serde_json checks UTF-8, the grammar does not
            }
            let ours = json.accepts(&doc);
            let theirs = serde_json::from_slice::<serde_json::Value>(&doc).is_ok();
            assert_eq!(ours, theirs, "{:?}", String::from_utf8_lossy(&doc));
            if ours {
                accepted += 1;
                let tree = json.parse(&doc).unwrap();
                assert_eq!(tree.to_bytes(), doc);
            } else {
                rejected += 1;
            }
        }
        assert!(
            accepted > 30 && rejected > 30,
            "{accepted} accepted, {rejected} rejected"
        );
    }

    #[test]
    fn json_rejects_what_rfc_8259_rejects() {
        let json = Parser::new(&builtin_grammar("json").unwrap()).unwrap();
        for input in [
            "",
            "01",
            "1.",
            ".5",
            "+1",
            "-",
            "1e",
            "[1,]",
            "[,1]",
            "{\"a\"}",
            "{\"a\":}",
            "{a:1}",
            "\"\\x\"",
            "\"\\u12\"",
            "\"abc",
            "\"a\nb\"",
            "[1 2]",
            "tru",
            "nul",
            "[1]]",
            "{}{}",
        ] {
            assert!(!json.accepts(input.as_bytes()), "{input:?} accepted");
        }
    }

    #[test]
    fn syntax_errors_say_where_and_what() {
        let json = builtin_grammar("json").unwrap();
        let (offset, line, col, expected, text) = syntax_error(&json, b"{\"a\": [1, 2,]}");
        assert_eq!((offset, line, col), (12, 1, 13));
        assert_eq!(
            expected,
            [
                "\"-\"",
                "\"0\"",
                "\"[\"",
                "\"\\\"\"",
                "\"false\"",
                "\"null\"",
                "\"true\"",
                "\"{\"",
                "[ \\t\\n\\r]",
                "[1-9]"
            ]
        );
        assert_eq!(
            text,
            "1:13 (byte 12): expected one of \"-\", \"0\", \"[\", \"\\\"\", \"false\", \"null\", \"true\", \"{\", \
             [ \\t\\n\\r], [1-9], found ']'"
        );
        // Lines and columns (in characters) of a multi-line input.
        let (offset, line, col, _, text) = syntax_error(&json, "{\n  \"é\": tru\n}".as_bytes());
        assert_eq!((offset, line, col), (10, 2, 8));
        assert!(text.ends_with("[1-9], found \"tru\\n\""), "{text}");
        let (offset, _, _, _, text) = syntax_error(&json, "[é]".as_bytes());
        assert_eq!(offset, 1);
        assert!(text.ends_with("found 'é'"), "{text}");
        let (_, _, _, _, text) = syntax_error(&json, b"[\xff]");
        assert!(text.ends_with("found byte 0xff"), "{text}");
        let (_, _, _, _, text) = syntax_error(&json, b"[nul");
        assert!(text.ends_with("[1-9], found \"nul\""), "{text}");
        // At the end of the input.
        let (offset, _, _, expected, text) = syntax_error(&json, b"[1, \"ab");
        assert_eq!(offset, 7);
        assert!(
            expected.contains(&"\"\\\"\"".to_string())
                && expected.contains(&"\"\\\\\"".to_string())
        );
        assert!(expected.iter().any(|e| e.starts_with("[^")));
        assert!(text.ends_with("found end of input"), "{text}");
        let (offset, _, _, _, text) = syntax_error(&json, b"");
        assert_eq!(offset, 0);
        assert!(text.starts_with("1:1 (byte 0): expected one of"), "{text}");
        // Where the input could have ended, "end of input" is expected too.
        let expr = builtin_grammar("expr").unwrap();
        let (offset, _, _, expected, text) = syntax_error(&expr, b"12 3");
        assert_eq!(offset, 2);
        assert!(expected.contains(&"\" + \"".to_string()));
        assert_eq!(expected.last().map(String::as_str), Some("end of input"));
        assert!(text.ends_with("(and 4 more), found \" 3\""), "{text}");
        // A byte that is not printable.
        let (_, _, _, _, text) = syntax_error(&expr, b"1\x01");
        assert!(text.ends_with("found byte 0x01"), "{text}");
        let (_, _, _, _, text) = syntax_error(&expr, b"1\n");
        assert!(text.ends_with("found '\\n'"), "{text}");
    }

    #[test]
    fn expr_round_trips_the_books_inputs() {
        let expr = builtin_grammar("expr").unwrap();
        let long = "++---((-2 / 3 / 3 - -+1 / 5 - 2) * ++6 / +8 * 4 / 9 / 2 * 8 + ++(5) * 3 / 8 * 0 + 3 * 3 + 4 / 0 / 6 + 9) * ++++(+--9 * -3 * 7 / 4 + --(4) / 3 - 0 / 3 + 5 + 0) * (1 * 6 - 1 / 9 * 5 - 9 / 0 + 7) * ++(8 - 1) * +1 * 7 * 0 + ((1 + 4) / 4 * 8 * 9 * 4 + 4 / (4) * 1 - (4) * 8 * 5 + 1 + 4) / (+(2 - 1 - 9) * 5 + 3 + 6 - 2) * +3 * (3 - 7 + 8) / 4 - -(9 * 4 - 1 * 0 + 5) / (5 / 9 * 5 + 2) * 7 + ((7 - 5 + 3) / 1 * 8 - 8 - 9) * --+1 * 4 / 4 - 4 / 7 * 4 - 3 / 6 * 1 - 2 - 7 - 8";
        for input in ["1", "2 + 3", "-(2.50 * +4) / 8", "((1))", long] {
            round_trip(&expr, input.as_bytes());
        }
        let tree = round_trip(&expr, b"1 + 2");
        assert_eq!(
            shape(&tree),
            "<start>#0(<expr>#0(<term>#2(<factor>#4(<integer>#1(<digit>#1(\"1\")))) \" + \" \
             <expr>#2(<term>#2(<factor>#4(<integer>#1(<digit>#2(\"2\")))))))"
        );
        assert!(!Parser::new(&expr).unwrap().accepts(b"1+2"));
    }

    #[test]
    fn csv_and_ini_round_trip() {
        let csv = builtin_grammar("csv").unwrap();
        for input in [
            "",
            "a",
            "a,b\n1,2\n",
            "\"x, \"\"y\"\"\"\r\nz,,\n",
            "\"multi\nline\",ok",
            ",,",
        ] {
            round_trip(&csv, input.as_bytes());
        }
        let csv = Parser::new(&csv).unwrap();
        for input in ["a\"b", "\"open", "\"a\"b", "a\rb"] {
            assert!(!csv.accepts(input.as_bytes()), "{input:?}");
        }
        let ini = builtin_grammar("ini").unwrap();
        let file = "; comment\n[server]  # trailing\nhost = example.org\nport=8080\r\n\n  [ empty name ]\n\tkey with spaces = a=b ; not a comment\n#last";
        round_trip(&ini, file.as_bytes());
        for input in ["", "\n\n", "[]", "k="] {
            round_trip(&ini, input.as_bytes());
        }
        let ini = Parser::new(&ini).unwrap();
        for input in ["[open", "=value", "[a] b", "key"] {
            assert!(!ini.accepts(input.as_bytes()), "{input:?}");
        }
    }

    #[test]
    fn left_and_right_recursion() {
        let left = g("<e> ::= <e> \"+\" <n> | <n>\n<n> ::= [0-9]");
        let tree = round_trip(&left, b"1+2+3");
        assert_eq!(
            shape(&tree),
            "<e>#0(<e>#0(<e>#1(<n>#0(\"1\")) \"+\" <n>#0(\"2\")) \"+\" <n>#0(\"3\"))"
        );
        // Deep trees: building them, their methods, clone, comparison and
        // drop are all iterative, so the test thread's stack is enough.
        let long: Vec<u8> = (0..20_000)
            .map(|i| if i % 2 == 0 { b'7' } else { b'+' })
            .take(19_999)
            .collect();
        let tree = round_trip(&left, &long);
        assert_eq!(tree.size(), 4 * 10_000 - 1);
        assert_eq!(tree.depth(), 10_000 + 2);
        assert_eq!(tree.clone(), tree);
        let right = g("<e> ::= <n> \"+\" <e> | <n>\n<n> ::= [0-9]");
        let tree = round_trip(&right, b"1+2+3");
        assert_eq!(
            shape(&tree),
            "<e>#0(<n>#0(\"1\") \"+\" <e>#0(<n>#0(\"2\") \"+\" <e>#1(<n>#0(\"3\"))))"
        );
        round_trip(&right, &long[..999]);
    }

    #[test]
    fn leo_keeps_right_recursion_linear() {
        let right = Parser::new(&g("<e> ::= <n> \"+\" <e> | <n>\n<n> ::= [0-9]")).unwrap();
        assert!(right.leo);
        let mut no_leo = right.clone();
        no_leo.leo = false;
        for len in [1, 3, 5, 11, 401] {
            let input: Vec<u8> = (0..len)
                .map(|i| if i % 2 == 0 { b'5' } else { b'+' })
                .collect();
            let chart = right.recognise(&input).unwrap();
            assert!(
                chart.completed.len() <= 3 * len,
                "{} completed items for {len} bytes",
                chart.completed.len()
            );
            assert_eq!(right.parse(&input).unwrap(), no_leo.parse(&input).unwrap());
        }
        // Same trees as without Leo on the (unambiguous) shipped grammars.
        let long_sum: String =
            (0..300).map(|i| format!("{i} + ")).collect::<String>() + "12345678901234567890";
        let cases = [
            ("expr", long_sum.into_bytes()),
            ("expr", b"-(2.50 * +4) / 8 - 1 - 1".to_vec()),
            ("json", json_document(3000, 5)),
            ("csv", b"a,b\n\"x\"\"y\",z\r\n".to_vec()),
        ];
        for (name, input) in cases {
            let grammar = builtin_grammar(name).unwrap();
            let with = Parser::new(&grammar).unwrap();
            let mut without = with.clone();
            without.leo = false;
            let tree = with.parse(&input).unwrap();
            check_tree(&grammar, &tree);
            assert_eq!(tree, without.parse(&input).unwrap(), "{name}");
            assert!(
                with.recognise(&input).unwrap().completed.len()
                    <= without.recognise(&input).unwrap().completed.len()
            );
        }
        // A chain through the start symbol still accepts.
        let grammar = g("<s> ::= \"a\" <s> | \"a\" | <t>\n<t> ::= \"b\" <s>");
        for input in ["a", "aaaa", "baba", "bbbba"] {
            round_trip(&grammar, input.as_bytes());
        }
    }

    #[test]
    fn nullable_rules() {
        // Aycock and Horspool's example: naive Earley misses these.
        let grammar = g("<s> ::= <a> <a> <a> <a>\n<a> ::= \"a\" | <e>\n<e> ::= ε");
        for input in ["", "a", "aa", "aaa", "aaaa"] {
            round_trip(&grammar, input.as_bytes());
        }
        assert!(parse(&grammar, b"aaaaa").is_err());
        let tree = round_trip(&grammar, b"a");
        // The last children are the shortest: the `a` goes first.
        assert_eq!(
            shape(&tree),
            "<s>#0(<a>#0(\"a\") <a>#1(<e>#0()) <a>#1(<e>#0()) <a>#1(<e>#0()))"
        );
        // Nullable nonterminals in the middle, completed later.
        let grammar = g("<s> ::= \"x\" <o> <o> \"y\" <o>\n<o> ::= <p>?\n<p> ::= \"p\" | ε");
        for input in ["xy", "xpy", "xppy", "xppyp", "xyp"] {
            round_trip(&grammar, input.as_bytes());
        }
        // Empty literals from a hand-built grammar.
        let mut grammar = g("<s> ::= \"a\" <t>\n<t> ::= \"b\"");
        grammar
            .rules
            .get_mut("<t>")
            .unwrap()
            .push(vec![Term::Literal(Vec::new())]);
        grammar.rules.get_mut("<s>").unwrap()[0].insert(0, Term::Literal(Vec::new()));
        let tree = round_trip(&grammar, b"a");
        assert_eq!(shape(&tree), "<s>#0(\"\" \"a\" <t>#1(\"\"))");
        round_trip(&grammar, b"ab");
        // The empty input.
        let csv = builtin_grammar("csv").unwrap();
        assert_eq!(
            shape(&parse(&csv, b"").unwrap()),
            "<start>#0(<record>#0(<field>#1(<plain>#0()) <record-star-1>#0()) <start-star-1>#0())"
        );
    }

    #[test]
    fn ambiguity_prefers_the_first_expansion() {
        let tree = round_trip(&g("<s> ::= <a> | <b>\n<a> ::= \"x\"\n<b> ::= \"x\""), b"x");
        assert_eq!(shape(&tree), "<s>#0(<a>#0(\"x\"))");
        let tree = round_trip(&g("<s> ::= <b> | <a>\n<a> ::= \"x\"\n<b> ::= \"x\""), b"x");
        assert_eq!(shape(&tree), "<s>#0(<b>#0(\"x\"))");
        let tree = round_trip(&g("<s> ::= <x> | \"x\"\n<x> ::= [x] | \"x\""), b"x");
        assert_eq!(shape(&tree), "<s>#0(<x>#0(\"x\"))");
        let tree = round_trip(&g("<s> ::= \"x\" | <x>\n<x> ::= \"x\""), b"x");
        assert_eq!(shape(&tree), "<s>#0(\"x\")");
        // Deterministic; the last child as short as possible.
        let grammar = g("<e> ::= <e> \"+\" <e> | \"1\"");
        let tree = round_trip(&grammar, b"1+1+1");
        assert_eq!(
            shape(&tree),
            "<e>#0(<e>#0(<e>#1(\"1\") \"+\" <e>#1(\"1\")) \"+\" <e>#1(\"1\"))"
        );
        assert_eq!(parse(&grammar, b"1+1+1").unwrap(), tree);
        // Exponentially many trees, still one quickly.
        let input: Vec<u8> = std::iter::repeat_n(&b"1+"[..], 200)
            .flatten()
            .copied()
            .chain([b'1'])
            .collect();
        round_trip(&grammar, &input);
    }

    #[test]
    fn cyclic_grammars_terminate() {
        for (text, inputs) in [
            ("<a> ::= <a> | \"x\"", &["x"][..]),
            ("<a> ::= <b> | \"x\"\n<b> ::= <a> | \"y\"", &["x", "y"]),
            ("<s> ::= <s> <s> | ε | \"x\"", &["", "x", "xx", "xxxxx"]),
            (
                "<s> ::= (<w>)* \"x\" <w>*\n<w> ::= \" \"*",
                &["x", "  x ", " x  "],
            ),
            (
                "<s> ::= <t> <s> <t> | \"x\"\n<t> ::= ε | <s>",
                &["x", "xx", "xxx"],
            ),
        ] {
            let grammar = g(text);
            assert!(Parser::new(&grammar).unwrap().cyclic, "{text}");
            for input in inputs {
                round_trip(&grammar, input.as_bytes());
            }
        }
        assert!(
            !Parser::new(&builtin_grammar("json").unwrap())
                .unwrap()
                .cyclic
        );
    }

    #[test]
    fn unusable_grammars() {
        let mut grammar = g("<s> ::= \"x\"");
        grammar
            .rules
            .get_mut("<s>")
            .unwrap()
            .push(vec![Term::Nonterminal("<nope>".into())]);
        assert_eq!(
            parse(&grammar, b"x").unwrap_err().to_string(),
            "unusable grammar: undefined nonterminal <nope> in an expansion of <s>"
        );
        grammar.start = "<t>".into();
        assert_eq!(
            Parser::new(&grammar).unwrap_err().to_string(),
            "unusable grammar: no rules for the start symbol <t>"
        );
        // A grammar deriving nothing rejects everything.
        let nothing = Grammar {
            start: "<s>".into(),
            rules: [(
                "<s>".to_string(),
                vec![vec![Term::Nonterminal("<s>".into())]],
            )]
            .into(),
        };
        let (offset, _, _, expected, _) = syntax_error(&nothing, b"");
        assert_eq!((offset, expected.len()), (0, 0));
    }

    /// Does `grammar` derive `input`? By fixpoint over all spans.
    fn brute_force(grammar: &Grammar, input: &[u8]) -> bool {
        let n = input.len();
        let names: Vec<&String> = grammar.rules.keys().collect();
        let index = |s: &str| names.iter().position(|n| *n == s).unwrap();
        let mut derives = vec![vec![vec![false; n + 1]; n + 1]; names.len()];
        loop {
            let mut changed = false;
            for (a, name) in names.iter().enumerate() {
                for i in 0..=n {
                    for j in i..=n {
                        if derives[a][i][j] {
                            continue;
                        }
                        let ok = grammar.rules[*name].iter().any(|terms| {
                            let mut reach = vec![i];
                            for term in terms {
                                let mut next = Vec::new();
                                for &p in &reach {
                                    match term {
                                        Term::Nonterminal(b) => {
                                            let b = index(b);
                                            next.extend((p..=j).filter(|&q| derives[b][p][q]));
                                        }
                                        Term::Literal(l) => {
                                            if input[p..j].starts_with(l) {
                                                next.push(p + l.len());
                                            }
                                        }
                                        Term::Class { .. } => {
                                            if p < j && term.class_matches(input[p]) {
                                                next.push(p + 1);
                                            }
                                        }
                                    }
                                }
                                next.sort_unstable();
                                next.dedup();
                                reach = next;
                            }
                            reach.contains(&j)
                        });
                        if ok {
                            derives[a][i][j] = true;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                return derives[index(&grammar.start)][0][n];
            }
        }
    }

    #[test]
    fn agrees_with_brute_force_on_random_grammars() {
        let mut state = 1u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let mut inputs: Vec<Vec<u8>> = vec![Vec::new()];
        for len in 1..=5 {
            for bits in 0..1u32 << len {
                inputs.push(
                    (0..len)
                        .map(|i| if bits >> i & 1 == 1 { b'b' } else { b'a' })
                        .collect(),
                );
            }
        }
        let (mut accepted, mut with_leo, mut leo_fired) = (0, 0, 0);
        for _ in 0..600 {
            let nts = 1 + next(4);
            let mut rules = std::collections::BTreeMap::new();
            for x in 0..nts {
                let expansions = (0..1 + next(3))
                    .map(|_| {
                        (0..next(4))
                            .map(|_| match next(7) {
                                0..=2 => Term::Nonterminal(format!("<n{}>", next(nts))),
                                3 => Term::Literal(b"a".to_vec()),
                                4 => Term::Literal(
                                    [&b"ab"[..], b"", b"b"][next(3) as usize].to_vec(),
                                ),
                                5 => Term::Class {
                                    ranges: vec![(b'b', b'b')],
                                    negated: false,
                                },
                                _ => Term::Class {
                                    ranges: vec![(b'b', b'b')],
                                    negated: true,
                                },
                            })
                            .collect()
                    })
                    .collect();
                rules.insert(format!("<n{x}>"), expansions);
            }
            let grammar = Grammar {
                start: "<n0>".into(),
                rules,
            };
            let mut parser = Parser::new(&grammar).unwrap();
            if next(2) == 0 {
                parser.leo = false;
            }
            with_leo += usize::from(parser.leo);
            for input in &inputs {
                let expected = brute_force(&grammar, input);
                match parser.parse(input) {
                    Ok(tree) => {
                        assert!(expected, "{grammar:?} accepts {input:?}");
                        check_tree(&grammar, &tree);
                        assert_eq!(&tree.to_bytes(), input);
                        accepted += 1;
                        leo_fired += usize::from(!parser.recognise(input).unwrap().leo.is_empty());
                    }
                    Err(e) => {
                        assert!(!expected, "{grammar:?} rejects {input:?}: {e}");
                        assert!(e.offset().unwrap() <= input.len());
                    }
                }
            }
        }
        assert!(
            accepted > 1000 && with_leo > 100 && leo_fired > 40,
            "{accepted} accepted, {with_leo} grammars with Leo, {leo_fired} parses used it"
        );
    }

    #[test]
    fn error_offset_is_the_longest_viable_prefix() {
        // For an LL(1)-ish grammar, the furthest position is where the
        // input leaves every prefix of the language: a control byte is
        // wrong anywhere in JSON.
        let json = Parser::new(&builtin_grammar("json").unwrap()).unwrap();
        let doc = json_document(500, 3);
        for cut in (0..doc.len()).step_by(7) {
            let mut bad = doc[..cut].to_vec();
            bad.push(1);
            bad.extend_from_slice(&doc[cut..]);
            match json.parse(&bad) {
                Err(ParseError::Syntax { offset, found, .. }) => {
                    // Literals are scanned whole: inside `true`, the error
                    // is where `true` starts.
                    assert_eq!(offset + found.len() - 1, cut);
                    assert_eq!(found[..found.len() - 1], doc[offset..cut]);
                    assert_eq!(found.last(), Some(&1));
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_large_json_document_parses_quickly() {
        let json = Parser::new(&builtin_grammar("json").unwrap()).unwrap();
        let doc = json_document(100_000, 42);
        let started = std::time::Instant::now();
        let tree = json.parse(&doc).unwrap();
        let elapsed = started.elapsed();
        assert_eq!(tree.to_bytes(), doc);
        // Debug builds are ~20x slower; the bar is for release builds.
        let limit = if cfg!(debug_assertions) { 20.0 } else { 1.0 };
        assert!(elapsed.as_secs_f64() < limit, "{elapsed:?}");
    }
}
