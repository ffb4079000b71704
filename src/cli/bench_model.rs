//! `crossfile bench model ROOT`: generation speed of the embedded backend against the upstream
//! `llama-server` (same GGUF, threads, context and prompts), greedy agreement between them, and
//! end-to-end `complete` latency by stage with time to first token.

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crossfile::backend::GenerateRequest;
use crossfile::complete::{Completer, backend_for, tokenizer_for};
use crossfile::config::Settings;
use crossfile::index::{Index, Progress};
use crossfile::lang::Language;
use crossfile::perf::LlamaServer;
use crossfile::perf::sample_cursors;
use crossfile::retrieve;

use super::args::BenchModelArgs;

/// Tokens and milliseconds of one generation, as the backend measured them.
#[derive(Clone, Copy, Debug, Default)]
struct Speed {
    prompt_tokens: f64,
    prompt_ms: f64,
    generated_tokens: f64,
    generate_ms: f64,
}

impl Speed {
    fn add(&mut self, other: Speed) {
        self.prompt_tokens += other.prompt_tokens;
        self.prompt_ms += other.prompt_ms;
        self.generated_tokens += other.generated_tokens;
        self.generate_ms += other.generate_ms;
    }

    fn prompt_tps(&self) -> f64 {
        self.prompt_tokens / (self.prompt_ms / 1e3)
    }

    fn generate_tps(&self) -> f64 {
        self.generated_tokens / (self.generate_ms / 1e3)
    }
}

pub fn run(args: &BenchModelArgs) -> anyhow::Result<()> {
    let mut settings = Settings::load(&args.root)?;
    settings.backend.kind = crossfile::backend::BackendKind::Embedded;
    settings.backend.cache_entries = 0;
    settings.prompt.max_new_tokens = args.new_tokens;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let cancel = CancellationToken::new();

    let (index, _) = Index::open_or_build(&args.root, &settings.index, &Progress::none())?;
    let language = Language::ALL
        .into_iter()
        .max_by_key(|l| {
            index
                .snapshot()
                .files()
                .filter(|f| f.language == *l)
                .count()
        })
        .context("an empty workspace")?;
    let backend = backend_for(&settings, &Progress::none())?;
    let tokenizer = tokenizer_for(&settings, backend.as_ref(), &Progress::none())?;

    // The same prompts for both: the last `prompt_tokens` tokens before sampled cursors.
    let queries = sample_cursors(&index.snapshot(), language, args.prompts + args.cursors, 11);
    let prompts: Vec<String> = queries
        .iter()
        .take(args.prompts)
        .map(|q| {
            let ids = tokenizer.encode(&q.left);
            tokenizer.decode(&ids[ids.len().saturating_sub(args.prompt_tokens)..])
        })
        .collect();
    let request = |prompt: &str| GenerateRequest {
        prompt: prompt.to_string(),
        fim: None,
        max_tokens: args.new_tokens,
        stop: Vec::new(),
    };

    // The server starts first so that the two sides alternate prompt by prompt: load on the
    // machine then falls on both alike. One untimed warm-up each.
    let llama = match &args.llama_server {
        Some(bin) => {
            let model = crossfile::model::resolve(
                settings.model.path.as_deref(),
                &settings.index.cache_dir,
                &Progress::none(),
            )?;
            Some(runtime.block_on(LlamaServer::start(
                bin,
                &model,
                settings.model.n_ctx,
                settings.model.threads,
                &[],
            ))?)
        }
        None => None,
    };
    if let Some(warm) = prompts.first() {
        runtime.block_on(backend.generate(&request(warm), &cancel))?;
        if let Some(llama) = &llama {
            runtime.block_on(llama.complete_with_timings(warm, args.new_tokens))?;
        }
    }
    let mut embedded = Speed::default();
    let mut server = Speed::default();
    let mut agree = 0;
    for prompt in &prompts {
        let g = runtime.block_on(backend.generate(&request(prompt), &cancel))?;
        embedded.add(Speed {
            prompt_tokens: f64::from(g.prompt_tokens.unwrap_or(0)),
            prompt_ms: g.prompt_ms.unwrap_or(f64::NAN),
            generated_tokens: f64::from(g.generated_tokens.unwrap_or(0)),
            generate_ms: g.generate_ms.unwrap_or(f64::NAN),
        });
        let Some(llama) = &llama else { continue };
        let (text, timings) =
            runtime.block_on(llama.complete_with_timings(prompt, args.new_tokens))?;
        server.add(Speed {
            prompt_tokens: timings.prompt_n,
            prompt_ms: timings.prompt_ms,
            generated_tokens: timings.predicted_n,
            generate_ms: timings.predicted_ms,
        });
        if text == g.text {
            agree += 1;
        } else {
            tracing::debug!(server = ?text, embedded = ?g.text, server_prompt_tokens = timings.prompt_n, embedded_prompt_tokens = ?g.prompt_tokens, "greedy outputs differ");
        }
    }
    drop(llama);

    // End to end through the pipeline.
    let completer = Completer::new(&settings, backend.clone(), tokenizer.clone());
    let retriever: Arc<dyn retrieve::Retriever> = Arc::from(retrieve::build(
        &settings.retrieve.retriever,
        &settings.retrieve,
    )?);
    let mut stages: Vec<[f64; 5]> = Vec::new();
    let mut prompt_tokens = Vec::new();
    let mut totals = Vec::new();
    for query in queries.into_iter().skip(args.prompts) {
        let started = Instant::now();
        let c = runtime.block_on(completer.complete(
            index.snapshot(),
            query,
            retriever.clone(),
            settings.retrieve.top_k,
            &cancel,
        ))?;
        totals.push(started.elapsed().as_secs_f64() * 1e3);
        let t = c.timings;
        prompt_tokens.push(f64::from(c.prompt.tokens.total));
        stages.push([
            t.retrieve_ms,
            t.prompt_ms,
            t.generate_ms,
            t.postprocess_ms,
            t.first_token_ms.unwrap_or(f64::NAN),
        ]);
    }
    let column = |i: usize| stages.iter().map(|s| s[i]).collect::<Vec<_>>();
    let report = json!({
        "threads": settings.model.threads,
        "n_ctx": settings.model.n_ctx,
        "prompts": prompts.len(),
        "prompt_tokens": args.prompt_tokens,
        "new_tokens": args.new_tokens,
        "embedded": {"prompt_tps": embedded.prompt_tps(), "generate_tps": embedded.generate_tps()},
        "llama_server": args.llama_server.as_ref().map(|_| json!({
            "prompt_tps": server.prompt_tps(), "generate_tps": server.generate_tps(),
            "greedy_agreement": format!("{agree}/{}", prompts.len()),
        })),
        "ratio_prompt": embedded.prompt_tps() / server.prompt_tps(),
        "ratio_generate": embedded.generate_tps() / server.generate_tps(),
        "complete": {
            "cursors": totals.len(),
            "retriever": settings.retrieve.retriever.to_string(),
            "p50_prompt_tokens": p50(&prompt_tokens),
            "p50_ms": {"total": p50(&totals), "retrieve": p50(&column(0)), "prompt": p50(&column(1)), "generate": p50(&column(2)),
                        "postprocess": p50(&column(3)), "first_token": p50(&column(4))},
        },
    });
    if args.json {
        return super::print_json(&report);
    }
    let mut out = String::new();
    out.push_str(&format!(
        "embedded     prompt {:.1} tok/s, generation {:.1} tok/s ({} prompts of {} tokens, {} new tokens, {} threads)\n",
        embedded.prompt_tps(),
        embedded.generate_tps(),
        prompts.len(),
        args.prompt_tokens,
        args.new_tokens,
        settings.model.threads
    ));
    if args.llama_server.is_some() {
        out.push_str(&format!(
            "llama-server prompt {:.1} tok/s, generation {:.1} tok/s; embedded/server {:.2}x prompt, {:.2}x generation; greedy outputs agree {agree}/{}\n",
            server.prompt_tps(),
            server.generate_tps(),
            embedded.prompt_tps() / server.prompt_tps(),
            embedded.generate_tps() / server.generate_tps(),
            prompts.len()
        ));
    }
    out.push_str(&format!(
        "complete (p50 of {}, prompts of {:.0} tokens): total {:.0} ms = retrieve {:.1} + prompt {:.1} + generate {:.0} + postprocess {:.2}; first token {:.0} ms\n",
        totals.len(),
        p50(&prompt_tokens),
        p50(&totals),
        p50(&column(0)),
        p50(&column(1)),
        p50(&column(2)),
        p50(&column(3)),
        p50(&column(4))
    ));
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

/// The median of the finite values (nearest rank: the lower middle of an even count), NaN for
/// none.
fn p50(values: &[f64]) -> f64 {
    let finite: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    crossfile::report::bootstrap::percentile(&finite, 50.0).unwrap_or(f64::NAN)
}
