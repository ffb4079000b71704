//! The on-disk index of a workspace: tantivy documents plus a record per file, kept current.
//!
//! An index lives in `<cache_dir>/index/<root name>-<key>/`, where the key hashes the canonical
//! workspace root and every setting that changes what is indexed ([`IndexSettings`]); a
//! `crossfile-index.json` beside the tantivy files names the format, root and settings. An index
//! whose format or settings differ, or that cannot be read, is rebuilt from scratch (a warning is
//! logged); one locked by another process is waited for, then reported.
//!
//! [`Index::open_or_build`] brings the index up to date with the disk (only changed files are
//! re-analyzed); [`Index::update_files`] and [`Index::update_text`] update single files without a
//! rebuild. Readers take a [`Snapshot`]: an immutable, consistent view that retrievers rank over.
//!
//! A file's record holds its text, stamp, outline, the chunk ranges of all three chunkers, its
//! CrossCodeEval token counts and sliding-window word sets, with file-local term ids; opening an
//! index loads the records into [`FileEntry`]s, interning the terms. [`Index::sync`] compares
//! size and mtime with the disk, re-reads only what changed, skips a file whose text hash is
//! unchanged, and applies everything in one commit. Analysis (parse, outline, chunk, tokenize)
//! runs in parallel with rayon and feeds tantivy's writer directly. An update builds a new
//! snapshot and swaps it in, so readers never wait for writers. The snapshot is also the symbol
//! table ([`Snapshot::definitions`]).

mod build;
mod entry;
mod location;
mod packages;
mod record;
mod settings;
mod snapshot;
mod store;

use std::path::PathBuf;

pub use crate::progress::{Progress, ProgressEvent};
pub use build::{Index, SyncReport};
pub use entry::{AnalysisInput, CcevalChunk, FileEntry, Stamp, text_hash};
pub use location::index_dir;
pub use settings::IndexSettings;
pub use snapshot::{Snapshot, SymbolRef};
pub use store::FORMAT;

use crate::workspace::WorkspaceError;

/// A problem with an index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{}: {error}", .path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("index {}: {message}", .dir.display())]
    Tantivy { dir: PathBuf, message: String },
    #[error("index {} is locked by another crossfile process; try again when it is done", .dir.display())]
    Locked { dir: PathBuf },
    #[error("index {} cannot be used: {why}", .dir.display())]
    Stale { dir: PathBuf, why: String },
    #[error("{path}: cannot encode its index record: {message}")]
    Encode { path: String, message: String },
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
}

impl IndexError {
    fn tantivy(dir: &std::path::Path, error: tantivy::TantivyError) -> IndexError {
        IndexError::Tantivy {
            dir: dir.into(),
            message: error.to_string(),
        }
    }

    fn io(path: &std::path::Path, error: std::io::Error) -> IndexError {
        IndexError::Io {
            path: path.into(),
            error,
        }
    }
}
