//! Opening, building and updating an index, and publishing snapshots of it.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tantivy::IndexWriter;

use super::IndexError;
use super::IndexSettings;
use super::entry::{AnalysisInput, FileEntry, Stamp, text_hash};
use super::location::{fingerprint, index_dir};
use super::record::FileRecord;
use super::snapshot::Snapshot;
use super::store::{FORMAT, Store};
use crate::progress::{Progress, ProgressEvent};
use crate::workspace::{self, SkipReason, Skipped, SourceFile, WorkspaceError};

const META_FILE: &str = "crossfile-index.json";
/// Batches larger than this get a two-thread writer of their own.
const BULK: usize = 64;

/// What a sync or update changed.
#[derive(Clone, Debug, Default)]
pub struct SyncReport {
    pub added: usize,
    pub updated: usize,
    pub removed: usize,
    pub unchanged: usize,
    /// Files left out (too large, binary, unreadable, outside the root).
    pub skipped: Vec<Skipped>,
    pub seconds: f64,
}

/// A workspace's index. Cheap to query through [`Index::snapshot`]; updates take a short lock.
pub struct Index {
    root: PathBuf,
    dir: PathBuf,
    settings: IndexSettings,
    store: Store,
    writer: Mutex<Option<IndexWriter>>,
    current: RwLock<Arc<Snapshot>>,
}

#[derive(Serialize, Deserialize, PartialEq, Eq, Debug)]
struct Meta {
    format: u32,
    root: String,
    settings: String,
}

/// A file read from disk and classified against the current snapshot.
enum Candidate {
    Unchanged,
    Changed(AnalysisInput),
    Skip(Skipped),
}

impl Index {
    /// Opens the workspace's index and brings it up to date with the disk, building it if it
    /// does not exist; an unreadable or outdated index is rebuilt.
    pub fn open_or_build(
        root: &Path,
        settings: &IndexSettings,
        progress: &Progress,
    ) -> Result<(Index, SyncReport), IndexError> {
        // Two processes opening one index at once (two editors on a workspace) would each find
        // it half made and rebuild it under the other: they take turns, the second opening what
        // the first built.
        let _turn = build_turn(root, settings)?;
        let index = Index::open(root, settings)?;
        let report = index.sync(progress)?;
        Ok((index, report))
    }

    /// Opens the index as it is on disk (possibly empty), without looking at the workspace.
    pub fn open(root: &Path, settings: &IndexSettings) -> Result<Index, IndexError> {
        let root = root.canonicalize().map_err(|error| WorkspaceError::Read {
            path: root.into(),
            error,
        })?;
        if !root.is_dir() {
            return Err(WorkspaceError::NotADirectory { path: root }.into());
        }
        let dir = index_dir(&root, settings);
        let meta = Meta {
            format: FORMAT,
            root: root.display().to_string(),
            settings: fingerprint(settings),
        };
        let (store, records) = match open_existing(&dir, &meta) {
            Ok(found) => found,
            Err(IndexError::Locked { dir }) => return Err(IndexError::Locked { dir }),
            Err(why) => {
                if dir.exists() {
                    tracing::warn!(dir = %dir.display(), "rebuilding the index: {why}");
                    std::fs::remove_dir_all(&dir).map_err(|e| IndexError::io(&dir, e))?;
                }
                (create(&dir, &meta)?, Vec::new())
            }
        };
        let files: BTreeMap<String, Arc<FileEntry>> = records
            .into_par_iter()
            .filter_map(FileEntry::from_record)
            .map(|e| (e.path.clone(), Arc::new(e)))
            .collect();
        let snapshot = Snapshot::new(root.clone(), files, &store, settings);
        Ok(Index {
            root,
            dir,
            settings: settings.clone(),
            store,
            writer: Mutex::new(None),
            current: RwLock::new(Arc::new(snapshot)),
        })
    }

    /// The current view. Holding it never blocks updates.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the index lives on disk.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn settings(&self) -> &IndexSettings {
        &self.settings
    }

    /// Bytes the index takes on disk.
    pub fn size_on_disk(&self) -> u64 {
        dir_size(&self.dir)
    }

    /// Compares the index with the workspace on disk and applies every difference in one commit.
    pub fn sync(&self, progress: &Progress) -> Result<SyncReport, IndexError> {
        let started = Instant::now();
        let discovery = workspace::discover(&self.root, &self.settings.workspace)?;
        let snapshot = self.snapshot();
        let mut report = SyncReport {
            skipped: discovery.skipped,
            ..SyncReport::default()
        };
        let seen: HashSet<&str> = discovery.files.iter().map(|f| f.rel.as_str()).collect();
        let removed: Vec<String> = snapshot
            .paths()
            .filter(|p| !seen.contains(p))
            .map(str::to_string)
            .collect();
        let stale: Vec<&SourceFile> = discovery
            .files
            .iter()
            .filter(|f| {
                snapshot
                    .file(&f.rel)
                    .is_none_or(|e| e.stamp.size != f.size || e.stamp.mtime_ns != f.mtime_ns)
            })
            .collect();
        report.unchanged = discovery.files.len() - stale.len();
        let max_bytes = self.settings.workspace.max_file_bytes;
        let candidates: Vec<(String, Candidate)> = stale
            .par_iter()
            .map(|f| (f.rel.clone(), classify(f, &snapshot, max_bytes)))
            .collect();
        self.apply_candidates(&snapshot, candidates, removed, report, progress, started)
    }

    /// Re-reads the given workspace-relative files from disk: changed, created, deleted (a path
    /// that no longer exists, or is now binary or too large, is removed). A rename is the old and
    /// the new path together.
    pub fn update_files(&self, paths: &[&str]) -> Result<SyncReport, IndexError> {
        let started = Instant::now();
        let snapshot = self.snapshot();
        let mut candidates = Vec::new();
        let mut removed = Vec::new();
        for &rel in paths {
            let (abs, rel) = workspace::resolve_in_root(&self.root, Path::new(rel))?;
            let Some(language) = crate::lang::Language::from_path(&abs) else {
                continue;
            };
            let metadata = match std::fs::metadata(&abs) {
                Ok(m) if m.is_file() => m,
                _ => {
                    if snapshot.file(&rel).is_some() {
                        removed.push(rel);
                    }
                    continue;
                }
            };
            let file = SourceFile {
                rel: rel.clone(),
                abs,
                language,
                size: metadata.len(),
                mtime_ns: workspace::mtime_ns(&metadata),
            };
            candidates.push((
                rel,
                classify(&file, &snapshot, self.settings.workspace.max_file_bytes),
            ));
        }
        self.apply_candidates(
            &snapshot,
            candidates,
            removed,
            SyncReport::default(),
            &Progress::none(),
            started,
        )
    }

    /// Applies classified files: changed ones are indexed, skipped ones that were indexed are
    /// removed, along with `removed`; fills in the report's counts.
    fn apply_candidates(
        &self,
        snapshot: &Snapshot,
        candidates: Vec<(String, Candidate)>,
        mut removed: Vec<String>,
        mut report: SyncReport,
        progress: &Progress,
        started: Instant,
    ) -> Result<SyncReport, IndexError> {
        let mut inputs = Vec::new();
        for (rel, candidate) in candidates {
            match candidate {
                Candidate::Unchanged => report.unchanged += 1,
                Candidate::Changed(input) => inputs.push(input),
                Candidate::Skip(skipped) => {
                    if snapshot.file(&rel).is_some() {
                        removed.push(rel);
                    }
                    report.skipped.push(skipped);
                }
            }
        }
        report.added = inputs
            .iter()
            .filter(|i| snapshot.file(&i.path).is_none())
            .count();
        report.updated = inputs.len() - report.added;
        report.removed = removed.len();
        if !inputs.is_empty() || !removed.is_empty() {
            self.apply(inputs, removed, progress)?;
        }
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// Indexes `text` as the content of `rel` (an unsaved editor buffer wins over the disk).
    pub fn update_text(&self, rel: &str, text: &str) -> Result<(), IndexError> {
        let (abs, rel) = workspace::resolve_in_root(&self.root, Path::new(rel))?;
        let Some(language) = crate::lang::Language::from_path(&abs) else {
            return Ok(());
        };
        let hash = text_hash(text);
        if self
            .snapshot()
            .file(&rel)
            .is_some_and(|e| e.stamp.hash == hash)
        {
            return Ok(());
        }
        let stamp = Stamp {
            size: text.len() as u64,
            mtime_ns: 0,
            hash,
        };
        let input = AnalysisInput {
            path: rel,
            language,
            text: text.to_string(),
            lossy: false,
            stamp,
        };
        self.apply(vec![input], Vec::new(), &Progress::none())
    }

    /// Deletes the documents of `removed` and of every input's path, adds the inputs' documents,
    /// commits, and publishes a new snapshot.
    fn apply(
        &self,
        inputs: Vec<AnalysisInput>,
        removed: Vec<String>,
        progress: &Progress,
    ) -> Result<(), IndexError> {
        let started = Instant::now();
        let mut guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let bulk = inputs.len() > BULK;
        if bulk {
            *guard = None; // release the small writer's lock first
        }
        let mut writer = match guard.take() {
            Some(writer) => writer,
            None => self.store.writer(
                &self.dir,
                if bulk { 2 } else { 1 },
                Duration::from_millis(self.settings.lock_wait_ms),
            )?,
        };
        for path in removed
            .iter()
            .map(String::as_str)
            .chain(inputs.iter().map(|i| i.path.as_str()))
        {
            writer.delete_term(self.store.path_term(path));
        }
        progress.report(ProgressEvent::Begin {
            total: inputs.len() as u64,
        });
        let done = std::sync::atomic::AtomicU64::new(0);
        let chunker = &self.settings.chunker;
        let added: Result<Vec<FileRecord>, IndexError> = inputs
            .into_par_iter()
            .map(|input| {
                let record = FileEntry::analyze(input, chunker);
                self.store.add_documents(
                    &writer,
                    &self.dir,
                    &record,
                    self.settings.bm25_chunker,
                )?;
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                if n.is_multiple_of(32) {
                    progress.report(ProgressEvent::Advance { done: n });
                }
                Ok(record)
            })
            .collect();
        let analysed = Instant::now();
        let added = match added {
            Ok(added) => added,
            Err(e) => {
                let _ = writer.rollback();
                return Err(e);
            }
        };
        writer
            .commit()
            .map_err(|e| IndexError::tantivy(&self.dir, e))?;
        self.store
            .reader
            .reload()
            .map_err(|e| IndexError::tantivy(&self.dir, e))?;
        let committed = Instant::now();
        progress.report(ProgressEvent::Advance {
            done: done.into_inner(),
        });
        progress.report(ProgressEvent::End);
        if !bulk {
            *guard = Some(writer);
        }
        drop(guard);

        let added_count = added.len();
        let old = self.snapshot();
        let mut files = old.files_map().clone();
        for path in &removed {
            files.remove(path);
        }
        for entry in added
            .into_par_iter()
            .filter_map(FileEntry::from_record)
            .collect::<Vec<_>>()
        {
            files.insert(entry.path.clone(), Arc::new(entry));
        }
        let snapshot = Snapshot::new(self.root.clone(), files, &self.store, &self.settings);
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(snapshot);
        tracing::debug!(
            files = added_count,
            removed = removed.len(),
            analyse_ms = (analysed - started).as_secs_f64() * 1e3,
            commit_ms = (committed - analysed).as_secs_f64() * 1e3,
            publish_ms = committed.elapsed().as_secs_f64() * 1e3,
            "index updated"
        );
        Ok(())
    }
}

/// Reads a stale file and tells whether its text really changed.
fn classify(file: &SourceFile, snapshot: &Snapshot, max_bytes: u64) -> Candidate {
    let source = match workspace::read_source(&file.abs, max_bytes) {
        Ok(source) => source,
        Err(e) => {
            let reason = match e {
                WorkspaceError::TooLarge { size, .. } => SkipReason::TooLarge { size },
                WorkspaceError::Binary { .. } => SkipReason::Binary,
                WorkspaceError::NotARegularFile { .. } => SkipReason::NotARegularFile,
                other => SkipReason::Unreadable(other.to_string()),
            };
            return Candidate::Skip(Skipped {
                path: file.abs.clone(),
                reason,
            });
        }
    };
    let hash = text_hash(&source.text);
    if snapshot
        .file(&file.rel)
        .is_some_and(|e| e.stamp.hash == hash)
    {
        return Candidate::Unchanged;
    }
    let stamp = Stamp {
        size: file.size,
        mtime_ns: file.mtime_ns,
        hash,
    };
    Candidate::Changed(AnalysisInput {
        path: file.rel.clone(),
        language: file.language,
        text: source.text,
        lossy: source.lossy,
        stamp,
    })
}

/// Opens an index directory whose meta matches; any mismatch or damage is an error.
fn open_existing(dir: &Path, want: &Meta) -> Result<(Store, Vec<FileRecord>), IndexError> {
    let meta_path = dir.join(META_FILE);
    let text = std::fs::read_to_string(&meta_path).map_err(|e| IndexError::io(&meta_path, e))?;
    let found: Meta = serde_json::from_str(&text).map_err(|e| IndexError::Stale {
        dir: dir.into(),
        why: format!("{META_FILE}: {e}"),
    })?;
    if &found != want {
        return Err(IndexError::Stale {
            dir: dir.into(),
            why: format!("it was built with other settings ({})", found.settings),
        });
    }
    let store = Store::open(dir)?;
    let records = store.read_records(dir)?;
    Ok((store, records))
}

/// Creates an empty index with its meta file.
fn create(dir: &Path, meta: &Meta) -> Result<Store, IndexError> {
    std::fs::create_dir_all(dir).map_err(|e| IndexError::io(dir, e))?;
    let store = match Store::create(dir) {
        Ok(store) => store,
        // Another process created it a moment ago.
        Err(_) if dir.join("meta.json").exists() => Store::open(dir)?,
        Err(e) => return Err(e),
    };
    let meta_path = dir.join(META_FILE);
    let json = serde_json::to_string_pretty(meta).map_err(|e| IndexError::Stale {
        dir: dir.into(),
        why: e.to_string(),
    })?;
    let tmp = dir.join(format!("{META_FILE}.{}", std::process::id()));
    std::fs::write(&tmp, json).map_err(|e| IndexError::io(&tmp, e))?;
    std::fs::rename(&tmp, &meta_path).map_err(|e| IndexError::io(&meta_path, e))?;
    Ok(store)
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_size(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

/// An exclusive lock, across processes, on opening and bringing up to date the index of `root`
/// (a file beside the index's folder, `<folder>.open.lock`); released when dropped or when the
/// process dies.
fn build_turn(root: &Path, settings: &IndexSettings) -> Result<std::fs::File, IndexError> {
    let canonical = root.canonicalize().map_err(|error| WorkspaceError::Read {
        path: root.into(),
        error,
    })?;
    let dir = index_dir(&canonical, settings);
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(".open.lock");
    let path = dir.with_file_name(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| IndexError::io(parent, e))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| IndexError::io(&path, e))?;
    if file.try_lock().is_err() {
        tracing::info!(index = %dir.display(), "waiting for another crossfile process to finish this index");
        file.lock().map_err(|e| IndexError::io(&path, e))?;
    }
    Ok(file)
}
