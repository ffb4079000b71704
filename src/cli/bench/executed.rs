//! The execution-based side of `bench score`: EvoCodeBench (every sample's tests run in its
//! repository's environment through the engine's harness, then Pass@k and Recall@k) and CoderEval
//! (Pass@k by runnable level from the official harness's recorded verdicts).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use crossfile_bench::bench::cases::codereval::{load_prompts, load_results, score_results};
use crossfile_bench::bench::cases::evocodebench::{load_completions, load_exec_cases};
use crossfile_bench::bench::scoring::envs::EnvStore;
use crossfile_bench::bench::scoring::execution::{
    ExecContext, ExecScore, exec_score, match_completions, run_samples,
};
use crossfile_bench::harness::{Harness, Status};
use crossfile_engine::config::Settings;
use crossfile_engine::progress::ProgressEvent;

use super::super::progress::count_bar;

/// How tests are run.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The folder holding one folder per repository (evocodebench; only read: each sample is
    /// tested in a temporary copy).
    #[arg(long, value_name = "DIR")]
    pub repos: Option<PathBuf>,
    /// The k of Pass@k, comma-separated (evocodebench); a k above a case's samples is skipped.
    #[arg(long, value_name = "K,…", default_value = "1", value_delimiter = ',')]
    pub k: Vec<u64>,
    /// Samples tested at once (evocodebench).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub jobs: usize,
    #[command(flatten)]
    pub limits: HarnessArgs,
}

/// The limits each test runs under.
#[derive(Debug, Args)]
pub struct HarnessArgs {
    /// Seconds each test may run before its process group is killed (evocodebench).
    #[arg(long, value_name = "SECONDS", default_value_t = 20.0)]
    pub test_timeout: f64,
    /// Address-space limit of a test and everything it starts, in GB (evocodebench).
    #[arg(long, value_name = "GB", default_value_t = 5.0)]
    pub memory_gb: f64,
}

impl HarnessArgs {
    /// The harness with these limits (an error where no sandbox can be made).
    pub fn harness(&self) -> anyhow::Result<Harness> {
        anyhow::ensure!(
            self.test_timeout > 0.0 && self.test_timeout.is_finite(),
            "--test-timeout must be a positive number of seconds"
        );
        anyhow::ensure!(self.memory_gb > 0.0, "--memory-gb must be positive");
        Ok(Harness::new(
            Duration::from_secs_f64(self.test_timeout),
            (self.memory_gb * 1024.0 * 1024.0 * 1024.0) as u64,
        )?)
    }
}

/// Checks every k of `--k` is at least 1.
pub fn check_ks(ks: &[u64]) -> anyhow::Result<()> {
    anyhow::ensure!(ks.iter().all(|&k| k > 0), "--k: every k must be at least 1");
    Ok(())
}

impl ExecArgs {
    pub fn harness(&self) -> anyhow::Result<Harness> {
        check_ks(&self.k)?;
        self.limits.harness()
    }
}

/// `bench score --format evocodebench`.
pub fn score_cmd(
    cases_path: &Path,
    predictions: &Path,
    args: &ExecArgs,
    json: bool,
) -> anyhow::Result<()> {
    let repos = args
        .repos
        .as_deref()
        .context("--repos DIR is required for evocodebench: the tests run in the repositories")?;
    let harness = args.harness()?;
    let settings = Settings::load(Path::new("."))?;
    let envs = EnvStore::new(&settings.index.cache_dir, "evocodebench");
    let cases = load_exec_cases(cases_path)?;
    let completions = load_completions(predictions)?;
    for problem in cases.problems.iter().chain(&completions.problems) {
        tracing::warn!("skipped: {problem}");
    }
    let matched = match_completions(&cases.cases, &completions.completions);
    if let Some(first) = matched.unknown.first() {
        tracing::warn!(
            "{} namespaces of {} name no case of {} (first: {first})",
            matched.unknown.len(),
            predictions.display(),
            cases_path.display()
        );
    }
    if let Some(first) = matched.unpredicted.first() {
        tracing::warn!(
            "{} cases have no completion and are left out (first: {first})",
            matched.unpredicted.len()
        );
    }
    anyhow::ensure!(
        !matched.samples.is_empty(),
        "no completion of {} matches a case of {}",
        predictions.display(),
        cases_path.display()
    );
    let bar = count_bar("testing", "samples");
    let total: usize = matched.samples.iter().map(|(_, b)| b.len()).sum();
    bar.report(ProgressEvent::Begin {
        total: total as u64,
    });
    let cancel = AtomicBool::new(false);
    let context = ExecContext {
        repos,
        envs: &envs,
        harness: &harness,
        jobs: args.jobs,
        cancel: &cancel,
    };
    let per_case = run_samples(&context, &matched.samples, &|done, _| {
        bar.report(ProgressEvent::Advance { done: done as u64 })
    });
    bar.report(ProgressEvent::End);
    let score = exec_score(per_case, &args.k);
    report_errors(&score);
    if json {
        super::super::print_json(&serde_json::to_value(&score)?)?;
    } else {
        super::super::print_line(&score_text(&score))?;
    }
    anyhow::ensure!(
        score.cases > 0,
        "no case was tested: every sample ended in an error (above)"
    );
    Ok(())
}

/// `bench score --format codereval`: the results' verdicts, for the tasks of the prompts file.
pub fn codereval_cmd(
    prompts_path: &Path,
    results_path: &Path,
    args: &ExecArgs,
    json: bool,
) -> anyhow::Result<()> {
    check_ks(&args.k)?;
    let prompts = load_prompts(prompts_path)?;
    let results = load_results(results_path)?;
    for problem in prompts.problems.iter().chain(&results.problems) {
        tracing::warn!("skipped: {problem}");
    }
    let ids: std::collections::HashSet<&str> = prompts
        .records
        .iter()
        .map(|p| p.question_id.as_str())
        .collect();
    let (known, unknown): (Vec<_>, Vec<_>) = results
        .records
        .into_iter()
        .partition(|r| ids.contains(r.id.as_str()));
    if let Some(first) = unknown.first() {
        tracing::warn!(
            "{} results name no task of {} (first: {})",
            unknown.len(),
            prompts_path.display(),
            first.id
        );
    }
    let scored: std::collections::HashSet<&str> = known.iter().map(|r| r.id.as_str()).collect();
    let missing = ids.iter().filter(|id| !scored.contains(*id)).count();
    if missing > 0 {
        tracing::warn!("{missing} tasks have no result and are left out");
    }
    anyhow::ensure!(
        !known.is_empty(),
        "no result of {} matches a task of {}",
        results_path.display(),
        prompts_path.display()
    );
    let score = score_results(&known, &args.k);
    if json {
        return super::super::print_json(&serde_json::to_value(&score)?);
    }
    let mut out = format!("{} tasks", score.cases);
    out.push_str(&metric_cells(&score.pass_at_k, &Default::default()));
    for (level, part) in &score.by_level {
        out.push_str(&format!("\n  {level}: {} tasks", part.cases));
        out.push_str(&metric_cells(&part.pass_at_k, &Default::default()));
    }
    super::super::print_line(&out)
}

/// Each error once, with how many samples it hit.
fn report_errors(score: &ExecScore) {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for detail in score.per_case.iter().flat_map(|c| &c.details) {
        if detail.status != Status::Error {
            continue;
        }
        let message = detail.message.clone().unwrap_or_default();
        match seen.iter_mut().find(|(m, _)| *m == message) {
            Some((_, count)) => *count += 1,
            None => seen.push((message, 1)),
        }
    }
    for (message, count) in seen {
        tracing::error!("{count} sample(s) not tested: {message}");
    }
}

fn score_text(score: &ExecScore) -> String {
    let mut out =
        String::from("| namespace | n | c | outcomes | first failure |\n|---|---:|---:|---|---|\n");
    for case in &score.per_case {
        let outcomes: Vec<&str> = case.outcomes.iter().map(|s| s.name()).collect();
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            case.namespace,
            case.n,
            case.c,
            outcomes.join(" "),
            case.first_failure.as_deref().unwrap_or("–")
        ));
    }
    out.push_str(&format!("\n{} cases", score.cases));
    out.push_str(&metric_cells(&score.pass_at_k, &score.recall_at_k));
    for (group, part) in &score.by_dependency {
        out.push_str(&format!("\n  {group}: {} cases", part.cases));
        out.push_str(&metric_cells(&part.pass_at_k, &part.recall_at_k));
    }
    out
}

/// " · Pass@1 0.5000 · Recall@1 0.7500" for each k.
fn metric_cells(
    pass: &std::collections::BTreeMap<String, f64>,
    recall: &std::collections::BTreeMap<String, f64>,
) -> String {
    let mut out = String::new();
    for (k, value) in pass {
        out.push_str(&format!(" · Pass@{k} {value:.4}"));
    }
    for (k, value) in recall {
        out.push_str(&format!(" · Recall@{k} {value:.4}"));
    }
    out
}
