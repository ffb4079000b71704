//! Chunkers: how a file is cut into the line ranges retrieval ranks.
//!
//! A chunk is a line range of one file. Its text is derived from the file's text by
//! [`Chunk::text`], so chunks cost two integers each in memory.
//!
//! Three chunkers, each giving 0-based half-open ranges: fixed windows (CrossCodeEval:
//! whitespace-only lines dropped, then non-overlapping windows of 10 kept lines, a chunk's text
//! its kept lines joined with `\n`), sliding windows (RepoCoder: 20 lines, stride 10, over all
//! lines) and syntax chunks (one per function, method or class of the outline; a long class
//! split into its header and members, a long definition into windows; top-level code in
//! windows). The sizes are the settings' defaults.

use std::ops::Range;

use crate::lang::Outline;

mod fixed;
mod lines;
mod sliding;
mod syntax;
#[cfg(test)]
mod tests;

use lines::Lines;

crate::choice! {
    /// Which chunker made a chunk (`[index] bm25_chunker` chooses the one `bm25` ranks).
    #[derive(PartialOrd, Ord)]
    pub enum ChunkerKind {
        /// Non-overlapping N-line windows over the non-blank lines (CrossCodeEval, N = 10).
        Fixed,
        /// Overlapping windows over all lines (RepoCoder: 20 lines, stride 10).
        Sliding,
        /// One chunk per function, method or class; long ones split; top-level code in windows.
        Syntax,
    }
}

/// Chunker parameters; part of the index key. A zero count behaves as 1.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ChunkerSettings {
    /// Lines per fixed window (CrossCodeEval: 10).
    pub fixed_lines: u32,
    /// Lines per sliding window (RepoCoder: 20).
    pub sliding_lines: u32,
    /// Step between sliding windows (RepoCoder: 10).
    pub sliding_stride: u32,
    /// Longest syntax chunk; longer definitions are split into windows of this many lines.
    pub syntax_max_lines: u32,
}

impl Default for ChunkerSettings {
    fn default() -> Self {
        ChunkerSettings {
            fixed_lines: 10,
            sliding_lines: 20,
            sliding_stride: 10,
            syntax_max_lines: 40,
        }
    }
}

/// A chunk: a 0-based, half-open range of the file's lines (lines split on `\n`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Chunk {
    /// The lines, 0-based and half-open.
    pub lines: Range<u32>,
}

impl Chunk {
    /// The chunk's text. Fixed windows join their non-blank lines with `\n` (blank lines are not
    /// part of a fixed window); the other kinds are the lines as they stand, joined with `\n`.
    /// Neither ends with a newline. Lines past the end of `file_text` are ignored.
    ///
    /// This scans `file_text` once; for many chunks of one file use [`chunk_texts`].
    pub fn text(&self, kind: ChunkerKind, file_text: &str) -> String {
        Lines::new(file_text).text(kind, self)
    }
}

/// The texts of `chunks` (each as [`Chunk::text`] gives it), splitting `file_text` only once.
/// One text at a time: a large file's chunk texts are never all in memory together.
pub fn chunk_texts<'a>(
    kind: ChunkerKind,
    file_text: &'a str,
    chunks: &'a [Chunk],
) -> impl Iterator<Item = String> + 'a {
    let lines = Lines::new(file_text);
    chunks.iter().map(move |chunk| lines.text(kind, chunk))
}

/// Cuts `text` into chunks of the given kind. `outline` is needed by [`ChunkerKind::Syntax`]
/// only; without it (an unparsable file) syntax chunking falls back to windows of `fixed_lines`
/// over all lines. Chunks come sorted by start line; no chunk is made of blank lines only.
pub fn chunk(
    kind: ChunkerKind,
    settings: &ChunkerSettings,
    text: &str,
    outline: Option<&Outline>,
) -> Vec<Chunk> {
    let blank: Vec<bool> = text.split('\n').map(is_blank).collect();
    match kind {
        ChunkerKind::Fixed => fixed::chunks(&blank, settings.fixed_lines),
        ChunkerKind::Sliding => {
            sliding::chunks(&blank, settings.sliding_lines, settings.sliding_stride)
        }
        ChunkerKind::Syntax => syntax::chunks(&blank, settings, outline),
    }
}

/// Whether a line counts as blank: Python's `not line.strip()` (Unicode whitespace only).
pub fn is_blank(line: &str) -> bool {
    line.chars().all(is_python_whitespace)
}

/// Python's `str.isspace()`: Unicode White_Space plus the ASCII separators U+001C..U+001F.
pub fn is_python_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}
