//! A small language client over a child process's stdio, for `bench lsp`: `Content-Length`
//! framing, JSON-RPC requests and notifications as plain JSON, and a `null` answer to every
//! request the server makes of the client (`window/workDoneProgress/create`,
//! `client/registerCapability`). It knows nothing of the server's internals.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

/// The client end of one session with a server started as a child process.
pub struct LspClient {
    child: Child,
    stdin: ChildStdin,
    inbox: Receiver<Result<Incoming, String>>,
    next_id: i64,
    /// Notifications from the server, in arrival order, not yet taken by a wait.
    pub notifications: Vec<Value>,
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
    pub fn spawn(mut command: Command) -> anyhow::Result<LspClient> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("starting the language server")?;
        let stdin = child.stdin.take().context("the server's stdin")?;
        let stdout = child.stdout.take().context("the server's stdout")?;
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
            stdin,
            inbox,
            next_id: 1,
            notifications: Vec::new(),
        })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends a notification; `Value::Null` params are left out.
    pub fn notify(&mut self, method: &str, params: Value) -> anyhow::Result<()> {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        self.send(&message)
    }

    /// Sends a request without waiting for its answer; returns its id and when it was written.
    pub fn start_request(&mut self, method: &str, params: Value) -> anyhow::Result<(i64, Instant)> {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        let body = message.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        let sent = Instant::now();
        self.write(frame.as_bytes())?;
        Ok((id, sent))
    }

    /// Sends a request and waits up to `timeout` for its answer (the whole response object).
    pub fn request(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> anyhow::Result<Value> {
        let (id, _) = self.start_request(method, params)?;
        let (response, _) = self
            .response(id, timeout)
            .with_context(|| format!("waiting for the answer to {method}"))?;
        Ok(response)
    }

    /// Waits up to `timeout` for the response to request `id`; returns it and when it arrived.
    pub fn response(&mut self, id: i64, timeout: Duration) -> anyhow::Result<(Value, Instant)> {
        let id = json!(id);
        self.wait(timeout, |m| {
            m.get("id") == Some(&id) && m.get("method").is_none()
        })
    }

    /// Waits up to `timeout` for a notification that satisfies `wanted`, looking first at those
    /// already received; it is taken out of [`LspClient::notifications`].
    pub fn notification(
        &mut self,
        timeout: Duration,
        wanted: impl Fn(&Value) -> bool,
    ) -> anyhow::Result<Value> {
        if let Some(i) = self.notifications.iter().position(&wanted) {
            return Ok(self.notifications.remove(i));
        }
        let (message, _) = self.wait(timeout, |m| m.get("id").is_none() && wanted(m))?;
        Ok(message)
    }

    /// `shutdown`, then `exit`; waits up to `timeout` for the server to end and returns its exit
    /// code (`None` if a signal ended it).
    pub fn finish(mut self, timeout: Duration) -> anyhow::Result<Option<i32>> {
        let answer = self.request("shutdown", Value::Null, timeout)?;
        if let Some(error) = answer.get("error") {
            bail!("shutdown failed: {error}");
        }
        self.notify("exit", Value::Null)?;
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status.code());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        bail!("the server did not exit within {} s", timeout.as_secs())
    }

    /// Reads messages until one satisfies `done`, answering the server's requests with `null`
    /// and keeping its notifications.
    fn wait(
        &mut self,
        timeout: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> anyhow::Result<(Value, Instant)> {
        let end = Instant::now() + timeout;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let incoming = match self.inbox.recv_timeout(left) {
                Ok(Ok(incoming)) => incoming,
                Ok(Err(e)) => bail!("reading the server's output: {e}"),
                Err(RecvTimeoutError::Timeout) => {
                    bail!("no answer within {:.1} s", timeout.as_secs_f64())
                }
                Err(RecvTimeoutError::Disconnected) => bail!("the server closed its output"),
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
                _ => tracing::debug!("an unexpected message: {message}"),
            }
        }
    }

    fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        let body = message.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.write(frame.as_bytes())
    }

    fn write(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        self.stdin
            .write_all(bytes)
            .and_then(|()| self.stdin.flush())
            .context("writing to the server's stdin")
    }
}

impl Drop for LspClient {
    /// A server still running when the client goes (after an error) is stopped.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
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
