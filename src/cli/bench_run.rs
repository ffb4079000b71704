//! `crossfile bench run`: replay benchmark cases with one or more retrievers into a resumable
//! run file, with a progress bar (ETA and running scores) on stderr and a summary on stdout.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crossfile::backend::BackendKind;
use crossfile::bench::run::{RunEvent, RunPlan, run};
use crossfile::bench::run_settings::{RunAsks, RunSettings};
use crossfile::bench::shard::Shard;
use crossfile::bench::tally::Tally;
use crossfile::bench::{CaseFormat, Resumed, RunFile, load_cases};
use crossfile::complete::{Completer, backend_for, tokenizer_for};
use crossfile::config::{Options, Settings};
use crossfile::retrieve::RetrieverSpec;

use super::args::{IndexFlags, ModelFlags};
use super::bench_run_exec::ExecRunArgs;
use super::progress::bytes_bar;

/// What `bench run` replays: completion cases scored against their reference, or
/// execution-based ones scored by their repository's tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunFormat {
    Cases(CaseFormat),
    EvoCodeBench,
}

impl RunFormat {
    fn parse(name: &str) -> Result<RunFormat, String> {
        match name {
            "evocodebench" => Ok(RunFormat::EvoCodeBench),
            _ => CaseFormat::from_name(name)
                .map(RunFormat::Cases)
                .ok_or_else(|| {
                    format!("unknown format {name:?}: cceval, repoeval or evocodebench")
                }),
        }
    }
}

#[derive(Debug, Args)]
pub struct BenchRunArgs {
    /// The cases' format: cceval, repoeval or evocodebench.
    #[arg(long, value_name = "FORMAT", value_parser = RunFormat::parse)]
    pub format: RunFormat,
    /// The cases file (jsonl).
    #[arg(long, value_name = "FILE")]
    pub cases: PathBuf,
    /// The folder holding each case's repository as DIR/<repository>.
    #[arg(long, value_name = "DIR")]
    pub repos: PathBuf,
    /// Retriever specs, comma-separated; each case runs with each.
    #[arg(long, value_name = "SPEC[,SPEC...]")]
    pub retriever: String,
    #[command(flatten)]
    pub model: ModelFlags,
    /// The run file: one JSON line per case and retriever; an existing one is resumed.
    #[arg(long, value_name = "RUN.jsonl")]
    pub out: PathBuf,
    /// Completions in flight at once (default: 1 for the embedded model, else the number of
    /// cores).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Run only the first N cases of the file.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Run only this machine's share of the cases: every N-th from the K-th (0-based, K < N);
    /// `bench merge` joins the shards' run files.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// Chunks retrieved per case.
    #[arg(long, value_name = "N")]
    pub top_k: Option<usize>,
    /// Tokens to generate (default: prompt.max_new_tokens for line cases, 256 for function
    /// bodies).
    #[arg(long, value_name = "N")]
    pub max_new_tokens: Option<u32>,
    #[command(flatten)]
    pub index: IndexFlags,
    /// Run again the pairs the run file records as errors (a backend that was down).
    #[arg(long)]
    pub retry_errors: bool,
    #[command(flatten)]
    pub exec: ExecRunArgs,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run_cmd(args: &BenchRunArgs) -> anyhow::Result<()> {
    let format = match args.format {
        RunFormat::Cases(format) => format,
        RunFormat::EvoCodeBench => return super::bench_run_exec::run_cmd(args),
    };
    args.exec.refuse_for(format)?;
    let retrievers = RetrieverSpec::parse_list(&args.retriever)?;
    let settings = settings_of(args)?;
    crossfile::bench::outputs::refuse_overwriting_inputs(&args.out, &[&args.cases])?;
    let loaded = load_cases(&args.cases, format, settings.index.workspace.max_file_bytes)?;
    for problem in &loaded.problems {
        tracing::warn!("skipped: {problem}");
    }
    if loaded.cases.is_empty() {
        anyhow::bail!(
            "{}: no case to run ({} records skipped{}); nothing was written to {}",
            args.cases.display(),
            loaded.problems.len(),
            match loaded.problems.first() {
                None => ", the file is empty".to_string(),
                Some(first) => format!(", the first {first}; is --format {} right?", format.name()),
            },
            args.out.display()
        );
    }
    let cases = selected(&loaded.cases, args);
    let (mut file, resumed) = open_run(args)?;
    let completer = completer_of(&settings)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let top_k = args.top_k.unwrap_or(settings.retrieve.top_k);
    let plan = RunPlan {
        cases: &cases,
        retrievers,
        repos: args.repos.clone(),
        // The embedded model runs one request at a time: more in flight would only queue (and
        // charge the queueing to `generate`).
        jobs: args.jobs.unwrap_or_else(|| default_jobs(&settings)),
        top_k,
        max_new_tokens: args.max_new_tokens,
        index: settings.index.clone(),
        retrieve: settings.retrieve.clone(),
        settings: Some(RunSettings::of(
            &settings,
            &completer,
            RunAsks {
                top_k,
                max_new_tokens: args.max_new_tokens,
                ..RunAsks::default()
            },
        )?),
    };
    drive(
        args,
        &resumed,
        "replaying",
        loaded.problems.len(),
        "indexing included",
        |on_event| {
            run(
                &plan,
                &completer,
                &runtime,
                &mut file,
                &resumed.done,
                on_event,
            )
            .with_context(|| format!("replaying {}", args.cases.display()))
        },
    )
}

/// The settings a run uses: the configuration with the command line's model, backend and index
/// flags over it.
pub(super) fn settings_of(args: &BenchRunArgs) -> anyhow::Result<Settings> {
    let options = Options {
        backend: Some(args.model.backend_options()),
        model: Some(args.model.model_options()),
        ..args.index.options()
    };
    Ok(Settings::load_with(std::path::Path::new("."), options)?)
}

/// This run's cases: the first `--limit`, then this machine's `--shard`.
pub(super) fn selected<T: Clone>(cases: &[T], args: &BenchRunArgs) -> Vec<T> {
    let cases = &cases[..args.limit.unwrap_or(usize::MAX).min(cases.len())];
    match args.shard {
        Some(shard) => {
            let mine: Vec<T> = shard.of(cases).into_iter().cloned().collect();
            tracing::info!("shard {shard}: {} of {} cases", mine.len(), cases.len());
            mine
        }
        None => cases.to_vec(),
    }
}

/// The run file, resumed (its error records dropped with `--retry-errors`).
pub(super) fn open_run(args: &BenchRunArgs) -> anyhow::Result<(RunFile, Resumed)> {
    let (file, resumed) = if args.retry_errors {
        let (file, resumed, dropped) = RunFile::open_dropping_errors(&args.out)?;
        tracing::info!(
            "{dropped} error records dropped from {} to run again",
            args.out.display()
        );
        (file, resumed)
    } else {
        RunFile::open(&args.out)?
    };
    if resumed.torn_bytes > 0 {
        tracing::warn!(
            "{}: cut off a torn last line ({} bytes) left by a killed run",
            args.out.display(),
            resumed.torn_bytes
        );
    }
    Ok((file, resumed))
}

/// The completer of `settings`' backend and tokenizer (the default model fetched if need be).
pub(super) fn completer_of(settings: &Settings) -> anyhow::Result<Completer> {
    let fetch_bar = bytes_bar("downloading the default model");
    let backend = backend_for(settings, &fetch_bar)?;
    let tokenizer = tokenizer_for(settings, backend.as_ref(), &fetch_bar)?;
    Ok(Completer::new(settings, backend, tokenizer))
}

/// Work in flight at once by default: one for the embedded model (it runs one request at a
/// time), else the number of cores.
pub(super) fn default_jobs(settings: &Settings) -> usize {
    match settings.backend.kind {
        BackendKind::Embedded => 1,
        _ => std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
    }
}

/// Runs `work` with a progress bar and running totals on stderr, then prints the summary
/// (`--json` or a table) and fails when any pair ended in an error.
pub(super) fn drive(
    args: &BenchRunArgs,
    resumed: &Resumed,
    prefix: &str,
    skipped: usize,
    included: &str,
    work: impl FnOnce(&mut dyn FnMut(RunEvent<'_>)) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len}, eta {eta}  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix(prefix.to_string());
    let mut tally = Tally::default();
    for record in &resumed.records {
        tally.add(record);
    }
    let started = std::time::Instant::now();
    let mut ran = 0usize;
    work(&mut |event| match event {
        RunEvent::Start { pending, .. } => bar.set_length(pending as u64),
        RunEvent::Record(record) => {
            ran += 1;
            tally.add(record);
            bar.inc(1);
            bar.set_message(tally.line());
        }
    })?;
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        let summary = tally.summary(skipped, resumed.records.len(), ran, seconds);
        super::print_json(&serde_json::to_value(&summary)?)?;
    } else {
        super::print_line(&format!(
            "{}\n{ran} pairs in {seconds:.1} s ({:.2} pairs/s, {included})",
            tally.table(skipped, resumed.records.len()),
            ran as f64 / seconds
        ))?;
    }
    let (errors, pairs) = tally.errors();
    anyhow::ensure!(
        errors == 0,
        "{errors} of {pairs} pairs ended in an error (recorded in {}, not scored; \
         `--retry-errors` runs them again)",
        args.out.display()
    );
    Ok(())
}
