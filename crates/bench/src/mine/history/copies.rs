//! Added files that are moves or copies of a file the parent already has. Git records a rename as
//! one file deleted and one added, and a copied file (a module duplicated into a new version's
//! folder, a class moved to another package) as added; either way the parent tree — the context —
//! holds nearly every line of the "new" file, so its cases would measure recall of the context,
//! not completion. A file is such a copy when at least a share of its lines (`--copy-similarity`,
//! 0.9 by default) occur in one file of the parent tree that is a likely source: a file the same
//! commit deletes (a move) or changes (a file split in two), a file with the same name (a copy
//! into another folder) or a file in the same folder (a sibling copied and renamed).

use std::collections::HashMap;
use std::path::Path;

use gix::ObjectId;

use super::HistoryError;
use super::git::{Commit, File, Repo};
use crossfile_engine::lang::Language;
use crossfile_engine::workspace::{normalize_newlines, relative_file_name, relative_folder};

/// What one commit's added files are compared with, each blob read once: the parent's versions
/// of the files the commit deletes or changes (of the same language family), and the parent
/// tree's files by name and by folder.
pub struct Sources<'a> {
    repo: &'a Repo,
    commit: &'a Commit,
    /// The parent tree's files, listed on first need.
    tree: Option<Tree>,
    texts: HashMap<ObjectId, Option<String>>,
}

/// The parent tree's blobs by file name and by folder.
#[derive(Default)]
struct Tree {
    by_name: HashMap<String, Vec<ObjectId>>,
    by_folder: HashMap<String, Vec<ObjectId>>,
}

impl<'a> Sources<'a> {
    pub fn new(repo: &'a Repo, commit: &'a Commit) -> Self {
        Sources {
            repo,
            commit,
            tree: None,
            texts: HashMap::new(),
        }
    }

    /// Whether `file` (added by the commit, with `text`) shares at least `min` of its lines
    /// with one of its likely sources.
    pub fn is_copy(&mut self, file: &File, text: &str, min: f64) -> Result<bool, HistoryError> {
        let family = Language::from_path(Path::new(&file.path)).map(Language::name);
        let mut blobs: Vec<ObjectId> = self
            .commit
            .deleted
            .iter()
            .chain(&self.commit.replaced)
            .filter(|d| Language::from_path(Path::new(&d.path)).map(Language::name) == family)
            .map(|d| d.blob)
            .collect();
        if self.tree.is_none() {
            let mut tree = Tree::default();
            for f in self.repo.files(self.commit.parent_tree)? {
                tree.by_name
                    .entry(relative_file_name(&f.path).to_string())
                    .or_default()
                    .push(f.blob);
                if Language::from_path(Path::new(&f.path)).is_some() {
                    tree.by_folder
                        .entry(relative_folder(&f.path).to_string())
                        .or_default()
                        .push(f.blob);
                }
            }
            self.tree = Some(tree);
        }
        if let Some(tree) = &self.tree {
            for same in [
                tree.by_name.get(relative_file_name(&file.path)),
                tree.by_folder.get(relative_folder(&file.path)),
            ]
            .into_iter()
            .flatten()
            {
                blobs.extend(same.iter().copied());
            }
        }
        blobs.sort();
        blobs.dedup();
        for blob in blobs {
            if blob == file.blob {
                return Ok(true);
            }
            let repo = self.repo;
            let other = self.texts.entry(blob).or_insert_with(|| {
                let bytes = repo.blob_if_present(blob)?;
                let text = String::from_utf8(bytes).ok()?;
                Some(normalize_newlines(&text).into_owned())
            });
            if other
                .as_deref()
                .is_some_and(|other| line_similarity(text, other) >= min)
            {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The share of `added`'s lines (trimmed, blank lines left out) that `other` also has, each line
/// of `other` matching at most once; 0 when `added` has no such line.
pub fn line_similarity(added: &str, other: &str) -> f64 {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for line in other.lines().map(str::trim).filter(|l| !l.is_empty()) {
        *counts.entry(line).or_default() += 1;
    }
    let mut total = 0usize;
    let mut shared = 0usize;
    for line in added.lines().map(str::trim).filter(|l| !l.is_empty()) {
        total += 1;
        if let Some(n) = counts.get_mut(line)
            && *n > 0
        {
            *n -= 1;
            shared += 1;
        }
    }
    if total == 0 {
        0.0
    } else {
        shared as f64 / total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_is_the_share_of_the_added_lines_the_other_file_has() {
        let added = "a\n  b\n\nc\nd\n";
        assert_eq!(line_similarity(added, added), 1.0);
        // Indentation and blank lines do not count; `d` is missing.
        assert_eq!(line_similarity(added, "a\nb\nc\n\n"), 0.75);
        assert_eq!(line_similarity(added, "x\ny\n"), 0.0);
        assert_eq!(line_similarity("\n\n", "a\n"), 0.0);
    }

    #[test]
    fn a_line_of_the_other_file_matches_once() {
        assert_eq!(line_similarity("}\n}\n}\n}\n", "}\n"), 0.25);
        assert_eq!(line_similarity("x\n", "x\nx\nx\n"), 1.0);
    }
}
