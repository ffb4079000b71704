//! A character diff of two texts (a line diff when they are too long for one), for the report's
//! suggestion-against-reference drill-down.
//!
//! The common prefix and suffix are cut off, the middle is diffed by longest common subsequence
//! over characters while that table stays under [`MAX_CELLS`], else over lines, else replaced
//! whole.

use crate::bench::scoring::{common_prefix, common_suffix};

/// The largest LCS table (cells) a diff builds.
pub const MAX_CELLS: usize = 1_000_000;

/// One run of a diff from `old` to `new`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffOp<'a> {
    /// In both texts.
    Equal(&'a str),
    /// Only in `old`.
    Delete(&'a str),
    /// Only in `new`.
    Insert(&'a str),
}

/// The runs that turn `old` into `new`: equal runs point into `new`, deletions into `old`.
pub fn diff<'a>(old: &'a str, new: &'a str) -> Vec<DiffOp<'a>> {
    let prefix = common_prefix(old, new);
    let suffix = common_suffix(&old[prefix..], &new[prefix..]);
    let (old_end, new_end) = (old.len() - suffix, new.len() - suffix);
    let mut runs = Runs::default();
    runs.push(Kind::Equal, 0..prefix);
    let chars_old = pieces(old, prefix..old_end, false);
    let chars_new = pieces(new, prefix..new_end, false);
    if chars_old.len().saturating_mul(chars_new.len()) <= MAX_CELLS {
        lcs(old, new, &chars_old, &chars_new, &mut runs);
    } else {
        let lines_old = pieces(old, prefix..old_end, true);
        let lines_new = pieces(new, prefix..new_end, true);
        if lines_old.len().saturating_mul(lines_new.len()) <= MAX_CELLS {
            lcs(old, new, &lines_old, &lines_new, &mut runs);
        } else {
            runs.push(Kind::Delete, prefix..old_end);
            runs.push(Kind::Insert, prefix..new_end);
        }
    }
    runs.push(Kind::Equal, new_end..new.len());
    runs.0
        .into_iter()
        .map(|(kind, range)| match kind {
            Kind::Equal => DiffOp::Equal(&new[range]),
            Kind::Delete => DiffOp::Delete(&old[range]),
            Kind::Insert => DiffOp::Insert(&new[range]),
        })
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Equal,
    Delete,
    Insert,
}

type Range = std::ops::Range<usize>;

/// Runs as byte ranges: of `new` for equal and inserted text, of `old` for deleted text.
#[derive(Default)]
struct Runs(Vec<(Kind, Range)>);

impl Runs {
    /// Appends a run, extending the previous one when it has the same kind and ends here.
    fn push(&mut self, kind: Kind, range: Range) {
        if range.is_empty() {
            return;
        }
        if let Some((last_kind, last)) = self.0.last_mut()
            && *last_kind == kind
            && last.end == range.start
        {
            last.end = range.end;
            return;
        }
        self.0.push((kind, range));
    }
}

/// The byte ranges of `text[span]`'s characters, or of its lines with their `\n`.
fn pieces(text: &str, span: Range, lines: bool) -> Vec<Range> {
    let base = span.start;
    let part = &text[span];
    if lines {
        let mut start = base;
        part.split_inclusive('\n')
            .map(|line| {
                let range = start..start + line.len();
                start = range.end;
                range
            })
            .collect()
    } else {
        part.char_indices()
            .map(|(i, c)| base + i..base + i + c.len_utf8())
            .collect()
    }
}

/// Longest-common-subsequence runs of two piece lists.
fn lcs(old_text: &str, new_text: &str, old: &[Range], new: &[Range], runs: &mut Runs) {
    let same = |i: usize, j: usize| old_text[old[i].clone()] == new_text[new[j].clone()];
    let (n, m) = (old.len(), new.len());
    let width = m + 1;
    // table[i * width + j]: LCS length of old[i..] and new[j..].
    let mut table = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[i * width + j] = if same(i, j) {
                table[(i + 1) * width + j + 1] + 1
            } else {
                table[(i + 1) * width + j].max(table[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if same(i, j) {
            runs.push(Kind::Equal, new[j].clone());
            i += 1;
            j += 1;
        } else if table[(i + 1) * width + j] >= table[i * width + j + 1] {
            runs.push(Kind::Delete, old[i].clone());
            i += 1;
        } else {
            runs.push(Kind::Insert, new[j].clone());
            j += 1;
        }
    }
    for piece in &old[i..] {
        runs.push(Kind::Delete, piece.clone());
    }
    for piece in &new[j..] {
        runs.push(Kind::Insert, piece.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(old: &str, new: &str) -> String {
        diff(old, new)
            .iter()
            .map(|op| match op {
                DiffOp::Equal(t) => t.to_string(),
                DiffOp::Delete(t) => format!("[-{t}-]"),
                DiffOp::Insert(t) => format!("{{+{t}+}}"),
            })
            .collect()
    }

    #[test]
    fn table() {
        let rows = [
            ("", "", ""),
            ("abc", "abc", "abc"),
            ("", "new", "{+new+}"),
            ("old", "", "[-old-]"),
            ("x + 2", "x + 1", "x + [-2-]{+1+}"),
            ("foo(a, b)", "foo(a, c, b)", "foo(a, {+c, +}b)"),
            ("naïve 😀 ok", "naive 😀 ok", "na[-ï-]{+i+}ve 😀 ok"),
            ("a\nb\nc\n", "a\nc\n", "a\n[-b\n-]c\n"),
            ("<script>", "<b>", "<[-script-]{+b+}>"),
        ];
        for (old, new, expected) in rows {
            assert_eq!(render(old, new), expected, "{old:?} -> {new:?}");
        }
    }

    #[test]
    fn long_texts_fall_back_to_lines_and_keep_every_character() {
        let old: String = (0..1500).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 700\n", "changed\n");
        let ops = diff(&old, &new);
        let kept_new: String = ops
            .iter()
            .filter_map(|op| match op {
                DiffOp::Equal(t) | DiffOp::Insert(t) => Some(*t),
                DiffOp::Delete(_) => None,
            })
            .collect();
        let kept_old: String = ops
            .iter()
            .filter_map(|op| match op {
                DiffOp::Equal(t) | DiffOp::Delete(t) => Some(*t),
                DiffOp::Insert(_) => None,
            })
            .collect();
        assert_eq!((kept_old, kept_new), (old, new));
    }
}
