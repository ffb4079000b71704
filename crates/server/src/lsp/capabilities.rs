//! What the server announces in `initialize`, including `inlineCompletionProvider`, which the
//! protocol types of tower-lsp 0.20 (lsp-types 0.94) lack and the edge (`service.rs`) adds.

use serde_json::{Value, json};
use tower_lsp::jsonrpc::Response;
use tower_lsp::lsp_types::{
    CompletionOptions, ExecuteCommandOptions, PositionEncodingKind, SaveOptions,
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions,
};

/// Incremental text sync with open, close and save; completion; the commands; UTF-16
/// positions.
pub fn server_capabilities() -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
                ..TextDocumentSyncOptions::default()
            },
        )),
        completion_provider: Some(CompletionOptions {
            resolve_provider: Some(false),
            trigger_characters: Some(vec![".".into(), "(".into()]),
            ..CompletionOptions::default()
        }),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: super::ext::ALL.iter().map(|c| c.to_string()).collect(),
            ..ExecuteCommandOptions::default()
        }),
        ..ServerCapabilities::default()
    }
}

/// Adds `capabilities.inlineCompletionProvider` (LSP 3.18) to an answer of `initialize`.
pub fn add_inline_provider(response: Response) -> Response {
    let (id, result) = response.into_parts();
    let result = result.map(|mut value: Value| {
        if let Some(capabilities) = value.get_mut("capabilities").and_then(Value::as_object_mut) {
            capabilities.insert("inlineCompletionProvider".into(), json!({}));
        }
        value
    });
    Response::from_parts(id, result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp::jsonrpc::Id;

    #[test]
    fn initialize_answers_gain_the_inline_provider() {
        let answer = Response::from_ok(Id::Number(1), json!({"capabilities": {"x": 1}}));
        let (_, result) = add_inline_provider(answer).into_parts();
        assert_eq!(
            result.ok(),
            Some(json!({"capabilities": {"x": 1, "inlineCompletionProvider": {}}}))
        );
        let error =
            Response::from_error(Id::Number(2), tower_lsp::jsonrpc::Error::internal_error());
        assert!(add_inline_provider(error).is_error());
    }
}
