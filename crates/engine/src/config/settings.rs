//! Resolved settings, and every default in one place. Each engine module owns its settings type
//! (`index::IndexSettings`, `retrieve::RetrieveSettings`, …); this file assembles them from the
//! checked options.

use super::options::Options;
use crate::backend::{BackendKind, BackendSettings};
use crate::choice::OrAuto;
use crate::chunk::{ChunkerKind, ChunkerSettings};
use crate::index::IndexSettings;
use crate::model::ModelSettings;
use crate::postprocess::{PostprocessSettings, Unit};
use crate::prompt::PromptSettings;
use crate::retrieve::{DEFAULT_RETRIEVER, DenseSettings, RetrieveSettings};
use crate::workspace::WorkspaceSettings;

/// Everything the engine reads, resolved and defaulted. The keys only the language server reads
/// (`[lsp]`, `[arena]`) are resolved by it (`crossfile_server::settings`).
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Also holds `[workspace]` (which files are taken): the walk is the index's.
    pub index: IndexSettings,
    pub retrieve: RetrieveSettings,
    pub model: ModelSettings,
    pub backend: BackendSettings,
    pub prompt: PromptSettings,
    pub postprocess: PostprocessSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Settings::resolve(&Options::default())
    }
}

impl Settings {
    /// Applies defaults to checked options: every value was parsed into its type and
    /// range-checked per layer, so this cannot fail.
    pub fn resolve(options: &Options) -> Settings {
        let w = options.workspace.clone().unwrap_or_default();
        let i = options.index.clone().unwrap_or_default();
        let r = options.retrieve.clone().unwrap_or_default();
        let d = r.dense.clone().unwrap_or_default();
        let m = options.model.clone().unwrap_or_default();
        let b = options.backend.clone().unwrap_or_default();
        let p = options.prompt.clone().unwrap_or_default();
        let pp = options.postprocess.clone().unwrap_or_default();
        let cache_dir = i.cache_dir.clone().unwrap_or_else(super::default_cache_dir);
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get() as u32);
        let chunker = ChunkerSettings {
            fixed_lines: i.fixed_lines.unwrap_or(10),
            sliding_lines: i.sliding_lines.unwrap_or(20),
            sliding_stride: i.sliding_stride.unwrap_or(10),
            syntax_max_lines: i.syntax_max_lines.unwrap_or(40),
        };
        Settings {
            index: IndexSettings {
                cache_dir: cache_dir.clone(),
                bm25_chunker: i.bm25_chunker.unwrap_or(ChunkerKind::Sliding),
                chunker,
                workspace: WorkspaceSettings {
                    max_file_bytes: w.max_file_bytes.unwrap_or(1 << 20),
                },
                lock_wait_ms: i.lock_wait_ms.unwrap_or(10_000),
            },
            retrieve: RetrieveSettings {
                retriever: r.retriever.unwrap_or(DEFAULT_RETRIEVER),
                top_k: r.top_k.unwrap_or(5),
                query_lines: r.query_lines.unwrap_or(10),
                jaccard_query_lines: r.jaccard_query_lines.unwrap_or(20),
                rrf_k: r.rrf_k.unwrap_or(60.0),
                exclude: r.exclude.unwrap_or_default(),
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
                named: m
                    .name
                    .as_deref()
                    .and_then(crate::model::catalogue::by_name)
                    .copied()
                    .unwrap_or(crate::model::DEFAULT_MODEL),
                n_ctx: m.n_ctx.unwrap_or(2048),
                threads: m.threads.unwrap_or(cores),
                kv_slots: m.kv_slots.unwrap_or(2),
                kv_shift_min_span: m.kv_shift_min_span.unwrap_or(0),
                tokenizer: m.tokenizer,
            },
            backend: BackendSettings {
                kind: b.kind.unwrap_or(BackendKind::Embedded),
                endpoint: b.endpoint.unwrap_or_else(|| "http://127.0.0.1:8080".into()),
                model: b.model.unwrap_or_else(|| "default".into()),
                api_key_env: b.api_key_env,
                timeout_ms: b.timeout_ms.unwrap_or(60_000),
                retries: b.retries.unwrap_or(2),
                cache_entries: b.cache_entries.unwrap_or(256),
                fim: b.fim.unwrap_or_default(),
            },
            prompt: PromptSettings {
                template: p.template.and_then(OrAuto::chosen),
                layout: p.layout.and_then(OrAuto::chosen),
                crossfile_tokens: p.crossfile_tokens.unwrap_or(512),
                max_new_tokens: p.max_new_tokens.unwrap_or(50),
            },
            postprocess: PostprocessSettings {
                unit: pp.unit.unwrap_or(Unit::Line),
            },
        }
    }
}
