//! Fitting a prompt to its token budget.

use super::Template;
use crate::lang::Language;
use crate::retrieve::Hit;
use crate::tokenize::Tokenizer;

/// Token budgets of one prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The model's context size (`model.n_ctx`).
    pub context_tokens: u32,
    /// Tokens reserved for generation (`prompt.max_new_tokens`).
    pub max_new_tokens: u32,
    /// At most this many tokens of cross-file block (`prompt.crossfile_tokens`; CrossCodeEval 512).
    pub crossfile_tokens: u32,
}

/// What a prompt is built from.
#[derive(Clone, Debug)]
pub struct PromptInput<'a> {
    pub language: Language,
    /// The file's text before the cursor.
    pub left: &'a str,
    /// The file's text after the cursor (used by FIM templates only).
    pub right: &'a str,
    /// Retrieved chunks, best first.
    pub hits: &'a [Hit],
}

/// Token counts of each part of a built prompt, with the model's tokenizer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PromptTokens {
    pub crossfile: u32,
    pub left: u32,
    pub right: u32,
    /// The whole prompt text, special tokens included, tokenized as one string.
    pub total: u32,
}

/// A prompt ready for a backend.
#[derive(Clone, Debug, PartialEq)]
pub struct Prompt {
    /// The full text sent to the model.
    pub text: String,
    pub template: Template,
    /// The parts as they were kept: the cross-file block (cut to its budget), the left context
    /// (cut from the left) and the right context (cut from the right; empty for `Plain`).
    pub crossfile: String,
    pub left: String,
    pub right: String,
    /// How many of the hits are in the cross-file block (whole or cut).
    pub hits_used: usize,
    pub tokens: PromptTokens,
}

/// Builds a prompt: the cross-file block cut to its budget by whole chunks, then by lines, from
/// the end; the left context cut from the left to fill the rest; for FIM templates the right
/// context takes at most a quarter of what is left, cut from the right. The whole prompt never
/// exceeds `context_tokens - max_new_tokens` tokens by the model's tokenizer.
pub fn build(
    input: &PromptInput<'_>,
    template: Template,
    tokenizer: &dyn Tokenizer,
    budget: Budget,
) -> Prompt {
    let _ = (input, template, tokenizer, budget);
    todo!("prompt: build within budget")
}
