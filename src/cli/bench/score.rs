//! `crossfile bench score`: scores predictions made elsewhere against a cases file with the
//! benchmark's own metrics, and prints its metric table (`--json`: its `results.json` shape).

use std::path::PathBuf;

use clap::Args;

use super::super::args::choice;
use clap::builder::TypedValueParser;
use crossfile_bench::bench::{
    BenchFormat, CaseFormat, Scoring, load_cases, load_predictions, score_predictions,
};
use crossfile_engine::config::{Options, Settings, WorkspaceOptions};

#[derive(Debug, Args)]
pub struct BenchScoreArgs {
    /// The cases' format.
    #[arg(long, value_name = "FORMAT", value_parser = choice::<BenchFormat>().map(BenchFormat::scoring))]
    pub format: Scoring,
    /// The cases file (jsonl); no repository is needed for cceval, repoeval and history.
    #[arg(long, value_name = "FILE")]
    pub cases: PathBuf,
    /// Predictions: one JSON line per case, {"task_id": <case id>, "pred": <raw output>}; for
    /// evocodebench the official {"namespace", "completion"}, one line per sample; for codereval
    /// a results file (generations with the official harness's verdicts).
    #[arg(long, value_name = "P.jsonl")]
    pub predictions: PathBuf,
    #[command(flatten)]
    pub exec: super::executed::ExecArgs,
    /// Skip cases whose file text is larger than this many bytes (default:
    /// workspace.max_file_bytes of the configuration).
    #[arg(long, value_name = "BYTES")]
    pub max_file_bytes: Option<u64>,
    /// Print the aggregates as one JSON object: per language (cceval) or repository (repoeval).
    #[arg(long)]
    pub json: bool,
}

pub fn run_cmd(args: &BenchScoreArgs) -> anyhow::Result<()> {
    let format = match args.format {
        Scoring::Similarity(format) => format,
        Scoring::Execution => {
            return super::executed::score_cmd(
                &args.cases,
                &args.predictions,
                &args.exec,
                args.json,
            );
        }
        Scoring::Verdicts => {
            return super::executed::codereval_cmd(
                &args.cases,
                &args.predictions,
                &args.exec,
                args.json,
            );
        }
    };
    let options = Options {
        workspace: args.max_file_bytes.map(|b| WorkspaceOptions {
            max_file_bytes: Some(b),
        }),
        ..Options::default()
    };
    let settings = Settings::load_with(std::path::Path::new("."), options)?;
    let cases = load_cases(&args.cases, format, settings.index.workspace.max_file_bytes)?;
    let predictions = load_predictions(&args.predictions)?;
    for problem in cases.problems.iter().chain(&predictions.problems) {
        tracing::warn!("skipped: {problem}");
    }
    let table = score_predictions(format, &cases.cases, &predictions.predictions)?;
    if !table.unpredicted.is_empty() {
        tracing::warn!(
            "{} cases have no prediction and are left out (first: {})",
            table.unpredicted.len(),
            table.unpredicted[0]
        );
    }
    if !table.unknown.is_empty() {
        tracing::warn!(
            "{} predictions name no case of {} (first: {})",
            table.unknown.len(),
            args.cases.display(),
            table.unknown[0]
        );
    }
    if table.groups.is_empty() {
        anyhow::bail!(
            "no prediction of {} matches a case of {}",
            args.predictions.display(),
            args.cases.display()
        );
    }
    if args.json {
        return super::super::print_json(&serde_json::to_value(&table.groups)?);
    }
    let (group, metrics): (&str, &[&str]) = match format {
        CaseFormat::Cceval | CaseFormat::History => (
            "language",
            &[
                "total",
                "em",
                "es",
                "id_em",
                "id_precision",
                "id_recall",
                "id_f1",
            ],
        ),
        CaseFormat::Repoeval => ("repository", &["total", "em", "es"]),
    };
    let mut out = format!(
        "| {group} | {} |\n|---|{}\n",
        metrics.join(" | "),
        "---:|".repeat(metrics.len())
    );
    for (name, values) in &table.groups {
        let cells: Vec<String> = metrics
            .iter()
            .map(|m| values.get(*m).map_or("–".into(), |v| format!("{v}")))
            .collect();
        out.push_str(&format!("| {name} | {} |\n", cells.join(" | ")));
    }
    super::super::print_line(out.trim_end())
}
