//! `crossfile.score`: a replayed case scored with its benchmark's own metrics, either for a given
//! text or for what the user now has at the case's cursor in the open buffer. An EvoCodeBench
//! case is scored by running its tests on the body ([`super::harness_run`]): the body the buffer
//! holds between the unchanged parts, spliced into the original file (the docstring the editor
//! shows is not what is tested).

use std::sync::Arc;

use tower_lsp::lsp_types::{NumberOrString, Url};

use super::harness_run::{run_tests, test_outcome};
use super::session::{ExecTarget, Replayable, ReplayedCase};
use crate::lsp::error::ServeError;
use crate::lsp::ext::{Metrics, ScoreParams, ScoreResult, Scored};
use crate::lsp::state::State;
use crossfile_bench::bench::layout::evocodebench::{body_of, body_typed};
use crossfile_bench::bench::scoring::execution::one_body_metrics;
use crossfile_bench::bench::scoring::typed_between;
use crossfile_bench::bench::{Case, score};
use crossfile_engine::choice::Choice;
use crossfile_engine::workspace::normalize_newlines;

/// Every metric of the case's benchmark for the text given, or found between the case's unchanged
/// contexts in the buffer. When that text is the server's own unedited suggestion at the case's
/// cursor (or nothing after a blank one, which has no item), the model's raw output behind it is
/// scored, as `bench run` scores it (the benchmarks' scripts cut it themselves).
pub async fn score_case(state: &Arc<State>, args: ScoreParams) -> Result<ScoreResult, ServeError> {
    let case = state
        .replay
        .loaded_case(&args.case_id)
        .await
        .ok_or_else(|| {
            ServeError::request(format!("no case {:?} is loaded for replay", args.case_id))
        })?;
    let open = state.replay.current().filter(|c| c.id() == case.id());
    let text = match (args.suggestion, &args.uri) {
        (Some(text), None) => text,
        (None, Some(uri)) => in_buffer(state, open.as_deref(), case.id(), uri)?,
        (Some(_), Some(_)) => return Err(ServeError::request("give suggestion or uri, not both")),
        (None, None) => {
            return Err(ServeError::request(
                "give suggestion (the text to score) or uri (the buffer that holds it)",
            ));
        }
    };
    let own = open
        .as_ref()
        .and_then(|c| state.last.get(&c.uri))
        .filter(|l| l.case_id.as_deref() == Some(case.id()))
        .filter(|l| l.answer() == text || shown_as_nothing(l.answer(), &text))
        .map(|l| l.done.completion.raw_suggestion.clone());
    match case {
        Replayable::Text(case) => score_text(&case, text, own),
        Replayable::Exec(exec) => score_body(state, &exec, text, own, args.work_done_token).await,
    }
}

/// A text case: its benchmark's metrics, of the model's `raw` output when the text is the
/// server's own suggestion.
fn score_text(case: &Case, text: String, raw: Option<String>) -> Result<ScoreResult, ServeError> {
    let (prediction, scored) = match raw {
        Some(raw) => (raw, Scored::Raw),
        None => (text, Scored::Given),
    };
    let metrics = score(case, &prediction)
        .map_err(|e| ServeError::request(format!("case {}: {e}", case.id)))?;
    Ok(ScoreResult {
        case_id: case.id.clone(),
        benchmark: case.format.name().to_string(),
        metrics: Metrics::Scores(metrics),
        scored,
        prediction,
        reference: case.reference.clone(),
        outcome: None,
    })
}

/// An EvoCodeBench case: the tests run on the body typed after the cursor's indentation (the
/// body cut from the model's `raw` output, as `bench run` cuts it, when the text is the server's
/// own suggestion); Pass@1 and Recall@1 of that one body.
async fn score_body(
    state: &State,
    exec: &Arc<ExecTarget>,
    typed: String,
    raw: Option<String>,
    token: Option<NumberOrString>,
) -> Result<ScoreResult, ServeError> {
    let case = &exec.case;
    let left = " ".repeat(case.indent);
    let (body, scored) = match &raw {
        Some(raw) => (body_of(&left, raw), Scored::Raw),
        None => (body_typed(&left, &typed), Scored::Given),
    };
    let title = format!("crossfile: testing {}", case.namespace);
    let tested = run_tests(state, exec, body.clone(), &title, token).await?;
    let metrics = one_body_metrics(&tested.outcome, tested.recall);
    let reference = case.reference_body(&exec.repos).unwrap_or_default();
    Ok(ScoreResult {
        case_id: case.namespace.clone(),
        benchmark: "evocodebench".to_string(),
        metrics: Metrics::Scores(metrics),
        scored,
        prediction: body,
        reference,
        outcome: Some(test_outcome(&tested)),
    })
}

/// A blank suggestion is answered with no item: a client that got none sends `""`.
fn shown_as_nothing(shown: &str, sent: &str) -> bool {
    sent.is_empty() && shown.trim().is_empty()
}

/// What the open buffer `uri` holds between the replayed case's left and right contexts.
fn in_buffer(
    state: &State,
    open: Option<&ReplayedCase>,
    id: &str,
    uri: &Url,
) -> Result<String, ServeError> {
    let case = open.ok_or_else(|| {
        ServeError::request(format!(
            "case {id:?} is not the case open now: replay it, then score its buffer"
        ))
    })?;
    if &case.uri != uri {
        return Err(ServeError::request(format!(
            "uri: {uri} is not the file of case {id:?} ({})",
            case.uri
        )));
    }
    let buffer = state
        .locate(uri)
        .and_then(|(folder, rel)| folder.documents.text(&rel))
        .ok_or_else(|| {
            ServeError::request(format!(
                "uri: {uri} is not open: open the case's file first"
            ))
        })?;
    let buffer = normalize_newlines(&buffer);
    typed_between(&buffer, &case.left, &case.right)
        .map(str::to_string)
        .map_err(ServeError::Request)
}
