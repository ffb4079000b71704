//! A tokenizer built with the `tokenizers` crate, from a GGUF's vocabulary or a tokenizer.json.

use std::path::Path;

use super::{TokenizeError, Tokenizer};

/// A `tokenizers` tokenizer equal to llama.cpp's for the same GGUF.
pub struct GgufTokenizer {
    inner: tokenizers::Tokenizer,
}

impl GgufTokenizer {
    /// Builds the tokenizer a GGUF describes (`tokenizer.ggml.*` keys).
    pub fn from_gguf(path: &Path) -> Result<GgufTokenizer, TokenizeError> {
        let _ = path;
        todo!("tokenize: from GGUF")
    }

    /// Loads a `tokenizer.json`.
    pub fn from_json_file(path: &Path) -> Result<GgufTokenizer, TokenizeError> {
        let inner = tokenizers::Tokenizer::from_file(path).map_err(|e| TokenizeError::Build {
            path: path.into(),
            message: e.to_string(),
        })?;
        Ok(GgufTokenizer { inner })
    }
}

impl Tokenizer for GgufTokenizer {
    fn encode(&self, text: &str) -> Vec<u32> {
        self.inner
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .unwrap_or_default()
    }

    fn decode(&self, ids: &[u32]) -> String {
        self.inner.decode(ids, false).unwrap_or_default()
    }

    fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }
}
