//! `bench model`: generation speed of the embedded backend against the upstream `llama-server`
//! (same GGUF, threads, context and prompts), greedy agreement between them, and end-to-end
//! `complete` latency by stage with time to first token.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::{LlamaServer, PerfError, percentile, sample_cursors};
use crossfile_engine::backend::{BackendKind, GenerateRequest};
use crossfile_engine::complete::{Completer, Mode, backend_for, tokenizer_for};
use crossfile_engine::config::Settings;
use crossfile_engine::index::{Index, Progress};
use crossfile_engine::lang::Language;
use crossfile_engine::retrieve;

/// What to measure.
#[derive(Clone, Debug)]
pub struct GenerationParams {
    /// A workspace whose code makes the prompts.
    pub root: PathBuf,
    /// Its settings; the backend is the embedded one whatever they say, with no answer cache.
    pub settings: Settings,
    /// The upstream llama-server binary to compare with.
    pub llama_server: Option<PathBuf>,
    /// Prompts for the speed comparison.
    pub prompts: usize,
    /// Tokens per prompt.
    pub prompt_tokens: usize,
    /// Tokens generated per prompt.
    pub new_tokens: u32,
    /// Cursors for the end-to-end `complete` latency.
    pub cursors: usize,
    /// A draft GGUF: llama-server is also measured with it (`--model-draft`), beside itself.
    pub draft: Option<PathBuf>,
    /// Tokens the draft proposes at most per step.
    pub draft_max: u32,
}

/// What `bench model` measured (`--json` prints it).
#[derive(Clone, Debug, Serialize)]
pub struct GenerationReport {
    pub threads: u32,
    pub n_ctx: u32,
    pub prompts: usize,
    pub prompt_tokens: usize,
    pub new_tokens: u32,
    /// The GGUF measured.
    pub model: PathBuf,
    pub embedded: Throughput,
    pub llama_server: Option<ServerThroughput>,
    /// llama-server with the draft model (`params.draft`), on the same prompts.
    pub speculative: Option<Speculative>,
    /// Embedded over server throughput (NaN without a server).
    pub ratio_prompt: f64,
    pub ratio_generate: f64,
    pub complete: CompleteLatency,
}

/// Tokens per second reading the prompt and generating.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Throughput {
    pub prompt_tps: f64,
    pub generate_tps: f64,
}

/// The server's throughput, and how many greedy outputs equal the embedded backend's.
#[derive(Clone, Debug, Serialize)]
pub struct ServerThroughput {
    pub prompt_tps: f64,
    pub generate_tps: f64,
    /// `agreeing/prompts`.
    pub greedy_agreement: String,
}

/// llama-server decoding speculatively with a draft model, against itself alone.
#[derive(Clone, Debug, Serialize)]
pub struct Speculative {
    pub draft: PathBuf,
    pub draft_max: u32,
    pub generate_tps: f64,
    /// Over llama-server alone's generation throughput.
    pub speedup: f64,
    /// Tokens the draft proposed and the model accepted, over every prompt.
    pub drafted: f64,
    pub accepted: f64,
    /// `equal/prompts`: greedy outputs equal to llama-server's alone.
    pub equal_to_alone: String,
}

/// End-to-end `complete` over sampled cursors: medians by stage.
#[derive(Clone, Debug, Serialize)]
pub struct CompleteLatency {
    pub cursors: usize,
    pub retriever: String,
    pub p50_prompt_tokens: f64,
    pub p50_ms: Stages,
}

/// Milliseconds by stage (medians of the finite values).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Stages {
    pub total: f64,
    pub retrieve: f64,
    pub prompt: f64,
    pub generate: f64,
    pub postprocess: f64,
    pub first_token: f64,
}

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

/// Times the embedded backend and the server on the same prompts, then `complete` end to end.
pub fn measure_generation(params: &GenerationParams) -> Result<GenerationReport, PerfError> {
    let mut settings = params.settings.clone();
    settings.backend.kind = BackendKind::Embedded;
    settings.backend.cache_entries = 0;
    settings.prompt.max_new_tokens = params.new_tokens;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(PerfError::io("starting the async runtime"))?;
    let cancel = CancellationToken::new();

    let (index, _) = Index::open_or_build(&params.root, &settings.index, &Progress::none())?;
    let language = Language::ALL
        .into_iter()
        .max_by_key(|l| {
            index
                .snapshot()
                .files()
                .filter(|f| f.language == *l)
                .count()
        })
        .ok_or_else(|| PerfError::Unmeasurable("an empty workspace".into()))?;
    let backend = backend_for(&settings, &Progress::none())?;
    let tokenizer = tokenizer_for(&settings, backend.as_ref(), &Progress::none())?;

    // The same prompts for both: the last `prompt_tokens` tokens before sampled cursors.
    let queries = sample_cursors(
        &index.snapshot(),
        language,
        params.prompts + params.cursors,
        11,
    );
    let prompts: Vec<String> = queries
        .iter()
        .take(params.prompts)
        .map(|q| {
            let ids = tokenizer.encode(&q.left);
            tokenizer.decode(&ids[ids.len().saturating_sub(params.prompt_tokens)..])
        })
        .collect();
    let request = |prompt: &str| GenerateRequest {
        prompt: prompt.to_string(),
        fim: None,
        max_tokens: params.new_tokens,
        stop: Vec::new(),
        may_start_below: false,
        reuse_kv: false,
        max_generate_ms: None,
        fallback: None,
        read_ahead: None,
        sampling: None,
        likelihood_of: None,
    };

    // The server starts first so that the two sides alternate prompt by prompt: load on the
    // machine then falls on both alike. One untimed warm-up each.
    let model = crossfile_engine::model::resolve(
        &settings.model,
        &settings.index.cache_dir,
        &Progress::none(),
    )?;
    let start_server = |bin: &PathBuf, extra: &[&str]| {
        runtime.block_on(LlamaServer::start(
            bin,
            &model,
            settings.model.n_ctx,
            settings.model.threads,
            extra,
        ))
    };
    let llama = match &params.llama_server {
        Some(bin) => Some(start_server(bin, &[])?),
        None => None,
    };
    let draft_max = params.draft_max.to_string();
    let drafted = match (&params.llama_server, &params.draft) {
        (Some(bin), Some(draft)) => {
            let draft = draft.to_string_lossy();
            Some(start_server(
                bin,
                &[
                    "--model-draft",
                    &draft,
                    "--spec-type",
                    "draft-simple",
                    "--spec-draft-n-max",
                    &draft_max,
                ],
            )?)
        }
        _ => None,
    };
    if let Some(warm) = prompts.first() {
        runtime.block_on(backend.generate(&request(warm), &cancel))?;
        for llama in llama.iter().chain(&drafted) {
            runtime.block_on(llama.complete_with_timings(warm, params.new_tokens))?;
        }
    }
    let mut embedded = Speed::default();
    let mut server = Speed::default();
    let mut speculative = Speed::default();
    let (mut proposed, mut accepted, mut equal_to_alone) = (0.0, 0.0, 0);
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
            runtime.block_on(llama.complete_with_timings(prompt, params.new_tokens))?;
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
        let Some(drafted) = &drafted else { continue };
        let (drafted_text, t) =
            runtime.block_on(drafted.complete_with_timings(prompt, params.new_tokens))?;
        speculative.add(Speed {
            prompt_tokens: t.prompt_n,
            prompt_ms: t.prompt_ms,
            generated_tokens: t.predicted_n,
            generate_ms: t.predicted_ms,
        });
        proposed += t.draft_n.unwrap_or(0.0);
        accepted += t.draft_n_accepted.unwrap_or(0.0);
        if drafted_text == text {
            equal_to_alone += 1;
        } else {
            tracing::debug!(alone = ?text, drafted = ?drafted_text, "speculative output differs");
        }
    }
    drop(llama);
    drop(drafted);

    // End to end through the pipeline.
    let completer = Completer::new(
        &settings,
        backend.clone(),
        tokenizer.clone(),
        Mode::default(),
    );
    let retriever: Arc<dyn retrieve::Retriever> = Arc::from(retrieve::build(
        &settings.retrieve.retriever,
        &settings.retrieve,
    )?);
    let mut stages: Vec<[f64; 5]> = Vec::new();
    let mut prompt_tokens = Vec::new();
    let mut totals = Vec::new();
    for query in queries.into_iter().skip(params.prompts) {
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
    let column = |i: usize| p50(&stages.iter().map(|s| s[i]).collect::<Vec<_>>());
    Ok(GenerationReport {
        threads: settings.model.threads,
        n_ctx: settings.model.n_ctx,
        prompts: prompts.len(),
        prompt_tokens: params.prompt_tokens,
        new_tokens: params.new_tokens,
        speculative: params
            .draft
            .clone()
            .filter(|_| params.llama_server.is_some())
            .map(|draft| Speculative {
                draft,
                draft_max: params.draft_max,
                generate_tps: speculative.generate_tps(),
                speedup: speculative.generate_tps() / server.generate_tps(),
                drafted: proposed,
                accepted,
                equal_to_alone: format!("{equal_to_alone}/{}", prompts.len()),
            }),
        model,
        embedded: Throughput {
            prompt_tps: embedded.prompt_tps(),
            generate_tps: embedded.generate_tps(),
        },
        llama_server: params.llama_server.as_ref().map(|_| ServerThroughput {
            prompt_tps: server.prompt_tps(),
            generate_tps: server.generate_tps(),
            greedy_agreement: format!("{agree}/{}", prompts.len()),
        }),
        ratio_prompt: embedded.prompt_tps() / server.prompt_tps(),
        ratio_generate: embedded.generate_tps() / server.generate_tps(),
        complete: CompleteLatency {
            cursors: totals.len(),
            retriever: settings.retrieve.retriever.to_string(),
            p50_prompt_tokens: p50(&prompt_tokens),
            p50_ms: Stages {
                total: p50(&totals),
                retrieve: column(0),
                prompt: column(1),
                generate: column(2),
                postprocess: column(3),
                first_token: column(4),
            },
        },
    })
}

/// The median of the finite values (nearest rank: the lower middle of an even count), NaN for
/// none.
fn p50(values: &[f64]) -> f64 {
    let finite: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    percentile(&finite, 50.0)
}
