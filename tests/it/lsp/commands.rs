//! `crossfile serve` on a real workspace (a copy of the click corpus package) with the embedded
//! model: completion and inline completion; an unsaved edit through `didChange` changes what
//! `crossfile.context` shows was retrieved; a file deleted on disk leaves the index;
//! `crossfile.compare` runs several retrievers at one cursor; `recent` gives the buffers opened
//! and edited.

use std::path::Path;

use crossfile_server::lsp::ext::{Compare, Context, MadeColumn};
use serde_json::{Value, json};

use crate::lsp::client::{Client, made_columns, uri};
use crate::support::{copy_tree, corpus_workspace};

const MODEL: &str = "n_ctx = 1024\n[prompt]\nmax_new_tokens = 16\n";

fn open(client: &mut Client, root: &Path, rel: &str, text: &str) {
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri(root, rel), "languageId": "python", "version": 1,
               "text": text}}),
    );
}

/// Completes at the end of `rel`'s buffer `text` and returns the paths of the chunks the
/// completion was made from (`crossfile.context`).
fn context_paths(client: &mut Client, root: &Path, rel: &str, text: &str) -> Vec<String> {
    let line = text.lines().count().saturating_sub(1);
    let character = text.lines().last().map_or(0, |l| l.encode_utf16().count());
    let answer = client.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri(root, rel)},
               "position": {"line": line, "character": character}}),
    );
    assert!(answer.get("result").is_some(), "{answer}");
    let context = client
        .command::<Context>(json!({"uri": uri(root, rel)}))
        .expect("the completion's context");
    assert_eq!(
        (context.position.line, context.position.character),
        (line as u32, character as u32)
    );
    let chunks = &context.made.chunks;
    for chunk in chunks {
        assert!(chunk.text.is_some(), "{chunk:?}");
    }
    assert!(!context.prompt.is_empty());
    chunks.iter().map(|c| c.path.clone()).collect()
}

#[test]
fn live_edits_and_deletions_change_what_completions_retrieve() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("click");
    copy_tree(&corpus_workspace("click"), &root);
    std::fs::write(
        root.join("src/click/gadgets.py"),
        "def assemble_gadget_registry(names):\n    return {n: len(n) for n in names}\n",
    )
    .expect("write");

    let mut client = Client::start_with(cache.path(), MODEL);
    let options = json!({"index": {"cache_dir": cache.path().join("index")}});
    client.initialize(&root, options);
    client.wait_for_index();

    // Completion and inline completion in a real file, cut after `formatter.`.
    let core = std::fs::read_to_string(root.join("src/click/core.py")).expect("core.py");
    let mut lines: Vec<&str> = core.split('\n').collect();
    let cut = lines[1274].find("formatter.").expect("line 1275") + "formatter.".len();
    lines[1274] = &lines[1274][..cut];
    let buffer = lines.join("\n");
    open(&mut client, &root, "src/click/core.py", &buffer);
    let at = json!({"textDocument": {"uri": uri(&root, "src/click/core.py")},
                    "position": {"line": 1274, "character": cut}});
    let answer = client.request("textDocument/completion", at.clone());
    let item = answer
        .pointer("/result/items/0/insertText")
        .and_then(Value::as_str);
    assert!(item.is_some_and(|t| !t.trim().is_empty()), "{answer}");
    let mut inline = at;
    inline["context"] = json!({"triggerKind": 1});
    let answer = client.request("textDocument/inlineCompletion", inline);
    let item = answer
        .pointer("/result/items/0/insertText")
        .and_then(Value::as_str);
    assert!(item.is_some_and(|t| !t.trim().is_empty()), "{answer}");

    // No completion yet in this document: no context.
    let demo = "src/click/demo_app.py";
    assert_eq!(
        client.command::<Context>(json!({"uri": uri(&root, demo)})),
        None
    );

    // An unsaved module, empty at first, then given a function through an incremental change.
    let widgets = "src/click/widgets.py";
    open(&mut client, &root, widgets, "");
    let demo_text =
        "from click.widgets import frobnicate_widget_tokens\n\nresult = frobnicate_widget_tokens(";
    open(&mut client, &root, demo, demo_text);
    let before = context_paths(&mut client, &root, demo, demo_text);
    assert!(!before.iter().any(|p| p == widgets), "{before:?}");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&root, widgets), "version": 2},
               "contentChanges": [{"range": {"start": {"line": 0, "character": 0},
                                             "end": {"line": 0, "character": 0}},
                                   "text": "def frobnicate_widget_tokens(tokens, widget):\n    return [widget.frobnicate(t) for t in tokens]\n"}]}),
    );
    // Retrieved now (the retriever ranks it first: `crossfile.compare` below); the completion
    // keeps its last block's chunks that are still among the best first, so it may come later,
    // and while the new prompt is read an answer may still come from the last block's.
    let started = std::time::Instant::now();
    let after = loop {
        let after = context_paths(&mut client, &root, demo, demo_text);
        if after.iter().any(|p| p == widgets) || started.elapsed().as_secs() > 60 {
            break after;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    assert!(after.iter().any(|p| p == widgets), "{after:?}");

    // A file deleted on disk leaves the index once the client says so.
    let gadget_text = "registry = assemble_gadget_registry(";
    open(&mut client, &root, "src/click/gadget_use.py", gadget_text);
    let gadgets = "src/click/gadgets.py";
    let before = context_paths(&mut client, &root, "src/click/gadget_use.py", gadget_text);
    assert_eq!(
        before.first().map(String::as_str),
        Some(gadgets),
        "{before:?}"
    );
    std::fs::remove_file(root.join(gadgets)).expect("delete");
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&root, gadgets), "type": 3}]}),
    );
    let after = context_paths(&mut client, &root, "src/click/gadget_use.py", gadget_text);
    assert!(!after.iter().any(|p| p == gadgets), "{after:?}");

    // Three retrievers at one cursor, side by side.
    let position = json!({"line": 2, "character": 33});
    let compared = client.command::<Compare>(json!({"uri": uri(&root, demo), "position": position,
               "retrievers": ["bm25", "jaccard", "none"]}));
    let names: Vec<&str> = compared
        .results
        .iter()
        .map(|r| r.retriever.as_str())
        .collect();
    assert_eq!(names, ["bm25", "jaccard", "none"]);
    assert_eq!(compared.case_id, None);
    let results = made_columns(&compared);
    for r in &results {
        assert!(r.made.latency_ms > 0.0, "{r:?}");
        assert!(r.made.prompt_tokens.total > 0, "{r:?}");
        assert!(r.metrics.is_none(), "not a case's cursor: {r:?}");
    }
    let top = |r: &&MadeColumn| r.made.chunks.first().map(|c| c.path.clone());
    assert_eq!(top(&results[0]).as_deref(), Some(widgets), "{results:?}");
    assert!(results[2].made.chunks.is_empty(), "{results:?}");
    assert_eq!(results[2].made.prompt_tokens.crossfile, 0, "{results:?}");
    assert!(results[0].made.prompt_tokens.crossfile > 0, "{results:?}");

    // `recent`: the buffers opened and edited in this session, other files only; the edited
    // module first, as it is written now.
    let recent = client.command::<Compare>(
        json!({"uri": uri(&root, demo), "position": position, "retrievers": ["recent"]}),
    );
    let chunks = &made_columns(&recent)[0].made.chunks;
    let paths: Vec<&str> = chunks.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths.first(), Some(&widgets), "{recent:?}");
    assert_eq!(
        (chunks[0].start_line, chunks[0].end_line),
        (Some(1), Some(2)),
        "the two lines the edit wrote: {recent:?}"
    );
    let opened = [widgets, "src/click/core.py", "src/click/gadget_use.py"];
    assert!(paths.iter().all(|p| opened.contains(p)), "{recent:?}");

    // Lines the user looks at (`crossfile/recentLines`, which both editors send for the screen
    // and yanks) join the ring: a module whose top shares no word with the cursor's lines is
    // left out until lines 140 to 170 are shown, then its 64 lines around them are retrieved.
    let shown = "src/click/shown.py";
    let shown_text: String = (0..200)
        .map(|i| match i {
            150 => "    result = frobnicate_widget_tokens(tokens, widget)\n".to_string(),
            _ => format!("value_{i} = {i}\n"),
        })
        .collect();
    open(&mut client, &root, shown, &shown_text);
    let recent_paths = |client: &mut Client| -> Vec<(String, Option<u32>)> {
        let recent = client.command::<Compare>(
            json!({"uri": uri(&root, demo), "position": position, "retrievers": ["recent"]}),
        );
        made_columns(&recent)[0]
            .made
            .chunks
            .iter()
            .map(|c| (c.path.clone(), c.start_line))
            .collect()
    };
    let before = recent_paths(&mut client);
    assert!(!before.iter().any(|(p, _)| p == shown), "{before:?}");
    client.notify(
        "crossfile/recentLines",
        json!({"textDocument": {"uri": uri(&root, shown)},
               "range": {"start": {"line": 140, "character": 0},
                         "end": {"line": 170, "character": 0}}}),
    );
    let after = recent_paths(&mut client);
    assert!(
        after.contains(&(shown.to_string(), Some(124))),
        "lines 123..187 (0-based), centred on 155: {after:?}"
    );
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": "crossfile.compare", "arguments": [{"uri": uri(&root, demo),
               "position": position, "retrievers": ["bm26"]}]}),
    );
    let message = answer.pointer("/error/message").and_then(Value::as_str);
    assert!(message.is_some_and(|m| m.contains("bm26")), "{answer}");
    assert_eq!(
        answer.pointer("/error/code"),
        Some(&json!(-32602)),
        "invalid params: {answer}"
    );
    assert_eq!(client.finish(true), Some(0));
}

/// A folder whose index cannot be built (its cache directory is a file): the failure is shown,
/// and a completion there is answered with it at once, never left waiting.
#[test]
fn a_folder_that_cannot_be_indexed_fails_its_completions_with_the_reason() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.py"), "import os\nos.\n").expect("write");
    let blocker = cache.path().join("not-a-folder");
    std::fs::write(&blocker, "").expect("write");
    let mut client = Client::start_with(cache.path(), MODEL);
    client.initialize(dir.path(), json!({"index": {"cache_dir": blocker}}));
    let end = client.wait_for_index();
    let message = end.pointer("/params/value/message").and_then(Value::as_str);
    assert!(
        message.is_some_and(|m| m.contains("1 folders failed")),
        "{end}"
    );
    let answer = client.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri(dir.path(), "a.py")},
               "position": {"line": 1, "character": 3}}),
    );
    let error = answer.pointer("/error/message").and_then(Value::as_str);
    assert!(error.is_some_and(|m| m.contains("indexing")), "{answer}");
    assert_eq!(client.finish(true), Some(0));
}
