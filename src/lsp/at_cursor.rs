//! What a completion at a cursor works from, and running it with one retriever. Shared by
//! `textDocument/completion`, inline completion and `crossfile.compare`.
//!
//! At a replayed case's own cursor, with its text unedited, the completion is the case's, laid
//! out as `bench run` lays it out ([`crate::bench::replay`]): the same snapshot, query and
//! completer, so the suggestion and its scores are the same. Anywhere else it is a live one: the
//! buffer's text (or the disk's) and the folder's index, once it holds every edit made before.

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use tower_lsp::lsp_types::{Position, Url};

use super::convert::cursor_in;
use super::replay::ReplayedCase;
use super::state::{Engine, Folder, State};
use crate::backend::BackendError;
use crate::bench::replay::completer_for;
use crate::complete::{CompleteError, Completer, Completion};
use crate::config::Settings;
use crate::index::Snapshot;
use crate::retrieve::{Query, RetrieverSpec};
use crate::workspace;

/// Why a completion did not finish.
pub enum Failure {
    Cancelled,
    Engine(String),
}

/// A cursor made ready to complete.
pub struct Cursor {
    pub folder: Arc<Folder>,
    pub settings: Arc<Settings>,
    pub snapshot: Arc<Snapshot>,
    pub query: Query,
    /// The replayed case whose cursor this is.
    pub case: Option<Arc<ReplayedCase>>,
}

/// A completion and how it was made.
pub struct Done {
    pub completion: Completion,
    pub retriever: RetrieverSpec,
    pub latency_ms: f64,
}

/// Prepares a completion at `position` of `uri` (`rel` in `folder`), with `buffer` the document's
/// text when the request came (else the disk's).
pub async fn prepare(
    state: &State,
    folder: &Arc<Folder>,
    uri: &Url,
    rel: &str,
    buffer: Option<String>,
    position: Position,
    cancel: &CancellationToken,
) -> Result<Cursor, Failure> {
    let settings = folder.settings();
    if let Some(case) = state.replay.case_at(uri, position)
        && buffer.as_deref().is_none_or(|b| b == case.text)
    {
        return Ok(Cursor {
            folder: folder.clone(),
            settings,
            snapshot: case.laid_out.snapshot.clone(),
            query: case.laid_out.query.clone(),
            case: Some(case),
        });
    }
    let index = tokio::select! {
        index = folder.settled_index() => index.map_err(Failure::Engine)?,
        () = cancel.cancelled() => return Err(Failure::Cancelled),
    };
    let text = match buffer {
        Some(text) => text,
        None => {
            let path = folder.root.join(rel);
            let limit = settings.index.workspace.max_file_bytes;
            tokio::task::spawn_blocking(move || workspace::read_source(&path, limit))
                .await
                .map_err(|e| Failure::Engine(e.to_string()))?
                .map_err(|e| Failure::Engine(e.to_string()))?
                .text
        }
    };
    let cursor = cursor_in(&text, position);
    let query = Query::new(rel, &text, cursor).map_err(|e| Failure::Engine(e.to_string()))?;
    Ok(Cursor {
        folder: folder.clone(),
        settings,
        snapshot: index.snapshot(),
        query,
        case: None,
    })
}

/// Completes at `cursor` with `retriever` (the settings' when `None`).
pub async fn complete(
    cursor: &Cursor,
    engine: &Engine,
    retriever: Option<&RetrieverSpec>,
    cancel: &CancellationToken,
) -> Result<Done, Failure> {
    let started = Instant::now();
    let settings = &cursor.settings;
    let spec = retriever.unwrap_or(&settings.retrieve.retriever).clone();
    let retriever = cursor
        .folder
        .retriever(&spec, settings)
        .map_err(|e| Failure::Engine(e.to_string()))?;
    let mut completer = Completer::new(settings, engine.backend.clone(), engine.tokenizer.clone());
    if let Some(case) = &cursor.case {
        completer = completer_for(&completer, &case.case, None);
    }
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
        Ok(completion) => Ok(Done {
            completion,
            retriever: spec,
            latency_ms: started.elapsed().as_secs_f64() * 1e3,
        }),
        Err(CompleteError::Backend(BackendError::Cancelled)) => Err(Failure::Cancelled),
        Err(_) if cancel.is_cancelled() => Err(Failure::Cancelled),
        Err(e) => Err(Failure::Engine(e.to_string())),
    }
}
