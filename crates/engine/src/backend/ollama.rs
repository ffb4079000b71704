//! `ollama`: Ollama's `/api/generate`, non-streaming, with the prompt sent raw (Ollama applies no
//! chat template of its own), greedy (`temperature: 0`; a sampled request sends `temperature`, `top_p`
//! and `seed`), `num_predict` and stop strings in
//! `options`.
//!
//! No Ollama server can be installed on the machines crossfile is tested on, so this backend is
//! tested against a local fixture that replays Ollama's documented request and response shapes
//! (`tests/it/http_backends.rs`).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::BackendSettings;
use super::stop::cut_at_stop;
use super::{Backend, BackendError, GenerateRequest, Generation};
use crate::http::HttpClient;

/// `/api/generate`.
#[derive(Debug)]
pub struct OllamaBackend {
    http: HttpClient,
    model: String,
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    prompt: &'a str,
    stream: bool,
    raw: bool,
    options: Options<'a>,
}

#[derive(Serialize)]
struct Options<'a> {
    temperature: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u32>,
    num_predict: u32,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop: &'a [String],
}

/// The fields of Ollama's answer crossfile reads; durations are in nanoseconds.
#[derive(Deserialize)]
struct Answer {
    response: String,
    #[serde(default)]
    prompt_eval_count: Option<u32>,
    #[serde(default)]
    prompt_eval_duration: Option<u64>,
    #[serde(default)]
    eval_count: Option<u32>,
    #[serde(default)]
    eval_duration: Option<u64>,
}

impl OllamaBackend {
    /// A client for `settings.endpoint` (Ollama listens on `http://127.0.0.1:11434`).
    pub fn new(settings: &BackendSettings) -> Result<OllamaBackend, BackendError> {
        Ok(OllamaBackend {
            http: HttpClient::new(settings.http())?,
            model: settings.model.clone(),
        })
    }
}

#[async_trait]
impl Backend for OllamaBackend {
    fn name(&self) -> &'static str {
        "ollama"
    }

    async fn generate(
        &self,
        request: &GenerateRequest,
        cancel: &CancellationToken,
    ) -> Result<Generation, BackendError> {
        let body = Body {
            model: &self.model,
            prompt: &request.prompt,
            stream: false,
            raw: true,
            options: Options {
                temperature: request.sampling.map_or(0.0, |s| s.temperature()),
                top_p: request.sampling.map(|s| s.top_p()),
                seed: request.sampling.map(|s| s.seed()),
                num_predict: request.max_tokens,
                stop: &request.stop,
            },
        };
        let answer: Answer = self.http.post_json("/api/generate", &body, cancel).await?;
        let ms = |ns: Option<u64>| ns.map(|ns| ns as f64 / 1e6);
        Ok(Generation {
            text: cut_at_stop(&answer.response, &request.stop).to_string(),
            prompt_tokens: answer.prompt_eval_count,
            generated_tokens: answer.eval_count,
            prompt_ms: ms(answer.prompt_eval_duration),
            generate_ms: ms(answer.eval_duration),
            ..Generation::default()
        })
    }
}
