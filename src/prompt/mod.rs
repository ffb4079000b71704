//! Prompt assembly: the cross-file block, the in-file context and a template, within a
//! token-exact budget measured with the model's own tokenizer.

mod block;
mod budget;
mod settings;
mod template;

#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;

pub use block::crossfile_block;
pub use budget::{
    Budget, Layout, Prompt, PromptInput, PromptTokens, STEADY_LINE_STEP, STEADY_SLACK_TOKENS,
    build, build_with, start_line,
};
pub use settings::PromptSettings;
pub use template::Template;
