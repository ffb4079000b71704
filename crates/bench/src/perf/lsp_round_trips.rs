//! `bench lsp`: what the language server costs over the engine, measured from the client's side
//! of real stdio.
//!
//! It starts `crossfile serve` as a child, initializes it on the workspace (the index in a fresh
//! cache dir unless one is given, so indexing is cold), waits for the indexing `$/progress` end,
//! opens real files of the workspace (and gives the server a second to index them), and sends
//! `textDocument/completion` requests one after another at the ends of seeded random non-blank
//! lines, timing each round trip from the request's write to its answer's arrival. With backend
//! `none` no model generates, so the latency is the server's own overhead: message handling,
//! retrieval and prompt building. With `embedded` the default model is loaded (one completion
//! waits for it) and the server's memory is read after indexing and the load. Memory is the
//! child's `VmRSS` and `VmHWM` from `/proc/<pid>/status`, in decimal megabytes.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use super::serve_child::{self, CacheDir, SLOW, Served, file_uri, memory};
use super::{ClientError, LspClient, PerfError, mean, ms, percentile};
use crossfile_engine::chunk::is_blank;
use crossfile_engine::config::Settings;
use crossfile_engine::index::Progress;
use crossfile_engine::memory::ProcessMemory;
use crossfile_engine::seeded::SplitMix64;
use crossfile_engine::workspace;

/// The overhead target: p95 of completion round trips with backend `none`.
pub const TARGET_P95_MS: f64 = 15.0;
/// The memory target: resident memory with the embedded model loaded and its kept KV slots
/// (issue 15's; 250 MB before contexts were kept between completions).
pub const TARGET_RSS_MB: f64 = 300.0;
/// How long the server is left to index the opened buffers before the first completion.
const SETTLE: Duration = Duration::from_secs(1);
/// How long one measured completion may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// What to measure.
#[derive(Clone, Debug)]
pub struct LspParams {
    /// The `crossfile` binary whose `serve` is measured.
    pub server: PathBuf,
    /// The workspace the server indexes (absolute, canonical).
    pub workspace: PathBuf,
    /// The workspace's settings (which files to open, where the model is).
    pub settings: Settings,
    /// Completion requests to time, one after another.
    pub requests: usize,
    /// Seed of the files opened and the cursors.
    pub seed: u64,
    /// Files of the workspace opened in the editor; the requests spread over them.
    pub files: usize,
    /// Backend of the server (`none`: no model, the server's own overhead).
    pub backend: String,
    /// The model's context size, if not the settings'.
    pub n_ctx: Option<u32>,
    /// A GGUF model file (default: the fetched default model).
    pub model: Option<PathBuf>,
    /// Where the server keeps its index (default: a fresh temporary directory).
    pub cache_dir: Option<PathBuf>,
    /// The server's `lsp.debounce_ms`.
    pub debounce_ms: u64,
}

/// What `bench lsp` measured (`--json` prints it).
#[derive(Clone, Debug, Serialize)]
pub struct LspReport {
    pub workspace: PathBuf,
    pub backend: String,
    pub n_ctx: u32,
    pub debounce_ms: u64,
    /// The indexing `$/progress` end's message.
    pub files_indexed: String,
    pub initialize_ms: f64,
    pub index_s: f64,
    pub first_completion_ms: f64,
    pub requests: usize,
    pub errors: usize,
    pub suggestions: usize,
    pub latency_ms: Latency,
    pub target_p95_ms: f64,
    pub memory_mb: ServerMemory,
    pub target_rss_mb: f64,
    pub exit_code: Option<i32>,
}

/// Completion round trips, in milliseconds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Latency {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

/// The server's memory at three moments.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ServerMemory {
    pub after_index: Megabytes,
    pub after_first_completion: Megabytes,
    pub after_requests: Megabytes,
}

/// `VmRSS` and `VmHWM` in decimal megabytes.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Megabytes {
    pub rss: f64,
    pub hwm: f64,
}

impl From<ProcessMemory> for Megabytes {
    fn from(m: ProcessMemory) -> Megabytes {
        Megabytes {
            rss: m.rss_mb(),
            hwm: m.hwm_mb(),
        }
    }
}

/// A cursor: a document and an LSP position in it.
#[derive(Clone)]
struct Cursor {
    uri: String,
    line: usize,
    character: usize,
}

/// Starts the server, indexes, opens files and times completion round trips; `fetching` shows
/// the model's download if it has to be fetched, `say` what is being done (a line each).
pub fn measure_lsp(
    params: &LspParams,
    fetching: &Progress,
    say: &dyn Fn(&str),
) -> Result<LspReport, PerfError> {
    let root = &params.workspace;
    let settings = &params.settings;
    let model = serve_child::model_file(params.model.as_deref(), settings, fetching)?;
    let cache = CacheDir::new(params.cache_dir.as_deref())?;
    let cache_dir = &cache.path;
    let mut model_options = json!({"path": model});
    if let Some(n_ctx) = params.n_ctx {
        model_options["n_ctx"] = json!(n_ctx);
    }
    let options = json!({
        "index": {"cache_dir": cache_dir},
        "backend": {"kind": params.backend},
        "model": model_options,
        "lsp": {"debounce_ms": params.debounce_ms},
    });

    let Served {
        mut client,
        pid,
        initialize_ms,
        index_s,
        indexed,
    } = serve_child::start(&params.server, root, options)?;
    let after_index = memory(pid)?;
    say(&format!("indexed in {index_s:.2} s: {indexed}"));

    let cursors = open_files(&mut client, root, settings, params.files, params.seed, say)?;
    let cursors = pick(&cursors, params.requests.max(1), params.seed);
    // The server indexes the opened buffers 300 ms after they open; that work is not the
    // completions' to carry.
    std::thread::sleep(SETTLE);
    // The first completion waits for the model (for `none`, its tokenizer).
    let started = Instant::now();
    let first = completion(&mut client, &cursors[0], SLOW)?;
    let first_ms = ms(started.elapsed());
    if let Some(error) = first.get("error") {
        return Err(PerfError::Unmeasurable(format!(
            "the first completion failed: {error}"
        )));
    }
    let after_load = memory(pid)?;
    say(&format!("first completion in {first_ms:.0} ms"));

    let mut latencies = Vec::with_capacity(params.requests);
    let mut errors = 0;
    let mut suggestions = 0;
    for cursor in cursors.iter().take(params.requests) {
        let (id, sent) =
            client.start_request("textDocument/completion", completion_params(cursor))?;
        let (answer, arrived) = client.response(id, REQUEST_TIMEOUT)?;
        latencies.push(ms(arrived.duration_since(sent)));
        if answer.get("error").is_some() {
            errors += 1;
        } else if answer
            .pointer("/result/items")
            .and_then(Value::as_array)
            .is_some_and(|items| !items.is_empty())
        {
            suggestions += 1;
        }
    }
    let after_requests = memory(pid)?;
    let exit_code = client.finish(SLOW)?;

    let p = |q| percentile(&latencies, q);
    Ok(LspReport {
        workspace: root.clone(),
        backend: params.backend.clone(),
        n_ctx: params.n_ctx.unwrap_or(settings.model.n_ctx),
        debounce_ms: params.debounce_ms,
        files_indexed: indexed,
        initialize_ms,
        index_s,
        first_completion_ms: first_ms,
        requests: latencies.len(),
        errors,
        suggestions,
        latency_ms: Latency {
            p50: p(50.0),
            p95: p(95.0),
            p99: p(99.0),
            max: p(100.0),
            mean: mean(&latencies),
        },
        target_p95_ms: TARGET_P95_MS,
        memory_mb: ServerMemory {
            after_index: after_index.into(),
            after_first_completion: after_load.into(),
            after_requests: after_requests.into(),
        },
        target_rss_mb: TARGET_RSS_MB,
        exit_code,
    })
}

/// Opens up to `n` seeded random files of the workspace that have a non-blank line, and returns
/// the end of every non-blank line of them.
fn open_files(
    client: &mut LspClient,
    root: &Path,
    settings: &Settings,
    n: usize,
    seed: u64,
    say: &dyn Fn(&str),
) -> Result<Vec<Cursor>, PerfError> {
    let mut files = workspace::discover(root, &settings.index.workspace)?.files;
    let mut rng = SplitMix64(seed);
    let mut cursors = Vec::new();
    let mut opened = 0;
    while opened < n.max(1) && !files.is_empty() {
        let file = files.swap_remove(rng.below(files.len()));
        let Ok(source) = workspace::read_source(&file.abs, settings.index.workspace.max_file_bytes)
        else {
            continue;
        };
        let uri = file_uri(&file.abs);
        let before = cursors.len();
        for (line, text) in source.text.split('\n').enumerate() {
            if !is_blank(text) {
                cursors.push(Cursor {
                    uri: uri.clone(),
                    line,
                    character: text.encode_utf16().count(),
                });
            }
        }
        if cursors.len() == before {
            continue;
        }
        client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": file.language.name(),
                   "version": 1, "text": source.text}}),
        )?;
        opened += 1;
        say(&format!("opened {}", file.rel));
    }
    if cursors.is_empty() {
        return Err(PerfError::Unmeasurable(format!(
            "{} has no source file with code in it",
            root.display()
        )));
    }
    Ok(cursors)
}

/// `n` cursors drawn from `all`, the same for the same seed.
fn pick(all: &[Cursor], n: usize, seed: u64) -> Vec<Cursor> {
    let mut rng = SplitMix64(seed ^ 0x5eed);
    (0..n).map(|_| all[rng.below(all.len())].clone()).collect()
}

fn completion_params(cursor: &Cursor) -> Value {
    json!({"textDocument": {"uri": cursor.uri},
           "position": {"line": cursor.line, "character": cursor.character}})
}

fn completion(
    client: &mut LspClient,
    cursor: &Cursor,
    timeout: Duration,
) -> Result<Value, ClientError> {
    let (id, _) = client.start_request("textDocument/completion", completion_params(cursor))?;
    Ok(client.response(id, timeout)?.0)
}
