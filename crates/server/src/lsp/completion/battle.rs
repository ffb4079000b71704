//! An arena battle as the answer to `textDocument/inlineCompletion`: with `arena` on in the
//! document's folder, a pair of arms is drawn ([`crossfile_bench::arena::battle::PairDraw`]), both complete
//! at the same cursor (each with its own retrieval, prompt and model, the whole unit, one after
//! the other), and only when both are done are the two suggestions answered, in the drawn order,
//! unlabelled, each item's `command` naming the battle and its place (`crossfile.arenaVote`).
//!
//! A battle stays pending in its document until it is voted on; the same text and cursor asked
//! again is answered with it, and a request anywhere else in the document, closing it or the end
//! of the session records it as no choice ([`Battles::record`](crossfile_bench::arena::battle::Battles)).
//! At a replayed case both suggestions are scored against the reference: a text case's metrics
//! at once, an executed case's (its tests run on both bodies) once the battle is decided. A
//! failed arm shows no battle: the request fails and the failure is counted and logged.

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use tower_lsp::jsonrpc;
use tower_lsp::lsp_types::{Command, Position, Range, Url};

use super::at_cursor::{self, Cursor, CursorRequest};
use super::{debounce, run_request};
use crate::live::{Folder, at_most_chars};
use crate::lsp::error::{ServeError, internal};
use crate::lsp::ext::{ArenaVote, Command as _};
use crate::lsp::protocol::{InlineCompletionItem, InlineCompletionList};
use crate::lsp::replay::harness_run::tests_on_both;
use crate::lsp::replay::session::Replayable;
use crate::lsp::state::State;
use crate::settings::Arm;
use crossfile_bench::arena::battle::{Battle, Side, Venue};

/// The battle at `position` of `uri` (in `folder`, at `rel`), as two inline items; none when an
/// arm's suggestion is blank.
pub async fn inline(
    state: &Arc<State>,
    uri: &Url,
    position: Position,
    folder: Arc<Folder>,
    rel: String,
) -> jsonrpc::Result<Option<InlineCompletionList>> {
    let buffer = folder.documents.text(&rel);
    let at = fingerprint(buffer.as_deref(), position);
    if let Some(battle) = state.battles.pending_at(uri, at) {
        return Ok(Some(items(&battle, position)));
    }
    if let Some(superseded) = state.battles.take_in(uri) {
        state.battles.record(&superseded, None);
    }
    let request = state.requests.begin(uri);
    let asked = CursorRequest {
        buffer,
        folder,
        rel,
        uri: uri.clone(),
        position,
    };
    let outcome = run_request(state, uri, request, |cancel| {
        fight(state.clone(), asked, at, cancel)
    })
    .await;
    let battle = match outcome {
        Ok(Ok(battle)) => battle,
        Ok(Err(e)) => {
            if !e.is_cancelled() {
                tracing::warn!(%uri, "arena battle failed: {e}");
            }
            return Err(e.to_response(""));
        }
        Err(e) => return Err(internal(format!("the arena battle failed: {e}"))),
    };
    let Some(battle) = battle else {
        return Ok(Some(InlineCompletionList { items: Vec::new() }));
    };
    let answer = items(&battle, position);
    if let Some(replaced) = state.battles.show(uri.clone(), battle) {
        state.battles.record(&replaced, None);
    }
    Ok(Some(answer))
}

/// Both arms at the cursor, after the debounce; `None` when either suggestion is blank.
async fn fight(
    state: Arc<State>,
    asked: CursorRequest,
    at: u64,
    cancel: CancellationToken,
) -> Result<Option<Battle>, ServeError> {
    let settings = asked.folder.settings();
    debounce(settings.lsp.debounce_ms, &cancel).await?;
    let (workspace, path) = (asked.folder.name.clone(), asked.rel.clone());
    let cursor = at_cursor::prepare(&state, asked, &cancel).await?;
    if let Some(note) = state.downloading() {
        return Err(ServeError::ModelDownloading(note));
    }
    let arena = &cursor.settings.arena;
    let draws = state.pair_draw(arena.seed);
    let (pair, draw) = draws.draw(arena.arms.len());
    let (mut sides, mut raws) = (Vec::with_capacity(2), Vec::with_capacity(2));
    for (n, &i) in pair.arms.iter().enumerate() {
        match side(&state, &cursor, &arena.arms[i], &cancel).await {
            Ok((side, raw)) => {
                sides.push(side);
                raws.push(raw);
            }
            Err(e) if e.is_cancelled() => return Err(e),
            Err(e) => {
                state.battles.failed.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(arm = arena.arms[i].spec, "arena arm failed: {e}");
                return Err(ServeError::request(format!(
                    "arena: an arm of the battle failed, so none is shown ({} of 2): {e}",
                    n + 1
                )));
            }
        }
    }
    if sides.iter().any(|s: &Side| s.text.trim().is_empty()) {
        state.battles.blank.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(path, "arena: a blank suggestion, no battle");
        return Ok(None);
    }
    let (Some(b), Some(a)) = (sides.pop(), sides.pop()) else {
        return Ok(None);
    };
    let left = &cursor.query.left;
    let col = left[left.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count() as u64
        + 1;
    let place = Venue {
        workspace,
        path,
        line: u64::from(cursor.query.cursor.line) + 1,
        col,
        language: cursor.query.language.map(|l| l.name().to_string()),
        case_id: cursor.case.as_ref().map(|c| c.id().to_string()),
        votes: arena.votes.clone(),
    };
    let id = state.battles.next_id();
    let mut battle = Battle::new(id, at, place, [a, b], pair, draw);
    if let (Some(Replayable::Exec(exec)), Ok(raws)) = (
        cursor.case.as_ref().map(|c| &c.case),
        <[String; 2]>::try_from(raws),
    ) {
        battle.late_metrics = Some(tests_on_both(exec.clone(), raws));
    }
    Ok(Some(battle))
}

/// One arm's suggestion at `cursor`, timed; scored against the reference at a replayed text
/// case; with the model's raw output.
async fn side(
    state: &State,
    cursor: &Cursor,
    arm: &Arm,
    cancel: &CancellationToken,
) -> Result<(Side, String), ServeError> {
    let started = Instant::now();
    let engine = tokio::select! {
        engine = state.engine_for(&arm.settings.engine) => engine?,
        () = cancel.cancelled() => return Err(ServeError::Cancelled),
    };
    let armed = cursor.with_settings(arm.settings.clone());
    let done = at_cursor::complete_arm(&armed, &engine, cancel).await?;
    let latency_ms = started.elapsed().as_secs_f64() * 1e3;
    let metrics = match cursor.case.as_ref().map(|c| &c.case) {
        Some(Replayable::Text(case)) => {
            crossfile_bench::bench::score(case, &done.completion.raw_suggestion).ok()
        }
        _ => None,
    };
    let text = at_most_chars(
        done.completion.suggestion.clone(),
        arm.settings.lsp.max_suggestion_chars,
    );
    let settings = format!("{}\n{:?}", arm.spec, arm.settings);
    let side = Side {
        arm: arm.spec.clone(),
        settings_hash: blake3::hash(settings.as_bytes()).to_hex()[..16].to_string(),
        text,
        latency_ms,
        metrics,
    };
    Ok((side, done.completion.raw_suggestion))
}

/// The battle's two items, in the order shown, each voting for its place when accepted.
fn items(battle: &Battle, position: Position) -> InlineCompletionList {
    let items = battle
        .shown_texts()
        .into_iter()
        .zip([1u8, 2])
        .map(|(text, pick)| InlineCompletionItem {
            insert_text: text.to_string(),
            range: Some(Range::new(position, position)),
            command: Some(Command {
                title: format!("crossfile arena: {pick}"),
                command: ArenaVote::NAME.to_string(),
                arguments: Some(vec![serde_json::json!({"battle": battle.id, "pick": pick})]),
            }),
        })
        .collect();
    InlineCompletionList { items }
}

/// Records every pending battle as no choice (the session ends), waiting a little for votes
/// whose tests are still running (they stop, and are written without metrics).
pub fn record_all_pending(state: &State) {
    state.battles.record_all_pending(SCORING_GRACE);
}

/// How long the end of a session waits for the votes still being scored to be written.
const SCORING_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// The document's text and cursor, hashed: a battle is shown again only where it was made.
fn fingerprint(buffer: Option<&str>, position: Position) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    buffer.hash(&mut hasher);
    (position.line, position.character).hash(&mut hasher);
    hasher.finish()
}
