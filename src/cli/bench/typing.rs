//! `crossfile bench typing --workspace DIR`: ghost text while a person types, measured over real
//! stdio by [`crossfile_bench::perf::measure_typing`], side by side with llama-server when
//! `--llama-server` names it; this prints it.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use crossfile_bench::perf::typing::{Measured, Paired};
use crossfile_bench::perf::{Pace, TARGET_RSS_MB, TypingParams, measure_typing};
use crossfile_engine::config::Settings;

use super::super::progress::bytes_bar;

#[derive(Debug, Args)]
pub struct BenchTypingArgs {
    /// The workspace whose files are typed into (click for docs/performance.md).
    #[arg(long, value_name = "DIR")]
    pub workspace: PathBuf,
    /// Places where lines are removed and typed again.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub sessions: usize,
    /// Lines removed and typed at each place.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub lines: usize,
    /// Seed of the places.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// The embedded default model (the default).
    #[arg(long, conflicts_with = "backend")]
    pub embedded: bool,
    /// Another backend of the measured server; its endpoint comes from the workspace's settings.
    #[arg(long, value_name = "NAME")]
    pub backend: Option<String>,
    /// The upstream llama-server binary (`scripts/llama-server` builds it): the same keystrokes
    /// also go through it, started with --cache-reuse, as the anchor.
    #[arg(long, value_name = "BIN")]
    pub llama_server: Option<PathBuf>,
    /// The model's context size (model.n_ctx; default 2048).
    #[arg(long, value_name = "TOKENS")]
    pub n_ctx: Option<u32>,
    /// A GGUF model file (default: the fetched default model).
    #[arg(long, value_name = "GGUF")]
    pub model: Option<PathBuf>,
    /// Where the servers keep their index (default: a fresh temporary directory).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// More settings of the measured server, as JSON initializationOptions
    /// (e.g. '{"model": {"kv_slots": 0}}' for no kept KV cache).
    #[arg(long, value_name = "JSON")]
    pub server_options: Option<String>,
    /// Milliseconds between keystrokes.
    #[arg(long, value_name = "MS", default_value_t = 100)]
    pub keystroke_ms: u64,
    /// Milliseconds of pause after an identifier, an operator or a line end.
    #[arg(long, value_name = "MS", default_value_t = 600)]
    pub pause_ms: u64,
    /// Answer up to N of the embedded server's completions again, after the typing, with a
    /// fresh context each, and count the equal answers.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub verify: usize,
    /// Answer up to N of the pauses the measured server answered in time again, each waited
    /// for, by a server with lsp.reuse_kv off, and compare the edit similarity over them.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub reuse_off: usize,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchTypingArgs) -> anyhow::Result<()> {
    let root = args
        .workspace
        .canonicalize()
        .with_context(|| format!("--workspace {}", args.workspace.display()))?;
    let settings = Settings::load(&root)?;
    let server_options = match &args.server_options {
        Some(text) => serde_json::from_str(text).context("--server-options: not JSON")?,
        None => serde_json::Value::Null,
    };
    let backend = args.backend.clone().unwrap_or_else(|| "embedded".into());
    let params = TypingParams {
        server: std::env::current_exe().context("the path of this binary")?,
        workspace: root,
        settings,
        sessions: args.sessions,
        lines: args.lines.max(1),
        seed: args.seed,
        backend,
        n_ctx: args.n_ctx,
        model: args.model.clone(),
        cache_dir: args.cache_dir.clone(),
        llama_server: args.llama_server.clone(),
        server_options,
        pace: Pace {
            keystroke: Duration::from_millis(args.keystroke_ms),
            pause: Duration::from_millis(args.pause_ms),
            ..Pace::default()
        },
        verify: args.verify,
        reuse_off: args.reuse_off,
    };
    let say = |message: &str| {
        let _ = writeln!(std::io::stderr().lock(), "bench typing: {message}");
    };
    let report = measure_typing(&params, &bytes_bar("fetching the model"), &say)?;
    if args.json {
        return super::super::print_json(&serde_json::to_value(&report)?);
    }
    let mut out = format!(
        "workspace {} · {} places · seed {} · model {} · n_ctx {}\n\n",
        report.workspace.display(),
        report.sessions,
        report.seed,
        report.model.display(),
        report.n_ctx
    );
    let columns: Vec<&Measured> = std::iter::once(&report.measured)
        .chain(&report.anchor)
        .collect();
    out.push_str(&table(&columns));
    if let Some(anchor) = &report.anchor
        && let (Some(ours), Some(theirs)) = (report.measured.latency_ms.p50, anchor.latency_ms.p50)
    {
        out.push_str(&format!(
            "\np50 {ours:.0} ms is {:.2}× llama-server's {theirs:.0} ms\n",
            ours / theirs
        ));
    }
    if let Some(fresh) = report.fresh {
        out.push_str(&format!(
            "fresh contexts gave {} of {} recorded live answers again\n",
            fresh.equal, fresh.compared
        ));
    }
    if let Some(off) = report.reuse_off {
        for (what, part) in [
            ("answered pauses", off.all),
            ("of them typed along", off.typed_along),
            ("of them asked of the model", off.asked),
            ("typed along, against a fresh answer", off.typed_along_fresh),
        ] {
            out.push_str(&paired_line(what, &part));
        }
    }
    out.push_str(&format!(
        "RSS peak {:.1} MB is {:.2}× the {TARGET_RSS_MB} MB target\n",
        report.measured.rss_mb.peak,
        report.measured.rss_mb.peak / TARGET_RSS_MB
    ));
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

/// Edit similarity live and with reuse off over `part`'s pauses, one line.
fn paired_line(what: &str, part: &Paired) -> String {
    let mut line = format!(
        "edit similarity over {} {what}: {:.3} live, {:.3} with reuse off ({} the same)",
        part.pauses, part.es_live, part.es_reuse_off, part.same
    );
    if let Some(d) = part.difference {
        line.push_str(&format!(
            "; live − reuse off 95% interval [{:.3}, {:.3}]",
            d.low, d.high
        ));
    }
    line.push('\n');
    line
}

/// A latency, or "no answer" where the percentile fell on a pause without one.
fn ms(v: Option<f64>) -> String {
    v.map_or("no answer".to_string(), |v| format!("{v:.0}"))
}

/// A table cell: one figure of one server.
type Cell = dyn Fn(&Measured) -> String;

/// One column per server.
fn table(columns: &[&Measured]) -> String {
    let rows: [(&str, &Cell); 13] = [
        ("first suggestion in a file p50 / max ms", &|m| {
            let first = m.first_suggestion_ms;
            format!("{:.0} / {:.0}", first.p50, first.max)
        }),
        ("keystrokes / pauses", &|m| {
            format!("{} / {}", m.keystrokes, m.pauses)
        }),
        ("answered / cancelled / errors", &|m| {
            format!("{} / {} / {}", m.answered, m.cancelled, m.errors)
        }),
        ("latency p50 ms", &|m| ms(m.latency_ms.p50)),
        ("latency p95 ms", &|m| ms(m.latency_ms.p95)),
        ("latency p99 ms", &|m| ms(m.latency_ms.p99)),
        ("within 300 ms", &|m| {
            format!("{:.1}%", m.within_300ms * 100.0)
        }),
        ("within 1 s", &|m| {
            format!("{:.1}%", m.within_1000ms * 100.0)
        }),
        ("completions", &|m| m.completions.to_string()),
        ("prompt tokens reused / evaluated", &|m| {
            format!("{} / {}", m.prompt_tokens.reused, m.prompt_tokens.evaluated)
        }),
        ("edit similarity", &|m| format!("{:.3}", m.es)),
        ("RSS MB start / end / peak", &|m| {
            format!(
                "{:.1} / {:.1} / {:.1}",
                m.rss_mb.start, m.rss_mb.end, m.rss_mb.peak
            )
        }),
        ("typing s", &|m| format!("{:.0}", m.duration_s)),
    ];
    let mut out = String::from("|");
    for m in columns {
        out.push_str(&format!(" | {}", m.backend));
    }
    out.push_str(" |\n|---|");
    out.push_str(&"---:|".repeat(columns.len()));
    out.push('\n');
    for (name, cell) in rows {
        out.push_str(&format!("| {name}"));
        for m in columns {
            out.push_str(&format!(" | {}", cell(m)));
        }
        out.push_str(" |\n");
    }
    for m in columns {
        if let Some(error) = &m.first_error {
            out.push_str(&format!("{}: first error: {error}\n", m.backend));
        }
    }
    out
}
