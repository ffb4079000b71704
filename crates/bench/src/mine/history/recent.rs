//! What a user writing one of a commit's new files had lately edited: the ring a language server
//! fills as the user works ([`Ring`]), replayed over the commit's other files.
//!
//! Each other file of the commit in the new file's language, in path order, is noted as the
//! server notes an edited buffer: a file the commit adds as the windows of [`RING_LINES`] lines
//! that cover it, top to bottom (it was typed whole); a file it changes as a window centred on
//! each place the commit changes (a line diff against the parent's version, patience algorithm,
//! so the same commit gives the same chunks everywhere). The ring keeps its newest
//! [`RING_CHUNKS`], near-duplicates dropped; they go into each of the file's records, newest
//! first, as committed. That text knows the commit, so only `recent-commit` reads it.

use similar::{Algorithm, DiffTag, TextDiff};

use super::git::{Commit, File, Repo};
use super::{HistoryError, source_text};
use crate::bench::cases::history::RecentChunk;
use crossfile_engine::lang::Language;
use crossfile_engine::retrieve::{RING_LINES, Ring};
use crossfile_engine::workspace::centred;

/// What the commit writes, as the ring would note it: per file in a mined language, in path
/// order, the windows an edit of it notes. Read once per commit; [`CommitEdits::ring_without`]
/// replays it for each of the commit's files.
pub(super) struct CommitEdits {
    notes: Vec<Note>,
}

/// One window of one file as the ring notes it.
struct Note {
    path: String,
    language: Language,
    first: u32,
    text: String,
}

impl CommitEdits {
    /// The windows of the commit's added and changed files in `languages`.
    pub(super) fn read(
        repo: &Repo,
        commit: &Commit,
        languages: &[Language],
        max_file_bytes: u64,
    ) -> Result<CommitEdits, HistoryError> {
        let mut files: Vec<(&File, Option<&File>, Language)> = commit
            .added
            .iter()
            .map(|f| (f, None))
            .chain(commit.changed.iter().map(|f| {
                let before = commit.replaced.iter().find(|r| r.path == f.path);
                (f, before)
            }))
            .filter_map(|(f, before)| {
                let language = Language::from_path(std::path::Path::new(&f.path))?;
                languages
                    .contains(&language)
                    .then_some((f, before, language))
            })
            .collect();
        files.sort_by(|a, b| a.0.path.cmp(&b.0.path));
        let mut notes = Vec::new();
        for (file, before, language) in files {
            let Some(text) = source_text(repo, file, max_file_bytes).ok() else {
                continue;
            };
            let lines: Vec<&str> = text
                .strip_suffix('\n')
                .unwrap_or(&text)
                .split('\n')
                .collect();
            let total = u32::try_from(lines.len()).unwrap_or(u32::MAX);
            let windows = match before.and_then(|b| source_text(repo, b, max_file_bytes).ok()) {
                Some(old) => changed_windows(&old, &text, total),
                None => (0..total)
                    .step_by(RING_LINES as usize)
                    .map(|first| first..total.min(first + RING_LINES))
                    .collect(),
            };
            for window in windows {
                notes.push(Note {
                    path: file.path.clone(),
                    language,
                    first: window.start,
                    text: lines[window.start as usize..window.end as usize].join("\n"),
                });
            }
        }
        Ok(CommitEdits { notes })
    }

    /// The ring after the commit's other files in `language` (all but `path`) were written:
    /// newest first.
    pub(super) fn ring_without(&self, path: &str, language: Language) -> Vec<RecentChunk> {
        let mut ring = Ring::new();
        for note in &self.notes {
            if note.path != path && note.language == language {
                ring.note(&note.path, note.first, &note.text);
            }
        }
        ring.chunks()
            .iter()
            .map(|hit| RecentChunk {
                path: hit.path.clone(),
                line: hit.lines.start,
                text: hit.text.clone(),
            })
            .collect()
    }
}

/// A window of [`RING_LINES`] lines of `new` (`total` lines) centred on each place it differs
/// from `old`, top to bottom.
fn changed_windows(old: &str, new: &str, total: u32) -> Vec<std::ops::Range<u32>> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Patience)
        .diff_lines(old, new);
    diff.ops()
        .iter()
        .filter(|op| op.tag() != DiffTag::Equal)
        .map(|op| {
            let lines = op.new_range();
            let middle = lines.start + lines.len() / 2;
            centred(total, u32::try_from(middle).unwrap_or(u32::MAX), RING_LINES)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_centred_on_each_change() {
        let old: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 10\n", "line ten\n")
            .replace("line 150\n", "line 150\nadded\n");
        let total = u32::try_from(new.split('\n').count()).expect("lines");
        let windows = changed_windows(&old, &new, total);
        // The first change is near the top: its window starts at the file's start.
        assert_eq!(windows, vec![0..64, 119..183]);
    }

    #[test]
    fn an_unchanged_file_gives_no_window() {
        let text = "a\nb\n";
        assert!(changed_windows(text, text, 3).is_empty());
    }
}
