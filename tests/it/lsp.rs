//! `crossfile serve` driven over stdio by a small real client: initialize, index progress, an
//! unsaved buffer, completion, inline completion, settings (good and bad), shutdown and exit.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::Workspace;

/// A language client over the server's stdin and stdout.
pub(crate) struct Client {
    child: Child,
    stdin: ChildStdin,
    inbox: Receiver<Value>,
    /// Notifications from the server, in order.
    pub(crate) notifications: Vec<Value>,
    next_id: i64,
}

impl Client {
    /// Starts the server with a user config that names the default model from the user's cache
    /// (fetched once, shared with the other model tests), so no test downloads it again.
    pub(crate) fn start(cache: &Path) -> Client {
        Client::start_with(cache, "")
    }

    /// Like [`Client::start`], with `extra` appended to the user config.
    pub(crate) fn start_with(cache: &Path, extra: &str) -> Client {
        let config = user_config(extra);
        std::fs::write(cache.join("user.toml"), config).expect("write the user config");
        let mut child = Command::new(env!("CARGO_BIN_EXE_crossfile"))
            .args(["serve", "--log-level", "info"])
            .env("CROSSFILE_CACHE_DIR", cache)
            .env("CROSSFILE_CONFIG", cache.join("user.toml"))
            .env_remove("CROSSFILE_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start crossfile serve");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (send, inbox) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut header = String::new();
                    match reader.read_line(&mut header) {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                    let header = header.trim_end();
                    if header.is_empty() {
                        break;
                    }
                    if let Some(n) = header.strip_prefix("Content-Length: ") {
                        length = n.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.expect("a Content-Length header")];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let message = serde_json::from_slice(&body).expect("a JSON message");
                if send.send(message).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            inbox,
            notifications: Vec::new(),
            next_id: 1,
        }
    }

    pub(crate) fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// A notification; `Value::Null` params are left out, as `shutdown` and `exit` want.
    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        self.send(&message);
    }

    /// Sends a request and waits for its response, answering the server's own requests.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params);
        self.response(id)
            .unwrap_or_else(|| panic!("no answer to {method}"))
    }

    /// Sends a request without waiting; returns its id.
    pub(crate) fn start_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        self.send(&message);
        id
    }

    /// Waits for the response to request `id`.
    pub(crate) fn response(&mut self, id: i64) -> Option<Value> {
        self.wait_until(Duration::from_secs(120), |m| {
            m.get("id") == Some(&json!(id)) && m.get("method").is_none()
        })
    }

    /// Reads messages until one satisfies `done` (returned) or `timeout` passes.
    pub(crate) fn wait_until(
        &mut self,
        timeout: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        let end = Instant::now() + timeout;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let message = match self.inbox.recv_timeout(left) {
                Ok(message) => message,
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed stdout"),
            };
            if done(&message) {
                return Some(message);
            }
            match (message.get("id"), message.get("method")) {
                (Some(id), Some(_)) => {
                    let id = id.clone();
                    self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
                }
                (None, Some(_)) => self.notifications.push(message),
                _ => {}
            }
        }
    }

    pub(crate) fn initialize(&mut self, root: &Path, options: Value) -> Value {
        let uri = format!("file://{}", root.display());
        let answer = self.request(
            "initialize",
            json!({
                "processId": null, "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": "ws"}],
                "initializationOptions": options,
                "capabilities": {"window": {"workDoneProgress": true}},
            }),
        );
        self.notify("initialized", json!({}));
        answer
    }

    /// Waits for the indexing `$/progress` end.
    pub(crate) fn wait_for_index(&mut self) -> Value {
        let is_end = |m: &Value| {
            m.get("method") == Some(&json!("$/progress"))
                && m.pointer("/params/value/kind") == Some(&json!("end"))
        };
        if let Some(end) = self.notifications.iter().find(|m| is_end(m)) {
            return end.clone();
        }
        self.wait_until(Duration::from_secs(120), is_end)
            .expect("a $/progress end")
    }

    /// Kills the server (SIGKILL) and waits for it.
    pub(crate) fn kill(mut self) {
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
    }

    /// `shutdown`, `exit`, and the exit code.
    pub(crate) fn finish(mut self, shutdown: bool) -> Option<i32> {
        if shutdown {
            let answer = self.request("shutdown", Value::Null);
            assert_eq!(answer.get("result"), Some(&Value::Null), "{answer}");
        }
        self.notify("exit", Value::Null);
        let end = Instant::now() + Duration::from_secs(20);
        while Instant::now() < end {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        panic!("the server did not exit");
    }
}

/// A user config naming the default model from the user's cache, two threads, and `extra`.
pub(crate) fn user_config(extra: &str) -> String {
    let model = crate::tokenizer::default_model();
    format!(
        "[model]\npath = {:?}\nthreads = 2\n{extra}",
        model.display().to_string()
    )
}

pub(crate) fn uri(root: &Path, rel: &str) -> String {
    format!("file://{}", root.join(rel).display())
}

/// Client options: the index in the test's private cache.
fn options(ws: &Workspace) -> Value {
    json!({"index": {"cache_dir": ws.cache.path().join("index-from-options")}})
}

const FIXTURE: &str = r#"
//- geometry/shapes.py
class Rectangle:
    def __init__(self, width, height):
        self.width = width
        self.height = height


def rectangle_area(rect):
    return rect.width * rect.height
//- app.py
print("saved text")
"#;

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
    assert!(detail.starts_with("crossfile · bm25 · "), "{detail}");
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
    let shown: Vec<&Value> = client
        .notifications
        .iter()
        .filter(|m| m["method"] == json!("window/showMessage"))
        .collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
    let message = shown[0].pointer("/params/message").and_then(Value::as_str);
    assert!(
        message.is_some_and(|m| m.contains("retrieve.retriever") && m.contains("bm26")),
        "{message:?}"
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
    let shown: Vec<&str> = client
        .notifications
        .iter()
        .filter(|m| m["method"] == json!("window/showMessage"))
        .filter_map(|m| m.pointer("/params/message").and_then(Value::as_str))
        .collect();
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
