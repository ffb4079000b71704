//! An answer the embedded backend gave from the last answer's layout (the cursor's text with the
//! last cross-file block and start, its KV cache warm) is replaced in the background by the new
//! prompt's own answer: over real stdio, with the real default model and a real index of click.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::lsp::client::{Client, uri};
use crate::support::corpus_workspace;

const MODEL: &str = "n_ctx = 1024\n[prompt]\nmax_new_tokens = 24\n";

/// Going down click's `core.py` line by line, until an answer comes from the fallback: without
/// another request, the document's last completion becomes a new one asked at the same cursor
/// from its own prompt, and typing its first character is answered with its rest.
#[test]
fn an_answer_from_the_last_layout_is_replaced_by_the_new_prompts_own() {
    let cache = tempfile::tempdir().expect("tempdir");
    let root = corpus_workspace("click");
    let mut client = Client::start_with(cache.path(), MODEL);
    client.initialize(
        &root,
        json!({"index": {"cache_dir": cache.path().join("index")}, "lsp": {"debounce_ms": 0}}),
    );
    client.wait_for_index();
    let rel = "src/click/core.py";
    let file = uri(&root, rel);
    let text = std::fs::read_to_string(root.join(rel)).expect("core.py");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": file, "languageId": "python", "version": 1,
               "text": text}}),
    );
    let inline_at = |client: &mut Client, line: usize, character: usize| {
        let answer = client.request(
            "textDocument/inlineCompletion",
            json!({"textDocument": {"uri": file},
                   "position": {"line": line, "character": character},
                   "context": {"triggerKind": 2}}),
        );
        assert!(answer.get("result").is_some(), "{answer}");
        answer
            .pointer("/result/items/0/insertText")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let rows: Vec<&str> = text.split('\n').collect();
    for (line, row) in rows.iter().enumerate().skip(1200).take(150) {
        if row.trim().is_empty() {
            continue;
        }
        let indent = row.len() - row.trim_start().len();
        inline_at(&mut client, line, indent);
        let fallback = client.execute("crossfile.context", json!({"uri": file}));
        if fallback.pointer("/generation/fromFallback") != Some(&json!(true)) {
            continue;
        }
        let started = Instant::now();
        let own = loop {
            std::thread::sleep(Duration::from_millis(200));
            let now = client.execute("crossfile.context", json!({"uri": file}));
            if now["serial"] != fallback["serial"] {
                break now;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{line}: never replaced"
            );
        };
        assert_eq!(own["askedAt"], fallback["position"], "{line}: {own}");
        assert_eq!(own["position"], fallback["position"], "{line}: {own}");
        assert_eq!(own.pointer("/generation/fromFallback"), Some(&json!(false)));
        assert_ne!(own["prompt"], fallback["prompt"], "{line}: its own prompt");
        let shown = own["suggestion"].as_str().unwrap_or_default().to_string();
        let Some(first) = shown.chars().next().filter(|_| shown.chars().count() > 1) else {
            continue;
        };
        // Its first character typed: its rest, without the model.
        let mut typed = rows.clone();
        let edited = format!("{}{first}{}", &row[..indent], &row[indent..]);
        typed[line] = &edited;
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": file, "version": 2},
                   "contentChanges": [{"text": typed.join("\n")}]}),
        );
        let rest = inline_at(&mut client, line, indent + first.len_utf16());
        assert_eq!(format!("{first}{rest}"), shown, "{line}");
        let along = client.execute("crossfile.context", json!({"uri": file}));
        assert_eq!(along["serial"], own["serial"], "typed along, not asked");
        assert_eq!(along["askedAt"], fallback["position"]);
        return;
    }
    panic!("no answer from the fallback replaced in 150 lines");
}
