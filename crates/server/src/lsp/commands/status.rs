//! `crossfile.retrievers` (the retriever specs this server accepts, with what each needs) and
//! `crossfile.status` (what it runs with): what the clients show instead of keeping their own
//! lists and guessing paths.

use crate::live::IndexState;
use crossfile_engine::backend::BackendKind;
use crossfile_engine::complete::model_label;
use crossfile_engine::config::{self, Settings};
use std::sync::atomic::Ordering;

use crate::lsp::ext::{
    ArenaStatus, BackendStatus, FolderStatus, ModelStatus, RetrieverInfo, StatusResult,
};
use crate::lsp::state::State;
use crossfile_engine::retrieve::RETRIEVERS;

/// Every retriever spec form, each available or not under the settings completions use.
pub fn retrievers(state: &State) -> Vec<RetrieverInfo> {
    let settings = state.engine_settings();
    let default = settings.retrieve.retriever.to_string();
    RETRIEVERS
        .iter()
        .map(|form| RetrieverInfo {
            spec: form.spec.to_string(),
            summary: form.summary.to_string(),
            needs: form.needs.name().to_string(),
            available: form.needs.met_by(&settings.retrieve),
            upper_bound: form.upper_bound,
            composite: form.composite,
            default: form.spec == default,
        })
        .collect()
}

/// The model, backend, cache directory and user config the server resolved, and each folder's
/// index and trust.
pub fn status(state: &State) -> StatusResult {
    let settings = state.engine_settings();
    let user_config = config::user_config_path();
    let options = state.options();
    let folders = state
        .folders()
        .iter()
        .map(|folder| {
            let settings = folder.settings();
            let (index, files, chunks, error) = match &*folder.index_state() {
                IndexState::Building => ("building", None, None, None),
                IndexState::Ready(index) => {
                    let snapshot = index.snapshot();
                    let chunks = snapshot.chunk_count(settings.index.bm25_chunker);
                    ("ready", Some(snapshot.len()), Some(chunks), None)
                }
                IndexState::Failed(why) => ("failed", None, None, Some(why.clone())),
            };
            FolderStatus {
                name: folder.name.clone(),
                root: folder.root.clone(),
                index: index.to_string(),
                files,
                chunks,
                error,
                trusted: config::workspace_trusted(&folder.root, &options).unwrap_or(false),
            }
        })
        .collect();
    StatusResult {
        version: env!("CARGO_PKG_VERSION").to_string(),
        model: model_status(state, &settings),
        backend: backend_status(&settings),
        cache_dir: settings.index.cache_dir.clone(),
        user_config_exists: user_config.as_deref().is_some_and(std::path::Path::is_file),
        user_config,
        retriever: settings.retrieve.retriever.to_string(),
        folders,
        arena: arena_status(state),
    }
}

/// The arena of the first folder that has it on, with this session's counts.
fn arena_status(state: &State) -> Option<ArenaStatus> {
    let settings = state
        .folders()
        .iter()
        .map(|folder| folder.settings())
        .find(|settings| settings.arena.active())?;
    let arena = &settings.arena;
    let count = |n: &std::sync::atomic::AtomicU64| n.load(Ordering::Relaxed);
    let battles = &state.battles;
    Some(ArenaStatus {
        arms: arena.arms.iter().map(|arm| arm.spec.clone()).collect(),
        votes: arena.votes.clone(),
        seed: state.pair_draw(arena.seed).seed(),
        battles: count(&battles.shown),
        recorded: count(&battles.recorded),
        failed: count(&battles.failed),
        blank: count(&battles.blank),
    })
}

fn model_status(state: &State, settings: &Settings) -> ModelStatus {
    let model = &settings.model;
    let (source, name, file) = match &model.path {
        Some(path) => ("path", None, path.clone()),
        None => (
            "catalogue",
            Some(model.named.name.to_string()),
            crossfile_engine::model::model_path(&model.named, &settings.index.cache_dir),
        ),
    };
    ModelStatus {
        label: model_label(settings),
        source: source.to_string(),
        name,
        present: file.is_file(),
        file,
        loaded: state.model_loaded(),
        downloading: state.downloading(),
    }
}

fn backend_status(settings: &Settings) -> BackendStatus {
    let backend = &settings.backend;
    let remote = !matches!(backend.kind, BackendKind::Embedded | BackendKind::None);
    BackendStatus {
        kind: backend.kind.to_string(),
        endpoint: remote.then(|| backend.endpoint.clone()),
        model: remote.then(|| backend.model.clone()),
    }
}
