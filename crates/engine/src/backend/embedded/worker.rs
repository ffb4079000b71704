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
//! aligned blocks (a cold context in runs of them), and their compute buffers are a run's.
//! Between jobs the thread reads one prompt ahead ([`Prefill`]) into a slot other than the one
//! that answered, a block at a time while no job waits; a live job may be answered from its warm
//! fallback meanwhile. A greedy live answer its time budget cut stays in its slot: the same
//! prompt asked again (the server's background replacement, with no budget) goes on decoding
//! where it stopped ([`Decode::resume`]), exactly as the uncut answer would have.
//! [`super::decode`] reads and generates in one slot.

use std::num::NonZeroU32;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::decode::{Decode, Slot, model_error};
use super::{llama, reuse};
use crate::backend::{BackendError, GenerateRequest, Generation};

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
    /// Starts the decode thread; it does no idle work while `waiting` counts requests on their
    /// way.
    pub fn start(
        model: Arc<LlamaModel>,
        config: WorkerConfig,
        waiting: Arc<AtomicUsize>,
    ) -> Result<Worker, BackendError> {
        let (jobs, received) = mpsc::channel::<Job>();
        let path = config.path.clone();
        std::thread::Builder::new()
            .name("crossfile-llama".into())
            .spawn(move || serve(&model, &config, &received, &waiting))
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
/// ([`Prefill`]) is read a block at a time, each block only while no job waits and no request
/// is on its way (`waiting`: its prompt being built needs a core, and a block read takes both).
/// A panic in a decode empties the pool (its contexts' state is unknown) and is answered as an
/// error; the thread goes on.
fn serve(
    model: &LlamaModel,
    config: &WorkerConfig,
    jobs: &mpsc::Receiver<Job>,
    waiting: &AtomicUsize,
) {
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
                Err(mpsc::TryRecvError::Empty) if waiting.load(Ordering::SeqCst) > 0 => {
                    match jobs.recv_timeout(WAITING_POLL) {
                        Ok(job) => job,
                        Err(mpsc::RecvTimeoutError::Timeout) => continue,
                        Err(mpsc::RecvTimeoutError::Disconnected) => return,
                    }
                }
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

/// A prompt to read into a kept context while no request waits: a live request's own prompt,
/// when its answer came from its warm fallback instead or when it had much to read (and may be
/// cancelled); else what it asked to read ahead ([`GenerateRequest::read_ahead`]).
struct Prefill {
    tokens: Vec<LlamaToken>,
    /// The slot that answered (from the fallback, or the prompt that reads ahead): left as it
    /// is, for the requests that follow. `None` when the prompt is a cancelled request's own,
    /// read on in its slot.
    spare: Option<usize>,
    /// What to read ahead once `tokens` is read (the request's [`GenerateRequest::read_ahead`]
    /// when `tokens` is its own prompt, and its `max_tokens`), sparing the slot that holds
    /// `tokens`; tokenized only then, in idle time, not at each request.
    then: Option<(String, u32)>,
}

/// How often idle work looks again whether the requests on their way have gone (one that is
/// cancelled before it reaches the decode thread sends no job).
const WAITING_POLL: Duration = Duration::from_millis(5);

/// A fallback answers in a live prompt's place when it has at most this many tokens left to
/// read (about a third of a second on two cores) and the prompt at least this many more.
const FALLBACK_GAIN: usize = 4 * reuse::BLOCK;

/// llama.cpp's `LLAMA_FLASH_ATTN_TYPE_DISABLED`, for live contexts. llama.cpp turns flash
/// attention on by default, and on the CPU its kernel for batches under 64 tokens (a
/// keystroke's few tokens, a block) goes one query row at a time: Qwen2.5-Coder-0.5B read
/// 16-token blocks at 42.7 tokens a second at 1,800 tokens of context with it and 104.4 without
/// it, and decoded 12.9 tokens a second against 23.2 (2 cores, `n_ctx` 2048). Its tiled kernel
/// for larger batches also makes a token's KV depend on how its batch is cut (64-token batches
/// and 65-token ones differed), while without it every batch cut at multiples of
/// [`reuse::BLOCK`] gave the same KV, bit for bit (Qwen2.5-Coder-0.5B: blocks of 16, 32, 48,
/// 64, 128, 512 and mixed sizes; SmolLM2-135M: 16, 48, 128 and mixed sizes), which is what
/// exact reuse rests on.
const FLASH_ATTENTION_OFF: i32 = 0;

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
        if request.sampling.is_none()
            && let Some(at) = self.slots.iter().position(|slot| slot.resumes(&tokens))
        {
            // The rest of an answer its time budget cut: decoding goes on where it stopped.
            tracing::debug!(
                slot = at,
                prompt_tokens = tokens.len(),
                "resuming a cut answer"
            );
            return self.in_slot(at, generation, |decode, generation| {
                decode.resume(tokens.len(), job, generation)
            });
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
                    then: request.read_ahead.clone().map(|ahead| (ahead, max_tokens)),
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
                then: request.read_ahead.clone().map(|ahead| (ahead, max_tokens)),
            });
        } else if self.prefill.as_ref().is_none_or(|p| p.spare != Some(at)) {
            // Reading ahead for this slot's document goes on; anything else is stale.
            self.prefill = match &request.read_ahead {
                Some(ahead) => self.ahead(ahead, max_tokens, at)?,
                None => None,
            };
        }
        self.run_in(at, &tokens, &plan, job, generation)
    }

    /// `ahead` to read ahead, sparing slot `spare`, if its tokens fit the context.
    fn ahead(
        &self,
        ahead: &str,
        max_tokens: u32,
        spare: usize,
    ) -> Result<Option<Prefill>, BackendError> {
        let tokens = self.tokenize(ahead)?;
        Ok(Some(tokens)
            .filter(|t| self.check_fits(t.len(), max_tokens).is_ok())
            .map(|tokens| Prefill {
                tokens,
                spare: Some(spare),
                then: None,
            }))
    }

    /// Answers `job` from `tokens` read into slot `at` after `plan`.
    fn run_in(
        &mut self,
        at: usize,
        tokens: &[LlamaToken],
        plan: &reuse::Plan,
        job: &Job,
        generation: Generation,
    ) -> Result<Generation, BackendError> {
        self.in_slot(at, generation, |decode, generation| {
            decode.run(tokens, plan, job, generation)
        })
    }

    /// Runs `work` in the kept slot `at`, which it then last used; a slot whose decode failed is
    /// emptied (what its cache holds is unknown).
    fn in_slot(
        &mut self,
        at: usize,
        mut generation: Generation,
        work: impl FnOnce(Decode<'_, 'm>, &mut Generation) -> Result<(), BackendError>,
    ) -> Result<Generation, BackendError> {
        self.clock += 1;
        let (clock, config, model) = (self.clock, self.config, self.model);
        let slot = &mut self.slots[at];
        slot.used = clock;
        let decode = Decode {
            slot,
            config,
            model,
            live: true,
        };
        match work(decode, &mut generation) {
            Ok(()) => Ok(generation),
            Err(BackendError::Cancelled) => Err(BackendError::Cancelled),
            Err(e) => {
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
    /// fallback's; done when every whole block before its last token is held, and then goes on
    /// to what it says to read next.
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
            // Read: what comes next is read in another slot, this one spared.
            if let Some((ahead, max_tokens)) = prefill.then {
                match self.ahead(&ahead, max_tokens, at) {
                    Ok(next) => self.prefill = next,
                    Err(e) => tracing::warn!("reading ahead: {e}"),
                }
            }
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

    /// A context: a live one reads prompts in blocks, from nothing in runs of them
    /// ([`reuse::RUN`], so its compute buffers are a run's) and computes attention without flash
    /// attention ([`FLASH_ATTENTION_OFF`]), an exact one in batches of up to 512 tokens with
    /// llama.cpp's default attention, as llama-server does.
    fn new_slot(&self, live: bool) -> Result<Slot<'m>, BackendError> {
        let n_ctx = self.config.n_ctx;
        let run = u32::try_from(reuse::RUN).unwrap_or(u32::MAX);
        let batch = if live { run } else { 512 }.min(n_ctx);
        let mut params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(batch)
            .with_n_ubatch(batch)
            .with_n_threads(self.config.threads)
            .with_n_threads_batch(self.config.threads);
        if live {
            params = params.with_flash_attention_policy(FLASH_ATTENTION_OFF);
        }
        let ctx = self
            .model
            .new_context(llama()?, params)
            .map_err(|e| self.error(format!("cannot make a context of {n_ctx} tokens: {e}")))?;
        Ok(Slot {
            ctx,
            tokens: Vec::new(),
            whole: 0,
            used: 0,
            cut_answer: None,
        })
    }

    fn error(&self, message: String) -> BackendError {
        model_error(self.config, message)
    }
}
