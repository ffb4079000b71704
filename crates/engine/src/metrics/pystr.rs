//! Python `str` semantics the scripts rely on: `strip()`, `splitlines()` and `split("\n")`.

use crate::chunk::is_python_whitespace;

/// Python's `str.strip()`: removes Unicode whitespace (`str.isspace()`, which includes `\r`,
/// `\x1c`..`\x1f`, U+0085 and U+2028) from both ends.
pub fn strip(text: &str) -> &str {
    text.trim_matches(is_python_whitespace)
}

/// Python's `str.splitlines()` (without `keepends`): lines end at `\n`, `\r\n`, `\r`, `\x0b`,
/// `\x0c`, `\x1c`, `\x1d`, `\x1e`, U+0085, U+2028 or U+2029. A final line break does not start
/// another line, and the empty string has no lines.
pub fn splitlines(text: &str) -> Vec<&str> {
    splitlines_keepends(text)
        .into_iter()
        .map(|line| {
            let ending = if line.ends_with("\r\n") {
                2
            } else {
                line.chars()
                    .next_back()
                    .filter(|&c| is_line_boundary(c))
                    .map_or(0, char::len_utf8)
            };
            &line[..line.len() - ending]
        })
        .collect()
}

/// Python's `str.splitlines(keepends=True)`: [`splitlines`]' lines, each with the break that
/// ends it.
pub fn splitlines_keepends(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if !is_line_boundary(c) {
            continue;
        }
        let mut end = at + c.len_utf8();
        if c == '\r' && chars.peek().is_some_and(|&(_, next)| next == '\n') {
            chars.next();
            end += 1;
        }
        lines.push(&text[start..end]);
        start = end;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// The stripped lines that are not empty after stripping, in order: the line lists both
/// CrossCodeEval (over `split("\n")`) and RepoCoder (over `splitlines()`) compare.
pub fn stripped_nonempty<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    lines
        .into_iter()
        .map(strip)
        .filter(|line| !line.is_empty())
        .collect()
}

/// A line boundary of `str.splitlines()`.
fn is_line_boundary(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{0b}'
            | '\u{0c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitlines_keepends_follows_python() {
        // Values from CPython 3.11 `str.splitlines(True)`.
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("\n", &["\n"]),
            ("a\r\nb\rc", &["a\r\n", "b\r", "c"]),
            ("a\r\r\nb\u{2028}", &["a\r", "\r\n", "b\u{2028}"]),
        ];
        for (text, lines) in cases {
            assert_eq!(splitlines_keepends(text), *lines, "{text:?}");
        }
    }

    #[test]
    fn splitlines_follows_python() {
        // Values from CPython 3.11 `str.splitlines()`.
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("\n", &[""]),
            ("a", &["a"]),
            ("a\n", &["a"]),
            ("a\n\nb", &["a", "", "b"]),
            ("a\r\nb\rc\n", &["a", "b", "c"]),
            ("a\r\r\nb", &["a", "", "b"]),
            ("a\n\rb", &["a", "", "b"]),
            (
                "a\x0bb\x0cc\x1cd\x1de\x1ef",
                &["a", "b", "c", "d", "e", "f"],
            ),
            ("a\u{85}b\u{2028}c\u{2029}d", &["a", "b", "c", "d"]),
            // `\x1f` (unit separator) is whitespace to `strip()` but not a line boundary.
            ("a\x1fb", &["a\x1fb"]),
            ("é🎉\r", &["é🎉"]),
        ];
        for (text, want) in cases {
            assert_eq!(&splitlines(text), want, "splitlines({text:?})");
        }
    }

    #[test]
    fn strip_removes_python_whitespace() {
        assert_eq!(
            strip(" \t\r\n\x0b\x0c\x1c\x1f\u{85}\u{a0}\u{3000}x y\u{2028} "),
            "x y"
        );
        assert_eq!(strip(""), "");
        // U+200B (zero width space) is not whitespace to Python.
        assert_eq!(strip("\u{200b}x"), "\u{200b}x");
    }

    #[test]
    fn stripped_nonempty_drops_blank_lines() {
        assert_eq!(
            stripped_nonempty(" a \n\n \t\n b".split('\n')),
            vec!["a", "b"]
        );
        assert!(stripped_nonempty("".split('\n')).is_empty());
    }
}
