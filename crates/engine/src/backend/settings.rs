//! Which model server a completion goes to, and how patiently.

use super::BackendKind;
use crate::http::HttpSettings;

/// `[backend]`. The API key itself is never here: only the name of its environment variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendSettings {
    /// Default `embedded`.
    pub kind: BackendKind,
    /// Base URL of an HTTP backend (default `http://127.0.0.1:8080`).
    pub endpoint: String,
    /// Model name sent to HTTP servers (default `default`).
    pub model: String,
    pub api_key_env: Option<String>,
    /// Per-request timeout (default 60 s).
    pub timeout_ms: u64,
    /// Retries on 429, 5xx and connection errors (default 2), with exponential backoff.
    pub retries: u32,
    /// Bounded response cache size (default 256; 0 turns it off).
    pub cache_entries: usize,
    /// How the `llamacpp` backend sends a fill-in-the-middle prompt (default `Prompt`).
    pub fim: FimRoute,
}

crate::choice! {
    /// How a fill-in-the-middle prompt goes to llama-server (`[backend] fim`).
    #[derive(Default)]
    pub enum FimRoute {
        /// crossfile's own prompt (its template and layout, its token budget) to `/completion`.
        #[default]
        Prompt,
        /// The parts to `/infill`, the chunks as `input_extra`: the server lays the prompt out
        /// itself with its own budget (what llama.vim and llama.vscode send).
        Infill,
    }
}

impl BackendSettings {
    /// The HTTP client settings of an HTTP backend.
    pub(crate) fn http(&self) -> HttpSettings<'_> {
        HttpSettings {
            section: "backend",
            endpoint: &self.endpoint,
            api_key_env: self.api_key_env.as_deref(),
            timeout_ms: self.timeout_ms,
            retries: self.retries,
        }
    }
}
