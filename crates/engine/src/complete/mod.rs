//! The completion pipeline: retrieve, build the prompt, generate, post-process — with a trace
//! of every stage (chunks, the exact prompt, token counts, timings).
//!
//! The command line, the language server and the benchmark runner all complete through
//! [`Completer::complete`]. Retrieval and prompt building are CPU work and run on the blocking
//! pool; generation is the backend's (async, cancellable).

mod request;
mod setup;
mod steady;

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

#[cfg(test)]
use request::MAX_TOKEN_BYTES;
use request::bound_to_budget;
pub use setup::{backend_for, model_label, tokenizer_for};
pub use steady::{Shown, SteadyBlocks};

use crate::backend::{Backend, BackendError, Generation, Sampling, after_leading_line_break};
use crate::config::Settings;
use crate::index::Snapshot;
use crate::lang::Language;
use crate::postprocess::{self, Unit};
use crate::prompt::{self, Budget, CrossfileLayout, Layout, Prompt, PromptInput, Template};
use crate::retrieve::{Hit, Query, RetrieveError, Retriever};
use crate::tokenize::{MemoCounts, Tokenizer};

/// A finished completion and how it was made.
#[derive(Clone, Debug)]
pub struct Completion {
    /// The post-processed suggestion: what an editor inserts.
    pub suggestion: String,
    /// What the model generated, before post-processing.
    pub raw_suggestion: String,
    pub hits: Vec<Hit>,
    pub prompt: Prompt,
    pub generation: Generation,
    pub timings: Timings,
}

/// Wall time of each stage, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    pub retrieve_ms: f64,
    pub prompt_ms: f64,
    pub generate_ms: f64,
    pub postprocess_ms: f64,
    /// From the generation request to the first token, when the backend reports it.
    pub first_token_ms: Option<f64>,
}

/// Why a completion failed.
#[derive(Debug, thiserror::Error)]
pub enum CompleteError {
    #[error(transparent)]
    Retrieve(#[from] RetrieveError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error("a completion task failed: {0}")]
    Task(String),
}

/// The prompt template a completer with `settings` uses: `prompt.template` if set, else the one
/// the tokenizer's vocabulary has the special tokens of.
pub fn template_for(settings: &Settings, tokenizer: &dyn Tokenizer) -> Template {
    settings
        .prompt
        .template
        .unwrap_or_else(|| Template::detect(tokenizer))
}

/// The layout is `prompt.layout` if set, else `comment` for every model: the catalogue's
/// Qwen2.5-Coder models are instruction-tuned, and the 0.5B completes better with the chunks as
/// comments than in the repository-level format its base model was trained on
/// (docs/performance.md, "The prompt's layout"). A `repo` layout asked of a vocabulary without
/// those tokens would write them as plain text: it is `comment` then, with a warning.
pub fn layout_for(settings: &Settings, tokenizer: &dyn Tokenizer) -> CrossfileLayout {
    let has_repo_tokens = [prompt::REPO_NAME, prompt::FILE_SEP]
        .iter()
        .all(|token| tokenizer.token_id(token).is_some());
    match settings.prompt.layout {
        Some(CrossfileLayout::Repo) if !has_repo_tokens => {
            tracing::warn!(
                "prompt.layout = \"repo\" needs a vocabulary with {} and {}; this model's has \
                 none, so chunks are laid out as comments",
                prompt::REPO_NAME,
                prompt::FILE_SEP
            );
            CrossfileLayout::Comment
        }
        Some(layout) => layout,
        None => CrossfileLayout::Comment,
    }
}

/// Completes with one backend, tokenizer and template.
#[derive(Clone)]
pub struct Completer {
    backend: Arc<dyn Backend>,
    tokenizer: Arc<dyn Tokenizer>,
    template: Template,
    /// How retrieved chunks are written before the file's text.
    layout: CrossfileLayout,
    budget: Budget,
    unit: Unit,
    /// Whether the backend may reuse a kept KV cache ([`GenerateRequest::reuse_kv`]).
    reuse_kv: bool,
    /// The decoding time budget ([`GenerateRequest::max_generate_ms`]).
    max_generate_ms: Option<u64>,
    /// Live prompts that stay the same while the user types (`None`: the exact layout).
    steady: Option<Arc<SteadyBlocks>>,
    /// At the end of a finished line, where the model goes on with a line break, suggest the
    /// next line (live completion).
    next_line: bool,
    /// Whether the backend may answer from the last answer's layout while it reads a changed
    /// prompt ([`GenerateRequest::fallback`]); off for the answer that replaces such an answer.
    fallback: bool,
    /// Sampling settings for the backend (`None`: greedy).
    sampling: Option<Sampling>,
    /// Live prompts' right context: the rest of the cursor's line and this many lines below
    /// (`None`: all the budget allows).
    right_lines: Option<usize>,
    /// A text whose likelihood as the answer is measured beside it (a case's reference,
    /// [`GenerateRequest::likelihood_of`]).
    likelihood_of: Option<String>,
}

impl Completer {
    /// The template is `prompt.template` if set, else detected from the tokenizer's vocabulary.
    pub fn new(
        settings: &Settings,
        backend: Arc<dyn Backend>,
        tokenizer: Arc<dyn Tokenizer>,
    ) -> Completer {
        let template = template_for(settings, tokenizer.as_ref());
        let layout = layout_for(settings, tokenizer.as_ref());
        Completer {
            backend,
            tokenizer,
            template,
            layout,
            budget: Budget {
                context_tokens: settings.model.n_ctx,
                max_new_tokens: settings.prompt.max_new_tokens,
                crossfile_tokens: settings.prompt.crossfile_tokens,
            },
            unit: settings.postprocess.unit,
            reuse_kv: false,
            max_generate_ms: None,
            steady: None,
            next_line: false,
            fallback: true,
            sampling: None,
            right_lines: None,
            likelihood_of: None,
        }
    }

    /// The same completer suggesting the next line at the end of a finished line, where the
    /// model goes on with a line break (live completion; the benchmarks' `line` unit is
    /// untouched by default): the line break is kept and the following line suggested, from the
    /// same answer where the backend lets it start below ([`GenerateRequest::may_start_below`]),
    /// or asked again after the line break where its answer is empty.
    pub fn with_next_line(mut self, next_line: bool) -> Completer {
        self.next_line = next_line;
        self
    }

    /// Whether a line break at a finished line's end becomes the next line.
    pub fn offers_next_line(&self) -> bool {
        self.next_line
    }

    /// The same completer laying prompts out to stay the same while the user types (live
    /// completion: [`Layout::Steady`]; retrieval at the start of the cursor's line, so the
    /// chunks change from line to line, not at each keystroke; and each file's last cross-file
    /// block kept in its order while retrieval still ranks its chunks best), or exactly as the
    /// benchmarks do (the default). Steady prompts remember token counts ([`MemoCounts`]): each
    /// keystroke lays out its prompt, its fallback and its read-ahead, which count mostly the
    /// same texts.
    pub fn with_steady_prompts(mut self, steady: bool) -> Completer {
        if steady && self.steady.is_none() {
            self.tokenizer = Arc::new(MemoCounts::new(self.tokenizer));
        }
        self.steady = steady.then(|| self.steady.clone().unwrap_or_default());
        self
    }

    /// The same completer showing, in steady (live) prompts, only the rest of the cursor's line
    /// and `lines` lines below it as the right context (`None`: all the budget allows). What
    /// follows the cursor is read again at every keystroke, so a short right context keeps a
    /// fill-in-the-middle prompt's changed tail short.
    pub fn with_live_right_lines(mut self, lines: Option<usize>) -> Completer {
        self.right_lines = lines;
        self
    }

    /// The same completer also measuring how likely the model finds `text` as the answer
    /// ([`crate::backend::Generation::likelihood`]; a benchmark case's reference).
    pub fn with_likelihood_of(mut self, text: Option<String>) -> Completer {
        self.likelihood_of = text;
        self
    }

    /// The same completer stopping decoding after `ms` milliseconds (`None` or 0: no limit).
    pub fn with_generate_budget(mut self, ms: Option<u64>) -> Completer {
        self.max_generate_ms = ms.filter(|&ms| ms > 0);
        self
    }

    /// The same completer letting the backend reuse a kept KV cache (live completion), or not
    /// (an exact answer: the default).
    pub fn with_kv_reuse(mut self, reuse_kv: bool) -> Completer {
        self.reuse_kv = reuse_kv;
        self
    }

    /// The same completer cutting suggestions to another unit (a benchmark's protocol).
    pub fn with_unit(mut self, unit: Unit) -> Completer {
        self.unit = unit;
        self
    }

    /// The same completer generating at most `tokens` tokens (a benchmark's protocol).
    pub fn with_max_new_tokens(mut self, tokens: u32) -> Completer {
        self.budget.max_new_tokens = tokens;
        self
    }

    pub fn template(&self) -> Template {
        self.template
    }

    /// How this completer lays the cross-file block out.
    pub fn layout(&self) -> CrossfileLayout {
        self.layout
    }

    /// The same completer letting the backend answer from the last answer's layout while it
    /// reads a prompt with another cross-file block or start (the default), or asking for this
    /// prompt's own answer (the answer that replaces one made so).
    pub fn with_fallback(mut self, fallback: bool) -> Completer {
        self.fallback = fallback;
        self
    }

    /// The same completer sampling with `sampling` (one sample of a case: its own seed), or
    /// greedy (`None`, the default).
    pub fn with_sampling(mut self, sampling: Option<Sampling>) -> Completer {
        self.sampling = sampling;
        self
    }

    /// Whether the backend may reuse a kept KV cache for this completer's requests.
    pub fn reuses_kv(&self) -> bool {
        self.reuse_kv
    }

    /// Whether prompts are laid out to stay the same while the user types.
    pub fn steady_prompts(&self) -> bool {
        self.steady.is_some()
    }

    /// The decoding time budget of this completer's requests, in milliseconds.
    pub fn generate_budget(&self) -> Option<u64> {
        self.max_generate_ms
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    pub fn tokenizer(&self) -> &Arc<dyn Tokenizer> {
        &self.tokenizer
    }

    /// Retrieves with `retriever`, builds the prompt, generates and post-processes.
    pub async fn complete(
        &self,
        snapshot: Arc<Snapshot>,
        query: Query,
        retriever: Arc<dyn Retriever>,
        top_k: usize,
        cancel: &CancellationToken,
    ) -> Result<Completion, CompleteError> {
        let this = self.clone();
        let (hits, prompt, fallback, read_ahead, query, retrieve_ms, prompt_ms) =
            tokio::task::spawn_blocking(move || {
                let started = Instant::now();
                let hits = match &this.steady {
                    Some(steady) => steady.order(
                        &query.path,
                        retriever.retrieve(&snapshot, &query.at_line_start(), top_k)?,
                    ),
                    None => retriever.retrieve(&snapshot, &query, top_k)?,
                };
                let retrieved = Instant::now();
                let prompt = this.prompt(&query, &hits);
                let fallback = this.fallback(&snapshot, &query, &prompt, &hits);
                let read_ahead = this.read_ahead(&query, &hits, &prompt);
                let retrieve_ms = ms(started, retrieved);
                Ok::<_, CompleteError>((
                    hits,
                    prompt,
                    fallback,
                    read_ahead,
                    query,
                    retrieve_ms,
                    retrieved.elapsed().as_secs_f64() * 1e3,
                ))
            })
            .await
            .map_err(|e| CompleteError::Task(e.to_string()))??;

        let mut request = self.request(&prompt, &hits);
        request.fallback = fallback.as_ref().map(|(_, prompt)| prompt.text.clone());
        request.read_ahead = read_ahead;
        let offers_next_line =
            self.next_line && self.unit == Unit::Line && ends_a_finished_line(&query);
        request.may_start_below = offers_next_line;
        let started = Instant::now();
        let generation = bound_to_budget(
            self.backend.generate(&request, cancel).await?,
            self.budget.max_new_tokens,
        );
        let (hits, prompt) = match fallback {
            Some((old, fallback)) if generation.from_fallback => (old, fallback),
            _ => (hits, prompt),
        };
        if let Some(steady) = &self.steady {
            steady.remember(&query.path, shown(&query, &hits, &prompt));
        }
        let mut generate_ms = started.elapsed().as_secs_f64() * 1e3;

        let started = Instant::now();
        let language = query.language.unwrap_or(Language::Python);
        let suggestion = match after_leading_line_break(&generation.text) {
            // The next line, in the same answer (a backend that honours `may_start_below`).
            Some(below) if offers_next_line => self
                .line_below(
                    language,
                    &format!("{}\n", query.left),
                    &query.right,
                    &generation.text[below..],
                )
                .unwrap_or_default(),
            _ => postprocess::apply(
                self.unit,
                language,
                &query.left,
                &query.right,
                &generation.text,
            ),
        };
        let mut postprocess_ms = started.elapsed().as_secs_f64() * 1e3;
        let mut completion = Completion {
            suggestion,
            raw_suggestion: generation.text.clone(),
            hits,
            timings: Timings {
                retrieve_ms,
                prompt_ms,
                generate_ms,
                postprocess_ms,
                first_token_ms: generation.first_token_ms,
            },
            prompt,
            generation,
        };
        // An empty answer (a backend whose stops apply from the start, or a model that ended at
        // once) is asked again with the line break in the prompt.
        if offers_next_line
            && completion.raw_suggestion.trim().is_empty()
            && after_leading_line_break(&completion.raw_suggestion).is_none()
            && !completion.generation.out_of_time
        {
            let mut next = query;
            next.left.push('\n');
            let prompt = self.prompt(&next, &completion.hits);
            let mut request = self.request(&prompt, &completion.hits);
            // One time budget for the suggestion: the next line gets what the empty answer (its
            // prompt read and its one token) left of it, and at least a token.
            request.max_generate_ms = request
                .max_generate_ms
                .map(|budget| budget.saturating_sub(generate_ms as u64).max(1));
            let started = Instant::now();
            let generation = bound_to_budget(
                self.backend.generate(&request, cancel).await?,
                self.budget.max_new_tokens,
            );
            generate_ms += started.elapsed().as_secs_f64() * 1e3;
            let started = Instant::now();
            let below = self.line_below(language, &next.left, &next.right, &generation.text);
            postprocess_ms += started.elapsed().as_secs_f64() * 1e3;
            if let Some(below) = below {
                completion.suggestion = below;
                completion.raw_suggestion = format!("\n{}", generation.text);
                completion.prompt = prompt;
                completion.generation = generation;
            }
            completion.timings.generate_ms = generate_ms;
            completion.timings.postprocess_ms = postprocess_ms;
        }
        Ok(completion)
    }

    /// The suggestion of the line after a finished line's end: `text`, the model's answer from
    /// the start of that line (`left` ends with the line break), post-processed and put after a
    /// newline; `None` when it is blank.
    fn line_below(
        &self,
        language: Language,
        left: &str,
        right: &str,
        text: &str,
    ) -> Option<String> {
        let line = postprocess::apply(self.unit, language, left, right, text);
        (!line.trim().is_empty()).then(|| format!("\n{line}"))
    }

    /// When steady prompts meet a kept KV cache and `prompt` shows another cross-file block or
    /// starts its left context elsewhere than the last answer's in the same file: that answer's
    /// block and start with this cursor's text, an answer the backend may give at once while it
    /// reads the new prompt ([`GenerateRequest::fallback`]).
    fn fallback(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        prompt: &Prompt,
        hits: &[Hit],
    ) -> Option<(Vec<Hit>, Prompt)> {
        if !self.fallback || !self.reads_ahead() {
            return None;
        }
        let old = self.steady.as_ref()?.replaced(
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
    /// finds it ready ([`GenerateRequest::read_ahead`]).
    fn read_ahead(&self, query: &Query, hits: &[Hit], prompt: &Prompt) -> Option<String> {
        if !self.reads_ahead() {
            return None;
        }
        let next = self.prompt_laid_out(query, hits, Layout::SteadyNext);
        (next.text != prompt.text).then_some(next.text)
    }

    /// Whether prompts are steady and go to a backend that keeps KV caches: only then are a
    /// fallback and a prompt to read ahead worth building (two more prompts per keystroke).
    fn reads_ahead(&self) -> bool {
        self.reuse_kv && self.steady.is_some() && self.backend.keeps_contexts()
    }

    /// The prompt for `query` with `hits`, within the budget, laid out exactly or steadily.
    pub fn prompt(&self, query: &Query, hits: &[Hit]) -> Prompt {
        let layout = if self.steady.is_some() {
            Layout::Steady
        } else {
            Layout::Exact
        };
        self.prompt_laid_out(query, hits, layout)
    }

    fn prompt_laid_out(&self, query: &Query, hits: &[Hit], start: Layout) -> Prompt {
        // Context a benchmark case provides (CrossCodeEval's own `crossfile_context`) keeps the
        // benchmark's layout, so its prompts are the dataset's.
        let layout = if hits.iter().any(|hit| hit.chunker.is_none()) {
            CrossfileLayout::Comment
        } else {
            self.layout
        };
        let right = match self.right_lines {
            Some(lines) if self.steady.is_some() => lines_ahead(&query.right, lines),
            _ => &query.right,
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

/// Whether the cursor is at the end of a line with code before it: nothing but blanks after it
/// on its line, something else before it.
fn ends_a_finished_line(query: &Query) -> bool {
    let before = query.left.rsplit('\n').next().unwrap_or_default();
    let after = query.right.split('\n').next().unwrap_or_default();
    !before.trim().is_empty() && after.trim().is_empty()
}

fn ms(from: Instant, to: Instant) -> f64 {
    (to - from).as_secs_f64() * 1e3
}

/// What `prompt`, laid out for `query` from `hits`, shows: its block's chunks and the line its
/// left context starts at.
fn shown(query: &Query, hits: &[Hit], prompt: &Prompt) -> Shown {
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

#[cfg(test)]
#[path = "completer_tests.rs"]
mod tests;
