//! The model's own tokenizer, used for every token budget.
//!
//! The embedded backend counts with llama.cpp itself; HTTP backends with a tokenizer built from
//! the same GGUF's vocabulary ([`GgufTokenizer`]) or from a configured `tokenizer.json`
//! ([`GgufTokenizer::from_json_file`]).

mod gguf;
mod hf;
mod memo;
mod pieces;

use std::path::PathBuf;

pub use gguf::{GgufMetadata, GgufValue, read_metadata};
pub use hf::{GgufTokenizer, SUPPORTED_PRE};
pub use memo::MemoCounts;

/// A tokenizer: text to token ids and back, and the vocabulary's special tokens.
pub trait Tokenizer: Send + Sync {
    /// Token ids of `text`, with no special tokens added (no BOS).
    fn encode(&self, text: &str) -> Vec<u32>;

    /// Number of tokens of `text`.
    fn count(&self, text: &str) -> usize {
        self.encode(text).len()
    }

    /// The text of token ids (special tokens rendered as written).
    fn decode(&self, ids: &[u32]) -> String;

    /// The id of the token written exactly `token` (special tokens included), if the vocabulary
    /// has it.
    fn token_id(&self, token: &str) -> Option<u32>;
}

/// Why a tokenizer could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TokenizeError {
    #[error("{}: cannot read: {error}", .path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: not a GGUF file: {why}", .path.display())]
    NotGguf { path: PathBuf, why: String },
    #[error("{}: metadata key `{key}`: {why}", .path.display())]
    Metadata {
        path: PathBuf,
        key: String,
        why: String,
    },
    #[error("{}: unsupported tokenizer `{what}`; configure `model.tokenizer` with a tokenizer.json", .path.display())]
    Unsupported { path: PathBuf, what: String },
    #[error("{}: {message}", .path.display())]
    Build { path: PathBuf, message: String },
}
