//! `crossfile bench compare A.jsonl B.jsonl [--json]`: run B against run A, paired by case.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crossfile_bench::report::bootstrap::Bootstrap;
use crossfile_bench::report::compare::compare_runs;
use crossfile_bench::report::markdown::comparison_markdown;

use super::report::read_checked;

#[derive(Debug, Args)]
pub struct BenchCompareArgs {
    /// The baseline run file.
    pub a: PathBuf,
    /// The run compared with it; differences are B − A.
    pub b: PathBuf,
    /// Print one JSON document instead of Markdown.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchCompareArgs) -> anyhow::Result<()> {
    let a = read_checked(&args.a)?;
    let b = read_checked(&args.b)?;
    let comparison = compare_runs(&a, &b, &Bootstrap::default())?;
    if !comparison.settings_differ.is_empty() {
        tracing::warn!(
            "{} and {} were run with other settings ({}): differences may come from them, not \
             only from what is compared",
            args.a.display(),
            args.b.display(),
            comparison.settings_differ.join("; ")
        );
    }
    if args.json {
        return super::super::print_json(&serde_json::to_value(&comparison)?);
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(comparison_markdown(&comparison).as_bytes())?;
    stdout.flush()?;
    Ok(())
}
