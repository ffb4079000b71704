//! What the person of `bench typing` types: seeded places in real files, the lines removed from
//! each, and the keystrokes that put them back, each with the wait before the next.
//!
//! At a place, lines `first..first + count` of a file are removed and an empty line left where
//! they were, indented as the first of them (the editor's auto-indent after Enter). The person
//! then types them again: each character of a line is a keystroke, and Enter is one keystroke
//! that inserts the newline and the next line's indentation, as an editor indents. When the last
//! keystroke is typed the file is as it was. After a keystroke that ends an identifier, an
//! operator or a line, the person pauses (looks for a suggestion); otherwise the next keystroke
//! follows at the typing pace.

use std::path::PathBuf;

use crossfile_engine::Position;
use crossfile_engine::lang::Language;
use crossfile_engine::seeded::SplitMix64;
use crossfile_engine::workspace::{self, WorkspaceSettings};

/// Shortest and longest text a place may remove, in characters (indentation not counted).
const TYPED_CHARS: std::ops::RangeInclusive<usize> = 12..=400;

/// A place where lines are removed and typed again.
#[derive(Clone, Debug)]
pub struct RetypedLines {
    /// The file, relative to the workspace and absolute.
    pub rel: String,
    pub abs: PathBuf,
    pub language: Language,
    /// The file as it is on disk (and as it is again after the last keystroke).
    pub original: String,
    /// The first removed line (0-based).
    pub first_line: usize,
    /// Where the cursor starts, as a byte offset of `original`: after the first removed line's
    /// indentation.
    pub start: usize,
    /// Where the removed text ends: the start of the line after it.
    pub end: usize,
    pub keystrokes: Vec<Keystroke>,
}

/// One keystroke: it inserts `original[at..to]` at `at` (the text before the cursor is always
/// `original[..at]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keystroke {
    pub at: usize,
    pub to: usize,
    /// The person pauses after it: an identifier, an operator or a line ends.
    pub pause: bool,
}

impl RetypedLines {
    /// The document as opened: the original with the removed lines replaced by one line holding
    /// the first one's indentation.
    pub fn opened_text(&self) -> String {
        format!(
            "{}\n{}",
            &self.original[..self.start],
            &self.original[self.end..]
        )
    }

    /// The document once everything up to `offset` of `original` is typed.
    pub fn text_at(&self, offset: usize) -> String {
        format!(
            "{}\n{}",
            &self.original[..offset],
            &self.original[self.end..]
        )
    }

    /// What `keystroke` inserts.
    pub fn typed(&self, keystroke: &Keystroke) -> &str {
        &self.original[keystroke.at..keystroke.to]
    }

    /// The position (0-based line, UTF-16 column) of a byte offset of `original`, which the
    /// document being typed shares up to the cursor.
    pub fn position(&self, offset: usize) -> Position {
        let before = &self.original[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Position {
            line: u32::try_from(before.matches('\n').count()).unwrap_or(u32::MAX),
            col: u32::try_from(before[line_start..].encode_utf16().count()).unwrap_or(u32::MAX),
        }
    }

    /// The byte offset of `original` at an LSP position (`{"line", "character"}`, UTF-16 column)
    /// in the text the document shares with it.
    pub fn offset_of(&self, position: &serde_json::Value) -> Option<usize> {
        let number = |key: &str| position.get(key)?.as_u64()?.try_into().ok();
        let (line, col): (usize, usize) = (number("line")?, number("character")?);
        let start = if line == 0 {
            0
        } else {
            self.original.match_indices('\n').nth(line - 1)?.0 + 1
        };
        let row = &self.original[start..];
        let row = &row[..row.find('\n').unwrap_or(row.len())];
        let mut units = 0;
        for (at, c) in row.char_indices() {
            if units == col {
                return Some(start + at);
            }
            units += c.len_utf16();
        }
        (units == col).then_some(start + row.len())
    }

    /// What the person types after the cursor at `offset`, as far as a suggestion of `lines`
    /// lines reaches: the rest of the cursor's line, and the following lines up to `lines` in
    /// all (the file's own lines after the removed ones count too).
    pub fn typed_next(&self, offset: usize, lines: usize) -> &str {
        let rest = &self.original[offset..];
        let mut end = 0;
        for _ in 0..lines.max(1) {
            match rest[end..].find('\n') {
                Some(i) if end + i + 1 < rest.len() => end += i + 1,
                Some(i) => return &rest[..end + i],
                None => return rest,
            }
        }
        rest[..end].strip_suffix('\n').unwrap_or(&rest[..end])
    }
}

/// Up to `n` places in the workspace's files, `lines` lines each, the same for the same files
/// and seed. Files with carriage returns are passed over.
pub fn places(
    root: &std::path::Path,
    settings: &WorkspaceSettings,
    n: usize,
    lines: usize,
    seed: u64,
) -> Result<Vec<RetypedLines>, workspace::WorkspaceError> {
    let files = workspace::discover(root, settings)?.files;
    let mut rng = SplitMix64(seed);
    let mut out = Vec::with_capacity(n);
    let mut tries = 0;
    while out.len() < n && !files.is_empty() && tries < n.saturating_mul(200).max(200) {
        tries += 1;
        let file = &files[rng.below(files.len())];
        let Ok(source) = workspace::read_source(&file.abs, settings.max_file_bytes) else {
            continue;
        };
        if source.text.contains('\r') {
            continue;
        }
        let starts = line_starts(&source.text);
        // The removed lines end with a newline: the last line of the file is never among them.
        let Some(candidates) = starts.len().checked_sub(lines).filter(|&c| c > 0) else {
            continue;
        };
        let first = rng.below(candidates);
        if let Some(place) = place_at(
            file.rel.clone(),
            file.abs.clone(),
            file.language,
            source.text,
            &starts,
            first,
            lines,
        ) {
            out.push(place);
        }
    }
    Ok(out)
}

/// Byte offsets where each line of `text` starts.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&i| i < text.len())
        .collect()
}

/// The place removing `count` lines from `first`, if each of them has code and together they
/// are neither too short nor too long to type.
fn place_at(
    rel: String,
    abs: PathBuf,
    language: Language,
    original: String,
    starts: &[usize],
    first: usize,
    count: usize,
) -> Option<RetypedLines> {
    let end = *starts.get(first + count)?;
    let removed = &original[starts[first]..end];
    if removed.lines().any(crossfile_engine::chunk::is_blank) {
        return None;
    }
    let typed: usize = removed
        .lines()
        .map(|l| l.trim_start().chars().count())
        .sum();
    if !TYPED_CHARS.contains(&typed) {
        return None;
    }
    let start = starts[first] + indentation(removed).len();
    let keystrokes = keystrokes(&original, start, end - 1);
    Some(RetypedLines {
        rel,
        abs,
        language,
        first_line: first,
        start,
        end,
        keystrokes,
        original,
    })
}

/// The leading spaces and tabs of `line`.
fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The keystrokes that type `text[start..end]`: a character each, Enter with the next line's
/// indentation; the last one, and each one that ends an identifier, an operator or a line, is
/// followed by a pause.
fn keystrokes(text: &str, start: usize, end: usize) -> Vec<Keystroke> {
    let mut out = Vec::new();
    let mut at = start;
    while at < end {
        let mut chars = text[at..end].chars();
        let Some(c) = chars.next() else { break };
        let mut to = at + c.len_utf8();
        if c == '\n' {
            to += indentation(&text[to..end]).len();
        }
        let next = text[to..].chars().next();
        let pause = c == '\n'
            || to >= end
            || match (Class::of(c), next.map(Class::of)) {
                (Class::Space, _) => false,
                (class, next) => next != Some(class),
            };
        out.push(Keystroke { at, to, pause });
        at = to;
    }
    out
}

/// What a typed character is part of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Identifier,
    Operator,
    Space,
}

impl Class {
    fn of(c: char) -> Class {
        if c.is_alphanumeric() || c == '_' || c == '$' {
            Class::Identifier
        } else if c.is_whitespace() {
            Class::Space
        } else {
            Class::Operator
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "def f(a):\n    x = a.b + 1\n    return x\n\nprint(f(2))\n";

    fn place(first: usize, count: usize) -> RetypedLines {
        let starts = line_starts(FILE);
        let path = PathBuf::from("/w/m.py");
        place_at(
            "m.py".into(),
            path,
            Language::Python,
            FILE.into(),
            &starts,
            first,
            count,
        )
        .expect("a place")
    }

    #[test]
    fn typing_every_keystroke_into_the_opened_text_gives_the_file_back() {
        let place = place(1, 2);
        assert_eq!(
            place.opened_text(),
            "def f(a):\n    \n\nprint(f(2))\n",
            "the removed lines leave one line indented as the first"
        );
        let mut text = place.opened_text();
        for k in &place.keystrokes {
            assert_eq!(
                &text[..k.at],
                &place.original[..k.at],
                "the text before the cursor"
            );
            text.insert_str(k.at, place.typed(k));
        }
        assert_eq!(text, FILE);
        let typed: Vec<&str> = place.keystrokes.iter().map(|k| place.typed(k)).collect();
        assert_eq!(typed[0], "x");
        assert!(
            typed.contains(&"\n    "),
            "Enter brings the indentation: {typed:?}"
        );
        assert_eq!(typed.last(), Some(&"x"));
    }

    #[test]
    fn an_lsp_position_is_the_offset_it_was_made_from() {
        let mut place = place(1, 2);
        place.original = "é = 1\n    b = '→x'\n".into();
        let at = |place: &RetypedLines, line: u32, character: u32| {
            place.offset_of(&serde_json::json!({"line": line, "character": character}))
        };
        for offset in (0..=place.original.len()).filter(|&o| place.original.is_char_boundary(o)) {
            let p = place.position(offset);
            assert_eq!(at(&place, p.line, p.col), Some(offset), "{p:?}");
        }
        // Inside a character of two UTF-16 units, past a line's end, past the last line.
        place.original = "a🎉b\n".into();
        assert_eq!(at(&place, 0, 2), None);
        assert_eq!(at(&place, 0, 3), Some(5));
        assert_eq!(at(&place, 0, 5), None);
        assert_eq!(at(&place, 2, 0), None);
        assert_eq!(at(&place, 1, 0), Some(7));
    }

    #[test]
    fn the_person_pauses_after_identifiers_operators_and_line_ends() {
        let place = place(1, 2);
        let paused: Vec<&str> = place
            .keystrokes
            .iter()
            .filter(|k| k.pause)
            .map(|k| &place.original[..k.to])
            .map(|before| before.rsplit(['\n']).next().unwrap_or_default())
            .collect();
        assert_eq!(
            paused,
            [
                "    x",
                "    x =",
                "    x = a",
                "    x = a.",
                "    x = a.b",
                "    x = a.b +",
                "    x = a.b + 1",
                "    ",
                "    return",
                "    return x",
            ]
        );
    }

    #[test]
    fn what_is_typed_next_reaches_as_many_lines_as_the_suggestion() {
        let place = place(1, 2);
        let after_x = place.start + 1;
        assert_eq!(place.typed_next(after_x, 1), " = a.b + 1");
        assert_eq!(place.typed_next(after_x, 2), " = a.b + 1\n    return x");
        assert_eq!(
            place.typed_next(after_x, 9),
            " = a.b + 1\n    return x\n\nprint(f(2))"
        );
        assert_eq!(
            place.position(after_x),
            Position { line: 1, col: 5 },
            "0-based line, UTF-16 column"
        );
    }

    #[test]
    fn places_skip_blank_lines_and_texts_too_short_to_type() {
        let starts = line_starts(FILE);
        let path = PathBuf::from("/w/m.py");
        let at = |first, count| {
            place_at(
                "m.py".into(),
                path.clone(),
                Language::Python,
                FILE.into(),
                &starts,
                first,
                count,
            )
        };
        assert!(at(2, 2).is_none(), "a blank line among the removed ones");
        assert!(at(2, 1).is_none(), "`return x` is too short to type");
        assert!(at(4, 1).is_none(), "the last line ends the file");
    }
}
