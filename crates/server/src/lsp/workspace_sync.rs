//! `workspace/didChangeConfiguration` and `workspace/didChangeWatchedFiles`: settings and files
//! that change outside the open buffers.

use std::sync::Arc;

use serde_json::Value;
use tower_lsp::lsp_types::{
    DidChangeConfigurationParams, DidChangeWatchedFilesParams,
    DidChangeWatchedFilesRegistrationOptions, FileChangeType, FileSystemWatcher, GlobPattern,
    Registration,
};

use super::indexing;
use super::notify::{show_error, show_ignored};
use super::state::State;
use crossfile_engine::config::Options;

use crate::settings::ServerSettings;

/// The files the index holds, for the client's file watcher.
const WATCHED: &str = "**/*.{py,java,ts,tsx,cs}";

/// New client settings, as `{"crossfile": {...}}` (a client's configuration section) or the
/// options themselves. A bad value is shown and every previous setting stays; good ones apply
/// to each folder (a folder whose index settings changed is indexed again, its old index serving
/// until then), and the model is reloaded on the next completion if its settings changed.
pub async fn did_change_configuration(state: &Arc<State>, params: DidChangeConfigurationParams) {
    let value = match params.settings {
        Value::Object(mut map) if map.len() == 1 && map.contains_key("crossfile") => {
            map.remove("crossfile")
        }
        Value::Null => {
            tracing::debug!("didChangeConfiguration without settings");
            return;
        }
        other => Some(other),
    };
    let options = match Options::from_client(value) {
        Ok(options) => options,
        Err(e) => {
            show_error(state, format!("{e}; the previous settings stay in force")).await;
            return;
        }
    };
    state.set_options(options.clone());
    let mut reindex = Vec::new();
    for folder in state.folders() {
        let settings = match ServerSettings::load_reporting(&folder.root, options.clone()) {
            Ok((settings, ignored)) => {
                show_ignored(state, &ignored).await;
                settings
            }
            Err(e) => {
                show_error(
                    state,
                    format!("{e}; the folder keeps its previous settings"),
                )
                .await;
                continue;
            }
        };
        let index_changed = settings.index != folder.settings().index;
        folder.set_settings(settings);
        if index_changed {
            reindex.push(folder);
        }
    }
    tracing::info!(reindex = reindex.len(), "settings changed");
    if !reindex.is_empty() {
        tokio::spawn(indexing::index_folders(state.clone(), reindex));
    }
}

/// Files created, changed or deleted on disk: each is read again, unless it is open (its buffer
/// wins until `didClose`).
pub fn did_change_watched_files(state: &State, params: DidChangeWatchedFilesParams) {
    for change in params.changes {
        if let Some((folder, rel)) = state.locate(&change.uri)
            && !folder.documents.is_open(&rel)
        {
            if change.typ == FileChangeType::DELETED {
                folder.forget_recent(&rel);
            }
            folder.touch(&rel);
        }
    }
}

/// Asks the client to watch the indexed kinds of files, if it takes dynamic registration.
pub async fn watch_files(state: Arc<State>) {
    if !state
        .watch_registration
        .load(std::sync::atomic::Ordering::Relaxed)
    {
        return;
    }
    let options = DidChangeWatchedFilesRegistrationOptions {
        watchers: vec![FileSystemWatcher {
            glob_pattern: GlobPattern::String(WATCHED.into()),
            kind: None,
        }],
    };
    let registration = Registration {
        id: "crossfile/watched-files".into(),
        method: "workspace/didChangeWatchedFiles".into(),
        register_options: serde_json::to_value(options).ok(),
    };
    if let Err(e) = state.client.register_capability(vec![registration]).await {
        tracing::warn!("the client refused to watch files: {e}");
    }
}
