//! Markdown for `$GITHUB_STEP_SUMMARY` or a pull-request comment: one
//! line of counts, then one table row per bug, worst first, then the lines
//! only crashing inputs ran, per bug that has them.

use super::{History, Report};

/// Text from the target or its input (a panic message, a function, file,
/// target or artifact name, a reproduce line: anything we did not write) as
/// a Markdown code span, outside a table: shown as it is, never read as
/// Markdown or HTML (no link, image, mention, emphasis or tag).
///
/// CommonMark: a span opened by N backticks ends at the next run of exactly
/// N, so the fence is one backtick longer than the longest run inside; a
/// span strips one space from each end when both have one, and content
/// that starts or ends with a backtick would join the fence, so content
/// that starts or ends with a backtick or a space is padded with a space on
/// each side. Line breaks become `␤`
/// (a span would fold them to spaces, and a table row ends at one), other
/// control characters their visible pictures (`␀`, `␛`, …), C1 controls
/// and bidirectional overrides U+FFFD. Empty text gives nothing: an empty
/// span (` `` `) shows as literal backticks.
fn code(text: &str) -> String {
    let shown = visible(text);
    if shown.is_empty() {
        return String::new();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in shown.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    // Padded, the span strips exactly the pads (it strips none from text
    // of spaces only, which needs none).
    let edge = |c: Option<char>| matches!(c, Some('`' | ' '));
    let pad = (edge(shown.chars().next()) || edge(shown.chars().last()))
        && !shown.bytes().all(|b| b == b' ');
    let pad = if pad { " " } else { "" };
    format!("{fence}{pad}{shown}{pad}{fence}")
}

/// [`code`] for a GitHub-flavoured table cell: a `|` ends the cell even
/// inside a code span unless escaped as `\|` (the table drops the
/// backslash before the span is read).
fn cell(text: &str) -> String {
    code(text).replace('|', "\\|")
}

/// `text` with line breaks as `␤` and other control characters visible.
fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\r' => out.push('␤'),
            '\t' => out.push(' '),
            // U+2400..U+241F picture U+0000..U+001F; U+2421 pictures DEL.
            '\0'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\u{7f}' => out.push('␡'),
            '\u{80}'..='\u{9f}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A status word as it is, or as [`cell`] when it is not a plain word
/// (the report it came from may have been edited).
fn status_word(status: &str) -> String {
    if !status.is_empty() && status.bytes().all(|b| b.is_ascii_lowercase()) {
        status.to_owned()
    } else {
        cell(status)
    }
}

/// The Markdown summary of `report`.
pub fn render(report: &Report) -> String {
    let open: Vec<_> = report.bugs.iter().filter(|b| b.status != "fixed").collect();
    let fixed = report.bugs.len() - open.len();
    let new = report.new_bugs();
    let mut out = String::from("## Fuzzing crashes: ");
    out.push_str(&match open.len() {
        1 => "1 bug".to_owned(),
        n => format!("{n} bugs"),
    });
    if report.bugs.iter().any(|b| b.history.is_some()) {
        out.push_str(&format!(" ({new} new, {fixed} fixed since the baseline)"));
    }
    out.push_str(&format!(
        "\n\n{} artifacts; {} did not reproduce.{}\n\n",
        report.artifacts,
        report.not_reproduced,
        report
            .shard
            .as_deref()
            .map(|s| format!(" Shard {}.", code(s)))
            .unwrap_or_default()
    ));
    if report.bugs.is_empty() {
        out.push_str("No crash reproduces.\n");
        return out;
    }
    out.push_str(
        "| bug | severity | status | targets | artifacts | reduced | crash | reproduce |\n\
         |---|---|---|---|---:|---:|---|---|\n",
    );
    for b in &report.bugs {
        let status = match b.history {
            Some(h @ (History::New | History::Fixed)) => format!("**{}**", h.name()),
            Some(History::Known) => "known".to_owned(),
            None => status_word(&b.status),
        };
        let reduced = b
            .reduced
            .as_ref()
            .map(|r| format!("{} → {} B", b.original_len, r.len))
            .unwrap_or_else(|| format!("{} B", b.original_len));
        let targets: Vec<String> = b.targets.iter().map(|t| cell(t)).collect();
        out.push_str(&format!(
            "| {} | {} ({}) | {} | {} | {} | {} | {} | {} |\n",
            cell(&b.fingerprint),
            b.severity.tier.name(),
            cell(&b.severity.class),
            status,
            targets.join(", "),
            b.artifacts.len(),
            reduced,
            cell(&b.signature.to_string()),
            b.reproduce.as_deref().map(cell).unwrap_or_default(),
        ));
    }
    let explained: Vec<_> = report
        .bugs
        .iter()
        .filter(|b| !b.failing_lines.is_empty())
        .collect();
    if !explained.is_empty() {
        out.push_str("\n### Lines only crashing inputs ran\n\n");
        for b in explained {
            let lines: Vec<String> = b
                .failing_lines
                .iter()
                .take(SHOWN)
                .map(|l| code(&format!("{}:{}", l.file, l.line)))
                .collect();
            let more = b.failing_lines.len().saturating_sub(SHOWN);
            out.push_str(&format!(
                "- {}: {}{}\n",
                code(&b.fingerprint),
                lines.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ));
        }
    }
    out
}

/// Lines shown per bug (the JSON report has them all).
const SHOWN: usize = 5;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::triage::report::tests::entry;
    use proptest::prelude::*;
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

    /// What `markdown` parses to (GitHub-flavoured: tables on): the code
    /// spans, the other text, and whether anything else inline (a link, an
    /// image, HTML, emphasis) came out; with a table, the cells per row.
    struct Parsed {
        code: Vec<String>,
        text: Vec<String>,
        other: Vec<String>,
        cells: Vec<usize>,
    }

    fn parse(markdown: &str) -> Parsed {
        let mut p = Parsed {
            code: Vec::new(),
            text: Vec::new(),
            other: Vec::new(),
            cells: Vec::new(),
        };
        let mut cells = 0;
        let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
        for event in Parser::new_ext(markdown, options) {
            match event {
                Event::Code(c) => p.code.push(c.into_string()),
                Event::Text(t) => p.text.push(t.into_string()),
                Event::Start(Tag::TableCell) => cells += 1,
                Event::End(TagEnd::TableHead | TagEnd::TableRow) => {
                    p.cells.push(cells);
                    cells = 0;
                }
                Event::Start(
                    Tag::Paragraph
                    | Tag::Table(_)
                    | Tag::TableHead
                    | Tag::TableRow
                    | Tag::List(_)
                    | Tag::Item,
                )
                | Event::End(_)
                | Event::SoftBreak => {}
                e => p.other.push(format!("{e:?}")),
            }
        }
        p
    }

    #[test]
    fn code_spans_take_a_longer_fence_and_pad_edges() {
        assert_eq!(code("a"), "`a`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("x`y``z```w"), "````x`y``z```w````");
        assert_eq!(code("`a`"), "`` `a` ``");
        assert_eq!(code(" a "), "`  a  `");
        assert_eq!(code(" "), "` `");
        assert_eq!(code(""), "");
        assert_eq!(code("a\nb\r\nc\rd"), "`a␤b␤c␤d`");
        assert_eq!(
            code("\0\u{1b}[31m\u{7f}\u{85}\u{202e}\t"),
            "` ␀␛[31m␡\u{fffd}\u{fffd}  `"
        );
        assert_eq!(cell("a|b"), "`a\\|b`");
        assert_eq!(cell("a\\|b"), "`a\\\\|b`");
    }

    #[test]
    fn plain_status_words_stay_words() {
        assert_eq!(status_word("reduced"), "reduced");
        assert_eq!(status_word("**x**"), "`**x**`");
        assert_eq!(status_word(""), "");
    }

    proptest! {
        /// Any text, in a table cell or in a line, is one code span of
        /// exactly its visible form, and a cell stays one cell.
        #[test]
        fn any_text_is_one_code_span(
            text in "[a-z `|<>\\[\\]()!@*_\\\\~&#;:\n\r\t\u{0}\u{1b}\u{85}\u{202e}é]{0,24}"
        ) {
            let shown = visible(&text);
            let want: Vec<String> = if shown.is_empty() { vec![] } else { vec![shown] };
            let table = format!("| a | b | c |\n|---|---|---|\n| x | {} | y |\n", cell(&text));
            let t = parse(&table);
            prop_assert_eq!(&t.cells, &vec![3, 3], "{}", table);
            prop_assert_eq!(&t.code, &want, "{}", table);
            prop_assert!(t.other.is_empty(), "{:?} in {}", t.other, table);
            prop_assert_eq!(t.text.concat(), "abcxy", "{}", table);
            let line = format!("- x {} y\n", code(&text));
            let l = parse(&line);
            prop_assert_eq!(&l.code, &want, "{}", line);
            prop_assert!(l.other.is_empty(), "{:?} in {}", l.other, line);
            prop_assert_eq!(l.text.concat().replace(' ', ""), "xy", "{}", line);
        }
    }

    #[test]
    fn a_row_per_bug_with_its_history() {
        let mut r = Report::new(None, 5, 1);
        r.bugs = vec![entry("f1", "reduced", &["a", "b"], Some(3))];
        r.bugs[0].history = Some(History::New);
        let md = render(&r);
        assert!(
            md.starts_with("## Fuzzing crashes: 1 bug (1 new, 0 fixed since the baseline)"),
            "{md}"
        );
        assert!(
            md.contains(
                "| `f1` | NOT_EXPLOITABLE (`panic(unwrap)`) | **new** | `parse` | 2 | 100 → 3 B |"
            ),
            "{md}"
        );
        assert_eq!(md.lines().filter(|l| l.starts_with("| `")).count(), 1);
        assert!(!md.contains("Lines only"), "{md}");
    }

    #[test]
    fn lines_only_crashing_inputs_ran_follow_the_table() {
        let mut r = Report::new(None, 1, 0);
        r.bugs = vec![entry("f1", "reduced", &["a"], Some(3))];
        r.bugs[0].failing_lines = (1..=7)
            .map(|line| crate::triage::report::SourceLocation {
                file: "src/lib.rs".into(),
                in_repository: true,
                line,
                column: None,
            })
            .collect();
        let md = render(&r);
        assert!(
            md.ends_with(
                "### Lines only crashing inputs ran\n\n- `f1`: `src/lib.rs:1`, `src/lib.rs:2`, \
                 `src/lib.rs:3`, `src/lib.rs:4`, `src/lib.rs:5` and 2 more\n"
            ),
            "{md}"
        );
    }
}
