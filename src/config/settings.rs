//! Resolved settings, and every default in one place.

use std::path::PathBuf;

use super::options::{Options, parse_chunker};
use crate::backend::BackendKind;
use crate::chunk::{ChunkerKind, ChunkerSettings};
use crate::postprocess::Unit;
use crate::prompt::Template;
use crate::retrieve::RetrieverSpec;

/// Everything the engine reads, resolved and defaulted.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub workspace: WorkspaceSettings,
    pub index: IndexSettings,
    pub retrieve: RetrieveSettings,
    pub model: ModelSettings,
    pub backend: BackendSettings,
    pub prompt: PromptSettings,
    pub postprocess: PostprocessSettings,
    pub lsp: LspSettings,
}

/// `[model]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSettings {
    /// A GGUF; `None` is the default model, fetched into `<cache_dir>/models/` on first use.
    pub path: Option<PathBuf>,
    /// Context size in tokens (default 2048).
    pub n_ctx: u32,
    /// CPU threads of the embedded backend (default: every core).
    pub threads: u32,
    /// A `tokenizer.json` for token budgets of HTTP backends (default: the GGUF's vocabulary).
    pub tokenizer: Option<PathBuf>,
}

/// `[backend]`. The API key itself is never here: only the name of its environment variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendSettings {
    /// Default `embedded`.
    pub kind: BackendKind,
    /// Base URL of an HTTP backend (default `http://127.0.0.1:8080`).
    pub endpoint: String,
    /// Model name sent to HTTP servers (default `default`).
    pub model: String,
    pub api_key_env: Option<String>,
    /// Per-request timeout (default 60 s).
    pub timeout_ms: u64,
    /// Retries on 429, 5xx and connection errors (default 2), with exponential backoff.
    pub retries: u32,
    /// Bounded response cache size (default 256; 0 turns it off).
    pub cache_entries: usize,
}

/// `[prompt]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptSettings {
    /// `None` (the default, `auto`): chosen from the model's vocabulary.
    pub template: Option<Template>,
    /// Cross-file block budget (default 512, CrossCodeEval's).
    pub crossfile_tokens: u32,
    /// Tokens to generate (default 50, CrossCodeEval's line completion).
    pub max_new_tokens: u32,
}

/// `[postprocess]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostprocessSettings {
    /// Default `line`.
    pub unit: Unit,
}

/// `[lsp]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LspSettings {
    /// Wait before a completion starts (default 50 ms).
    pub debounce_ms: u64,
    /// Longest suggestion, in characters (default 500).
    pub max_suggestion_chars: usize,
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
    pub dense: DenseSettings,
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
        let d = r.dense.clone().unwrap_or_default();
        let m = options.model.clone().unwrap_or_default();
        let b = options.backend.clone().unwrap_or_default();
        let p = options.prompt.clone().unwrap_or_default();
        let pp = options.postprocess.clone().unwrap_or_default();
        let l = options.lsp.clone().unwrap_or_default();
        let cache_dir = i.cache_dir.clone().unwrap_or_else(super::default_cache_dir);
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get() as u32);
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
                cache_dir: cache_dir.clone(),
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
                dense: DenseSettings {
                    endpoint: d.endpoint,
                    model: d.model.unwrap_or_else(|| "default".into()),
                    api_key_env: d.api_key_env,
                    timeout_ms: d.timeout_ms.unwrap_or(60_000),
                    cache_dir: cache_dir.clone(),
                },
            },
            model: ModelSettings {
                path: m.path,
                n_ctx: m.n_ctx.unwrap_or(2048),
                threads: m.threads.unwrap_or(cores),
                tokenizer: m.tokenizer,
            },
            backend: BackendSettings {
                kind: b
                    .kind
                    .as_deref()
                    .and_then(BackendKind::from_name)
                    .unwrap_or(BackendKind::Embedded),
                endpoint: b.endpoint.unwrap_or_else(|| "http://127.0.0.1:8080".into()),
                model: b.model.unwrap_or_else(|| "default".into()),
                api_key_env: b.api_key_env,
                timeout_ms: b.timeout_ms.unwrap_or(60_000),
                retries: b.retries.unwrap_or(2),
                cache_entries: b.cache_entries.unwrap_or(256),
            },
            prompt: PromptSettings {
                template: p.template.as_deref().and_then(Template::from_name),
                crossfile_tokens: p.crossfile_tokens.unwrap_or(512),
                max_new_tokens: p.max_new_tokens.unwrap_or(50),
            },
            postprocess: PostprocessSettings {
                unit: pp
                    .unit
                    .as_deref()
                    .and_then(Unit::from_name)
                    .unwrap_or(Unit::Line),
            },
            lsp: LspSettings {
                debounce_ms: l.debounce_ms.unwrap_or(50),
                max_suggestion_chars: l.max_suggestion_chars.unwrap_or(500),
            },
        }
    }
}
