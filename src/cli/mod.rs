//! Command-line commands over the engine. `anyhow` lives here and in `main.rs` only.
//!
//! Results go to stdout (`--json`: one JSON document); progress bars and logs go to stderr.
//! Exit codes: 0 success, 1 failure, 2 bad usage. A closed stdout (`| head`) is success.

mod args;
mod bench_compare;
mod bench_exec;
mod bench_export;
mod bench_harness;
mod bench_lsp;
mod bench_merge;
mod bench_mine;
mod bench_mine_functions;
mod bench_model;
mod bench_report;
mod bench_run;
mod bench_run_exec;
mod bench_score;
mod bench_setup_env;
mod bench_typing;
mod complete_cmd;
mod cursor;
mod index_cmd;
mod model_cmd;
mod perf;
mod progress;
mod retrieve_cmd;
mod serve_cmd;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

pub use args::{Cli, Command};

/// Parses the command line, runs it, prints any error with its causes.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    if let Err(error) = init_logging(&cli.log_level, cli.log_file.as_deref()) {
        let _ = writeln!(std::io::stderr().lock(), "error: {error}");
        return ExitCode::FAILURE;
    }
    let result = match &cli.command {
        Command::Index(args) => index_cmd::run(args),
        Command::Retrieve(args) => retrieve_cmd::run(args),
        Command::Complete(args) => complete_cmd::run(args),
        Command::Serve(args) => serve_cmd::run(args),
        Command::Model(args::ModelCommand::List(args)) => model_cmd::list(args),
        Command::Model(args::ModelCommand::Fetch(args)) => model_cmd::fetch(args),
        Command::Bench(args::BenchCommand::Perf(args)) => perf::run(args),
        Command::Bench(args::BenchCommand::Model(args)) => bench_model::run(args),
        Command::Bench(args::BenchCommand::Lsp(args)) => bench_lsp::run(args),
        Command::Bench(args::BenchCommand::Typing(args)) => bench_typing::run(args),
        Command::Bench(args::BenchCommand::Run(args)) => bench_run::run_cmd(args),
        Command::Bench(args::BenchCommand::Score(args)) => bench_score::run_cmd(args),
        Command::Bench(args::BenchCommand::Report(args)) => bench_report::run(args),
        Command::Bench(args::BenchCommand::Compare(args)) => bench_compare::run(args),
        Command::Bench(args::BenchCommand::Export(args)) => bench_export::run(args),
        Command::Bench(args::BenchCommand::Mine(args)) => bench_mine::run(args),
        Command::Bench(args::BenchCommand::MineFunctions(args)) => bench_mine_functions::run(args),
        Command::Bench(args::BenchCommand::SetupEnv(args)) => bench_setup_env::run(args),
        Command::Bench(args::BenchCommand::Merge(args)) => bench_merge::run(args),
        Command::Bench(args::BenchCommand::Harness(args)) => bench_harness::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "error: {error}");
            for cause in error.chain().skip(1) {
                let _ = writeln!(stderr, "  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}

/// Logs at `level` to stderr, or appended to `file` (without colour codes).
fn init_logging(level: &str, file: Option<&std::path::Path>) -> anyhow::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("CROSSFILE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("crossfile={level},warn")));
    let logs = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = match file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open the log file {}", path.display()))?;
            logs.with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .try_init()
        }
        None => logs
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_writer(std::io::stderr)
            .try_init(),
    };
    Ok(())
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Writes one line of text to stdout.
fn print_line(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    Ok(())
}

/// Hits as `--json` prints them: workspace-relative paths, 1-based inclusive lines.
fn hits_json(hits: &[crossfile::retrieve::Hit]) -> serde_json::Value {
    hits.iter()
        .map(|h| {
            serde_json::json!({
                "path": h.path, "start_line": h.lines.start + 1, "end_line": h.lines.end,
                "score": h.score, "text": h.text,
            })
        })
        .collect()
}

/// Writes one JSON document and a newline to stdout.
fn print_json(value: &serde_json::Value) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}
