//! The decode thread: it owns the model's llama.cpp contexts (a context borrows its model, so the
//! thread that holds the model holds them too) and runs one request at a time.
//!
//! Up to [`WorkerConfig::slots`] contexts stay alive between requests, each a [`Slot`] that
//! records the tokens its KV cache holds, so that a slot's cache and its tokens always agree: a
//! request that reuses a slot first cuts and shifts the cache to what [`reuse::plan`] keeps,
//! then records each prompt chunk and each generated token only once llama.cpp has decoded it. A
//! cancel between two decodes, or a decode error (after which the slot is emptied), leaves it
//! consistent. A request that must be exact gets a fresh context of its own, read in batches of
//! up to 512 tokens as always and dropped after it; the kept (live) contexts read prompts in
//! blocks, and their compute buffers are a block's.

use std::num::NonZeroU32;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::text::Text;
use super::{argmax, llama, ms, reuse};
use crate::backend::{BackendError, GenerateRequest, Generation};

/// Prompt tokens decoded per llama.cpp call; cancellation is checked between calls.
const PROMPT_CHUNK: usize = 512;

/// What the decode thread is started with.
pub struct WorkerConfig {
    /// The model file, for errors.
    pub path: PathBuf,
    pub n_ctx: u32,
    pub threads: i32,
    /// Contexts kept alive at most.
    pub slots: usize,
    /// The shortest run of cached tokens shifted to a new position (0: never shift).
    pub shift_min_span: usize,
}

/// One generation asked of the decode thread.
pub struct Job {
    pub request: GenerateRequest,
    pub cancel: CancellationToken,
    /// When the request came, for the time to the first token.
    pub start: Instant,
    pub reply: oneshot::Sender<Result<Generation, BackendError>>,
}

/// The handle of the decode thread; dropping it ends the thread once its job is done.
pub struct Worker {
    jobs: mpsc::Sender<Job>,
    path: PathBuf,
}

impl Worker {
    pub fn start(model: Arc<LlamaModel>, config: WorkerConfig) -> Result<Worker, BackendError> {
        let (jobs, received) = mpsc::channel::<Job>();
        let path = config.path.clone();
        std::thread::Builder::new()
            .name("crossfile-llama".into())
            .spawn(move || serve(&model, &config, &received))
            .map_err(|e| BackendError::Model {
                model: path.display().to_string(),
                message: format!("cannot start the decode thread: {e}"),
            })?;
        Ok(Worker { jobs, path })
    }

    pub fn submit(&self, job: Job) -> Result<(), BackendError> {
        self.jobs.send(job).map_err(|_| BackendError::Model {
            model: self.path.display().to_string(),
            message: "the decode thread ended".into(),
        })
    }
}

/// Runs jobs until every handle is dropped. Between jobs, a prompt left to read ahead
/// ([`Prefill`]) is read a block at a time, each block only while no job waits. A panic in a
/// decode empties the pool (its contexts' state is unknown) and is answered as an error; the
/// thread goes on.
fn serve(model: &LlamaModel, config: &WorkerConfig, jobs: &mpsc::Receiver<Job>) {
    let mut pool = Pool {
        model,
        config,
        slots: Vec::new(),
        clock: 0,
        prefill: None,
    };
    loop {
        let job = if pool.prefill.is_some() {
            match jobs.try_recv() {
                Ok(job) => job,
                Err(mpsc::TryRecvError::Empty) => {
                    if catch_unwind(AssertUnwindSafe(|| pool.prefill_step())).is_err() {
                        pool.reset();
                    }
                    continue;
                }
                Err(mpsc::TryRecvError::Disconnected) => return,
            }
        } else {
            match jobs.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        let outcome = if job.cancel.is_cancelled() {
            Err(BackendError::Cancelled)
        } else {
            catch_unwind(AssertUnwindSafe(|| pool.generate(&job))).unwrap_or_else(|_| {
                pool.reset();
                Err(pool.error("the decode panicked".into()))
            })
        };
        // The caller may have gone (cancelled): nobody to tell.
        let _ = job.reply.send(outcome);
    }
}

/// A kept context and the tokens its KV cache holds, in position order.
struct Slot<'m> {
    ctx: LlamaContext<'m>,
    tokens: Vec<LlamaToken>,
    /// The leading tokens whose KV was evaluated in whole aligned blocks of a prompt
    /// ([`reuse::BLOCK`]): what an exact plan may keep.
    whole: usize,
    /// When it was last used (the pool's clock).
    used: u64,
}

impl Slot<'_> {
    fn empty(&mut self) {
        self.ctx.clear_kv_cache();
        self.tokens.clear();
        self.whole = 0;
    }
}

/// A prompt to read into a kept context while no request waits: a live request's own prompt,
/// when its answer came from its warm fallback instead or when it had much to read (and may be
/// cancelled); else what it asked to read ahead ([`GenerateRequest::read_ahead`]).
struct Prefill {
    tokens: Vec<LlamaToken>,
    /// The slot that answered (from the fallback, or the prompt that reads ahead): left as it
    /// is, for the requests that follow. `None` when the prompt is a cancelled request's own,
    /// read on in its slot.
    spare: Option<usize>,
}

/// A fallback answers in a live prompt's place when it has at most this many tokens left to
/// read (about a third of a second on two cores) and the prompt at least this many more.
const FALLBACK_GAIN: usize = 4 * reuse::BLOCK;

/// The kept contexts.
struct Pool<'m> {
    model: &'m LlamaModel,
    config: &'m WorkerConfig,
    slots: Vec<Slot<'m>>,
    clock: u64,
    prefill: Option<Prefill>,
}

impl<'m> Pool<'m> {
    fn generate(&mut self, job: &Job) -> Result<Generation, BackendError> {
        let request = &job.request;
        let tokens = self.tokenize(&request.prompt)?;
        let max_tokens = request.max_tokens;
        self.check_fits(tokens.len(), max_tokens)?;
        let mut generation = Generation {
            prompt_tokens: Some(u32::try_from(tokens.len()).unwrap_or(u32::MAX)),
            generated_tokens: Some(0),
            reused_tokens: Some(0),
            ..Generation::default()
        };
        if tokens.is_empty() || max_tokens == 0 {
            return Ok(generation);
        }
        if !request.reuse_kv {
            // An exact answer: a fresh context of its own, dropped after it (its KV was read in
            // batch-sized chunks, which no live prompt could keep exactly).
            let mut slot = self.new_slot(false)?;
            let decode = Decode {
                slot: &mut slot,
                config: self.config,
                model: self.model,
                live: false,
            };
            decode.run(&tokens, &reuse::Plan::default(), job, &mut generation)?;
            return Ok(generation);
        }
        if let Some(fallback) = &request.fallback {
            let fallback = self.tokenize(fallback)?;
            if !fallback.is_empty()
                && self.check_fits(fallback.len(), max_tokens).is_ok()
                && let Some((at, plan)) = self.warm_fallback(&tokens, &fallback)
            {
                tracing::debug!(
                    prompt_tokens = tokens.len(),
                    fallback_tokens = fallback.len(),
                    "answered from the fallback; the prompt is read ahead"
                );
                generation.from_fallback = true;
                generation.prompt_tokens = Some(u32::try_from(fallback.len()).unwrap_or(u32::MAX));
                self.prefill = Some(Prefill {
                    tokens,
                    spare: Some(at),
                });
                return self.run_in(at, &fallback, &plan, job, generation);
            }
        }
        let mut chosen = self.slot_for(&tokens, None)?;
        let spare = self.prefill.as_ref().and_then(|p| p.spare);
        if tokens.len() - chosen.1.reused() > FALLBACK_GAIN && spare == Some(chosen.0) {
            // A long read does not go over the warm fallback a later request may still want.
            chosen = self.slot_for(&tokens, spare)?;
        }
        let (at, plan) = chosen;
        tracing::debug!(
            slot = at,
            reused = plan.reused(),
            prompt_tokens = tokens.len(),
            "live read"
        );
        if tokens.len() - plan.reused() > FALLBACK_GAIN {
            // A long read: if a newer keystroke cancels it, what is left of it is read while no
            // request waits, rather than anything else.
            self.prefill = Some(Prefill {
                tokens: tokens.clone(),
                spare: None,
            });
        } else if self.prefill.as_ref().is_none_or(|p| p.spare != Some(at)) {
            // Reading ahead for this slot's document goes on; anything else is stale.
            self.prefill = match &request.read_ahead {
                Some(ahead) => Some(self.tokenize(ahead)?)
                    .filter(|ahead| self.check_fits(ahead.len(), max_tokens).is_ok())
                    .map(|tokens| Prefill {
                        tokens,
                        spare: Some(at),
                    }),
                None => None,
            };
        }
        self.run_in(at, &tokens, &plan, job, generation)
    }

    /// Answers `job` from `tokens` read into slot `at` after `plan`.
    fn run_in(
        &mut self,
        at: usize,
        tokens: &[LlamaToken],
        plan: &reuse::Plan,
        job: &Job,
        mut generation: Generation,
    ) -> Result<Generation, BackendError> {
        self.clock += 1;
        let (clock, config, model) = (self.clock, self.config, self.model);
        let slot = &mut self.slots[at];
        slot.used = clock;
        let outcome = Decode {
            slot,
            config,
            model,
            live: true,
        }
        .run(tokens, plan, job, &mut generation);
        match outcome {
            Ok(()) => Ok(generation),
            Err(BackendError::Cancelled) => Err(BackendError::Cancelled),
            Err(e) => {
                // What the cache holds after a failed decode is unknown: empty the slot.
                self.slots[at].empty();
                Err(e)
            }
        }
    }

    /// The model's tokens of `text`, with its own rule for BOS and special tokens in templates
    /// parsed as such: what llama.cpp's server does with a prompt.
    fn tokenize(&self, text: &str) -> Result<Vec<LlamaToken>, BackendError> {
        if i32::try_from(text.len()).is_err() {
            return Err(self.error(format!("the prompt is {} bytes", text.len())));
        }
        Ok(self.model.vocab().tokenize(text.as_bytes(), true, true))
    }

    fn check_fits(&self, prompt_tokens: usize, max_tokens: u32) -> Result<(), BackendError> {
        let needed = prompt_tokens as u64 + u64::from(max_tokens);
        if needed > u64::from(self.config.n_ctx) {
            return Err(self.error(format!(
                "the prompt has {prompt_tokens} tokens and max_tokens is {max_tokens}: {needed} \
                 tokens do not fit the context of {} (model.n_ctx); the prompt is never truncated",
                self.config.n_ctx
            )));
        }
        Ok(())
    }

    /// The slot and plan to answer from `fallback` instead of `tokens`: when a kept slot holds a
    /// real share of it, leaving little to read, and `tokens` would leave much more
    /// ([`FALLBACK_GAIN`]).
    /// Never with a single slot: reading ahead needs another.
    fn warm_fallback(
        &self,
        tokens: &[LlamaToken],
        fallback: &[LlamaToken],
    ) -> Option<(usize, reuse::Plan)> {
        if self.config.slots < 2 {
            return None;
        }
        let (at, plan) = self.best_kept(fallback, None)?;
        if plan.reused() < reuse::BLOCK {
            return None;
        }
        let own = self.best_kept(tokens, None).map_or(0, |(_, p)| p.reused());
        let (left, fallback_left) = (tokens.len() - own, fallback.len() - plan.reused());
        (fallback_left <= FALLBACK_GAIN && left >= fallback_left + FALLBACK_GAIN)
            .then_some((at, plan))
    }

    /// Reads one more block of the prompt left to read ahead, in a slot other than the
    /// fallback's; done when every whole block before its last token is held.
    fn prefill_step(&mut self) {
        let Some(prefill) = self.prefill.take() else {
            return;
        };
        let end = prefill.tokens.len().saturating_sub(1) / reuse::BLOCK * reuse::BLOCK;
        let at = match self.best_kept(&prefill.tokens, prefill.spare) {
            Some((at, plan)) if plan.reused() >= reuse::BLOCK => at,
            _ if self.slots.len() < self.config.slots => match self.new_slot(true) {
                Ok(slot) => {
                    self.slots.push(slot);
                    self.slots.len() - 1
                }
                Err(e) => {
                    tracing::warn!("reading ahead: {e}");
                    return;
                }
            },
            _ => match self.least_recently_used(prefill.spare) {
                Some(at) => {
                    self.slots[at].empty();
                    at
                }
                None => return,
            },
        };
        let slot = &self.slots[at];
        let plan = reuse::choose(&slot.tokens, slot.whole, &prefill.tokens, 0);
        if plan.reused() >= end {
            return;
        }
        self.clock += 1;
        let (clock, config, model) = (self.clock, self.config, self.model);
        let slot = &mut self.slots[at];
        slot.used = clock;
        let block = plan.reused()..(plan.reused() / reuse::BLOCK + 1) * reuse::BLOCK;
        let read = Decode {
            slot,
            config,
            model,
            live: true,
        }
        .read_ahead(&prefill.tokens, &plan, block);
        match read {
            Ok(()) => self.prefill = Some(prefill),
            Err(e) => {
                tracing::warn!("reading ahead: {e}");
                self.slots[at].empty();
            }
        }
    }

    /// The kept slot (other than `except`) that keeps most of `tokens`, the most recently used
    /// of equals, and its plan.
    fn best_kept(
        &self,
        tokens: &[LlamaToken],
        except: Option<usize>,
    ) -> Option<(usize, reuse::Plan)> {
        let shift_min_span = self.config.shift_min_span;
        self.slots
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != except)
            .map(|(i, slot)| {
                (
                    i,
                    reuse::choose(&slot.tokens, slot.whole, tokens, shift_min_span),
                )
            })
            .max_by_key(|(i, plan)| (plan.reused(), self.slots[*i].used))
    }

    /// The slot for a live prompt (other than `except`) and what of its cache to keep: the slot
    /// that keeps the most (the most recently used of equals), else a new one while there is
    /// room, else the least recently used, emptied.
    fn slot_for(
        &mut self,
        tokens: &[LlamaToken],
        except: Option<usize>,
    ) -> Result<(usize, reuse::Plan), BackendError> {
        // A slot is reused for a real share of the prompt, not for a common first token that
        // would cost another document its cache.
        if let Some((i, plan)) = self.best_kept(tokens, except)
            && plan.reused() >= reuse::BLOCK.min(tokens.len() - 1).max(1)
        {
            return Ok((i, plan));
        }
        if self.slots.len() < self.config.slots {
            self.slots.push(self.new_slot(true)?);
            return Ok((self.slots.len() - 1, reuse::Plan::default()));
        }
        let i = self
            .least_recently_used(except)
            .or_else(|| self.least_recently_used(None))
            .unwrap_or(0);
        self.slots[i].empty();
        Ok((i, reuse::Plan::default()))
    }

    /// The least recently used slot other than `except`.
    fn least_recently_used(&self, except: Option<usize>) -> Option<usize> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != except)
            .min_by_key(|(_, slot)| slot.used)
            .map(|(i, _)| i)
    }

    /// Forgets every kept context (after a panic, their state is unknown).
    fn reset(&mut self) {
        self.slots.clear();
        self.prefill = None;
    }

    /// A context: a live one reads prompts in blocks ([`reuse::BLOCK`], so its compute buffers
    /// are a block's), an exact one in batches of up to 512 tokens.
    fn new_slot(&self, live: bool) -> Result<Slot<'m>, BackendError> {
        let n_ctx = self.config.n_ctx;
        let block = u32::try_from(reuse::BLOCK).unwrap_or(u32::MAX);
        let batch = if live { block } else { 512 }.min(n_ctx);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(batch)
            .with_n_ubatch(batch)
            .with_n_threads(self.config.threads)
            .with_n_threads_batch(self.config.threads);
        let ctx = self
            .model
            .new_context(llama()?, params)
            .map_err(|e| self.error(format!("cannot make a context of {n_ctx} tokens: {e}")))?;
        Ok(Slot {
            ctx,
            tokens: Vec::new(),
            whole: 0,
            used: 0,
        })
    }

    fn error(&self, message: String) -> BackendError {
        model_error(self.config, message)
    }
}

fn model_error(config: &WorkerConfig, message: String) -> BackendError {
    BackendError::Model {
        model: config.path.display().to_string(),
        message,
    }
}

/// One request's decode in its slot.
struct Decode<'s, 'm> {
    slot: &'s mut Slot<'m>,
    config: &'s WorkerConfig,
    model: &'m LlamaModel,
    /// A kept context, read in blocks; else a fresh one, read in batches.
    live: bool,
}

impl Decode<'_, '_> {
    /// Cuts the cache to `plan` and reads `range` of the prompt, block by block, without
    /// logits: reading ahead, in a kept context.
    fn read_ahead(
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

    fn run(
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

        // Live completion reads the prompt in aligned blocks, so a later prompt can keep them;
        // an exact request (a fresh context) in chunks as large as a batch, as it always has.
        let batch_len = if live {
            reuse::BLOCK
        } else {
            PROMPT_CHUNK.min(usize::try_from(self.config.n_ctx.min(512)).unwrap_or(1))
        };
        let chunks: Vec<std::ops::Range<usize>> = if live {
            reuse::blocks(reused..tokens.len()).collect()
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

        let vocab = self.model.vocab();
        let generate_start = Instant::now();
        let mut text = Text::new(&job.request.stop);
        let max_tokens = job.request.max_tokens;
        let mut generated = 0u32;
        let mut piece = Vec::new();
        let deadline = job
            .request
            .max_generate_ms
            .map(|ms| generate_start + std::time::Duration::from_millis(ms));
        while generated < max_tokens {
            if cancel.is_cancelled() {
                return Err(BackendError::Cancelled);
            }
            if generated > 0 && deadline.is_some_and(|at| Instant::now() >= at) {
                generation.out_of_time = true;
                break;
            }
            let token = argmax(self.slot.ctx.get_logits_ith(batch.n_tokens() - 1));
            if generated == 0 {
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
            self.add(&mut batch, token, pos, true)?;
            self.slot
                .ctx
                .decode(&mut batch)
                .map_err(|e| self.error(format!("decoding token {generated}: {e}")))?;
            self.slot.tokens.push(token);
        }
        generation.generate_ms = Some(ms(generate_start));
        generation.generated_tokens = Some(generated);
        tracing::debug!(
            prompt_tokens = tokens.len(),
            reused,
            prompt_ms = generation.prompt_ms,
            generated,
            generate_ms = generation.generate_ms,
            live,
            "decoded"
        );
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
