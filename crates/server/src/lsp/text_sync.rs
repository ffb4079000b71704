//! `didOpen`, `didChange` (incremental), `didSave` and `didClose`: the open buffers, the ring of
//! recent chunks and the index; and `crossfile/recentLines`, lines shown or yanked, to the ring.
//!
//! Each handler changes the document store at once, before it returns, so edits apply in the
//! order they arrived; the index takes the new text later, off the message loop
//! ([`crate::live::Folder::touch`]). An open buffer's text wins over the disk.

use tower_lsp::lsp_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, TextDocumentContentChangeEvent,
};

use super::convert::to_engine;
use super::protocol::RecentLinesParams;
use super::state::State;
use crossfile_engine::workspace::Documents;
use crossfile_engine::workspace::normalize_newlines;

pub fn did_open(state: &State, params: DidOpenTextDocumentParams) {
    let Some((folder, rel)) = state.locate(&params.text_document.uri) else {
        tracing::debug!(uri = %params.text_document.uri, "opened outside every workspace folder");
        return;
    };
    folder
        .documents
        .open(&rel, &normalize_newlines(&params.text_document.text));
    folder.note_recent(&rel, 0);
    folder.touch(&rel);
}

/// Lines of an open buffer the user looked at or yanked: the ring notes the window centred on
/// them (a screen or a yank of up to 64 lines whole).
pub fn recent_lines(state: &State, params: RecentLinesParams) {
    let Some((folder, rel)) = state.locate(&params.text_document.uri) else {
        return;
    };
    let (start, end) = (params.range.start.line, params.range.end.line);
    let middle = start.min(end) + start.abs_diff(end) / 2;
    folder.note_recent(&rel, middle);
}

pub fn did_change(state: &State, params: DidChangeTextDocumentParams) {
    let Some((folder, rel)) = state.locate(&params.text_document.uri) else {
        return;
    };
    if !apply_changes(&folder.documents, &rel, &params.content_changes) {
        tracing::warn!(path = %rel, "a change to a document that is not open");
    }
    // Where the user edits: the first change's line (a whole-text change: the top).
    let line = params
        .content_changes
        .first()
        .and_then(|c| c.range)
        .map_or(0, |r| r.start.line);
    folder.note_recent(&rel, line);
    folder.touch(&rel);
}

/// Applies changes in order: a change without a range replaces the text, one with a range
/// (UTF-16 positions) edits it. Returns false if the document is not open.
fn apply_changes(docs: &Documents, rel: &str, changes: &[TextDocumentContentChangeEvent]) -> bool {
    for change in changes {
        let text = normalize_newlines(&change.text);
        let Some(range) = change.range else {
            docs.open(rel, &text);
            continue;
        };
        let start = to_engine(docs.line(rel, range.start.line).as_deref(), range.start);
        let end = to_engine(docs.line(rel, range.end.line).as_deref(), range.end);
        if !docs.edit(rel, start..end, &text) {
            return false;
        }
    }
    true
}

pub fn did_save(state: &State, params: DidSaveTextDocumentParams) {
    if let Some((folder, rel)) = state.locate(&params.text_document.uri) {
        folder.touch(&rel);
    }
}

pub fn did_close(state: &State, params: DidCloseTextDocumentParams) {
    if let Some(battle) = state.battles.take_in(&params.text_document.uri) {
        state.battles.record(&battle, None);
    }
    if let Some((folder, rel)) = state.locate(&params.text_document.uri) {
        folder.documents.close(&rel);
        folder.touch(&rel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp::lsp_types::{Position, Range};

    fn change(from: (u32, u32), to: (u32, u32), text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(
                Position::new(from.0, from.1),
                Position::new(to.0, to.1),
            )),
            range_length: None,
            text: text.into(),
        }
    }

    /// Applies `changes` to an open `before` and returns the text.
    fn check(before: &str, changes: &[TextDocumentContentChangeEvent]) -> Option<String> {
        let docs = Documents::default();
        docs.open("a.py", &normalize_newlines(before));
        assert!(apply_changes(&docs, "a.py", changes));
        docs.text("a.py")
    }

    #[test]
    fn incremental_changes_count_utf16_units() {
        // (before, changes, after)
        let rows: Vec<(&str, Vec<TextDocumentContentChangeEvent>, &str)> = vec![
            ("x = 1\n", vec![change((0, 4), (0, 5), "2")], "x = 2\n"),
            // 🎉 is two UTF-16 units: column 2 is right after it.
            (
                "s = '🎉'\n",
                vec![change((0, 7), (0, 7), "!")],
                "s = '🎉!'\n",
            ),
            ("🎉🎉x\n", vec![change((0, 2), (0, 4), "")], "🎉x\n"),
            ("é中🎉\nz\n", vec![change((0, 2), (1, 0), "")], "é中z\n"),
            // In order: the second change sees the first.
            (
                "ab\n",
                vec![change((0, 0), (0, 0), "🎉"), change((0, 2), (0, 3), "A")],
                "🎉Ab\n",
            ),
            // Past the line's end clamps to it; past the last line, to the end of the text.
            ("ab\ncd", vec![change((0, 9), (0, 9), "!")], "ab!\ncd"),
            ("ab\ncd", vec![change((5, 0), (5, 0), "?")], "ab\ncd?"),
            // CRLF from the client becomes LF; lines stay the same.
            (
                "a\r\nb\r\n",
                vec![change((1, 1), (1, 1), "\r\nc")],
                "a\nb\nc\n",
            ),
        ];
        for (before, changes, after) in rows {
            assert_eq!(
                check(before, &changes).as_deref(),
                Some(after),
                "{before:?}"
            );
        }
        let whole = TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text: "new".into(),
        };
        assert_eq!(check("old", &[whole]).as_deref(), Some("new"));
        assert!(!apply_changes(
            &Documents::default(),
            "b.py",
            &[change((0, 0), (0, 0), "x")]
        ));
    }
}
