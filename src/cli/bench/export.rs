//! `crossfile bench export RUN.jsonl --format cceval|repoeval|evocodebench [--retriever SPEC]
//! [--out FILE]`:
//! one retriever's predictions in the benchmark's own shape, for its official scoring script.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};

use crossfile_bench::report::export::{ExportFormat, ExportParams, PredictionText, export};

use super::report::read_checked;

#[derive(Debug, Args)]
pub struct BenchExportArgs {
    /// The run file `bench run` wrote.
    pub run: PathBuf,
    /// The predictions shape: CrossCodeEval's `prediction.jsonl` (also for a run of cases mined
    /// from history), RepoCoder's, or EvoCodeBench's completion file (one line per sample, the
    /// tested body).
    #[arg(long, value_enum)]
    pub format: ExportFormatArg,
    /// The retriever whose predictions to export (required when the run has several).
    #[arg(long, value_name = "SPEC")]
    pub retriever: Option<String>,
    /// Which text is the prediction: the model's raw output (the official scripts post-process
    /// it themselves) or crossfile's post-processed suggestion.
    #[arg(long, value_enum, default_value_t = TextArg::Raw)]
    pub text: TextArg,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ExportFormatArg {
    Cceval,
    Repoeval,
    Evocodebench,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum TextArg {
    Raw,
    Postprocessed,
}

pub fn run(args: &BenchExportArgs) -> anyhow::Result<()> {
    if let Some(out) = &args.out {
        crossfile_bench::bench::outputs::refuse_overwriting_inputs(out, &[&args.run])?;
    }
    let run = read_checked(&args.run)?;
    let params = ExportParams {
        format: match args.format {
            ExportFormatArg::Cceval => ExportFormat::Cceval,
            ExportFormatArg::Repoeval => ExportFormat::Repoeval,
            ExportFormatArg::Evocodebench => ExportFormat::EvoCodeBench,
        },
        retriever: args.retriever.clone(),
        text: match args.text {
            TextArg::Raw => PredictionText::Raw,
            TextArg::Postprocessed => PredictionText::Postprocessed,
        },
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
