//! `crossfile bench mine-functions ROOT --tests CMD --out CASES.jsonl`: EvoCodeBench cases from
//! a Python workspace's own functions and tests ([`crossfile_bench::mine::functions`]): the test
//! command is run once with a tracer, then each function reached by a passing test is tested with
//! its reference body (must pass) and emptied (must fail one), in the sandbox. The cases'
//! `completion_path` starts with ROOT's folder name, so `--repos` is ROOT's parent for `bench
//! run` and `bench score`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;

use crossfile_bench::harness::PythonEnv;
use crossfile_bench::mine::functions::{MineFunctions, MineReport, mine_functions};
use crossfile_engine::config::Settings;
use crossfile_engine::progress::ProgressEvent;

use super::super::progress::count_bar;
use super::executed::HarnessArgs;

#[derive(Debug, Args)]
pub struct BenchMineFunctionsArgs {
    /// The workspace: a Python project with tests (only read: every run is in a copy).
    pub root: PathBuf,
    /// The shell command that runs its tests under pytest, from ROOT (e.g. `python -m pytest -q
    /// tests`); `python` is the environment's.
    #[arg(long, value_name = "CMD")]
    pub tests: String,
    /// Where to write the cases, one EvoCodeBench record per line (replaced if it exists).
    #[arg(long, value_name = "CASES.jsonl")]
    pub out: PathBuf,
    /// The virtual environment the tests run in (default: the `python3` on PATH).
    #[arg(long, value_name = "DIR")]
    pub env: Option<PathBuf>,
    /// How long the traced run of the whole test command may take, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub trace_timeout: u64,
    /// The tests kept per case (the first that reach it, by node id).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub max_tests: usize,
    /// Functions tested at once.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub jobs: usize,
    /// Stop once this many cases are found (the first in path and line order among those
    /// tested; functions are tested in that order).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub limits: HarnessArgs,
    /// Print one JSON object (the counts) instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchMineFunctionsArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let root = args
        .root
        .canonicalize()
        .with_context(|| format!("{}: not a folder", args.root.display()))?;
    let repository = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .context("the workspace root has no folder name")?;
    anyhow::ensure!(args.max_tests >= 1, "--max-tests must be at least 1");
    let env = match &args.env {
        Some(dir) => PythonEnv::venv(dir),
        None => system_python()?,
    };
    anyhow::ensure!(
        env.python.exists(),
        "no Python interpreter at {}",
        env.python.display()
    );
    let settings = Settings::load_with(&root, Default::default())?;
    let harness = args.limits.harness()?;
    let bar = count_bar("testing", "functions");
    let cancel = AtomicBool::new(false);
    eprintln!("running `{}` once with the tracer…", args.tests);
    let mined = mine_functions(
        &MineFunctions {
            root: &root,
            repository: &repository,
            env: &env,
            tests: &args.tests,
            trace_limit: Duration::from_secs(args.trace_timeout),
            harness: &harness,
            jobs: args.jobs,
            max_tests: args.max_tests,
            workspace: &settings.index.workspace,
            limit: args.limit,
        },
        &cancel,
        &|done, total| {
            if done == 1 {
                bar.report(ProgressEvent::Begin {
                    total: total as u64,
                });
            }
            bar.report(ProgressEvent::Advance { done: done as u64 });
        },
    )
    .map_err(anyhow::Error::msg)?;
    bar.report(ProgressEvent::End);
    write_cases(&args.out, &mined.records)?;
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        let mut value = serde_json::to_value(&mined.report)?;
        value["out"] = serde_json::json!(args.out);
        value["seconds"] = serde_json::json!(seconds);
        super::super::print_json(&value)?;
    } else {
        super::super::print_line(&summary(&mined.report, &args.out, seconds))?;
    }
    Ok(())
}

/// `python3` from PATH, as an environment: the interpreter it runs (a launcher such as a pyenv
/// shim is a script the sandbox could not run) and its prefix, as it reports them.
fn system_python() -> anyhow::Result<PythonEnv> {
    let output = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable); print(sys.prefix)"])
        .output()
        .context("no python3 on PATH: give --env")?;
    anyhow::ensure!(
        output.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&output.stderr).trim()
    );
    let text = String::from_utf8(output.stdout).context("python3's paths are not UTF-8")?;
    let mut lines = text.lines();
    match (lines.next(), lines.next()) {
        (Some(python), Some(prefix)) if !python.is_empty() => Ok(PythonEnv {
            python: PathBuf::from(python),
            prefix: PathBuf::from(prefix),
        }),
        _ => anyhow::bail!("python3 did not name its interpreter: give --env"),
    }
}

fn write_cases(out: &Path, records: &[serde_json::Value]) -> anyhow::Result<()> {
    let mut text = String::new();
    for record in records {
        text.push_str(&serde_json::to_string(record)?);
        text.push('\n');
    }
    let mut file =
        std::fs::File::create(out).with_context(|| format!("writing {}", out.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", out.display()))?;
    Ok(())
}

fn summary(r: &MineReport, out: &Path, seconds: f64) -> String {
    format!(
        "{} cases written to {} ({seconds:.0} s)\n\
         {} functions in {} files: {} trivial, {} one-line; {} tests ran, {} passed;\n\
         {} reached by no passing test, {} whose reference body fails a test run alone, {} whose \
         emptied body passes every test, {} not tested (--limit)",
        r.cases,
        out.display(),
        r.functions,
        r.files,
        r.trivial,
        r.layout,
        r.tests_run,
        r.tests_passed,
        r.unreached,
        r.reference_fails,
        r.emptied_passes,
        r.not_tried,
    )
}
