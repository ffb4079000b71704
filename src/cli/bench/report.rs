//! `crossfile bench report RUN.jsonl [--html OUT.html] [--json]`: summarize a run file.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use crossfile_bench::bench::runfile::reader::{Run, read_run};
use crossfile_bench::report::bootstrap::Bootstrap;
use crossfile_bench::report::build::build_report;
use crossfile_bench::report::markdown::report_markdown;
use crossfile_bench::report::render_html;

#[derive(Debug, Args)]
pub struct BenchReportArgs {
    /// The run file `bench run` wrote (one JSON line per case and retriever).
    pub run: PathBuf,
    /// Also write the report as one self-contained HTML page (charts, per-case drill-down).
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    /// Print the report as one JSON document instead of Markdown.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchReportArgs) -> anyhow::Result<()> {
    if let Some(out) = &args.html {
        crossfile_bench::bench::outputs::refuse_overwriting_inputs(out, &[&args.run])?;
    }
    let run = read_checked(&args.run)?;
    let report = build_report(&run, &Bootstrap::default());
    if let Some(out) = &args.html {
        std::fs::write(out, render_html(&run, &report))
            .with_context(|| format!("writing {}", out.display()))?;
        tracing::info!("wrote {}", out.display());
    }
    if args.json {
        return super::super::print_json(&serde_json::to_value(&report)?);
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(report_markdown(&report).as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// Reads a run file, logs what was tolerated, and refuses one without records.
pub fn read_checked(path: &std::path::Path) -> anyhow::Result<Run> {
    let run = read_run(path)?;
    for warning in &run.warnings {
        tracing::warn!("{warning}");
    }
    if run.records.is_empty() {
        anyhow::bail!("{}: no records", path.display());
    }
    Ok(run)
}
