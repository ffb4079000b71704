//! A repository's history as the miner reads it, through gitoxide (`gix`): the commits reachable
//! from HEAD, each non-merge commit's files added, changed or deleted against its parent, the
//! parent's tree as a list of files, blobs, and that tree written out as a plain folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::objs::tree::EntryKind;

use super::HistoryError;

/// A non-merge commit with one parent, and the files it adds, changes or deletes.
#[derive(Clone, Debug)]
pub struct Commit {
    pub id: ObjectId,
    pub parent: ObjectId,
    /// The parent's tree: the context of the files the commit adds.
    pub parent_tree: ObjectId,
    /// Regular files new in this commit (absent from the parent, or not a file there), by path.
    pub added: Vec<File>,
    /// Regular files whose content changed, by path.
    pub changed: Vec<File>,
    /// The parent's versions of `changed` (the same paths, the parent's blobs): a file split out
    /// of one of them is a move too.
    pub replaced: Vec<File>,
    /// Regular files of the parent that this commit removes (with their parent blobs), by path:
    /// with `added`, a commit's moves.
    pub deleted: Vec<File>,
}

/// A regular file of a tree: its path (`/`-separated) and blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct File {
    pub path: String,
    pub blob: ObjectId,
}

/// An open repository.
pub struct Repo {
    repo: gix::Repository,
    /// Where it is, for messages.
    path: PathBuf,
}

impl Repo {
    pub fn open(path: &Path) -> Result<Repo, HistoryError> {
        let repo = gix::open(path).map_err(|e| HistoryError::Open {
            path: path.into(),
            message: e.to_string(),
        })?;
        Ok(Repo {
            repo,
            path: path.into(),
        })
    }

    fn git(&self, what: &str, e: impl std::fmt::Display) -> HistoryError {
        HistoryError::Git {
            path: self.path.clone(),
            message: format!("{what}: {e}"),
        }
    }

    /// The non-merge commits reachable from HEAD with exactly one parent, newest first (the
    /// walk's order: by commit time, ties by id), each with its files added and changed; at
    /// most `max` of them, none older than `since` (seconds).
    pub fn commits(
        &self,
        since: Option<i64>,
        max: Option<usize>,
    ) -> Result<Vec<Commit>, HistoryError> {
        let head = self.repo.head_id().map_err(|e| self.git("HEAD", e))?;
        let walk = self
            .repo
            .rev_walk([head.detach()])
            .sorting(gix::revision::walk::Sorting::ByCommitTime(
                Default::default(),
            ))
            .all()
            .map_err(|e| self.git("walking the history", e))?;
        let mut out = Vec::new();
        for info in walk {
            if max.is_some_and(|max| out.len() >= max) {
                break;
            }
            let info = info.map_err(|e| self.git("walking the history", e))?;
            let commit = info.object().map_err(|e| self.git("reading a commit", e))?;
            let time = commit
                .time()
                .map_err(|e| self.git("reading a commit's time", e))?
                .seconds;
            if since.is_some_and(|since| time < since) {
                continue;
            }
            let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
            let [parent] = parents[..] else {
                continue;
            };
            let tree = commit
                .tree_id()
                .map_err(|e| self.git("reading a commit", e))?;
            let parent_tree = self
                .repo
                .find_commit(parent)
                .and_then(|p| p.tree_id())
                .map_err(|e| self.git("reading a parent commit", e))?;
            let mut changes = Changes::default();
            self.diff(Some(parent_tree.detach()), tree.detach(), "", &mut changes)?;
            out.push(Commit {
                id: info.id,
                parent,
                parent_tree: parent_tree.detach(),
                added: changes.added,
                changed: changes.changed,
                replaced: changes.replaced,
                deleted: changes.deleted,
            });
        }
        Ok(out)
    }

    /// The entries of tree `id` by name: kind and object.
    fn entries(
        &self,
        id: ObjectId,
    ) -> Result<BTreeMap<String, (EntryKind, ObjectId)>, HistoryError> {
        let tree = self
            .repo
            .find_tree(id)
            .map_err(|e| self.git("reading a tree", e))?;
        let decoded = tree.decode().map_err(|e| self.git("decoding a tree", e))?;
        Ok(decoded
            .entries
            .iter()
            .map(|e| (e.filename.to_string(), (e.mode.kind(), e.oid.to_owned())))
            .collect())
    }

    /// What turns tree `old` into `new` under `prefix`, descending only into subtrees that differ.
    fn diff(
        &self,
        old: Option<ObjectId>,
        new: ObjectId,
        prefix: &str,
        out: &mut Changes,
    ) -> Result<(), HistoryError> {
        let before = match old {
            Some(old) => self.entries(old)?,
            None => BTreeMap::new(),
        };
        let after = self.entries(new)?;
        for (name, &(kind, id)) in &after {
            let path = format!("{prefix}{name}");
            let was = before.get(name);
            match kind {
                EntryKind::Tree => {
                    let old_tree = was
                        .filter(|(k, _)| *k == EntryKind::Tree)
                        .map(|(_, id)| *id);
                    if old_tree != Some(id) {
                        self.diff(old_tree, id, &format!("{path}/"), out)?;
                    }
                }
                EntryKind::Blob | EntryKind::BlobExecutable => {
                    let file = File { path, blob: id };
                    match was {
                        Some((EntryKind::Blob | EntryKind::BlobExecutable, old_id)) => {
                            if *old_id != id {
                                out.replaced.push(File {
                                    path: file.path.clone(),
                                    blob: *old_id,
                                });
                                out.changed.push(file);
                            }
                        }
                        _ => out.added.push(file),
                    }
                }
                EntryKind::Link | EntryKind::Commit => {}
            }
        }
        for (name, (kind, id)) in before {
            let now = after.get(&name).map(|(k, _)| *k);
            let path = format!("{prefix}{name}");
            match kind {
                EntryKind::Tree if now != Some(EntryKind::Tree) => {
                    let mut gone = Changes::default();
                    self.diff(None, id, &format!("{path}/"), &mut gone)?;
                    out.deleted.extend(gone.added);
                }
                EntryKind::Blob | EntryKind::BlobExecutable
                    if !matches!(now, Some(EntryKind::Blob | EntryKind::BlobExecutable)) =>
                {
                    out.deleted.push(File { path, blob: id });
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Every regular file of tree `id`, by path.
    pub fn files(&self, id: ObjectId) -> Result<Vec<File>, HistoryError> {
        let mut out = Changes::default();
        self.diff(None, id, "", &mut out)?;
        Ok(out.added)
    }

    /// The bytes of blob `id`, or `None` when the repository lacks it (a partial clone).
    pub fn blob_if_present(&self, id: ObjectId) -> Option<Vec<u8>> {
        self.repo.find_blob(id).ok().map(|blob| blob.data.clone())
    }

    /// Writes `files` of a tree under `dir` (made in a sibling temporary folder and renamed into
    /// place, so a folder that exists is whole). A folder already there is kept as it is
    /// (`None`); else how many files the repository lacks and left out (a partial clone).
    pub fn write_tree(&self, files: &[File], dir: &Path) -> Result<Option<usize>, HistoryError> {
        if dir.is_dir() {
            return Ok(None);
        }
        let write_error = |path: &Path, error: std::io::Error| HistoryError::Write {
            path: path.into(),
            error,
        };
        let parent = dir.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(|e| write_error(parent, e))?;
        let staging = tempfile::Builder::new()
            .prefix(".crossfile-tree-")
            .tempdir_in(parent)
            .map_err(|e| write_error(parent, e))?;
        let mut missing = 0;
        for file in files {
            let Some(rel) = safe_relative(&file.path) else {
                continue;
            };
            let Some(bytes) = self.blob_if_present(file.blob) else {
                missing += 1;
                continue;
            };
            let target = staging.path().join(rel);
            if let Some(folder) = target.parent() {
                std::fs::create_dir_all(folder).map_err(|e| write_error(folder, e))?;
            }
            std::fs::write(&target, bytes).map_err(|e| write_error(&target, e))?;
        }
        let staged = staging.keep();
        std::fs::rename(&staged, dir).map_err(|e| write_error(dir, e))?;
        Ok(Some(missing))
    }
}

#[derive(Default)]
struct Changes {
    added: Vec<File>,
    changed: Vec<File>,
    replaced: Vec<File>,
    deleted: Vec<File>,
}

/// A tree path as a relative path that stays inside the folder it is written to (a repository
/// can hold names no checkout would write: `..`, absolute parts).
fn safe_relative(path: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.split('/') {
        if part.is_empty() || part == "." || part == ".." || part.contains('\\') || part == ".git" {
            return None;
        }
        out.push(part);
    }
    Some(out)
}
