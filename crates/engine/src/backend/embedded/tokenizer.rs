//! llama.cpp's own tokenizer for a loaded model: what every budget of the embedded backend counts
//! with.

use std::collections::HashMap;
use std::sync::Arc;

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use crate::tokenize::Tokenizer;

/// llama.cpp's tokenizer for a loaded model.
pub struct LlamaTokenizer {
    model: Arc<LlamaModel>,
    /// Vocabulary text to id, built once.
    ids: HashMap<String, u32>,
    n_tokens: i32,
}

impl LlamaTokenizer {
    pub(super) fn new(model: Arc<LlamaModel>) -> LlamaTokenizer {
        let vocab = model.vocab();
        let n_tokens = vocab.n_tokens();
        let mut ids = HashMap::with_capacity(usize::try_from(n_tokens).unwrap_or(0));
        for token in vocab.tokens() {
            if let (Some(text), Ok(id)) = (vocab.text(token), u32::try_from(token.0)) {
                ids.entry(text.to_string_lossy().into_owned()).or_insert(id);
            }
        }
        LlamaTokenizer {
            model,
            ids,
            n_tokens,
        }
    }
}

impl Tokenizer for LlamaTokenizer {
    /// llama.cpp's `llama_tokenize` with no BOS, special tokens written in the text parsed as
    /// such.
    fn encode(&self, text: &str) -> Vec<u32> {
        if i32::try_from(text.len()).is_err() {
            return Vec::new();
        }
        self.model
            .vocab()
            .tokenize(text.as_bytes(), false, true)
            .into_iter()
            .filter_map(|t| u32::try_from(t.0).ok())
            .collect()
    }

    fn decode(&self, ids: &[u32]) -> String {
        // An id outside the vocabulary would abort inside llama.cpp: leave it out.
        let tokens: Vec<LlamaToken> = ids
            .iter()
            .filter_map(|&id| i32::try_from(id).ok())
            .filter(|&id| id < self.n_tokens)
            .map(LlamaToken)
            .collect();
        if tokens.is_empty() {
            return String::new();
        }
        let bytes = self.model.vocab().detokenize(&tokens, false, true);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    fn token_id(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }
}
