//! File discovery: the `ignore` crate's walk, filtered to source files of known languages.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use ignore::WalkBuilder;

use super::WorkspaceError;
use super::WorkspaceSettings;
use super::paths::relative_path;
use crate::lang::Language;

/// A source file that belongs to the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// Workspace-relative, `/`-separated.
    pub rel: String,
    pub abs: PathBuf,
    pub language: Language,
    pub size: u64,
    /// Modification time, nanoseconds since the epoch (0 if unknown).
    pub mtime_ns: u64,
}

/// Why a candidate file was left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    TooLarge {
        size: u64,
    },
    /// NUL bytes in its first 8 KiB.
    Binary,
    /// A symlink whose target is outside the root.
    LeavesRoot,
    /// The walk could not read it (permissions, a symlink loop, ...).
    Unreadable(String),
    /// A FIFO, socket or device named like a source file: reading it could block forever.
    NotARegularFile,
}

/// A file or directory left out, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: SkipReason,
}

/// The result of a walk: files in path order, and what was skipped.
#[derive(Clone, Debug, Default)]
pub struct Discovery {
    pub files: Vec<SourceFile>,
    pub skipped: Vec<Skipped>,
}

/// Walks `root`: respects `.gitignore` (in or out of a git repository), `.ignore` and hidden
/// files; keeps symlinked files that stay inside the root but never enters a symlinked
/// directory (no loops, no files seen twice); keeps files of a known language up to
/// `max_file_bytes`. Binary files are recognised when read (`read_source`). Files are sorted
/// by relative path.
pub fn discover(root: &Path, settings: &WorkspaceSettings) -> Result<Discovery, WorkspaceError> {
    let root = root.canonicalize().map_err(|error| WorkspaceError::Read {
        path: root.into(),
        error,
    })?;
    if !root.is_dir() {
        return Err(WorkspaceError::NotADirectory { path: root });
    }
    let mut discovery = Discovery::default();
    let walk = WalkBuilder::new(&root)
        .follow_links(false)
        .require_git(false)
        .hidden(true)
        .parents(false)
        .build();
    for entry in walk {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                let path = error_path(&error).unwrap_or_else(|| root.clone());
                discovery.skipped.push(Skipped {
                    path,
                    reason: SkipReason::Unreadable(error.to_string()),
                });
                continue;
            }
        };
        let path = entry.path();
        let Some(language) = Language::from_path(path) else {
            continue;
        };
        if entry.path_is_symlink() {
            if let Err(reason) = symlink_target_ok(path, &root) {
                discovery.skipped.push(Skipped {
                    path: path.into(),
                    reason,
                });
                continue;
            }
        } else if entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        } else if !entry.file_type().is_some_and(|t| t.is_file()) {
            discovery.skipped.push(Skipped {
                path: path.into(),
                reason: SkipReason::NotARegularFile,
            });
            continue;
        }
        let metadata = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(error) => {
                discovery.skipped.push(Skipped {
                    path: path.into(),
                    reason: SkipReason::Unreadable(error.to_string()),
                });
                continue;
            }
        };
        if metadata.len() > settings.max_file_bytes {
            discovery.skipped.push(Skipped {
                path: path.into(),
                reason: SkipReason::TooLarge {
                    size: metadata.len(),
                },
            });
            continue;
        }
        let Some(rel) = relative_path(&root, path) else {
            continue;
        };
        let mtime_ns = mtime_ns(&metadata);
        discovery.files.push(SourceFile {
            rel,
            abs: path.into(),
            language,
            size: metadata.len(),
            mtime_ns,
        });
    }
    discovery.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(discovery)
}

/// A symlink named like a source file is kept only if it points to a file inside the root.
/// (Symlinked directories are never entered, so a symlink loop cannot happen.)
fn symlink_target_ok(path: &Path, root: &Path) -> Result<(), SkipReason> {
    let target = path
        .canonicalize()
        .map_err(|e| SkipReason::Unreadable(format!("dangling symlink: {e}")))?;
    if !target.starts_with(root) {
        return Err(SkipReason::LeavesRoot);
    }
    if !target.is_file() {
        return Err(SkipReason::Unreadable(
            "a symlink to something that is not a file".into(),
        ));
    }
    Ok(())
}

/// A file's modification time in nanoseconds since the epoch (0 if unknown).
pub fn mtime_ns(metadata: &std::fs::Metadata) -> u64 {
    metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Whether bytes look binary: a NUL byte in the first 8 KiB (git's and ripgrep's rule).
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|&b| b == 0)
}

fn error_path(error: &ignore::Error) -> Option<PathBuf> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        _ => None,
    }
}
