//! `crossfile.compare` (every named retriever at one cursor, side by side, each chunk with its
//! origin; at a replayed case each column's identifier overlap with the reference, and at an
//! EvoCodeBench case's cursor each retriever's body tested) and `crossfile.context` (what the last
//! completion in a document was made from).

use std::path::Path;
use std::sync::Arc;

use tower_lsp::lsp_types::Url;

use crate::live::Done;
use crate::lsp::completion::at_cursor::{self, CursorRequest};
use crate::lsp::convert::position_of;
use crate::lsp::error::ServeError;
use crate::lsp::ext::{
    ChunkInfo, ColumnAnswer, CompareColumn, CompareParams, CompareResult, ContextParams,
    ContextResult, DiffRun, GenerationInfo, MadeColumn, MadeOf, Metrics, TimingsMs,
};
use crate::lsp::replay::harness_run::{run_tests, test_outcome};
use crate::lsp::replay::session::Replayable;
use crate::lsp::state::State;
use crossfile_bench::bench::evaluate::{judge_context, metrics_of};
use crossfile_bench::bench::layout::evocodebench::body_of;
use crossfile_bench::report::textdiff::{DiffOp, diff};
use crossfile_engine::lang::Language;
use crossfile_engine::retrieve::{Hit, Origins, RetrieverSpec};

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
) -> Result<CompareResult, ServeError> {
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
    // Resolving the file's imports reads every file of the snapshot: off the runtime.
    let (snapshot, query) = (cursor.snapshot.clone(), cursor.query.clone());
    let origins = tokio::task::spawn_blocking(move || Origins::new(&snapshot, &query))
        .await
        .map_err(|source| ServeError::Task {
            what: "resolving the file's imports",
            source,
        })?;
    // At a replayed case: its reference and language, for each column's identifier overlap.
    let reference = cursor.case.as_ref().map(|c| reference_of(&c.case));
    let language = match cursor.case.as_ref().map(|c| &c.case) {
        Some(Replayable::Text(case)) => case.language,
        Some(Replayable::Exec(_)) | None => Language::Python,
    };
    let mut results = Vec::new();
    for spec in &specs {
        let answer = match at_cursor::complete(&cursor, &engine, Some(spec), &cancel).await {
            Ok(done) => {
                // Judged as `bench run` judges it (no reference: the chunks' origins).
                let context = judge_context(
                    &done.completion,
                    reference.as_deref().unwrap_or_default(),
                    language,
                    &origins,
                    engine.tokenizer.as_ref(),
                );
                let mut made = made_of(&done, Some(&cursor.folder.root), false);
                for (chunk, judged) in made.chunks.iter_mut().zip(context.chunks) {
                    chunk.origin = judged.origin;
                }
                let mut column = MadeColumn {
                    made,
                    overlap: reference.as_ref().and(context.overlap),
                    diff: None,
                    metrics: None,
                    body: None,
                    outcome: None,
                };
                let raw = &done.completion.raw_suggestion;
                match cursor.case.as_ref().map(|c| &c.case) {
                    Some(Replayable::Text(case)) => {
                        column.diff = Some(diff_runs(&case.reference, &done.completion.suggestion));
                        column.metrics = Some(match metrics_of(case, &done.completion) {
                            Ok(metrics) => Metrics::Scores(metrics),
                            Err(e) => Metrics::Failed {
                                error: e.to_string(),
                            },
                        });
                    }
                    Some(Replayable::Exec(exec)) => {
                        let body = body_of(&cursor.query.left, raw);
                        let title = format!("crossfile: testing {}'s body", spec);
                        let token = args.work_done_token.clone();
                        let tested = run_tests(state, exec, body.clone(), &title, token).await?;
                        column.body = Some(body);
                        column.outcome = Some(test_outcome(&tested));
                    }
                    None => {}
                }
                ColumnAnswer::Made(Box::new(column))
            }
            Err(ServeError::Cancelled) => return Err(ServeError::Cancelled),
            Err(e) => ColumnAnswer::Failed {
                error: e.to_string(),
            },
        };
        let column = CompareColumn {
            retriever: spec.to_string(),
            upper_bound: spec.is_upper_bound(),
            answer,
        };
        results.push(column);
    }
    Ok(CompareResult {
        uri: args.uri,
        position: args.position,
        case_id: cursor.case.as_ref().map(|c| c.id().to_string()),
        reference,
        results,
    })
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
/// token counts; `None` before the first.
pub fn context(state: &State, args: ContextParams) -> Option<ContextResult> {
    let last = state.last.get(&args.uri)?;
    let root = state
        .locate(&args.uri)
        .map(|(folder, _)| folder.root.clone());
    let done = &last.done;
    let mut made = made_of(done, root.as_deref(), true);
    made.suggestion = last.answer().to_string();
    let g = &done.completion.generation;
    let t = &done.completion.timings;
    Some(ContextResult {
        uri: args.uri,
        position: position_of(last.position),
        asked_at: position_of(last.asked_at),
        case_id: last.case_id.clone(),
        retriever: done.retriever.to_string(),
        upper_bound: done.retriever.is_upper_bound(),
        made,
        raw_suggestion: done.completion.raw_suggestion.clone(),
        prompt: done.completion.prompt.text.clone(),
        model: crossfile_engine::complete::model_label(&state.engine_settings()),
        serial: done.serial,
        generation: GenerationInfo {
            prompt_tokens: g.prompt_tokens,
            reused_tokens: g.reused_tokens,
            generated_tokens: g.generated_tokens,
            out_of_time: g.out_of_time,
            text: g.text.clone(),
            from_fallback: g.from_fallback,
        },
        timings_ms: TimingsMs {
            retrieve: t.retrieve_ms,
            prompt: t.prompt_ms,
            generate: t.generate_ms,
            postprocess: t.postprocess_ms,
            first_token: t.first_token_ms,
        },
    })
}

/// A completion's chunks, prompt token counts, suggestion and latency; chunk paths are relative
/// to `root`.
fn made_of(done: &Done, root: Option<&Path>, with_text: bool) -> MadeOf {
    let c = &done.completion;
    MadeOf {
        chunks: c
            .hits
            .iter()
            .map(|h| chunk_info(h, root, with_text))
            .collect(),
        prompt_tokens: c.prompt.tokens,
        suggestion: c.suggestion.clone(),
        latency_ms: done.latency_ms,
    }
}

/// A chunk: its file (relative to `root`, and as a URI), 1-based inclusive lines, score. Context a
/// case provides has no lines and no URI.
fn chunk_info(hit: &Hit, root: Option<&Path>, with_text: bool) -> ChunkInfo {
    let uri = root
        .filter(|_| hit.chunker.is_some())
        .and_then(|root| Url::from_file_path(root.join(&hit.path)).ok());
    ChunkInfo {
        path: hit.path.clone(),
        uri,
        start_line: hit.chunker.map(|_| hit.lines.start + 1),
        end_line: hit.chunker.map(|_| hit.lines.end),
        score: hit.score,
        origin: None,
        source: hit.source.clone(),
        text: with_text.then(|| hit.text.clone()),
    }
}

/// The runs that turn `reference` into `suggestion`: `delete` is only in the reference, `insert`
/// only in the suggestion.
fn diff_runs(reference: &str, suggestion: &str) -> Vec<DiffRun> {
    diff(reference, suggestion)
        .into_iter()
        .map(|run| match run {
            DiffOp::Equal(text) => DiffRun {
                op: "equal".into(),
                text: text.to_string(),
            },
            DiffOp::Delete(text) => DiffRun {
                op: "delete".into(),
                text: text.to_string(),
            },
            DiffOp::Insert(text) => DiffRun {
                op: "insert".into(),
                text: text.to_string(),
            },
        })
        .collect()
}
