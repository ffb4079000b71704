//! `crossfile bench lsp --workspace DIR`: what the language server costs over the engine, measured
//! from the client's side of real stdio by [`crossfile_bench::perf::measure_lsp`]; this prints it.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use crossfile_bench::perf::{LspParams, TARGET_P95_MS, TARGET_RSS_MB, measure_lsp};
use crossfile_engine::config::Settings;

use super::super::progress::bytes_bar;

#[derive(Debug, Args)]
pub struct BenchLspArgs {
    /// The workspace the server indexes (the largest corpus workspace, django, for docs/performance.md).
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
    let params = LspParams {
        server: std::env::current_exe().context("the path of this binary")?,
        workspace: root,
        settings,
        requests,
        seed: args.seed,
        files: args.files,
        backend: backend.to_string(),
        n_ctx: args.n_ctx,
        model: args.model.clone(),
        cache_dir: args.cache_dir.clone(),
        debounce_ms: args.debounce_ms,
    };
    let say = |message: &str| {
        let _ = writeln!(std::io::stderr().lock(), "bench lsp: {message}");
    };
    let report = measure_lsp(&params, &bytes_bar("fetching the model"), &say)?;
    if args.json {
        return super::super::print_json(&serde_json::to_value(&report)?);
    }
    let latency = &report.latency_ms;
    let mut out = format!(
        "workspace {} · backend {backend} · debounce {} ms\n",
        report.workspace.display(),
        args.debounce_ms
    );
    out.push_str(&format!(
        "initialize {:.0} ms · indexing {:.2} s ({}) · first completion {:.0} ms\n\n",
        report.initialize_ms, report.index_s, report.files_indexed, report.first_completion_ms
    ));
    if report.requests > 0 {
        out.push_str(&format!(
            "| completion round trip ({} requests, {} errors) | ms |\n|---|---:|\n",
            report.requests, report.errors
        ));
        for (name, value) in [
            ("p50", latency.p50),
            ("p95", latency.p95),
            ("p99", latency.p99),
            ("max", latency.max),
        ] {
            out.push_str(&format!("| {name} | {value:.2} |\n"));
        }
        if backend == "none" {
            out.push_str(&format!(
                "p95 {:.2} ms is {:.2}× the {TARGET_P95_MS} ms target\n",
                latency.p95,
                latency.p95 / TARGET_P95_MS
            ));
        }
        out.push('\n');
    }
    let memory = &report.memory_mb;
    out.push_str("| server memory | VmRSS MB | VmHWM MB |\n|---|---:|---:|\n");
    for (name, m) in [
        ("after indexing", memory.after_index),
        ("after the first completion", memory.after_first_completion),
        ("after the requests", memory.after_requests),
    ] {
        out.push_str(&format!("| {name} | {:.1} | {:.1} |\n", m.rss, m.hwm));
    }
    if backend == "embedded" {
        let loaded = memory.after_first_completion.rss;
        out.push_str(&format!(
            "RSS with the model loaded {loaded:.1} MB is {:.2}× the {TARGET_RSS_MB} MB target\n",
            loaded / TARGET_RSS_MB
        ));
    }
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}
