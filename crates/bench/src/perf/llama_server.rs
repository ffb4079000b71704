//! The upstream llama.cpp server as a measured peer and a test server: started on a free
//! 127.0.0.1 port with a GGUF, its output kept in a log file, waited for until healthy (a server
//! that exits or never gets healthy is reported with its log's tail), asked for completions with
//! its own timings, stopped on drop. The one place that knows llama-server's command line.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// Why the server could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("{}: cannot start: {error}", .bin)]
    Spawn { bin: String, error: std::io::Error },
    #[error("{bin} exited ({status}) before it was healthy:\n{log}")]
    Exited {
        bin: String,
        status: std::process::ExitStatus,
        log: String,
    },
    #[error("{url}: not healthy after {seconds} s:\n{log}")]
    NotHealthy {
        url: String,
        seconds: u64,
        log: String,
    },
    #[error("{url}: {message}")]
    Request { url: String, message: String },
}

/// Timings llama-server reports for one completion.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ServerTimings {
    pub prompt_n: f64,
    pub prompt_ms: f64,
    pub predicted_n: f64,
    pub predicted_ms: f64,
    /// With a draft model: tokens it proposed, and those the model accepted.
    pub draft_n: Option<f64>,
    pub draft_n_accepted: Option<f64>,
}

/// How long the server may take to load the model and answer its health check.
const READY_WITHIN: Duration = Duration::from_secs(180);

/// A running `llama-server`, killed when dropped.
pub struct LlamaServer {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    client: reqwest::Client,
    /// The server's stdout and stderr.
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl LlamaServer {
    /// Starts `bin -m model -c n_ctx -t threads` (plus `extra` arguments, e.g. `--embedding`)
    /// on a free loopback port and waits up to three minutes for `/health`.
    pub async fn start(
        bin: &Path,
        model: &Path,
        n_ctx: u32,
        threads: u32,
        extra: &[&str],
    ) -> Result<LlamaServer, ServerError> {
        let spawn_err = |error| ServerError::Spawn {
            bin: bin.display().to_string(),
            error,
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(spawn_err)?
            .port();
        let url = format!("http://127.0.0.1:{port}");
        let client = crossfile_engine::http::client_builder()
            .build()
            .map_err(|e| ServerError::Request {
                url: url.clone(),
                message: format!("HTTP client: {e}"),
            })?;
        let dir = tempfile::tempdir().map_err(spawn_err)?;
        let log = dir.path().join("llama-server.log");
        let out = std::fs::File::create(&log).map_err(spawn_err)?;
        let err = out.try_clone().map_err(spawn_err)?;
        let child = Command::new(bin)
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["-c", &n_ctx.to_string(), "-t", &threads.to_string()])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(spawn_err)?;
        let mut server = LlamaServer {
            child,
            url,
            client,
            log,
            _dir: dir,
        };
        let started = Instant::now();
        while started.elapsed() < READY_WITHIN {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(ServerError::Exited {
                    bin: bin.display().to_string(),
                    status,
                    log: server.log_tail(),
                });
            }
            let health = server
                .client
                .get(format!("{}/health", server.url))
                .send()
                .await;
            if health.is_ok_and(|r| r.status().is_success()) {
                return Ok(server);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(ServerError::NotHealthy {
            url: server.url.clone(),
            seconds: READY_WITHIN.as_secs(),
            log: server.log_tail(),
        })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last 40 lines of the server's output.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// A greedy `/completion` with the prompt cache off, and the server's own timings.
    pub async fn complete_with_timings(
        &self,
        prompt: &str,
        n_predict: u32,
    ) -> Result<(String, ServerTimings), ServerError> {
        let url = format!("{}/completion", self.url);
        let err = |message: String| ServerError::Request {
            url: url.clone(),
            message,
        };
        let body = json!({
            "prompt": prompt, "n_predict": n_predict, "temperature": 0.0, "top_k": 1,
            "repeat_penalty": 1.0, "cache_prompt": false,
        });
        let response = self
            .client
            .post(&url)
            .json(&body)
            .send()
            .await
            .map_err(|e| err(e.to_string()))?;
        let value: serde_json::Value = response.json().await.map_err(|e| err(e.to_string()))?;
        let t = &value["timings"];
        let number = |key: &str| {
            t[key]
                .as_f64()
                .ok_or_else(|| err(format!("no timings.{key} in the answer")))
        };
        let timings = ServerTimings {
            prompt_n: number("prompt_n")?,
            prompt_ms: number("prompt_ms")?,
            predicted_n: number("predicted_n")?,
            predicted_ms: number("predicted_ms")?,
            draft_n: t["draft_n"].as_f64(),
            draft_n_accepted: t["draft_n_accepted"].as_f64(),
        };
        let text = value["content"]
            .as_str()
            .ok_or_else(|| err("no content in the answer".into()))?;
        Ok((text.to_string(), timings))
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
