//! `crossfile bench lsp --workspace DIR`: what the language server costs over the engine, measured
//! from the client's side of real stdio.
//!
//! It starts this binary's `crossfile serve` as a child, initializes it on the workspace (the
//! index in a fresh cache dir unless `--cache-dir` is given, so indexing is cold), waits for the
//! indexing `$/progress` end, opens real files of the workspace (and gives the server a second to
//! index them), and sends `textDocument/completion` requests one after another at the ends of
//! seeded random non-blank lines, timing each round trip from the request's write to its answer's
//! arrival. With `--backend none` (the default) no model generates, so the latency is the
//! server's own overhead: message handling, retrieval and prompt building. With `--embedded` the
//! default model is loaded (one completion waits for it) and the server's memory is read after
//! indexing and the load. Memory is the child's `VmRSS` and `VmHWM` from `/proc/<pid>/status`, in
//! decimal megabytes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use crossfile::chunk::is_blank;
use crossfile::config::Settings;
use crossfile::report::bootstrap::{mean, percentile};
use crossfile::seeded::SplitMix64;
use crossfile::workspace;

use super::lsp_client::LspClient;
use super::progress::bytes_bar;

/// The overhead target: p95 of completion round trips with `--backend none`.
const TARGET_P95_MS: f64 = 15.0;
/// The memory target: resident memory after indexing with the embedded model loaded.
const TARGET_RSS_MB: f64 = 250.0;
/// How long indexing, the first completion (a model load) and shutdown may take.
const SLOW: Duration = Duration::from_secs(600);
/// How long the server is left to index the opened buffers before the first completion.
const SETTLE: Duration = Duration::from_secs(1);
/// How long one measured completion may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, Args)]
pub struct BenchLspArgs {
    /// The workspace the server indexes (the largest corpus workspace, django, for the README).
    #[arg(long, value_name = "DIR")]
    pub workspace: PathBuf,
    /// Completion requests to time, one after another (default 1000; 0 with a model backend).
    #[arg(long, value_name = "N")]
    pub requests: Option<usize>,
    /// Seed of the files opened and the cursors.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Files of the workspace opened in the editor; the requests spread over them.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub files: usize,
    /// Backend of the server (`none`: no model, the server's own overhead).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "none",
        conflicts_with = "embedded"
    )]
    pub backend: String,
    /// Load the embedded default model and measure memory with it loaded (`--backend embedded`).
    #[arg(long)]
    pub embedded: bool,
    /// The model's context size (model.n_ctx; default 2048).
    #[arg(long, value_name = "TOKENS")]
    pub n_ctx: Option<u32>,
    /// A GGUF model file (default: the fetched default model; any backend counts tokens with it).
    #[arg(long, value_name = "GGUF")]
    pub model: Option<PathBuf>,
    /// Where the server keeps its index (default: a fresh temporary directory, a cold index).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// The server's `lsp.debounce_ms`.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub debounce_ms: u64,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// A server's memory at one moment, in kB as `/proc` reports it.
#[derive(Clone, Copy, Debug)]
struct Memory {
    rss_kb: u64,
    hwm_kb: u64,
}

/// A cursor: a document and an LSP position in it.
struct Cursor {
    uri: String,
    line: usize,
    character: usize,
}

pub fn run(args: &BenchLspArgs) -> anyhow::Result<()> {
    let backend = if args.embedded {
        "embedded"
    } else {
        args.backend.as_str()
    };
    let requests = args
        .requests
        .unwrap_or(if backend == "none" { 1000 } else { 0 });
    let root = args
        .workspace
        .canonicalize()
        .with_context(|| format!("--workspace {}", args.workspace.display()))?;
    let settings = Settings::load(&root)?;
    // Every backend counts tokens with the GGUF's vocabulary; the server is told where it is so
    // a private cache dir never fetches it again.
    let model = match &args.model {
        Some(path) => path.clone(),
        None => crossfile::model::resolve(
            settings.model.path.as_deref(),
            &settings.index.cache_dir,
            &bytes_bar("fetching the model"),
        )?,
    };
    let temporary = tempfile::tempdir()?;
    let cache_dir = args
        .cache_dir
        .clone()
        .unwrap_or_else(|| temporary.path().to_path_buf());
    let mut model_options = json!({"path": model});
    if let Some(n_ctx) = args.n_ctx {
        model_options["n_ctx"] = json!(n_ctx);
    }
    let options = json!({
        "index": {"cache_dir": cache_dir},
        "backend": {"kind": backend},
        "model": model_options,
        "lsp": {"debounce_ms": args.debounce_ms},
    });

    let exe = std::env::current_exe().context("the path of this binary")?;
    let mut command = Command::new(exe);
    command.arg("serve");
    let mut client = LspClient::spawn(command)?;
    let pid = client.pid();
    let root_uri = file_uri(&root);
    let started = Instant::now();
    let answer = client.request(
        "initialize",
        json!({
            "processId": std::process::id(), "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "bench"}],
            "initializationOptions": options,
            "capabilities": {"window": {"workDoneProgress": true}},
        }),
        SLOW,
    )?;
    if let Some(error) = answer.get("error") {
        bail!("initialize failed: {error}");
    }
    let initialize_ms = ms(started.elapsed());
    let started = Instant::now();
    client.notify("initialized", json!({}))?;
    let end = client
        .notification(SLOW, |m| {
            m.get("method") == Some(&json!("$/progress"))
                && m.pointer("/params/value/kind") == Some(&json!("end"))
        })
        .context("waiting for the end of indexing")?;
    let index_s = started.elapsed().as_secs_f64();
    let indexed = end
        .pointer("/params/value/message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if let Some(shown) = shown_errors(&client).first() {
        bail!("the server reported an error: {shown}");
    }
    let after_index = memory(pid)?;
    log(&format!("indexed in {index_s:.2} s: {indexed}"));

    let cursors = open_files(&mut client, &root, &settings, args.files, args.seed)?;
    let cursors = pick(&cursors, requests.max(1), args.seed);
    // The server indexes the opened buffers 300 ms after they open; that work is not the
    // completions' to carry.
    std::thread::sleep(SETTLE);
    // The first completion waits for the model (for `none`, its tokenizer).
    let started = Instant::now();
    let first = completion(&mut client, &cursors[0], SLOW)?;
    let first_ms = ms(started.elapsed());
    if let Some(error) = first.get("error") {
        bail!("the first completion failed: {error}");
    }
    let after_load = memory(pid)?;
    log(&format!("first completion in {first_ms:.0} ms"));

    let mut latencies = Vec::with_capacity(requests);
    let mut errors = 0;
    let mut suggestions = 0;
    for cursor in cursors.iter().take(requests) {
        let (id, sent) = client.start_request("textDocument/completion", params(cursor))?;
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

    let p = |q| percentile(&latencies, q).unwrap_or(f64::NAN);
    let (p50, p95, p99, max) = (p(50.0), p(95.0), p(99.0), p(100.0));
    let report = json!({
        "workspace": root,
        "backend": backend,
        "n_ctx": args.n_ctx.unwrap_or(settings.model.n_ctx),
        "debounce_ms": args.debounce_ms,
        "files_indexed": indexed,
        "initialize_ms": initialize_ms,
        "index_s": index_s,
        "first_completion_ms": first_ms,
        "requests": latencies.len(),
        "errors": errors,
        "suggestions": suggestions,
        "latency_ms": {"p50": p50, "p95": p95, "p99": p99, "max": max,
                       "mean": mean(&latencies)},
        "target_p95_ms": TARGET_P95_MS,
        "memory_mb": {
            "after_index": memory_json(after_index),
            "after_first_completion": memory_json(after_load),
            "after_requests": memory_json(after_requests),
        },
        "target_rss_mb": TARGET_RSS_MB,
        "exit_code": exit_code,
    });
    if args.json {
        return super::print_json(&report);
    }
    let mut out = format!(
        "workspace {} · backend {backend} · debounce {} ms\n",
        root.display(),
        args.debounce_ms
    );
    out.push_str(&format!(
        "initialize {initialize_ms:.0} ms · indexing {index_s:.2} s ({indexed}) · first completion {first_ms:.0} ms\n\n"
    ));
    if !latencies.is_empty() {
        out.push_str(&format!(
            "| completion round trip ({} requests, {errors} errors) | ms |\n|---|---:|\n",
            latencies.len()
        ));
        for (name, value) in [("p50", p50), ("p95", p95), ("p99", p99), ("max", max)] {
            out.push_str(&format!("| {name} | {value:.2} |\n"));
        }
        if backend == "none" {
            out.push_str(&format!(
                "p95 {p95:.2} ms is {:.2}× the {TARGET_P95_MS} ms target\n",
                p95 / TARGET_P95_MS
            ));
        }
        out.push('\n');
    }
    out.push_str("| server memory | VmRSS MB | VmHWM MB |\n|---|---:|---:|\n");
    for (name, m) in [
        ("after indexing", after_index),
        ("after the first completion", after_load),
        ("after the requests", after_requests),
    ] {
        out.push_str(&format!(
            "| {name} | {:.1} | {:.1} |\n",
            mb(m.rss_kb),
            mb(m.hwm_kb)
        ));
    }
    if backend == "embedded" {
        out.push_str(&format!(
            "RSS with the model loaded {:.1} MB is {:.2}× the {TARGET_RSS_MB} MB target\n",
            mb(after_load.rss_kb),
            mb(after_load.rss_kb) / TARGET_RSS_MB
        ));
    }
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

/// Opens up to `n` seeded random files of the workspace that have a non-blank line, and returns
/// the end of every non-blank line of them.
fn open_files(
    client: &mut LspClient,
    root: &Path,
    settings: &Settings,
    n: usize,
    seed: u64,
) -> anyhow::Result<Vec<Cursor>> {
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
        log(&format!("opened {}", file.rel));
    }
    if cursors.is_empty() {
        bail!("{} has no source file with code in it", root.display());
    }
    Ok(cursors)
}

/// `n` cursors drawn from `all`, the same for the same seed.
fn pick(all: &[Cursor], n: usize, seed: u64) -> Vec<Cursor> {
    let mut rng = SplitMix64(seed ^ 0x5eed);
    (0..n)
        .map(|_| {
            let c = &all[rng.below(all.len())];
            Cursor {
                uri: c.uri.clone(),
                line: c.line,
                character: c.character,
            }
        })
        .collect()
}

fn params(cursor: &Cursor) -> Value {
    json!({"textDocument": {"uri": cursor.uri},
           "position": {"line": cursor.line, "character": cursor.character}})
}

fn completion(client: &mut LspClient, cursor: &Cursor, timeout: Duration) -> anyhow::Result<Value> {
    let (id, _) = client.start_request("textDocument/completion", params(cursor))?;
    Ok(client.response(id, timeout)?.0)
}

/// The messages of `window/showMessage` errors received so far.
fn shown_errors(client: &LspClient) -> Vec<String> {
    client
        .notifications
        .iter()
        .filter(|m| m["method"] == json!("window/showMessage") && m["params"]["type"] == json!(1))
        .filter_map(|m| m.pointer("/params/message").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// `VmRSS` and `VmHWM` of process `pid` (Linux).
fn memory(pid: u32) -> anyhow::Result<Memory> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse::<u64>().ok())
            .with_context(|| format!("no {name} in {path}"))
    };
    Ok(Memory {
        rss_kb: field("VmRSS:")?,
        hwm_kb: field("VmHWM:")?,
    })
}

fn memory_json(m: Memory) -> Value {
    json!({"rss": mb(m.rss_kb), "hwm": mb(m.hwm_kb)})
}

/// Kilobytes (KiB, as `/proc` counts) in decimal megabytes.
fn mb(kb: u64) -> f64 {
    kb as f64 * 1024.0 / 1e6
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A `file://` URI for an absolute path; characters a URI path may not hold are percent-encoded.
fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'.' | b'_' | b'~' => {
                uri.push(byte as char);
            }
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    uri
}

/// A progress line on stderr (stdout holds the results).
fn log(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "bench lsp: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_encode_what_a_path_may_not_hold() {
        assert_eq!(file_uri(Path::new("/a/b_c.py")), "file:///a/b_c.py");
        assert_eq!(file_uri(Path::new("/a b/é.py")), "file:///a%20b/%C3%A9.py");
    }
}
