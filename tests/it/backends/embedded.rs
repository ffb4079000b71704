//! The embedded backend on the real default model: greedy completions of real code, stop
//! sequences, cancellation, and the context limit.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crossfile_engine::backend::{
    Backend, BackendError, EmbeddedBackend, GenerateRequest, Generation,
};
use crossfile_engine::model::ModelSettings;
use tokio_util::sync::CancellationToken;

use crate::backends::tokenizer::small_model;
use crate::support::{corpus_workspace, read_text};

const N_CTX: u32 = 512;

/// One backend for every test here (the model is loaded once, as in the server).
fn backend() -> &'static Arc<EmbeddedBackend> {
    static BACKEND: OnceLock<Arc<EmbeddedBackend>> = OnceLock::new();
    BACKEND.get_or_init(|| {
        let settings = ModelSettings {
            path: None,
            named: crossfile_engine::model::SMOLLM2_135M,
            n_ctx: N_CTX,
            threads: crate::support::MODEL_THREADS,
            kv_slots: 2,
            kv_shift_min_span: 0,
            tokenizer: None,
        };
        Arc::new(EmbeddedBackend::load(&small_model(), &settings).expect("load the model"))
    })
}

/// The first `lines` lines of click's `core.py`.
fn click_prompt(lines: usize) -> String {
    let text = read_text(&corpus_workspace("click").join("src/click/core.py"));
    text.split_inclusive('\n').take(lines).collect()
}

pub(crate) fn request(prompt: &str, max_tokens: u32, stop: &[&str]) -> GenerateRequest {
    GenerateRequest {
        prompt: prompt.to_string(),
        fim: None,
        max_tokens,
        stop: stop.iter().map(|s| s.to_string()).collect(),
        may_start_below: false,
        reuse_kv: false,
        max_generate_ms: None,
        fallback: None,
        read_ahead: None,
        sampling: None,
        likelihood_of: None,
    }
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn generate(request: &GenerateRequest) -> Result<Generation, BackendError> {
    runtime().block_on(backend().generate(request, &CancellationToken::new()))
}

#[test]
fn completes_real_code_deterministically_with_timings() {
    let prompt = click_prompt(16);
    let first = generate(&request(&prompt, 16, &[])).expect("generate");
    let second = generate(&request(&prompt, 16, &[])).expect("generate again");
    assert!(!first.text.trim().is_empty(), "{first:?}");
    assert_eq!(first.text, second.text);
    let prompt_tokens = first.prompt_tokens.expect("prompt tokens");
    let tokenizer = backend().tokenizer().expect("llama.cpp's tokenizer");
    // SmolLM2 adds no BOS, so the prompt is exactly what the tokenizer counts.
    assert_eq!(prompt_tokens as usize, tokenizer.count(&prompt));
    let generated = first.generated_tokens.expect("generated tokens");
    assert!((1..=16).contains(&generated), "{first:?}");
    let (Some(first_token), Some(prompt_ms), Some(generate_ms)) =
        (first.first_token_ms, first.prompt_ms, first.generate_ms)
    else {
        panic!("timings missing: {first:?}");
    };
    assert!(
        first_token >= prompt_ms && prompt_ms > 0.0 && generate_ms > 0.0,
        "{first:?}"
    );
    eprintln!(
        "embedded: prompt {prompt_tokens} tokens in {prompt_ms:.0} ms ({:.0} tokens/s), \
         {generated} tokens in {generate_ms:.0} ms ({:.0} tokens/s), first token at \
         {first_token:.0} ms: {:?}",
        f64::from(prompt_tokens) / prompt_ms * 1000.0,
        f64::from(generated) / generate_ms * 1000.0,
        first.text
    );
}

#[test]
fn stops_before_a_stop_sequence_even_across_tokens() {
    let prompt = click_prompt(16);
    let free = generate(&request(&prompt, 16, &[])).expect("generate").text;
    // Every two-character window of the free text is a stop that may span tokens: the stopped
    // text is the free text up to its first occurrence.
    let chars: Vec<(usize, char)> = free.char_indices().collect();
    let mut checked = 0;
    for window in chars.windows(3).step_by(5).take(2) {
        let (start, _) = window[0];
        let (end, _) = window[2];
        let stop = &free[start..end];
        let cut = &free[..free.find(stop).expect("occurs")];
        let got = generate(&request(&prompt, 16, &[stop, "never appears"])).expect("stopped");
        assert_eq!(got.text, cut, "stop {stop:?}");
        checked += 1;
    }
    assert!(checked > 0, "the free text {free:?} is too short");
    // A newline stop gives the first line.
    let line = generate(&request(&prompt, 16, &["\n"]))
        .expect("stopped")
        .text;
    assert_eq!(line, free.split('\n').next().unwrap_or_default());
}

#[test]
fn a_cancel_returns_at_once_and_the_backend_stays_usable() {
    let rt = runtime();
    // Loaded before the clock starts.
    let backend = backend();
    let prompt = click_prompt(10);
    let long = request(&prompt, 300, &[]);
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let (result, cancelled_at) = rt.block_on(async {
        let task = {
            let cancel = cancel.clone();
            let long = long.clone();
            tokio::spawn(async move { backend.generate(&long, &cancel).await })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
        let cancelled_at = Instant::now();
        let result = task.await.expect("join");
        (result, cancelled_at.elapsed())
    });
    assert!(matches!(result, Err(BackendError::Cancelled)), "{result:?}");
    // Typically microseconds; the bound leaves room for a loaded 2-core machine.
    assert!(cancelled_at < Duration::from_secs(1), "{cancelled_at:?}");
    // Already cancelled: nothing runs.
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let result = rt.block_on(backend.generate(&long, &cancelled));
    assert!(matches!(result, Err(BackendError::Cancelled)), "{result:?}");
    // The next request runs normally and as before.
    let after = Instant::now();
    let next = generate(&request(&prompt, 8, &[])).expect("works after a cancel");
    assert!(next.generated_tokens.unwrap_or(0) > 0, "{next:?}");
    eprintln!(
        "embedded cancel: returned {cancelled_at:?} after the cancel; next request took {:?} \
         (total {:?})",
        after.elapsed(),
        started.elapsed()
    );
}

#[test]
fn a_prompt_over_the_context_is_a_clear_error() {
    let prompt = click_prompt(200);
    let err = generate(&request(&prompt, 16, &[])).expect_err("too long");
    let message = err.to_string();
    assert!(matches!(err, BackendError::Model { .. }), "{message}");
    assert!(
        message.contains("do not fit the context of 512 (model.n_ctx)")
            && message.contains("max_tokens is 16"),
        "{message}"
    );
    // One token over the context is refused before any decoding.
    let short = click_prompt(5);
    let prompt_tokens = backend().tokenizer().expect("tokenizer").count(&short) as u32;
    let over = generate(&request(&short, N_CTX - prompt_tokens + 1, &[]));
    assert!(matches!(over, Err(BackendError::Model { .. })), "{over:?}");
}

#[test]
fn a_missing_or_bad_model_file_is_an_error() {
    let settings = ModelSettings {
        path: None,
        named: crossfile_engine::model::SMOLLM2_135M,
        n_ctx: N_CTX,
        threads: 1,
        kv_slots: 2,
        kv_shift_min_span: 0,
        tokenizer: None,
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = EmbeddedBackend::load(&dir.path().join("none.gguf"), &settings)
        .err()
        .expect("missing");
    assert!(
        missing.to_string().ends_with("none.gguf: no such file"),
        "{missing}"
    );
    let bad = dir.path().join("bad.gguf");
    std::fs::write(&bad, b"not a gguf at all").expect("write");
    let err = EmbeddedBackend::load(&bad, &settings).err().expect("bad");
    assert!(err.to_string().contains("is it a GGUF?"), "{err}");
}
