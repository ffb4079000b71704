//! Running an EvoCodeBench case's tests on a body, for `crossfile.score`, `crossfile.compare` and
//! an arena battle's vote ([`tests_on_both`]):
//! the engine's harness ([`crossfile_bench::bench::scoring::execution::test_body`]: a fresh copy of the repository,
//! the body spliced into the original file as the benchmark does, each test in the sandbox),
//! with a `$/progress` report as each test starts. `$/cancelRequest` for the command or
//! `window/workDoneProgress/cancel` for its progress stops the running test; nothing is decided
//! then, and the command answers that it was cancelled.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;
use tower_lsp::lsp_types::NumberOrString;

use super::session::ExecTarget;
use crate::lsp::error::ServeError;
use crate::lsp::ext::{TestOutcome, TestRunInfo};
use crate::lsp::progress::Reporter;
use crate::lsp::state::State;
use crossfile_bench::arena::battle::LateMetrics;
use crossfile_bench::bench::layout::evocodebench::body_of;
use crossfile_bench::bench::scoring::execution::{ExecContext, one_body_metrics, test_body};
use crossfile_bench::bench::scoring::recall::sample_recalls;
use crossfile_bench::harness::{DEFAULT_MEMORY_BYTES, DEFAULT_PER_TEST, Harness, Outcome, Status};

/// A body's tests run, with the body's Recall@1 against the case's dependencies (`None`: the
/// case has none).
pub struct Tested {
    pub outcome: Outcome,
    pub recall: Option<f64>,
}

/// Runs `exec`'s tests on `body` (the whole body, its first line indented), reporting under
/// the client's `given` progress token or one the server makes, titled `title`.
pub async fn run_tests(
    state: &State,
    exec: &Arc<ExecTarget>,
    body: String,
    title: &str,
    given: Option<NumberOrString>,
) -> Result<Tested, ServeError> {
    let name = format!("crossfile/tests/{}", state.requests.unique());
    let reporter = Reporter::create(state, given, name, true).await;
    let key = reporter.key();
    let count = exec.case.tests.len();
    reporter
        .begin(title, Some(format!("{count} test(s)")), Some(0))
        .await;
    let stop = Arc::new(AtomicBool::new(false));
    // Set when this command's future is dropped (`$/cancelRequest`): the test running stops.
    let _stop_on_drop = StopOnDrop(stop.clone());
    let cancel = state.requests.begin_work(key.as_deref());
    let (started, mut starts) = mpsc::unbounded_channel::<(usize, String)>();
    let (for_tests, flag) = (exec.clone(), stop.clone());
    let mut task = tokio::task::spawn_blocking(move || {
        let on_test = |number: usize, id: &str| {
            let _ = started.send((number, id.to_string()));
        };
        test_on(&for_tests, &body, &flag, &on_test)
    });
    let joined = loop {
        tokio::select! {
            Some((number, id)) = starts.recv() => {
                let percentage = u32::try_from(number * 100 / count.max(1)).unwrap_or(100);
                let message = format!("test {} of {count}: {id}", number + 1);
                reporter.report(message, Some(percentage)).await;
            }
            () = cancel.cancelled(), if !stop.load(Ordering::Relaxed) => {
                stop.store(true, Ordering::Relaxed);
            }
            joined = &mut task => break joined,
        }
    };
    state.requests.end_work(key.as_deref());
    let tested = joined.map_err(ServeError::task("running the tests"))?;
    let cancelled = stop.load(Ordering::Relaxed);
    let ending = match &tested {
        Ok(_) if cancelled => "cancelled".to_string(),
        Ok(t) => summary(&t.outcome),
        Err(e) => e.to_string(),
    };
    reporter.end(ending).await;
    if cancelled {
        return Err(ServeError::Cancelled);
    }
    tested
}

/// `exec`'s tests run on `body` (blocking), `on_test` told as each starts; `stop` set stops them.
fn test_on(
    exec: &ExecTarget,
    body: &str,
    stop: &AtomicBool,
    on_test: &(dyn Fn(usize, &str) + Sync),
) -> Result<Tested, ServeError> {
    let harness = Harness::new(DEFAULT_PER_TEST, DEFAULT_MEMORY_BYTES)
        .map_err(|e| ServeError::Request(e.to_string()))?;
    let context = ExecContext {
        repos: &exec.repos,
        envs: &exec.envs,
        harness: &harness,
        jobs: 1,
        cancel: stop,
    };
    let outcome = test_body(&context, &exec.case, body, on_test);
    let recall = sample_recalls(&exec.case, &exec.repos, &[body])
        .and_then(|recalls| recalls.into_iter().next())
        .and_then(|r| r.all);
    Ok(Tested { outcome, recall })
}

/// An arena battle's metrics at an EvoCodeBench case, for when it is decided: each arm's body
/// (cut from its raw output, as `bench run` cuts it) tested, Pass@1 and Recall@1 of each.
pub fn tests_on_both(exec: Arc<ExecTarget>, raws: [String; 2]) -> LateMetrics {
    LateMetrics(Arc::new(move |stop: &AtomicBool| {
        let left = " ".repeat(exec.case.indent);
        let mut metrics = Vec::with_capacity(2);
        for raw in &raws {
            let tested = test_on(&exec, &body_of(&left, raw), stop, &|_, _| {});
            let tested = match tested {
                Ok(tested) => tested,
                Err(e) => {
                    tracing::warn!(case = exec.case.namespace, "arena: tests not run: {e}");
                    return None;
                }
            };
            if stop.load(Ordering::SeqCst) {
                return None;
            }
            metrics.push(one_body_metrics(&tested.outcome, tested.recall));
        }
        metrics.try_into().ok()
    }))
}

/// Sets the flag when dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// One line: how the tests ended.
fn summary(outcome: &Outcome) -> String {
    match (&outcome.status, &outcome.first_failure, &outcome.message) {
        (Status::Pass, _, _) => format!("{} test(s) passed", outcome.tests.len()),
        (Status::Error, _, Some(message)) => format!("not run: {message}"),
        (status, Some(test), _) => format!("{}: {test}", status.name()),
        (status, None, _) => status.name().to_string(),
    }
}

/// The outcome as the commands answer it: its status, each test run with its output's tail,
/// the first that did not pass, and why the tests could not run.
pub fn test_outcome(tested: &Tested) -> TestOutcome {
    let outcome = &tested.outcome;
    TestOutcome {
        status: outcome.status.name().to_string(),
        passed: outcome.status == Status::Pass,
        tests: outcome
            .tests
            .iter()
            .map(|t| TestRunInfo {
                id: t.id.clone(),
                status: t.status.name().to_string(),
                exit_code: t.exit_code,
                secs: t.secs,
                output: t.tail.clone(),
            })
            .collect(),
        first_failure: outcome.first_failure.clone(),
        message: outcome.message.clone(),
        secs: outcome.secs,
        recall: tested.recall,
    }
}
