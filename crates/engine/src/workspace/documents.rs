//! The document store: open editor buffers, as ropes, overlaying the files on disk.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::RwLock;

use ropey::Rope;

use crate::Position;

/// Open buffers by workspace-relative path. Unsaved text wins over the disk.
///
/// Lines break at `\n` only, as everywhere in the engine ([`crate::workspace::line_start_offsets`]);
/// a caller whose text may hold `\r\n` or a lone `\r` turns them into `\n` first.
#[derive(Default)]
pub struct Documents {
    open: RwLock<HashMap<String, Rope>>,
}

impl Documents {
    /// Opens (or replaces) a buffer.
    pub fn open(&self, rel: &str, text: &str) {
        self.write().insert(rel.to_string(), Rope::from_str(text));
    }

    /// Replaces `range` of an open buffer with `text`; positions past the end are clamped.
    /// Returns false if the buffer is not open.
    pub fn edit(&self, rel: &str, range: Range<Position>, text: &str) -> bool {
        let mut open = self.write();
        let Some(rope) = open.get_mut(rel) else {
            return false;
        };
        let start = char_index(rope, range.start);
        let end = char_index(rope, range.end).max(start);
        rope.remove(start..end);
        rope.insert(start, text);
        true
    }

    /// Closes a buffer; the disk is the truth again.
    pub fn close(&self, rel: &str) {
        self.write().remove(rel);
    }

    /// The text of an open buffer (a cheap rope clone, turned into a string outside the lock).
    pub fn text(&self, rel: &str) -> Option<String> {
        let rope = self
            .open
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(rel)
            .cloned()?;
        Some(rope.to_string())
    }

    /// The text of line `line` (0-based) of an open buffer, without its line break; `None` if
    /// the buffer is not open or has no such line.
    pub fn line(&self, rel: &str, line: u32) -> Option<String> {
        let open = self.open.read().unwrap_or_else(|e| e.into_inner());
        let rope = open.get(rel)?;
        let line = usize::try_from(line).ok()?;
        if line >= rope.len_lines() {
            return None;
        }
        let text = rope.line(line).to_string();
        Some(text.strip_suffix('\n').map(str::to_string).unwrap_or(text))
    }

    /// At most `n` lines of an open buffer centred on `line` (0-based) where the buffer allows,
    /// joined with `\n`, and the first one's number; `None` if the buffer is not open.
    pub fn lines_around(&self, rel: &str, line: u32, n: u32) -> Option<(u32, String)> {
        let open = self.open.read().unwrap_or_else(|e| e.into_inner());
        let rope = open.get(rel)?;
        let total = u32::try_from(rope.len_lines()).unwrap_or(u32::MAX);
        let lines = centred(total, line, n);
        let from = rope.line_to_char(lines.start as usize);
        let to = rope.line_to_char(lines.end as usize);
        let text = rope.slice(from..to).to_string();
        Some((
            lines.start,
            text.strip_suffix('\n').map(str::to_string).unwrap_or(text),
        ))
    }

    /// Whether a buffer is open.
    pub fn is_open(&self, rel: &str) -> bool {
        self.open
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(rel)
    }

    /// Paths of the open buffers.
    pub fn open_paths(&self) -> Vec<String> {
        self.open
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Rope>> {
        self.open.write().unwrap_or_else(|e| e.into_inner())
    }
}

/// The char index of an engine position, clamped to the rope: a column past a line's text is
/// its end (before the line break), a line past the last is the end of the text.
fn char_index(rope: &Rope, position: Position) -> usize {
    let line = (position.line as usize).min(rope.len_lines().saturating_sub(1));
    let line_start_byte = rope.line_to_byte(line);
    let slice = rope.line(line);
    let line_len = slice.len_bytes() - usize::from(slice.chars().last() == Some('\n'));
    let byte = line_start_byte + (position.col as usize).min(line_len);
    rope.byte_to_char(byte)
}

/// The lines (0-based, half-open) of a text of `total` lines that a window of at most `n` lines
/// centred on `line` covers: shifted to fit where it would run past either end.
pub fn centred(total: u32, line: u32, n: u32) -> Range<u32> {
    let start = line.saturating_sub(n / 2).min(total.saturating_sub(n));
    start..total.min(start.saturating_add(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_to_open_buffers_only() {
        let docs = Documents::default();
        docs.open("a.py", "def f():\n    return 1\n");
        let p = |line, col| Position { line, col };
        assert!(docs.edit("a.py", p(1, 11)..p(1, 12), "42"));
        assert_eq!(
            docs.text("a.py").as_deref(),
            Some("def f():\n    return 42\n")
        );
        assert!(docs.edit("a.py", p(9, 0)..p(9, 0), "# end\n"));
        assert_eq!(
            docs.text("a.py").as_deref(),
            Some("def f():\n    return 42\n# end\n")
        );
        assert_eq!(docs.line("a.py", 1).as_deref(), Some("    return 42"));
        assert_eq!(docs.line("a.py", 3).as_deref(), Some(""));
        assert_eq!(docs.line("a.py", 4), None);
        assert!(docs.is_open("a.py"));
        assert!(!docs.edit("b.py", p(0, 0)..p(0, 0), "x"));
        docs.close("a.py");
        assert_eq!(docs.text("a.py"), None);
    }

    #[test]
    fn lines_break_at_newline_only() {
        let docs = Documents::default();
        docs.open("a.ts", "a\u{2028}b\rc\u{85}d\nz");
        assert_eq!(
            docs.line("a.ts", 0).as_deref(),
            Some("a\u{2028}b\rc\u{85}d")
        );
        assert_eq!(docs.line("a.ts", 1).as_deref(), Some("z"));
        assert_eq!(docs.line("a.ts", 2), None);
    }

    #[test]
    fn positions_past_a_line_or_the_text_clamp_to_their_end() {
        let docs = Documents::default();
        docs.open("a.py", "ab\ncd");
        let p = |line, col| Position { line, col };
        assert!(docs.edit("a.py", p(0, 99)..p(0, 99), "!"));
        assert!(docs.edit("a.py", p(7, u32::MAX)..p(7, u32::MAX), "?"));
        assert_eq!(docs.text("a.py").as_deref(), Some("ab!\ncd?"));
    }

    #[test]
    fn lines_around_a_line_are_centred_and_kept_inside_the_buffer() {
        let docs = Documents::default();
        let text: Vec<String> = (0..200).map(|i| format!("l{i}")).collect();
        docs.open("a.py", &text.join("\n"));
        let (first, lines) = docs.lines_around("a.py", 100, 64).expect("open");
        assert_eq!(first, 68);
        assert!(
            lines.starts_with("l68\n") && lines.ends_with("\nl131"),
            "{lines}"
        );
        assert_eq!(docs.lines_around("a.py", 3, 64).map(|(f, _)| f), Some(0));
        let (last, tail) = docs.lines_around("a.py", 199, 64).expect("open");
        assert_eq!((last, tail.lines().count()), (136, 64));
        docs.open("b.py", "x\ny");
        assert_eq!(
            docs.lines_around("b.py", 1, 64),
            Some((0, "x\ny".to_string()))
        );
        assert_eq!(docs.lines_around("c.py", 0, 64), None);
    }
}
