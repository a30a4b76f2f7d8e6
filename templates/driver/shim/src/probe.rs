//! Draw boundaries found by probing a decoder: change one byte at a time
//! and compare what the decoded value looks like.
//!
//! Shared, as one file, by cargo-reduce-crash's library (`reduce::choices`,
//! for generators run in-process) and the generated driver's shim (for fuzz
//! targets): it depends on nothing but `std`.

/// What a run of bytes is to the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Changing these bytes changes one leaf value (a number, a string…).
    Leaf,
    /// Changing any of these bytes changes the shape of the value.
    Structural,
    /// Changing these bytes changes nothing.
    Unused,
}

/// A run of bytes, `start..end`, of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub kind: SpanKind,
}

/// Values a byte is replaced with when probing (those equal to the byte are
/// skipped): the low bit (an `arbitrary` bool, a continuation flag), zero,
/// then the high bit (an enum variant's most significant byte) and `0xff`.
/// The first two keep an ASCII byte ASCII (see [`probe_spans`]).
const PROBES: [fn(u8) -> u8; 4] = [|b| b ^ 0x01, |_| 0x00, |b| b ^ 0x80, |_| 0xff];

/// How many of [`PROBES`] keep an ASCII byte ASCII.
const ASCII_PROBES: usize = 2;

/// What changing one byte did to the rendered value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    Unused,
    /// Exactly this one literal token changed.
    Leaf(usize),
    Structural,
}

impl Effect {
    fn combine(self, other: Effect) -> Effect {
        match (self, other) {
            (Effect::Unused, e) | (e, Effect::Unused) => e,
            (Effect::Leaf(a), Effect::Leaf(b)) if a == b => Effect::Leaf(a),
            _ => Effect::Structural,
        }
    }
}

/// The spans of `input` as seen through `render`, which decodes a byte
/// sequence and renders the value (`format!("{value:?}")`), or returns
/// `None` when the bytes do not decode.
///
/// Every byte is replaced in turn by a few other values and the rendering
/// is split into tokens (identifiers, numbers, string and char literals,
/// punctuation) and compared with the original's:
/// * nothing changes → `SpanKind::Unused` (not read, or ignored, like the
///   low bytes of an enum's variant `u32`);
/// * exactly one literal token changes (a number, string, char, `true` /
///   `false`) and the token count stays → `SpanKind::Leaf`; neighbouring
///   bytes that change the same token form one span (the bytes of one
///   integer);
/// * anything else (a variant name, the number of elements, decoding
///   failing) → `SpanKind::Structural`, one span per byte.
///
/// An ASCII byte whose two ASCII replacements change one literal token is
/// a `Leaf` without the other two probes: a character of a `String`, whose
/// contents `arbitrary` cuts at the first invalid UTF-8 byte (the rest is
/// left for the next draws), so a non-ASCII replacement would make every
/// character look structural.
///
/// Neighbouring unused bytes form one span. This costs up to four decodes
/// per byte; a typed fuzz target's driver does the same on its side.
pub fn probe_spans<F>(input: &[u8], mut render: F) -> Vec<Span>
where
    F: FnMut(&[u8]) -> Option<String>,
{
    let base = render(input);
    let base_tokens = base.as_deref().map(tokens);
    let mut probe = input.to_vec();
    let mut effects = Vec::with_capacity(input.len());
    for (i, &byte) in input.iter().enumerate() {
        let mut effect = Effect::Unused;
        for (k, alternative) in PROBES.map(|f| f(byte)).into_iter().enumerate() {
            if k == ASCII_PROBES && byte.is_ascii() && matches!(effect, Effect::Leaf(_)) {
                // A character of a string: a non-ASCII byte would cut the
                // string short (arbitrary keeps the valid UTF-8 prefix
                // and leaves the rest unread), which reads as a change of
                // structure although the byte is plain text.
                break;
            }
            if alternative == byte {
                continue;
            }
            probe[i] = alternative;
            let rendered = render(&probe);
            effect = effect.combine(classify(
                base_tokens.as_deref(),
                rendered.as_deref().map(tokens).as_deref(),
            ));
            if effect == Effect::Structural {
                break;
            }
        }
        probe[i] = byte;
        effects.push(effect);
    }
    group(&effects)
}

fn classify(base: Option<&[&str]>, probed: Option<&[&str]>) -> Effect {
    match (base, probed) {
        (None, None) => Effect::Unused,
        (Some(a), Some(b)) if a == b => Effect::Unused,
        (Some(a), Some(b)) if a.len() == b.len() => {
            let mut differing = (0..a.len()).filter(|&t| a[t] != b[t]);
            match (differing.next(), differing.next()) {
                (Some(t), None) if is_literal(a[t]) && is_literal(b[t]) => Effect::Leaf(t),
                _ => Effect::Structural,
            }
        }
        _ => Effect::Structural,
    }
}

fn group(effects: &[Effect]) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    let mut last: Option<Effect> = None;
    for (i, &effect) in effects.iter().enumerate() {
        let kind = match effect {
            Effect::Unused => SpanKind::Unused,
            Effect::Leaf(_) => SpanKind::Leaf,
            Effect::Structural => SpanKind::Structural,
        };
        let extends = effect != Effect::Structural && last == Some(effect);
        match spans.last_mut() {
            Some(span) if extends => span.end = i + 1,
            _ => spans.push(Span {
                start: i,
                end: i + 1,
                kind,
            }),
        }
        last = Some(effect);
    }
    spans
}

fn is_literal(token: &str) -> bool {
    let first = token.chars().next().unwrap_or(' ');
    first.is_ascii_digit()
        || first == '"'
        || first == '\''
        || (first == '-' && token.len() > 1)
        || matches!(token, "true" | "false" | "NaN" | "inf")
}

/// Splits a `Debug` rendering into tokens; whitespace separates tokens and
/// is dropped.
pub fn tokens(s: &str) -> Vec<&str> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'"' || c == b'\'' {
            // A literal up to the matching unescaped quote.
            i += 1;
            while i < bytes.len() && bytes[i] != c {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(bytes.len());
        } else if c.is_ascii_digit()
            || (c == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i += 1;
            while i < bytes.len() {
                let d = bytes[i];
                let exponent_sign = (d == b'-' || d == b'+') && matches!(bytes[i - 1], b'e' | b'E');
                if d.is_ascii_alphanumeric() || d == b'_' || d == b'.' || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
        } else if c.is_ascii_alphabetic() || c == b'_' || !c.is_ascii() {
            i += 1;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || !bytes[i].is_ascii())
            {
                i += 1;
            }
        } else {
            i += 1;
        }
        // Non-ASCII bytes only end a token at a char boundary.
        while !s.is_char_boundary(i) {
            i += 1;
        }
        out.push(&s[start..i]);
    }
    out
}
