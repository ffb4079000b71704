//! What testing a generated body costs (`bench harness`): EvoCodeBench's reference bodies through
//! the engine's harness (a fresh copy, the splice, the tests in the sandbox) one at a time and
//! `jobs` at a time, and through the benchmark's reference runner `replay.py` in the same run, on
//! the same cases and environments.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::Serialize;

use super::{PerfError, percentile};
use crate::bench::cases::evocodebench::ExecCase;
use crate::bench::scoring::envs::EnvStore;
use crate::bench::scoring::execution::{ExecContext, run_samples};
use crate::harness::{Harness, Status};

/// What to measure.
pub struct ExecParams<'a> {
    pub cases: &'a [ExecCase],
    /// The cases file, for `replay.py`.
    pub cases_file: &'a Path,
    pub repos: &'a Path,
    pub envs: &'a EnvStore,
    pub harness: &'a Harness,
    /// The parallel run's jobs.
    pub jobs: usize,
    /// `replay.py`, to run in the same run (`None`: not compared).
    pub replay: Option<&'a Path>,
}

/// One way of running every case's reference body.
#[derive(Clone, Debug, Serialize)]
pub struct ExecTiming {
    pub jobs: usize,
    /// Wall time for all the cases.
    pub total_s: f64,
    /// Seconds per case (copy, splice, tests), median and largest.
    pub per_case_p50_s: f64,
    pub per_case_max_s: f64,
    pub passed: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct ExecReport {
    pub cases: usize,
    pub sequential: ExecTiming,
    pub parallel: ExecTiming,
    /// `replay.py --mode reference`, one case after another, in the same run.
    pub replay_py: Option<ExecTiming>,
}

/// Runs the reference bodies one at a time, `jobs` at a time, then through `replay.py`.
pub fn measure_exec(
    params: &ExecParams,
    say: &(dyn Fn(&str) + Sync),
) -> Result<ExecReport, PerfError> {
    let bodies: Vec<String> = params
        .cases
        .iter()
        .map(|case| case.reference_body(params.repos))
        .collect::<Result<_, _>>()
        .map_err(|e| PerfError::Unmeasurable(e.to_string()))?;
    let samples: Vec<(&ExecCase, Vec<&str>)> = params
        .cases
        .iter()
        .zip(&bodies)
        .map(|(case, body)| (case, vec![body.as_str()]))
        .collect();
    let ours = |jobs: usize| {
        let cancel = AtomicBool::new(false);
        let context = ExecContext {
            repos: params.repos,
            envs: params.envs,
            harness: params.harness,
            jobs,
            cancel: &cancel,
        };
        let started = Instant::now();
        let outcomes = run_samples(&context, &samples, &|done, total| {
            say(&format!(
                "crossfile, {jobs} at a time: {done} of {total} cases"
            ));
        });
        let total_s = started.elapsed().as_secs_f64();
        let secs: Vec<f64> = outcomes
            .iter()
            .flat_map(|c| c.details.iter().map(|d| d.secs))
            .collect();
        let passed = outcomes
            .iter()
            .filter(|c| c.outcomes == [Status::Pass])
            .count();
        timing(jobs, total_s, &secs, passed)
    };
    let sequential = ours(1);
    let parallel = ours(params.jobs);
    let replay_py = match params.replay {
        Some(script) => {
            say("replay.py --mode reference, one case after another");
            Some(replay(script, params)?)
        }
        None => None,
    };
    Ok(ExecReport {
        cases: params.cases.len(),
        sequential,
        parallel,
        replay_py,
    })
}

fn timing(jobs: usize, total_s: f64, secs: &[f64], passed: usize) -> ExecTiming {
    ExecTiming {
        jobs,
        total_s,
        per_case_p50_s: percentile(secs, 50.0),
        per_case_max_s: secs.iter().copied().fold(f64::NAN, f64::max),
        passed,
    }
}

/// `replay.py --mode reference` over the same cases, with the same environments (its `--venvs`
/// layout, `<dir>/<repository>/bin/python`, is the store's).
fn replay(script: &Path, params: &ExecParams) -> Result<ExecTiming, PerfError> {
    let started = Instant::now();
    let output = Command::new("python3")
        .arg(script)
        .arg("--cases")
        .arg(params.cases_file)
        .arg("--repos")
        .arg(params.repos)
        .arg("--venvs")
        .arg(PathBuf::from(params.envs.root()))
        .args(["--mode", "reference"])
        .output()
        .map_err(PerfError::io(format!("running {}", script.display())))?;
    let total_s = started.elapsed().as_secs_f64();
    if !output.status.success() {
        return Err(PerfError::Unmeasurable(format!(
            "{} failed ({}): {}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let secs: Vec<f64> = lines.iter().filter_map(|l| l["secs"].as_f64()).collect();
    let passed = lines.iter().filter(|l| l["result"] == "Pass").count();
    Ok(timing(1, total_s, &secs, passed))
}
