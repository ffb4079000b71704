//! The cross-file block: formatted as CrossCodeEval formats its `crossfile_context.text` (the
//! `comment` layout), or as Qwen2.5-Coder's repository-level entries (the `repo` layout).

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

crate::choice! {
    /// How retrieved chunks are written before the file's own text.
    #[derive(Default)]
    pub enum CrossfileLayout {
        /// CrossCodeEval's: comment lines naming each chunk's file, the chunk commented out
        /// ([`crossfile_block`]).
        #[default]
        Comment,
        /// Qwen2.5-Coder's repository-level format: `<|repo_name|>{repo}\n`, each chunk as a file
        /// entry `<|file_sep|>{path}:{first}-{last}\n{lines}\n` (1-based lines), then
        /// `<|file_sep|>{path}\n` of the current file before its fill-in-the-middle prompt.
        Repo,
    }
}

/// The repository-level special tokens.
pub const REPO_NAME: &str = "<|repo_name|>";
pub const FILE_SEP: &str = "<|file_sep|>";

/// A hit's path, first line (0-based) and the lines of its text, ready to format.
pub(super) struct Chunk<'a> {
    path: &'a str,
    first: u32,
    lines: Vec<&'a str>,
}

impl<'a> Chunk<'a> {
    pub(super) fn new(hit: &'a Hit) -> Chunk<'a> {
        let text = hit.text.trim_matches('\n');
        // Lines stripped from the chunk's start move its first line on.
        let skipped = hit.text[..hit.text.len() - hit.text.trim_start_matches('\n').len()].len();
        Chunk {
            path: &hit.path,
            first: hit.lines.start + skipped as u32,
            lines: python_splitlines(text),
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

/// The chunks a cut keeps, each with how many of its lines.
fn kept<'c, 'a>(chunks: &'c [Chunk<'a>], cut: Cut) -> Vec<(&'c Chunk<'a>, usize)> {
    let whole = chunks.get(..cut.whole).unwrap_or(chunks);
    let partial = cut
        .lines
        .and_then(|n| chunks.get(cut.whole).map(|c| (c, n.min(c.lines.len()))));
    whole
        .iter()
        .map(|c| (c, c.lines.len()))
        .chain(partial)
        .collect()
}

/// The block of `cut` in `layout` (`prefix` is the comment prefix of the `comment` layout);
/// empty when it holds no chunk.
pub(super) fn render_as(
    layout: CrossfileLayout,
    prefix: &str,
    chunks: &[Chunk<'_>],
    cut: Cut,
) -> String {
    match layout {
        CrossfileLayout::Comment => render(prefix, chunks, cut),
        CrossfileLayout::Repo => render_repo(chunks, cut),
    }
}

/// `<|file_sep|>{path}:{first}-{last}\n{lines}\n` per chunk kept (lines 1-based, inclusive).
fn render_repo(chunks: &[Chunk<'_>], cut: Cut) -> String {
    let mut out = String::new();
    for (chunk, n) in kept(chunks, cut) {
        let first = chunk.first as usize + 1;
        let last = (first + n).saturating_sub(1).max(first);
        out.push_str(FILE_SEP);
        out.push_str(&format!("{}:{first}-{last}\n", chunk.path));
        for line in chunk.lines.iter().take(n) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The block of `cut`; empty when it holds no chunk.
pub(super) fn render(prefix: &str, chunks: &[Chunk<'_>], cut: Cut) -> String {
    let parts = kept(chunks, cut);
    if parts.is_empty() {
        return String::new();
    }
    let mut out =
        format!("{prefix} Here are some relevant code fragments from other files of the repo:\n\n");
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
