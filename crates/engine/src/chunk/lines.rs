//! A file's lines (split on `\n`, as the chunk ranges count them) and the chunk texts cut from them.

use std::ops::Range;

use super::{Chunk, ChunkerKind, is_blank};

/// The lines of one text: the text and where each line starts.
pub(super) struct Lines<'a> {
    text: &'a str,
    /// Byte offset of each line's start; a text always has at least one (possibly empty) line.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        let mut starts = Vec::with_capacity(text.len() / 32 + 1);
        starts.push(0);
        starts.extend(text.match_indices('\n').map(|(at, _)| at + 1));
        Lines { text, starts }
    }

    /// How many lines (a text ending in `\n` has an empty last line).
    pub(super) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Line `i` without its `\n`; empty past the end.
    pub(super) fn line(&self, i: usize) -> &'a str {
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&start), Some(&next)) => self.text.get(start..next - 1).unwrap_or(""),
            (Some(&start), None) => self.text.get(start..).unwrap_or(""),
            _ => "",
        }
    }

    /// The lines of `range` joined with `\n`, clamped to the text.
    pub(super) fn span(&self, range: Range<u32>) -> &'a str {
        let (start, end) = (range.start as usize, (range.end as usize).min(self.len()));
        if start >= end {
            return "";
        }
        let from = self.starts[start];
        let to = match self.starts.get(end) {
            Some(&next) => next - 1,
            None => self.text.len(),
        };
        self.text.get(from..to).unwrap_or("")
    }

    /// The text of `chunk` as a chunker of `kind` defines it (see [`Chunk::text`]).
    pub(super) fn text(&self, kind: ChunkerKind, chunk: &Chunk) -> String {
        match kind {
            ChunkerKind::Fixed => {
                let (start, end) = (
                    chunk.lines.start as usize,
                    (chunk.lines.end as usize).min(self.len()),
                );
                let mut out = String::new();
                for line in (start..end)
                    .map(|i| self.line(i))
                    .filter(|line| !is_blank(line))
                {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(line);
                }
                out
            }
            ChunkerKind::Sliding | ChunkerKind::Syntax => self.span(chunk.lines.clone()).to_owned(),
        }
    }
}
