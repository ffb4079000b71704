//! The prompts a completer lays out for a query: the one it sends (exact, or steady while the
//! user types), and, live over a kept KV cache, the last answer's layout to answer from while the
//! new prompt is read (the fallback) and the prompt the next keystroke will likely send (the
//! read-ahead).

use super::{Completer, Shown};
use crate::index::Snapshot;
use crate::lang::Language;
use crate::prompt::{self, CrossfileLayout, Layout, Prompt, PromptInput};
use crate::retrieve::{Hit, Query};

impl Completer {
    /// The prompt for `query` with `hits`, within the budget, laid out exactly or steadily.
    pub fn prompt(&self, query: &Query, hits: &[Hit]) -> Prompt {
        let layout = if self.steady().is_some() {
            Layout::Steady
        } else {
            Layout::Exact
        };
        self.prompt_laid_out(query, hits, layout)
    }

    /// When steady prompts meet a kept KV cache and `prompt` shows another cross-file block or
    /// starts its left context elsewhere than the last answer's in the same file: that answer's
    /// block and start with this cursor's text, an answer the backend may give at once while it
    /// reads the new prompt ([`crate::backend::GenerateRequest::fallback`]).
    pub(super) fn fallback(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        prompt: &Prompt,
        hits: &[Hit],
    ) -> Option<(Vec<Hit>, Prompt)> {
        if !self.live()?.fallback || !self.reads_ahead() {
            return None;
        }
        let old = self.steady()?.blocks.replaced(
            &query.path,
            &hits[..prompt.hits_used.min(hits.len())],
            prompt::start_line(&query.left, &prompt.left),
        )?;
        // Only chunks the index still holds as they were: nothing from a deleted or edited file.
        let current = |hit: &Hit| {
            snapshot
                .file(&hit.path)
                .is_some_and(|file| file.text.contains(hit.text.as_str()))
        };
        if !old.block.iter().all(current) {
            return None;
        }
        let layout = old.left_line.map_or(Layout::Steady, Layout::SteadyFrom);
        let fallback = self.prompt_laid_out(query, &old.block, layout);
        // The old block whole and the old start (a larger block, or a start that no longer
        // fits, would lay out a prompt no cache holds).
        let as_shown = fallback.hits_used == old.block.len()
            && prompt::start_line(&query.left, &fallback.left) == old.left_line;
        (as_shown && fallback.text != prompt.text).then_some((old.block, fallback))
    }

    /// When steady prompts meet a kept KV cache: `prompt` with its left context starting where
    /// it will start next, for the backend to read while no request waits, so that the step
    /// finds it ready ([`crate::backend::GenerateRequest::read_ahead`]).
    pub(super) fn read_ahead(
        &self,
        query: &Query,
        hits: &[Hit],
        prompt: &Prompt,
    ) -> Option<String> {
        if !self.reads_ahead() {
            return None;
        }
        let next = self.prompt_laid_out(query, hits, Layout::SteadyNext);
        (next.text != prompt.text).then_some(next.text)
    }

    /// Whether prompts are steady and go to a backend that keeps KV caches: only then are a
    /// fallback and a prompt to read ahead worth building (two more prompts per keystroke).
    fn reads_ahead(&self) -> bool {
        self.live().is_some_and(|live| live.reuse_kv)
            && self.steady().is_some()
            && self.backend.keeps_contexts()
    }

    fn prompt_laid_out(&self, query: &Query, hits: &[Hit], start: Layout) -> Prompt {
        // Context a benchmark case provides (CrossCodeEval's own `crossfile_context`) keeps the
        // benchmark's layout, so its prompts are the dataset's.
        let layout = if hits.iter().any(|hit| hit.chunker.is_none()) {
            CrossfileLayout::Comment
        } else {
            self.layout
        };
        let right = match self.steady().and_then(|steady| steady.right_lines) {
            Some(lines) => lines_ahead(&query.right, lines),
            None => &query.right,
        };
        let input = PromptInput {
            language: query.language.unwrap_or(Language::Python),
            left: &query.left,
            right,
            hits,
            layout,
            repo: &query.repo,
            path: &query.path,
        };
        prompt::build_with(
            &input,
            self.template,
            self.tokenizer.as_ref(),
            self.budget,
            start,
        )
    }
}

/// What `prompt`, laid out for `query` from `hits`, shows: its block's chunks and the line its
/// left context starts at.
pub(super) fn shown(query: &Query, hits: &[Hit], prompt: &Prompt) -> Shown {
    Shown {
        block: hits[..prompt.hits_used.min(hits.len())].to_vec(),
        left_line: prompt::start_line(&query.left, &prompt.left),
    }
}

/// The rest of the cursor's line and `lines` lines after it (the line breaks between them kept).
fn lines_ahead(right: &str, lines: usize) -> &str {
    right
        .match_indices('\n')
        .nth(lines)
        .map_or(right, |(at, _)| &right[..at])
}
