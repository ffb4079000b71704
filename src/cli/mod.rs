//! Command-line commands over the engine. `anyhow` lives here and in `main.rs` only.
//!
//! Results go to stdout (`--json`: one JSON document); progress bars and logs go to stderr.
//! Exit codes: 0 success, 1 failure, 2 bad usage. A closed stdout (`| head`) is success.

mod args;
mod bench;
mod complete;
mod cursor;
mod index;
mod model;
mod progress;
mod retrieve;
mod serve;

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
        Command::Index(args) => index::run(args),
        Command::Retrieve(args) => retrieve::run(args),
        Command::Complete(args) => complete::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Model(args::ModelCommand::List(args)) => model::list(args),
        Command::Model(args::ModelCommand::Fetch(args)) => model::fetch(args),
        Command::Bench(args::BenchCommand::Perf(args)) => bench::perf::run(args),
        Command::Bench(args::BenchCommand::Model(args)) => bench::model::run(args),
        Command::Bench(args::BenchCommand::Lsp(args)) => bench::lsp::run(args),
        Command::Bench(args::BenchCommand::Typing(args)) => bench::typing::run(args),
        Command::Bench(args::BenchCommand::Run(args)) => bench::run::run_cmd(args),
        Command::Bench(args::BenchCommand::Score(args)) => bench::score::run_cmd(args),
        Command::Bench(args::BenchCommand::Report(args)) => bench::report::run(args),
        Command::Bench(args::BenchCommand::Compare(args)) => bench::compare::run(args),
        Command::Bench(args::BenchCommand::Export(args)) => bench::export::run(args),
        Command::Bench(args::BenchCommand::Mine(args)) => bench::mine::run(args),
        Command::Bench(args::BenchCommand::MineFunctions(args)) => bench::mine_functions::run(args),
        Command::Bench(args::BenchCommand::MineHistory(args)) => bench::mine_history::run(args),
        Command::Bench(args::BenchCommand::SetupEnv(args)) => bench::setup_env::run(args),
        Command::Bench(args::BenchCommand::Merge(args)) => bench::merge::run(args),
        Command::Bench(args::BenchCommand::Harness(args)) => bench::harness::run(args),
        Command::Bench(args::BenchCommand::Arena(args)) => bench::arena::run(args),
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

/// Logs at `level` to stderr, or appended to `file` (without colour codes). At the default level,
/// llama.cpp says only its errors: its load warnings about the GGUF's tokens are noise to a user.
fn init_logging(level: &str, file: Option<&std::path::Path>) -> anyhow::Result<()> {
    let llama = if level == "warn" { "error" } else { level };
    let filter =
        tracing_subscriber::EnvFilter::try_from_env("CROSSFILE_LOG").unwrap_or_else(|_| {
            tracing_subscriber::EnvFilter::new(format!(
                "crossfile={level},llama-cpp-2={llama},warn"
            ))
        });
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
fn hits_json(hits: &[crossfile_engine::retrieve::Hit]) -> serde_json::Value {
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
