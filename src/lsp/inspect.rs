//! `crossfile.compare` (every named retriever at one cursor, side by side; at an EvoCodeBench
//! case's cursor each retriever's body is tested) and `crossfile.context` (what the last
//! completion in a document was made from).

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tower_lsp::lsp_types::Url;

use super::at_cursor::{self, CursorRequest};
use super::error::ServeError;
use super::ext::{CompareParams, ContextParams};
use super::harness_run::{outcome_json, run_tests};
use super::last_completion::Done;
use super::replay_session::Replayable;
use super::state::State;
use crate::bench::layout::evocodebench::body_of;
use crate::bench::score;
use crate::report::textdiff::{DiffOp, diff};
use crate::retrieve::{Hit, RetrieverSpec};

/// The retrievers `args` names, checked (a bad one is the caller's bad argument).
pub fn compare_specs(args: &CompareParams) -> Result<Vec<RetrieverSpec>, String> {
    let specs = args
        .retrievers
        .iter()
        .map(|name| {
            name.parse::<RetrieverSpec>()
                .map_err(|e| format!("retrievers: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if specs.is_empty() {
        return Err("retrievers: name at least one retriever".into());
    }
    Ok(specs)
}

/// Completes at one cursor with each retriever in turn (the same text, index and model), and
/// scores each when the cursor is a replayed case's (an EvoCodeBench case's by running its tests
/// on each body, reported under the one progress token). A retriever that fails has an `error`.
pub async fn compare(
    state: &Arc<State>,
    args: CompareParams,
    specs: Vec<RetrieverSpec>,
) -> Result<Value, ServeError> {
    let (folder, rel) = state.locate(&args.uri).ok_or_else(|| {
        ServeError::Request(format!("uri: {} is in no workspace folder", args.uri))
    })?;
    let cancel = state.session_token();
    // Dropped with the request (`$/cancelRequest`): generation stops.
    let _cancel_on_drop = cancel.clone().drop_guard();
    let asked = CursorRequest {
        buffer: folder.documents.text(&rel),
        folder,
        rel,
        uri: args.uri.clone(),
        position: args.position,
    };
    let cursor = at_cursor::prepare(state, asked, &cancel).await?;
    let engine = state.engine().await?;
    // The model is wanted here: an answer being replaced in the background gives way.
    state.requests.cancel_refresh();
    let mut results = Vec::new();
    for spec in &specs {
        let result = match at_cursor::complete(&cursor, &engine, Some(spec), &cancel).await {
            Ok(done) => {
                let mut result = completion_json(&done, Some(&cursor.folder.root), false);
                let raw = &done.completion.raw_suggestion;
                match cursor.case.as_ref().map(|c| &c.case) {
                    Some(Replayable::Text(case)) => {
                        result["diff"] = diff_json(&case.reference, &done.completion.suggestion);
                        result["metrics"] = match score(case, raw) {
                            Ok(metrics) => json!(metrics),
                            Err(e) => json!({"error": e.to_string()}),
                        };
                    }
                    Some(Replayable::Exec(exec)) => {
                        let body = body_of(&cursor.query.left, raw);
                        let title = format!("crossfile: testing {}'s body", spec);
                        let token = args.work_done_token.clone();
                        let tested = run_tests(state, exec, body.clone(), &title, token).await?;
                        result["body"] = json!(body);
                        result["outcome"] = outcome_json(&tested);
                    }
                    None => {}
                }
                result
            }
            Err(ServeError::Cancelled) => return Err(ServeError::Cancelled),
            Err(e) => json!({
                "retriever": spec.to_string(),
                "upperBound": spec.is_upper_bound(),
                "error": e.to_string(),
            }),
        };
        results.push(result);
    }
    Ok(json!({
        "uri": args.uri,
        "position": args.position,
        "caseId": cursor.case.as_ref().map(|c| c.id().to_string()),
        "reference": cursor.case.as_ref().map(|c| reference_of(&c.case)),
        "results": results,
    }))
}

/// What the case's reference is: the text removed, or an EvoCodeBench case's body.
fn reference_of(case: &Replayable) -> String {
    match case {
        Replayable::Text(case) => case.reference.clone(),
        Replayable::Exec(exec) => exec.case.reference_body(&exec.repos).unwrap_or_default(),
    }
}

/// The last completion in the document: its chunks with their text, the whole prompt, its serial
/// number (the same for the answers of typing along it), where it was asked and the backend's
/// token counts; `null` before the first.
pub fn context(state: &State, args: ContextParams) -> Value {
    let Some(last) = state.last(&args.uri) else {
        return Value::Null;
    };
    let root = state
        .locate(&args.uri)
        .map(|(folder, _)| folder.root.clone());
    let mut answer = completion_json(&last.done, root.as_deref(), true);
    answer["uri"] = json!(args.uri);
    answer["position"] = json!(last.position);
    answer["askedAt"] = json!(last.asked_at);
    answer["caseId"] = json!(last.case_id);
    answer["suggestion"] = json!(last.shown);
    answer["rawSuggestion"] = json!(last.done.completion.raw_suggestion);
    answer["prompt"] = json!(last.done.completion.prompt.text);
    answer["model"] = json!(crate::complete::model_label(&state.engine_settings()));
    answer["serial"] = json!(last.done.serial);
    let g = &last.done.completion.generation;
    answer["generation"] = json!({
        "promptTokens": g.prompt_tokens, "reusedTokens": g.reused_tokens,
        "generatedTokens": g.generated_tokens, "outOfTime": g.out_of_time, "text": g.text,
        "fromFallback": g.from_fallback,
    });
    let t = &last.done.completion.timings;
    answer["timingsMs"] = json!({
        "retrieve": t.retrieve_ms, "prompt": t.prompt_ms, "generate": t.generate_ms,
        "postprocess": t.postprocess_ms, "firstToken": t.first_token_ms,
    });
    answer
}

/// A completion's retriever, chunks, prompt token counts, suggestion and latency; chunk paths are
/// relative to `root`.
fn completion_json(done: &Done, root: Option<&Path>, with_text: bool) -> Value {
    let c = &done.completion;
    let t = &c.prompt.tokens;
    json!({
        "retriever": done.retriever.to_string(),
        "upperBound": done.retriever.is_upper_bound(),
        "chunks": c.hits.iter().map(|h| chunk_json(h, root, with_text)).collect::<Vec<_>>(),
        "promptTokens": {"crossfile": t.crossfile, "left": t.left, "right": t.right, "total": t.total},
        "suggestion": c.suggestion,
        "latencyMs": done.latency_ms,
    })
}

/// A chunk: its file (relative to `root`, and as a URI), 1-based inclusive lines, score. Context a
/// case provides has no lines and no URI.
fn chunk_json(hit: &Hit, root: Option<&Path>, with_text: bool) -> Value {
    let uri = root
        .filter(|_| hit.chunker.is_some())
        .and_then(|root| Url::from_file_path(root.join(&hit.path)).ok());
    let mut chunk = json!({
        "path": hit.path,
        "uri": uri,
        "startLine": hit.chunker.map(|_| hit.lines.start + 1),
        "endLine": hit.chunker.map(|_| hit.lines.end),
        "score": hit.score,
    });
    if with_text {
        chunk["text"] = json!(hit.text);
    }
    chunk
}

/// The runs that turn `reference` into `suggestion`: `delete` is only in the reference, `insert`
/// only in the suggestion.
fn diff_json(reference: &str, suggestion: &str) -> Value {
    let runs: Vec<Value> = diff(reference, suggestion)
        .into_iter()
        .map(|run| match run {
            DiffOp::Equal(text) => json!({"op": "equal", "text": text}),
            DiffOp::Delete(text) => json!({"op": "delete", "text": text}),
            DiffOp::Insert(text) => json!({"op": "insert", "text": text}),
        })
        .collect();
    Value::Array(runs)
}
