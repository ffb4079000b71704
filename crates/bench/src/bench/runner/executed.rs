//! EvoCodeBench cases in a run: each (case, retriever) pair is laid out for the setting
//! ([`crate::bench::layout::evocodebench`]) in its repository's bench index, its samples are
//! generated (greedy, or sampled with a seed of their own: [`Sampling::for_sample`]), each
//! output cut to the body as the benchmark cuts it ([`body_of`]), and each body is tested in a
//! fresh copy of the repository through the harness
//! ([`crate::bench::scoring::execution::run_samples`]); the pair is written with every sample's
//! body and outcome, and the case's Pass@k and Recall@k as its metrics (so reports, comparisons
//! and merges read it as any other run).
//!
//! A pair is written whole once its samples are tested: a killed run loses the pair in flight
//! and generates it again on resume, drawing the same samples (their seeds depend on the case
//! and the sample's number only), so no sample is lost and none is recorded twice. A pair whose
//! generation fails, or whose every sample the harness could not run, is an error, never a miss.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::{Made, Named, Pool, RunPlan, complete_error, with_completion};
use crate::bench::BenchError;
use crate::bench::cases::evocodebench::ExecCase;
use crate::bench::layout::evocodebench::{Setting, body_of, exec_completer, lay_out_exec};
use crate::bench::runfile::record::{ExecSample, RUN_FORMAT, RunError, RunRecord};
use crate::bench::scoring::execution::{ExecContext, run_samples};
use crate::bench::scoring::recall::best_of_first;
use crossfile_engine::backend::Sampling;
use crossfile_engine::complete::{Completer, Completion, Exact, Mode};
use crossfile_engine::index::{Index, Snapshot};
use crossfile_engine::lang::Language;
use crossfile_engine::metrics::pass_at_k;
use crossfile_engine::retrieve::{Origins, Query, Retriever, RetrieverSpec};

/// EvoCodeBench cases and how their bodies are generated and tested.
pub struct Executed<'a> {
    pub cases: &'a [ExecCase],
    pub setting: Setting,
    /// Bodies generated per case and retriever.
    pub samples: u32,
    /// `None`: greedy (then more than one sample only repeats the first).
    pub sampling: Option<Sampling>,
    /// The k of Pass@k and Recall@k kept per case (those up to the samples that ran).
    pub ks: Vec<u64>,
    /// Where and how the tests run.
    pub tests: &'a ExecContext<'a>,
}

/// `case` with each retriever of `todo`: laid out once in its repository's `index` as the setting
/// shows it, then each pair's samples generated and tested and its record written (an error
/// record for every pair when the case cannot be laid out).
pub(super) fn replay(
    case: &ExecCase,
    executed: &Executed<'_>,
    todo: &[&Named],
    index: &Result<Index, String>,
    plan: &RunPlan<'_>,
    completer: &Completer,
    pool: &mut Pool<'_, '_>,
) -> Result<(), BenchError> {
    let max_file_bytes = plan.index.workspace.max_file_bytes;
    let laid = index.as_ref().map_err(Clone::clone).and_then(|index| {
        lay_out_exec(case, &plan.repos, executed.setting, max_file_bytes, index)
            .map_err(|e| e.to_string())
    });
    let (snapshot, query) = match &laid {
        Ok(laid) => laid,
        Err(message) => {
            for (name, _) in todo {
                let error = RunError {
                    kind: "case".into(),
                    message: message.clone(),
                };
                pool.write(&base(case, name, None, Some(error)))?;
            }
            return Ok(());
        }
    };
    let completer = exec_completer(completer, plan.max_new_tokens);
    // The case's file and the files its imports name, once for all its retrievers.
    let origins = Origins::new(snapshot, query);
    for (name, retriever) in todo {
        let pair = Pair {
            case,
            retriever_name: name,
            retriever,
            snapshot,
            query,
            origins: &origins,
        };
        let record = pair.run(plan, executed, &completer, pool.runtime);
        pool.write(&record)?;
    }
    Ok(())
}

/// One case with one retriever.
struct Pair<'a> {
    case: &'a ExecCase,
    retriever_name: &'a str,
    retriever: &'a Arc<dyn Retriever>,
    snapshot: &'a Arc<Snapshot>,
    query: &'a Query,
    origins: &'a Origins,
}

impl Pair<'_> {
    fn run(
        &self,
        plan: &RunPlan<'_>,
        executed: &Executed<'_>,
        completer: &Completer,
        runtime: &tokio::runtime::Runtime,
    ) -> RunRecord {
        let tests = executed.tests;
        let started = Instant::now();
        let mut completions: Vec<Completion> = Vec::new();
        for sample in 0..executed.samples.max(1) {
            let sampling = executed
                .sampling
                .map(|s| s.for_sample(&self.case.namespace, sample));
            let exact = Mode::Exact(Exact {
                sampling,
                likelihood_of: None,
            });
            let outcome = runtime.block_on(completer.clone().with_mode(exact).complete(
                self.snapshot.clone(),
                self.query.clone(),
                self.retriever.clone(),
                plan.top_k,
                &CancellationToken::new(),
            ));
            match outcome {
                Ok(completion) => completions.push(completion),
                Err(e) => {
                    return base(
                        self.case,
                        self.retriever_name,
                        self.query.reference.clone(),
                        complete_error(&e),
                    );
                }
            }
        }
        let owned: Vec<String> = completions
            .iter()
            .map(|c| body_of(&self.query.left, &c.raw_suggestion))
            .collect();
        let bodies: Vec<&str> = owned.iter().map(String::as_str).collect();
        let tested = run_samples(tests, &[(self.case, bodies)], &|_, _| {});
        let total_ms = started.elapsed().as_secs_f64() * 1e3;
        let Some(outcomes) = tested.into_iter().next() else {
            let error = RunError {
                kind: "internal".into(),
                message: "the samples were not tested".into(),
            };
            return base(self.case, self.retriever_name, None, Some(error));
        };
        let recalls: Vec<Option<f64>> = match &outcomes.recall {
            Some(recalls) => recalls.iter().map(|r| r.all).collect(),
            None => vec![None; completions.len()],
        };
        let mut metrics = BTreeMap::new();
        for &k in &executed.ks {
            if let Ok(value) = pass_at_k(outcomes.n, outcomes.c, k) {
                metrics.insert(format!("pass@{k}"), value);
            }
            if let Some(value) = usize::try_from(k)
                .ok()
                .and_then(|k| best_of_first(&recalls, k))
            {
                metrics.insert(format!("recall@{k}"), value);
            }
        }
        let error = (outcomes.n == 0).then(|| RunError {
            kind: "harness".into(),
            message: outcomes
                .details
                .iter()
                .find_map(|o| o.message.clone())
                .unwrap_or_else(|| "no sample could be tested".into()),
        });
        let samples: Vec<ExecSample> = completions
            .iter()
            .zip(&owned)
            .zip(outcomes.details)
            .zip(recalls)
            .map(|(((c, body), outcome), recall)| ExecSample {
                raw_suggestion: c.raw_suggestion.clone(),
                suggestion: body.clone(),
                recall,
                outcome,
            })
            .collect();
        let first = completions.swap_remove(0);
        let base = base(
            self.case,
            self.retriever_name,
            self.query.reference.clone(),
            None,
        );
        let made = Made {
            completer,
            completion: first,
            total_ms,
            origins: self.origins,
            language: Language::Python,
        };
        let mut record = with_completion(base, made);
        record.suggestion.clone_from(&owned[0]);
        record.metrics = if error.is_some() {
            BTreeMap::new()
        } else {
            metrics
        };
        record.error = error;
        record.samples = samples;
        record
    }
}

/// A record of `case` with `retriever` and nothing generated: `error` says why (or, with
/// `None`, a base to fill in).
fn base(
    case: &ExecCase,
    retriever: &str,
    reference: Option<String>,
    error: Option<RunError>,
) -> RunRecord {
    RunRecord {
        version: RUN_FORMAT,
        case_id: case.namespace.clone(),
        retriever: retriever.to_string(),
        format: "evocodebench".into(),
        language: "python".into(),
        repository: case.repository.clone(),
        path: case.path.clone(),
        line: u32::try_from(case.body.0.saturating_sub(1)).unwrap_or(u32::MAX),
        col: 0,
        upper_bound: retriever
            .parse::<RetrieverSpec>()
            .is_ok_and(|s| s.is_upper_bound()),
        backend: String::new(),
        template: String::new(),
        chunks: Vec::new(),
        prompt_tokens: Default::default(),
        prompt_hash: String::new(),
        prompt: String::new(),
        raw_suggestion: String::new(),
        suggestion: String::new(),
        reference: reference.unwrap_or_default(),
        metrics: BTreeMap::new(),
        timings_ms: Default::default(),
        cached: false,
        error,
        samples: Vec::new(),
        settings: None,
        category: None,
        overlap: None,
    }
}
