//! Draw boundaries found by probing a decoder (see the shared implementation
//! in `templates/driver/shim/src/probe.rs`, which the generated driver uses
//! for fuzz targets too).

use crate::reduce::oracle::{Span, SpanKind};

#[path = "../../../templates/driver/shim/src/probe.rs"]
mod shared;

pub(crate) use shared::tokens;

/// The spans of `input` as seen through `render`, which decodes a byte
/// sequence and renders the value (`format!("{value:?}")`), or returns
/// `None` when the bytes do not decode. Each byte is replaced by a few other
/// values and the rendering's tokens compared with the original's: nothing
/// changes → [`SpanKind::Unused`]; exactly one literal token changes →
/// [`SpanKind::Leaf`] (neighbouring bytes changing the same token form one
/// span: the bytes of one integer); anything else → [`SpanKind::Structural`],
/// one span per byte.
pub fn probe_spans<F>(input: &[u8], render: F) -> Vec<Span>
where
    F: FnMut(&[u8]) -> Option<String>,
{
    shared::probe_spans(input, render)
        .into_iter()
        .map(|s| Span {
            start: s.start,
            end: s.end,
            kind: match s.kind {
                shared::SpanKind::Leaf => SpanKind::Leaf,
                shared::SpanKind::Structural => SpanKind::Structural,
                shared::SpanKind::Unused => SpanKind::Unused,
            },
        })
        .collect()
}
