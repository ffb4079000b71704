//! `crossfile bench run --format evocodebench`: generate function bodies for EvoCodeBench cases
//! with each retriever, test every sample in the repository's environment, and keep it all in a
//! resumable run file (Pass@k and Recall@k as each pair's metrics).

use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use clap::Args;

use crossfile::backend::Sampling;
use crossfile::bench::CaseFormat;
use crossfile::bench::envs::EnvStore;
use crossfile::bench::evocodebench::load_exec_cases;
use crossfile::bench::exec_run::{ExecPlan, run_exec};
use crossfile::bench::exec_score::ExecContext;
use crossfile::bench::exec_view::Setting;
use crossfile::bench::run_settings::{RunAsks, RunSettings};
use crossfile::config::Settings;
use crossfile::retrieve::RetrieverSpec;

use super::bench_exec::{HarnessArgs, check_ks};
use super::bench_run::{
    BenchRunArgs, completer_of, default_jobs, drive, open_run, selected, settings_of,
};

/// `bench run`'s flags for execution-based cases.
#[derive(Debug, Args)]
pub struct ExecRunArgs {
    /// evocodebench: how much of the case's file the model sees: baseline (the signature and
    /// the requirement), local_completion (and the code above), local_infilling (and the code
    /// below, as fill-in-the-middle where the model has it).
    #[arg(long, value_name = "SETTING", value_parser = Setting::parse)]
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
    let exec = &args.exec;
    let setting = exec.setting.context(
        "--setting is required for evocodebench: baseline, local_completion or local_infilling",
    )?;
    anyhow::ensure!(exec.samples >= 1, "--samples must be at least 1");
    check_ks(&exec.k)?;
    let sampling = exec.sampling()?;
    let retrievers = RetrieverSpec::parse_list(&args.retriever)?;
    let settings = settings_of(args)?;
    crossfile::bench::outputs::refuse_overwriting_inputs(&args.out, &[&args.cases])?;
    let harness = exec.limits.harness()?;
    // Where `bench setup-env` made them: the configured cache, whatever `--cache-dir` says of
    // the indexes.
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
    let (mut file, resumed) = open_run(args)?;
    let completer = completer_of(&settings)?;
    if setting == Setting::LocalInfilling && !completer.template().is_fim() {
        tracing::warn!(
            "local_infilling: the model's template ({}) has no fill-in-the-middle, so the code \
             below is not in the prompt (the same prompt as local_completion)",
            completer.template().name()
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let top_k = args.top_k.unwrap_or(settings.retrieve.top_k);
    let plan = ExecPlan {
        cases: &cases,
        setting,
        retrievers,
        top_k,
        max_new_tokens: args.max_new_tokens,
        samples: exec.samples,
        sampling,
        ks: exec.k.clone(),
        index: settings.index.clone(),
        retrieve: settings.retrieve.clone(),
        settings: Some(RunSettings::of(
            &settings,
            &completer,
            RunAsks {
                top_k,
                max_new_tokens: args.max_new_tokens,
                sampling,
                samples: exec.samples,
                setting: Some(setting.name().to_string()),
            },
        )?),
    };
    let cancel = AtomicBool::new(false);
    let tests = ExecContext {
        repos: &args.repos,
        envs: &envs,
        harness: &harness,
        jobs: args.jobs.unwrap_or_else(|| default_jobs(&settings)),
        cancel: &cancel,
    };
    drive(
        args,
        &resumed,
        &format!("generating and testing ({setting})"),
        loaded.problems.len(),
        "generation and tests",
        |on_event| {
            run_exec(
                &plan,
                &completer,
                &runtime,
                &tests,
                &mut file,
                &resumed.done,
                on_event,
            )
            .with_context(|| format!("running {}", args.cases.display()))
        },
    )
}
