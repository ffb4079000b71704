//! `bench typing`: ghost text while a person types, measured from the editor's side of real
//! stdio.
//!
//! In seeded places of the workspace's files a few lines are removed and typed again, keystroke
//! by keystroke ([`script`]), into `crossfile serve` started as a child ([`session`]): a
//! `didChange` per keystroke and an inline completion request after it, as an editor sends them,
//! with the server's debounce on. Before typing at a place, the person puts the cursor there and
//! waits for the first suggestion: the file's prompt read cold, reported apart. Keystrokes arrive open-loop, one per `pace.keystroke`, and
//! `pace.pause` after each that ends an identifier, an operator or a line: the moments a person
//! looks for a suggestion. Latency is measured at those pauses, from the keystroke to its
//! answer; a request that a newer keystroke superseded (the server cancels it) counts as
//! cancelled, and at a pause as no suggestion in time — a censored latency, so a percentile that
//! falls on one is unknown (`null`), never flattered.
//!
//! With `--llama-server`, the same keystrokes go in the same run to a second `crossfile serve`
//! whose backend is the upstream llama-server (started with `--cache-reuse` on one slot, asked
//! with `cache_prompt`): the same prompts, the anchor side by side.
//!
//! Quality is checked two ways after the typing: recorded live answers are answered again by a
//! fresh context ([`verify`]), and answered pauses again by a server with reuse off
//! ([`reuse_off`]).

mod reuse_off;
mod script;
mod session;
mod verify;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

pub use reuse_off::{Paired, ReuseOff};
pub use session::Pace;
pub use verify::Fresh;

use super::serve_child::{self, SLOW};
use super::{LlamaServer, PerfError, mean};
use crate::report::bootstrap::percentile_sorted;
use crossfile_engine::config::Settings;
use crossfile_engine::index::Progress;
use crossfile_engine::memory::ProcessMemory;
use script::RetypedLines;
use session::{AnsweredPause, Observed};

/// What llama-server is started with as the anchor: one slot, and chunks of at least 256 tokens
/// of its cache reused by shifting (llama.vim's recommendation).
const ANCHOR_ARGS: [&str; 4] = ["-np", "1", "--cache-reuse", "256"];

/// What to measure.
#[derive(Clone, Debug)]
pub struct TypingParams {
    /// The `crossfile` binary whose `serve` is measured.
    pub server: PathBuf,
    /// The workspace (absolute, canonical) and its settings.
    pub workspace: PathBuf,
    pub settings: Settings,
    /// Places typed, and lines removed and typed at each.
    pub sessions: usize,
    pub lines: usize,
    pub seed: u64,
    /// Backend of the measured server (`embedded`, or a name whose endpoint the settings give).
    pub backend: String,
    /// The model's context size, if not the settings'.
    pub n_ctx: Option<u32>,
    /// A GGUF model file (default: the fetched default model).
    pub model: Option<PathBuf>,
    /// Where the servers keep their index (default: a fresh temporary directory).
    pub cache_dir: Option<PathBuf>,
    /// The upstream llama-server binary: the anchor.
    pub llama_server: Option<PathBuf>,
    /// More `initializationOptions` for the measured server (e.g. `{"model": {"kv_slots": 2}}`),
    /// merged over the bench's own.
    pub server_options: Value,
    pub pace: Pace,
    /// Recorded completions of the embedded backend answered again by a fresh context.
    pub verify: usize,
    /// Answered pauses answered again by a server with `lsp.reuse_kv` off.
    pub reuse_off: usize,
}

/// What `bench typing` measured (`--json` prints it).
#[derive(Clone, Debug, Serialize)]
pub struct TypingReport {
    pub workspace: PathBuf,
    pub sessions: usize,
    pub seed: u64,
    pub n_ctx: u32,
    /// The GGUF both servers loaded (each was asked which it runs: `crossfile.status`).
    pub model: PathBuf,
    /// The measured server.
    #[serde(flatten)]
    pub measured: Measured,
    /// With `verify`: how many of the recorded live answers a fresh context gave again.
    pub fresh: Option<Fresh>,
    /// With `reuse_off`: edit similarity over the same pauses, live and with reuse off.
    pub reuse_off: Option<ReuseOff>,
    /// The same keystrokes through llama-server (with `--llama-server`).
    pub anchor: Option<Measured>,
}

/// One server's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Measured {
    pub backend: String,
    pub keystrokes: usize,
    pub requests: usize,
    pub answered: usize,
    pub cancelled: usize,
    pub errors: usize,
    pub first_error: Option<String>,
    /// Time to the first suggestion at each place, asked before typing (a cold prompt).
    pub first_suggestion_ms: FirstSuggestion,
    /// Keystrokes followed by a pause: where latency is measured.
    pub pauses: usize,
    pub latency_ms: Percentiles,
    /// Shares (0..=1) of the pauses whose suggestion arrived within 300 ms and within 1 s.
    pub within_300ms: f64,
    pub within_1000ms: f64,
    /// Completions the model made, and the sums of their prompt tokens.
    pub completions: usize,
    pub prompt_tokens: PromptTokens,
    /// Mean edit similarity (0..=1) of the pauses' suggestions to what was typed next.
    pub es: f64,
    /// The serving processes' memory (for the anchor, crossfile's and llama-server's together).
    pub rss_mb: Rss,
    pub duration_s: f64,
}

/// Keystroke-to-answer percentiles at the pauses, in milliseconds; `None` when the rank falls on
/// a pause that got no answer in time.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Percentiles {
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
}

/// The first suggestion in a file, in milliseconds: the median and the slowest.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FirstSuggestion {
    pub p50: f64,
    pub max: f64,
}

/// Prompt tokens a kept KV cache already held, and evaluated.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PromptTokens {
    pub reused: u64,
    pub evaluated: u64,
}

/// Resident memory after the model's load, after the last place, and the peak (`VmHWM`).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Rss {
    pub start: f64,
    pub end: f64,
    pub peak: f64,
}

/// Types the places into the measured server, then (with `llama_server`) into the anchor;
/// `fetching` shows the model's download, `say` a line per step.
pub fn measure_typing(
    params: &TypingParams,
    fetching: &Progress,
    say: &dyn Fn(&str),
) -> Result<TypingReport, PerfError> {
    let settings = &params.settings;
    let places = script::places(
        &params.workspace,
        &settings.index.workspace,
        params.sessions,
        params.lines,
        params.seed,
    )?;
    if places.is_empty() {
        return Err(PerfError::Unmeasurable(format!(
            "{} has no file with {} lines of code in a row to type",
            params.workspace.display(),
            params.lines
        )));
    }
    let keystrokes: usize = places.iter().map(|p| p.keystrokes.len()).sum();
    say(&format!(
        "{} places, {keystrokes} keystrokes each way",
        places.len()
    ));
    let model = serve_child::model_file(params.model.as_deref(), settings, fetching)?;
    let n_ctx = params.n_ctx.unwrap_or(settings.model.n_ctx);
    let cache = serve_child::CacheDir::new(params.cache_dir.as_deref())?;
    let cache_dir = &cache.path;
    let options = |backend: Value| {
        json!({
            "index": {"cache_dir": cache_dir},
            "backend": backend,
            "model": {"path": model, "n_ctx": n_ctx},
        })
    };
    let mut measured_options = options(json!({"kind": params.backend}));
    merge(&mut measured_options, &params.server_options);
    let reuse_off_options = measured_options.clone();
    let record = if params.backend == "embedded" {
        params.verify
    } else {
        0
    };
    let (measured, recorded, answered) = type_into(
        params,
        &places,
        measured_options,
        &params.backend,
        None,
        record,
        say,
    )?;
    let fresh = if recorded.is_empty() {
        None
    } else {
        let mut settings = settings.clone();
        settings.model.path = Some(model.clone());
        settings.model.n_ctx = n_ctx;
        Some(verify::compare_fresh(&settings, &recorded, say)?)
    };
    let reuse_off = match params.reuse_off {
        0 => None,
        n => Some(reuse_off::compare_reuse_off(
            &params.server,
            &params.workspace,
            &places,
            reuse_off_options,
            &answered,
            n,
            say,
        )?),
    };
    let anchor = match &params.llama_server {
        Some(bin) => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(PerfError::io("starting a runtime"))?;
            let threads = settings.model.threads;
            let llama = runtime.block_on(LlamaServer::start(
                bin,
                &model,
                n_ctx,
                threads,
                &ANCHOR_ARGS,
            ))?;
            say(&format!(
                "the anchor: {} {}",
                bin.display(),
                ANCHOR_ARGS.join(" ")
            ));
            let backend = json!({"kind": "llamacpp", "endpoint": llama.url});
            let (anchor, _, _) = type_into(
                params,
                &places,
                options(backend),
                "llama-server",
                Some(llama.pid()),
                0,
                say,
            )?;
            Some(anchor)
        }
        None => None,
    };
    Ok(TypingReport {
        workspace: params.workspace.clone(),
        sessions: places.len(),
        seed: params.seed,
        n_ctx,
        model,
        measured,
        fresh,
        reuse_off,
        anchor,
    })
}

/// Starts a server with `options`, loads its model with one unmeasured completion, types every
/// place and stops it; also the prompts and answers of up to `record` completions, and the
/// pauses answered in time. `also` is another process whose memory counts (the anchor's
/// llama-server).
fn type_into(
    params: &TypingParams,
    places: &[RetypedLines],
    options: Value,
    backend: &str,
    also: Option<u32>,
    record: usize,
    say: &dyn Fn(&str),
) -> Result<(Measured, Vec<verify::Recorded>, Vec<AnsweredPause>), PerfError> {
    let started = std::time::Instant::now();
    let asked = |pointer: &str| {
        options
            .pointer(pointer)
            .and_then(Value::as_str)
            .map(String::from)
    };
    let (model, kind) = (asked("/model/path"), asked("/backend/kind"));
    let mut served = serve_child::start(&params.server, &params.workspace, options)?;
    say(&format!(
        "{backend}: indexed in {:.1} s ({})",
        served.index_s, served.indexed
    ));
    session::warm_up(&mut served.client, &places[0], SLOW)?;
    if let (Some(model), Some(kind)) = (model, kind) {
        serve_child::check_runs(&mut served.client, Path::new(&model), &kind)?;
    }
    let pid = served.pid;
    let memory = move || -> Result<(f64, f64), PerfError> {
        let mut rss = 0.0;
        let mut peak = 0.0;
        for pid in std::iter::once(pid).chain(also) {
            let m: ProcessMemory = serve_child::memory(pid)?;
            rss += m.rss_mb();
            peak += m.hwm_mb();
        }
        Ok((rss, peak))
    };
    let (start, _) = memory()?;
    let typing = std::time::Instant::now();
    let total = places.len();
    let mut observed = session::type_places(
        &mut served.client,
        places,
        params.pace,
        record,
        &mut |index, observed| {
            let (rss, _) = memory()?;
            let place = &places[index];
            say(&format!(
                "{backend}: {}/{total} {}:{} typed · {} of {} pauses answered · RSS {rss:.1} MB",
                index + 1,
                place.rel,
                place.first_line + 1,
                observed.pauses.iter().flatten().count(),
                observed.pauses.len(),
            ));
            Ok(())
        },
    )?;
    let duration_s = typing.elapsed().as_secs_f64();
    let (end, peak) = memory()?;
    served.client.finish(SLOW)?;
    tracing::debug!(
        backend,
        seconds = started.elapsed().as_secs_f64(),
        "typed every place"
    );
    let recorded = std::mem::take(&mut observed.recorded);
    let answered = observed.answered_pauses.clone();
    let measured = figures(backend, observed, Rss { start, end, peak }, duration_s);
    Ok((measured, recorded, answered))
}

/// The report's figures from what a server did.
fn figures(backend: &str, observed: Observed, rss_mb: Rss, duration_s: f64) -> Measured {
    let pauses = observed.pauses.len();
    let within = |ms: f64| {
        let n = observed
            .pauses
            .iter()
            .flatten()
            .filter(|&&l| l <= ms)
            .count();
        if pauses == 0 {
            f64::NAN
        } else {
            n as f64 / pauses as f64
        }
    };
    Measured {
        backend: backend.to_string(),
        keystrokes: observed.keystrokes,
        requests: observed.requests,
        answered: observed.answered,
        cancelled: observed.cancelled,
        errors: observed.errors,
        first_error: observed.first_error.clone(),
        first_suggestion_ms: FirstSuggestion {
            p50: super::percentile(&observed.first_ms, 50.0),
            max: super::percentile(&observed.first_ms, 100.0),
        },
        pauses,
        latency_ms: censored_percentiles(&observed.pauses),
        within_300ms: within(300.0),
        within_1000ms: within(1000.0),
        completions: observed.completions,
        prompt_tokens: PromptTokens {
            reused: observed.reused_tokens,
            evaluated: observed.evaluated_tokens,
        },
        es: mean(
            &observed
                .answered_pauses
                .iter()
                .map(|p| p.es)
                .collect::<Vec<_>>(),
        ),
        rss_mb,
        duration_s,
    }
}

/// Nearest-rank percentiles of latencies where `None` (no answer in time) ranks above every
/// answer.
fn censored_percentiles(latencies: &[Option<f64>]) -> Percentiles {
    let mut sorted: Vec<f64> = latencies
        .iter()
        .map(|l| l.unwrap_or(f64::INFINITY))
        .collect();
    sorted.sort_by(f64::total_cmp);
    let at = |p| percentile_sorted(&sorted, p).filter(|v| v.is_finite());
    Percentiles {
        p50: at(50.0),
        p95: at(95.0),
        p99: at(99.0),
    }
}

/// `extra`'s keys set over `base`'s, objects merged key by key.
/// No extra options (`null`) leave `base` as it is.
fn merge(base: &mut Value, extra: &Value) {
    match (base, extra) {
        (_, Value::Null) => {}
        (Value::Object(base), Value::Object(extra)) => {
            for (key, value) in extra {
                merge(base.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
        (base, extra) => *base = extra.clone(),
    }
}

impl Default for Pace {
    /// 100 ms a keystroke, a 600 ms pause, a second to settle after opening a file.
    fn default() -> Pace {
        Pace {
            keystroke: Duration::from_millis(100),
            pause: Duration::from_millis(600),
            settle: Duration::from_secs(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_without_an_answer_ranks_above_every_answer() {
        let p = censored_percentiles(&[Some(10.0), Some(30.0), None, Some(20.0)]);
        assert_eq!(p.p50, Some(20.0));
        assert_eq!(p.p95, None, "the 95th percentile is the unanswered pause");
        let all = censored_percentiles(&[Some(5.0)]);
        assert_eq!((all.p50, all.p99), (Some(5.0), Some(5.0)));
        assert_eq!(censored_percentiles(&[]).p50, None);
    }

    #[test]
    fn no_extra_options_keep_every_option() {
        // `--server-options` not given is `null`: the model, context and backend stay (they
        // were all dropped once, and the server measured its default model instead).
        let options = json!({"model": {"path": "m", "n_ctx": 4096}, "backend": {"kind": "x"}});
        let mut merged = options.clone();
        merge(&mut merged, &Value::Null);
        assert_eq!(merged, options);
        // A null inside extra options changes nothing either.
        merge(&mut merged, &json!({"model": null}));
        assert_eq!(merged, options);
    }

    #[test]
    fn extra_options_merge_key_by_key() {
        let mut base = json!({"model": {"path": "m", "n_ctx": 2048}, "backend": {"kind": "x"}});
        merge(
            &mut base,
            &json!({"model": {"kv_slots": 2}, "lsp": {"debounce_ms": 0}}),
        );
        assert_eq!(
            base,
            json!({"model": {"path": "m", "n_ctx": 2048, "kv_slots": 2},
                   "backend": {"kind": "x"}, "lsp": {"debounce_ms": 0}})
        );
    }
}
