//! The upstream llama.cpp server as a measured peer: started on a free 127.0.0.1 port with a
//! GGUF, waited for until healthy, asked for completions with its own timings, stopped on drop.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// Why the server could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("{}: cannot start: {error}", .bin)]
    Spawn { bin: String, error: std::io::Error },
    #[error("{url}: not healthy after {seconds} s")]
    NotHealthy { url: String, seconds: u64 },
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
}

/// A running `llama-server`, killed when dropped.
pub struct LlamaServer {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    client: reqwest::Client,
}

impl LlamaServer {
    /// Starts `bin -m model -c n_ctx -t threads` (plus `extra` arguments, e.g. `--embedding`)
    /// on a free loopback port and waits up to two minutes for `/health`.
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
        let child = Command::new(bin)
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args([
                "-c",
                &n_ctx.to_string(),
                "-t",
                &threads.to_string(),
                "--log-disable",
            ])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(spawn_err)?;
        let server = LlamaServer {
            child,
            url: format!("http://127.0.0.1:{port}"),
            client: reqwest::Client::new(),
        };
        let started = Instant::now();
        let patience = Duration::from_secs(120);
        while started.elapsed() < patience {
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
            seconds: patience.as_secs(),
        })
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
