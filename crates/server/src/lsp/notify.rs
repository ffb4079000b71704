//! What the user is shown: errors and ignored settings, as `window/showMessage` (and in the log).

use tower_lsp::lsp_types::MessageType;

use crossfile_engine::config::Ignored;

use super::state::State;

/// Logs the ignored keys of a folder's file and shows them to the user in one warning.
pub async fn show_ignored(state: &State, ignored: &[Ignored]) {
    if ignored.is_empty() {
        return;
    }
    for key in ignored {
        tracing::warn!("{key}");
    }
    let keys: Vec<&str> = ignored.iter().map(|i| i.key.as_str()).collect();
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
