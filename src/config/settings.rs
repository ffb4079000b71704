//! Resolved settings, and every default in one place.

use std::path::PathBuf;

use super::options::{Options, parse_chunker};
use crate::chunk::{ChunkerKind, ChunkerSettings};
use crate::retrieve::RetrieverSpec;

/// Everything the engine reads, resolved and defaulted.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub workspace: WorkspaceSettings,
    pub index: IndexSettings,
    pub retrieve: RetrieveSettings,
}

/// `[workspace]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WorkspaceSettings {
    /// Files larger than this are skipped (default 1 MiB).
    pub max_file_bytes: u64,
}

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

/// `[retrieve]`.
#[derive(Clone, Debug, PartialEq)]
pub struct RetrieveSettings {
    /// The retriever used when none is named (default `bm25`).
    pub retriever: RetrieverSpec,
    /// Hits returned (default 5).
    pub top_k: usize,
    /// Lines before the cursor (non-blank) that form the `bm25` query (default 10).
    pub query_lines: u32,
    /// Lines before the cursor that form the `jaccard` query window (default 20, RepoCoder).
    pub jaccard_query_lines: u32,
    /// Reciprocal rank fusion constant (default 60).
    pub rrf_k: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings::resolve(&Options::default())
    }
}

impl Settings {
    /// Applies defaults to checked options. Values were range-checked per layer, so this cannot
    /// fail; an unparsable value that slipped through falls back to its default.
    pub fn resolve(options: &Options) -> Settings {
        let w = options.workspace.clone().unwrap_or_default();
        let i = options.index.clone().unwrap_or_default();
        let r = options.retrieve.clone().unwrap_or_default();
        let workspace = WorkspaceSettings {
            max_file_bytes: w.max_file_bytes.unwrap_or(1 << 20),
        };
        let chunker = ChunkerSettings {
            fixed_lines: i.fixed_lines.unwrap_or(10),
            sliding_lines: i.sliding_lines.unwrap_or(20),
            sliding_stride: i.sliding_stride.unwrap_or(10),
            syntax_max_lines: i.syntax_max_lines.unwrap_or(40),
        };
        Settings {
            index: IndexSettings {
                cache_dir: i.cache_dir.unwrap_or_else(super::default_cache_dir),
                bm25_chunker: i
                    .bm25_chunker
                    .as_deref()
                    .and_then(parse_chunker)
                    .unwrap_or(ChunkerKind::Sliding),
                chunker,
                workspace: workspace.clone(),
                lock_wait_ms: i.lock_wait_ms.unwrap_or(10_000),
            },
            workspace,
            retrieve: RetrieveSettings {
                retriever: r
                    .retriever
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(RetrieverSpec::Bm25),
                top_k: r.top_k.unwrap_or(5),
                query_lines: r.query_lines.unwrap_or(10),
                jaccard_query_lines: r.jaccard_query_lines.unwrap_or(20),
                rrf_k: r.rrf_k.unwrap_or(60.0),
            },
        }
    }
}
