//! Prompt assembly: the cross-file block, the in-file context and a template, within a
//! token-exact budget measured with the model's own tokenizer.

mod block;
mod budget;
mod input;
mod settings;
mod template;

/// Test doubles, for the tests of this crate and the crates above it (always compiled, so a test
/// build and a release build share one build of the engine).
#[doc(hidden)]
pub mod testing;
#[cfg(test)]
mod tests;

pub use block::{CrossfileLayout, FILE_SEP, REPO_NAME, crossfile_block};
pub use budget::{
    Budget, Layout, Prompt, PromptTokens, STEADY_LINE_STEP, STEADY_SLACK_TOKENS, build, build_with,
    start_line,
};
pub use input::PromptInput;
pub use settings::PromptSettings;
pub use template::Template;
