//! `initialize` (client settings, workspace folders, capabilities) and `initialized` (indexing
//! and loading the model in the background).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tower_lsp::jsonrpc;
use tower_lsp::lsp_types::{
    InitializeParams, InitializeResult, MessageType, ServerInfo, WorkspaceFolder,
};

use super::notify::{show_error, show_ignored};
use super::state::State;
use super::{capabilities, convert, indexing, replay, workspace_sync};
use crate::live::Folder;
use crossfile_engine::config::Options;

use crate::settings::ServerSettings;

/// Reads the client's settings and workspace folders and announces the capabilities. A bad
/// setting is shown to the user and the defaults stay in force.
pub async fn initialize(
    state: &Arc<State>,
    params: InitializeParams,
) -> jsonrpc::Result<InitializeResult> {
    let progress = params
        .capabilities
        .window
        .as_ref()
        .and_then(|w| w.work_done_progress)
        .unwrap_or(false);
    state.work_done_progress.store(progress, Ordering::Relaxed);
    let watch = params
        .capabilities
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files.as_ref())
        .and_then(|w| w.dynamic_registration)
        .unwrap_or(false);
    state.watch_registration.store(watch, Ordering::Relaxed);

    match Options::from_client(params.initialization_options) {
        Ok(options) => state.set_options(options),
        Err(e) => show_error(state, format!("{e}; the previous settings stay in force")).await,
    }
    let options = state.options();

    let mut folders = Vec::new();
    let listed = params.workspace_folders.unwrap_or_else(|| {
        params
            .root_uri
            .map(|uri| {
                vec![WorkspaceFolder {
                    name: uri
                        .path()
                        .rsplit('/')
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                    uri,
                }]
            })
            .unwrap_or_default()
    });
    for folder in listed {
        let Some(root) = convert::file_path(&folder.uri).and_then(|p| p.canonicalize().ok()) else {
            tracing::warn!(uri = %folder.uri, "skipping a workspace folder that is not a local directory");
            continue;
        };
        let settings = match ServerSettings::load_reporting(&root, options.clone()) {
            Ok((settings, ignored)) => {
                show_ignored(state, &ignored).await;
                settings
            }
            Err(e) => {
                show_error(state, format!("{e}; using the defaults for this folder")).await;
                ServerSettings::resolve(&options)
            }
        };
        tracing::info!(root = %root.display(), "workspace folder");
        folders.push(Folder::new(root, folder.name, settings));
    }
    state.set_folders(folders);
    // A server killed during an in-place replay left a file changed: put it back now.
    if let Some(file) = replay::restore_in_place(state) {
        let message = format!(
            "crossfile: restored {}, left changed by an earlier in-place replay",
            file.display()
        );
        state.client.show_message(MessageType::INFO, message).await;
    }

    Ok(InitializeResult {
        capabilities: capabilities::server_capabilities(),
        server_info: Some(ServerInfo {
            name: "crossfile".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
    })
}

/// Starts indexing every folder, watching files and loading the model, each on its own task.
pub fn initialized(state: &Arc<State>) {
    tokio::spawn(indexing::index_folders(state.clone(), state.folders()));
    tokio::spawn(workspace_sync::watch_files(state.clone()));
    let state = state.clone();
    tokio::spawn(async move {
        if let Err(e) = state.engine().await {
            show_error(&state, format!("cannot load the model: {e}")).await;
        }
    });
}
