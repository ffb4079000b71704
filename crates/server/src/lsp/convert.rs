//! The one converter between LSP positions (UTF-16 code units) and engine positions (byte columns).
//!
//! LSP counts a column in UTF-16 code units (the default and only `positionEncoding` we announce)
//! and breaks lines at `\n`, `\r\n` and `\r`; the engine counts bytes and breaks at `\n` only.
//! Nothing here panics: a column past the line's end clamps to the end (as the specification
//! says), and a column inside a surrogate pair clamps to the start of its character.

use std::path::PathBuf;

use tower_lsp::lsp_types::{self, Url};

use crate::live::Spot;
use crossfile_engine::Position;

/// The byte column of UTF-16 column `character` in `line` (a line's text without its break).
pub fn byte_col(line: &str, character: u32) -> u32 {
    let mut units = 0u64;
    for (byte, ch) in line.char_indices() {
        let next = units + ch.len_utf16() as u64;
        if next > u64::from(character) {
            return to_u32(byte);
        }
        units = next;
    }
    to_u32(line.len())
}

/// The UTF-16 column of byte column `col` in `line`; a byte column inside a character counts
/// from that character's start, and one past the end clamps to the end.
pub fn utf16_col(line: &str, col: u32) -> u32 {
    let col = usize::try_from(col).unwrap_or(usize::MAX);
    let units: usize = line
        .char_indices()
        .take_while(|&(byte, ch)| byte + ch.len_utf8() <= col)
        .map(|(_, ch)| ch.len_utf16())
        .sum();
    to_u32(units)
}

/// The engine position of an LSP position on `line`, the text of line `position.line`. `None`
/// means the document has no such line: the column is then `u32::MAX`, which the document
/// store clamps to the end of the document, as the specification asks.
pub fn to_engine(line: Option<&str>, position: lsp_types::Position) -> Position {
    Position {
        line: position.line,
        col: line.map_or(u32::MAX, |text| byte_col(text, position.character)),
    }
}

/// The engine position of an LSP cursor in `text`, always inside it: a column past its line's
/// end is the line's end (as the specification says), and a line past the last one is the end
/// of the text (a client's position can be a keystroke behind or ahead of the buffer).
pub fn cursor_in(text: &str, position: lsp_types::Position) -> Position {
    match line_of(text, position.line) {
        Some(line) => to_engine(Some(line), position),
        None => {
            let last = text.rsplit('\n').next().unwrap_or_default();
            Position {
                line: to_u32(text.matches('\n').count()),
                col: to_u32(last.len()),
            }
        }
    }
}

/// The LSP position of an engine position on `line`, the text of line `position.line`.
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "engine-to-LSP positions come with crossfile.replayCase"
    )
)]
pub fn to_lsp(line: &str, position: Position) -> lsp_types::Position {
    lsp_types::Position {
        line: position.line,
        character: utf16_col(line, position.col),
    }
}

/// The line of `text` with 0-based number `line`, without its break.
pub fn line_of(text: &str, line: u32) -> Option<&str> {
    text.split('\n').nth(usize::try_from(line).ok()?)
}

/// The client's position as the engine keeps it ([`Spot`]: compared, never interpreted).
pub fn spot(position: lsp_types::Position) -> Spot {
    Spot {
        line: position.line,
        character: position.character,
    }
}

/// A kept [`Spot`] as the client's position again.
pub fn position_of(spot: Spot) -> lsp_types::Position {
    lsp_types::Position::new(spot.line, spot.character)
}

/// The local file a `file:` URI names; `None` for any other scheme.
pub fn file_path(uri: &Url) -> Option<PathBuf> {
    if uri.scheme() != "file" {
        return None;
    }
    uri.to_file_path().ok()
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_become_byte_columns() {
        // (line, UTF-16 column, byte column)
        let rows: &[(&str, u32, u32)] = &[
            ("", 0, 0),
            ("", 5, 0),
            ("abc", 0, 0),
            ("abc", 2, 2),
            ("abc", 3, 3),
            ("abc", 4, 3),
            ("abc", u32::MAX, 3),
            // é is 2 bytes and 1 unit.
            ("é=1", 1, 2),
            ("é=1", 2, 3),
            // 🎉 is 4 bytes and 2 units (a surrogate pair); a column inside it clamps to its start.
            ("🎉x", 0, 0),
            ("🎉x", 1, 0),
            ("🎉x", 2, 4),
            ("🎉x", 3, 5),
            ("x = '🎉🎉'.y", 9, 13),
            // 中 is 3 bytes and 1 unit.
            ("中文ab", 2, 6),
            ("中文ab", 3, 7),
        ];
        for &(line, character, col) in rows {
            assert_eq!(byte_col(line, character), col, "{line:?} at {character}");
        }
    }

    #[test]
    fn byte_columns_become_utf16_columns() {
        // (line, byte column, UTF-16 column)
        let rows: &[(&str, u32, u32)] = &[
            ("", 0, 0),
            ("", u32::MAX, 0),
            ("abc", 3, 3),
            ("abc", 9, 3),
            ("é=1", 2, 1),
            ("é=1", 1, 0),
            ("🎉x", 4, 2),
            ("🎉x", 2, 0),
            ("🎉x", 5, 3),
            ("中文ab", 6, 2),
        ];
        for &(line, col, character) in rows {
            assert_eq!(utf16_col(line, col), character, "{line:?} at {col}");
        }
    }

    #[test]
    fn positions_round_trip_on_character_boundaries() {
        let line = "s = \"é🎉中\" + x";
        for (byte, _) in line.char_indices().chain([(line.len(), ' ')]) {
            let col = u32::try_from(byte).unwrap_or(u32::MAX);
            let lsp = to_lsp(line, Position { line: 3, col });
            assert_eq!(to_engine(Some(line), lsp), Position { line: 3, col });
        }
        let past = lsp_types::Position {
            line: 7,
            character: 2,
        };
        assert_eq!(
            to_engine(None, past),
            Position {
                line: 7,
                col: u32::MAX
            }
        );
    }

    #[test]
    fn cursors_stay_inside_the_text() {
        // (text, LSP line, LSP character, engine line, engine byte column)
        let rows: &[(&str, u32, u32, u32, u32)] = &[
            ("", 0, 0, 0, 0),
            ("", 9999, 9999, 0, 0),
            ("ab\ncd", 1, 1, 1, 1),
            ("ab\ncd", 0, 9999, 0, 2),
            ("ab\ncd", 2, 0, 1, 2),
            ("ab\ncd", u32::MAX, u32::MAX, 1, 2),
            ("ab\n", 1, 5, 1, 0),
            ("ab\n", 9999, 9999, 1, 0),
            ("x = '🎉'", 9999, 0, 0, 10),
        ];
        for &(text, line, character, engine_line, col) in rows {
            let at = lsp_types::Position { line, character };
            let cursor = cursor_in(text, at);
            assert_eq!(
                cursor,
                Position {
                    line: engine_line,
                    col
                },
                "{text:?} at {line}:{character}"
            );
            assert!(
                crossfile_engine::workspace::offset_of(text, cursor).is_some(),
                "{text:?} at {line}:{character}"
            );
        }
    }

    #[test]
    fn lines_are_found_by_number() {
        assert_eq!(line_of("a\nbc\n", 1), Some("bc"));
        assert_eq!(line_of("a\nbc\n", 2), Some(""));
        assert_eq!(line_of("a\nbc\n", 3), None);
    }

    #[test]
    fn only_file_uris_name_files() {
        let file = Url::parse("file:///tmp/a%20b/c.py").ok();
        assert_eq!(
            file.as_ref().and_then(file_path),
            Some(PathBuf::from("/tmp/a b/c.py"))
        );
        let untitled = Url::parse("untitled:Untitled-1").ok();
        assert_eq!(untitled.as_ref().and_then(file_path), None);
    }
}
