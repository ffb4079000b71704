//! What an index is built with: where it lives, its chunkers and which files it takes.

use std::path::PathBuf;

use crate::chunk::{ChunkerKind, ChunkerSettings};
use crate::workspace::WorkspaceSettings;

/// `[index]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IndexSettings {
    /// Root of the on-disk indexes (default: the user's cache dir, `crossfile/`).
    pub cache_dir: PathBuf,
    /// Which chunks tantivy indexes for `bm25` (default: sliding windows).
    pub bm25_chunker: ChunkerKind,
    pub chunker: ChunkerSettings,
    pub workspace: WorkspaceSettings,
    /// How long a write waits for another process's lock before reporting it (default 10 s).
    /// Not part of the index key.
    pub lock_wait_ms: u64,
}
