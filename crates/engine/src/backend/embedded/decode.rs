//! Reading a prompt into a llama.cpp context and generating from it: one request's decode in
//! its slot, the slot's cache and its token record kept in agreement at every step.

use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

use super::likelihood::Scoring;
use super::text::Text;
use super::worker::{Job, WorkerConfig};
use super::{argmax, ms, reuse};
use crate::backend::{BackendError, Generation, Sampling};

/// Prompt tokens decoded per llama.cpp call; cancellation is checked between calls.
const PROMPT_CHUNK: usize = 512;

/// A kept context and the tokens its KV cache holds, in position order.
pub(super) struct Slot<'m> {
    pub(super) ctx: LlamaContext<'m>,
    pub(super) tokens: Vec<LlamaToken>,
    /// The leading tokens whose KV was evaluated in whole aligned blocks of a prompt
    /// ([`reuse::BLOCK`]): what an exact plan may keep.
    pub(super) whole: usize,
    /// When it was last used (the pool's clock).
    pub(super) used: u64,
    /// The prompt's length when `tokens` is a greedy live answer's prompt and the tokens it
    /// generated before its time budget cut it: an answer [`Decode::resume`] can go on with.
    pub(super) cut_answer: Option<usize>,
}

impl Slot<'_> {
    pub(super) fn empty(&mut self) {
        self.ctx.clear_kv_cache();
        self.tokens.clear();
        self.whole = 0;
        self.cut_answer = None;
    }

    /// Whether this slot holds `prompt`'s greedy answer cut by its time budget, to go on with.
    pub(super) fn resumes(&self, prompt: &[LlamaToken]) -> bool {
        self.cut_answer == Some(prompt.len())
            && self.tokens.len() > prompt.len()
            && self.tokens.starts_with(prompt)
    }
}

pub(super) fn model_error(config: &WorkerConfig, message: String) -> BackendError {
    BackendError::Model {
        model: config.path.display().to_string(),
        message,
    }
}

/// One request's decode in its slot.
pub(super) struct Decode<'s, 'm> {
    pub(super) slot: &'s mut Slot<'m>,
    pub(super) config: &'s WorkerConfig,
    pub(super) model: &'m LlamaModel,
    /// A kept context, read in blocks; else a fresh one, read in batches.
    pub(super) live: bool,
}

impl Decode<'_, '_> {
    /// Cuts the cache to `plan` and reads `range` of the prompt, block by block, without
    /// logits: reading ahead, in a kept context.
    pub(super) fn read_ahead(
        mut self,
        tokens: &[LlamaToken],
        plan: &reuse::Plan,
        range: std::ops::Range<usize>,
    ) -> Result<(), BackendError> {
        let exact = self.prepare(plan)?;
        let mut batch = LlamaBatch::new(reuse::BLOCK, 1);
        for chunk in reuse::blocks(range) {
            batch.clear();
            for at in chunk.clone() {
                self.add(&mut batch, tokens[at], at, false)?;
            }
            self.decode_chunk(&mut batch, tokens, chunk, exact)?;
        }
        Ok(())
    }

    /// Cuts and shifts the cache to what `plan` keeps and records what stays evaluated in whole
    /// blocks: an exact plan's prefix; a shifted plan's prefix up to its last whole block
    /// (nothing after a shifted run is exact). Whether the plan was exact.
    fn prepare(&mut self, plan: &reuse::Plan) -> Result<bool, BackendError> {
        self.slot.cut_answer = None;
        let exact = plan.is_exact(self.slot.whole);
        let reused = self.keep(plan)?;
        self.slot.whole = if exact {
            reused
        } else {
            plan.prefix.min(self.slot.whole) / reuse::BLOCK * reuse::BLOCK
        };
        Ok(exact)
    }

    /// Decodes `batch`, which holds `chunk` of the prompt, and records it in the slot.
    fn decode_chunk(
        &mut self,
        batch: &mut LlamaBatch,
        tokens: &[LlamaToken],
        chunk: std::ops::Range<usize>,
        exact: bool,
    ) -> Result<(), BackendError> {
        self.slot
            .ctx
            .decode(batch)
            .map_err(|e| self.error(format!("decoding the prompt: {e}")))?;
        self.slot.tokens.extend_from_slice(&tokens[chunk.clone()]);
        if self.live && exact && chunk.end.is_multiple_of(reuse::BLOCK) {
            self.slot.whole = chunk.end;
        }
        Ok(())
    }

    pub(super) fn run(
        mut self,
        tokens: &[LlamaToken],
        plan: &reuse::Plan,
        job: &Job,
        generation: &mut Generation,
    ) -> Result<(), BackendError> {
        let cancel = &job.cancel;
        let live = self.live;
        let exact = self.prepare(plan)?;
        let reused = self.slot.tokens.len();
        generation.reused_tokens = Some(u32::try_from(reused).unwrap_or(u32::MAX));

        // Live completion reads the prompt in aligned blocks, so a later prompt can keep them: a
        // prompt read from nothing (a file's first suggestion, asked before typing, the longest
        // read) in runs of blocks, which read faster; the rest of a kept prompt (read while the
        // user types, where a keystroke's cancel must land soon) a block at a time. An exact
        // request (a fresh context) in chunks as large as a batch, as it always has.
        let batch_len = if live {
            reuse::RUN
        } else {
            PROMPT_CHUNK.min(usize::try_from(self.config.n_ctx.min(512)).unwrap_or(1))
        };
        let chunks: Vec<std::ops::Range<usize>> = if live {
            let run = if reused == 0 {
                reuse::RUN
            } else {
                reuse::BLOCK
            };
            reuse::runs(reused..tokens.len(), run)
        } else {
            (reused..tokens.len())
                .step_by(batch_len)
                .map(|at| at..(at + batch_len).min(tokens.len()))
                .collect()
        };
        let mut batch = LlamaBatch::new(batch_len, 1);

        // The rest of the prompt, a chunk at a time, logits for its last token only.
        let prompt_start = Instant::now();
        let last = tokens.len() - 1;
        for chunk in chunks {
            if cancel.is_cancelled() {
                return Err(BackendError::Cancelled);
            }
            batch.clear();
            for at in chunk.clone() {
                self.add(&mut batch, tokens[at], at, at == last)?;
            }
            self.decode_chunk(&mut batch, tokens, chunk, exact)?;
        }
        generation.prompt_ms = Some(ms(prompt_start));
        // An exact request may ask how likely a text is as the answer: its first token from the
        // prompt's last logits, read now, the rest once the answer is done.
        let scoring = match &job.request.likelihood_of {
            Some(text) if !live => {
                let text_tokens = self.model.vocab().tokenize(text.as_bytes(), false, false);
                let fits = tokens.len() + text_tokens.len()
                    <= usize::try_from(self.config.n_ctx).unwrap_or(usize::MAX);
                let logits = self.slot.ctx.get_logits_ith(batch.n_tokens() - 1);
                Scoring::start(text_tokens, logits).filter(|_| fits)
            }
            _ => None,
        };
        self.answer(
            &mut batch,
            tokens.len(),
            Text::new(&job.request),
            0,
            job,
            generation,
        )?;
        if let Some(scoring) = scoring {
            generation.likelihood = Some(self.score_rest(tokens.len(), scoring, cancel)?);
        }
        Ok(())
    }

    /// The rest of a text's likelihood after its first token: the answer's tokens leave the
    /// cache, the text's tokens but its last are read after the prompt in batches, logits for
    /// each, and each gives the next token's log-probability.
    fn score_rest(
        &mut self,
        prompt_len: usize,
        mut scoring: Scoring,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<crate::backend::Likelihood, BackendError> {
        let position =
            u32::try_from(prompt_len).map_err(|_| self.error(format!("position {prompt_len}")))?;
        self.slot
            .ctx
            .kv_cache_seq_rm(0, Some(position), None)
            .map_err(|e| self.error(format!("scoring the reference: {e}")))?;
        self.slot.tokens.truncate(prompt_len);
        let read = scoring.tokens.len().saturating_sub(1);
        let batch_len = PROMPT_CHUNK.min(usize::try_from(self.config.n_ctx).unwrap_or(1));
        let mut batch = LlamaBatch::new(batch_len, 1);
        for start in (0..read).step_by(batch_len) {
            if cancel.is_cancelled() {
                return Err(BackendError::Cancelled);
            }
            let end = (start + batch_len).min(read);
            batch.clear();
            for at in start..end {
                self.add(&mut batch, scoring.tokens[at], prompt_len + at, true)?;
            }
            self.slot
                .ctx
                .decode(&mut batch)
                .map_err(|e| self.error(format!("scoring the reference: {e}")))?;
            for (row, at) in (start..end).enumerate() {
                let row = i32::try_from(row).unwrap_or(i32::MAX);
                scoring.add(at + 1, self.slot.ctx.get_logits_ith(row));
            }
        }
        Ok(scoring.finish())
    }

    /// Generates the rest of a greedy answer this live slot was cut from by its time budget
    /// ([`Slot::cut_answer`]): the last generated token is decoded again alone, as it was, for
    /// its logits, and decoding goes on. The cache then holds what it would hold had the answer
    /// never been cut, so the whole answer is the uncut one's.
    pub(super) fn resume(
        mut self,
        prompt_len: usize,
        job: &Job,
        generation: &mut Generation,
    ) -> Result<(), BackendError> {
        let Some(&last) = self.slot.tokens.last() else {
            return Err(self.error("no answer to resume".into()));
        };
        let at = self.slot.tokens.len() - 1;
        self.slot.cut_answer = None;
        let position = u32::try_from(at).map_err(|_| self.error(format!("position {at}")))?;
        self.slot
            .ctx
            .kv_cache_seq_rm(0, Some(position), None)
            .map_err(|e| self.error(format!("resuming: {e}")))?;
        self.slot.tokens.truncate(at);
        let mut batch = LlamaBatch::new(1, 1);
        self.add(&mut batch, last, at, true)?;
        self.slot
            .ctx
            .decode(&mut batch)
            .map_err(|e| self.error(format!("resuming: {e}")))?;
        self.slot.tokens.push(last);
        generation.reused_tokens = Some(u32::try_from(prompt_len).unwrap_or(u32::MAX));
        generation.prompt_ms = Some(0.0);
        // The text so far, through the same stops (a request with other stops may end in it).
        let vocab = self.model.vocab();
        let mut text = Text::new(&job.request);
        let mut piece = Vec::new();
        let mut generated = 0u32;
        for &token in &self.slot.tokens[prompt_len..] {
            generated += 1;
            piece.clear();
            vocab.token_to_piece_into(token, &mut piece, false, None);
            if text.push(&piece) || generated >= job.request.max_tokens {
                generation.generated_tokens = Some(generated);
                generation.text = text.finish();
                return Ok(());
            }
        }
        self.answer(&mut batch, prompt_len, text, generated, job, generation)
    }

    /// Generates from the logits of `batch`'s last token, the slot holding `prompt_len` prompt
    /// tokens and `generated` tokens already answered (their text in `text`).
    fn answer(
        &mut self,
        batch: &mut LlamaBatch,
        prompt_len: usize,
        mut text: Text<'_>,
        mut generated: u32,
        job: &Job,
        generation: &mut Generation,
    ) -> Result<(), BackendError> {
        let cancel = &job.cancel;
        let vocab = self.model.vocab();
        let generate_start = Instant::now();
        let max_tokens = job.request.max_tokens;
        let mut piece = Vec::new();
        // A live request's budget is counted from its arrival: its read (a keystroke's change
        // to a kept prompt) and any wait for the worker come out of it. A fresh context's read
        // is the whole prompt, which no such budget covers: its budget starts here.
        let counted_from = if self.live { job.start } else { generate_start };
        let deadline = job
            .request
            .max_generate_ms
            .map(|ms| counted_from + std::time::Duration::from_millis(ms));
        let mut sampler = job.request.sampling.map(sampler_for);
        let resumed = generated;
        let greedy = sampler.is_none();
        while generated < max_tokens {
            if cancel.is_cancelled() {
                if self.live && greedy && generated > 0 {
                    // Cut here as by a budget: the slot holds the answer so far, consistently.
                    self.slot.cut_answer = Some(prompt_len);
                }
                return Err(BackendError::Cancelled);
            }
            if generated > resumed && deadline.is_some_and(|at| Instant::now() >= at) {
                generation.out_of_time = true;
                break;
            }
            let last = batch.n_tokens() - 1;
            let token = match sampler.as_mut() {
                Some(sampler) => sampler.sample(&self.slot.ctx, last),
                None => argmax(self.slot.ctx.get_logits_ith(last)),
            };
            if generated == resumed {
                generation.first_token_ms = Some(ms(job.start));
            }
            // End of generation, or any other control token: no code contains one.
            if vocab.is_eog(token) || vocab.is_control(token) {
                break;
            }
            generated += 1;
            piece.clear();
            vocab.token_to_piece_into(token, &mut piece, false, None);
            if text.push(&piece) || generated == max_tokens {
                break;
            }
            batch.clear();
            let pos = self.slot.tokens.len();
            self.add(batch, token, pos, true)?;
            self.slot
                .ctx
                .decode(batch)
                .map_err(|e| self.error(format!("decoding token {generated}: {e}")))?;
            self.slot.tokens.push(token);
        }
        generation.generate_ms = Some(ms(generate_start));
        generation.generated_tokens = Some(generated);
        tracing::debug!(
            prompt_tokens = prompt_len,
            reused = generation.reused_tokens,
            prompt_ms = generation.prompt_ms,
            generated,
            resumed,
            generate_ms = generation.generate_ms,
            live = self.live,
            "decoded"
        );
        // A greedy live answer cut by its budget can be resumed while the slot holds it.
        if self.live && generation.out_of_time && greedy {
            self.slot.cut_answer = Some(prompt_len);
        }
        generation.text = if generation.out_of_time {
            text.whole_characters()
        } else {
            text.finish()
        };
        Ok(())
    }

    /// Cuts and shifts the slot's cache to what `plan` keeps; the number of prompt tokens it then
    /// holds. A cache that refuses a partial removal is emptied instead (nothing reused).
    fn keep(&mut self, plan: &reuse::Plan) -> Result<usize, BackendError> {
        let kept = self.apply(plan);
        if kept.is_err() {
            self.slot.ctx.clear_kv_cache();
            self.slot.tokens.clear();
            return Ok(0);
        }
        let reused = plan.reused();
        let mut tokens = self.slot.tokens[..plan.prefix].to_vec();
        for shift in &plan.shifts {
            tokens.extend_from_slice(&self.slot.tokens[shift.from..shift.from + shift.len]);
        }
        debug_assert_eq!(tokens.len(), reused);
        self.slot.tokens = tokens;
        Ok(reused)
    }

    /// The cache operations of `plan`, as llama.cpp's server makes them: before each shifted run,
    /// the stale positions between its new and old place are removed, then the run moves; at
    /// the end, everything after the reused tokens goes.
    fn apply(&mut self, plan: &reuse::Plan) -> Result<(), String> {
        let position = |p: usize| u32::try_from(p).map_err(|e| e.to_string());
        let ctx = &mut self.slot.ctx;
        for shift in &plan.shifts {
            let (to, from) = (position(shift.to)?, position(shift.from)?);
            let end = position(shift.from + shift.len)?;
            let delta =
                i32::try_from(i64::from(to) - i64::from(from)).map_err(|e| e.to_string())?;
            ctx.kv_cache_seq_rm(0, Some(to), Some(from))
                .map_err(|e| e.to_string())?;
            ctx.kv_cache_seq_add(0, Some(from), Some(end), delta)
                .map_err(|e| e.to_string())?;
        }
        ctx.kv_cache_seq_rm(0, Some(position(plan.reused())?), None)
            .map_err(|e| e.to_string())
    }

    fn add(
        &self,
        batch: &mut LlamaBatch,
        token: LlamaToken,
        pos: usize,
        logits: bool,
    ) -> Result<(), BackendError> {
        let pos = i32::try_from(pos).map_err(|_| self.error(format!("position {pos}")))?;
        batch
            .add(token, pos, &[0], logits)
            .map_err(|e| self.error(format!("batch: {e}")))
    }

    fn error(&self, message: String) -> BackendError {
        model_error(self.config, message)
    }
}

/// llama.cpp's sampler chain for `sampling`: temperature, then top-p over the tempered
/// distribution (as Hugging Face and vLLM apply them), then a draw seeded by the request.
fn sampler_for(sampling: Sampling) -> LlamaSampler {
    LlamaSampler::chain_simple([
        LlamaSampler::temp(sampling.temperature()),
        LlamaSampler::top_p(sampling.top_p(), 1),
        LlamaSampler::dist(sampling.seed()),
    ])
}
