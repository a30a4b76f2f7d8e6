//! Grammar files: reading a grammar from text, checking it, and the
//! grammars shipped with the tool.
//!
//! Grammar-based reduction needs a grammar for the target's input format, and
//! users write (or copy) those by hand, so this module's job is to accept the
//! forms they already have and to point at the exact line and column when
//! something is wrong. Two forms are read (told apart by the first
//! non-blank character, `{` for JSON):
//!
//! * the Fuzzing Book's JSON form, `{"<start>": ["<expr>"], "<expr>":
//!   ["<term> + <expr>", "<term>"], ...}`: in an expansion every `<name>`
//!   (no `<`, `>` or space inside) is a nonterminal, everything else is
//!   literal text; the start symbol is `<start>`. An expansion may also be
//!   the book's `[expansion, options]` pair (the options are ignored);
//! * a readable BNF form:
//!
//!   ```text
//!   # comment
//!   <expr>  ::= <term> " + " <expr> | <term>
//!   <ident> ::= [a-zA-Z_] [a-zA-Z0-9_]*
//!   <str>   ::= "\"" [^"\\]* "\""
//!   <opt>   ::= ε | "x"            # ε or "" is the empty string
//!   ```
//!
//!   Literals are quoted (`"..."` or `'...'`, escapes `\n \t \r \0 \\ \"
//!   \' \xNN`); `[...]` is one byte from a class (ranges, `^` negates, same
//!   escapes plus `\] \[ \^ \-`); `x*`, `x+`, `x?` and `( a | b )` are
//!   sugar, desugared into fresh left-recursive nonterminals named
//!   `<lhs-star-N>`, `<lhs-plus-N>`, `<lhs-opt-N>`, `<lhs-group-N>` (or into
//!   the rule itself when its whole body is one such item, as in
//!   `<ws> ::= [ \t]*`). A rule runs until the next `<name> ::=`, so rules
//!   may span lines; a nonterminal defined twice gets both sets of
//!   alternatives. The start symbol is `<start>` if defined, else the first
//!   rule's left side.
//!
//! Checks, each reported as one line `origin:line:col: ...`: syntax,
//! undefined nonterminals, a missing start symbol, nonterminals deriving no
//! finite string (errors); rules unreachable from the start symbol
//! (warnings, see [`load_grammar`]).
//!
//! One file, about 1,100 lines without its tests: two surface syntaxes
//! (the Fuzzing Book's JSON form and BNF) feed one validation, whose error
//! positions must agree.

use super::{Grammar, Term};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

/// Names of the grammars shipped in `templates/grammars/`, for
/// `--grammar NAME` and [`builtin`].
pub const BUILTIN_NAMES: &[&str] = &["json", "expr", "csv", "ini"];

/// The text of a shipped grammar: `json` (RFC 8259), `expr` (the Fuzzing
/// Book's `EXPR_GRAMMAR`, JSON form), `csv` (RFC 4180), `ini`.
pub fn builtin(name: &str) -> Option<&'static str> {
    Some(match name {
        "json" => include_str!("../../templates/grammars/json.bnf"),
        "expr" => include_str!("../../templates/grammars/expr.json"),
        "csv" => include_str!("../../templates/grammars/csv.bnf"),
        "ini" => include_str!("../../templates/grammars/ini.bnf"),
        _ => return None,
    })
}

/// A shipped grammar, parsed (origin `builtin:NAME` in messages).
pub fn builtin_grammar(name: &str) -> Option<Grammar> {
    let text = builtin(name)?;
    let origin = format!("builtin:{name}");
    Some(parse_grammar(text, &origin).expect("shipped grammars are valid (tested)"))
}

/// Why a grammar file was rejected. Every variant displays as one line
/// starting with `origin:line:col:` (1-based; columns count characters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrammarError {
    #[error("{origin}:{line}:{col}: syntax error: {message}")]
    Syntax {
        origin: String,
        line: usize,
        col: usize,
        message: String,
    },
    #[error("{origin}:{line}:{col}: undefined nonterminal {name}")]
    Undefined {
        origin: String,
        line: usize,
        col: usize,
        name: String,
    },
    #[error("{origin}:{line}:{col}: {name} is defined twice (first at line {first_line})")]
    Duplicate {
        origin: String,
        line: usize,
        col: usize,
        name: String,
        first_line: usize,
    },
    #[error("{origin}:{line}:{col}: no start symbol: {message}")]
    NoStart {
        origin: String,
        line: usize,
        col: usize,
        message: String,
    },
    #[error("{origin}:{line}:{col}: {name} derives no finite string: every expansion needs a nonterminal that never finishes{}", also(others))]
    Unproductive {
        origin: String,
        line: usize,
        col: usize,
        name: String,
        /// The other nonterminals deriving no finite string.
        others: Vec<String>,
    },
}

fn also(others: &[String]) -> String {
    if others.is_empty() {
        String::new()
    } else {
        format!(" (nor do {})", others.join(", "))
    }
}

/// Something suspicious but harmless in a grammar file (displays as
/// `origin:line:col: warning: message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrammarWarning {
    pub origin: String,
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for GrammarWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: warning: {}",
            self.origin, self.line, self.col, self.message
        )
    }
}

/// A grammar and the warnings found while loading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedGrammar {
    pub grammar: Grammar,
    pub warnings: Vec<GrammarWarning>,
}

/// Parses and checks a grammar file (either form); warnings are dropped,
/// see [`load_grammar`] to get them. `origin` names the file in messages.
pub fn parse_grammar(text: &str, origin: &str) -> Result<Grammar, GrammarError> {
    load_grammar(text, origin).map(|loaded| loaded.grammar)
}

/// Parses and checks a grammar file, returning the warnings (unreachable
/// rules) alongside the grammar.
pub fn load_grammar(text: &str, origin: &str) -> Result<LoadedGrammar, GrammarError> {
    let ctx = Ctx::new(text, origin);
    let first = text.trim_start_matches([' ', '\t', '\r', '\n', '\u{feff}']);
    let raw = if first.starts_with('{') {
        json_form(text, &ctx)?
    } else {
        bnf_form(&ctx)?
    };
    validate(raw, &ctx)
}

// ------------------------------------------------------------------ shared

/// Positions in the file: byte offsets to line:col.
struct Ctx<'a> {
    text: &'a str,
    origin: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Ctx<'a> {
    fn new(text: &'a str, origin: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Ctx {
            text,
            origin,
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of byte `offset`.
    fn pos(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self.line_starts[line - 1];
        let col = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line, col + 1)
    }

    fn syntax(&self, offset: usize, message: impl Into<String>) -> GrammarError {
        let (line, col) = self.pos(offset);
        GrammarError::Syntax {
            origin: self.origin.to_string(),
            line,
            col,
            message: message.into(),
        }
    }
}

/// A grammar before validation, with where things are in the file.
#[derive(Default)]
struct Raw {
    rules: BTreeMap<String, Vec<Vec<Term>>>,
    /// Every defined nonterminal with the offset of its (first) definition,
    /// in file order.
    defs: Vec<(String, usize)>,
    /// Every nonterminal reference in an expansion, in file order.
    uses: Vec<(String, usize)>,
    /// Nonterminals made up while desugaring (never warned about).
    fresh: HashSet<String>,
    start: Option<String>,
    /// Where to point when there is no start symbol.
    start_offset: usize,
}

impl Raw {
    fn define(&mut self, name: &str, offset: usize, expansions: Vec<Vec<Term>>) {
        if !self.rules.contains_key(name) {
            self.defs.push((name.to_string(), offset));
        }
        self.rules
            .entry(name.to_string())
            .or_default()
            .extend(expansions);
    }
}

fn validate(raw: Raw, ctx: &Ctx) -> Result<LoadedGrammar, GrammarError> {
    let origin = ctx.origin.to_string();
    if let Some((name, offset)) = raw
        .uses
        .iter()
        .find(|(name, _)| !raw.rules.contains_key(name))
    {
        let (line, col) = ctx.pos(*offset);
        return Err(GrammarError::Undefined {
            origin,
            line,
            col,
            name: name.clone(),
        });
    }
    let start = match &raw.start {
        Some(start) if raw.rules.contains_key(start) => start.clone(),
        other => {
            let (line, col) = ctx.pos(raw.start_offset);
            let message = match other {
                Some(start) => format!("the grammar does not define {start}"),
                None => "the grammar has no rules".to_string(),
            };
            return Err(GrammarError::NoStart {
                origin,
                line,
                col,
                message,
            });
        }
    };

    // Productive nonterminals: those deriving some finite string.
    let mut productive: HashSet<&str> = HashSet::new();
    loop {
        let before = productive.len();
        for (name, expansions) in &raw.rules {
            if !productive.contains(name.as_str())
                && expansions
                    .iter()
                    .any(|e| e.iter().all(|t| term_productive(t, &productive)))
            {
                productive.insert(name);
            }
        }
        if productive.len() == before {
            break;
        }
    }
    let mut defs = raw.defs.clone();
    defs.sort_by_key(|&(_, offset)| offset);
    let mut unproductive = defs
        .iter()
        .filter(|(name, _)| !productive.contains(name.as_str()));
    if let Some((name, offset)) = unproductive.next() {
        let (line, col) = ctx.pos(*offset);
        let others = unproductive.map(|(name, _)| name.clone()).collect();
        return Err(GrammarError::Unproductive {
            origin,
            line,
            col,
            name: name.clone(),
            others,
        });
    }

    // Reachable nonterminals, for warnings.
    let mut reachable: HashSet<&str> = HashSet::from([start.as_str()]);
    let mut todo = vec![start.as_str()];
    while let Some(name) = todo.pop() {
        for term in raw.rules[name].iter().flatten() {
            if let Term::Nonterminal(n) = term {
                if reachable.insert(n) {
                    todo.push(n);
                }
            }
        }
    }
    let warnings = defs
        .iter()
        .filter(|(name, _)| !reachable.contains(name.as_str()) && !raw.fresh.contains(name))
        .map(|(name, offset)| {
            let (line, col) = ctx.pos(*offset);
            GrammarWarning {
                origin: origin.clone(),
                line,
                col,
                message: format!("{name} is unreachable from {start}"),
            }
        })
        .collect();
    Ok(LoadedGrammar {
        grammar: Grammar {
            start,
            rules: raw.rules,
        },
        warnings,
    })
}

fn term_productive(term: &Term, productive: &HashSet<&str>) -> bool {
    match term {
        Term::Nonterminal(n) => productive.contains(n.as_str()),
        Term::Literal(_) => true,
        Term::Class { .. } => (0..=255u8).any(|b| term.class_matches(b)),
    }
}

// --------------------------------------------------------------- JSON form

/// The Fuzzing Book's form: an object from nonterminal to a list of
/// expansion strings (or `[expansion, options]` pairs).
fn json_form(text: &str, ctx: &Ctx) -> Result<Raw, GrammarError> {
    let b = text.as_bytes();
    let ws = |mut p: usize| {
        while p < b.len() && matches!(b[p], b' ' | b'\t' | b'\r' | b'\n') {
            p += 1;
        }
        p
    };
    let expect = |p: usize, c: u8, what: &str| -> Result<usize, GrammarError> {
        if b.get(p) == Some(&c) {
            Ok(p + 1)
        } else {
            Err(ctx.syntax(p, format!("expected {what}, found {}", found_at(text, p))))
        }
    };
    let mut raw = Raw::default();
    let mut first_def: HashMap<String, usize> = HashMap::new();
    let mut p = ws(0);
    if text[p..].starts_with('\u{feff}') {
        p = ws(p + 3);
    }
    raw.start_offset = p;
    p = expect(p, b'{', "`{`")?;
    p = ws(p);
    if b.get(p) == Some(&b'}') {
        p += 1;
    } else {
        loop {
            // "<name>": [ expansions ]
            let key_at = p;
            if b.get(p) != Some(&b'"') {
                return Err(ctx.syntax(
                    p,
                    format!(
                        "expected a nonterminal name in quotes, found {}",
                        found_at(text, p)
                    ),
                ));
            }
            let (key, _, end) = json_string(text, p, ctx)?;
            let key = String::from_utf8(key).expect("decoded from a str");
            if nonterminal_end(key.as_bytes(), 0).map(|end| end + 1) != Some(key.len()) {
                return Err(ctx.syntax(key_at, format!("{key:?} is not a nonterminal: keys look like \"<name>\" (no spaces or angle brackets inside)")));
            }
            if let Some(&first) = first_def.get(&key) {
                let (line, col) = ctx.pos(key_at);
                let first_line = ctx.pos(first).0;
                return Err(GrammarError::Duplicate {
                    origin: ctx.origin.into(),
                    line,
                    col,
                    name: key,
                    first_line,
                });
            }
            first_def.insert(key.clone(), key_at);
            p = expect(ws(end), b':', "`:`")?;
            p = ws(p);
            let list_at = p;
            p = expect(p, b'[', "a list of expansions `[...]`")?;
            let mut expansions = Vec::new();
            p = ws(p);
            if b.get(p) == Some(&b']') {
                return Err(ctx.syntax(
                    list_at,
                    format!("{key} has no expansions; use [\"\"] for the empty string"),
                ));
            }
            loop {
                let (exp, map, end) = match b.get(p) {
                    Some(b'"') => json_string(text, p, ctx)?,
                    Some(b'[') => {
                        // The book's (expansion, options) pair.
                        let q = ws(p + 1);
                        if b.get(q) != Some(&b'"') {
                            return Err(ctx.syntax(
                                q,
                                format!(
                                    "expected an expansion string, found {}",
                                    found_at(text, q)
                                ),
                            ));
                        }
                        let (exp, map, end) = json_string(text, q, ctx)?;
                        let mut q = ws(end);
                        if b.get(q) == Some(&b',') {
                            q = ws(q + 1);
                            let mut values = serde_json::Deserializer::from_str(&text[q..])
                                .into_iter::<serde_json::Value>();
                            match values.next() {
                                Some(Ok(_)) => q = ws(q + values.byte_offset()),
                                _ => {
                                    return Err(ctx.syntax(
                                        q,
                                        "expected the expansion's options (a JSON value)",
                                    ))
                                }
                            }
                        }
                        (
                            exp,
                            map,
                            expect(q, b']', "`]` closing the [expansion, options] pair")?,
                        )
                    }
                    _ => {
                        return Err(ctx.syntax(
                            p,
                            format!("expected an expansion string, found {}", found_at(text, p)),
                        ))
                    }
                };
                expansions.push(split_expansion(&exp, &map, &mut raw.uses));
                p = ws(end);
                match b.get(p) {
                    Some(b',') => p = ws(p + 1),
                    Some(b']') => break,
                    _ => {
                        return Err(ctx.syntax(
                            p,
                            format!("expected `,` or `]`, found {}", found_at(text, p)),
                        ))
                    }
                }
            }
            raw.define(&key, key_at, expansions);
            p = ws(p + 1);
            match b.get(p) {
                Some(b',') => p = ws(p + 1),
                Some(b'}') => {
                    p += 1;
                    break;
                }
                _ => {
                    return Err(ctx.syntax(
                        p,
                        format!("expected `,` or `}}`, found {}", found_at(text, p)),
                    ))
                }
            }
        }
    }
    p = ws(p);
    if p < b.len() {
        return Err(ctx.syntax(p, "unexpected text after the grammar object"));
    }
    raw.start = Some("<start>".to_string());
    Ok(raw)
}

/// A JSON string at `p` (the opening quote): its bytes, the source offset
/// of each byte, and the offset after the closing quote.
fn json_string(
    text: &str,
    p: usize,
    ctx: &Ctx,
) -> Result<(Vec<u8>, Vec<usize>, usize), GrammarError> {
    let b = text.as_bytes();
    let (mut out, mut map) = (Vec::new(), Vec::new());
    let mut q = p + 1;
    loop {
        let Some(&c) = b.get(q) else {
            return Err(ctx.syntax(p, "unterminated string"));
        };
        match c {
            b'"' => return Ok((out, map, q + 1)),
            b'\\' => {
                let at = q;
                let simple = match b.get(q + 1) {
                    Some(b'"') => Some(b'"'),
                    Some(b'\\') => Some(b'\\'),
                    Some(b'/') => Some(b'/'),
                    Some(b'b') => Some(8),
                    Some(b'f') => Some(12),
                    Some(b'n') => Some(b'\n'),
                    Some(b'r') => Some(b'\r'),
                    Some(b't') => Some(b'\t'),
                    Some(b'u') => None,
                    _ => return Err(ctx.syntax(at, "invalid escape in string")),
                };
                if let Some(byte) = simple {
                    out.push(byte);
                    map.push(at);
                    q += 2;
                    continue;
                }
                let unit = |q: usize| {
                    text.get(q..q + 4)
                        .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
                        .map(|h| u32::from_str_radix(h, 16).expect("hex"))
                };
                let Some(hi) = unit(q + 2) else {
                    return Err(ctx.syntax(at, "\\u needs four hex digits"));
                };
                q += 6;
                let code = if (0xD800..0xDC00).contains(&hi) {
                    match (text[q..].starts_with("\\u"), unit(q + 2)) {
                        (true, Some(lo)) if (0xDC00..0xE000).contains(&lo) => {
                            q += 6;
                            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                        }
                        _ => return Err(ctx.syntax(at, "unpaired surrogate in \\u escape")),
                    }
                } else {
                    hi
                };
                let Some(ch) = char::from_u32(code) else {
                    return Err(ctx.syntax(at, "unpaired surrogate in \\u escape"));
                };
                let mut buf = [0; 4];
                for &byte in ch.encode_utf8(&mut buf).as_bytes() {
                    out.push(byte);
                    map.push(at);
                }
            }
            0..=0x1f => return Err(ctx.syntax(q, "control character in string (escape it)")),
            _ => {
                let ch = text[q..].chars().next().expect("inside the text");
                for i in 0..ch.len_utf8() {
                    out.push(b[q + i]);
                    map.push(q);
                }
                q += ch.len_utf8();
            }
        }
    }
}

/// If a nonterminal `<...>` (the book's `<[^<> ]*>`, minus control
/// characters so that names print on one line) starts at `i`, the index of
/// its `>`.
fn nonterminal_end(s: &[u8], i: usize) -> Option<usize> {
    if s.get(i) != Some(&b'<') {
        return None;
    }
    let len = s[i + 1..]
        .iter()
        .position(|&c| matches!(c, b'<' | b'>' | b' ') || c < 0x20)?;
    (s[i + 1 + len] == b'>').then_some(i + 1 + len)
}

/// Splits a book expansion into nonterminals and literal text, recording
/// each nonterminal use at its source offset.
fn split_expansion(exp: &[u8], map: &[usize], uses: &mut Vec<(String, usize)>) -> Vec<Term> {
    let (mut terms, mut literal) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < exp.len() {
        if let Some(end) = nonterminal_end(exp, i) {
            if !literal.is_empty() {
                terms.push(Term::Literal(std::mem::take(&mut literal)));
            }
            let name =
                String::from_utf8(exp[i..=end].to_vec()).expect("ASCII-delimited slice of a str");
            uses.push((name.clone(), map[i]));
            terms.push(Term::Nonterminal(name));
            i = end + 1;
        } else {
            literal.push(exp[i]);
            i += 1;
        }
    }
    if !literal.is_empty() {
        terms.push(Term::Literal(literal));
    }
    terms
}

/// How the text at `p` reads in a message.
fn found_at(text: &str, p: usize) -> String {
    match text.get(p..).and_then(|s| s.chars().next()) {
        Some(c) => format!("{c:?}"),
        None => "end of file".to_string(),
    }
}

// ---------------------------------------------------------------- BNF form

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Nt(String),
    Defines,
    Bar,
    Open,
    Close,
    Star,
    Plus,
    Question,
    Literal(Vec<u8>),
    Class(Vec<(u8, u8)>, bool),
    Epsilon,
    Eof,
}

struct Token {
    tok: Tok,
    at: usize,
}

fn lex(ctx: &Ctx) -> Result<Vec<Token>, GrammarError> {
    let text = ctx.text;
    let b = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    loop {
        while i < b.len() {
            match b[i] {
                b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                b'#' => {
                    i = b[i..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(b.len(), |n| i + n)
                }
                _ if text[i..].starts_with('\u{feff}') => i += 3,
                _ => break,
            }
        }
        let at = i;
        let Some(&c) = b.get(i) else {
            tokens.push(Token { tok: Tok::Eof, at });
            return Ok(tokens);
        };
        let (tok, next) =
            match c {
                b'<' => match b[i + 1..]
                    .iter()
                    .position(|&c| matches!(c, b'<' | b'>' | b' ' | b'\t' | b'\r' | b'\n'))
                {
                    Some(n) if n > 0 && b[i + 1 + n] == b'>' => {
                        (Tok::Nt(text[i..i + n + 2].to_string()), i + n + 2)
                    }
                    _ => return Err(ctx.syntax(
                        at,
                        "expected a nonterminal `<name>` (no spaces inside); quote a literal `<`",
                    )),
                },
                b':' if text[i..].starts_with("::=") => (Tok::Defines, i + 3),
                b'|' => (Tok::Bar, i + 1),
                b'(' => (Tok::Open, i + 1),
                b')' => (Tok::Close, i + 1),
                b'*' => (Tok::Star, i + 1),
                b'+' => (Tok::Plus, i + 1),
                b'?' => (Tok::Question, i + 1),
                b'"' | b'\'' => {
                    let (bytes, next) = lex_literal(ctx, i)?;
                    (Tok::Literal(bytes), next)
                }
                b'[' => lex_class(ctx, i)?,
                _ if text[i..].starts_with('ε') => (Tok::Epsilon, i + 'ε'.len_utf8()),
                _ => {
                    let hint = if c == b':' {
                        " (rules are written `<name> ::= ...`)"
                    } else {
                        ""
                    };
                    return Err(ctx.syntax(at, format!("unexpected {}{hint}", found_at(text, i))));
                }
            };
        tokens.push(Token { tok, at });
        i = next;
    }
}

/// One escape `\c` at `i` (the backslash) inside a literal or class: the
/// byte and the offset after it.
fn escape(ctx: &Ctx, i: usize, in_class: bool) -> Result<(u8, usize), GrammarError> {
    let b = ctx.text.as_bytes();
    let byte = match b.get(i + 1) {
        Some(b'n') => b'\n',
        Some(b't') => b'\t',
        Some(b'r') => b'\r',
        Some(b'0') => 0,
        Some(&c @ (b'\\' | b'"' | b'\'')) => c,
        Some(&c @ (b']' | b'[' | b'^' | b'-')) if in_class => c,
        Some(b'x') => {
            let hex = ctx
                .text
                .get(i + 2..i + 4)
                .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()));
            let Some(hex) = hex else {
                return Err(ctx.syntax(i, "\\x needs two hex digits"));
            };
            return Ok((u8::from_str_radix(hex, 16).expect("hex"), i + 4));
        }
        _ => {
            let known = if in_class {
                r#"\n \t \r \0 \\ \" \' \] \[ \^ \- \xNN"#
            } else {
                r#"\n \t \r \0 \\ \" \' \xNN"#
            };
            return Err(ctx.syntax(i, format!("unknown escape (known: {known})")));
        }
    };
    Ok((byte, i + 2))
}

fn lex_literal(ctx: &Ctx, start: usize) -> Result<(Vec<u8>, usize), GrammarError> {
    let b = ctx.text.as_bytes();
    let quote = b[start];
    let mut out = Vec::new();
    let mut i = start + 1;
    loop {
        match b.get(i) {
            None | Some(b'\n') => return Err(ctx.syntax(
                start,
                "unterminated literal (it must end on the same line; write \\n for a line break)",
            )),
            Some(&c) if c == quote => return Ok((out, i + 1)),
            Some(b'\\') => {
                let (byte, next) = escape(ctx, i, false)?;
                out.push(byte);
                i = next;
            }
            Some(&c) => {
                out.push(c);
                i += 1;
            }
        }
    }
}

/// A class `[...]` at `start`: the token and the offset after it.
fn lex_class(ctx: &Ctx, start: usize) -> Result<(Tok, usize), GrammarError> {
    let b = ctx.text.as_bytes();
    let mut i = start + 1;
    let negated = b.get(i) == Some(&b'^');
    if negated {
        i += 1;
    }
    let one = |i: usize| -> Result<(u8, usize), GrammarError> {
        match b.get(i) {
            None | Some(b'\n') => Err(ctx.syntax(start, "unterminated character class")),
            Some(b'\\') => escape(ctx, i, true),
            Some(&c) if c >= 0x80 => Err(ctx.syntax(
                i,
                "a character class matches one byte: write non-ASCII bytes as \\xNN",
            )),
            Some(&c) => Ok((c, i + 1)),
        }
    };
    let mut ranges = Vec::new();
    loop {
        match b.get(i) {
            Some(b']') => break,
            None | Some(b'\n') => return Err(ctx.syntax(start, "unterminated character class")),
            _ => {}
        }
        let at = i;
        let (lo, next) = one(i)?;
        i = next;
        if b.get(i) == Some(&b'-') && !matches!(b.get(i + 1), Some(b']') | None) {
            let (hi, next) = one(i + 1)?;
            if hi < lo {
                return Err(ctx.syntax(at, "character range is out of order"));
            }
            ranges.push((lo, hi));
            i = next;
        } else {
            ranges.push((lo, lo));
        }
    }
    let class = Term::Class {
        ranges: ranges.clone(),
        negated,
    };
    if !(0..=255u8).any(|c| class.class_matches(c)) {
        return Err(ctx.syntax(start, "character class matches no byte"));
    }
    Ok((Tok::Class(ranges, negated), i + 1))
}

/// A parsed expansion item, before desugaring.
enum Item {
    Nt(String, usize),
    Literal(Vec<u8>),
    Class(Vec<(u8, u8)>, bool),
    Group(Vec<Vec<Item>>, usize),
    Repeat(Box<Item>, Repeat, usize),
}

#[derive(Clone, Copy, PartialEq)]
enum Repeat {
    Star,
    Plus,
    Optional,
}

struct Rule {
    lhs: String,
    at: usize,
    alternatives: Vec<Vec<Item>>,
}

struct BnfParser<'a, 'c> {
    ctx: &'a Ctx<'c>,
    tokens: Vec<Token>,
    p: usize,
}

impl BnfParser<'_, '_> {
    fn tok(&self, k: usize) -> &Tok {
        &self.tokens[(self.p + k).min(self.tokens.len() - 1)].tok
    }

    fn at(&self) -> usize {
        self.tokens[self.p].at
    }

    fn rule_starts_here(&self) -> bool {
        matches!(self.tok(0), Tok::Nt(_)) && *self.tok(1) == Tok::Defines
    }

    fn rules(&mut self) -> Result<Vec<Rule>, GrammarError> {
        let mut rules = Vec::new();
        while *self.tok(0) != Tok::Eof {
            let at = self.at();
            let Tok::Nt(lhs) = self.tok(0).clone() else {
                return Err(self.ctx.syntax(at, "expected a rule `<name> ::= ...`"));
            };
            if *self.tok(1) != Tok::Defines {
                let at = self.tokens[self.p + 1].at;
                return Err(self.ctx.syntax(at, format!("expected `::=` after {lhs}")));
            }
            self.p += 2;
            let alternatives = self.alternatives()?;
            match self.tok(0) {
                Tok::Eof => {}
                _ if self.rule_starts_here() => {}
                Tok::Close => return Err(self.ctx.syntax(self.at(), "`)` without a matching `(`")),
                _ => return Err(self.ctx.syntax(self.at(), "unexpected token")),
            }
            rules.push(Rule {
                lhs,
                at,
                alternatives,
            });
        }
        Ok(rules)
    }

    fn alternatives(&mut self) -> Result<Vec<Vec<Item>>, GrammarError> {
        let mut alternatives = vec![self.sequence()?];
        while *self.tok(0) == Tok::Bar {
            self.p += 1;
            alternatives.push(self.sequence()?);
        }
        Ok(alternatives)
    }

    fn sequence(&mut self) -> Result<Vec<Item>, GrammarError> {
        let at = self.at();
        let mut items = Vec::new();
        let mut epsilon = false;
        loop {
            if self.rule_starts_here() {
                break;
            }
            let item_at = self.at();
            let mut item = match self.tok(0).clone() {
                Tok::Bar | Tok::Close | Tok::Eof => break,
                Tok::Defines => return Err(self.ctx.syntax(item_at, "unexpected `::=`")),
                Tok::Star | Tok::Plus | Tok::Question => {
                    return Err(self
                        .ctx
                        .syntax(item_at, "nothing to repeat before this operator"))
                }
                Tok::Epsilon => {
                    self.p += 1;
                    epsilon = true;
                    continue;
                }
                Tok::Nt(name) => {
                    self.p += 1;
                    Item::Nt(name, item_at)
                }
                Tok::Literal(bytes) => {
                    self.p += 1;
                    epsilon |= bytes.is_empty();
                    Item::Literal(bytes)
                }
                Tok::Class(ranges, negated) => {
                    self.p += 1;
                    Item::Class(ranges, negated)
                }
                Tok::Open => {
                    self.p += 1;
                    let alternatives = self.alternatives()?;
                    if *self.tok(0) != Tok::Close {
                        return Err(self.ctx.syntax(item_at, "`(` is never closed"));
                    }
                    self.p += 1;
                    Item::Group(alternatives, item_at)
                }
            };
            loop {
                let repeat = match self.tok(0) {
                    Tok::Star => Repeat::Star,
                    Tok::Plus => Repeat::Plus,
                    Tok::Question => Repeat::Optional,
                    _ => break,
                };
                item = Item::Repeat(Box::new(item), repeat, self.at());
                self.p += 1;
            }
            items.push(item);
        }
        if items.is_empty() && !epsilon {
            return Err(self.ctx.syntax(
                at,
                "empty alternative: write ε or \"\" for the empty string",
            ));
        }
        Ok(items)
    }
}

fn bnf_form(ctx: &Ctx) -> Result<Raw, GrammarError> {
    let tokens = lex(ctx)?;
    let rules = BnfParser { ctx, tokens, p: 0 }.rules()?;
    let mut d = Desugar {
        raw: Raw::default(),
        taken: HashSet::new(),
        counters: HashMap::new(),
    };
    for rule in &rules {
        d.taken.insert(rule.lhs.clone());
        collect_names(rule.alternatives.iter().flatten(), &mut d.taken);
    }
    let mut definitions: HashMap<&str, usize> = HashMap::new();
    for rule in &rules {
        *definitions.entry(&rule.lhs).or_default() += 1;
    }
    for rule in &rules {
        // A body that is a single repetition becomes the rule itself.
        if let ([single], 1) = (&rule.alternatives[..], definitions[rule.lhs.as_str()]) {
            if let [Item::Repeat(inner, repeat, _)] = &single[..] {
                let expansions = d.repetition(&rule.lhs, &rule.lhs, inner, *repeat);
                d.raw.define(&rule.lhs, rule.at, expansions);
                continue;
            }
        }
        let expansions = d.alternatives(&rule.lhs, &rule.alternatives);
        d.raw.define(&rule.lhs, rule.at, expansions);
    }
    let mut raw = d.raw;
    raw.start = if raw.rules.contains_key("<start>") {
        Some("<start>".to_string())
    } else {
        rules.first().map(|r| r.lhs.clone())
    };
    raw.start_offset = 0;
    Ok(raw)
}

fn collect_names<'a>(items: impl Iterator<Item = &'a Item>, taken: &mut HashSet<String>) {
    for item in items {
        match item {
            Item::Nt(name, _) => {
                taken.insert(name.clone());
            }
            Item::Group(alternatives, _) => collect_names(alternatives.iter().flatten(), taken),
            Item::Repeat(inner, _, _) => collect_names(std::iter::once(&**inner), taken),
            Item::Literal(_) | Item::Class(..) => {}
        }
    }
}

/// Turns BNF items into terms, defining fresh nonterminals for sugar.
struct Desugar {
    raw: Raw,
    /// Names in use (never reused for fresh nonterminals).
    taken: HashSet<String>,
    counters: HashMap<String, usize>,
}

impl Desugar {
    fn fresh(&mut self, lhs: &str, kind: &str) -> String {
        let base = lhs
            .strip_prefix('<')
            .and_then(|s| s.strip_suffix('>'))
            .unwrap_or(lhs);
        let counter = self.counters.entry(lhs.to_string()).or_default();
        loop {
            *counter += 1;
            let name = format!("<{base}-{kind}-{counter}>");
            if self.taken.insert(name.clone()) {
                self.raw.fresh.insert(name.clone());
                return name;
            }
        }
    }

    fn alternatives(&mut self, lhs: &str, alternatives: &[Vec<Item>]) -> Vec<Vec<Term>> {
        alternatives
            .iter()
            .map(|seq| self.sequence(lhs, seq))
            .collect()
    }

    fn sequence(&mut self, lhs: &str, items: &[Item]) -> Vec<Term> {
        let mut out = Vec::new();
        for item in items {
            self.item(lhs, item, &mut out);
        }
        out
    }

    fn item(&mut self, lhs: &str, item: &Item, out: &mut Vec<Term>) {
        match item {
            Item::Nt(name, at) => {
                self.raw.uses.push((name.clone(), *at));
                out.push(Term::Nonterminal(name.clone()));
            }
            Item::Literal(bytes) => {
                if !bytes.is_empty() {
                    out.push(Term::Literal(bytes.clone()));
                }
            }
            Item::Class(ranges, negated) => out.push(Term::Class {
                ranges: ranges.clone(),
                negated: *negated,
            }),
            Item::Group(alternatives, _) if alternatives.len() == 1 => {
                for item in &alternatives[0] {
                    self.item(lhs, item, out);
                }
            }
            Item::Group(alternatives, at) => {
                let name = self.fresh(lhs, "group");
                let expansions = self.alternatives(lhs, alternatives);
                self.raw.define(&name, *at, expansions);
                out.push(Term::Nonterminal(name));
            }
            Item::Repeat(inner, repeat, at) => {
                let kind = match repeat {
                    Repeat::Star => "star",
                    Repeat::Plus => "plus",
                    Repeat::Optional => "opt",
                };
                let name = self.fresh(lhs, kind);
                let expansions = self.repetition(lhs, &name, inner, *repeat);
                self.raw.define(&name, *at, expansions);
                out.push(Term::Nonterminal(name));
            }
        }
    }

    /// Expansions of `name` for `inner` repeated: `x*` is `ε | name x`,
    /// `x+` is `x | name x` (left recursion: linear for Earley), `x?` is
    /// `ε | x`. A one-alternative group is spliced in rather than named.
    fn repetition(
        &mut self,
        lhs: &str,
        name: &str,
        inner: &Item,
        repeat: Repeat,
    ) -> Vec<Vec<Term>> {
        let bodies = match inner {
            Item::Group(alternatives, _)
                if repeat == Repeat::Optional || alternatives.len() == 1 =>
            {
                self.alternatives(lhs, alternatives)
            }
            _ => {
                let mut body = Vec::new();
                self.item(lhs, inner, &mut body);
                vec![body]
            }
        };
        let again = |body: &Vec<Term>| {
            let mut seq = vec![Term::Nonterminal(name.to_string())];
            seq.extend(body.iter().cloned());
            seq
        };
        match repeat {
            Repeat::Star => vec![vec![], again(&bodies[0])],
            Repeat::Plus => vec![bodies[0].clone(), again(&bodies[0])],
            Repeat::Optional => std::iter::once(vec![]).chain(bodies).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nt(s: &str) -> Term {
        Term::Nonterminal(s.to_string())
    }
    fn lit(s: &str) -> Term {
        Term::Literal(s.as_bytes().to_vec())
    }
    fn class(ranges: &[(u8, u8)], negated: bool) -> Term {
        Term::Class {
            ranges: ranges.to_vec(),
            negated,
        }
    }
    fn err(text: &str) -> String {
        parse_grammar(text, "g.txt")
            .expect_err("should be rejected")
            .to_string()
    }

    #[test]
    fn every_builtin_loads_without_warnings() {
        for name in BUILTIN_NAMES {
            let loaded =
                load_grammar(builtin(name).unwrap(), name).unwrap_or_else(|e| panic!("{e}"));
            assert!(loaded.warnings.is_empty(), "{name}: {:?}", loaded.warnings);
            assert_eq!(loaded.grammar.start, "<start>");
            assert_eq!(builtin_grammar(name).unwrap(), loaded.grammar);
        }
        assert_eq!(builtin("nope"), None);
    }

    #[test]
    fn expr_is_the_books_expr_grammar() {
        // `expr_grammar_before` of the reference run (s001_book_main.json).
        let reference: serde_json::Value = serde_json::from_str(
            r#"{"<start>": ["<expr>"],
                "<expr>": ["<term> + <expr>", "<term> - <expr>", "<term>"],
                "<term>": ["<factor> * <term>", "<factor> / <term>", "<factor>"],
                "<factor>": ["+<factor>", "-<factor>", "(<expr>)", "<integer>.<integer>", "<integer>"],
                "<integer>": ["<digit><integer>", "<digit>"],
                "<digit>": ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]}"#,
        )
        .unwrap();
        let shipped: serde_json::Value = serde_json::from_str(builtin("expr").unwrap()).unwrap();
        assert_eq!(shipped, reference);
        let g = builtin_grammar("expr").unwrap();
        assert_eq!(
            g.rules["<expr>"][0],
            vec![nt("<term>"), lit(" + "), nt("<expr>")]
        );
        assert_eq!(
            g.rules["<factor>"][3],
            vec![nt("<integer>"), lit("."), nt("<integer>")]
        );
        assert_eq!(
            g.rules["<factor>"][2],
            vec![lit("("), nt("<expr>"), lit(")")]
        );
        assert_eq!(g.rules["<digit>"].len(), 10);
    }

    #[test]
    fn json_form_splits_like_the_book() {
        let g = parse_grammar(
            r#"{"<start>": ["a < b<x>", "<<x>>", "", ["<x>!", {"prob": 0.5}], ["<x>"]],
                "<x>": ["\u00e9\n\"<>"], "<>": ["z"]}"#,
            "g.json",
        )
        .unwrap();
        let s = &g.rules["<start>"];
        assert_eq!(s[0], vec![lit("a < b"), nt("<x>")]);
        assert_eq!(s[1], vec![lit("<"), nt("<x>"), lit(">")]);
        assert_eq!(s[2], vec![]);
        assert_eq!(s[3], vec![nt("<x>"), lit("!")]);
        assert_eq!(s[4], vec![nt("<x>")]);
        assert_eq!(g.rules["<x>"][0], vec![lit("é\n\""), nt("<>")]);
    }

    #[test]
    fn json_form_errors_point_at_the_text() {
        assert_eq!(
            err("{\n  \"<start>\": [\"<a> x\"],\n  \"<a>\": [\"<b>\"]\n}"),
            "g.txt:3:12: undefined nonterminal <b>"
        );
        // Position after an escape: \" counts as two characters.
        assert_eq!(
            err(r#"{"<start>": ["\"<b>"]}"#),
            "g.txt:1:17: undefined nonterminal <b>"
        );
        assert_eq!(
            err(r#"{"<expr>": ["1"]}"#),
            "g.txt:1:1: no start symbol: the grammar does not define <start>"
        );
        assert_eq!(
            err("{\"<start>\": [\"1\"],\n \"<start>\": [\"2\"]}"),
            "g.txt:2:2: <start> is defined twice (first at line 1)"
        );
        assert_eq!(
            err(r#"{"<start>": ["1",]}"#),
            "g.txt:1:18: syntax error: expected an expansion string, found ']'"
        );
        assert_eq!(
            err(r#"{"<start>": []}"#),
            "g.txt:1:13: syntax error: <start> has no expansions; use [\"\"] for the empty string"
        );
        assert_eq!(
            err(r#"{"start": ["1"]}"#).split(": syntax").next(),
            Some("g.txt:1:2")
        );
        // An empty key (found by fuzz/grammar_load: `key.len() - 1`
        // overflowed).
        for text in [r#"{"""#, r#"{"": ["x"]}"#] {
            assert_eq!(
                err(text),
                r#"g.txt:1:2: syntax error: "" is not a nonterminal: keys look like "<name>" (no spaces or angle brackets inside)"#
            );
        }
        assert_eq!(
            err(r#"{"<start>": ["1"]} x"#),
            "g.txt:1:20: syntax error: unexpected text after the grammar object"
        );
        assert!(err(r#"{"<start>": ["1"]"#)
            .starts_with("g.txt:1:18: syntax error: expected `,` or `}`"));
        assert!(
            err(r#"{"<start>": ["\q"]}"#).starts_with("g.txt:1:15: syntax error: invalid escape")
        );
        assert_eq!(
            err(r#"{"<start>": ["<a>"], "<a>": ["<a>x"]}"#),
            "g.txt:1:2: <start> derives no finite string: every expansion needs a nonterminal that never finishes (nor do <a>)"
        );
    }

    #[test]
    fn bnf_form_terms() {
        let g = parse_grammar(
            "# a comment\n<s> ::= \"a\\n\\t\\\\\\\"\\x41\" 'q\"' [a-z0-9_] [^\"\\\\] <t> # trailing\n\
             <t> ::= ε | \"\" | \"x\" ε\n",
            "g.bnf",
        )
        .unwrap();
        assert_eq!(g.start, "<s>");
        assert_eq!(
            g.rules["<s>"][0],
            vec![
                lit("a\n\t\\\"A"),
                lit("q\""),
                class(&[(b'a', b'z'), (b'0', b'9'), (b'_', b'_')], false),
                class(&[(b'"', b'"'), (b'\\', b'\\')], true),
                nt("<t>")
            ]
        );
        assert_eq!(g.rules["<t>"], vec![vec![], vec![], vec![lit("x")]]);
    }

    #[test]
    fn bnf_classes_edge_cases() {
        let g = parse_grammar(r"<s> ::= [-a] [a-] [\]\-\x00-\x1f] [^\x00-\xfe]", "g").unwrap();
        assert_eq!(
            g.rules["<s>"][0],
            vec![
                class(&[(b'-', b'-'), (b'a', b'a')], false),
                class(&[(b'a', b'a'), (b'-', b'-')], false),
                class(&[(b']', b']'), (b'-', b'-'), (0, 0x1f)], false),
                class(&[(0, 0xfe)], true),
            ]
        );
        assert!(err(r"<s> ::= [z-a]")
            .starts_with("g.txt:1:10: syntax error: character range is out of order"));
        assert!(err(r"<s> ::= []")
            .starts_with("g.txt:1:9: syntax error: character class matches no byte"));
        assert!(err(r"<s> ::= [^\x00-\xff]")
            .starts_with("g.txt:1:9: syntax error: character class matches no byte"));
        assert!(err("<s> ::= [é]")
            .starts_with("g.txt:1:10: syntax error: a character class matches one byte"));
        assert!(err("<s> ::= [abc\n")
            .starts_with("g.txt:1:9: syntax error: unterminated character class"));
    }

    #[test]
    fn bnf_rules_span_lines_and_accumulate() {
        let g = parse_grammar(
            "<a> ::= \"1\"\n    | \"2\"\n  <b>\n<b> ::= \"b\"\n<a> ::= \"3\"",
            "g",
        )
        .unwrap();
        assert_eq!(
            g.rules["<a>"],
            vec![vec![lit("1")], vec![lit("2"), nt("<b>")], vec![lit("3")]]
        );
        assert_eq!(g.start, "<a>");
        // An explicit <start> wins over the first rule.
        let g = parse_grammar("<a> ::= \"1\"\n<start> ::= <a>", "g").unwrap();
        assert_eq!(g.start, "<start>");
    }

    #[test]
    fn bnf_sugar_desugars_to_left_recursion() {
        let g = parse_grammar(
            "<list> ::= \"[\" <item> (\",\" <item>)* \"]\" <x>+ <x>? (<x> | \"y\") (\"p\" \"q\")\n\
             <item> ::= [0-9]+\n<x> ::= \"x\"\n<ws> ::= [ ]*\n<o> ::= (\"a\" | \"b\")?",
            "g",
        )
        .unwrap();
        assert_eq!(
            g.rules["<list>"][0],
            vec![
                lit("["),
                nt("<item>"),
                nt("<list-star-1>"),
                lit("]"),
                nt("<list-plus-2>"),
                nt("<list-opt-3>"),
                nt("<list-group-4>"),
                lit("p"),
                lit("q")
            ]
        );
        assert_eq!(
            g.rules["<list-star-1>"],
            vec![vec![], vec![nt("<list-star-1>"), lit(","), nt("<item>")]]
        );
        assert_eq!(
            g.rules["<list-plus-2>"],
            vec![vec![nt("<x>")], vec![nt("<list-plus-2>"), nt("<x>")]]
        );
        assert_eq!(g.rules["<list-opt-3>"], vec![vec![], vec![nt("<x>")]]);
        assert_eq!(
            g.rules["<list-group-4>"],
            vec![vec![nt("<x>")], vec![lit("y")]]
        );
        // A body that is only a repetition becomes the rule itself.
        let digit = class(&[(b'0', b'9')], false);
        assert_eq!(
            g.rules["<item>"],
            vec![vec![digit.clone()], vec![nt("<item>"), digit]]
        );
        assert_eq!(
            g.rules["<ws>"],
            vec![vec![], vec![nt("<ws>"), class(&[(b' ', b' ')], false)]]
        );
        assert_eq!(g.rules["<o>"], vec![vec![], vec![lit("a")], vec![lit("b")]]);
        assert_eq!(g.rules.len(), 9);
        // Fresh names never collide with the user's.
        let g = parse_grammar("<a> ::= \"x\"* <a-star-1>\n<a-star-1> ::= \"y\"", "g").unwrap();
        assert_eq!(g.rules["<a>"][0], vec![nt("<a-star-2>"), nt("<a-star-1>")]);
        // Only the user's unreachable rules are warned about.
        let loaded = load_grammar(
            "<a> ::= \"x\"\n<b> ::= (\"y\" | \"z\")* <c>\n<c> ::= \"c\"",
            "g.bnf",
        )
        .unwrap();
        let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            warnings,
            [
                "g.bnf:2:1: warning: <b> is unreachable from <a>",
                "g.bnf:3:1: warning: <c> is unreachable from <a>"
            ]
        );
    }

    #[test]
    fn bnf_errors_point_at_the_text() {
        assert_eq!(
            err("<a> ::= <b>\n<b> ::= \"x\" <c>\n"),
            "g.txt:2:13: undefined nonterminal <c>"
        );
        // Columns count characters, not bytes.
        assert_eq!(
            err("<a> ::= ε | \"é\" <zz>"),
            "g.txt:1:17: undefined nonterminal <zz>"
        );
        assert_eq!(
            err("# nothing\n"),
            "g.txt:1:1: no start symbol: the grammar has no rules"
        );
        assert_eq!(err("<a> ::= \"x\" <a>\n"), "g.txt:1:1: <a> derives no finite string: every expansion needs a nonterminal that never finishes");
        assert_eq!(err("<a> ::= \"x\nyz\""), "g.txt:1:9: syntax error: unterminated literal (it must end on the same line; write \\n for a line break)");
        assert!(err("<a> ::= \"\\q\"").starts_with("g.txt:1:10: syntax error: unknown escape"));
        assert!(err("<a> ::= \"\\x4\"")
            .starts_with("g.txt:1:10: syntax error: \\x needs two hex digits"));
        assert_eq!(
            err("<a> ::= \"x\" |\n<b> ::= \"y\""),
            "g.txt:2:1: syntax error: empty alternative: write ε or \"\" for the empty string"
        );
        assert_eq!(
            err("<a> ::= | \"x\""),
            "g.txt:1:9: syntax error: empty alternative: write ε or \"\" for the empty string"
        );
        assert_eq!(
            err("<a> ::= (\"x\" | \"y\"\n<b> ::= \"z\""),
            "g.txt:1:9: syntax error: `(` is never closed"
        );
        assert_eq!(
            err("<a> ::= \"x\" )"),
            "g.txt:1:13: syntax error: `)` without a matching `(`"
        );
        assert_eq!(
            err("<a> ::= * \"x\""),
            "g.txt:1:9: syntax error: nothing to repeat before this operator"
        );
        assert_eq!(
            err("<a> \"x\""),
            "g.txt:1:5: syntax error: expected `::=` after <a>"
        );
        assert_eq!(
            err("\"x\" ::= <a>"),
            "g.txt:1:1: syntax error: expected a rule `<name> ::= ...`"
        );
        assert_eq!(
            err("<a> := \"x\""),
            "g.txt:1:5: syntax error: unexpected ':' (rules are written `<name> ::= ...`)"
        );
        assert!(err("<a> ::= < b >")
            .starts_with("g.txt:1:9: syntax error: expected a nonterminal `<name>`"));
        assert_eq!(err("<a> ::= x"), "g.txt:1:9: syntax error: unexpected 'x'");
        // Every message is one line.
        for text in [
            "<a> ::= \"x\nyz\"",
            "{\"<start>\": [\"<b>\"]}",
            "<a> ::= <a>",
        ] {
            assert!(!err(text).contains('\n'));
        }
    }
}
