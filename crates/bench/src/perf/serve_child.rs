//! A `crossfile serve` started as a child for a measurement: initialized on a workspace with the
//! given options, its indexing waited for (the `$/progress` end), its memory read from `/proc`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{ClientError, LspClient, PerfError, ms};
use crossfile_engine::config::Settings;
use crossfile_engine::index::Progress;
use crossfile_engine::memory::ProcessMemory;

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

/// Asks a started server (`crossfile.status`) what it runs and fails unless it is `backend` with
/// the GGUF `model` loaded: a measurement must measure what it was told to, not a default.
pub fn check_runs(client: &mut LspClient, model: &Path, backend: &str) -> Result<(), PerfError> {
    let answer = client
        .request(
            "workspace/executeCommand",
            json!({"command": "crossfile.status", "arguments": []}),
            SLOW,
        )
        .map_err(waiting("the server's status"))?;
    let status = answer.get("result").cloned().unwrap_or(Value::Null);
    let kind = status.pointer("/backend/kind").and_then(Value::as_str);
    let file = status.pointer("/model/file").and_then(Value::as_str);
    let same_file = |file: &str| {
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        canonical(Path::new(file)) == canonical(model)
    };
    if kind != Some(backend) || !file.is_some_and(same_file) {
        return Err(PerfError::Unmeasurable(format!(
            "the measured server runs backend {} with {}, not {backend} with {}",
            kind.unwrap_or("?"),
            file.unwrap_or("no model file"),
            model.display()
        )));
    }
    if backend == "embedded" && status.pointer("/model/loaded") != Some(&json!(true)) {
        return Err(PerfError::Unmeasurable(format!(
            "the measured server has not loaded {}",
            model.display()
        )));
    }
    Ok(())
}

/// The GGUF a measured server loads: `model`, else the settings' or the default model (fetched
/// with `fetching` if it is missing). Every backend counts tokens with a GGUF's vocabulary, and a
/// server told where it is never fetches it again into a private cache dir.
pub fn model_file(
    model: Option<&Path>,
    settings: &Settings,
    fetching: &Progress,
) -> Result<std::path::PathBuf, PerfError> {
    Ok(match model {
        Some(path) => path.to_path_buf(),
        None => {
            crossfile_engine::model::resolve(&settings.model, &settings.index.cache_dir, fetching)?
        }
    })
}

/// Where a measured server keeps its index: the given directory, else a fresh temporary one
/// (a cold index), removed when this is dropped.
pub struct CacheDir {
    pub path: std::path::PathBuf,
    _temporary: Option<tempfile::TempDir>,
}

impl CacheDir {
    pub fn new(given: Option<&Path>) -> Result<CacheDir, PerfError> {
        if let Some(path) = given {
            return Ok(CacheDir {
                path: path.to_path_buf(),
                _temporary: None,
            });
        }
        let temporary = tempfile::tempdir().map_err(PerfError::io("a temporary cache dir"))?;
        Ok(CacheDir {
            path: temporary.path().to_path_buf(),
            _temporary: Some(temporary),
        })
    }
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
