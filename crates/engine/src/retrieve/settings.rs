//! How retrieval ranks: the default retriever, its window sizes and the `dense` endpoint.

use std::path::PathBuf;

use super::{Exclude, RetrieverSpec};

/// The retriever of `complete`, `serve` and both editors when the configuration names none:
/// the source measured best on the tuning cases of docs/history.md (`identifiers`, with the
/// default 512-token cross-file block and 5 chunks), so that `bench run --retriever identifiers`
/// with no other option gives what users get.
pub const DEFAULT_RETRIEVER: RetrieverSpec = RetrieverSpec::Identifiers;

/// `[retrieve]`.
#[derive(Clone, Debug, PartialEq)]
pub struct RetrieveSettings {
    /// The retriever used when none is named (default [`DEFAULT_RETRIEVER`]).
    pub retriever: RetrieverSpec,
    /// Hits returned (default 5).
    pub top_k: usize,
    /// Lines before the cursor (non-blank) that form the `bm25` query (default 10).
    pub query_lines: u32,
    /// Lines before the cursor that form the `jaccard` query window (default 20, RepoCoder).
    pub jaccard_query_lines: u32,
    /// Reciprocal rank fusion constant (default 60).
    pub rrf_k: f64,
    /// What of the cursor's own file `bm25`, `jaccard` and `dense` leave out (default
    /// `window`).
    pub exclude: Exclude,
    pub dense: DenseSettings,
}

/// `[retrieve.dense]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DenseSettings {
    /// An OpenAI-compatible base URL serving `/v1/embeddings`; `None` leaves `dense` unavailable.
    pub endpoint: Option<String>,
    /// Model name sent with each request (default `default`).
    pub model: String,
    pub api_key_env: Option<String>,
    /// Per-request timeout (default 60 s).
    pub timeout_ms: u64,
    /// Where vectors are cached (`<index.cache_dir>/embeddings/`'s parent: the index cache dir).
    pub cache_dir: PathBuf,
}
