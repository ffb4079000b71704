//! `crossfile bench run`: replay benchmark cases with one or more retrievers into a resumable
//! run file, with a progress bar (ETA and running scores) on stderr and a summary on stdout —
//! line and function cases scored against their reference, EvoCodeBench cases by running every
//! generated body's tests in the repository's environment (Pass@k and Recall@k as each pair's
//! metrics). One runner ([`crossfile_bench::bench::runner`]) replays both kinds.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crossfile_bench::bench::cases::evocodebench::load_exec_cases;
use crossfile_bench::bench::layout::evocodebench::Setting;
use crossfile_bench::bench::runfile::settings::{RunAsks, RunSettings};
use crossfile_bench::bench::runner::{Executed, RunCases, RunEvent, RunPlan, run};
use crossfile_bench::bench::scoring::envs::EnvStore;
use crossfile_bench::bench::scoring::execution::ExecContext;
use crossfile_bench::bench::shard::Shard;
use crossfile_bench::bench::tally::Tally;
use crossfile_bench::bench::{CaseFormat, ReplayFormat, Resumed, RunFile, load_cases};
use crossfile_engine::backend::{BackendKind, Sampling};
use crossfile_engine::choice::Choice;
use crossfile_engine::complete::{Completer, Mode, backend_for, tokenizer_for};
use crossfile_engine::config::{Options, Settings};
use crossfile_engine::retrieve::RetrieverSpec;

use super::super::args::{IndexFlags, ModelFlags, choice, replay_format};
use super::super::progress::bytes_bar;
use super::executed::{HarnessArgs, check_ks};

#[derive(Debug, Args)]
pub struct BenchRunArgs {
    /// The cases' format (history: `bench mine-history`'s; codereval cases are only scored).
    #[arg(long, value_name = "FORMAT", value_parser = replay_format())]
    pub format: ReplayFormat,
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
    /// The closing summary goes to stderr (for commands that run `bench run` as one step and
    /// keep stdout for their own output).
    #[arg(skip)]
    pub summary_on_stderr: bool,
}

/// `bench run`'s flags for execution-based cases.
#[derive(Debug, Args)]
pub struct ExecRunArgs {
    /// evocodebench: how much of the case's file the model sees: baseline (the signature and
    /// the requirement), local_completion (and the code above), local_infilling (and the code
    /// below, as fill-in-the-middle where the model has it).
    #[arg(long, value_name = "SETTING", value_parser = choice::<Setting>())]
    pub setting: Option<Setting>,
    /// evocodebench: bodies generated per case and retriever (more than one needs
    /// --temperature).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub samples: u32,
    /// Sample with this temperature instead of decoding greedily (the benchmark samples with
    /// 0.4 and top-p 0.95).
    #[arg(long, value_name = "T")]
    pub temperature: Option<f32>,
    /// The nucleus of sampling: the smallest set of tokens whose probabilities reach P.
    #[arg(long, value_name = "P", default_value_t = 1.0)]
    pub top_p: f32,
    /// The seed samples are drawn with (each sample's own seed is derived from it, the case and
    /// the sample's number).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u32,
    /// evocodebench: the k of Pass@k and Recall@k kept per case, comma-separated.
    #[arg(long, value_name = "K,…", default_value = "1", value_delimiter = ',')]
    pub k: Vec<u64>,
    #[command(flatten)]
    pub limits: HarnessArgs,
}

impl ExecRunArgs {
    /// An error when a flag only execution-based cases take was given for `format`.
    pub fn refuse_for(&self, format: CaseFormat) -> anyhow::Result<()> {
        let given = [
            ("--setting", self.setting.is_some()),
            ("--samples", self.samples != 1),
            ("--temperature", self.temperature.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
            anyhow::bail!("{flag} is for --format evocodebench, not {}", format.name());
        }
        Ok(())
    }

    /// The sampling settings, `None` for greedy decoding.
    fn sampling(&self) -> anyhow::Result<Option<Sampling>> {
        match self.temperature {
            None if self.samples > 1 => anyhow::bail!(
                "--samples {} needs --temperature: greedy decoding gives the same body each time",
                self.samples
            ),
            None => Ok(None),
            Some(t) => Ok(Some(Sampling::new(t, self.top_p, self.seed)?)),
        }
    }
}

pub fn run_cmd(args: &BenchRunArgs) -> anyhow::Result<()> {
    let retrievers = RetrieverSpec::parse_list(&args.retriever)?;
    let settings = settings_of(args)?;
    crossfile_bench::bench::outputs::refuse_overwriting_inputs(&args.out, &[&args.cases])?;
    let top_k = args.top_k.unwrap_or(settings.retrieve.top_k);
    let asks = RunAsks {
        top_k,
        max_new_tokens: args.max_new_tokens,
        ..RunAsks::default()
    };
    match args.format {
        ReplayFormat::Cases(format) => run_text(args, format, &settings, retrievers, asks),
        ReplayFormat::Execution => run_executed(args, &settings, retrievers, asks),
    }
}

/// `bench run` over line and function cases: each pair completed and scored.
fn run_text(
    args: &BenchRunArgs,
    format: CaseFormat,
    settings: &Settings,
    retrievers: Vec<RetrieverSpec>,
    asks: RunAsks,
) -> anyhow::Result<()> {
    args.exec.refuse_for(format)?;
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
    let completer = completer_of(settings)?;
    let run = Run {
        args,
        settings,
        completer: &completer,
        skipped: loaded.problems.len(),
    };
    run.replay(
        RunCases::Text(&cases),
        retrievers,
        asks,
        "replaying",
        "indexing included",
    )
}

/// `bench run` over EvoCodeBench cases: each pair's samples generated, then tested.
fn run_executed(
    args: &BenchRunArgs,
    settings: &Settings,
    retrievers: Vec<RetrieverSpec>,
    asks: RunAsks,
) -> anyhow::Result<()> {
    let exec = &args.exec;
    let setting = exec.setting.context(
        "--setting is required for evocodebench: baseline, local_completion or \
                 local_infilling",
    )?;
    anyhow::ensure!(exec.samples >= 1, "--samples must be at least 1");
    check_ks(&exec.k)?;
    let sampling = exec.sampling()?;
    let harness = exec.limits.harness()?;
    // Where `bench setup-env` made them: the configured cache, whatever `--cache-dir`
    // says of the indexes.
    let envs = EnvStore::new(
        &Settings::load(Path::new("."))?.index.cache_dir,
        "evocodebench",
    );
    let loaded = load_exec_cases(&args.cases)?;
    for problem in &loaded.problems {
        tracing::warn!("skipped: {problem}");
    }
    anyhow::ensure!(
        !loaded.cases.is_empty(),
        "{}: no case to run ({} records skipped); nothing was written to {}",
        args.cases.display(),
        loaded.problems.len(),
        args.out.display()
    );
    let cases = selected(&loaded.cases, args);
    let completer = completer_of(settings)?;
    if setting == Setting::LocalInfilling && !completer.template().is_fim() {
        tracing::warn!(
            "local_infilling: the model's template ({}) has no fill-in-the-middle, so \
                     the code below is not in the prompt (the same prompt as local_completion)",
            completer.template()
        );
    }
    let cancel = AtomicBool::new(false);
    let tests = ExecContext {
        repos: &args.repos,
        envs: &envs,
        harness: &harness,
        jobs: args.jobs.unwrap_or_else(|| default_jobs(settings)),
        cancel: &cancel,
    };
    let executed = Executed {
        cases: &cases,
        setting,
        samples: exec.samples,
        sampling,
        ks: exec.k.clone(),
        tests: &tests,
    };
    let asks = RunAsks {
        sampling,
        samples: exec.samples,
        setting: Some(setting.name().to_string()),
        ..asks
    };
    let run = Run {
        args,
        settings,
        completer: &completer,
        skipped: loaded.problems.len(),
    };
    run.replay(
        RunCases::Executed(executed),
        retrievers,
        asks,
        &format!("generating and testing ({setting})"),
        "generation and tests",
    )
}

/// A run about to start: its command line, settings and completer, and the records its cases
/// file skipped.
struct Run<'a> {
    args: &'a BenchRunArgs,
    settings: &'a Settings,
    completer: &'a Completer,
    skipped: usize,
}

impl Run<'_> {
    /// Runs `cases` with `retrievers` into the run file (resumed), under a progress bar whose
    /// prefix is `prefix`; the closing line says what the pairs' time includes (`included`).
    fn replay(
        &self,
        cases: RunCases<'_>,
        retrievers: Vec<RetrieverSpec>,
        asks: RunAsks,
        prefix: &str,
        included: &str,
    ) -> anyhow::Result<()> {
        let (args, settings) = (self.args, self.settings);
        let (mut file, resumed) = open_run(args)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        let plan = RunPlan {
            cases,
            retrievers,
            repos: args.repos.clone(),
            // The embedded model runs one request at a time: more in flight would only queue
            // (and charge the queueing to `generate`).
            jobs: args.jobs.unwrap_or_else(|| default_jobs(settings)),
            top_k: asks.top_k,
            max_new_tokens: args.max_new_tokens,
            index: settings.index.clone(),
            retrieve: settings.retrieve.clone(),
            settings: Some(RunSettings::of(settings, self.completer, asks)?),
        };
        drive(args, &resumed, prefix, self.skipped, included, |on_event| {
            run(
                &plan,
                self.completer,
                &runtime,
                &mut file,
                &resumed.done,
                on_event,
            )
            .with_context(|| format!("running {}", args.cases.display()))
        })
    }
}

/// The settings a run uses: the configuration with the command line's model, backend and index
/// flags over it.
fn settings_of(args: &BenchRunArgs) -> anyhow::Result<Settings> {
    let options = Options {
        backend: Some(args.model.backend_options()),
        model: Some(args.model.model_options()),
        ..args.index.options()
    };
    Ok(Settings::load_with(std::path::Path::new("."), options)?)
}

/// This run's cases: the first `--limit`, then this machine's `--shard`.
fn selected<T: Clone>(cases: &[T], args: &BenchRunArgs) -> Vec<T> {
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
fn open_run(args: &BenchRunArgs) -> anyhow::Result<(RunFile, Resumed)> {
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
fn completer_of(settings: &Settings) -> anyhow::Result<Completer> {
    let fetch_bar = bytes_bar("downloading the default model");
    let backend = backend_for(settings, &fetch_bar)?;
    let tokenizer = tokenizer_for(settings, backend.as_ref(), &fetch_bar)?;
    Ok(Completer::new(
        settings,
        backend,
        tokenizer,
        Mode::default(),
    ))
}

/// Work in flight at once by default: one for the embedded model (it runs one request at a
/// time), else the number of cores.
fn default_jobs(settings: &Settings) -> usize {
    match settings.backend.kind {
        BackendKind::Embedded => 1,
        _ => std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
    }
}

/// Runs `work` with a progress bar and running totals on stderr, then prints the summary
/// (`--json` or a table) and fails when any pair ended in an error.
fn drive(
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
        super::super::print_json(&serde_json::to_value(&summary)?)?;
    } else {
        let summary = format!(
            "{}\n{ran} pairs in {seconds:.1} s ({:.2} pairs/s, {included})",
            tally.table(skipped, resumed.records.len()),
            ran as f64 / seconds
        );
        if args.summary_on_stderr {
            use std::io::Write;
            writeln!(std::io::stderr().lock(), "{summary}")?;
        } else {
            super::super::print_line(&summary)?;
        }
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
