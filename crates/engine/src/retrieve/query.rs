//! The query a retriever answers: a cursor in a file, and the text around it.

use std::ops::Range;
use std::sync::Arc;

use super::{Hit, RetrieveError};
use crate::Position;
use crate::chunk::is_blank;
use crate::lang::Language;
use crate::workspace::offset_of;

/// Lines before the cursor, plus the cursor's line, that make up the query's own region.
pub const OWN_REGION_LINES: u32 = 20;

/// A cursor in a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    /// Workspace-relative, `/`-separated.
    pub path: String,
    /// The repository's name (its folder's), which the `repo` prompt layout writes; empty when
    /// unknown.
    pub repo: String,
    pub language: Option<Language>,
    pub cursor: Position,
    /// The file's text before the cursor.
    pub left: String,
    /// The file's text after the cursor.
    pub right: String,
    /// What the oracle may see: the reference completion. At a plain cursor, `None` means the
    /// rest of the cursor's line (CrossCodeEval's convention).
    pub reference: Option<String>,
    /// Context a benchmark case ships with, for the `dataset` retriever.
    pub provided: Option<Vec<Hit>>,
    /// What retrievers search with instead of the lines before the cursor (EvoCodeBench: the
    /// signature and the requirement, Drain et al.'s docstring query); `None` for a cursor.
    pub search_text: Option<String>,
    /// What the user had open or edited lately, newest first, for the `recent` retriever
    /// ([`super::Ring::chunks`]); empty where nobody noted any.
    pub recent: Arc<[Hit]>,
    /// What a benchmark case names as recently open or edited, newest first (a history case:
    /// the other files its commit changes, as committed), for the `recent-commit` retriever
    /// alone: no other retriever reads it, so no other spec's answer knows the commit.
    pub case_recent: Arc<[Hit]>,
}

impl Query {
    /// A query at `cursor` in `text`, the content of workspace-relative `path`.
    pub fn new(path: &str, text: &str, cursor: Position) -> Result<Query, RetrieveError> {
        let offset = offset_of(text, cursor).ok_or_else(|| RetrieveError::Cursor {
            path: path.into(),
            line: cursor.line,
            col: cursor.col,
        })?;
        Ok(Query {
            path: path.into(),
            repo: String::new(),
            language: Language::from_path(std::path::Path::new(path)),
            cursor,
            left: text[..offset].to_string(),
            right: text[offset..].to_string(),
            reference: None,
            provided: None,
            search_text: None,
            recent: Arc::from([]),
            case_recent: Arc::from([]),
        })
    }

    /// The same query in the repository named `repo` (the `repo` prompt layout writes it).
    pub fn in_repo(mut self, repo: &str) -> Query {
        self.repo = repo.to_string();
        self
    }

    /// The same query at the start of the cursor's line, what is typed on it so far moved to the
    /// right context; the query itself when nothing but blanks comes before that line. Live
    /// completion retrieves with it, so the chunks found stay the same while the user types
    /// along a line.
    pub fn at_line_start(&self) -> Query {
        let start = self.left.rfind('\n').map_or(0, |i| i + 1);
        if self.left[..start].trim().is_empty() {
            return self.clone();
        }
        Query {
            cursor: Position {
                line: self.cursor.line,
                col: 0,
            },
            left: self.left[..start].to_string(),
            right: format!("{}{}", &self.left[start..], self.right),
            // Field by field: `..self.clone()` would copy the whole file's text once more on
            // every keystroke only to drop it.
            path: self.path.clone(),
            repo: self.repo.clone(),
            language: self.language,
            reference: self.reference.clone(),
            provided: self.provided.clone(),
            search_text: self.search_text.clone(),
            recent: Arc::clone(&self.recent),
            case_recent: Arc::clone(&self.case_recent),
        }
    }

    /// The lines of the query's own file that no hit may overlap: the cursor's line and the
    /// [`OWN_REGION_LINES`] lines before it.
    pub fn own_region(&self) -> Range<u32> {
        self.cursor.line.saturating_sub(OWN_REGION_LINES)..self.cursor.line + 1
    }

    /// Whether a chunk of `path` covering `lines` overlaps the query's own region.
    pub fn overlaps_own_region(&self, path: &str, lines: &Range<u32>) -> bool {
        let own = self.own_region();
        path == self.path && lines.start < own.end && own.start < lines.end
    }

    /// The reference the oracle sees: the given one, else the rest of the cursor's line.
    pub fn reference_or_rest_of_line(&self) -> &str {
        match &self.reference {
            Some(reference) => reference,
            None => self.right.split('\n').next().unwrap_or(""),
        }
    }

    /// The text a retriever searches with: [`Query::search_text`] when set, else `window` of
    /// the left context (the retriever's own cut of the lines before the cursor).
    pub fn search_window(&self, window: impl FnOnce(&str) -> String) -> String {
        match &self.search_text {
            Some(text) => text.clone(),
            None => window(&self.left),
        }
    }

    /// The last `n` non-blank lines of `text`, joined with `\n` (CrossCodeEval's query window).
    pub fn last_nonblank_lines(text: &str, n: usize) -> String {
        let mut lines: Vec<&str> = text
            .split('\n')
            .rev()
            .filter(|l| !is_blank(l))
            .take(n)
            .collect();
        lines.reverse();
        lines.join("\n")
    }

    /// The last `n` lines of `text` (the cursor's partial line included), joined with `\n`.
    pub fn last_lines(text: &str, n: usize) -> String {
        let mut lines: Vec<&str> = text.split('\n').rev().take(n).collect();
        lines.reverse();
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_splits_the_text_at_the_cursor() {
        let text = "import os\n\n\ndef f():\n    return os.path.join(a, b)\n";
        let q = Query::new("pkg/m.py", text, Position { line: 4, col: 14 }).expect("cursor inside");
        assert_eq!(q.left, "import os\n\n\ndef f():\n    return os.");
        assert_eq!(q.reference_or_rest_of_line(), "path.join(a, b)");
        assert_eq!(
            Query::last_nonblank_lines(&q.left, 2),
            "def f():\n    return os."
        );
        assert_eq!(Query::last_lines(&q.left, 2), "def f():\n    return os.");
        assert_eq!(q.own_region(), 0..5);
        assert!(q.overlaps_own_region("pkg/m.py", &(4..9)));
        assert!(!q.overlaps_own_region("pkg/m.py", &(5..9)));
        assert!(!q.overlaps_own_region("pkg/other.py", &(0..9)));
        assert!(Query::new("pkg/m.py", text, Position { line: 9, col: 0 }).is_err());
    }
}
