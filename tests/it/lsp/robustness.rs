//! `crossfile serve` against a misbehaving client and a hanging backend, over real stdio:
//! malformed JSON-RPC, unknown methods, a document closed while its completion waits, a position
//! past the end of a document, a burst of edits each followed by a completion, and an HTTP
//! backend that never answers. After each, the server must still answer.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::backends::servers::{Reply, Stub};
use crate::lsp::client::{Client, FIXTURE, uri};
use crate::support::Workspace;

/// The unsaved buffer of `app.py`: six lines where the disk has one.
const BUFFER: &str = "from geometry.shapes import Rectangle, rectangle_area\n\nbox = Rectangle(3, 4)\nsize = rectangle_area(box)\nprint(size)\narea = rectangle_";

/// An OpenAI `/v1/completions` answer.
const COMPLETION: &str = r#"{"id":"c","object":"text_completion","created":1,"model":"m",
 "choices":[{"text":"area(box)\n","index":0,"logprobs":null,"finish_reason":"stop"}]}"#;

/// Client options: the index in the test's private cache, no model, `debounce_ms`.
fn no_model(ws: &Workspace, debounce_ms: u64) -> Value {
    json!({
        "index": {"cache_dir": ws.cache.path().join("index")},
        "backend": {"kind": "none"},
        "lsp": {"debounce_ms": debounce_ms},
    })
}

/// Client options for an OpenAI-compatible backend at `endpoint`: no retries, no response cache.
fn http_backend(ws: &Workspace, endpoint: &str, timeout_ms: u64) -> Value {
    json!({
        "index": {"cache_dir": ws.cache.path().join("index")},
        "backend": {"kind": "openai", "endpoint": endpoint, "timeout_ms": timeout_ms,
                    "retries": 0, "cache_entries": 0},
        "prompt": {"template": "plain"},
        "lsp": {"debounce_ms": 0},
    })
}

/// A server initialized on `ws` with `options`, its index built, `app.py` open with [`BUFFER`].
fn ready(ws: &Workspace, options: Value) -> Client {
    let mut client = Client::start(ws.cache.path());
    let answer = client.initialize(ws.root(), options);
    assert!(answer.get("result").is_some(), "{answer}");
    client.wait_for_index();
    open(&mut client, ws, "app.py", BUFFER);
    client
}

fn open(client: &mut Client, ws: &Workspace, rel: &str, text: &str) {
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri(ws.root(), rel), "languageId": "python",
               "version": 1, "text": text}}),
    );
}

fn at(ws: &Workspace, rel: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri(ws.root(), rel)},
           "position": {"line": line, "character": character}})
}

/// The error code of an answer, if it is an error.
fn error_code(answer: &Value) -> Option<i64> {
    answer.pointer("/error/code").and_then(Value::as_i64)
}

/// Whether `answer` is a completion list (possibly empty: the `none` backend suggests nothing).
fn is_list(answer: &Value) -> bool {
    answer.pointer("/result/items").is_some_and(Value::is_array)
}

/// A completion at the end of `app.py`'s buffer, answered with a list: the server still works.
fn assert_answers(client: &mut Client, ws: &Workspace) {
    let answer = client.request("textDocument/completion", at(ws, "app.py", 5, 16));
    assert!(is_list(&answer), "the server stopped answering: {answer}");
}

/// Frames `body` as the protocol does, whatever it holds.
fn frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Waits for the error answer with `id` (`Value::Null` for one the server could not identify).
fn error_answer(client: &mut Client, id: &Value) -> Value {
    client
        .wait_until(Duration::from_secs(30), |m| {
            m.get("id") == Some(id) && m.get("error").is_some()
        })
        .unwrap_or_else(|| panic!("no error answer with id {id}"))
}

#[test]
fn malformed_messages_are_answered_as_errors_and_the_session_goes_on() {
    let ws = Workspace::new(FIXTURE);
    let mut client = ready(&ws, no_model(&ws, 0));
    assert_answers(&mut client, &ws);

    // (body, the id the error answer carries, its code)
    let rows: &[(&[u8], Value, i64)] = &[
        (b"{this is not json", Value::Null, -32700),
        (b"\xff\xfe not UTF-8", Value::Null, -32700),
        (b"[1, 2, 3]", Value::Null, -32600),
        (br#"{"jsonrpc":"2.0","id":41}"#, json!(41), -32600),
        (
            br#"{"jsonrpc":"2.0","id":42,"method":"textDocument/completion","params":"wrong"}"#,
            json!(42),
            -32602,
        ),
        (
            br#"{"jsonrpc":"2.0","id":43,"method":"textDocument/completion","params":{"textDocument":5,"position":[]}}"#,
            json!(43),
            -32602,
        ),
    ];
    for (body, id, code) in rows {
        client.send_raw(&frame(body));
        let answer = error_answer(&mut client, id);
        assert_eq!(
            error_code(&answer),
            Some(*code),
            "{}: {answer}",
            String::from_utf8_lossy(body)
        );
        assert_answers(&mut client, &ws);
    }
    // A header block without a length cannot be answered: it is skipped, and what follows it is
    // read.
    client.send_raw(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n");
    assert_answers(&mut client, &ws);
    assert!(client.is_running());
    assert_eq!(client.finish(true), Some(0), "a clean exit after all that");
}

#[test]
fn unknown_methods_are_refused_and_unknown_notifications_ignored() {
    let ws = Workspace::new(FIXTURE);
    let mut client = ready(&ws, no_model(&ws, 0));
    let answer = client.request("crossfile/noSuchMethod", json!({"x": 1}));
    assert_eq!(error_code(&answer), Some(-32601), "{answer}");
    client.notify("crossfile/noSuchNotification", json!({"x": 1}));
    client.notify("$/noSuchNotification", json!({}));
    assert_answers(&mut client, &ws);
    // Nothing answered the notifications.
    assert!(
        client.responses.is_empty(),
        "answers nobody asked for: {:?}",
        client.responses
    );
    assert_eq!(client.finish(true), Some(0));
}

#[test]
fn a_document_closed_while_its_completion_waits_is_still_answered() {
    let ws = Workspace::new(FIXTURE);
    // The debounce holds the completion for a second, so the close arrives while it waits.
    let mut client = ready(&ws, no_model(&ws, 1000));
    let started = Instant::now();
    // Line 5 exists only in the buffer; the disk's app.py has one line.
    let waiting = client.start_request("textDocument/completion", at(&ws, "app.py", 5, 16));
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri(ws.root(), "app.py")}}),
    );
    // The message loop is free meanwhile.
    let answer = client.request("crossfile/noSuchMethod", Value::Null);
    assert_eq!(error_code(&answer), Some(-32601), "{answer}");
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    let answer = client.response(waiting).expect("an answer");
    // Answered from the text it was asked on (or cancelled): never an internal error.
    assert!(
        is_list(&answer) || error_code(&answer) == Some(-32800),
        "{answer}"
    );
    // The closed document is read from disk again; another document completes as before.
    let answer = client.request("textDocument/completion", at(&ws, "app.py", 0, 5));
    assert!(is_list(&answer), "{answer}");
    open(
        &mut client,
        &ws,
        "geometry/shapes.py",
        "class Rectangle:\n    pass\n",
    );
    let answer = client.request(
        "textDocument/completion",
        at(&ws, "geometry/shapes.py", 1, 8),
    );
    assert!(is_list(&answer), "{answer}");
    assert_eq!(client.finish(true), Some(0));
}

#[test]
fn a_position_past_the_end_is_answered_at_the_end() {
    let ws = Workspace::new(FIXTURE);
    let mut client = ready(&ws, no_model(&ws, 0));
    // An open buffer, a file read from disk, and a column past an existing line's end.
    for (rel, line, character) in [
        ("app.py", 9999, 9999),
        ("geometry/shapes.py", 9999, 9999),
        ("app.py", 2, 9999),
        ("app.py", u32::MAX, u32::MAX),
    ] {
        let answer = client.request("textDocument/completion", at(&ws, rel, line, character));
        assert!(is_list(&answer), "{rel} {line}:{character}: {answer}");
    }
    assert_answers(&mut client, &ws);
    assert_eq!(client.finish(true), Some(0));
}

#[test]
fn a_burst_of_edits_each_with_a_completion_is_answered_in_full() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let stub = runtime.block_on(Stub::start(vec![Reply::json(COMPLETION)]));
    let ws = Workspace::new(FIXTURE);
    let mut client = ready(&ws, http_backend(&ws, &stub.url, 30_000));
    let app = uri(ws.root(), "app.py");
    let mut text = BUFFER.to_string();
    // The first completion loads the tokenizer; memory is measured after it.
    assert_answers(&mut client, &ws);
    let before_kb = client.rss_kb();

    // Each edit appends a line at the end; each completion asks at the new end, without waiting.
    let mut ids = Vec::new();
    for i in 0..100u32 {
        let added = format!("\nvalue_{i} = rectangle_area(box) * {i}");
        let line = 5 + i;
        let end = text
            .rsplit('\n')
            .next()
            .map_or(0, |l| l.encode_utf16().count());
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": app, "version": i + 2},
                   "contentChanges": [{"range": {"start": {"line": line, "character": end},
                                                 "end": {"line": line, "character": end}},
                                       "text": added}]}),
        );
        text.push_str(&added);
        let character = text
            .rsplit('\n')
            .next()
            .map_or(0, |l| l.encode_utf16().count());
        ids.push(client.start_request(
            "textDocument/completion",
            at(&ws, "app.py", line + 1, character as u32),
        ));
    }
    let mut cancelled = 0;
    let mut last = Value::Null;
    for id in &ids {
        let answer = client.response(*id).expect("every request is answered");
        match error_code(&answer) {
            Some(-32800) => cancelled += 1,
            Some(_) => panic!("an error other than cancelled: {answer}"),
            None => assert!(is_list(&answer), "{answer}"),
        }
        last = answer;
    }
    // Nothing came after the last request, so it ran to the end and carries the suggestion.
    assert_eq!(
        last.pointer("/result/items/0/insertText"),
        Some(&json!("area(box)")),
        "{last}"
    );
    assert!(cancelled < ids.len());
    // A prompt the backend saw ends with the final buffer: its last 60 lines, every edit among
    // them in order (the whole buffer does not fit the budget beside the cross-file chunks,
    // which now include the buffer's own earlier lines).
    let prompts: Vec<String> = stub
        .requests()
        .iter()
        .filter_map(|r| r.json()["prompt"].as_str().map(str::to_string))
        .collect();
    let lines: Vec<&str> = text.split('\n').collect();
    let tail = lines[lines.len() - 60..].join("\n");
    assert!(
        prompts.iter().any(|p| p.ends_with(&format!("\n{tail}"))),
        "no prompt ends with the final buffer's last 60 lines {tail:?}; the last was {:?}",
        prompts.last()
    );

    let after_kb = client.rss_kb();
    // A leak guard, not a performance claim.
    assert!(
        after_kb < 2 * before_kb + 50 * 1024,
        "RSS grew from {before_kb} kB to {after_kb} kB over 100 edits"
    );
    assert_eq!(client.finish(true), Some(0));
    drop(stub);
}

#[test]
fn a_backend_that_never_answers_times_out_and_the_server_stays_responsive() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let stub = runtime.block_on(Stub::start(vec![Reply::Hang]));
    let ws = Workspace::new(FIXTURE);
    let timeout = Duration::from_millis(2000);
    let mut client = ready(
        &ws,
        http_backend(&ws, &stub.url, timeout.as_millis() as u64),
    );
    open(
        &mut client,
        &ws,
        "geometry/shapes.py",
        "class Rectangle:\n    pass\n",
    );
    let started = Instant::now();
    let first = client.start_request("textDocument/completion", at(&ws, "app.py", 5, 16));
    let second = client.start_request(
        "textDocument/completion",
        at(&ws, "geometry/shapes.py", 1, 8),
    );

    // While both wait on the backend, requests that need no model are answered at once.
    let answer = client.request("crossfile/noSuchMethod", Value::Null);
    assert_eq!(error_code(&answer), Some(-32601), "{answer}");
    let outside = json!({"textDocument": {"uri": "file:///nowhere/else.py"},
                         "position": {"line": 0, "character": 0}});
    let answer = client.request("textDocument/completion", outside);
    assert_eq!(answer.get("result"), Some(&Value::Null), "{answer}");
    assert!(
        started.elapsed() < timeout,
        "answers waited for the backend: {:?}",
        started.elapsed()
    );

    // Each completion is answered with the timeout, soon after it.
    for id in [first, second] {
        let answer = client.response(id).expect("an answer");
        let elapsed = started.elapsed();
        assert_eq!(error_code(&answer), Some(-32603), "{answer}");
        let message = answer
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        assert!(message.contains("no answer within 2000 ms"), "{message}");
        assert!(
            elapsed >= timeout && elapsed < timeout + Duration::from_secs(10),
            "{elapsed:?}"
        );
    }
    // One attempt each: `retries = 0` is honoured.
    assert_eq!(stub.requests().len(), 2);
    assert_eq!(client.finish(true), Some(0));
    drop(stub);
}
