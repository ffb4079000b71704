//! What the user typed at a replayed case's cursor: the text an editor's buffer holds between the
//! case's unchanged left and right contexts, which is what `crossfile.score` scores.

/// The text `buffer` holds between `left` at its start and `right` at its end; an error naming
/// the line when either was changed. A line break an editor added at the end of a file that had
/// none is not the user's text.
pub fn typed_between<'a>(buffer: &'a str, left: &str, right: &str) -> Result<&'a str, String> {
    let had_no_eol = match right {
        "" => !left.is_empty() && !left.ends_with('\n'),
        right => !right.ends_with('\n'),
    };
    let buffer = match buffer.strip_suffix('\n') {
        Some(trimmed) if had_no_eol => trimmed,
        _ => buffer,
    };
    if !buffer.starts_with(left) {
        let at = common_prefix(buffer, left);
        return Err(format!(
            "the text before the case's cursor was changed (line {}): only the text at the \
             cursor can be scored; replay the case again to start over",
            line_at(buffer, at)
        ));
    }
    let end = buffer.len().checked_sub(right.len());
    match end {
        Some(end) if end >= left.len() && buffer.ends_with(right) => Ok(&buffer[left.len()..end]),
        _ => {
            let kept = common_suffix(&buffer[left.len()..], right);
            Err(format!(
                "the text after the case's cursor (its right context) was changed (line {}): only \
                 the text at the cursor can be scored; replay the case again to start over",
                line_at(buffer, buffer.len() - kept)
            ))
        }
    }
}

/// The 1-based line of byte `at` in `text`.
fn line_at(text: &str, at: usize) -> usize {
    text.get(..at).map_or(0, |t| t.matches('\n').count()) + 1
}

/// Byte length of the longest common prefix, on a character boundary.
pub fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map(|((i, _), _)| i)
        .unwrap_or_else(|| a.len().min(b.len()))
}

/// Byte length of the longest common suffix, on a character boundary.
pub fn common_suffix(a: &str, b: &str) -> usize {
    a.chars()
        .rev()
        .zip(b.chars().rev())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_between_unchanged_contexts_is_scored() {
        let left = "def f(x):\n    return ";
        let right = "\n\nprint(f(1))\n";
        let cases = [
            ("def f(x):\n    return x + 1\n\nprint(f(1))\n", Ok("x + 1")),
            ("def f(x):\n    return \n\nprint(f(1))\n", Ok("")),
            // A whole body, several lines, typed or accepted.
            (
                "def f(x):\n    return (\n        x\n    )\n\nprint(f(1))\n",
                Ok("(\n        x\n    )"),
            ),
            // Emoji and CJK around the cursor.
            (
                "def f(x):\n    return \"🎉中\"\n\nprint(f(1))\n",
                Ok("\"🎉中\""),
            ),
        ];
        for (buffer, want) in cases {
            assert_eq!(
                typed_between(buffer, left, right),
                want.map_err(|e: &str| e.to_string()),
                "{buffer:?}"
            );
        }
    }

    #[test]
    fn a_changed_prefix_or_suffix_is_refused_naming_the_line() {
        let left = "a = 1\nb = ";
        let right = "\nc = 3\n";
        let edited_prefix = typed_between("a = 2\nb = 2\nc = 3\n", left, right);
        assert!(
            edited_prefix
                .as_ref()
                .is_err_and(|e| e.contains("before the case's cursor") && e.contains("line 1")),
            "{edited_prefix:?}"
        );
        let edited_suffix = typed_between("a = 1\nb = 2\nc = 4\n", left, right);
        assert!(
            edited_suffix
                .as_ref()
                .is_err_and(|e| e.contains("right context") && e.contains("line 3")),
            "{edited_suffix:?}"
        );
        // Text deleted across the cursor: both ends still match, but they overlap.
        let overlap = typed_between("a = 1\nb = 3\n", "a = 1\nb = 3", "3\n");
        assert!(overlap.is_err(), "{overlap:?}");
        assert!(typed_between("", left, right).is_err());
    }

    #[test]
    fn an_end_of_line_an_editor_adds_is_not_the_users_text() {
        // The case's file had no final line break; the editor wrote one.
        assert_eq!(
            typed_between("x = 1\ny = 2\nz\n", "x = 1\ny = ", "\nz"),
            Ok("2")
        );
        // The cursor at the very end of such a file.
        assert_eq!(typed_between("x = 1\ny = 2\n", "x = 1\ny = ", ""), Ok("2"));
        // A file that had one keeps it, and a break the user typed stays theirs.
        assert_eq!(typed_between("x = 2\n\n", "x = ", "\n"), Ok("2\n"));
        assert_eq!(typed_between("x = 1\n\n", "x = 1\n", ""), Ok("\n"));
    }
}
