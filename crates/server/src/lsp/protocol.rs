//! LSP 3.18 types that lsp-types 0.94 lacks: `textDocument/inlineCompletion`'s params and result;
//! and crossfile's one notification, `crossfile/recentLines`.

use serde::{Deserialize, Serialize};
use tower_lsp::lsp_types::{Command, Range, TextDocumentIdentifier, TextDocumentPositionParams};

/// The method name of inline completion.
pub const INLINE_COMPLETION: &str = "textDocument/inlineCompletion";
/// The client asks to cancel work it was shown progress of (LSP 3.15).
pub const WORK_DONE_PROGRESS_CANCEL: &str = "window/workDoneProgress/cancel";
/// The client tells which lines of an open buffer the user looked at or yanked (a
/// notification), for the ring of recent chunks.
pub const RECENT_LINES: &str = "crossfile/recentLines";

/// `crossfile/recentLines`' params: an open buffer and the lines shown or yanked (the range's
/// characters are not read).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecentLinesParams {
    pub text_document: TextDocumentIdentifier,
    pub range: Range,
}

/// `InlineCompletionParams`: a position; the context (trigger kind, selected item) is not needed
/// and not read.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InlineCompletionParams {
    #[serde(flatten)]
    pub text_document_position: TextDocumentPositionParams,
}

/// `InlineCompletionList`.
#[derive(Debug, Serialize, PartialEq)]
pub struct InlineCompletionList {
    pub items: Vec<InlineCompletionItem>,
}

/// `InlineCompletionItem`: the text to insert and the range it replaces.
#[derive(Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct InlineCompletionItem {
    pub insert_text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
    /// Run after the item is inserted (an arena battle's vote).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Command>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tower_lsp::lsp_types::Position;

    #[test]
    fn inline_completion_has_the_lsp_3_18_shape() {
        let params: Result<InlineCompletionParams, _> = serde_json::from_value(json!({
            "textDocument": {"uri": "file:///w/a.py"},
            "position": {"line": 3, "character": 7},
            "context": {"triggerKind": 2},
        }));
        let position = params.map(|p| p.text_document_position.position).ok();
        assert_eq!(position, Some(Position::new(3, 7)));
        let at = Position::new(3, 7);
        let list = InlineCompletionList {
            items: vec![InlineCompletionItem {
                insert_text: "x()".into(),
                range: Some(Range::new(at, at)),
                command: None,
            }],
        };
        assert_eq!(
            serde_json::to_value(list).ok(),
            Some(json!({"items": [{"insertText": "x()", "range": {
                "start": {"line": 3, "character": 7}, "end": {"line": 3, "character": 7}}}]}))
        );
    }
}
