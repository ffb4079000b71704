//! Which model is loaded and with what context, threads and tokenizer.

use std::path::PathBuf;

use super::PinnedModel;

/// `[model]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSettings {
    /// A GGUF; `None` is the catalogue's model `named`, fetched into
    /// `<cache_dir>/models/` on first use.
    pub path: Option<PathBuf>,
    /// The catalogue's model used when `path` is not set (`model.name`; default
    /// [`super::DEFAULT_MODEL`]).
    pub named: PinnedModel,
    /// Context size in tokens (default 2048).
    pub n_ctx: u32,
    /// CPU threads of the embedded backend (default: every core).
    pub threads: u32,
    /// llama.cpp contexts the embedded backend keeps alive between requests (default 1).
    pub kv_slots: u32,
    /// The shortest run of a kept KV cache shifted to where a new prompt holds it again
    /// (llama.cpp's `--cache-reuse`); 0, the default, never shifts: a shifted run is approximate.
    pub kv_shift_min_span: u32,
    /// A `tokenizer.json` for token budgets of HTTP backends (default: the GGUF's vocabulary).
    pub tokenizer: Option<PathBuf>,
}
