//! `crossfile bench harness`: what testing a body costs — EvoCodeBench's reference bodies through
//! the harness one and `--jobs` at a time, and through `replay.py` in the same run.

use std::path::{Path, PathBuf};

use clap::Args;

use crossfile_bench::bench::cases::evocodebench::load_exec_cases;
use crossfile_bench::bench::scoring::envs::EnvStore;
use crossfile_bench::perf::{ExecParams, ExecTiming, measure_exec};
use crossfile_engine::config::Settings;

use super::executed::ExecArgs;

#[derive(Debug, Args)]
pub struct BenchHarnessArgs {
    /// EvoCodeBench cases (their reference bodies are tested).
    #[arg(long, value_name = "FILE")]
    pub cases: PathBuf,
    /// The benchmark's `replay.py`, run in the same run to compare with.
    #[arg(long, value_name = "replay.py")]
    pub replay: Option<PathBuf>,
    #[command(flatten)]
    pub exec: ExecArgs,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchHarnessArgs) -> anyhow::Result<()> {
    let repos = args.exec.repos.as_deref().ok_or_else(|| {
        anyhow::anyhow!("--repos DIR is required: the tests run in the repositories")
    })?;
    let harness = args.exec.harness()?;
    let settings = Settings::load(Path::new("."))?;
    let envs = EnvStore::new(&settings.index.cache_dir, "evocodebench");
    let loaded = load_exec_cases(&args.cases)?;
    for problem in &loaded.problems {
        tracing::warn!("skipped: {problem}");
    }
    anyhow::ensure!(
        !loaded.cases.is_empty(),
        "{}: no case",
        args.cases.display()
    );
    let report = measure_exec(
        &ExecParams {
            cases: &loaded.cases,
            cases_file: &args.cases,
            repos,
            envs: &envs,
            harness: &harness,
            jobs: args.exec.jobs.max(2),
            replay: args.replay.as_deref(),
        },
        &|line| eprintln!("bench harness: {line}"),
    )?;
    if args.json {
        return super::super::print_json(&serde_json::to_value(&report)?);
    }
    let row = |name: &str, t: &ExecTiming| {
        format!(
            "| {name} | {} | {:.1} | {:.2} | {:.2} | {}/{} |\n",
            t.jobs, t.total_s, t.per_case_p50_s, t.per_case_max_s, t.passed, report.cases
        )
    };
    let mut out = String::from(
        "| runner | jobs | total s | per case p50 s | per case max s | passed |\n|---|---:|---:|---:|---:|---:|\n",
    );
    out.push_str(&row("crossfile", &report.sequential));
    out.push_str(&row("crossfile", &report.parallel));
    if let Some(replay) = &report.replay_py {
        out.push_str(&row("replay.py", replay));
        out.push_str(&format!(
            "\ncrossfile one at a time takes {:.2}× replay.py's time; {} at a time {:.2}×",
            report.sequential.total_s / replay.total_s,
            report.parallel.jobs,
            report.parallel.total_s / replay.total_s
        ));
    }
    super::super::print_line(out.trim_end())
}
