//! `tgi`: Hugging Face Text Generation Inference's `/generate`, greedy (`do_sample: false`; a
//! sampled request sends `do_sample: true`, `temperature`, `top_p` below 1 and `seed`), with
//! `max_new_tokens`, stop strings and `details` (for the generated token count).
//!
//! TGI accepts at most four stop strings by default (`--max-stop-sequences`) and keeps the stop
//! string it hit in `generated_text`: the first four are sent, and every stop string is applied
//! to the answer here. No TGI server can be installed on the machines crossfile is tested on, so
//! this backend is tested against a local fixture that replays TGI's documented request and
//! response shapes (`tests/it/http_backends.rs`).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::BackendSettings;
use super::stop::cut_at_stop;
use super::{Backend, BackendError, GenerateRequest, Generation};
use crate::http::HttpClient;

/// Stop strings TGI accepts by default.
const MAX_STOPS: usize = 4;

/// `/generate`.
#[derive(Debug)]
pub struct TgiBackend {
    http: HttpClient,
}

#[derive(Serialize)]
struct Body<'a> {
    inputs: &'a str,
    parameters: Parameters<'a>,
}

#[derive(Serialize)]
struct Parameters<'a> {
    max_new_tokens: u32,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop: &'a [String],
    do_sample: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u32>,
    details: bool,
}

#[derive(Deserialize)]
struct Answer {
    generated_text: String,
    #[serde(default)]
    details: Option<Details>,
}

#[derive(Deserialize)]
struct Details {
    #[serde(default)]
    generated_tokens: Option<u32>,
}

impl TgiBackend {
    /// A client for `settings.endpoint`. TGI serves one model, so `settings.model` is not sent.
    pub fn new(settings: &BackendSettings) -> Result<TgiBackend, BackendError> {
        Ok(TgiBackend {
            http: HttpClient::new(settings.http())?,
        })
    }
}

#[async_trait]
impl Backend for TgiBackend {
    fn name(&self) -> &'static str {
        "tgi"
    }

    async fn generate(
        &self,
        request: &GenerateRequest,
        cancel: &CancellationToken,
    ) -> Result<Generation, BackendError> {
        let body = Body {
            inputs: &request.prompt,
            parameters: Parameters {
                max_new_tokens: request.max_tokens,
                stop: &request.stop[..request.stop.len().min(MAX_STOPS)],
                do_sample: request.sampling.is_some(),
                temperature: request.sampling.map(|s| s.temperature()),
                // TGI takes a top-p below 1 only.
                top_p: request.sampling.map(|s| s.top_p()).filter(|&p| p < 1.0),
                seed: request.sampling.map(|s| s.seed()),
                details: true,
            },
        };
        let answer: Answer = self.http.post_json("/generate", &body, cancel).await?;
        Ok(Generation {
            text: cut_at_stop(&answer.generated_text, &request.stop).to_string(),
            generated_tokens: answer.details.and_then(|d| d.generated_tokens),
            ..Generation::default()
        })
    }
}
