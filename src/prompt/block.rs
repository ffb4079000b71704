//! The cross-file block, formatted as CrossCodeEval formats its `crossfile_context.text`.

use crate::lang::Language;
use crate::retrieve::Hit;

/// `# Here are some relevant code fragments from other files of the repo:`, a blank line, then
/// per hit `# the below code fragment can be found in:`, `# <path>`, the chunk's lines each
/// prefixed by `# `, and a blank line (`//` instead of `#` outside Python). Empty without hits.
///
/// The chunk's lines are Python's `chunk.strip('\n').splitlines()`: only `\n` is stripped from
/// the ends, and lines break at `\r\n`, `\r`, `\x0b`, `\x0c`, `\x1c`, `\x1d`, `\x1e`, `\x85`,
/// U+2028 and U+2029 as well as `\n`.
pub fn crossfile_block(language: Language, hits: &[Hit]) -> String {
    let chunks: Vec<Chunk<'_>> = hits.iter().map(Chunk::new).collect();
    render(language.comment_prefix(), &chunks, Cut::whole(&chunks))
}

/// A hit's path and the lines of its text, ready to format.
pub(super) struct Chunk<'a> {
    path: &'a str,
    lines: Vec<&'a str>,
}

impl<'a> Chunk<'a> {
    pub(super) fn new(hit: &'a Hit) -> Chunk<'a> {
        Chunk {
            path: &hit.path,
            lines: python_splitlines(hit.text.trim_matches('\n')),
        }
    }
}

/// How much of the chunks a block holds: the first `whole` chunks, then the first `lines` lines
/// of the next one (when `lines` is `Some`, that chunk is in the block, possibly with no lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cut {
    pub(super) whole: usize,
    pub(super) lines: Option<usize>,
}

impl Cut {
    pub(super) fn whole(chunks: &[Chunk<'_>]) -> Cut {
        Cut {
            whole: chunks.len(),
            lines: None,
        }
    }

    /// How many hits the block shows, whole or cut.
    pub(super) fn hits_used(self) -> usize {
        self.whole + usize::from(self.lines.is_some())
    }

    /// Every cut from the largest (all chunks whole) to the smallest (the empty block), each
    /// one line smaller than the one before: lines go from the end of the last chunk kept, and
    /// a chunk with no line left goes with its header.
    pub(super) fn all_descending(chunks: &[Chunk<'_>]) -> Vec<Cut> {
        let mut cuts = vec![Cut::whole(chunks)];
        for (whole, chunk) in chunks.iter().enumerate().rev() {
            let most = chunk.lines.len().saturating_sub(1);
            cuts.extend((1..=most).rev().map(|lines| Cut {
                whole,
                lines: Some(lines),
            }));
            cuts.push(Cut { whole, lines: None });
        }
        cuts
    }
}

/// The block of `cut`; empty when it holds no chunk.
pub(super) fn render(prefix: &str, chunks: &[Chunk<'_>], cut: Cut) -> String {
    let whole = chunks.get(..cut.whole).unwrap_or(chunks);
    let partial = cut
        .lines
        .and_then(|n| chunks.get(cut.whole).map(|c| (c, n.min(c.lines.len()))));
    if whole.is_empty() && partial.is_none() {
        return String::new();
    }
    let mut out =
        format!("{prefix} Here are some relevant code fragments from other files of the repo:\n\n");
    let parts = whole.iter().map(|c| (c, c.lines.len())).chain(partial);
    for (chunk, n) in parts {
        out.push_str(prefix);
        out.push_str(" the below code fragment can be found in:\n");
        out.push_str(prefix);
        out.push(' ');
        out.push_str(chunk.path);
        out.push('\n');
        for (i, line) in chunk.lines.iter().take(n).enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(prefix);
            out.push(' ');
            out.push_str(line);
        }
        out.push_str("\n\n");
    }
    out
}

/// Python's `str.splitlines()` (without the line ends): no empty last line after a final break.
fn python_splitlines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let end = match c {
            '\r' => match chars.peek() {
                Some(&(next, '\n')) => {
                    chars.next();
                    next + 1
                }
                _ => at + 1,
            },
            '\n' | '\u{0b}' | '\u{0c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}'
            | '\u{2029}' => at + c.len_utf8(),
            _ => continue,
        };
        lines.push(&text[start..at]);
        start = end;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::python_splitlines;

    #[test]
    fn splitlines_follows_python() {
        let rows: [(&str, &[&str]); 9] = [
            ("", &[]),
            ("a", &["a"]),
            ("a\n", &["a"]),
            ("a\n\nb", &["a", "", "b"]),
            ("a\r\nb\rc", &["a", "b", "c"]),
            ("a\r\r\nb", &["a", "", "b"]),
            (
                "a\u{0b}b\u{0c}c\u{1c}d\u{1d}e\u{1e}f",
                &["a", "b", "c", "d", "e", "f"],
            ),
            ("é\u{85}😀\u{2028}x\u{2029}", &["é", "😀", "x"]),
            ("\u{1f}a\tb", &["\u{1f}a\tb"]),
        ];
        for (text, expected) in rows {
            assert_eq!(python_splitlines(text), expected, "{text:?}");
        }
    }
}
