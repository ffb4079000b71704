//! The embedded backend: a GGUF run in-process by llama.cpp (`llama-cpp-2`), greedy and
//! cancellable, with llama.cpp's own tokenizer.
//!
//! One `LlamaBackend` per process; a model loaded once per [`EmbeddedBackend`] and shared
//! (`Arc`) with its tokenizer. Each request runs on a blocking thread, holds the backend's
//! lock for its whole decode (requests are serialized: two cores gain nothing from running two
//! at once) and uses a fresh llama.cpp context, so no state leaks between requests. A context
//! costs 13–20 ms to make for the default model at `n_ctx` 512 on 2 cores, against about
//! 700 ms for 16 tokens, so it is not kept; keeping one would allow reusing the KV cache of a
//! shared prompt prefix (a later optimisation).
//!
//! The prompt is tokenized as llama.cpp's server does it: special tokens written in it (a
//! template's) are parsed as such, and a BOS is added when the GGUF asks for one (SmolLM2 does
//! not), so it counts one more token than [`Tokenizer::count`] for such models.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use async_trait::async_trait;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::{LogOptions, send_logs_to_tracing};
use tokio_util::sync::CancellationToken;

use super::{Backend, BackendError, GenerateRequest, Generation};
use crate::model::ModelSettings;
use crate::tokenize::Tokenizer;

/// Prompt tokens decoded per llama.cpp call; cancellation is checked between calls.
const PROMPT_CHUNK: usize = 512;

/// llama.cpp in-process.
pub struct EmbeddedBackend {
    model: Arc<LlamaModel>,
    /// The model file, for errors.
    path: PathBuf,
    n_ctx: u32,
    threads: i32,
    tokenizer: Arc<LlamaTokenizer>,
    /// Held for a whole request: one decode at a time.
    busy: Arc<Mutex<()>>,
}

impl EmbeddedBackend {
    /// Loads the GGUF at `model_path`, with the context size and threads of `settings`.
    pub fn load(
        model_path: &Path,
        settings: &ModelSettings,
    ) -> Result<EmbeddedBackend, BackendError> {
        let model = Arc::new(load_model(model_path, false)?);
        let tokenizer = Arc::new(LlamaTokenizer::new(Arc::clone(&model)));
        let threads = i32::try_from(settings.threads.max(1)).unwrap_or(i32::MAX);
        Ok(EmbeddedBackend {
            model,
            path: model_path.to_path_buf(),
            n_ctx: settings.n_ctx.max(1),
            threads,
            tokenizer,
            busy: Arc::new(Mutex::new(())),
        })
    }

    /// llama.cpp's tokenizer for the GGUF at `model_path`, loading its vocabulary only (no
    /// weights): what an HTTP backend serving that GGUF counts with.
    pub fn load_tokenizer(model_path: &Path) -> Result<Arc<dyn Tokenizer>, BackendError> {
        let model = Arc::new(load_model(model_path, true)?);
        Ok(Arc::new(LlamaTokenizer::new(model)))
    }

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

    async fn generate(
        &self,
        request: &GenerateRequest,
        cancel: &CancellationToken,
    ) -> Result<Generation, BackendError> {
        let job = Job {
            model: Arc::clone(&self.model),
            path: self.path.clone(),
            n_ctx: self.n_ctx,
            threads: self.threads,
            busy: Arc::clone(&self.busy),
            request: request.clone(),
            cancel: cancel.clone(),
            start: Instant::now(),
        };
        let mut task = tokio::task::spawn_blocking(move || job.run());
        // A cancel answers at once; the decode notices it before its next token and ends.
        let joined = tokio::select! {
            joined = &mut task => joined,
            () = cancel.cancelled() => return Err(BackendError::Cancelled),
        };
        // The job's context (some megabytes) was freed when it ended; the heap it leaves goes back
        // to the system beside the answer, not before it, or a long-lived process grows by each
        // one (see `crate::memory`).
        tokio::task::spawn_blocking(crate::memory::release_free_heap);
        joined.map_err(|e| BackendError::Model {
            model: self.path.display().to_string(),
            message: format!("the decode thread failed: {e}"),
        })?
    }
}

/// One generation, run on a blocking thread.
struct Job {
    model: Arc<LlamaModel>,
    path: PathBuf,
    n_ctx: u32,
    threads: i32,
    busy: Arc<Mutex<()>>,
    request: GenerateRequest,
    cancel: CancellationToken,
    start: Instant,
}

impl Job {
    fn run(self) -> Result<Generation, BackendError> {
        // A request that panicked mid-decode leaves nothing behind (its context is gone), so a
        // poisoned lock is still good.
        let _busy = self
            .busy
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if self.cancel.is_cancelled() {
            return Err(BackendError::Cancelled);
        }
        let vocab = self.model.vocab();
        let prompt = self.request.prompt.as_bytes();
        if i32::try_from(prompt.len()).is_err() {
            return Err(self.error(format!("the prompt is {} bytes", prompt.len())));
        }
        // The model's own rule for BOS, and special tokens in templates parsed as such: what
        // llama.cpp's server does with a prompt.
        let tokens = vocab.tokenize(prompt, true, true);
        let max_tokens = self.request.max_tokens;
        let needed = tokens.len() as u64 + u64::from(max_tokens);
        if needed > u64::from(self.n_ctx) {
            return Err(self.error(format!(
                "the prompt has {} tokens and max_tokens is {max_tokens}: {needed} tokens do not \
                 fit the context of {} (model.n_ctx); the prompt is never truncated",
                tokens.len(),
                self.n_ctx
            )));
        }
        let mut generation = Generation {
            prompt_tokens: Some(u32::try_from(tokens.len()).unwrap_or(u32::MAX)),
            generated_tokens: Some(0),
            ..Generation::default()
        };
        if tokens.is_empty() || max_tokens == 0 {
            return Ok(generation);
        }

        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(self.n_ctx))
            .with_n_batch(self.n_ctx.min(512))
            .with_n_ubatch(self.n_ctx.min(512))
            .with_n_threads(self.threads)
            .with_n_threads_batch(self.threads);
        let mut ctx = self.model.new_context(llama()?, params).map_err(|e| {
            self.error(format!(
                "cannot make a context of {} tokens: {e}",
                self.n_ctx
            ))
        })?;
        // Never more per call than the context's batch size.
        let chunk_len = PROMPT_CHUNK.min(usize::try_from(self.n_ctx.min(512)).unwrap_or(1));
        let mut batch = LlamaBatch::new(chunk_len, 1);

        // The prompt, a chunk at a time, logits for its last token only.
        let prompt_start = Instant::now();
        let last = tokens.len() - 1;
        for (c, chunk) in tokens.chunks(chunk_len).enumerate() {
            if self.cancel.is_cancelled() {
                return Err(BackendError::Cancelled);
            }
            batch.clear();
            for (i, &token) in chunk.iter().enumerate() {
                let pos = c * chunk_len + i;
                self.add(&mut batch, token, pos, pos == last)?;
            }
            ctx.decode(&mut batch)
                .map_err(|e| self.error(format!("decoding the prompt: {e}")))?;
        }
        generation.prompt_ms = Some(ms(prompt_start));

        let generate_start = Instant::now();
        let mut text = Text::new(&self.request.stop);
        let mut pos = tokens.len();
        let mut generated = 0u32;
        let mut piece = Vec::new();
        while generated < max_tokens {
            if self.cancel.is_cancelled() {
                return Err(BackendError::Cancelled);
            }
            let token = argmax(ctx.get_logits_ith(batch.n_tokens() - 1));
            if generated == 0 {
                generation.first_token_ms = Some(ms(self.start));
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
            self.add(&mut batch, token, pos, true)?;
            pos += 1;
            ctx.decode(&mut batch)
                .map_err(|e| self.error(format!("decoding token {generated}: {e}")))?;
        }
        generation.generate_ms = Some(ms(generate_start));
        generation.generated_tokens = Some(generated);
        generation.text = text.finish();
        Ok(generation)
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
        BackendError::Model {
            model: self.path.display().to_string(),
            message,
        }
    }
}

/// The generated text, decoded as bytes arrive (a character may be split across tokens) and
/// cut before the first stop sequence (which may be split across tokens too).
struct Text<'s> {
    text: String,
    /// Bytes of an incomplete character at the end.
    pending: Vec<u8>,
    stops: &'s [String],
    longest_stop: usize,
}

impl<'s> Text<'s> {
    fn new(stops: &'s [String]) -> Text<'s> {
        Text {
            text: String::new(),
            pending: Vec::new(),
            stops,
            longest_stop: stops.iter().map(String::len).max().unwrap_or(0),
        }
    }

    /// Appends a token's bytes; true when a stop sequence has appeared (the text is then cut
    /// before it).
    fn push(&mut self, bytes: &[u8]) -> bool {
        let before = self.text.len();
        self.pending.extend_from_slice(bytes);
        let mut rest = self.pending.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    self.text.push_str(valid);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // Only the valid prefix was checked, so this cannot fail.
                    self.text
                        .push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        // Invalid bytes, not a character still arriving.
                        Some(n) => {
                            self.text.push(char::REPLACEMENT_CHARACTER);
                            rest = after.get(n..).unwrap_or_default();
                        }
                        None => {
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        self.cut(before)
    }

    /// Looks for a stop sequence that ends in the text added after byte `before`.
    fn cut(&mut self, before: usize) -> bool {
        let mut from = before.saturating_sub(self.longest_stop.saturating_sub(1));
        while !self.text.is_char_boundary(from) {
            from -= 1;
        }
        let found = self
            .stops
            .iter()
            .filter(|stop| !stop.is_empty())
            .filter_map(|stop| self.text.get(from..)?.find(stop.as_str()))
            .min();
        match found {
            Some(at) => {
                self.text.truncate(from + at);
                self.pending.clear();
                true
            }
            None => false,
        }
    }

    fn finish(mut self) -> String {
        if !self.pending.is_empty() {
            self.text.push(char::REPLACEMENT_CHARACTER);
        }
        self.text
    }
}

/// llama.cpp's tokenizer for a loaded model.
pub struct LlamaTokenizer {
    model: Arc<LlamaModel>,
    /// Vocabulary text to id, built once.
    ids: HashMap<String, u32>,
    n_tokens: i32,
}

impl LlamaTokenizer {
    fn new(model: Arc<LlamaModel>) -> LlamaTokenizer {
        let vocab = model.vocab();
        let n_tokens = vocab.n_tokens();
        let mut ids = HashMap::with_capacity(usize::try_from(n_tokens).unwrap_or(0));
        for token in vocab.tokens() {
            if let (Some(text), Ok(id)) = (vocab.text(token), u32::try_from(token.0)) {
                ids.entry(text.to_string_lossy().into_owned()).or_insert(id);
            }
        }
        LlamaTokenizer {
            model,
            ids,
            n_tokens,
        }
    }
}

impl Tokenizer for LlamaTokenizer {
    /// llama.cpp's `llama_tokenize` with no BOS, special tokens written in the text parsed as
    /// such.
    fn encode(&self, text: &str) -> Vec<u32> {
        if i32::try_from(text.len()).is_err() {
            return Vec::new();
        }
        self.model
            .vocab()
            .tokenize(text.as_bytes(), false, true)
            .into_iter()
            .filter_map(|t| u32::try_from(t.0).ok())
            .collect()
    }

    fn decode(&self, ids: &[u32]) -> String {
        // An id outside the vocabulary would abort inside llama.cpp: leave it out.
        let tokens: Vec<LlamaToken> = ids
            .iter()
            .filter_map(|&id| i32::try_from(id).ok())
            .filter(|&id| id < self.n_tokens)
            .map(LlamaToken)
            .collect();
        if tokens.is_empty() {
            return String::new();
        }
        let bytes = self.model.vocab().detokenize(&tokens, false, true);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    fn token_id(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }
}

/// The process's llama.cpp, initialized once, its logs sent to `tracing` (never stdout).
fn llama() -> Result<&'static LlamaBackend, BackendError> {
    static LLAMA: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    LLAMA
        .get_or_init(|| {
            send_logs_to_tracing(LogOptions::default());
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|message| BackendError::Model {
            model: "llama.cpp".into(),
            message: message.clone(),
        })
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
    let params = LlamaModelParams::default().with_vocab_only(vocab_only);
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

    /// Pushes `pieces` through [`Text`] and renders what it kept and where it stopped.
    fn check(stops: &[&str], pieces: &[&[u8]], expect: &str) {
        let stops: Vec<String> = stops.iter().map(|s| s.to_string()).collect();
        let mut text = Text::new(&stops);
        let mut stopped_at = None;
        for (i, piece) in pieces.iter().enumerate() {
            if text.push(piece) {
                stopped_at = Some(i);
                break;
            }
        }
        let got = format!("{:?} stopped at {stopped_at:?}", text.finish());
        assert_eq!(got, expect);
    }

    #[test]
    fn text_decodes_split_characters_and_cuts_before_stops() {
        check(&[], &[b"a", b"b"], r#""ab" stopped at None"#);
        check(
            &["\n"],
            &[b"x = 1", b"\n", b"y"],
            r#""x = 1" stopped at Some(1)"#,
        );
        // A stop split across tokens, and one inside a single token.
        check(&["\n\n"], &[b"a\n", b"\nb"], r#""a" stopped at Some(1)"#);
        check(&["end"], &[b"weekend!"], r#""week" stopped at Some(0)"#);
        // The earliest of several stops wins.
        check(&["b", "a"], &[b"xab"], r#""x" stopped at Some(0)"#);
        // "é" (c3 a9) and "🦀" (f0 9f a6 80) split across tokens.
        check(
            &[],
            &[b"\xc3", b"\xa9", b"\xf0\x9f", b"\xa6", b"\x80"],
            r#""é🦀" stopped at None"#,
        );
        check(
            &["🦀"],
            &[b"a\xf0\x9f", b"\xa6\x80b"],
            r#""a" stopped at Some(1)"#,
        );
        // A character never completed, and bytes that are not UTF-8.
        check(&[], &[b"a\xf0\x9f"], r#""a�" stopped at None"#);
        check(&[], &[b"a\xff", b"b"], r#""a�b" stopped at None"#);
        check(&[""], &[b"a"], r#""a" stopped at None"#);
    }

    #[test]
    fn argmax_takes_the_first_of_equals() {
        assert_eq!(argmax(&[0.5, 2.0, 2.0, -1.0]).0, 1);
        assert_eq!(argmax(&[f32::NEG_INFINITY]).0, 0);
        assert_eq!(argmax(&[]).0, 0);
    }
}
