//! Putting a generated body into its file exactly as EvoCodeBench's `pass_k.py` does: the body is
//! re-indented (`textwrap.dedent`, then `textwrap.indent` to the case's indentation) and replaces
//! the reference body's lines as `["\n", body, "\n"]`.

use crossfile_engine::chunk::is_python_whitespace;
use crossfile_engine::metrics::splitlines_keepends;

/// The completion `pass_k.py` fails without running anything.
pub const PASS_ONLY: &str = "    pass\n";

/// `text` with the reference body, lines `first..=last` (1-based), replaced by `completion`
/// re-indented to `indent` spaces between two blank lines. `None` when the lines are not all in
/// the file.
pub fn splice(
    text: &str,
    first: usize,
    last: usize,
    completion: &str,
    indent: usize,
) -> Option<String> {
    let lines = splitlines_keepends(text);
    if first == 0 || first > last || last > lines.len() {
        return None;
    }
    let mut out = String::with_capacity(text.len() + completion.len() + 2);
    lines[..first - 1]
        .iter()
        .for_each(|line| out.push_str(line));
    out.push('\n');
    out.push_str(&adjust_indent(completion, indent));
    out.push('\n');
    lines[last..].iter().for_each(|line| out.push_str(line));
    Some(out)
}

/// `pass_k.py`'s `adjust_indent`: `textwrap.indent(textwrap.dedent(code), " " * indent)`.
pub fn adjust_indent(code: &str, indent: usize) -> String {
    indent_lines(&dedent(code), &" ".repeat(indent))
}

/// Python's `textwrap.dedent`: lines of only spaces and tabs become empty, then the longest
/// leading run of spaces and tabs common to every other line is removed from each.
pub fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|line| {
            if !line.is_empty() && line.bytes().all(|b| b == b' ' || b == b'\t') {
                ""
            } else {
                line
            }
        })
        .collect();
    let mut margin: Option<&str> = None;
    for line in &lines {
        if line.is_empty() {
            continue;
        }
        let end = line
            .bytes()
            .position(|b| b != b' ' && b != b'\t')
            .unwrap_or(line.len());
        let leading = &line[..end];
        margin = Some(match margin {
            None => leading,
            Some(m) if leading.starts_with(m) => m,
            Some(m) if m.starts_with(leading) => leading,
            Some(m) => {
                let common = m
                    .bytes()
                    .zip(leading.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                &m[..common]
            }
        });
    }
    let margin = margin.unwrap_or("");
    lines
        .iter()
        .map(|line| line.strip_prefix(margin).unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Python's `textwrap.indent(text, prefix)`: `prefix` before every line (`str.splitlines(True)`)
/// that is not only whitespace.
pub fn indent_lines(text: &str, prefix: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in splitlines_keepends(text) {
        if !line.trim_matches(is_python_whitespace).is_empty() {
            out.push_str(prefix);
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedent_follows_python() {
        // Values from CPython 3.11 `textwrap.dedent`.
        let cases = [
            ("    a\n      b\n", "a\n  b\n"),
            ("  a\n\tb\n", "  a\n\tb\n"),
            ("    a\n  \n    b", "a\n\nb"),
            ("\t  a\n\t b", " a\nb"),
            ("a\n    b", "a\n    b"),
            ("", ""),
            ("   ", ""),
            ("  x\r\n  y", "x\r\ny"),
            ("  \u{a0}x\n  y", "\u{a0}x\ny"),
        ];
        for (text, want) in cases {
            assert_eq!(dedent(text), want, "{text:?}");
        }
    }

    #[test]
    fn indent_follows_python() {
        // Values from CPython 3.11 `textwrap.indent(text, "  ")`.
        let cases = [
            ("a\n\nb\n", "  a\n\n  b\n"),
            ("a\n \t\nb", "  a\n \t\n  b"),
            ("a\rb\u{2028}c", "  a\r  b\u{2028}  c"),
            ("\u{a0}\n", "\u{a0}\n"),
        ];
        for (text, want) in cases {
            assert_eq!(indent_lines(text, "  "), want, "{text:?}");
        }
    }

    #[test]
    fn a_body_replaces_the_reference_lines_between_blank_lines() {
        let file = "def f(x):\n    \"\"\"Doc.\"\"\"\n    y = x\n    return y\n\nz = 1\n";
        let spliced = splice(file, 3, 4, "return x + 1\n", 4).expect("lines in the file");
        assert_eq!(
            spliced,
            "def f(x):\n    \"\"\"Doc.\"\"\"\n\n    return x + 1\n\n\nz = 1\n"
        );
        // A body indented deeper than the case's is dedented first.
        let spliced = splice(file, 3, 4, "        if x:\n            return 1\n", 4).expect("in");
        assert!(
            spliced.contains("\n    if x:\n        return 1\n\n"),
            "{spliced}"
        );
        assert_eq!(splice(file, 3, 9, "x", 4), None);
        assert_eq!(splice(file, 0, 1, "x", 4), None);
        assert_eq!(splice(file, 4, 3, "x", 4), None);
    }
}
