//! `crossfile.score`: a replayed case scored with its benchmark's own metrics, either for a given
//! text or for what the user now has at the case's cursor in the open buffer. An EvoCodeBench
//! case is scored by running its tests on the body ([`super::case_tests`]): the body the buffer
//! holds between the unchanged parts, spliced into the original file (the docstring the editor
//! shows is not what is tested).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp::lsp_types::{NumberOrString, Url};

use super::case_tests::{outcome_json, run_tests};
use super::error::ServeError;
use super::replayed::{ExecTarget, Replayable, ReplayedCase};
use super::state::State;
use crate::bench::exec_view::{body_of, body_typed};
use crate::bench::{Case, score};
use crate::report::textdiff::{common_prefix, common_suffix};
use crate::workspace::normalize_newlines;

/// `crossfile.score`'s arguments: the case and either the text to score or the buffer holding it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScoreArgs {
    pub case_id: String,
    /// The text to score.
    pub suggestion: Option<String>,
    /// The open buffer of the case's file: what it holds between the case's left context and its
    /// right context is scored.
    pub uri: Option<Url>,
    /// The client's token for progress reports (the tests of an EvoCodeBench case).
    pub work_done_token: Option<NumberOrString>,
}

/// Every metric of the case's benchmark for the text given, or found between the case's unchanged
/// contexts in the buffer. When that text is the server's own unedited suggestion at the case's
/// cursor (or nothing after a blank one, which has no item), the model's raw output behind it is
/// scored, as `bench run` scores it (the benchmarks' scripts cut it themselves).
pub async fn score_case(state: &Arc<State>, args: ScoreArgs) -> Result<Value, ServeError> {
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
        .and_then(|c| state.last(&c.uri))
        .filter(|l| l.case_id.as_deref() == Some(case.id()))
        .filter(|l| l.shown == text || shown_as_nothing(&l.shown, &text))
        .map(|l| l.done.completion.raw_suggestion.clone());
    match case {
        Replayable::Text(case) => score_text(&case, text, own),
        Replayable::Exec(exec) => score_body(state, &exec, text, own, args.work_done_token).await,
    }
}

/// A text case: its benchmark's metrics, of the model's `raw` output when the text is the
/// server's own suggestion.
fn score_text(case: &Case, text: String, raw: Option<String>) -> Result<Value, ServeError> {
    let (prediction, scored) = match raw {
        Some(raw) => (raw, "raw"),
        None => (text, "given"),
    };
    let metrics = score(case, &prediction)
        .map_err(|e| ServeError::request(format!("case {}: {e}", case.id)))?;
    Ok(json!({
        "caseId": case.id,
        "benchmark": case.format.name(),
        "metrics": metrics,
        "scored": scored,
        "prediction": prediction,
        "reference": case.reference,
    }))
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
) -> Result<Value, ServeError> {
    let case = &exec.case;
    let left = " ".repeat(case.indent);
    let (body, scored) = match &raw {
        Some(raw) => (body_of(&left, raw), "raw"),
        None => (body_typed(&left, &typed), "given"),
    };
    let title = format!("crossfile: testing {}", case.namespace);
    let tested = run_tests(state, exec, body.clone(), &title, token).await?;
    let outcome = outcome_json(&tested);
    let mut metrics = serde_json::Map::new();
    if tested.outcome.status.is_scored() {
        let passed = tested.outcome.status == crate::harness::Status::Pass;
        metrics.insert("pass@1".into(), json!(if passed { 1.0 } else { 0.0 }));
    }
    if let Some(recall) = tested.recall {
        metrics.insert("recall@1".into(), json!(recall));
    }
    let reference = case.reference_body(&exec.repos).unwrap_or_default();
    Ok(json!({
        "caseId": case.namespace,
        "benchmark": "evocodebench",
        "metrics": metrics,
        "outcome": outcome,
        "scored": scored,
        "prediction": body,
        "reference": reference,
    }))
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
    between(&buffer, &case.left, &case.right)
        .map(str::to_string)
        .map_err(ServeError::Request)
}

/// The text `buffer` holds between `left` at its start and `right` at its end; an error naming
/// the line when either was changed. A line break an editor added at the end of a file that had
/// none is not the user's text.
fn between<'a>(buffer: &'a str, left: &str, right: &str) -> Result<&'a str, String> {
    let had_no_eol = match right {
        "" => !left.is_empty() && !left.ends_with('\n'),
        right => !right.ends_with('\n'),
    };
    let buffer = match buffer.strip_suffix('\n') {
        Some(trimmed) if had_no_eol => trimmed,
        _ => buffer,
    };
    if !buffer.starts_with(left) {
        let at = common_prefix(buffer, left);
        return Err(format!(
            "the text before the case's cursor was changed (line {}): only the text at the \
             cursor can be scored; replay the case again to start over",
            line_at(buffer, at)
        ));
    }
    let end = buffer.len().checked_sub(right.len());
    match end {
        Some(end) if end >= left.len() && buffer.ends_with(right) => Ok(&buffer[left.len()..end]),
        _ => {
            let kept = common_suffix(&buffer[left.len()..], right);
            Err(format!(
                "the text after the case's cursor (its right context) was changed (line {}): only \
                 the text at the cursor can be scored; replay the case again to start over",
                line_at(buffer, buffer.len() - kept)
            ))
        }
    }
}

/// The 1-based line of byte `at` in `text`.
fn line_at(text: &str, at: usize) -> usize {
    text.get(..at).map_or(0, |t| t.matches('\n').count()) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_between_unchanged_contexts_is_scored() {
        let left = "def f(x):\n    return ";
        let right = "\n\nprint(f(1))\n";
        let cases = [
            ("def f(x):\n    return x + 1\n\nprint(f(1))\n", Ok("x + 1")),
            ("def f(x):\n    return \n\nprint(f(1))\n", Ok("")),
            // A whole body, several lines, typed or accepted.
            (
                "def f(x):\n    return (\n        x\n    )\n\nprint(f(1))\n",
                Ok("(\n        x\n    )"),
            ),
            // Emoji and CJK around the cursor.
            (
                "def f(x):\n    return \"🎉中\"\n\nprint(f(1))\n",
                Ok("\"🎉中\""),
            ),
        ];
        for (buffer, want) in cases {
            assert_eq!(
                between(buffer, left, right),
                want.map_err(|e: &str| e.to_string()),
                "{buffer:?}"
            );
        }
    }

    #[test]
    fn a_changed_prefix_or_suffix_is_refused_naming_the_line() {
        let left = "a = 1\nb = ";
        let right = "\nc = 3\n";
        let edited_prefix = between("a = 2\nb = 2\nc = 3\n", left, right);
        assert!(
            edited_prefix
                .as_ref()
                .is_err_and(|e| e.contains("before the case's cursor") && e.contains("line 1")),
            "{edited_prefix:?}"
        );
        let edited_suffix = between("a = 1\nb = 2\nc = 4\n", left, right);
        assert!(
            edited_suffix
                .as_ref()
                .is_err_and(|e| e.contains("right context") && e.contains("line 3")),
            "{edited_suffix:?}"
        );
        // Text deleted across the cursor: both ends still match, but they overlap.
        let overlap = between("a = 1\nb = 3\n", "a = 1\nb = 3", "3\n");
        assert!(overlap.is_err(), "{overlap:?}");
        assert!(between("", left, right).is_err());
    }

    #[test]
    fn an_end_of_line_an_editor_adds_is_not_the_users_text() {
        // The case's file had no final line break; the editor wrote one.
        assert_eq!(between("x = 1\ny = 2\nz\n", "x = 1\ny = ", "\nz"), Ok("2"));
        // The cursor at the very end of such a file.
        assert_eq!(between("x = 1\ny = 2\n", "x = 1\ny = ", ""), Ok("2"));
        // A file that had one keeps it, and a break the user typed stays theirs.
        assert_eq!(between("x = 2\n\n", "x = ", "\n"), Ok("2\n"));
        assert_eq!(between("x = 1\n\n", "x = 1\n", ""), Ok("\n"));
    }
}
