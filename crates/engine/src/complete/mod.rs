//! The completion pipeline: retrieve, build the prompt, generate, post-process — with a trace
//! of every stage (chunks, the exact prompt, token counts, timings).
//!
//! The command line, the language server and the benchmark runner all complete through
//! [`Completer::complete`], in one of two configurations ([`Mode`]): exact (benchmarks,
//! `complete`) or live (the editors). Retrieval and prompt building are CPU work and run on the
//! blocking pool; generation is the backend's (async, cancellable).

mod mode;
mod prompts;
mod request;
mod setup;
mod steady;

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

pub use mode::{Exact, Live, Mode, Steady};
use prompts::shown;
#[cfg(test)]
use request::MAX_TOKEN_BYTES;
use request::bound_to_budget;
pub use setup::{backend_for, model_label, tokenizer_for};
pub use steady::{Shown, SteadyBlocks};

use crate::backend::{Backend, BackendError, Generation, after_leading_line_break};
use crate::config::Settings;
use crate::index::Snapshot;
use crate::lang::Language;
use crate::postprocess::{self, Unit};
use crate::prompt::{self, Budget, CrossfileLayout, Prompt, Template};
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

/// A benchmark's protocol: how a suggestion is cut and how many tokens it may take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Protocol {
    pub unit: Unit,
    /// `None`: the settings' `prompt.max_new_tokens`.
    pub max_new_tokens: Option<u32>,
}

/// Completes with one backend, tokenizer and template, in one [`Mode`].
#[derive(Clone)]
pub struct Completer {
    backend: Arc<dyn Backend>,
    tokenizer: Arc<dyn Tokenizer>,
    template: Template,
    /// How retrieved chunks are written before the file's text.
    layout: CrossfileLayout,
    budget: Budget,
    unit: Unit,
    mode: Mode,
}

/// What the blocking pool hands back: the retrieved hits and the prompts laid out from them.
struct LaidOut {
    query: Query,
    hits: Vec<Hit>,
    prompt: Prompt,
    /// The last answer's block and prompt, for the backend to answer from while it reads
    /// `prompt` ([`Completer::fallback`]).
    fallback: Option<(Vec<Hit>, Prompt)>,
    /// The prompt the next keystroke will likely send ([`Completer::read_ahead`]).
    read_ahead: Option<String>,
    retrieve_ms: f64,
    prompt_ms: f64,
}

impl Completer {
    /// A completer answering in `mode`. The template is `prompt.template` if set, else detected
    /// from the tokenizer's vocabulary ([`template_for`]); the layout is [`layout_for`]'s.
    pub fn new(
        settings: &Settings,
        backend: Arc<dyn Backend>,
        tokenizer: Arc<dyn Tokenizer>,
        mode: Mode,
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
            mode: Mode::default(),
        }
        .with_mode(mode)
    }

    /// The same completer answering in `mode`. Steady prompts remember token counts
    /// ([`MemoCounts`]): each keystroke lays out its prompt, its fallback and its read-ahead,
    /// which count mostly the same texts.
    pub fn with_mode(mut self, mode: Mode) -> Completer {
        let steady = |mode: &Mode| {
            matches!(
                mode,
                Mode::Live(Live {
                    steady: Some(_),
                    ..
                })
            )
        };
        if steady(&mode) && !steady(&self.mode) {
            self.tokenizer = Arc::new(MemoCounts::new(self.tokenizer));
        }
        self.mode = mode;
        self
    }

    /// The same completer answering exactly under a benchmark's `protocol`.
    pub fn exact_for(&self, protocol: Protocol) -> Completer {
        let mut exact = self.clone().with_mode(Mode::default());
        exact.unit = protocol.unit;
        if let Some(tokens) = protocol.max_new_tokens {
            exact.budget.max_new_tokens = tokens;
        }
        exact
    }

    pub fn mode(&self) -> &Mode {
        &self.mode
    }

    /// The live configuration, when this completer answers live.
    pub fn live(&self) -> Option<&Live> {
        match &self.mode {
            Mode::Live(live) => Some(live),
            Mode::Exact(_) => None,
        }
    }

    fn steady(&self) -> Option<&Steady> {
        self.live()?.steady.as_ref()
    }

    pub fn template(&self) -> Template {
        self.template
    }

    /// How this completer lays the cross-file block out.
    pub fn layout(&self) -> CrossfileLayout {
        self.layout
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    pub fn tokenizer(&self) -> &Arc<dyn Tokenizer> {
        &self.tokenizer
    }

    /// Retrieves with `retriever`, builds the prompt, generates and post-processes; live, at the
    /// end of a finished line, asks again for the next line when the answer was empty.
    pub async fn complete(
        &self,
        snapshot: Arc<Snapshot>,
        query: Query,
        retriever: Arc<dyn Retriever>,
        top_k: usize,
        cancel: &CancellationToken,
    ) -> Result<Completion, CompleteError> {
        let laid_out = self.lay_out(snapshot, query, retriever, top_k).await?;
        let offers_next_line = self.live().is_some()
            && self.unit == Unit::Line
            && ends_a_finished_line(&laid_out.query);
        let (query, completion) = self.answer(laid_out, offers_next_line, cancel).await?;
        // An empty answer (a backend whose stops apply from the start, or a model that ended at
        // once) is asked again with the line break in the prompt.
        if offers_next_line
            && completion.raw_suggestion.trim().is_empty()
            && after_leading_line_break(&completion.raw_suggestion).is_none()
            && !completion.generation.out_of_time
        {
            return self.next_line(query, completion, cancel).await;
        }
        Ok(completion)
    }

    /// Retrieval and the prompts, on the blocking pool.
    async fn lay_out(
        &self,
        snapshot: Arc<Snapshot>,
        query: Query,
        retriever: Arc<dyn Retriever>,
        top_k: usize,
    ) -> Result<LaidOut, CompleteError> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let hits = match this.steady() {
                Some(steady) => steady.blocks.order(
                    &query.path,
                    retriever.retrieve(&snapshot, &query.at_line_start(), top_k)?,
                ),
                None => retriever.retrieve(&snapshot, &query, top_k)?,
            };
            let retrieved = Instant::now();
            let prompt = this.prompt(&query, &hits);
            let fallback = this.fallback(&snapshot, &query, &prompt, &hits);
            let read_ahead = this.read_ahead(&query, &hits, &prompt);
            Ok(LaidOut {
                retrieve_ms: ms(started, retrieved),
                prompt_ms: retrieved.elapsed().as_secs_f64() * 1e3,
                query,
                hits,
                prompt,
                fallback,
                read_ahead,
            })
        })
        .await
        .map_err(|e| CompleteError::Task(e.to_string()))?
    }

    /// The backend's answer to the laid-out prompt, post-processed: the suggestion at the
    /// cursor, or the next line when `offers_next_line` and the answer starts below.
    async fn answer(
        &self,
        laid_out: LaidOut,
        offers_next_line: bool,
        cancel: &CancellationToken,
    ) -> Result<(Query, Completion), CompleteError> {
        let LaidOut {
            query,
            hits,
            prompt,
            fallback,
            read_ahead,
            retrieve_ms,
            prompt_ms,
        } = laid_out;
        let mut request = self.request(&prompt, &hits);
        request.fallback = fallback.as_ref().map(|(_, prompt)| prompt.text.clone());
        request.read_ahead = read_ahead;
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
        if let Some(steady) = self.steady() {
            steady
                .blocks
                .remember(&query.path, shown(&query, &hits, &prompt));
        }
        let generate_ms = started.elapsed().as_secs_f64() * 1e3;

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
        let completion = Completion {
            suggestion,
            raw_suggestion: generation.text.clone(),
            hits,
            timings: Timings {
                retrieve_ms,
                prompt_ms,
                generate_ms,
                postprocess_ms: started.elapsed().as_secs_f64() * 1e3,
                first_token_ms: generation.first_token_ms,
            },
            prompt,
            generation,
        };
        Ok((query, completion))
    }

    /// `completion`, an empty answer at the end of a finished line, replaced by the next line:
    /// asked again with the line break in the prompt, within what the empty answer left of the
    /// time budget.
    async fn next_line(
        &self,
        query: Query,
        mut completion: Completion,
        cancel: &CancellationToken,
    ) -> Result<Completion, CompleteError> {
        let mut next = query;
        next.left.push('\n');
        let prompt = self.prompt(&next, &completion.hits);
        let mut request = self.request(&prompt, &completion.hits);
        let timings = &mut completion.timings;
        // One time budget for the suggestion: the next line gets what the empty answer (its
        // prompt read and its one token) left of it, and at least a token.
        request.max_generate_ms = request
            .max_generate_ms
            .map(|budget| budget.saturating_sub(timings.generate_ms as u64).max(1));
        let started = Instant::now();
        let generation = bound_to_budget(
            self.backend.generate(&request, cancel).await?,
            self.budget.max_new_tokens,
        );
        timings.generate_ms += started.elapsed().as_secs_f64() * 1e3;
        let started = Instant::now();
        let language = next.language.unwrap_or(Language::Python);
        let below = self.line_below(language, &next.left, &next.right, &generation.text);
        timings.postprocess_ms += started.elapsed().as_secs_f64() * 1e3;
        if let Some(below) = below {
            completion.suggestion = below;
            completion.raw_suggestion = format!("\n{}", generation.text);
            completion.prompt = prompt;
            completion.generation = generation;
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

#[cfg(test)]
#[path = "completer_tests.rs"]
mod tests;
