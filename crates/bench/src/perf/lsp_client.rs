//! A small language client over a child process's stdio, for `bench lsp` and the server's tests:
//! `Content-Length` framing, JSON-RPC requests and notifications as plain JSON, and a `null`
//! answer to every request the server makes of the client (`window/workDoneProgress/create`,
//! `client/registerCapability`). It knows nothing of the server's internals: it speaks only the
//! protocol, as an editor does.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Why the client could not go on.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("starting the language server: {0}")]
    Spawn(std::io::Error),
    #[error("writing to the server's stdin: {0}")]
    Write(std::io::Error),
    #[error("the server's input is already closed")]
    InputClosed,
    #[error("reading the server's output: {0}")]
    Read(String),
    #[error("the server closed its output")]
    Closed,
    #[error("no answer within {seconds:.1} s")]
    Timeout { seconds: f64 },
    #[error("waiting for the server to exit: {0}")]
    Wait(std::io::Error),
    #[error("the server did not exit within {seconds} s")]
    NotExited { seconds: u64 },
    #[error("{method} failed: {error}")]
    Refused { method: String, error: Value },
}

/// The client end of one session with a server started as a child process.
pub struct LspClient {
    child: Child,
    stdin: Option<ChildStdin>,
    inbox: Receiver<Result<Incoming, String>>,
    next_id: i64,
    /// Notifications from the server, in arrival order, not yet taken by a wait.
    pub notifications: Vec<Value>,
    /// Responses that arrived while the client waited for something else, in arrival order.
    pub responses: Vec<Value>,
}

/// A message from the server and when it was read off the pipe (so a round trip is measured to
/// its arrival, not to when the client got round to it).
struct Incoming {
    message: Value,
    at: Instant,
}

impl LspClient {
    /// Starts `command` with its stdin and stdout piped (stderr is left as the command set it)
    /// and a thread that reads its messages.
    pub fn spawn(mut command: Command) -> Result<LspClient, ClientError> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(ClientError::Spawn)?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(ClientError::Read("the server's stdio is not piped".into()));
        };
        let (send, inbox) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let read = read_message(&mut reader);
                let end = !matches!(read, Ok(Some(_)));
                let item = match read {
                    Ok(Some(message)) => Ok(Incoming {
                        message,
                        at: Instant::now(),
                    }),
                    Ok(None) => return,
                    Err(e) => Err(e),
                };
                if send.send(item).is_err() || end {
                    return;
                }
            }
        });
        Ok(LspClient {
            child,
            stdin: Some(stdin),
            inbox,
            next_id: 1,
            notifications: Vec::new(),
            responses: Vec::new(),
        })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one message, framed.
    pub fn send(&mut self, message: &Value) -> Result<(), ClientError> {
        let body = message.to_string();
        self.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes())
    }

    /// Writes `bytes` as they are: a frame of the caller's own making, well formed or not.
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        let stdin = self.stdin.as_mut().ok_or(ClientError::InputClosed)?;
        stdin
            .write_all(bytes)
            .and_then(|()| stdin.flush())
            .map_err(ClientError::Write)
    }

    /// Sends a notification; `Value::Null` params are left out, as `shutdown` and `exit` want.
    pub fn notify(&mut self, method: &str, params: Value) -> Result<(), ClientError> {
        self.send(&message(None, method, params))
    }

    /// Sends a request without waiting for its answer; returns its id and when it was written.
    pub fn start_request(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<(i64, Instant), ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let body = message(Some(id), method, params).to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        let sent = Instant::now();
        self.send_raw(frame.as_bytes())?;
        Ok((id, sent))
    }

    /// Sends a request and waits up to `timeout` for its answer (the whole response object).
    pub fn request(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, ClientError> {
        let (id, _) = self.start_request(method, params)?;
        Ok(self.response(id, timeout)?.0)
    }

    /// Waits up to `timeout` for the response to request `id`; returns it and when it arrived.
    pub fn response(
        &mut self,
        id: i64,
        timeout: Duration,
    ) -> Result<(Value, Instant), ClientError> {
        let id = json!(id);
        self.wait_until(timeout, |m| {
            m.get("id") == Some(&id) && m.get("method").is_none()
        })
    }

    /// Waits up to `timeout` for a notification that satisfies `wanted`, looking first at those
    /// already received; it is taken out of [`LspClient::notifications`].
    pub fn notification(
        &mut self,
        timeout: Duration,
        wanted: impl Fn(&Value) -> bool,
    ) -> Result<Value, ClientError> {
        if let Some(i) = self.notifications.iter().position(&wanted) {
            return Ok(self.notifications.remove(i));
        }
        let (message, _) = self.wait_until(timeout, |m| m.get("id").is_none() && wanted(m))?;
        Ok(message)
    }

    /// The first kept response that satisfies `done`, else reads messages until one does or
    /// `timeout` passes, answering the server's requests with `null` and keeping its
    /// notifications and the other responses.
    pub fn wait_until(
        &mut self,
        timeout: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Result<(Value, Instant), ClientError> {
        if let Some(i) = self.responses.iter().position(&done) {
            return Ok((self.responses.remove(i), Instant::now()));
        }
        let end = Instant::now() + timeout;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let incoming = match self.inbox.recv_timeout(left) {
                Ok(Ok(incoming)) => incoming,
                Ok(Err(e)) => return Err(ClientError::Read(e)),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(ClientError::Timeout {
                        seconds: timeout.as_secs_f64(),
                    });
                }
                Err(RecvTimeoutError::Disconnected) => return Err(ClientError::Closed),
            };
            let message = incoming.message;
            if done(&message) {
                return Ok((message, incoming.at));
            }
            match (message.get("id"), message.get("method")) {
                (Some(id), Some(_)) => {
                    let answer = json!({"jsonrpc": "2.0", "id": id.clone(), "result": null});
                    self.send(&answer)?;
                }
                (None, Some(_)) => self.notifications.push(message),
                _ => self.responses.push(message),
            }
        }
    }

    /// Whether the server process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Closes the server's input, as an editor that dies does.
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// Waits up to `timeout` for the server to end: its exit code (`None` if a signal ended it).
    pub fn wait_exit(&mut self, timeout: Duration) -> Result<Option<i32>, ClientError> {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if let Some(status) = self.child.try_wait().map_err(ClientError::Wait)? {
                return Ok(status.code());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(ClientError::NotExited {
            seconds: timeout.as_secs(),
        })
    }

    /// Kills the server (SIGKILL) and waits for it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// `shutdown`, then `exit`; waits up to `timeout` for the server to end and returns its exit
    /// code.
    pub fn finish(mut self, timeout: Duration) -> Result<Option<i32>, ClientError> {
        let answer = self.request("shutdown", Value::Null, timeout)?;
        if let Some(error) = answer.get("error") {
            return Err(ClientError::Refused {
                method: "shutdown".into(),
                error: error.clone(),
            });
        }
        self.notify("exit", Value::Null)?;
        self.wait_exit(timeout)
    }
}

impl Drop for LspClient {
    /// A server still running when the client goes (after an error) is stopped.
    fn drop(&mut self) {
        if self.is_running() {
            self.kill();
        }
    }
}

/// A JSON-RPC request (with an id) or notification; `Value::Null` params are left out.
fn message(id: Option<i64>, method: &str, params: Value) -> Value {
    let mut message = json!({"jsonrpc": "2.0", "method": method});
    if let Some(id) = id {
        message["id"] = json!(id);
    }
    if !params.is_null() {
        message["params"] = params;
    }
    message
}

/// Reads one framed message; `Ok(None)` at the end of the output.
fn read_message(reader: &mut BufReader<ChildStdout>) -> Result<Option<Value>, String> {
    let mut length = None;
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) => return Err(e.to_string()),
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let length = length.ok_or("a message without a Content-Length header")?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).map_err(|e| e.to_string())?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| format!("a message that is not JSON: {e}"))
}
