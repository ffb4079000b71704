//! A small real language client for the `crossfile serve` tests: it starts the binary, frames
//! JSON-RPC over its stdin and stdout, answers the server's own requests, and reads the server's
//! memory from `/proc`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a test waits for an answer before it fails.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// A language client over the server's stdin and stdout.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    inbox: Receiver<Value>,
    /// Notifications from the server, in order.
    pub notifications: Vec<Value>,
    /// Responses that arrived while the client waited for something else, in order.
    pub responses: Vec<Value>,
    next_id: i64,
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
            stdin: Some(stdin),
            inbox,
            notifications: Vec::new(),
            responses: Vec::new(),
            next_id: 1,
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send(&mut self, message: &Value) {
        let body = message.to_string();
        self.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    /// Writes `bytes` as they are: a frame of the test's own making, well formed or not.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("the server's input is open");
        stdin.write_all(bytes).expect("write");
        stdin.flush().expect("flush");
    }

    /// A notification; `Value::Null` params are left out, as `shutdown` and `exit` want.
    pub fn notify(&mut self, method: &str, params: Value) {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        self.send(&message);
    }

    /// Sends a request and waits for its response, answering the server's own requests.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params);
        self.response(id)
            .unwrap_or_else(|| panic!("no answer to {method}"))
    }

    /// Sends a request without waiting; returns its id.
    pub fn start_request(&mut self, method: &str, params: Value) -> i64 {
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
    /// (returned) or `timeout` passes.
    pub fn wait_until(
        &mut self,
        timeout: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        if let Some(i) = self.responses.iter().position(&done) {
            return Some(self.responses.remove(i));
        }
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
                _ => self.responses.push(message),
            }
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
        self.wait_until(ANSWER_TIMEOUT, is_end)
            .expect("a $/progress end")
    }

    /// Whether the server process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The server's resident memory now (`VmRSS`, kB).
    pub fn rss_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("the server's /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse().ok())
            .expect("VmRSS in /proc status")
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

    /// Kills the server (SIGKILL) and waits for it.
    pub fn kill(mut self) {
        self.child.kill().expect("kill");
        let _ = self.child.wait();
    }

    /// Closes the server's input, as an editor that dies does, and waits (up to 120 s) for the
    /// server to exit: its exit code and how long it took.
    pub fn close_input(mut self) -> (Option<i32>, Duration) {
        self.stdin = None;
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(120) {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return (status.code(), started.elapsed());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        panic!("the server did not exit after its input closed");
    }

    /// `shutdown`, `exit`, and the exit code.
    pub fn finish(mut self, shutdown: bool) -> Option<i32> {
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

impl Drop for Client {
    /// A server left running by a failed test is stopped.
    fn drop(&mut self) {
        if self.is_running() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A user config naming the default model from the user's cache, two threads, and `extra`.
pub fn user_config(extra: &str) -> String {
    let model = crate::tokenizer::default_model();
    format!(
        "[model]\npath = {:?}\nthreads = 2\n{extra}",
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
