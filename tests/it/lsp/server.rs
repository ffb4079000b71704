//! `crossfile serve` driven over stdio by a small real client: initialize, index progress, an
//! unsaved buffer, completion, inline completion, settings (good and bad), shutdown and exit.

use std::time::{Duration, Instant};

use crossfile_engine::retrieve::DEFAULT_RETRIEVER;
use crossfile_server::lsp::ext::{Context, ContextResult};
use serde_json::{Value, json};

use crate::lsp::client::{Client, FIXTURE, uri};
use crate::support::Workspace;

/// Client options: the index in the test's private cache.
fn options(ws: &Workspace) -> Value {
    json!({"index": {"cache_dir": ws.cache.path().join("index-from-options")}})
}

#[test]
fn serve_completes_an_unsaved_buffer() {
    let ws = Workspace::new(FIXTURE);
    let mut client = Client::start(ws.cache.path());
    let answer = client.initialize(ws.root(), options(&ws));
    let capabilities = answer
        .pointer("/result/capabilities")
        .expect("capabilities");
    assert_eq!(
        capabilities.pointer("/textDocumentSync/change"),
        Some(&json!(2))
    );
    assert!(
        capabilities.get("completionProvider").is_some(),
        "{capabilities}"
    );
    assert_eq!(
        capabilities.get("inlineCompletionProvider"),
        Some(&json!({}))
    );
    let end = client.wait_for_index();
    assert_eq!(
        end.pointer("/params/value/message"),
        Some(&json!("2 files indexed"))
    );

    // The buffer is not saved; its text, with an emoji before the cursor, is what completes (on
    // disk the file has one line, so a completion from the disk would fail at line 3).
    let text = "from geometry.shapes import Rectangle, rectangle_area\n\nbox = Rectangle(3, 4)  # 📦\nprint(rectangle_";
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri(ws.root(), "app.py"), "languageId": "python",
               "version": 1, "text": text}}),
    );
    let at = json!({"textDocument": {"uri": uri(ws.root(), "app.py")},
                    "position": {"line": 3, "character": 16}});
    let answer = client.request("textDocument/completion", at.clone());
    let items = answer
        .pointer("/result/items")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no completion list: {answer}"));
    assert_eq!(items.len(), 1, "{answer}");
    let insert = items[0]["insertText"].as_str().unwrap_or_default();
    assert!(!insert.trim().is_empty(), "{answer}");
    assert_eq!(items[0].pointer("/textEdit/newText"), Some(&json!(insert)));
    let detail = items[0]["detail"].as_str().unwrap_or_default();
    let named = format!("crossfile · {DEFAULT_RETRIEVER} · ");
    assert!(detail.starts_with(&named), "{detail}");
    assert!(detail.ends_with(" ms"), "{detail}");

    let mut inline_at = at.clone();
    inline_at["context"] = json!({"triggerKind": 2});
    let answer = client.request("textDocument/inlineCompletion", inline_at);
    let inline = answer.pointer("/result/items/0").expect("an inline item");
    assert_eq!(
        inline["insertText"],
        json!(insert),
        "the same suggestion: {answer}"
    );
    assert_eq!(
        inline["range"],
        json!({"start": {"line": 3, "character": 16}, "end": {"line": 3, "character": 16}})
    );

    // An incremental change after the emoji (UTF-16 columns), then a completion at the new end.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(ws.root(), "app.py"), "version": 2},
               "contentChanges": [{"range": {"start": {"line": 2, "character": 27},
                                             "end": {"line": 2, "character": 27}},
                                   "text": "\nsize = box.wid"}]}),
    );
    let answer = client.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri(ws.root(), "app.py")},
               "position": {"line": 3, "character": 14}}),
    );
    assert!(answer.get("result").is_some(), "{answer}");

    // New settings apply to the next completion; a bad value is shown and changes nothing.
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"crossfile": {"retrieve": {"retriever": "jaccard"}}}}),
    );
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"crossfile": {"retrieve": {"retriever": "bm26"}}}}),
    );
    let answer = client.request("textDocument/completion", at.clone());
    let detail = answer
        .pointer("/result/items/0/detail")
        .and_then(Value::as_str);
    assert!(
        detail.is_some_and(|d| d.starts_with("crossfile · jaccard · ")),
        "{answer}"
    );
    let shown = client.shown_messages();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].contains("retrieve.retriever") && shown[0].contains("bm26"),
        "{shown:?}"
    );

    // With a long debounce, a newer request for the same document cancels the older one, and so
    // does `$/cancelRequest`; both are answered as cancelled (-32800).
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"lsp": {"debounce_ms": 1500}}}),
    );
    let older = client.start_request("textDocument/completion", at.clone());
    let newer = client.start_request("textDocument/completion", at.clone());
    let older = client
        .response(older)
        .expect("an answer to the older request");
    assert_eq!(
        older.pointer("/error/code"),
        Some(&json!(-32800)),
        "{older}"
    );
    let newer = client
        .response(newer)
        .expect("an answer to the newer request");
    assert!(
        newer.pointer("/result/items/0/insertText").is_some(),
        "{newer}"
    );
    let cancelled = client.start_request("textDocument/completion", at);
    client.notify("$/cancelRequest", json!({"id": cancelled}));
    let cancelled = client
        .response(cancelled)
        .expect("an answer to the cancelled request");
    assert_eq!(
        cancelled.pointer("/error/code"),
        Some(&json!(-32800)),
        "{cancelled}"
    );
    assert_eq!(client.finish(true), Some(0));
}

#[test]
fn bad_client_settings_are_shown_and_the_server_keeps_going() {
    let ws = Workspace::new(FIXTURE);
    let mut client = Client::start(ws.cache.path());
    let answer = client.initialize(
        ws.root(),
        json!({"retrieve": {"top_k": "many", "colour": 1}}),
    );
    assert!(answer.get("result").is_some(), "{answer}");
    client.wait_for_index();
    let shown = client.shown_messages();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].contains("retrieve.colour: unknown key"),
        "{}",
        shown[0]
    );
    assert!(shown[0].contains("retrieve.top_k"), "{}", shown[0]);
    assert!(shown[0].contains("previous settings stay"), "{}", shown[0]);
    assert_eq!(client.finish(true), Some(0));
}

#[test]
fn exit_without_shutdown_is_an_error() {
    let ws = Workspace::new(FIXTURE);
    let mut client = Client::start(ws.cache.path());
    client.initialize(ws.root(), Value::Null);
    client.wait_for_index();
    assert_eq!(client.finish(false), Some(1));
}

/// Typing the first characters of the suggestion on screen is answered with its rest, from the
/// suggestion itself: the last completion stays the one the model made (`crossfile.context`
/// shows its latency and raw output unchanged), also with a `)` the editor closed after the
/// cursor. Typing something else asks the model again.
#[test]
fn typing_along_a_suggestion_answers_its_rest_without_the_model() {
    let ws = Workspace::new(FIXTURE);
    let mut client = Client::start(ws.cache.path());
    let mut opts = options(&ws);
    opts["lsp"] = json!({"debounce_ms": 0});
    client.initialize(ws.root(), opts);
    client.wait_for_index();
    let file = uri(ws.root(), "app.py");
    let before =
        "from geometry.shapes import Rectangle, rectangle_area\n\nbox = Rectangle(3, 4)\nprint(";
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": file, "languageId": "python", "version": 1,
               "text": before}}),
    );
    let inline_at = |client: &mut Client, character: usize| {
        let answer = client.request(
            "textDocument/inlineCompletion",
            json!({"textDocument": {"uri": file}, "position": {"line": 3, "character": character},
                   "context": {"triggerKind": 2}}),
        );
        answer
            .pointer("/result/items/0/insertText")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no suggestion: {answer}"))
    };
    let shown = inline_at(&mut client, 6);
    assert!(
        shown.chars().count() >= 3,
        "a suggestion to type along: {shown:?}"
    );
    let context = |client: &mut Client| -> ContextResult {
        client
            .command::<Context>(json!({"uri": file}))
            .expect("the document's last completion")
    };
    let first = context(&mut client);

    // Two characters of it typed, one keystroke at a time.
    let mut typed = String::new();
    for (version, c) in shown.chars().take(2).enumerate() {
        typed.push(c);
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": file, "version": version + 2},
                   "contentChanges": [{"text": format!("{before}{typed}")}]}),
        );
        let rest = inline_at(&mut client, 6 + typed.encode_utf16().count());
        assert_eq!(format!("{typed}{rest}"), shown, "after typing {typed:?}");
    }
    let along = context(&mut client);
    assert_eq!(along.made.suggestion, shown[typed.len()..]);
    assert_eq!(
        along.made.latency_ms, first.made.latency_ms,
        "no new completion ran"
    );
    assert_eq!(along.raw_suggestion, first.raw_suggestion);

    // The editor closed what was opened (VS Code's auto-closing brackets put `)` after the
    // cursor): typing along answers the rest without the `)` the line holds, still without the
    // model.
    assert!(
        shown.ends_with(')') && shown.chars().count() > 4,
        "a suggestion that closes `print(`: {shown:?}"
    );
    let opened: String = shown.chars().take(3).collect();
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": file, "version": 5},
               "contentChanges": [{"text": format!("{before}{opened})")}]}),
    );
    let rest = inline_at(&mut client, 6 + opened.encode_utf16().count());
    assert_eq!(format!("{opened}{rest})"), shown, "with the editor's `)`");
    let closed = context(&mut client);
    assert_eq!(
        closed.made.latency_ms, first.made.latency_ms,
        "no new completion ran"
    );
    assert_eq!(closed.made.suggestion, rest);

    // Something else typed: the model is asked, a completion of its own.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": file, "version": 9},
               "contentChanges": [{"text": format!("{before}{typed}#")}]}),
    );
    let answer = client.request(
        "textDocument/inlineCompletion",
        json!({"textDocument": {"uri": file},
               "position": {"line": 3, "character": 6 + typed.encode_utf16().count() + 1},
               "context": {"triggerKind": 2}}),
    );
    assert!(answer.get("result").is_some(), "{answer}");
    let asked = context(&mut client);
    assert_ne!(asked.made.latency_ms, first.made.latency_ms, "{asked:?}");
}

/// `lsp.max_generate_ms` cuts a long generation: the suggestion is the start of the one the
/// same server gives without the budget. The whole answer is then asked for in the background
/// and replaces the cut one: typing the cut suggestion's first character is answered, without
/// the model, with the rest of the whole answer.
#[test]
fn the_time_budget_cuts_a_long_generation_and_the_whole_answer_follows() {
    let text = "from geometry.shapes import Rectangle, rectangle_area\n\n\ndef ";
    let start = |budget_ms: u64| {
        let ws = Workspace::new(FIXTURE);
        let mut client = Client::start(ws.cache.path());
        let mut opts = options(&ws);
        opts["lsp"] = json!({"debounce_ms": 0, "max_generate_ms": budget_ms});
        opts["postprocess"] = json!({"unit": "raw"});
        opts["prompt"] = json!({"max_new_tokens": 120});
        client.initialize(ws.root(), opts);
        client.wait_for_index();
        let file = uri(ws.root(), "app.py");
        client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": file, "languageId": "python", "version": 1,
                   "text": text}}),
        );
        (ws, client, file)
    };
    let suggestion = |client: &mut Client, file: &str, (line, character): (usize, usize)| {
        let answer = client.request(
            "textDocument/inlineCompletion",
            json!({"textDocument": {"uri": file}, "position": {"line": line, "character": character},
                   "context": {"triggerKind": 2}}),
        );
        assert!(answer.pointer("/result/items").is_some(), "{answer}");
        // No item: the suggestion was blank (a budget can end it after a first blank token).
        answer
            .pointer("/result/items/0/insertText")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let full = {
        let (_ws, mut client, file) = start(0);
        suggestion(&mut client, &file, (3, 4))
    };
    let (_ws, mut client, file) = start(100);
    let cut = suggestion(&mut client, &file, (3, 4));
    assert!(
        cut.len() < full.len() && full.starts_with(&cut),
        "{cut:?} / {full:?}"
    );

    // The whole answer replaces it in the background.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let context = client
            .command::<Context>(json!({"uri": file}))
            .expect("the document's last completion");
        if !context.generation.out_of_time {
            assert_eq!(context.made.suggestion, full, "{context:?}");
            break;
        }
        assert!(Instant::now() < deadline, "never replaced: {context:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let first = full.chars().next().expect("a suggestion");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": file, "version": 2},
               "contentChanges": [{"text": format!("{text}{first}")}]}),
    );
    let after = if first == '\n' {
        (4, 0)
    } else {
        (3, 4 + first.len_utf16())
    };
    let rest = suggestion(&mut client, &file, after);
    assert_eq!(format!("{first}{rest}"), full);
}

/// A model the server must fetch first (here the small one, named, into the test's own cache):
/// the editor is shown its bytes as they come, then "verifying", then the end; a completion asked
/// for meanwhile is told at once that the model is downloading, and completions work after.
#[test]
fn a_model_fetched_at_start_shows_its_progress_and_completions_meanwhile_say_so() {
    let ws = Workspace::new(FIXTURE);
    let mut client = Client::start_with_user_config(
        ws.cache.path(),
        "[model]\nname = \"smollm2-135m\"\nthreads = 1\n[prompt]\nmax_new_tokens = 8\n",
    );
    client.initialize(ws.root(), options(&ws));
    let at = json!({"textDocument": {"uri": uri(ws.root(), "app.py")},
                    "position": {"line": 0, "character": 0}});
    let answer = client.request("textDocument/completion", at.clone());
    let message = answer
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no error while downloading: {answer}"));
    assert!(
        message.starts_with("the model smollm2-135m is downloading (")
            && message.ends_with("completions start when it is ready"),
        "{message}"
    );
    let is_model_end = |m: &Value| {
        m["method"] == "$/progress"
            && m.pointer("/params/token") == Some(&json!("crossfile/model"))
            && m.pointer("/params/value/kind") == Some(&json!("end"))
    };
    let end = client
        .wait_until(Duration::from_secs(600), is_model_end)
        .unwrap_or_else(|| panic!("no end of the download; log:\n{}", client.log_tail()));
    assert_eq!(
        end.pointer("/params/value/message"),
        Some(&json!("smollm2-135m ready"))
    );
    let values: Vec<Value> = client
        .notifications
        .iter()
        .filter(|m| m.pointer("/params/token") == Some(&json!("crossfile/model")))
        .map(|m| m.pointer("/params/value").cloned().unwrap_or_default())
        .collect();
    assert_eq!(values[0]["kind"], "begin", "{values:?}");
    assert_eq!(values[0]["title"], "Downloading the model smollm2-135m");
    let messages: Vec<&str> = values
        .iter()
        .filter_map(|v| v["message"].as_str())
        .collect();
    assert!(messages.contains(&"98 of 98 MB"), "{messages:?}");
    assert!(messages.contains(&"verifying"), "{messages:?}");
    let percentages: Vec<u64> = values
        .iter()
        .filter_map(|v| v["percentage"].as_u64())
        .collect();
    assert!(
        percentages.windows(2).all(|w| w[0] <= w[1]),
        "{percentages:?}"
    );
    // In the cache the client's options name.
    assert!(
        ws.cache
            .path()
            .join("index-from-options/models/SmolLM2-135M-Instruct.Q4_1.gguf")
            .is_file()
    );
    let answer = client.request("textDocument/completion", at);
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(client.finish(true), Some(0));
}
