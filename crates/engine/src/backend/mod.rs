//! Model backends: the [`Backend`] trait, and one file per way of reaching a model.
//!
//! `embedded` runs a GGUF in-process with llama.cpp (the default cargo feature); `openai`,
//! `openai-chat`, `ollama`, `tgi` and `llamacpp` speak HTTP to a server; `none` generates
//! nothing. [`CachedBackend`] wraps any of them with a bounded response cache. Every call is
//! greedy (temperature 0) unless it asks for [`Sampling`], and cancellable; errors say whether the model timed out, answered with
//! an HTTP status, sent a malformed body, refused the connection or was cancelled, so a replay
//! records an *error*, never a *miss*.

mod cache;
#[cfg(feature = "embedded")]
mod embedded;
mod llamacpp;
mod none;
mod ollama;
mod openai;
mod sampling;
mod settings;
mod stop;
mod tgi;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

pub use cache::CachedBackend;
#[cfg(feature = "embedded")]
pub use embedded::{EmbeddedBackend, LlamaTokenizer};
pub use llamacpp::LlamaCppBackend;
pub use none::NoBackend;
pub use ollama::OllamaBackend;
pub use openai::{CHAT_INSTRUCTION, OpenAiBackend, OpenAiChatBackend, strip_code_fence};
pub use sampling::{Sampling, SamplingError};
pub use settings::{BackendSettings, FimRoute};
pub use tgi::TgiBackend;

use crate::tokenize::Tokenizer;

crate::choice! {
    /// Which backend generates (`[backend] kind`).
    pub enum BackendKind {
        Embedded,
        /// `/v1/completions`.
        #[strum(serialize = "openai")]
        OpenAi,
        /// `/v1/chat/completions`.
        #[strum(serialize = "openai-chat")]
        OpenAiChat,
        /// `/api/generate`.
        Ollama,
        /// `/generate`.
        Tgi,
        /// `/completion`, and `/infill` when the template is FIM.
        #[strum(serialize = "llamacpp")]
        LlamaCpp,
        None,
    }
}

/// One generation request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GenerateRequest {
    /// The full prompt text (template applied).
    pub prompt: String,
    /// For servers with a native fill-in-the-middle route (llama.cpp `/infill`): the parts
    /// before and after the cursor and the chunks, for the server to lay out (`None` for a
    /// template without fill-in-the-middle).
    pub fim: Option<FimParts>,
    pub max_tokens: u32,
    /// Generation stops before any of these.
    pub stop: Vec<String>,
    /// The answer may begin with a line break (blanks before it only): the stops apply after
    /// it ([`after_leading_line_break`]), so one decode gives the next line's code at a finished
    /// line's end. A backend that cannot (HTTP servers apply stop strings from the start)
    /// answers blank there.
    pub may_start_below: bool,
    /// The backend may reuse what a kept context already holds of this prompt (live completion
    /// in an editor, where the next keystroke's prompt shares most of the last one's). `false`
    /// asks for exactly a fresh context's answer (`bench run`, replay).
    pub reuse_kv: bool,
    /// Decoding stops after this many milliseconds, once a token is decoded, and the text so far
    /// is the answer, whole characters only (`None`: no limit). Counted from the request
    /// reaching the backend when it reuses a kept context (its prompt's reading counted: a
    /// keystroke's change), from the first token when its whole prompt is read (a fresh
    /// context; llama-server counts its `t_max_predict_ms` so).
    pub max_generate_ms: Option<u64>,
    /// Another prompt whose answer would do (live completion: the prompt with the cross-file
    /// block of the last answer, when retrieval now gives another). A backend that holds it in
    /// a kept KV cache while most of `prompt` is still to be read may answer from it at once,
    /// and read `prompt` while no request waits, so that a later request finds it ready
    /// ([`Generation::from_fallback`]). Others ignore it.
    pub fallback: Option<String>,
    /// A prompt a later request will likely ask for (live completion: this one with the left
    /// context's start one step further). A backend with kept KV caches may read it while no
    /// request waits; others ignore it.
    pub read_ahead: Option<String>,
    /// Draw tokens with these settings instead of taking the most likely one (`None`: greedy,
    /// the default). The same request with the same seed draws the same tokens from the
    /// embedded backend; a server may or may not honour the seed.
    pub sampling: Option<Sampling>,
    /// A text whose likelihood as the prompt's continuation is wanted beside the answer (a
    /// benchmark case's reference): [`Generation::likelihood`]. Only the embedded backend
    /// computes it, for an exact request (`reuse_kv` false); others leave it `None`.
    pub likelihood_of: Option<String>,
}

/// Where the text after an answer's leading line break starts, when only blanks come before
/// that line break (an answer that starts on the next line).
pub fn after_leading_line_break(text: &str) -> Option<usize> {
    let at = text.find('\n')?;
    text[..at].trim().is_empty().then_some(at + 1)
}

/// A fill-in-the-middle request's parts, for a server that lays the prompt out itself
/// (llama-server's `/infill`, with `backend.fim = "infill"`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FimParts {
    /// The file's text before the cursor, as the prompt keeps it.
    pub prefix: String,
    /// The file's text after the cursor, as the prompt keeps it.
    pub suffix: String,
    /// The retrieved chunks the prompt holds, best first (`input_extra`).
    pub chunks: Vec<FimChunk>,
}

/// One retrieved chunk as a server's repository-level layout takes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FimChunk {
    pub filename: String,
    pub text: String,
}

/// What a backend generated.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Generation {
    pub text: String,
    /// Tokens in the prompt and generated, as the backend counted them (if it says).
    pub prompt_tokens: Option<u32>,
    pub generated_tokens: Option<u32>,
    /// Time from the request to the first generated token, if known.
    pub first_token_ms: Option<f64>,
    /// Prompt processing and generation time, if the backend reports them.
    pub prompt_ms: Option<f64>,
    pub generate_ms: Option<f64>,
    /// Served from the response cache.
    pub cached: bool,
    /// Prompt tokens a kept KV cache already held (not evaluated again), if the backend says.
    pub reused_tokens: Option<u32>,
    /// Decoding stopped at [`GenerateRequest::max_generate_ms`].
    pub out_of_time: bool,
    /// The answer is [`GenerateRequest::fallback`]'s, not `prompt`'s (then `prompt_tokens` and
    /// `reused_tokens` are the fallback's too).
    pub from_fallback: bool,
    /// [`GenerateRequest::likelihood_of`]'s likelihood, when the backend computed it.
    pub likelihood: Option<Likelihood>,
}

/// How likely the model finds a text as the continuation of a prompt: one read of the prompt
/// and the text's tokens, no sampling (the measure Long Code Arena chose its context composers
/// by, as perplexity).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Likelihood {
    /// The mean over the text's tokens of each token's natural-log probability given the prompt
    /// and the tokens before it (≤ 0; perplexity is `exp(-mean_logprob)`).
    pub mean_logprob: f64,
    /// The text's tokens (its own tokenization, appended to the prompt's).
    pub tokens: u32,
}

/// A way of generating text.
#[async_trait]
pub trait Backend: Send + Sync {
    /// The config name: `embedded`, `openai`, `openai-chat`, `ollama`, `tgi`, `llamacpp`, `none`.
    fn name(&self) -> &'static str;

    /// The model's own tokenizer, when the backend has it in-process (the embedded one).
    fn tokenizer(&self) -> Option<Arc<dyn Tokenizer>> {
        None
    }

    /// Whether it keeps KV caches between requests and so uses [`GenerateRequest::fallback`]
    /// and [`GenerateRequest::read_ahead`] (the embedded one): others are not sent them.
    fn keeps_contexts(&self) -> bool {
        false
    }

    /// Marks a request for the model as on its way (its prompt being built) until the guard is
    /// dropped: a backend that works while idle (the embedded one reads prompts ahead) leaves
    /// that work meanwhile, so the request finds the cores free. Others have nothing to leave.
    fn foreground(&self) -> Foreground {
        Foreground::default()
    }

    /// Generates greedily, or as [`GenerateRequest::sampling`] says. Returns [`BackendError::Cancelled`] soon after `cancel` fires, and the
    /// backend is free for the next request.
    async fn generate(
        &self,
        request: &GenerateRequest,
        cancel: &CancellationToken,
    ) -> Result<Generation, BackendError>;
}

/// A request for the model on its way ([`Backend::foreground`]), counted while it lives.
#[derive(Debug, Default)]
pub struct Foreground(Option<Arc<AtomicUsize>>);

impl Foreground {
    /// Counts one more request on its way in `waiting`, until dropped.
    pub fn counted_in(waiting: Arc<AtomicUsize>) -> Foreground {
        waiting.fetch_add(1, Ordering::SeqCst);
        Foreground(Some(waiting))
    }
}

impl Drop for Foreground {
    fn drop(&mut self) {
        if let Some(waiting) = &self.0 {
            waiting.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Why generation failed. Never carries an API key.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// An HTTP backend's server timed out, answered with an error status or garbage, or refused
    /// the connection.
    #[error(transparent)]
    Http(crate::http::HttpError),
    #[error("generation was cancelled")]
    Cancelled,
    #[error("model {model}: {message}")]
    Model { model: String, message: String },
    #[error("the `{backend}` backend cannot {what}")]
    Unsupported { backend: String, what: String },
    #[error("backend settings: {0}")]
    Config(String),
}

impl From<crate::http::HttpError> for BackendError {
    /// Cancellation and settings errors are the backend's own kinds; the rest stay HTTP errors.
    fn from(error: crate::http::HttpError) -> Self {
        use crate::http::HttpError as H;
        match error {
            H::Cancelled => BackendError::Cancelled,
            H::Config(message) => BackendError::Config(message),
            other => BackendError::Http(other),
        }
    }
}

impl BackendError {
    /// A short machine name of the kind of error, for run records.
    pub fn kind(&self) -> &'static str {
        match self {
            BackendError::Http(e) => e.kind(),
            BackendError::Cancelled => "cancelled",
            BackendError::Model { .. } => "model",
            BackendError::Unsupported { .. } => "unsupported",
            BackendError::Config(_) => "config",
        }
    }
}
