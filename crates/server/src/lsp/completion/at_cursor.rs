//! What a completion at a cursor works from, and running it with one retriever. Shared by
//! `textDocument/completion`, inline completion and `crossfile.compare`.
//!
//! At a replayed case's own cursor, with its text unedited, the completion is the case's, laid
//! out as `bench run` lays it out ([`crossfile_bench::bench::layout`]): the same snapshot, query and
//! completer, so the suggestion and its scores are the same. Anywhere else it is a live one: the
//! buffer's text (or the disk's) and the folder's index, once it holds every edit made before
//! but the cursor's own line ([`crate::live::Folder::index_at`]).

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use tower_lsp::lsp_types::{Position, Url};

use crate::live::{Done, Engine, Folder};
use crate::lsp::convert::cursor_in;
use crate::lsp::error::ServeError;
use crate::lsp::replay::session::{Replayable, ReplayedCase};
use crate::lsp::state::State;
use crate::settings::ServerSettings;
use crossfile_bench::bench::layout::completer_for;
use crossfile_bench::bench::layout::evocodebench::body_at_cursor;
use crossfile_bench::bench::layout::evocodebench::exec_completer;
use crossfile_engine::complete::{Live, Mode};
use crossfile_engine::index::Snapshot;
use crossfile_engine::retrieve::{Query, RetrieverSpec};
use crossfile_engine::workspace;

/// A completion asked at a position of a document.
pub struct CursorRequest {
    /// The workspace folder holding the document, and the document's path in it.
    pub folder: Arc<Folder>,
    pub rel: String,
    pub uri: Url,
    pub position: Position,
    /// The document's text when the request came (`None`: not open, the disk's).
    pub buffer: Option<String>,
}

/// A cursor made ready to complete.
pub struct Cursor {
    pub folder: Arc<Folder>,
    pub settings: Arc<ServerSettings>,
    pub snapshot: Arc<Snapshot>,
    pub query: Query,
    /// The replayed case whose cursor this is.
    pub case: Option<Arc<ReplayedCase>>,
}

impl Cursor {
    /// The same cursor completed with `settings` (an arena arm's).
    pub fn with_settings(&self, settings: Arc<ServerSettings>) -> Cursor {
        Cursor {
            folder: self.folder.clone(),
            settings,
            snapshot: self.snapshot.clone(),
            query: self.query.clone(),
            case: self.case.clone(),
        }
    }
}

/// Prepares the completion `request` asks for.
pub async fn prepare(
    state: &State,
    request: CursorRequest,
    cancel: &CancellationToken,
) -> Result<Cursor, ServeError> {
    let CursorRequest {
        folder,
        rel,
        uri,
        position,
        buffer,
    } = request;
    let settings = folder.settings();
    if let Some(case) = state.replay.case_at(&uri, position)
        && buffer.as_deref().is_none_or(|b| b == case.text)
    {
        return Ok(Cursor {
            folder,
            settings,
            snapshot: case.snapshot.clone(),
            query: case.query.clone(),
            case: Some(case),
        });
    }
    let index = tokio::select! {
        index = folder.index_at(&rel, buffer.as_deref(), position.line) => index?,
        () = cancel.cancelled() => return Err(ServeError::Cancelled),
    };
    let text = match buffer {
        Some(text) => text,
        None => {
            let path = folder.root.join(&rel);
            let limit = settings.index.workspace.max_file_bytes;
            tokio::task::spawn_blocking(move || workspace::read_source(&path, limit))
                .await
                .map_err(ServeError::task("reading the file"))??
                .text
        }
    };
    let mut query = Query::new(&rel, &text, cursor_in(&text, position))?.in_repo(&folder.name);
    query.recent = folder.recent_chunks();
    Ok(Cursor {
        folder,
        settings,
        snapshot: index.snapshot(),
        query,
        case: None,
    })
}

/// Completes at `cursor` with `retriever` (the settings' when `None`; a named one, as
/// `crossfile.compare` asks, lays the prompt out from its own ranking).
pub async fn complete(
    cursor: &Cursor,
    engine: &Engine,
    retriever: Option<&RetrieverSpec>,
    cancel: &CancellationToken,
) -> Result<Done, ServeError> {
    run(cursor, engine, retriever, true, cancel).await
}

/// Completes at `cursor` as an arena arm: its settings' retriever, from this cursor's own
/// prompt and ranking (never a previous layout), the whole unit (no time budget).
pub async fn complete_arm(
    cursor: &Cursor,
    engine: &Engine,
    cancel: &CancellationToken,
) -> Result<Done, ServeError> {
    let spec = cursor.settings.retrieve.retriever.clone();
    run(cursor, engine, Some(&spec), false, cancel).await
}

/// Completes at `cursor` with the settings' retriever from this cursor's own prompt, never from
/// the last answer's layout ([`crossfile_engine::complete::Completer::with_fallback`]), and with no time
/// budget (`lsp.max_generate_ms`): the answer that replaces, in the background, one the backend
/// gave from that layout or cut at its budget.
pub async fn complete_own(
    cursor: &Cursor,
    engine: &Engine,
    cancel: &CancellationToken,
) -> Result<Done, ServeError> {
    run(cursor, engine, None, false, cancel).await
}

async fn run(
    cursor: &Cursor,
    engine: &Engine,
    retriever: Option<&RetrieverSpec>,
    fallback: bool,
    cancel: &CancellationToken,
) -> Result<Done, ServeError> {
    let started = Instant::now();
    let settings = &cursor.settings;
    let explicit = retriever.is_some();
    let spec = retriever.unwrap_or(&settings.retrieve.retriever).clone();
    let retriever = cursor.folder.retriever(&spec, settings)?;
    let typing = cursor.folder.completer(settings, engine);
    let completer = match &cursor.case {
        // A case's answer is exact, whatever the editor's completer does.
        Some(case) => match &case.case {
            Replayable::Text(case) => completer_for(&typing, case, None),
            Replayable::Exec(exec) => exec_completer(&typing, exec.max_new_tokens),
        },
        None => {
            // The kept completer's own live configuration, not a new one from the settings: its
            // steady blocks are shared from keystroke to keystroke (a new `Live` starts them
            // empty, and the fallback to the last layout never comes; `lsp::fallback` shows it).
            // The folder's completer is always live; the default only satisfies the type.
            let mut live = typing
                .live()
                .cloned()
                .unwrap_or_else(|| Live::typing(false, None, 0));
            live.fallback = fallback;
            if !fallback {
                // In the background, nobody waits: the whole answer.
                live.max_generate_ms = None;
            }
            if explicit {
                // Retrievers side by side: each one's own ranking, not the order a previous
                // completion in the file left.
                live.steady = None;
            }
            typing.with_mode(Mode::Live(live))
        }
    };
    let outcome = completer
        .complete(
            cursor.snapshot.clone(),
            cursor.query.clone(),
            retriever,
            settings.retrieve.top_k,
            cancel,
        )
        .await;
    match outcome {
        Ok(mut completion) => {
            if let Some(Replayable::Exec(_)) = cursor.case.as_ref().map(|c| &c.case) {
                // The body, as the benchmark cuts the model's output; after the indentation
                // the cursor is at.
                completion.suggestion =
                    body_at_cursor(&cursor.query.left, &completion.raw_suggestion);
            }
            Ok(Done::new(
                completion,
                spec,
                started.elapsed().as_secs_f64() * 1e3,
            ))
        }
        Err(_) if cancel.is_cancelled() => Err(ServeError::Cancelled),
        Err(e) => Err(e.into()),
    }
}
