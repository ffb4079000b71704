//! The embedded backend: a GGUF run in-process by llama.cpp (`llama-cpp-2`), greedy (or
//! sampled with llama.cpp's sampler chain, seeded by the request) and cancellable, with
//! llama.cpp's own tokenizer.
//!
//! One `LlamaBackend` per process; a model loaded once per [`EmbeddedBackend`] and shared
//! (`Arc`) with its tokenizer. Requests go to one decode thread ([`worker`]) that owns the
//! model's llama.cpp contexts and runs one request at a time (two cores gain nothing from running
//! two at once). It keeps up to `model.kv_slots` contexts alive between requests, each with the
//! tokens its KV cache holds: a request that allows it ([`GenerateRequest::reuse_kv`], live
//! completion in an editor) takes the slot that shares most with its prompt and evaluates only
//! the rest ([`reuse`]: the common prefix, and runs that only moved, shifted as llama.cpp's
//! server does); any other request (`bench run`, replay) gets a fresh context, so its answer is
//! exactly what it was before contexts were kept.
//!
//! The prompt is tokenized as llama.cpp's server does it: special tokens written in it (a
//! template's) are parsed as such, and a BOS is added when the GGUF asks for one (SmolLM2 does
//! not), so it counts one more token than [`Tokenizer::count`] for such models.

mod decode;
mod likelihood;
mod reuse;
mod text;
mod tokenizer;
mod worker;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use async_trait::async_trait;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::{LogOptions, send_logs_to_tracing};
use tokio_util::sync::CancellationToken;

pub use tokenizer::LlamaTokenizer;

use super::{Backend, BackendError, Foreground, GenerateRequest, Generation};
use crate::model::ModelSettings;
use crate::tokenize::Tokenizer;
use worker::{Job, Worker, WorkerConfig};

/// llama.cpp in-process.
pub struct EmbeddedBackend {
    /// The model file, for errors.
    path: PathBuf,
    n_ctx: u32,
    tokenizer: Arc<LlamaTokenizer>,
    worker: Worker,
    /// Requests on their way ([`Backend::foreground`]): the decode thread does no idle work
    /// while there are any.
    waiting: Arc<AtomicUsize>,
}

impl EmbeddedBackend {
    /// Loads the GGUF at `model_path`, with the context size, threads and KV slots of
    /// `settings`, and starts its decode thread.
    pub fn load(
        model_path: &Path,
        settings: &ModelSettings,
    ) -> Result<EmbeddedBackend, BackendError> {
        tracing::info!(model = %model_path.display(), "loading the model");
        let model = Arc::new(load_model(model_path, false)?);
        let tokenizer = Arc::new(LlamaTokenizer::new(Arc::clone(&model)));
        let n_ctx = settings.n_ctx.max(1);
        let config = WorkerConfig {
            path: model_path.to_path_buf(),
            n_ctx,
            threads: i32::try_from(settings.threads.max(1)).unwrap_or(i32::MAX),
            slots: usize::try_from(settings.kv_slots.max(1)).unwrap_or(1),
            shift_min_span: usize::try_from(settings.kv_shift_min_span).unwrap_or(usize::MAX),
        };
        let waiting = Arc::new(AtomicUsize::new(0));
        Ok(EmbeddedBackend {
            path: model_path.to_path_buf(),
            n_ctx,
            tokenizer,
            worker: Worker::start(model, config, Arc::clone(&waiting))?,
            waiting,
        })
    }

    /// llama.cpp's tokenizer for the GGUF at `model_path`, loading its vocabulary only (no
    /// weights): what an HTTP backend serving that GGUF counts with.
    pub fn load_tokenizer(model_path: &Path) -> Result<Arc<dyn Tokenizer>, BackendError> {
        let model = Arc::new(load_model(model_path, true)?);
        Ok(Arc::new(LlamaTokenizer::new(model)))
    }

    /// Live prompts are read in blocks of this many tokens, aligned at its multiples; a kept
    /// slot keeps whole blocks only (see `reuse`).
    pub const KV_BLOCK: usize = reuse::BLOCK;

    /// The context size in tokens: prompt and generated tokens together must fit.
    pub fn n_ctx(&self) -> u32 {
        self.n_ctx
    }
}

#[async_trait]
impl Backend for EmbeddedBackend {
    fn name(&self) -> &'static str {
        "embedded"
    }

    fn tokenizer(&self) -> Option<Arc<dyn Tokenizer>> {
        Some(Arc::clone(&self.tokenizer) as Arc<dyn Tokenizer>)
    }

    fn keeps_contexts(&self) -> bool {
        true
    }

    fn foreground(&self) -> Foreground {
        Foreground::counted_in(Arc::clone(&self.waiting))
    }

    async fn generate(
        &self,
        request: &GenerateRequest,
        cancel: &CancellationToken,
    ) -> Result<Generation, BackendError> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.worker.submit(Job {
            request: request.clone(),
            cancel: cancel.clone(),
            start: Instant::now(),
            reply,
        })?;
        // A cancel answers at once; the decode notices it before its next token and ends, leaving
        // its slot consistent.
        let answered = tokio::select! {
            answered = answer => answered,
            () = cancel.cancelled() => return Err(BackendError::Cancelled),
        };
        // A fresh context's old one (some megabytes) was freed; the heap it leaves goes back to
        // the system beside the answer, not before it, or a long-lived process grows by each one
        // (see `crate::memory`).
        tokio::task::spawn_blocking(crate::memory::release_free_heap);
        answered.map_err(|_| BackendError::Model {
            model: self.path.display().to_string(),
            message: "the decode thread ended".into(),
        })?
    }
}

/// The process's llama.cpp, initialized once, its logs sent to `tracing` (never stdout).
fn llama() -> Result<&'static LlamaBackend, BackendError> {
    static LLAMA: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    LLAMA
        .get_or_init(|| {
            send_logs_to_tracing(LogOptions::default());
            #[cfg(feature = "portable")]
            load_cpu_backends()?;
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|message| BackendError::Model {
            model: "llama.cpp".into(),
            message: message.clone(),
        })
}

/// A `portable` build carries llama.cpp's CPU backend as one shared library per instruction set
/// beside the binary (`libggml-cpu-haswell.so`, `…-skylakex.so`, …): llama.cpp loads those this
/// CPU can run and uses the best, so one build runs on any x86-64 CPU at that CPU's speed.
#[cfg(feature = "portable")]
fn load_cpu_backends() -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("the server's own path: {e}"))?;
    let dir = exe
        .parent()
        .ok_or_else(|| format!("{}: no folder", exe.display()))?;
    if dir.to_str().is_none() {
        return Err(format!(
            "{}: not UTF-8, llama.cpp cannot load its backends from it",
            dir.display()
        ));
    }
    llama_cpp_2::llama_backend::load_backends_from_path(dir);
    Ok(())
}

fn load_model(path: &Path, vocab_only: bool) -> Result<LlamaModel, BackendError> {
    let error = |message: String| BackendError::Model {
        model: path.display().to_string(),
        message,
    };
    if path.is_dir() {
        return Err(error("a folder, not a GGUF file".into()));
    }
    if !path.is_file() {
        return Err(error("no such file".into()));
    }
    // Read into memory rather than mapped: llama.cpp repacks most weight tensors into buffers
    // of its own (`CPU_REPACK`), and with a mapping the file's pages of those tensors stay
    // resident beside their repacked copies. Qwen2.5-Coder-1.5B: 1.15 GB resident after the
    // load instead of 1.75 GB, at the same speed (see docs/performance.md).
    let params = LlamaModelParams::default()
        .with_vocab_only(vocab_only)
        .with_use_mmap(false);
    LlamaModel::load_from_file(llama()?, path, &params)
        .map_err(|e| error(format!("llama.cpp cannot load it ({e}); is it a GGUF?")))
}

/// The id of the largest logit; the first of equals, as llama.cpp's greedy sampler.
fn argmax(logits: &[f32]) -> LlamaToken {
    let mut best = 0usize;
    for (i, &logit) in logits.iter().enumerate() {
        if logit > logits[best] {
            best = i;
        }
    }
    LlamaToken(i32::try_from(best).unwrap_or(0))
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argmax_takes_the_first_of_equals() {
        assert_eq!(argmax(&[0.5, 2.0, 2.0, -1.0]).0, 1);
        assert_eq!(argmax(&[f32::NEG_INFINITY]).0, 0);
        assert_eq!(argmax(&[]).0, 0);
    }
}
