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

/// Runs jobs until every handle is dropped. A panic in a decode empties the pool (its contexts'
/// state is unknown) and is answered as an error; the thread goes on.
fn serve(model: &LlamaModel, config: &WorkerConfig, jobs: &mpsc::Receiver<Job>) {
    let mut pool = Pool {
        model,
        config,
        slots: Vec::new(),
        clock: 0,
    };
    while let Ok(job) = jobs.recv() {
        let outcome = if job.cancel.is_cancelled() {
            Err(BackendError::Cancelled)
        } else {
            catch_unwind(AssertUnwindSafe(|| pool.generate(&job))).unwrap_or_else(|_| {
                pool.slots.clear();
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

/// The kept contexts.
struct Pool<'m> {
    model: &'m LlamaModel,
    config: &'m WorkerConfig,
    slots: Vec<Slot<'m>>,
    clock: u64,
}

impl<'m> Pool<'m> {
    fn generate(&mut self, job: &Job) -> Result<Generation, BackendError> {
        let request = &job.request;
        let prompt = request.prompt.as_bytes();
        if i32::try_from(prompt.len()).is_err() {
            return Err(self.error(format!("the prompt is {} bytes", prompt.len())));
        }
        // The model's own rule for BOS, and special tokens in templates parsed as such: what
        // llama.cpp's server does with a prompt.
        let tokens = self.model.vocab().tokenize(prompt, true, true);
        let max_tokens = request.max_tokens;
        let needed = tokens.len() as u64 + u64::from(max_tokens);
        if needed > u64::from(self.config.n_ctx) {
            return Err(self.error(format!(
                "the prompt has {} tokens and max_tokens is {max_tokens}: {needed} tokens do not \
                 fit the context of {} (model.n_ctx); the prompt is never truncated",
                tokens.len(),
                self.config.n_ctx
            )));
        }
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
            let (config, model) = (self.config, self.model);
            let decode = Decode {
                slot: &mut slot,
                config,
                model,
                job,
            };
            decode.run(&tokens, &reuse::Plan::default(), &mut generation)?;
            return Ok(generation);
        }
        let (at, plan) = self.slot_for(&tokens)?;
        self.clock += 1;
        let (clock, config, model) = (self.clock, self.config, self.model);
        let slot = &mut self.slots[at];
        slot.used = clock;
        let outcome = Decode {
            slot,
            config,
            model,
            job,
        }
        .run(&tokens, &plan, &mut generation);
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

    /// The slot for a live prompt and what of its cache to keep: the slot that keeps the most
    /// (the most recently used of equals), else a new one while there is room, else the least
    /// recently used, emptied.
    fn slot_for(&mut self, tokens: &[LlamaToken]) -> Result<(usize, reuse::Plan), BackendError> {
        let shift_min_span = self.config.shift_min_span;
        let best = self
            .slots
            .iter()
            .enumerate()
            .map(|(i, slot)| {
                (
                    i,
                    reuse::choose(&slot.tokens, slot.whole, tokens, shift_min_span),
                )
            })
            .max_by_key(|(i, plan)| (plan.reused(), self.slots[*i].used));
        // A slot is reused for a real share of the prompt, not for a common first token that
        // would cost another document its cache.
        if let Some((i, plan)) = best
            && plan.reused() >= reuse::BLOCK.min(tokens.len() - 1).max(1)
        {
            return Ok((i, plan));
        }
        if self.slots.len() < self.config.slots {
            self.slots.push(self.new_slot(true)?);
            return Ok((self.slots.len() - 1, reuse::Plan::default()));
        }
        let i = self.least_recently_used();
        self.slots[i].empty();
        Ok((i, reuse::Plan::default()))
    }

    fn least_recently_used(&self) -> usize {
        self.slots
            .iter()
            .enumerate()
            .min_by_key(|(_, slot)| slot.used)
            .map_or(0, |(i, _)| i)
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
    job: &'s Job,
}

impl Decode<'_, '_> {
    fn run(
        mut self,
        tokens: &[LlamaToken],
        plan: &reuse::Plan,
        generation: &mut Generation,
    ) -> Result<(), BackendError> {
        let cancel = &self.job.cancel;
        let live = self.job.request.reuse_kv;
        let exact = plan.is_exact(self.slot.whole);
        let reused = self.keep(plan)?;
        generation.reused_tokens = Some(u32::try_from(reused).unwrap_or(u32::MAX));
        // What stays evaluated in whole blocks: an exact plan's prefix; a shifted plan's prefix
        // up to its last whole block (nothing after a shifted run is exact).
        self.slot.whole = if exact {
            reused
        } else {
            plan.prefix.min(self.slot.whole) / reuse::BLOCK * reuse::BLOCK
        };

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
            self.slot
                .ctx
                .decode(&mut batch)
                .map_err(|e| self.error(format!("decoding the prompt: {e}")))?;
            self.slot.tokens.extend_from_slice(&tokens[chunk.clone()]);
            if live && exact && chunk.end.is_multiple_of(reuse::BLOCK) {
                self.slot.whole = chunk.end;
            }
        }
        generation.prompt_ms = Some(ms(prompt_start));

        let vocab = self.model.vocab();
        let generate_start = Instant::now();
        let mut text = Text::new(&self.job.request.stop);
        let max_tokens = self.job.request.max_tokens;
        let mut generated = 0u32;
        let mut piece = Vec::new();
        let deadline = self
            .job
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
                generation.first_token_ms = Some(ms(self.job.start));
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
