//! `llamacpp`: the upstream llama.cpp server (`llama-server`): `/completion` for crossfile's own
//! prompt (whatever its template and layout), or, with `backend.fim = "infill"`, `/infill` for a
//! fill-in-the-middle request: the text before and after the cursor and the retrieved chunks as
//! `input_extra`, which the server lays out itself (Qwen's repository-level format for such a
//! vocabulary, its own placeholder names and budget), as llama.vim and llama.vscode send.
//!
//! Both are greedy (`temperature: 0`, `repeat_penalty: 1.0`; a sampled request sends its
//! `temperature`, `top_p` and `seed`) and ask the server to reuse its KV
//! cache for a repeated prompt prefix (`cache_prompt`). `/infill` lets the server build the FIM
//! prompt with the model's own FIM tokens.
//!
//! A model without FIM tokens (the default SmolLM2 among them) makes `/infill` answer HTTP 501
//! "Infill is not supported by this model". That becomes [`BackendError::Unsupported`], naming
//! the server's reason and the fix, rather than a silent fall-back to `/completion`: a request
//! that carries FIM parts was built with a FIM prompt template, whose control tokens such a model
//! does not know, so its output would be noise that a benchmark would score as a miss. Choose a
//! FIM model, or a non-FIM template (`prompt.template`), and `fim` is `None`.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::stop::cut_at_stop;
use super::{Backend, BackendError, GenerateRequest, Generation};
use super::{BackendSettings, FimRoute};
use crate::http::{HttpClient, HttpError};

/// `/completion` and `/infill`.
#[derive(Debug)]
pub struct LlamaCppBackend {
    http: HttpClient,
    fim: FimRoute,
}

#[derive(Serialize)]
struct CompletionBody<'a> {
    prompt: &'a str,
    #[serde(flatten)]
    decoding: Decoding<'a>,
}

#[derive(Serialize)]
struct InfillBody<'a> {
    input_prefix: &'a str,
    input_suffix: &'a str,
    input_extra: Vec<Extra<'a>>,
    /// The text after the FIM middle token; empty, the middle is generated from scratch.
    prompt: &'a str,
    #[serde(flatten)]
    decoding: Decoding<'a>,
}

/// One chunk of `input_extra`.
#[derive(Serialize)]
struct Extra<'a> {
    filename: &'a str,
    text: &'a str,
}

/// How both endpoints decode: greedy or the request's sampling, no repeat penalty, the request's stops, and the server's
/// prompt cache kept between requests.
#[derive(Serialize)]
struct Decoding<'a> {
    n_predict: u32,
    temperature: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u32>,
    repeat_penalty: f32,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop: &'a [String],
    cache_prompt: bool,
    /// The server's own decoding time limit (it applies once a line break was generated).
    #[serde(skip_serializing_if = "Option::is_none")]
    t_max_predict_ms: Option<u64>,
}

impl<'a> Decoding<'a> {
    fn of(request: &'a GenerateRequest) -> Decoding<'a> {
        Decoding {
            n_predict: request.max_tokens,
            temperature: request.sampling.map_or(0.0, |s| s.temperature()),
            top_p: request.sampling.map(|s| s.top_p()),
            seed: request.sampling.map(|s| s.seed()),
            repeat_penalty: 1.0,
            stop: &request.stop,
            cache_prompt: true,
            t_max_predict_ms: request.max_generate_ms,
        }
    }
}

#[derive(Deserialize)]
struct Answer {
    content: String,
    #[serde(default)]
    tokens_predicted: Option<u32>,
    #[serde(default)]
    tokens_evaluated: Option<u32>,
    #[serde(default)]
    timings: Option<Timings>,
}

#[derive(Deserialize)]
struct Timings {
    /// Prompt tokens the server's cache already held (`cache_prompt`), and evaluated.
    #[serde(default)]
    cache_n: Option<u32>,
    #[serde(default)]
    prompt_n: Option<u32>,
    #[serde(default)]
    prompt_ms: Option<f64>,
    #[serde(default)]
    predicted_ms: Option<f64>,
}

impl LlamaCppBackend {
    /// A client for `settings.endpoint` (`llama-server` listens on `http://127.0.0.1:8080`).
    /// The server runs one model, so `settings.model` is not sent.
    pub fn new(settings: &BackendSettings) -> Result<LlamaCppBackend, BackendError> {
        Ok(LlamaCppBackend {
            http: HttpClient::new(settings.http())?,
            fim: settings.fim,
        })
    }
}

#[async_trait]
impl Backend for LlamaCppBackend {
    fn name(&self) -> &'static str {
        "llamacpp"
    }

    async fn generate(
        &self,
        request: &GenerateRequest,
        cancel: &CancellationToken,
    ) -> Result<Generation, BackendError> {
        let infill = request
            .fim
            .as_ref()
            .filter(|_| self.fim == FimRoute::Infill);
        let answer: Answer = match infill {
            None => {
                let body = CompletionBody {
                    prompt: &request.prompt,
                    decoding: Decoding::of(request),
                };
                self.http.post_json("/completion", &body, cancel).await?
            }
            Some(fim) => {
                let body = InfillBody {
                    input_prefix: &fim.prefix,
                    input_suffix: &fim.suffix,
                    input_extra: fim
                        .chunks
                        .iter()
                        .map(|c| Extra {
                            filename: &c.filename,
                            text: &c.text,
                        })
                        .collect(),
                    prompt: "",
                    decoding: Decoding::of(request),
                };
                match self.http.post_json("/infill", &body, cancel).await {
                    Err(HttpError::Status {
                        status: 501, body, ..
                    }) => return Err(infill_unsupported(&body)),
                    other => other?,
                }
            }
        };
        let timings = answer.timings;
        Ok(Generation {
            text: cut_at_stop(&answer.content, &request.stop).to_string(),
            prompt_tokens: answer.tokens_evaluated,
            generated_tokens: answer.tokens_predicted,
            prompt_ms: timings.as_ref().and_then(|t| t.prompt_ms),
            generate_ms: timings.as_ref().and_then(|t| t.predicted_ms),
            // `tokens_cached` is what the slot holds after the answer (generated tokens too).
            reused_tokens: timings.as_ref().and_then(|t| {
                t.cache_n.or_else(|| {
                    let evaluated = t.prompt_n?;
                    Some(answer.tokens_evaluated?.saturating_sub(evaluated))
                })
            }),
            ..Generation::default()
        })
    }
}

/// The error for a server whose model cannot fill in the middle; `body` is its 501 answer.
fn infill_unsupported(body: &str) -> BackendError {
    let reason = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| body.to_string());
    BackendError::Unsupported {
        backend: "llamacpp".into(),
        what: format!(
            "fill in the middle with this server's model (`/infill` answered 501: {}); \
             serve a model with FIM tokens, or set a non-FIM `prompt.template`",
            reason.trim()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::infill_unsupported;

    #[test]
    fn a_501_names_the_servers_reason_and_the_fix() {
        let body = r#"{"error":{"code":501,"message":"Infill is not supported by this model: prefix token is missing. ","type":"not_supported_error"}}"#;
        let e = infill_unsupported(body);
        assert_eq!(e.kind(), "unsupported");
        assert_eq!(
            e.to_string(),
            "the `llamacpp` backend cannot fill in the middle with this server's model (`/infill` \
             answered 501: Infill is not supported by this model: prefix token is missing.); \
             serve a model with FIM tokens, or set a non-FIM `prompt.template`"
        );
        let plain = infill_unsupported("not json");
        assert!(
            plain.to_string().contains("answered 501: not json"),
            "{plain}"
        );
    }
}
