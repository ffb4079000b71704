//! `crossfile complete ROOT --at FILE:LINE:COL`: a completion with its whole trace.

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crossfile_engine::complete::{Completer, Mode, backend_for, tokenizer_for};
use crossfile_engine::retrieve;

use super::args::CompleteArgs;
use super::cursor::{AtCursor, Opened, open};
use super::progress::bytes_bar;

pub fn run(args: &CompleteArgs) -> anyhow::Result<()> {
    let Opened {
        settings,
        spec,
        retriever,
        at: AtCursor { query, .. },
        index,
    } = open(&args.cursor, args.options())?;
    let retriever: Arc<dyn retrieve::Retriever> = Arc::from(retriever);
    let backend = backend_for(&settings, &bytes_bar("downloading the default model"))?;
    let tokenizer = tokenizer_for(
        &settings,
        backend.as_ref(),
        &bytes_bar("downloading the default model"),
    )?;
    let completer = Completer::new(&settings, backend, tokenizer, Mode::default());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let completion = runtime.block_on(completer.complete(
        index.snapshot(),
        query,
        retriever,
        settings.retrieve.top_k,
        &CancellationToken::new(),
    ))?;
    if spec.is_upper_bound() {
        tracing::warn!(
            "`{spec}` sees the reference: its context is an upper bound, not a real retrieval"
        );
    }
    if !args.json {
        return super::print_line(&completion.suggestion);
    }
    let t = &completion.prompt.tokens;
    let ms = &completion.timings;
    super::print_json(&json!({
        "suggestion": completion.suggestion,
        "raw_suggestion": completion.raw_suggestion,
        "template": completer.template().to_string(),
        "backend": completer.backend().name(),
        "retriever": spec.to_string(),
        "upper_bound": spec.is_upper_bound(),
        "hits": super::hits_json(&completion.hits),
        "prompt": completion.prompt.text,
        "prompt_tokens": {"crossfile": t.crossfile, "left": t.left, "right": t.right, "total": t.total},
        "timings_ms": {
            "retrieve": ms.retrieve_ms, "prompt": ms.prompt_ms, "generate": ms.generate_ms,
            "postprocess": ms.postprocess_ms, "first_token": ms.first_token_ms,
        },
        "cached": completion.generation.cached,
    }))
}
