//! A `crossfile serve` started as a child for a measurement: initialized on a workspace with the
//! given options, its indexing waited for (the `$/progress` end), its memory read from `/proc`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{ClientError, LspClient, PerfError, ms};
use crate::memory::ProcessMemory;

/// How long initializing, indexing, a model load and shutdown may take.
pub const SLOW: Duration = Duration::from_secs(600);

/// A server that has answered `initialize` and finished indexing.
pub struct Served {
    pub client: LspClient,
    pub pid: u32,
    pub initialize_ms: f64,
    pub index_s: f64,
    /// The indexing `$/progress` end's message.
    pub indexed: String,
}

/// Starts `server serve`, initializes it on `root` with `options` (the `initializationOptions`)
/// and waits for its indexing to end; an error the server shows is an error here.
pub fn start(server: &Path, root: &Path, options: Value) -> Result<Served, PerfError> {
    let mut command = Command::new(server);
    command.arg("serve");
    let mut client = LspClient::spawn(command)?;
    let pid = client.pid();
    let root_uri = file_uri(root);
    let started = Instant::now();
    let answer = client
        .request(
            "initialize",
            json!({
                "processId": std::process::id(), "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": "bench"}],
                "initializationOptions": options,
                "capabilities": {"window": {"workDoneProgress": true}},
            }),
            SLOW,
        )
        .map_err(waiting("the answer to initialize"))?;
    if let Some(error) = answer.get("error") {
        return Err(PerfError::Unmeasurable(format!(
            "initialize failed: {error}"
        )));
    }
    let initialize_ms = ms(started.elapsed());
    let started = Instant::now();
    client.notify("initialized", json!({}))?;
    let end = client
        .notification(SLOW, |m| {
            m.get("method") == Some(&json!("$/progress"))
                && m.pointer("/params/value/kind") == Some(&json!("end"))
        })
        .map_err(waiting("the end of indexing"))?;
    let index_s = started.elapsed().as_secs_f64();
    let indexed = end
        .pointer("/params/value/message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if let Some(shown) = shown_errors(&client).first() {
        return Err(PerfError::Unmeasurable(format!(
            "the server reported an error: {shown}"
        )));
    }
    Ok(Served {
        client,
        pid,
        initialize_ms,
        index_s,
        indexed,
    })
}

/// A client error while waiting for `what`.
pub fn waiting(what: &'static str) -> impl FnOnce(ClientError) -> PerfError {
    move |error| PerfError::Unmeasurable(format!("waiting for {what}: {error}"))
}

/// The messages of `window/showMessage` errors received so far.
fn shown_errors(client: &LspClient) -> Vec<String> {
    client
        .notifications
        .iter()
        .filter(|m| m["method"] == json!("window/showMessage") && m["params"]["type"] == json!(1))
        .filter_map(|m| m.pointer("/params/message").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// The server's memory now.
pub fn memory(pid: u32) -> Result<ProcessMemory, PerfError> {
    ProcessMemory::of(pid).map_err(PerfError::io(format!("reading /proc/{pid}/status")))
}

/// A `file://` URI for an absolute path; characters a URI path may not hold are percent-encoded.
pub fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'.' | b'_' | b'~' => {
                uri.push(byte as char);
            }
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_encode_what_a_path_may_not_hold() {
        assert_eq!(file_uri(Path::new("/a/b_c.py")), "file:///a/b_c.py");
        assert_eq!(file_uri(Path::new("/a b/é.py")), "file:///a%20b/%C3%A9.py");
    }
}
