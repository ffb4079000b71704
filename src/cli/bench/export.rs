//! `crossfile bench export RUN.jsonl --format cceval|repoeval|evocodebench [--retriever SPEC]
//! [--out FILE]`:
//! one retriever's predictions in the benchmark's own shape, for its official scoring script.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use crossfile_bench::report::export::{ExportFormat, ExportParams, PredictionText, export};

use super::super::args::choice;
use super::report::read_checked;

#[derive(Debug, Args)]
pub struct BenchExportArgs {
    /// The run file `bench run` wrote.
    pub run: PathBuf,
    /// The predictions shape: CrossCodeEval's `prediction.jsonl` (also for a run of cases mined
    /// from history), RepoCoder's, or EvoCodeBench's completion file (one line per sample, the
    /// tested body).
    #[arg(long, value_name = "FORMAT", value_parser = choice::<ExportFormat>())]
    pub format: ExportFormat,
    /// The retriever whose predictions to export (required when the run has several).
    #[arg(long, value_name = "SPEC")]
    pub retriever: Option<String>,
    /// Which text is the prediction: the model's raw output (the official scripts post-process
    /// it themselves) or crossfile's post-processed suggestion.
    #[arg(long, value_name = "TEXT", value_parser = choice::<PredictionText>(), default_value = "raw")]
    pub text: PredictionText,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn run(args: &BenchExportArgs) -> anyhow::Result<()> {
    if let Some(out) = &args.out {
        crossfile_bench::bench::outputs::refuse_overwriting_inputs(out, &[&args.run])?;
    }
    let run = read_checked(&args.run)?;
    let params = ExportParams {
        format: args.format,
        retriever: args.retriever.clone(),
        text: args.text,
    };
    let exported = export(&run, &params)?;
    if exported.upper_bound {
        tracing::warn!(
            "`{}` sees the reference: its predictions are an upper bound, not a result",
            exported.retriever
        );
    }
    if !exported.skipped_errors.is_empty() {
        tracing::warn!(
            "skipped {} case(s) whose record is an error (never exported as an empty prediction); \
             CrossCodeEval's script asserts one prediction per prompt-file record, so score \
             against a prompt file without them (first: {})",
            exported.skipped_errors.len(),
            exported.skipped_errors[0]
        );
    }
    let mut text = String::new();
    for line in &exported.lines {
        text.push_str(line);
        text.push('\n');
    }
    match &args.out {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            stdout.flush()?;
        }
    }
    Ok(())
}
