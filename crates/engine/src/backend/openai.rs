//! `openai` and `openai-chat`: OpenAI's `/v1/completions` and `/v1/chat/completions`, as
//! OpenAI, llama.cpp's server, llama-cpp-python, vLLM and most hosted APIs serve them.
//!
//! Both ask for greedy output (`temperature: 0`), or, for a sampled request, its `temperature`,
//! `top_p` and `seed` (vLLM and llama.cpp's server honour the seed; OpenAI's is best effort). For servers built on llama.cpp they also send
//! `repeat_penalty: 1.0` (llama-cpp-python defaults to 1.1, which makes its output differ from
//! the embedded backend's); OpenAI's own API rejects unknown fields, so the field is left out
//! when the endpoint's host is `api.openai.com`. OpenAI accepts at most four stop strings: the
//! first four are sent, and every stop string is applied to the answer here as well.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::BackendSettings;
use super::stop::cut_at_stop;
use super::{Backend, BackendError, GenerateRequest, Generation};
use crate::http::{HttpClient, HttpError};

/// Most stop strings OpenAI's API accepts in one request.
const MAX_STOPS: usize = 4;

/// The instruction the chat backend puts before the prompt.
pub const CHAT_INSTRUCTION: &str = "Continue the following code from exactly where it ends. \
Reply with only the code that comes next: no explanation, and do not repeat the code given.";

/// Extra tokens the chat backend allows for a code fence around the answer (the fence is
/// stripped; see [`strip_code_fence`]).
const FENCE_TOKENS: u32 = 8;

/// `/v1/completions`.
#[derive(Debug)]
pub struct OpenAiBackend {
    http: HttpClient,
    model: String,
    repeat_penalty: bool,
}

/// `/v1/chat/completions`: one user message holding [`CHAT_INSTRUCTION`] and the prompt; the
/// assistant's reply, with a surrounding code fence removed, is the completion. Stop strings are
/// applied here after the fence is removed (a stop of `\n` sent to the server would end the
/// reply at the fence's first line).
#[derive(Debug)]
pub struct OpenAiChatBackend {
    http: HttpClient,
    model: String,
    repeat_penalty: bool,
}

#[derive(Serialize)]
struct CompletionBody<'a> {
    model: &'a str,
    prompt: &'a str,
    max_tokens: u32,
    temperature: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u32>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    repeat_penalty: Option<f32>,
    stream: bool,
}

#[derive(Serialize)]
struct ChatBody<'a> {
    model: &'a str,
    messages: [Message<'a>; 1],
    max_tokens: u32,
    temperature: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repeat_penalty: Option<f32>,
    stream: bool,
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'a str,
    content: String,
}

#[derive(Deserialize)]
struct CompletionAnswer {
    choices: Vec<CompletionChoice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct CompletionChoice {
    text: String,
}

#[derive(Deserialize)]
struct ChatAnswer {
    choices: Vec<ChatChoice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct ChatChoice {
    message: ChatMessage,
}

#[derive(Deserialize)]
struct ChatMessage {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: Option<u32>,
    #[serde(default)]
    completion_tokens: Option<u32>,
}

fn client(settings: &BackendSettings) -> Result<(HttpClient, bool), BackendError> {
    let http = HttpClient::new(settings.http())?;
    let repeat_penalty = http.host() != "api.openai.com";
    Ok((http, repeat_penalty))
}

/// An answer's first choice; an answer with none is malformed.
fn first_choice<T>(choices: Vec<T>, http: &HttpClient, path: &str) -> Result<T, BackendError> {
    choices.into_iter().next().ok_or_else(|| {
        BackendError::Http(HttpError::Malformed {
            endpoint: http.shown_url(path),
            message: "the answer has no choices".into(),
        })
    })
}

impl OpenAiBackend {
    /// A client for `settings.endpoint`; reads the API key from `settings.api_key_env` now.
    pub fn new(settings: &BackendSettings) -> Result<OpenAiBackend, BackendError> {
        let (http, repeat_penalty) = client(settings)?;
        Ok(OpenAiBackend {
            http,
            model: settings.model.clone(),
            repeat_penalty,
        })
    }
}

impl OpenAiChatBackend {
    /// A client for `settings.endpoint`; reads the API key from `settings.api_key_env` now.
    pub fn new(settings: &BackendSettings) -> Result<OpenAiChatBackend, BackendError> {
        let (http, repeat_penalty) = client(settings)?;
        Ok(OpenAiChatBackend {
            http,
            model: settings.model.clone(),
            repeat_penalty,
        })
    }
}

#[async_trait]
impl Backend for OpenAiBackend {
    fn name(&self) -> &'static str {
        "openai"
    }

    async fn generate(
        &self,
        request: &GenerateRequest,
        cancel: &CancellationToken,
    ) -> Result<Generation, BackendError> {
        const PATH: &str = "/v1/completions";
        let stop = &request.stop[..request.stop.len().min(MAX_STOPS)];
        let body = CompletionBody {
            model: &self.model,
            prompt: &request.prompt,
            max_tokens: request.max_tokens,
            temperature: request.sampling.map_or(0.0, |s| s.temperature()),
            top_p: request.sampling.map(|s| s.top_p()),
            seed: request.sampling.map(|s| s.seed()),
            stop,
            repeat_penalty: self.repeat_penalty.then_some(1.0),
            stream: false,
        };
        let answer: CompletionAnswer = self.http.post_json(PATH, &body, cancel).await?;
        let choice = first_choice(answer.choices, &self.http, PATH)?;
        Ok(generation(
            cut_at_stop(&choice.text, &request.stop),
            answer.usage,
        ))
    }
}

#[async_trait]
impl Backend for OpenAiChatBackend {
    fn name(&self) -> &'static str {
        "openai-chat"
    }

    async fn generate(
        &self,
        request: &GenerateRequest,
        cancel: &CancellationToken,
    ) -> Result<Generation, BackendError> {
        const PATH: &str = "/v1/chat/completions";
        let body = ChatBody {
            model: &self.model,
            messages: [Message {
                role: "user",
                content: chat_message(&request.prompt),
            }],
            max_tokens: request.max_tokens.saturating_add(FENCE_TOKENS),
            temperature: request.sampling.map_or(0.0, |s| s.temperature()),
            top_p: request.sampling.map(|s| s.top_p()),
            seed: request.sampling.map(|s| s.seed()),
            repeat_penalty: self.repeat_penalty.then_some(1.0),
            stream: false,
        };
        let answer: ChatAnswer = self.http.post_json(PATH, &body, cancel).await?;
        let choice = first_choice(answer.choices, &self.http, PATH)?;
        let content = choice.message.content.unwrap_or_default();
        let text = cut_at_stop(strip_code_fence(&content), &request.stop);
        Ok(generation(text, answer.usage))
    }
}

/// The user message of a chat request: the instruction, then the prompt in a fence-free block.
pub fn chat_message(prompt: &str) -> String {
    format!("{CHAT_INSTRUCTION}\n\n{prompt}")
}

/// The code inside a surrounding Markdown code fence, when the reply is one (an opening
/// ```` ```lang ```` line, and a closing ```` ``` ```` if the reply was not cut short);
/// otherwise the reply unchanged.
pub fn strip_code_fence(reply: &str) -> &str {
    let trimmed = reply.trim_start_matches([' ', '\t', '\r', '\n']);
    let Some(after_ticks) = trimmed.strip_prefix("```") else {
        return reply;
    };
    let Some(newline) = after_ticks.find('\n') else {
        // Only an opening fence line (the model was cut off): no code yet.
        return "";
    };
    let body = &after_ticks[newline + 1..];
    let end = body.trim_end();
    match end.strip_suffix("```") {
        Some(inner) => inner.strip_suffix('\n').unwrap_or(inner),
        None => body,
    }
}

fn generation(text: &str, usage: Option<Usage>) -> Generation {
    let (prompt_tokens, generated_tokens) = usage
        .map(|u| (u.prompt_tokens, u.completion_tokens))
        .unwrap_or_default();
    Generation {
        text: text.to_string(),
        prompt_tokens,
        generated_tokens,
        ..Generation::default()
    }
}

#[cfg(test)]
mod tests {
    use super::strip_code_fence;

    #[test]
    fn code_fences_are_stripped() {
        let rows = [
            ("x = 1", "x = 1"),
            ("```python\nx = 1\n```", "x = 1"),
            ("```\nx = 1\ny = 2\n```\n", "x = 1\ny = 2"),
            ("\n```py\n    return a\n", "    return a\n"),
            ("```python", ""),
            ("```python\n```", ""),
            ("a ``` b", "a ``` b"),
            ("", ""),
            ("```ts\nconst s = \"🙂\";\n```", "const s = \"🙂\";"),
        ];
        for (reply, want) in rows {
            assert_eq!(strip_code_fence(reply), want, "{reply:?}");
        }
    }
}
