//! How a prompt is laid out and how much of it each part may take.

use super::{CrossfileLayout, Template};

/// `[prompt]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptSettings {
    /// `None` (the default, `auto`): chosen from the model's vocabulary.
    pub template: Option<Template>,
    /// `None` (the default, `auto`): `comment` for every model
    /// (measured: docs/performance.md, "The prompt's layout"); `repo` only when asked for.
    pub layout: Option<CrossfileLayout>,
    /// Cross-file block budget (default 512, CrossCodeEval's).
    pub crossfile_tokens: u32,
    /// Tokens to generate (default 50, CrossCodeEval's line completion).
    pub max_new_tokens: u32,
}
