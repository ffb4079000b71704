//! What the editor clients ask of `crossfile serve` (real stdio, the embedded model, the DEV
//! cases): `crossfile.listCases` for pickers, `crossfile.score` of the open buffer (what the user
//! has between the case's unchanged contexts; raw when it is the server's own suggestion; an
//! edited prefix or suffix refused), and `crossfile.compare`'s reference, diff, chunk URIs and
//! origins, and identifier overlap.

use std::path::Path;

use crossfile_server::lsp::ext::{
    Compare, Context, ListCases, Metrics, Score, ScoreResult, Scored,
};
use serde_json::{Value, json};

use crate::lsp::client::{Client, made_columns};
use crate::support::{bench_repos, shared_dir};

/// A short context and suggestion keep the test quick.
const MODEL: &str = "n_ctx = 1024\n[prompt]\nmax_new_tokens = 16\n";

/// Starts a server with no workspace folder, as an editor replaying cases does.
fn start(cache: &Path) -> Client {
    Client::start_without_folders(cache, MODEL)
}

/// The error message of a command that must fail.
fn refused(client: &mut Client, command: &str, argument: Value) -> String {
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": command, "arguments": [argument]}),
    );
    answer
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{command} should fail: {answer}"))
        .to_string()
}

/// Replaces `range` of the open document `uri` with `text` (one incremental change).
fn edit(client: &mut Client, uri: &str, version: i64, range: Value, text: &str) {
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version},
               "contentChanges": [{"range": range, "text": text}]}),
    );
}

/// Where the cursor ends after typing `text` at `at` (UTF-16 columns).
fn after(at: &Value, text: &str) -> Value {
    let (line, character) = (at["line"].as_u64().unwrap_or(0), at["character"].as_u64());
    let breaks = text.matches('\n').count() as u64;
    let tail = text
        .rsplit('\n')
        .next()
        .unwrap_or("")
        .encode_utf16()
        .count() as u64;
    let character = if breaks == 0 {
        character.unwrap_or(0) + tail
    } else {
        tail
    };
    json!({"line": line + breaks, "character": character})
}

fn span(start: &Value, end: &Value) -> Value {
    json!({"start": start, "end": end})
}

#[test]
fn list_cases_lists_every_usable_case_and_shows_the_bad_ones() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dev = shared_dir().join("bench/cceval/python-dev.jsonl");
    let records: Vec<Value> = std::fs::read_to_string(&dev)
        .expect("DEV cases")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a record"))
        .collect();
    let mut client = start(cache.path());
    let rows = client.command::<ListCases>(json!({"cases": dev}));
    assert_eq!(rows.len(), records.len());
    for (i, (row, record)) in rows.iter().zip(&records).enumerate() {
        // The benchmark's own record, as its file has it.
        let meta = &record["metadata"];
        assert_eq!(json!(row.id), meta["task_id"], "{row:?}");
        assert_eq!(row.index, i);
        assert_eq!(row.language, "python");
        assert_eq!(json!(row.repository), meta["repository"], "{row:?}");
        assert_eq!(json!(row.path), meta["file"], "{row:?}");
        let line = meta["groundtruth_start_lineno"].as_u64().expect("line");
        assert_eq!(u64::from(row.line), line + 1, "1-based: {row:?}");
    }

    // A record without its metadata and a torn line are skipped and shown, naming line and
    // field; the others are listed.
    let lines: Vec<String> = std::fs::read_to_string(&dev)
        .expect("DEV cases")
        .lines()
        .take(3)
        .map(str::to_string)
        .collect();
    let mut broken: Value = serde_json::from_str(&lines[1]).expect("a record");
    broken.as_object_mut().expect("object").remove("metadata");
    let cases = cache.path().join("some.jsonl");
    let text = format!("{}\n{broken}\n{}\n{{\"prompt\": \"x\n", lines[0], lines[2]);
    std::fs::write(&cases, text).expect("write");
    let listed = client.command::<ListCases>(json!({"cases": cases, "format": "cceval"}));
    let ids: Vec<Value> = listed.iter().map(|r| json!(r.id)).collect();
    assert_eq!(
        ids,
        [
            records[0]["metadata"]["task_id"].clone(),
            records[2]["metadata"]["task_id"].clone()
        ]
    );
    let message = client
        .first_shown_message(std::time::Duration::from_secs(10))
        .unwrap_or_default();
    assert!(
        message.contains("skipped 2") && message.contains("some.jsonl:2: metadata"),
        "{message}"
    );
    assert!(message.contains("some.jsonl:4:"), "{message}");

    let message = refused(
        &mut client,
        "crossfile.listCases",
        json!({"cases": cache.path().join("none.jsonl")}),
    );
    assert!(message.contains("none.jsonl"), "{message}");
    let message = refused(
        &mut client,
        "crossfile.listCases",
        json!({"cases": dev, "format": "humaneval"}),
    );
    assert!(message.contains("humaneval"), "{message}");
    assert_eq!(client.finish(true), Some(0));
}

#[test]
fn score_of_the_buffer_takes_what_the_user_has_between_the_unchanged_contexts() {
    let cache = tempfile::tempdir().expect("tempdir");
    let repos = bench_repos();
    let dev = shared_dir().join("bench/cceval/python-dev.jsonl");
    let mut client = start(cache.path());

    // A line case: the server's own suggestion, accepted into the buffer, is scored raw, exactly
    // as the suggestion itself is.
    let opened = client.open_case(json!({"cases": dev, "repos": repos, "case": 0}));
    let id = opened.pointer("/case/id").cloned().expect("id");
    let uri = opened["uri"].as_str().expect("uri").to_string();
    let at = opened["position"].clone();
    let answer = client.request(
        "textDocument/inlineCompletion",
        json!({"textDocument": {"uri": uri}, "position": at, "context": {"triggerKind": 1}}),
    );
    let suggestion = answer
        .pointer("/result/items/0/insertText")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    assert!(!suggestion.is_empty(), "a suggestion to accept: {answer}");
    let by_text = client.command::<Score>(json!({"caseId": id, "suggestion": suggestion}));
    edit(&mut client, &uri, 2, span(&at, &at), &suggestion);
    let score_buffer = |client: &mut Client| -> ScoreResult {
        client.command::<Score>(json!({"caseId": id, "uri": uri}))
    };
    let by_buffer = score_buffer(&mut client);
    assert_eq!(by_buffer.scored, Scored::Raw, "{by_buffer:?}");
    assert_eq!(by_buffer, by_text);
    let context = client.command::<Context>(json!({"uri": uri}));
    let context = context.expect("the document's last completion");
    assert_eq!(by_buffer.prediction, context.raw_suggestion);

    // Typed on after the suggestion: the text as given.
    let end = after(&at, &suggestion);
    edit(&mut client, &uri, 3, span(&end, &end), " + 1");
    let typed = score_buffer(&mut client);
    assert_eq!(typed.scored, Scored::Given, "{typed:?}");
    assert_eq!(typed.prediction, format!("{suggestion} + 1"));

    // An edited prefix is refused, and so is an edited suffix; undone, the score comes back.
    let origin = json!({"line": 0, "character": 0});
    edit(&mut client, &uri, 4, span(&origin, &origin), "#");
    let message = refused(
        &mut client,
        "crossfile.score",
        json!({"caseId": id, "uri": uri}),
    );
    assert!(
        message.contains("before the case's cursor was changed (line 1)"),
        "{message}"
    );
    let one = json!({"line": 0, "character": 1});
    edit(&mut client, &uri, 5, span(&origin, &one), "");
    let text = opened["text"].as_str().expect("text");
    let last_line = text.matches('\n').count();
    let tail = json!({"line": last_line, "character": 0});
    edit(&mut client, &uri, 6, span(&tail, &tail), "# appended\n");
    let message = refused(
        &mut client,
        "crossfile.score",
        json!({"caseId": id, "uri": uri}),
    );
    assert!(message.contains("right context) was changed"), "{message}");
    let appended = json!({"line": last_line + 1, "character": 0});
    edit(&mut client, &uri, 7, span(&tail, &appended), "");
    let again = score_buffer(&mut client);
    assert_eq!(again, typed);

    // At the case's cursor, compare shows the reference and each suggestion's diff against it,
    // and every chunk's file as a URI.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 8},
               "contentChanges": [{"text": opened["text"]}]}),
    );
    let compared = client.command::<Compare>(
        json!({"uri": uri, "position": at, "retrievers": ["bm25-cceval-rg1", "none"]}),
    );
    let reference = compared.reference.as_deref().expect("a reference");
    let columns = made_columns(&compared);
    assert_eq!(columns.len(), 2);
    for column in &columns {
        let runs = column.diff.as_ref().expect("a diff");
        let side = |keep: &str| -> String {
            runs.iter()
                .filter(|r| r.op == "equal" || r.op == keep)
                .map(|r| r.text.as_str())
                .collect()
        };
        assert_eq!(side("delete"), reference, "{column:?}");
        assert_eq!(side("insert"), column.made.suggestion, "{column:?}");
    }
    let chunks = &columns[0].made.chunks;
    assert!(!chunks.is_empty(), "{compared:?}");
    // The case's file (`tests/test_config/test_route.py`) imports `configzen.errors` and
    // `configzen.model`; `bm25-cceval-rg1` leaves its own file out.
    let case_path = opened.pointer("/case/path").and_then(Value::as_str);
    assert_eq!(case_path, Some("tests/test_config/test_route.py"));
    for chunk in chunks {
        let path = chunk.path.as_str();
        let file = chunk.uri.as_ref().and_then(|u| u.to_file_path().ok());
        assert!(
            file.is_some_and(|f| f.is_file() && f.ends_with(path)),
            "{chunk:?}"
        );
        let origin = if path
            .strip_prefix("tests/test_config/")
            .is_some_and(|name| !name.contains('/'))
        {
            "same_dir"
        } else if ["configzen/errors.py", "configzen/model.py"].contains(&path) {
            "imported"
        } else {
            "elsewhere"
        };
        assert_eq!(chunk.origin.as_deref(), Some(origin), "{chunk:?}");
    }
    // The identifier overlap of each column with the reference: only a column with chunks.
    assert!(
        columns[0].overlap.is_some_and(|o| (0.0..=1.0).contains(&o)),
        "{compared:?}"
    );
    assert_eq!(columns[1].overlap, None, "{compared:?}");

    // Scoring needs the case's own open file.
    let message = refused(
        &mut client,
        "crossfile.score",
        json!({"caseId": id, "uri": "file:///elsewhere/x.py"}),
    );
    assert!(message.contains("is not the file of case"), "{message}");
    let message = refused(
        &mut client,
        "crossfile.score",
        json!({"caseId": id, "uri": uri, "suggestion": "x"}),
    );
    assert!(message.contains("not both"), "{message}");
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    let message = refused(
        &mut client,
        "crossfile.score",
        json!({"caseId": id, "uri": uri}),
    );
    assert!(message.contains("is not open"), "{message}");

    // A function case: the body between the unchanged signature and the code after it is
    // scored, several lines at once.
    let repoeval = shared_dir().join("bench/repoeval/function-dev.jsonl");
    let opened = client.open_case(json!({"cases": repoeval, "repos": repos, "case": 0}));
    let id = opened.pointer("/case/id").cloned().expect("id");
    let uri = opened["uri"].as_str().expect("uri").to_string();
    let at = opened["position"].clone();
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&repoeval)
            .expect("cases")
            .lines()
            .next()
            .expect("a record"),
    )
    .expect("a record");
    let body = first
        .pointer("/metadata/ground_truth")
        .and_then(Value::as_str)
        .expect("reference");
    assert!(body.trim_end().contains('\n'), "a body of several lines");
    edit(&mut client, &uri, 2, span(&at, &at), body);
    let scored = client.command::<Score>(json!({"caseId": id, "uri": uri}));
    assert_eq!(scored.scored, Scored::Given, "{scored:?}");
    assert_eq!(scored.prediction, body);
    let perfect = [("em", 1.0), ("es", 1.0), ("chrf", 100.0)];
    assert_eq!(
        scored.metrics,
        Metrics::Scores(perfect.map(|(m, v)| (m.to_string(), v)).into()),
        "{scored:?}"
    );
    assert_eq!(client.finish(true), Some(0));
}
