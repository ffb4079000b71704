//! A tokenizer built with the `tokenizers` crate, from a GGUF's vocabulary or a tokenizer.json.
//!
//! For a GGUF, the BPE model, merges and special tokens come from its `tokenizer.ggml.*` keys
//! and the pre-tokenizer from `tokenizer.ggml.pre`, written to split text the way llama.cpp's
//! `llm_tokenizer_bpe` does for that name (its regular expressions, applied in turn, each match
//! and each gap kept as its own piece). Tests hold the ids equal to llama.cpp's.

use std::path::Path;

use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{BPE, Vocab};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{AddedToken, SplitDelimiterBehavior};

use super::gguf::{GgufMetadata, GgufValue, read_metadata};
use super::pieces::{PieceCounter, Splitting};
use super::{TokenizeError, Tokenizer};

/// A `tokenizers` tokenizer equal to llama.cpp's for the same GGUF.
pub struct GgufTokenizer {
    inner: tokenizers::Tokenizer,
    /// Counts tokens without encoding, for a tokenizer built from a GGUF (whose pipeline is
    /// known); `None` for a tokenizer.json.
    counter: Option<PieceCounter>,
}

/// The `tokenizer.ggml.pre` names [`GgufTokenizer::from_gguf`] supports.
pub const SUPPORTED_PRE: &[&str] = &[
    "default",
    "gpt-2",
    "smollm",
    "starcoder",
    "refact",
    "command-r",
    "codeshell",
    "llama-bpe",
    "llama3",
    "llama-v3",
    "qwen2",
    "deepseek-coder",
];

/// GPT-2's pre-tokenizer expression, as `tokenizers` writes it (its `ByteLevel` splitting).
const GPT2_BYTE_LEVEL: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// GPT-2's pre-tokenizer expression, as llama.cpp writes it.
const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)";

/// Llama 3's, with case-insensitive contractions and numbers in groups of at most three.
const LLAMA3: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Qwen 2's: Llama 3's with single digits.
const QWEN2: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// DeepSeek Coder's, applied one after the other.
const DEEPSEEK_CODER: &[&str] = &[
    r"[\r\n]",
    r"\s?\p{L}+",
    r"\s?\p{P}+",
    r"[一-龥ࠀ-一가-퟿]+",
    r"\p{N}",
];

/// llama.cpp's token types (`tokenizer.ggml.token_type`) that it matches whole in text.
const TYPE_UNKNOWN: u64 = 2;
const TYPE_CONTROL: u64 = 3;
const TYPE_USER_DEFINED: u64 = 4;

impl GgufTokenizer {
    /// Builds the tokenizer a GGUF describes (`tokenizer.ggml.*` keys).
    ///
    /// Supports byte-level BPE vocabularies (`tokenizer.ggml.model = gpt2`) with the
    /// pre-tokenizers in [`SUPPORTED_PRE`]. SentencePiece vocabularies (`llama`, e.g. Code
    /// Llama) and others are [`TokenizeError::Unsupported`]: configure `model.tokenizer` with
    /// the model's tokenizer.json instead.
    pub fn from_gguf(path: &Path) -> Result<GgufTokenizer, TokenizeError> {
        let meta = read_metadata(path)?;
        build(path, &meta)
    }

    /// Loads a `tokenizer.json`.
    pub fn from_json_file(path: &Path) -> Result<GgufTokenizer, TokenizeError> {
        let inner = tokenizers::Tokenizer::from_file(path).map_err(|e| TokenizeError::Build {
            path: path.into(),
            message: e.to_string(),
        })?;
        Ok(GgufTokenizer {
            inner,
            counter: None,
        })
    }
}

impl Tokenizer for GgufTokenizer {
    fn encode(&self, text: &str) -> Vec<u32> {
        self.inner
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .unwrap_or_default()
    }

    fn count(&self, text: &str) -> usize {
        self.counter
            .as_ref()
            .and_then(|counter| counter.count(self.inner.get_model(), text))
            .unwrap_or_else(|| self.encode(text).len())
    }

    fn decode(&self, ids: &[u32]) -> String {
        self.inner.decode(ids, false).unwrap_or_default()
    }

    fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }
}

fn build(path: &Path, meta: &GgufMetadata) -> Result<GgufTokenizer, TokenizeError> {
    let model = string(path, meta, "tokenizer.ggml.model")?;
    if model != "gpt2" {
        return Err(TokenizeError::Unsupported {
            path: path.into(),
            what: format!("tokenizer.ggml.model = {model}"),
        });
    }
    // llama.cpp treats a missing `pre` as `default`.
    let pre = match meta.get("tokenizer.ggml.pre") {
        None => "default",
        Some(value) => value
            .as_str()
            .ok_or_else(|| wrong_type(path, "tokenizer.ggml.pre", "a string"))?,
    };
    let (splitting, ignore_merges) = splitting(pre).ok_or_else(|| TokenizeError::Unsupported {
        path: path.into(),
        what: format!("tokenizer.ggml.pre = {pre}"),
    })?;
    let build_error = |message: String| TokenizeError::Build {
        path: path.into(),
        message,
    };

    let tokens = array(path, meta, "tokenizer.ggml.tokens")?;
    let mut vocab = Vocab::with_capacity(tokens.len());
    for (id, token) in tokens.iter().enumerate() {
        let token = token
            .as_str()
            .ok_or_else(|| wrong_type(path, "tokenizer.ggml.tokens", "an array of strings"))?;
        let id = u32::try_from(id).map_err(|_| build_error("more than 2^32 tokens".into()))?;
        // A duplicate keeps its first id, as llama.cpp's text-to-token map does.
        vocab.entry(token.to_string()).or_insert(id);
    }
    let merges = array(path, meta, "tokenizer.ggml.merges")?
        .iter()
        .map(|merge| {
            let merge = merge
                .as_str()
                .ok_or_else(|| wrong_type(path, "tokenizer.ggml.merges", "an array of strings"))?;
            let (left, right) = merge
                .split_once(' ')
                .ok_or_else(|| TokenizeError::Metadata {
                    path: path.into(),
                    key: "tokenizer.ggml.merges".into(),
                    why: format!("merge {merge:?} has no space"),
                })?;
            Ok((left.to_string(), right.to_string()))
        })
        .collect::<Result<Vec<_>, TokenizeError>>()?;
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .ignore_merges(ignore_merges)
        .build()
        .map_err(|e| build_error(format!("BPE: {e}")))?;

    let mut inner = tokenizers::Tokenizer::new(bpe);
    inner.with_pre_tokenizer(Some(pre_tokenizer(&splitting).map_err(build_error)?));
    inner.with_decoder(Some(ByteLevelDecoder::default()));
    let specials = special_tokens(path, meta, tokens)?;
    let counter = PieceCounter::new(&splitting, specials.iter().map(|t| t.content.as_str()))
        .map_err(build_error)?;
    inner
        .add_special_tokens(specials)
        .map_err(|e| build_error(format!("special tokens: {e}")))?;
    Ok(GgufTokenizer {
        inner,
        counter: Some(counter),
    })
}

/// The tokens llama.cpp matches whole before splitting text (unknown, control and
/// user-defined types), as special added tokens.
fn special_tokens(
    path: &Path,
    meta: &GgufMetadata,
    tokens: &[GgufValue],
) -> Result<Vec<AddedToken>, TokenizeError> {
    let Some(types) = meta.get("tokenizer.ggml.token_type") else {
        return Ok(Vec::new());
    };
    let types = types
        .as_array()
        .ok_or_else(|| wrong_type(path, "tokenizer.ggml.token_type", "an array"))?;
    Ok(types
        .iter()
        .zip(tokens)
        .filter(|(kind, _)| {
            matches!(
                kind.as_u64(),
                Some(TYPE_UNKNOWN | TYPE_CONTROL | TYPE_USER_DEFINED)
            )
        })
        .filter_map(|(_, token)| token.as_str())
        .filter(|token| !token.is_empty())
        .map(|token| AddedToken::from(token, true))
        .collect())
}

/// How llama.cpp splits text for `tokenizer.ggml.pre = name`, and whether its BPE takes a
/// whole word found in the vocabulary before merging (`ignore_merges`).
fn splitting(name: &str) -> Option<(Splitting, bool)> {
    let split = |digits: bool, expressions: &[&'static str]| Splitting {
        digits,
        expressions: expressions.to_vec(),
    };
    Some(match name {
        "gpt-2" => (split(false, &[GPT2_BYTE_LEVEL]), false),
        // Digits one by one, then GPT-2's expression (SmolLM, StarCoder, Refact, ...).
        "smollm" | "starcoder" | "refact" | "command-r" | "codeshell" => {
            (split(true, &[GPT2_BYTE_LEVEL]), false)
        }
        "llama-bpe" | "llama3" | "llama-v3" => (split(false, &[LLAMA3]), true),
        "qwen2" => (split(false, &[QWEN2]), false),
        "deepseek-coder" => (split(false, DEEPSEEK_CODER), false),
        "default" => (
            split(
                false,
                &[r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]"],
            ),
            false,
        ),
        _ => return None,
    })
}

/// The `tokenizers` pre-tokenizer that splits as `splitting` says: digits one by one, each
/// expression in turn (each match and each gap kept as its own piece), then bytes mapped to
/// GPT-2's byte-level alphabet.
fn pre_tokenizer(splitting: &Splitting) -> Result<PreTokenizerWrapper, String> {
    let mut steps = Vec::with_capacity(splitting.expressions.len() + 2);
    if splitting.digits {
        steps.push(PreTokenizerWrapper::Digits(Digits::new(true)));
    }
    for expression in &splitting.expressions {
        let split = Split::new(
            SplitPattern::Regex((*expression).to_string()),
            SplitDelimiterBehavior::Isolated,
            false,
        )
        .map_err(|e| format!("expression {expression:?}: {e}"))?;
        steps.push(PreTokenizerWrapper::Split(split));
    }
    steps.push(PreTokenizerWrapper::ByteLevel(ByteLevel::new(
        false, true, false,
    )));
    Ok(PreTokenizerWrapper::Sequence(Sequence::new(steps)))
}

fn string<'m>(path: &Path, meta: &'m GgufMetadata, key: &str) -> Result<&'m str, TokenizeError> {
    meta.get(key)
        .ok_or_else(|| missing(path, key))?
        .as_str()
        .ok_or_else(|| wrong_type(path, key, "a string"))
}

fn array<'m>(
    path: &Path,
    meta: &'m GgufMetadata,
    key: &str,
) -> Result<&'m [GgufValue], TokenizeError> {
    meta.get(key)
        .ok_or_else(|| missing(path, key))?
        .as_array()
        .ok_or_else(|| wrong_type(path, key, "an array"))
}

fn missing(path: &Path, key: &str) -> TokenizeError {
    TokenizeError::Metadata {
        path: path.into(),
        key: key.into(),
        why: "missing".into(),
    }
}

fn wrong_type(path: &Path, key: &str, expected: &str) -> TokenizeError {
    TokenizeError::Metadata {
        path: path.into(),
        key: key.into(),
        why: format!("not {expected}"),
    }
}
