//! A deep nest inside a document: cut what is around it first.
//!
//! A stack overflow found by a fuzzer in a real parser often sits after
//! kilobytes of ordinary statements (a SQL script, a YAML or TOML document,
//! a struct's other fields). Every candidate that keeps the nest runs the
//! whole recursion and dies of it (a fork each), and chunk deletion removes
//! the statements before it a piece at a time, thousands of such deaths for
//! a few kilobytes; a chunk that cuts a statement in half stops the parse
//! before the nest and fails.
//!
//! This pass finds the deepest point of the brackets (`()`, `[]`, `{}`,
//! counted together, so `[([(` nests as deep as `[[[[`) and the groups
//! around it. At every level where the nest's group has company inside its
//! parent (the document's statements around it; a struct's other fields
//! beside the field that nests), outermost first, it cuts
//!
//! * before the group: the most, up to a line or sibling boundary (after
//!   `\n`, `;` or `,`), whose removal keeps the crash, by binary search over
//!   those boundaries (siblings before a nest are read one after the other:
//!   if dropping more of them works, so does dropping fewer), after trying
//!   all of it and all but the group's own line;
//! * after it: all of it, the rest of the group's line, or the most up to
//!   a boundary, likewise.
//!
//! So a nest after 7 KB of statements costs a few deaths, not thousands.
//! Nothing is done when the input has no nest at least [`MIN_DEPTH`] deep.

use crate::reduce::oracle::Oracle;

/// Shallower nests are left to the other passes.
pub const MIN_DEPTH: usize = 32;

/// What a level must hold beside the nest's group to be cut around: more
/// than a nest's own unit (`(price * quantity - discount + tax / 100 + `
/// is 43 bytes, YAML's `[a, ` 4), which every level of a nest like
/// `[0,[1,[2,…` has, and which the repeats pass settles.
pub const MIN_COMPANY: usize = 128;

fn is_open(b: u8) -> bool {
    matches!(b, b'(' | b'[' | b'{')
}

fn is_close(b: u8) -> bool {
    matches!(b, b')' | b']' | b'}')
}

/// The groups around the deepest point of the brackets, outermost first:
/// each as (its opening bracket, one past its closing one, or the input's
/// end when it does not close).
fn chain(input: &[u8]) -> Vec<(usize, usize)> {
    let mut depth = 0usize;
    let (mut max, mut at) = (0usize, 0usize);
    for (i, &b) in input.iter().enumerate() {
        if is_open(b) {
            depth += 1;
            if depth > max {
                (max, at) = (depth, i);
            }
        } else if is_close(b) {
            depth = depth.saturating_sub(1);
        }
    }
    if max == 0 {
        return Vec::new();
    }
    // Openings of the groups around `at`: walking back, each bracket not
    // matched by a closing one between it and `at`.
    let mut opens = vec![at];
    let mut pending = 0usize;
    for i in (0..at).rev() {
        let b = input[i];
        if is_close(b) {
            pending += 1;
        } else if is_open(b) {
            if pending == 0 {
                opens.push(i);
            } else {
                pending -= 1;
            }
        }
    }
    opens.reverse();
    // Their closings: walking on from `at`, innermost first.
    let mut ends = Vec::with_capacity(opens.len());
    let mut pending = 0usize;
    for (i, &b) in input.iter().enumerate().skip(at + 1) {
        if is_open(b) {
            pending += 1;
        } else if is_close(b) {
            if pending == 0 {
                ends.push(i + 1);
                if ends.len() == opens.len() {
                    break;
                }
            } else {
                pending -= 1;
            }
        }
    }
    ends.resize(opens.len(), input.len());
    ends.reverse();
    opens.into_iter().zip(ends).collect()
}

/// Positions in `range` where a statement or sibling may begin (after
/// `\n`, `;` or `,`, blanks skipped), with `range`'s start and end,
/// ascending.
fn boundaries(input: &[u8], range: std::ops::Range<usize>) -> Vec<usize> {
    let mut out = vec![range.start];
    for i in range.clone() {
        if matches!(input[i], b'\n' | b';' | b',') {
            let mut p = i + 1;
            while p < range.end && matches!(input[p], b' ' | b'\t' | b'\r') {
                p += 1;
            }
            out.push(p.min(range.end));
        }
    }
    out.push(range.end);
    out.dedup();
    out
}

/// Positions in `range` where what follows may be cut: before each
/// `\n`, `;` or `,` (and the range's start and end), ascending.
fn cut_points(input: &[u8], range: std::ops::Range<usize>) -> Vec<usize> {
    let mut out = vec![range.start];
    out.extend(
        range
            .clone()
            .filter(|&i| matches!(input[i], b'\n' | b';' | b',')),
    );
    out.push(range.end);
    out.dedup();
    out
}

/// `input` without `cut`.
fn without(input: &[u8], cut: std::ops::Range<usize>) -> Vec<u8> {
    let mut c = Vec::with_capacity(input.len() - cut.len());
    c.extend_from_slice(&input[..cut.start]);
    c.extend_from_slice(&input[cut.end..]);
    c
}

/// The most of `gap` before a nest that can go: `gap.start..p` for the
/// largest boundary `p` that keeps the crash (binary search: siblings
/// before a nest are read one after the other, so if dropping more of them
/// works, dropping fewer does), after trying all of it and the nest's own
/// line. `None`: nothing can.
fn cut_before<O>(current: &[u8], gap: std::ops::Range<usize>, oracle: &mut O) -> Option<usize>
where
    O: Oracle<u8> + ?Sized,
{
    let line = current[gap.clone()]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(gap.start, |i| gap.start + i + 1);
    for p in [gap.end, line] {
        if p > gap.start && !oracle.exhausted() && oracle.test(&without(current, gap.start..p)) {
            return Some(p);
        }
    }
    let points = boundaries(current, gap.start..line);
    // Invariant: points[lo] works (nothing cut), points[hi] does not.
    let (mut lo, mut hi) = (0usize, points.len() - 1);
    while hi - lo > 1 && !oracle.exhausted() {
        let mid = lo + (hi - lo) / 2;
        if oracle.test(&without(current, gap.start..points[mid])) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (points[lo] > gap.start).then_some(points[lo])
}

/// The most of `gap` after a nest that can go: `q..gap.end` for the
/// smallest cut point `q` that keeps the crash, after trying all of it and
/// the rest of the nest's line. `None`: nothing can.
fn cut_after<O>(current: &[u8], gap: std::ops::Range<usize>, oracle: &mut O) -> Option<usize>
where
    O: Oracle<u8> + ?Sized,
{
    let line_end = current[gap.clone()]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(gap.end, |i| gap.start + i + 1);
    for q in [gap.start, line_end] {
        if q < gap.end && !oracle.exhausted() && oracle.test(&without(current, q..gap.end)) {
            return Some(q);
        }
    }
    let points = cut_points(current, line_end..gap.end);
    // Invariant: points[hi] works (nothing cut), points[lo] does not.
    let (mut lo, mut hi) = (0usize, points.len() - 1);
    while hi - lo > 1 && !oracle.exhausted() {
        let mid = lo + (hi - lo) / 2;
        if oracle.test(&without(current, points[mid]..gap.end)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    (points[hi] < gap.end).then_some(points[hi])
}

/// The parent's inside of level `k` of `groups` (the whole input for
/// level 0): between its brackets.
fn parent(groups: &[(usize, usize)], k: usize, len: usize) -> std::ops::Range<usize> {
    match k {
        0 => 0..len,
        _ => groups[k - 1].0 + 1..groups[k - 1].1.saturating_sub(1).max(groups[k - 1].0 + 1),
    }
}

/// Cuts what is around the deepest nest, at every level that has more
/// than the nest in it (see the module doc).
pub fn cut_around_nest<O>(input: &[u8], oracle: &mut O) -> Vec<u8>
where
    O: Oracle<u8> + ?Sized,
{
    let mut current = input.to_vec();
    if chain(&current).len() < MIN_DEPTH {
        return current;
    }
    let blank = |c: &[u8], r: std::ops::Range<usize>| c[r].iter().all(u8::is_ascii_whitespace);
    // Level k: the nest's group k inside its parent. Cuts at one level
    // leave the levels' numbering alone.
    let mut level = 0;
    while !oracle.exhausted() {
        let groups = chain(&current);
        let company = |k: usize| {
            let (open, end) = groups[k];
            let p = parent(&groups, k, current.len());
            (open - p.start) + p.end.saturating_sub(end) >= MIN_COMPANY
        };
        let Some(k) = (level..groups.len()).find(|&k| company(k)) else {
            break;
        };
        let (open, _) = groups[k];
        let p = parent(&groups, k, current.len());
        if !blank(&current, p.start..open) {
            if let Some(cut) = cut_before(&current, p.start..open, oracle) {
                current = without(&current, p.start..cut);
            }
        }
        let groups = chain(&current);
        let (_, end) = groups[k];
        let p = parent(&groups, k, current.len());
        if end < p.end && !blank(&current, end..p.end) && !oracle.exhausted() {
            if let Some(cut) = cut_after(&current, end..p.end, oracle) {
                current = without(&current, cut..p.end);
            }
        }
        level = k + 1;
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Crashes like a parser that overflows at `need` nested brackets,
    /// reached only when every statement before the nest parses (a
    /// statement is `k=v;` or `SELECT N` + the nest).
    fn parser(need: usize) -> impl FnMut(&[u8]) -> bool {
        move |c: &[u8]| {
            let text = String::from_utf8_lossy(c);
            for stmt in text.split(';') {
                let stmt = stmt.trim();
                if stmt.is_empty() {
                    continue;
                }
                if let Some(rest) = stmt.strip_prefix("SELECT N") {
                    let depth = rest.bytes().take_while(|&b| b == b'(').count();
                    return depth >= need;
                }
                let ok = stmt.split_once('=').is_some_and(|(k, v)| {
                    !k.is_empty()
                        && k.bytes().all(|b| b.is_ascii_alphanumeric())
                        && !v.is_empty()
                        && v.bytes().all(|b| b.is_ascii_digit())
                });
                if !ok {
                    return false;
                }
            }
            false
        }
    }

    fn document(statements: usize, depth: usize) -> Vec<u8> {
        let mut s = String::new();
        for i in 0..statements {
            s.push_str(&format!("key{i}={};\n", i * 7));
        }
        s.push_str("SELECT N");
        s.push_str(&"(".repeat(depth));
        s.push('1');
        s.push_str(&")".repeat(depth));
        s.push_str(";\n");
        for i in 0..20 {
            s.push_str(&format!("after{i}={i};\n"));
        }
        s.into_bytes()
    }

    #[test]
    fn statements_around_a_nest_go_in_a_few_tests() {
        let input = document(500, 100);
        let mut calls = 0;
        let mut oracle = |c: &[u8]| {
            calls += 1;
            parser(100)(c)
        };
        assert!(oracle(&input));
        let out = cut_around_nest(&input, &mut oracle);
        let expected = format!("SELECT N{}1{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(String::from_utf8_lossy(&out), expected);
        assert!(calls <= 5, "{calls} tests");
    }

    #[test]
    fn a_nest_that_needs_what_is_before_it_keeps_it() {
        // Only the statement right before the nest may go: `SELECT N` must
        // follow `mode=1;` here.
        let mut input: Vec<u8> = (0..30)
            .flat_map(|i| format!("a{i}=1;\n").into_bytes())
            .collect();
        input.extend(b"mode=1;\nSELECT N((((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))));\n");
        let mut oracle = |c: &[u8]| {
            let t = String::from_utf8_lossy(c);
            t.contains("mode=1;\nSELECT N") && parser(34)(c)
        };
        let out = cut_around_nest(&input, &mut oracle);
        assert!(
            String::from_utf8_lossy(&out).starts_with("mode=1;\nSELECT N"),
            "{}",
            String::from_utf8_lossy(&out)
        );
        assert!(oracle(&out));
    }

    #[test]
    fn siblings_inside_the_nest_s_parent_go_too() {
        // A struct whose last-but-one field nests `[(` 40 deep: crashes
        // while it is a struct (parentheses around it) holding that nest.
        let mut input = String::from("(");
        for i in 0..200 {
            input.push_str(&format!("f{i}: {i}, "));
        }
        input.push_str("deep: ");
        input.push_str(&"[(".repeat(40));
        input.push('1');
        input.push_str(&")]".repeat(40));
        input.push_str(", last: 2)");
        let mut calls = 0;
        let mut oracle = |c: &[u8]| {
            calls += 1;
            let t = String::from_utf8_lossy(c);
            t.starts_with('(') && t.ends_with(')') && t.contains(&"[(".repeat(40))
        };
        let out = cut_around_nest(input.as_bytes(), &mut oracle);
        let expected = format!("({}1{})", "[(".repeat(40), ")]".repeat(40));
        assert_eq!(String::from_utf8_lossy(&out), expected);
        assert!(calls <= 6, "{calls} tests");
    }

    #[test]
    fn mixed_brackets_nest_together_and_shallow_inputs_are_left_alone() {
        let groups = chain(b"x = 1, y = [([([([1])])])], z");
        assert_eq!(groups.len(), 7);
        assert_eq!(groups[0], (11, 26));
        assert_eq!(groups[6], (17, 20));
        let input = b"a=1;\nSELECT N((1));\n".to_vec();
        let mut oracle = |_: &[u8]| -> bool { panic!("no test on a shallow nest") };
        assert_eq!(cut_around_nest(&input, &mut oracle), input);
        assert_eq!(boundaries(b"a;b\nc, d", 0..8), vec![0, 2, 4, 7, 8]);
    }
}
