//! Prompt templates: plain left context, or fill-in-the-middle in one model family's tokens.

use crate::tokenize::Tokenizer;

/// How the parts of a prompt are laid out for the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Template {
    /// Cross-file block and left context only; the model continues the text.
    Plain,
    /// `<fim_prefix>…<fim_suffix>…<fim_middle>` (StarCoder, SantaCoder, StableCode).
    StarCoder,
    /// `<PRE> … <SUF>… <MID>` (Code Llama).
    CodeLlama,
    /// `<｜fim▁begin｜>…<｜fim▁hole｜>…<｜fim▁end｜>` (DeepSeek-Coder).
    DeepSeek,
    /// `<|fim_prefix|>…<|fim_suffix|>…<|fim_middle|>` (Qwen2.5-Coder).
    Qwen,
}

impl Template {
    /// Every template, FIM ones in detection order.
    pub const ALL: [Template; 5] = [
        Template::Qwen,
        Template::DeepSeek,
        Template::StarCoder,
        Template::CodeLlama,
        Template::Plain,
    ];

    /// The config name: `plain`, `starcoder`, `codellama`, `deepseek`, `qwen`.
    pub fn name(self) -> &'static str {
        match self {
            Template::Plain => "plain",
            Template::StarCoder => "starcoder",
            Template::CodeLlama => "codellama",
            Template::DeepSeek => "deepseek",
            Template::Qwen => "qwen",
        }
    }

    /// Parses a config name.
    pub fn from_name(name: &str) -> Option<Template> {
        Template::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The FIM special tokens (prefix, suffix, middle) as they appear in the vocabulary.
    pub fn fim_tokens(self) -> Option<[&'static str; 3]> {
        let _ = self;
        todo!("prompt: FIM tokens per template")
    }

    /// The template a model's own vocabulary supports: the first FIM family whose three special
    /// tokens are all in it, else [`Template::Plain`]. Never a guess from the model's name.
    pub fn detect(tokenizer: &dyn Tokenizer) -> Template {
        let _ = tokenizer;
        todo!("prompt: detection from vocabulary")
    }
}
