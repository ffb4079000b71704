//! `initialize` (client settings, workspace folders, capabilities) and `initialized` (indexing
//! and loading the model in the background).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tower_lsp::jsonrpc;
use tower_lsp::lsp_types::{
    InitializeParams, InitializeResult, MessageType, ServerInfo, WorkspaceFolder,
};

use super::state::{Folder, State};
use super::{capabilities, convert, indexing, workspace_sync};
use crate::config::{ConfigError, Ignored, Options, Settings, Source};

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

    match client_options(params.initialization_options) {
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
        let settings = match folder_settings(&root, &options) {
            Ok((settings, ignored)) => {
                show_ignored(state, &ignored).await;
                settings
            }
            Err(e) => {
                show_error(state, format!("{e}; using the defaults for this folder")).await;
                Settings::resolve(&options)
            }
        };
        tracing::info!(root = %root.display(), "workspace folder");
        folders.push(Folder::new(root, folder.name, settings));
    }
    state.set_folders(folders);
    // A server killed during an in-place replay left a file changed: put it back now.
    if let Some(file) = super::replay::restore_in_place(state) {
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

/// Client options from `initializationOptions` (the keys of `crossfile.toml`, as JSON), checked
/// by the engine's one resolver: every unknown key and bad value is named by its dotted path.
pub fn client_options(value: Option<serde_json::Value>) -> Result<Options, ConfigError> {
    match value {
        None | Some(serde_json::Value::Null) => Ok(Options::default()),
        Some(value) => Options::from_value(value, Source::Client),
    }
}

/// A folder's settings: defaults, the user's file, the folder's `crossfile.toml`, the client's;
/// with the keys of the folder's file that were ignored because the folder is not trusted.
pub fn folder_settings(
    root: &std::path::Path,
    options: &Options,
) -> Result<(Settings, Vec<Ignored>), ConfigError> {
    Settings::load_reporting(root, options.clone())
}

/// Logs the ignored keys of a folder's file and shows them to the user in one warning.
pub async fn show_ignored(state: &State, ignored: &[Ignored]) {
    if ignored.is_empty() {
        return;
    }
    for key in ignored {
        tracing::warn!("{key}");
    }
    let keys: Vec<&str> = ignored.iter().map(|i| i.key).collect();
    let message = format!(
        "crossfile: {}: ignored {} (the workspace is not trusted: it cannot choose endpoints, \
         API-key variables, model files or the cache directory; trust it in your editor or in \
         your crossfile config's [trust] workspaces)",
        ignored[0].file.display(),
        keys.join(", ")
    );
    // Shown once per session; a configuration change that ignores the same keys again only
    // logs them.
    if state.first_time(&message) {
        state
            .client
            .show_message(MessageType::WARNING, message)
            .await;
    }
}

/// Logs `message` and shows it to the user as an error.
pub async fn show_error(state: &State, message: String) {
    tracing::error!("{message}");
    state
        .client
        .show_message(MessageType::ERROR, format!("crossfile: {message}"))
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_settings_are_checked_by_dotted_path() {
        assert!(client_options(None).is_ok());
        assert!(client_options(Some(serde_json::Value::Null)).is_ok());
        let good = client_options(Some(serde_json::json!({"retrieve": {"top_k": 3}})));
        assert_eq!(
            good.ok().and_then(|o| o.retrieve).and_then(|r| r.top_k),
            Some(3)
        );
        let bad = client_options(Some(serde_json::json!({
            "retrieve": {"top_k": "many", "colour": 1},
        })));
        let message = bad.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("client settings"), "{message}");
        assert!(
            message.contains("retrieve.colour: unknown key"),
            "{message}"
        );
        assert!(message.contains("retrieve.top_k"), "{message}");
    }
}
