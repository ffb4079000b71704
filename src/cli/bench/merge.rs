//! `crossfile bench merge`: joins the run files of shards (`bench run --shard K/N`) into one.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use crossfile_bench::bench::runfile::merge::merge_runs;

#[derive(Debug, Args)]
pub struct BenchMergeArgs {
    /// The shards' run files, in the order their records are written.
    #[arg(required = true, num_args = 2.., value_name = "RUN.jsonl")]
    pub runs: Vec<PathBuf>,
    /// The merged run file (must not exist: a merge never appends to or overwrites a run).
    #[arg(long, value_name = "MERGED.jsonl")]
    pub out: PathBuf,
}

pub fn run(args: &BenchMergeArgs) -> anyhow::Result<()> {
    let inputs: Vec<&std::path::Path> = args.runs.iter().map(PathBuf::as_path).collect();
    crossfile_bench::bench::outputs::refuse_overwriting_inputs(&args.out, &inputs)?;
    anyhow::ensure!(
        !args.out.exists(),
        "{} exists: a merge writes a new run file",
        args.out.display()
    );
    let merged = merge_runs(&args.runs)?;
    for warning in &merged.warnings {
        tracing::warn!("{warning}");
    }
    let mut text = String::new();
    for record in &merged.records {
        text.push_str(&serde_json::to_string(record)?);
        text.push('\n');
    }
    let mut file = std::fs::File::create_new(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    eprintln!(
        "merged {} records from {} run files into {}",
        merged.records.len(),
        args.runs.len(),
        args.out.display()
    );
    Ok(())
}
