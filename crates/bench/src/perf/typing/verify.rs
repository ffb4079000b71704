//! Whether a kept KV cache changed a live answer: prompts recorded from the measured server's
//! completions are answered again, after the typing, by the same model in this process with a
//! fresh context each, and the texts compared.
//!
//! A fresh context here reads the prompt as a fresh live slot does (in the embedded backend's
//! aligned blocks): a one-slot backend is first given a prompt that shares nothing with the next,
//! so the slot is emptied, then the recorded prompt.

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::super::PerfError;
use crossfile_engine::backend::GenerateRequest;
use crossfile_engine::complete::backend_for;
use crossfile_engine::config::Settings;
use crossfile_engine::postprocess::Unit;
use crossfile_engine::progress::Progress;

/// A prompt a completion was made from, and the text the model answered to it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub prompt: String,
    pub text: String,
}

/// How many recorded answers a fresh context gave again, of how many compared.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Fresh {
    pub compared: usize,
    pub equal: usize,
}

/// What empties the one slot between two recorded prompts: it shares no whole block with them.
const EMPTYING_PROMPT: &str = "0";

/// Answers each of `recorded` again with the model `settings` name, on a fresh slot.
pub fn compare_fresh(
    settings: &Settings,
    recorded: &[Recorded],
    say: &dyn Fn(&str),
) -> Result<Fresh, PerfError> {
    let mut settings = settings.clone();
    settings.model.kv_slots = 1;
    settings.model.kv_shift_min_span = 0;
    // Every request must reach the model.
    settings.backend.cache_entries = 0;
    let backend = backend_for(&settings, &Progress::none())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(PerfError::io("starting a runtime"))?;
    let cancel = CancellationToken::new();
    let stop = if settings.postprocess.unit == Unit::Line {
        vec!["\n".to_string()]
    } else {
        Vec::new()
    };
    let request = |prompt: &str, max_tokens| GenerateRequest {
        prompt: prompt.to_string(),
        fim: None,
        max_tokens,
        stop: stop.clone(),
        may_start_below: false,
        reuse_kv: true,
        max_generate_ms: None,
        fallback: None,
        read_ahead: None,
        sampling: None,
        likelihood_of: None,
    };
    let mut fresh = Fresh {
        compared: 0,
        equal: 0,
    };
    for (i, answer) in recorded.iter().enumerate() {
        runtime.block_on(backend.generate(&request(EMPTYING_PROMPT, 1), &cancel))?;
        let again = runtime.block_on(backend.generate(
            &request(&answer.prompt, settings.prompt.max_new_tokens),
            &cancel,
        ))?;
        fresh.compared += 1;
        if again.text == answer.text {
            fresh.equal += 1;
        } else {
            tracing::info!(kept = ?answer.text, fresh = ?again.text, "a kept cache changed the answer");
        }
        say(&format!(
            "fresh contexts: {} of {} answers equal ({} of {})",
            fresh.equal,
            fresh.compared,
            i + 1,
            recorded.len()
        ));
    }
    Ok(fresh)
}
