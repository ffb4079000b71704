//! The `crossfile serve` tests' client: [`crossfile_bench::perf::LspClient`] (framing, JSON-RPC, the
//! server's own requests answered) started on the real binary with a test's user config, and
//! wrapped so that a test reads as its steps (a broken session fails the test where it broke).

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crossfile_bench::perf::{ClientError, LspClient};
use crossfile_server::lsp::ext;
use serde_json::{Value, json};

use crate::support::MODEL_THREADS;

/// How long a test waits for an answer before it fails.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// A language client over the server's stdin and stdout; the library client's own methods
/// (`notifications`, `responses`, `pid`, `send_raw`, …) through `Deref`.
pub struct Client(LspClient, PathBuf);

impl Deref for Client {
    type Target = LspClient;

    fn deref(&self) -> &LspClient {
        &self.0
    }
}

impl DerefMut for Client {
    fn deref_mut(&mut self) -> &mut LspClient {
        &mut self.0
    }
}

impl Client {
    /// Starts the server with a user config that names the default model from the user's cache
    /// (fetched once, shared with the other model tests), so no test downloads it again.
    pub fn start(cache: &Path) -> Client {
        Client::start_with(cache, "")
    }

    /// Like [`Client::start_with`], initialized with no workspace folder (replay opens its own).
    pub fn start_without_folders(cache: &Path, extra: &str) -> Client {
        let mut client = Client::start_with(cache, extra);
        client.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "workspaceFolders": [], "capabilities": {}}),
        );
        client.notify("initialized", json!({}));
        client
    }

    /// Like [`Client::start`], with `extra` appended to the user config.
    pub fn start_with(cache: &Path, extra: &str) -> Client {
        Client::start_with_user_config(cache, &user_config(extra))
    }

    /// Starts the server with `config` as the whole user config (no model named for it).
    pub fn start_with_user_config(cache: &Path, config: &str) -> Client {
        std::fs::write(cache.join("user.toml"), config).expect("write the user config");
        let log = cache.join("server.log");
        let stderr = std::fs::File::create(&log).expect("create the server log");
        let mut command = Command::new(env!("CARGO_BIN_EXE_crossfile"));
        command
            .args(["serve", "--log-level", "debug"])
            .env("CROSSFILE_CACHE_DIR", cache)
            .env("CROSSFILE_CONFIG", cache.join("user.toml"))
            .env_remove("CROSSFILE_LOG")
            .stderr(Stdio::from(stderr));
        Client(
            LspClient::spawn(command).expect("start crossfile serve"),
            log,
        )
    }

    /// Writes `bytes` as they are: a frame of the test's own making, well formed or not.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.0.send_raw(bytes).expect("write to the server");
    }

    /// A notification; `Value::Null` params are left out, as `shutdown` and `exit` want.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.0.notify(method, params).expect("write to the server");
    }

    /// Sends a request and waits for its response, answering the server's own requests.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params);
        self.response(id).unwrap_or_else(|| {
            panic!(
                "no answer to {method}; the server's log ends:\n{}",
                self.log_tail()
            )
        })
    }

    /// The last lines of the server's log (its stderr), to show why an answer did not come.
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.1).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Sends a request without waiting; returns its id.
    pub fn start_request(&mut self, method: &str, params: Value) -> i64 {
        self.0
            .start_request(method, params)
            .expect("write to the server")
            .0
    }

    /// Waits for the response to request `id`.
    pub fn response(&mut self, id: i64) -> Option<Value> {
        self.response_within(id, ANSWER_TIMEOUT)
    }

    /// Waits up to `timeout` for the response to request `id`.
    pub fn response_within(&mut self, id: i64, timeout: Duration) -> Option<Value> {
        self.wait_until(timeout, |m| {
            m.get("id") == Some(&json!(id)) && m.get("method").is_none()
        })
    }

    /// The first kept response that satisfies `done`, else reads messages until one does
    /// (returned) or `timeout` passes (`None`).
    pub fn wait_until(
        &mut self,
        timeout: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        match self.0.wait_until(timeout, done) {
            Ok((message, _)) => Some(message),
            Err(ClientError::Timeout { .. }) => None,
            Err(error) => panic!("{error}"),
        }
    }

    pub fn initialize(&mut self, root: &Path, options: Value) -> Value {
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
    pub fn wait_for_index(&mut self) -> Value {
        let is_end = |m: &Value| {
            m.get("method") == Some(&json!("$/progress"))
                && m.pointer("/params/value/kind") == Some(&json!("end"))
        };
        if let Some(end) = self.notifications.iter().find(|m| is_end(m)) {
            return end.clone();
        }
        self.wait_until(ANSWER_TIMEOUT, is_end).unwrap_or_else(|| {
            panic!(
                "no $/progress end; the server's log ends:\n{}",
                self.log_tail()
            )
        })
    }

    /// The server's resident memory now (`VmRSS`, kB).
    pub fn rss_kb(&self) -> u64 {
        crossfile_engine::memory::ProcessMemory::of(self.pid())
            .expect("the server's /proc status")
            .rss_kb
    }

    /// Runs `workspace/executeCommand` with one argument; its result (panics on an error).
    pub fn execute(&mut self, command: &str, argument: Value) -> Value {
        let answer = self.request(
            "workspace/executeCommand",
            json!({"command": command, "arguments": [argument]}),
        );
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{command} failed: {answer}"))
    }

    /// Command `C` run with `argument`, its answer read as `C::Result` (a field missing from the
    /// answer fails here, by name).
    pub fn command<C: ext::Command>(&mut self, argument: Value) -> C::Result {
        let answer = self.execute(C::NAME, argument);
        serde_json::from_value(answer.clone())
            .unwrap_or_else(|e| panic!("{}'s answer: {e}\n{answer}", C::NAME))
    }

    /// The messages the server has shown so far (`window/showMessage`), in order.
    pub fn shown_messages(&self) -> Vec<String> {
        self.notifications
            .iter()
            .filter(|m| m["method"] == json!("window/showMessage"))
            .filter_map(|m| m.pointer("/params/message").and_then(Value::as_str))
            .map(str::to_string)
            .collect()
    }

    /// The first message the server shows, waiting up to `timeout` for it.
    pub fn first_shown_message(&mut self, timeout: Duration) -> Option<String> {
        if let Some(first) = self.shown_messages().into_iter().next() {
            return Some(first);
        }
        self.wait_until(timeout, |m| m["method"] == json!("window/showMessage"))
            .and_then(|m| {
                m.pointer("/params/message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
    }

    /// `crossfile.replayCase` with `argument`, then the case's file opened as an editor opens it:
    /// the command's answer.
    pub fn open_case(&mut self, argument: Value) -> Value {
        let opened = self.execute("crossfile.replayCase", argument);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": opened["uri"], "languageId": "python", "version": 1,
                   "text": opened["text"]}}),
        );
        opened
    }

    /// Kills the server (SIGKILL) and waits for it.
    pub fn kill(mut self) {
        self.0.kill();
    }

    /// Closes the server's input, as an editor that dies does, and waits (up to 120 s) for the
    /// server to exit: its exit code and how long it took.
    pub fn close_input(mut self) -> (Option<i32>, Duration) {
        self.0.close_input();
        let started = Instant::now();
        let code = self
            .0
            .wait_exit(Duration::from_secs(120))
            .unwrap_or_else(|e| panic!("after its input closed: {e}"));
        (code, started.elapsed())
    }

    /// `shutdown`, `exit`, and the exit code.
    pub fn finish(mut self, shutdown: bool) -> Option<i32> {
        if shutdown {
            let answer = self.request("shutdown", Value::Null);
            assert_eq!(answer.get("result"), Some(&Value::Null), "{answer}");
        }
        self.notify("exit", Value::Null);
        self.0
            .wait_exit(Duration::from_secs(20))
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

/// A user config naming the small model from the user's cache, [`MODEL_THREADS`], no decoding
/// time budget, and `extra` (in `[model]`): the default budget would cut a suggestion wherever a
/// loaded machine happens to be, and these tests compare suggestions (the budget's own test sets
/// it).
pub fn user_config(extra: &str) -> String {
    let model = crate::backends::tokenizer::small_model();
    let extra = if extra.contains("[lsp]\n") {
        extra.replacen("[lsp]\n", "[lsp]\nmax_generate_ms = 0\n", 1)
    } else {
        format!("{extra}\n[lsp]\nmax_generate_ms = 0\n")
    };
    format!(
        "[model]\npath = {:?}\nthreads = {MODEL_THREADS}\n{extra}",
        model.display().to_string()
    )
}

/// The `file://` URI of `rel` under `root`.
pub fn uri(root: &Path, rel: &str) -> String {
    format!("file://{}", root.join(rel).display())
}

/// A two-file Python workspace: a module defining a class and a function, and a script.
pub const FIXTURE: &str = r#"
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

/// Each column of a compare answer that made a completion; a column in error fails here, naming
/// its retriever.
pub fn made_columns(compared: &ext::CompareResult) -> Vec<&ext::MadeColumn> {
    compared
        .results
        .iter()
        .map(|c| match &c.answer {
            ext::ColumnAnswer::Made(made) => made.as_ref(),
            other => panic!("{}: {other:?}", c.retriever),
        })
        .collect()
}
