//! The `LanguageServer` implementation: it only dispatches each message to its family's file.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tower_lsp::jsonrpc;
use tower_lsp::lsp_types::{
    CompletionParams, CompletionResponse, DidChangeConfigurationParams,
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, ExecuteCommandParams, InitializeParams,
    InitializeResult, InitializedParams, WorkDoneProgressCancelParams,
};
use tower_lsp::{Client, LanguageServer};

use super::progress::token_key;
use super::protocol::{InlineCompletionList, InlineCompletionParams, RecentLinesParams};
use super::state::State;
use super::{commands, completion, lifecycle, replay, text_sync, workspace_sync};

/// The server behind `crossfile serve`.
pub struct Server {
    state: Arc<State>,
    /// Set by `shutdown`: an `exit` after it is a clean one.
    shut_down: Arc<AtomicBool>,
}

impl Server {
    pub fn new(client: Client, shut_down: Arc<AtomicBool>) -> Server {
        Server {
            state: Arc::new(State::new(client)),
            shut_down,
        }
    }

    /// The state, for what must happen when the session ends.
    pub fn state(&self) -> Arc<State> {
        self.state.clone()
    }

    /// `textDocument/inlineCompletion` (LSP 3.18), registered as a custom method.
    pub async fn inline_completion(
        &self,
        params: InlineCompletionParams,
    ) -> jsonrpc::Result<Option<InlineCompletionList>> {
        completion::inline_completion(&self.state, params).await
    }

    /// `window/workDoneProgress/cancel` (which `tower-lsp` does not route), registered as a
    /// custom notification: the work reported under the token stops.
    pub async fn work_done_progress_cancel(&self, params: WorkDoneProgressCancelParams) {
        self.state.requests.cancel_work(&token_key(&params.token));
    }

    /// `crossfile/recentLines`, a custom notification: lines the user looked at or yanked.
    pub async fn recent_lines(&self, params: RecentLinesParams) {
        text_sync::recent_lines(&self.state, params);
    }
}

#[tower_lsp::async_trait]
impl LanguageServer for Server {
    async fn initialize(&self, params: InitializeParams) -> jsonrpc::Result<InitializeResult> {
        lifecycle::initialize(&self.state, params).await
    }

    async fn initialized(&self, _: InitializedParams) {
        lifecycle::initialized(&self.state);
    }

    async fn shutdown(&self) -> jsonrpc::Result<()> {
        self.shut_down.store(true, Ordering::SeqCst);
        replay::restore_in_place(&self.state);
        completion::battle::record_all_pending(&self.state);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        text_sync::did_open(&self.state, params);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        text_sync::did_change(&self.state, params);
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        text_sync::did_save(&self.state, params);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        text_sync::did_close(&self.state, params);
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        workspace_sync::did_change_configuration(&self.state, params).await;
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        workspace_sync::did_change_watched_files(&self.state, params);
    }

    async fn execute_command(
        &self,
        params: ExecuteCommandParams,
    ) -> jsonrpc::Result<Option<serde_json::Value>> {
        commands::execute(&self.state, params).await
    }

    async fn completion(
        &self,
        params: CompletionParams,
    ) -> jsonrpc::Result<Option<CompletionResponse>> {
        completion::completion(&self.state, params).await
    }
}
