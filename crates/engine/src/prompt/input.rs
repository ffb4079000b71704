//! What a prompt is built from, and how its parts are put together in a layout.

use super::Template;
use super::block::{CrossfileLayout, FILE_SEP, REPO_NAME};
use crate::lang::Language;
use crate::retrieve::Hit;

/// What a prompt is built from.
#[derive(Clone, Debug)]
pub struct PromptInput<'a> {
    /// The language of the file (the cross-file block's comment syntax).
    pub language: Language,
    /// The file's text before the cursor.
    pub left: &'a str,
    /// The file's text after the cursor (used by FIM templates only).
    pub right: &'a str,
    /// Retrieved chunks, best first.
    pub hits: &'a [Hit],
    /// How the chunks are written: CrossCodeEval's comments, or Qwen's repository-level format.
    pub layout: CrossfileLayout,
    /// The repository's name and the file's path in it (written by the `repo` layout; an empty
    /// name leaves the `<|repo_name|>` line out).
    pub repo: &'a str,
    pub path: &'a str,
}

impl PromptInput<'_> {
    /// The text before the template's prefix part and the left context: the cross-file
    /// `block` for the `comment` layout; for `repo`, the repository line, the block's file
    /// entries and the current file's header.
    pub(super) fn preamble(&self, block: &str) -> String {
        match self.layout {
            CrossfileLayout::Comment => block.to_string(),
            CrossfileLayout::Repo => {
                let repo = if self.repo.is_empty() {
                    String::new()
                } else {
                    format!("{REPO_NAME}{}\n", self.repo)
                };
                format!("{repo}{block}{FILE_SEP}{}\n", self.path)
            }
        }
    }

    /// The whole prompt text of the parts as kept.
    pub(super) fn assemble(
        &self,
        template: Template,
        block: &str,
        left: &str,
        right: &str,
    ) -> String {
        let preamble = self.preamble(block);
        match self.layout {
            CrossfileLayout::Comment => template.render(&[preamble.as_str(), left].concat(), right),
            CrossfileLayout::Repo => preamble + &template.render(left, right),
        }
    }
}
