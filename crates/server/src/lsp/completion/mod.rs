//! `textDocument/completion` and `textDocument/inlineCompletion`: one suggestion from the engine's
//! pipeline ([`at_cursor`]), as a completion item or an inline item.
//!
//! The handler reads the buffer at once (so the text matches the position), then the work runs on
//! a spawned task: waiting for the index and the model, retrieval on the blocking pool,
//! generation cancellable; the completion is kept as the document's last. It starts after
//! `lsp.debounce_ms`; a newer request for the same document, or `$/cancelRequest`, cancels it; a
//! panic in it becomes an error response. The suggestion is cut to `lsp.max_suggestion_chars`.
//! Typing along the last suggestion is answered from it ([`crate::live::along`]); an answer the
//! backend gave from the last answer's layout is replaced by the new prompt's own in the
//! background ([`refresh`]).

pub mod at_cursor;
pub mod battle;
pub mod inflight;
mod refresh;

use std::sync::Arc;
use std::time::Instant;

use tower_lsp::jsonrpc;
use tower_lsp::lsp_types::{
    CompletionItem, CompletionItemKind, CompletionList, CompletionParams, CompletionResponse,
    CompletionTextEdit, InsertTextFormat, Position, Range, TextEdit, Url,
};

use tokio_util::sync::CancellationToken;

use crate::live::along::Anchor;
use crate::live::{Folder, LastCompletion, at_most_chars};
use crate::lsp::convert::{cursor_in, spot};
use crate::lsp::error::{ServeError, internal};
use crate::lsp::protocol::{InlineCompletionItem, InlineCompletionList, InlineCompletionParams};
use crate::lsp::state::State;
use at_cursor::CursorRequest;
use crossfile_engine::complete::Timings;
use inflight::InFlight;
use refresh::Replaced;

/// A suggestion and how it was made.
struct Suggestion {
    text: String,
    retriever: String,
    latency_ms: f64,
}

pub async fn completion(
    state: &Arc<State>,
    params: CompletionParams,
) -> jsonrpc::Result<Option<CompletionResponse>> {
    let at = params.text_document_position;
    let Some(located) = locate(state, &at.text_document.uri) else {
        return Ok(None);
    };
    let shown = visible(state, &at.text_document.uri, at.position, located).await?;
    let items = shown
        .iter()
        .map(|suggestion| completion_item(suggestion, at.position))
        .collect();
    // Incomplete: the client asks again as the user types, and gets a fresh suggestion.
    Ok(Some(CompletionResponse::List(CompletionList {
        is_incomplete: true,
        items,
    })))
}

pub async fn inline_completion(
    state: &Arc<State>,
    params: InlineCompletionParams,
) -> jsonrpc::Result<Option<InlineCompletionList>> {
    let at = params.text_document_position;
    let Some((folder, rel)) = locate(state, &at.text_document.uri) else {
        return Ok(None);
    };
    if folder.settings().arena.active() {
        return battle::inline(state, &at.text_document.uri, at.position, folder, rel).await;
    }
    let shown = visible(state, &at.text_document.uri, at.position, (folder, rel)).await?;
    let items = shown
        .into_iter()
        .map(|suggestion| InlineCompletionItem {
            insert_text: suggestion.text,
            range: Some(Range::new(at.position, at.position)),
            command: None,
        })
        .collect();
    Ok(Some(InlineCompletionList { items }))
}

/// The suggestion is inserted at the cursor; the label is its first line.
fn completion_item(suggestion: &Suggestion, at: Position) -> CompletionItem {
    let first = suggestion.text.lines().next().unwrap_or_default().trim();
    let label: String = first.chars().take(80).collect();
    CompletionItem {
        label,
        kind: Some(CompletionItemKind::TEXT),
        detail: Some(format!(
            "crossfile · {} · {:.0} ms",
            suggestion.retriever, suggestion.latency_ms
        )),
        preselect: Some(true),
        sort_text: Some("0".into()),
        insert_text: Some(suggestion.text.clone()),
        insert_text_format: Some(InsertTextFormat::PLAIN_TEXT),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit {
            range: Range::new(at, at),
            new_text: suggestion.text.clone(),
        })),
        ..CompletionItem::default()
    }
}

/// The folder holding `uri`'s file and its path there; `None` (logged) when it is in none.
fn locate(state: &State, uri: &Url) -> Option<(Arc<Folder>, String)> {
    let located = state.locate(uri);
    if located.is_none() {
        tracing::debug!(%uri, "completion outside every workspace folder");
    }
    located
}

/// The suggestion at `position` of `uri` (in `located`: its folder and path there) as the client
/// shows it: none when it is blank.
async fn visible(
    state: &Arc<State>,
    uri: &Url,
    position: Position,
    located: (Arc<Folder>, String),
) -> jsonrpc::Result<Vec<Suggestion>> {
    let suggestion = suggest(state, uri, position, located).await?;
    Ok(if suggestion.text.trim().is_empty() {
        Vec::new()
    } else {
        vec![suggestion]
    })
}

/// Completes at `position` of `uri`, in `located` (its folder and path there).
async fn suggest(
    state: &Arc<State>,
    uri: &Url,
    position: Position,
    (folder, rel): (Arc<Folder>, String),
) -> jsonrpc::Result<Suggestion> {
    let started = Instant::now();
    let buffer = folder.documents.text(&rel);
    let request = state.requests.begin(uri);
    if let Some(rest) = along_last(state, uri, position, buffer.as_deref()) {
        state.requests.end(uri, &request);
        tracing::debug!(%uri, "typing along the suggestion");
        return Ok(Suggestion {
            latency_ms: started.elapsed().as_secs_f64() * 1e3,
            ..rest
        });
    }
    tracing::debug!(%uri, line = position.line, character = position.character, "completion asked");
    let asked = CursorRequest {
        buffer,
        folder,
        rel,
        uri: uri.clone(),
        position,
    };
    let outcome = run_request(state, uri, request, |cancel| {
        complete_at(state.clone(), asked, cancel)
    })
    .await;
    let shown = match outcome {
        Ok(Ok(shown)) => shown,
        Ok(Err(e)) if e.is_cancelled() => {
            tracing::debug!(%uri, "completion cancelled");
            return Err(e.to_response(""));
        }
        Ok(Err(e)) => {
            tracing::warn!(%uri, "completion failed: {e}");
            return Err(e.to_response(""));
        }
        Err(e) => {
            tracing::error!(%uri, "completion task failed: {e}");
            return Err(internal(format!("the completion failed: {e}")));
        }
    };
    let latency_ms = started.elapsed().as_secs_f64() * 1e3;
    let t = shown.timings;
    tracing::info!(
        %uri, retriever = shown.retriever, latency_ms, retrieve_ms = t.retrieve_ms,
        prompt_ms = t.prompt_ms, generate_ms = t.generate_ms, "completion"
    );
    Ok(Suggestion {
        text: shown.text,
        retriever: shown.retriever,
        latency_ms,
    })
}

/// Runs a document's completion `work` (its `request` begun, which cancelled the document's
/// older one) on a task of its own, and ends the request. The model is wanted: a fallback's
/// answer being replaced in the background (in this document or another) gives way, and the
/// prompt is built on a core the model's idle work (reading ahead) would take. Dropped with the
/// handler (`$/cancelRequest`), the work stops at its next check.
async fn run_request<T, F>(
    state: &Arc<State>,
    uri: &Url,
    request: InFlight,
    work: impl FnOnce(CancellationToken) -> F,
) -> Result<Result<T, ServeError>, tokio::task::JoinError>
where
    F: std::future::Future<Output = Result<T, ServeError>> + Send + 'static,
    T: Send + 'static,
{
    state.requests.cancel_refresh();
    let _foreground = state.foreground();
    let cancel_on_drop = request.token.clone().drop_guard();
    let outcome = tokio::spawn(work(request.token.clone())).await;
    cancel_on_drop.disarm();
    state.requests.end(uri, &request);
    outcome
}

/// What the client is shown of a completion.
struct Shown {
    /// The suggestion, cut to `lsp.max_suggestion_chars`.
    text: String,
    retriever: String,
    timings: Timings,
}

/// The engine's part: after the debounce, the cursor, the model, the completion; the completion
/// is kept as the document's last (`crossfile.context`, `crossfile.score`).
async fn complete_at(
    state: Arc<State>,
    asked: CursorRequest,
    cancel: CancellationToken,
) -> Result<Shown, ServeError> {
    // The debounce: a newer request for this document within it cancels this one.
    debounce(asked.folder.settings().lsp.debounce_ms, &cancel).await?;
    let (uri, position) = (asked.uri.clone(), asked.position);
    let anchor = asked
        .buffer
        .as_deref()
        .and_then(|text| anchor_at(text, position));
    let cursor = at_cursor::prepare(&state, asked, &cancel).await?;
    // While the model is being fetched the answer says so at once, rather than hang.
    if let Some(note) = state.downloading() {
        return Err(ServeError::ModelDownloading(note));
    }
    let engine = tokio::select! {
        engine = state.engine() => engine?,
        () = cancel.cancelled() => return Err(ServeError::Cancelled),
    };
    let done = at_cursor::complete(&cursor, &engine, None, &cancel).await?;
    let limit = cursor.settings.lsp.max_suggestion_chars;
    let shown = Shown {
        text: at_most_chars(done.completion.suggestion.clone(), limit),
        retriever: done.retriever.to_string(),
        timings: done.completion.timings,
    };
    let generation = &done.completion.generation;
    let replace = generation.from_fallback || generation.out_of_time;
    let last = Arc::new(LastCompletion {
        position: spot(position),
        asked_at: spot(position),
        case_id: cursor.case.as_ref().map(|c| c.id().to_string()),
        shown: shown.text.clone(),
        closed: 0,
        anchor,
        done: Arc::new(done),
    });
    state.last.remember(uri.clone(), last.clone());
    if replace {
        refresh::replace_later(&state, cursor, engine, Replaced { uri, last, limit });
    }
    Ok(shown)
}

/// Waits `debounce_ms` unless `cancel` comes first. None is no timer at all: tokio's timer counts
/// whole milliseconds, so even a zero sleep waits for the next tick (1.4 ms at the median,
/// measured with `bench lsp`).
async fn debounce(debounce_ms: u64, cancel: &CancellationToken) -> Result<(), ServeError> {
    if debounce_ms > 0 {
        let debounce = std::time::Duration::from_millis(debounce_ms);
        tokio::select! {
            () = tokio::time::sleep(debounce) => Ok(()),
            () = cancel.cancelled() => Err(ServeError::Cancelled),
        }
    } else if cancel.is_cancelled() {
        Err(ServeError::Cancelled)
    } else {
        Ok(())
    }
}

/// The rest of the document's last suggestion when the user has typed its first characters (and
/// changed nothing else): kept as the document's last, anchored at the new cursor.
fn along_last(
    state: &State,
    uri: &Url,
    position: Position,
    buffer: Option<&str>,
) -> Option<Suggestion> {
    let text = buffer?;
    let at = offset_at(text, position)?;
    let along = state.last.along(uri, spot(position), text, at)?;
    Some(Suggestion {
        text: along.answer().to_string(),
        retriever: along.done.retriever.to_string(),
        latency_ms: 0.0,
    })
}

/// The byte offset of `position` in `text`, if it is inside it.
fn offset_at(text: &str, position: Position) -> Option<usize> {
    crossfile_engine::workspace::offset_of(text, cursor_in(text, position))
}

fn anchor_at(text: &str, position: Position) -> Option<Anchor> {
    Anchor::new(text, offset_at(text, position)?)
}
