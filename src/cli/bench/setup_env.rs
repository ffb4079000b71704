//! `crossfile bench setup-env`: one Python environment per repository of an execution-based
//! benchmark, from its pinned requirement files, in the cache.

use std::path::PathBuf;

use clap::Args;

use crossfile_bench::bench::scoring::envs::{EnvStore, SetUp};
use crossfile_engine::config::Settings;
use crossfile_engine::progress::ProgressEvent;

use super::super::progress::count_bar;

#[derive(Debug, Args)]
pub struct BenchSetupEnvArgs {
    /// The benchmark: evocodebench.
    #[arg(long, value_name = "FORMAT", value_parser = ["evocodebench"])]
    pub format: String,
    /// The folder holding one folder per repository (only read).
    #[arg(long, value_name = "DIR")]
    pub repos: PathBuf,
    /// The folder of pinned requirement files, `<repository>.txt`.
    #[arg(long, value_name = "DIR")]
    pub requirements: PathBuf,
    /// The Python interpreter the environments are made with.
    #[arg(long, value_name = "PYTHON", default_value = "python3")]
    pub python: String,
}

pub fn run(args: &BenchSetupEnvArgs) -> anyhow::Result<()> {
    let settings = Settings::load(std::path::Path::new("."))?;
    let store = EnvStore::new(&settings.index.cache_dir, &args.format);
    let (planned, without) = EnvStore::planned(&args.repos, &args.requirements)?;
    if let Some(first) = without.first() {
        tracing::info!(
            "{} folders of {} have no requirement file in {} and get no environment (first: {first})",
            without.len(),
            args.repos.display(),
            args.requirements.display()
        );
    }
    if planned.is_empty() {
        anyhow::bail!(
            "no folder of {} has a requirement file in {}",
            args.repos.display(),
            args.requirements.display()
        );
    }
    let bar = count_bar("environments", "repositories");
    bar.report(ProgressEvent::Begin {
        total: planned.len() as u64,
    });
    let mut failed = Vec::new();
    for (done, name) in planned.iter().enumerate() {
        match store.set_up(&args.repos, &args.requirements, name, &args.python) {
            Ok(prepared) => {
                match prepared.how {
                    SetUp::Made => eprintln!("made  {name}"),
                    SetUp::Kept => eprintln!("kept  {name} (already set up)"),
                }
                if let Some(warning) = prepared.warning {
                    eprintln!("warning {name}: {warning}");
                }
            }
            Err(e) => {
                eprintln!("error {e}");
                failed.push(name.clone());
            }
        }
        bar.report(ProgressEvent::Advance {
            done: done as u64 + 1,
        });
    }
    bar.report(ProgressEvent::End);
    eprintln!("environments in {}", store.root().display());
    if !failed.is_empty() {
        anyhow::bail!(
            "{} environment(s) could not be made: {}",
            failed.len(),
            failed.join(", ")
        );
    }
    Ok(())
}
