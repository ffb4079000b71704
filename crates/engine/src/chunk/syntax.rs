//! Syntax chunks: one per function, method or class from the outline; the rest in windows.

use std::cmp::Reverse;
use std::ops::Range;

use super::{Chunk, ChunkerSettings};
use crate::lang::{Outline, SymbolKind};

/// Cuts a file into definition chunks and windows of the code between them.
///
/// Each top-level definition that fits in `syntax_max_lines` is one chunk. A longer class gives
/// its header (the lines before its first member) and each member, recursively; anything still
/// too long is cut into windows of `syntax_max_lines`. The lines no definition chunk covers form
/// runs; each run, without its leading and trailing blank lines, is cut into windows of
/// `fixed_lines`, each trimmed the same way. Windows of blank lines only are dropped. Chunks
/// come sorted and disjoint.
pub(super) fn chunks(
    blank: &[bool],
    settings: &ChunkerSettings,
    outline: Option<&Outline>,
) -> Vec<Chunk> {
    let mut cut = Cutter {
        blank,
        pos: 0,
        out: Vec::new(),
    };
    if let Some(outline) = outline {
        let max = settings.syntax_max_lines.max(1);
        let (defs, roots) = forest(outline, to_u32(blank.len()));
        for root in roots {
            cut.definition(&defs, root, max);
        }
    }
    let mut all = gaps(blank, &cut.out, settings.fixed_lines.max(1));
    all.append(&mut cut.out);
    all.sort_unstable_by_key(|chunk| chunk.lines.start);
    all
}

/// A definition and the definitions it contains.
struct Def {
    lines: Range<u32>,
    class: bool,
    /// Indices into the forest, by start line.
    children: Vec<usize>,
}

/// Nests the outline's symbols by line containment; returns every definition and the
/// top-level ones. A symbol that overlaps another without being inside it becomes its sibling;
/// the cutter clips the overlap.
fn forest(outline: &Outline, line_count: u32) -> (Vec<Def>, Vec<usize>) {
    let mut symbols: Vec<_> = outline
        .symbols
        .iter()
        .map(|sym| {
            (
                sym.lines.start..sym.lines.end.min(line_count),
                sym.kind == SymbolKind::Class,
            )
        })
        .filter(|(lines, _)| !lines.is_empty())
        .collect();
    symbols.sort_by_key(|(lines, _)| (lines.start, Reverse(lines.end)));
    let mut defs: Vec<Def> = Vec::with_capacity(symbols.len());
    let mut roots = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for (lines, class) in symbols {
        while open
            .last()
            .is_some_and(|&top| defs[top].lines.end < lines.end)
        {
            open.pop();
        }
        let index = defs.len();
        match open.last() {
            Some(&parent) => defs[parent].children.push(index),
            None => roots.push(index),
        }
        defs.push(Def {
            lines,
            class,
            children: Vec::new(),
        });
        open.push(index);
    }
    (defs, roots)
}

/// Emits definition chunks in line order, never before `pos`, so they never overlap.
struct Cutter<'a> {
    blank: &'a [bool],
    /// The first line not yet given to a chunk.
    pos: u32,
    out: Vec<Chunk>,
}

impl Cutter<'_> {
    fn definition(&mut self, defs: &[Def], index: usize, max: u32) {
        let def = &defs[index];
        let lines = def.lines.start.max(self.pos)..def.lines.end;
        if lines.is_empty() {
            return;
        }
        if lines.len() <= max as usize {
            self.windows(lines, max);
            return;
        }
        match def.children.first() {
            Some(&first) if def.class => {
                let header_end = defs[first].lines.start.clamp(lines.start, lines.end);
                let header = trim_end(self.blank, lines.start..header_end);
                self.windows(header, max);
                for &child in &def.children {
                    self.definition(defs, child, max);
                }
            }
            _ => self.windows(lines, max),
        }
    }

    /// Consecutive windows of at most `size` lines over `lines`, blank-only ones dropped.
    fn windows(&mut self, lines: Range<u32>, size: u32) {
        for window in windows(lines, size) {
            if !all_blank(self.blank, &window) {
                self.out.push(Chunk {
                    lines: window.clone(),
                });
            }
            self.pos = self.pos.max(window.end);
        }
    }
}

/// Windows of `size` lines over the runs of lines that no chunk in `taken` (sorted, disjoint)
/// covers. Runs, then windows, are trimmed of leading and trailing blank lines.
fn gaps(blank: &[bool], taken: &[Chunk], size: u32) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut run_start = 0;
    let ends = taken
        .iter()
        .map(|chunk| chunk.lines.clone())
        .chain(std::iter::once(to_u32(blank.len())..u32::MAX));
    for next in ends {
        let run = trim_end(
            blank,
            trim_start(blank, run_start..next.start.max(run_start)),
        );
        for window in windows(run, size) {
            let window = trim_end(blank, trim_start(blank, window));
            if !window.is_empty() {
                out.push(Chunk { lines: window });
            }
        }
        run_start = run_start.max(next.end);
    }
    out
}

/// `lines` cut into consecutive windows of at most `size` lines.
fn windows(lines: Range<u32>, size: u32) -> impl Iterator<Item = Range<u32>> {
    let end = lines.end;
    lines
        .step_by(size as usize)
        .map(move |start| start..start.saturating_add(size).min(end))
}

fn all_blank(blank: &[bool], lines: &Range<u32>) -> bool {
    blank
        .get(lines.start as usize..lines.end as usize)
        .is_none_or(|lines| !lines.contains(&false))
}

fn trim_start(blank: &[bool], mut lines: Range<u32>) -> Range<u32> {
    while lines.start < lines.end && blank.get(lines.start as usize).copied().unwrap_or(true) {
        lines.start += 1;
    }
    lines
}

fn trim_end(blank: &[bool], mut lines: Range<u32>) -> Range<u32> {
    while lines.start < lines.end && blank.get(lines.end as usize - 1).copied().unwrap_or(true) {
        lines.end -= 1;
    }
    lines
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
