//! Converting between 1-based character positions (the command line's) and engine positions.

use super::WorkspaceError;
use crate::Position;

/// The byte offset where each line starts (lines split on `\n`; there is always line 0).
pub fn line_start_offsets(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// The byte offset of `position` in `text`, if the position is inside it.
pub fn offset_of(text: &str, position: Position) -> Option<usize> {
    let line_start = line_start_offsets(text)
        .get(position.line as usize)
        .copied()?;
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let offset = line_start + position.col as usize;
    (offset <= line_end && text.is_char_boundary(offset)).then_some(offset)
}

/// Whether `a` and `b` are the same text but for line `line` (0-based): the same lines before
/// it and after it.
pub fn differ_at_most_in_line(a: &str, b: &str, line: u32) -> bool {
    let (a_before, a_after) = around_line(a, line);
    let (b_before, b_after) = around_line(b, line);
    a_before == b_before && a_after == b_after
}

/// The text before line `line` and after its end (its `\n` included in neither).
fn around_line(text: &str, line: u32) -> (&str, &str) {
    let start = text
        .match_indices('\n')
        .nth((line as usize).wrapping_sub(1))
        .map_or(if line == 0 { 0 } else { text.len() }, |(i, _)| i + 1);
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    (&text[..start], &text[end..])
}

/// Converts a 1-based `line` and 1-based `col` counted in characters (Unicode scalar values) to
/// an engine position. The column may be one past the line's last character (end of line).
/// Errors name `path`, the line and the column.
pub fn position_from_chars(
    text: &str,
    path: &str,
    line: u64,
    col: u64,
) -> Result<Position, WorkspaceError> {
    let err = |message: String| WorkspaceError::Position {
        path: path.into(),
        line,
        col,
        message,
    };
    if line == 0 || col == 0 {
        return Err(err("lines and columns are 1-based".into()));
    }
    let starts = line_start_offsets(text);
    let Some(&start) = usize::try_from(line - 1).ok().and_then(|l| starts.get(l)) else {
        return Err(err(format!("the file has {} lines", starts.len())));
    };
    let line_text = text[start..].split('\n').next().unwrap_or("");
    let chars = line_text.chars().count() as u64;
    if col > chars + 1 {
        return Err(err(format!(
            "line {line} has {chars} characters; the column may be at most {}",
            chars + 1
        )));
    }
    let byte_col: usize = line_text
        .chars()
        .take((col - 1) as usize)
        .map(char::len_utf8)
        .sum();
    Ok(Position {
        line: (line - 1) as u32,
        col: byte_col as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_that_differ_only_in_one_line() {
        let before = "a\nbc\nd\n";
        assert!(differ_at_most_in_line(before, "a\nbcX\nd\n", 1));
        assert!(differ_at_most_in_line(before, "a\n\nd\n", 1));
        assert!(differ_at_most_in_line(before, before, 0));
        assert!(
            !differ_at_most_in_line(before, "a\nbcX\nd\n", 0),
            "another line"
        );
        assert!(
            !differ_at_most_in_line(before, "a\nb\nc\nd\n", 1),
            "a new line"
        );
        assert!(
            !differ_at_most_in_line(before, "a\nbc\nd\n\n", 1),
            "a line at the end"
        );
        assert!(differ_at_most_in_line("x", "xyz", 0), "the only line");
        assert!(
            differ_at_most_in_line("a\n", "a\nb", 1),
            "the last, empty line"
        );
        assert!(
            !differ_at_most_in_line("a", "ab", 5),
            "past the end: only equal texts"
        );
        assert!(differ_at_most_in_line("a", "a", 5));
    }

    #[test]
    fn character_columns_become_byte_columns() {
        let text = "ab\né🎉x\n";
        let at = |l, c| {
            position_from_chars(text, "f.py", l, c)
                .map(|p| (p.line, p.col))
                .ok()
        };
        assert_eq!(at(1, 1), Some((0, 0)));
        assert_eq!(at(1, 3), Some((0, 2)));
        assert_eq!(at(1, 4), None);
        assert_eq!(at(2, 3), Some((1, 6)));
        assert_eq!(at(2, 4), Some((1, 7)));
        assert_eq!(at(3, 1), Some((2, 0)));
        assert_eq!(at(4, 1), None);
        assert_eq!(at(0, 1), None);
        assert_eq!(at(u64::MAX, 1), None);
        assert_eq!(offset_of(text, Position { line: 1, col: 6 }), Some(9));
        assert_eq!(offset_of(text, Position { line: 1, col: 1 }), None);
    }
}
