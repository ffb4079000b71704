//! Prompt templates: plain left context, or fill-in-the-middle in one model family's tokens.

use crate::tokenize::Tokenizer;

crate::choice! {
    /// How the parts of a prompt are laid out for the model (`[prompt] template`, or `auto`).
    pub enum Template {
        /// Cross-file block and left context only; the model continues the text.
        Plain,
        /// `<fim_prefix>…<fim_suffix>…<fim_middle>` (StarCoder, SantaCoder, StableCode).
        #[strum(serialize = "starcoder")]
        StarCoder,
        /// `<PRE> … <SUF>… <MID>` (Code Llama).
        #[strum(serialize = "codellama")]
        CodeLlama,
        /// `<｜fim▁begin｜>…<｜fim▁hole｜>…<｜fim▁end｜>` (DeepSeek-Coder).
        #[strum(serialize = "deepseek")]
        DeepSeek,
        /// `<|fim_prefix|>…<|fim_suffix|>…<|fim_middle|>` (Qwen2.5-Coder).
        Qwen,
    }
}

impl Template {
    /// Every template, FIM ones in detection order.
    pub const DETECTION_ORDER: [Template; 5] = [
        Template::Qwen,
        Template::DeepSeek,
        Template::StarCoder,
        Template::CodeLlama,
        Template::Plain,
    ];

    /// The FIM special tokens (prefix, suffix, middle) as they appear in the vocabulary.
    ///
    /// Code Llama's are SentencePiece pieces with a leading `▁` (U+2581), as its tokenizer and
    /// llama.cpp's GGUF vocabularies spell them; [`Template::detect`] also accepts them without
    /// it. `None` for [`Template::Plain`].
    pub fn fim_tokens(self) -> Option<[&'static str; 3]> {
        match self {
            Template::Plain => None,
            Template::StarCoder => Some(["<fim_prefix>", "<fim_suffix>", "<fim_middle>"]),
            Template::CodeLlama => Some(["▁<PRE>", "▁<SUF>", "▁<MID>"]),
            Template::DeepSeek => Some(["<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"]),
            Template::Qwen => Some(["<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"]),
        }
    }

    /// The template a model's own vocabulary supports: the first FIM family whose three special
    /// tokens are all in it, else [`Template::Plain`]. Never a guess from the model's name.
    ///
    /// Tokens are looked up exactly, so Qwen's `<|fim_prefix|>` and StarCoder's `<fim_prefix>`
    /// are never confused; a vocabulary with only some of a family's tokens is not that family.
    pub fn detect(tokenizer: &dyn Tokenizer) -> Template {
        Template::DETECTION_ORDER
            .into_iter()
            .find(|t| t.is_in_vocabulary(tokenizer))
            .unwrap_or(Template::Plain)
    }

    /// Whether this is a fill-in-the-middle template (it uses the right context).
    pub fn is_fim(self) -> bool {
        self != Template::Plain
    }

    /// The prompt text of `prefix` (cross-file block and left context) and `suffix` (right
    /// context), special tokens written as text:
    ///
    /// - Plain: `{prefix}` (the suffix is not used);
    /// - StarCoder: `<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>`;
    /// - Qwen: `<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>`;
    /// - DeepSeek: `<｜fim▁begin｜>{prefix}<｜fim▁hole｜>{suffix}<｜fim▁end｜>`;
    /// - Code Llama: `<PRE> {prefix} <SUF>{suffix} <MID>`. This is the layout Meta's
    ///   `infilling_prompt_tokens` documents ("format as `<PRE> {pre} <SUF>{suf} <MID>`") and
    ///   Hugging Face's and Ollama's Code Llama templates write: the space after `<PRE>` is the
    ///   SentencePiece leading space the prefix is encoded with, the spaces before `<SUF>` and
    ///   `<MID>` are the `▁` of the `▁<SUF>` and `▁<MID>` tokens, and the suffix is encoded
    ///   without a leading space.
    pub fn render(self, prefix: &str, suffix: &str) -> String {
        let (open, hole, end) = match self {
            Template::Plain => return prefix.to_string(),
            Template::CodeLlama => ("<PRE> ", " <SUF>", " <MID>"),
            Template::StarCoder => ("<fim_prefix>", "<fim_suffix>", "<fim_middle>"),
            Template::DeepSeek => ("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),
            Template::Qwen => ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"),
        };
        let mut text = String::with_capacity(
            open.len() + prefix.len() + hole.len() + suffix.len() + end.len(),
        );
        for part in [open, prefix, hole, suffix, end] {
            text.push_str(part);
        }
        text
    }

    fn is_in_vocabulary(self, tokenizer: &dyn Tokenizer) -> bool {
        let Some(tokens) = self.fim_tokens() else {
            return false;
        };
        tokens.iter().all(|token| {
            tokenizer.token_id(token).is_some()
                || (self == Template::CodeLlama
                    && token
                        .strip_prefix('▁')
                        .is_some_and(|bare| tokenizer.token_id(bare).is_some()))
        })
    }
}
