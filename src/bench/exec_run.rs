//! The runner of `bench run --format evocodebench`: every (case, retriever) pair not yet in the
//! run file is laid out for the setting ([`super::exec_view`]) in its repository's bench index,
//! its samples are generated (greedy, or sampled with a seed of their own: [`Sampling::for_sample`]),
//! each output cut to the body as the benchmark cuts it ([`body_of`]), and each body is tested in a fresh copy of the repository through the harness
//! ([`super::exec_score::run_samples`]); the pair is appended to the run file with every
//! sample's body and outcome, and the case's Pass@k and Recall@k as its metrics (so reports,
//! comparisons and merges read it as any other run).
//!
//! A pair is written whole once its samples are tested: a killed run loses the pair in flight
//! and generates it again on resume, drawing the same samples (their seeds depend on the case
//! and the sample's number only), so no sample is lost and none is recorded twice. A pair whose
//! generation fails, or whose every sample the harness could not run, is an error, never a miss.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::BenchError;
use super::evocodebench::ExecCase;
use super::exec_recall::best_of_first;
use super::exec_score::{ExecContext, run_samples};
use super::exec_view::{Setting, body_of, exec_view};
use super::record::{ExecSample, RUN_FORMAT, RunError, RunRecord};
use super::run::{RunEvent, complete_error, named_retrievers, repository_index, with_completion};
use super::run_settings::RunSettings;
use super::run_writer::RunFile;
use crate::backend::Sampling;
use crate::complete::{Completer, Completion};
use crate::index::{Index, IndexSettings, Snapshot};
use crate::metrics::pass_at_k;
use crate::postprocess::Unit;
use crate::retrieve::{Query, RetrieveSettings, Retriever, RetrieverSpec};

/// Tokens generated for a body when no limit is given: the benchmark's own (`LM_inference.py`).
pub const EXEC_MAX_NEW_TOKENS: u32 = 500;

/// What to run.
pub struct ExecPlan<'a> {
    pub cases: &'a [ExecCase],
    pub setting: Setting,
    pub retrievers: Vec<RetrieverSpec>,
    pub top_k: usize,
    /// Tokens to generate per body ([`EXEC_MAX_NEW_TOKENS`] when `None`).
    pub max_new_tokens: Option<u32>,
    /// Bodies generated per case and retriever.
    pub samples: u32,
    /// `None`: greedy (then more than one sample only repeats the first).
    pub sampling: Option<Sampling>,
    /// The k of Pass@k and Recall@k kept per case (those up to the samples that ran).
    pub ks: Vec<u64>,
    pub index: IndexSettings,
    pub retrieve: RetrieveSettings,
    /// What every record says the run was made with.
    pub settings: Option<RunSettings>,
}

/// Generates and tests every pair of `plan` not in `done`, appending each to `file`; the tests
/// run where `tests` says, `tests.jobs` samples at a time.
pub fn run_exec(
    plan: &ExecPlan<'_>,
    completer: &Completer,
    runtime: &tokio::runtime::Runtime,
    tests: &ExecContext,
    file: &mut RunFile,
    done: &HashSet<(String, String)>,
    on_event: &mut dyn FnMut(RunEvent<'_>),
) -> Result<(), BenchError> {
    let retrievers = named_retrievers(&plan.retrievers, &plan.retrieve)?;
    let mut pending: BTreeMap<&str, Vec<(&ExecCase, Vec<usize>)>> = BTreeMap::new();
    let mut count = 0;
    for case in plan.cases {
        let todo: Vec<usize> = (0..retrievers.len())
            .filter(|&r| !done.contains(&(case.namespace.clone(), retrievers[r].0.clone())))
            .collect();
        if !todo.is_empty() {
            count += todo.len();
            pending
                .entry(&case.repository)
                .or_default()
                .push((case, todo));
        }
    }
    on_event(RunEvent::Start {
        pending: count,
        done: done.len(),
    });
    let mut index_settings = plan.index.clone();
    index_settings.cache_dir = plan.index.cache_dir.join("bench");
    let completer = exec_completer(completer, plan.max_new_tokens);
    for (repository, cases) in pending {
        let root = tests.repos.join(repository);
        let index = repository_index(&root, &index_settings);
        for (case, todo) in cases {
            let laid_out = index.as_ref().map_err(Clone::clone).and_then(|index| {
                let max_file_bytes = plan.index.workspace.max_file_bytes;
                lay_out_exec(case, tests.repos, plan.setting, max_file_bytes, index)
                    .map_err(|e| e.to_string())
            });
            let (snapshot, query) = match laid_out {
                Ok(laid_out) => laid_out,
                Err(message) => {
                    for r in todo {
                        let error = RunError {
                            kind: "case".into(),
                            message: message.clone(),
                        };
                        let record = base(case, &retrievers[r].0, None, Some(error));
                        append(file, on_event, &plan.settings, record)?;
                    }
                    continue;
                }
            };
            for r in todo {
                let pair = Pair {
                    case,
                    retriever_name: &retrievers[r].0,
                    retriever: &retrievers[r].1,
                    snapshot: &snapshot,
                    query: &query,
                };
                let record = pair.run(plan, &completer, runtime, tests);
                append(file, on_event, &plan.settings, record)?;
            }
        }
    }
    Ok(())
}

fn append(
    file: &mut RunFile,
    on_event: &mut dyn FnMut(RunEvent<'_>),
    settings: &Option<RunSettings>,
    mut record: RunRecord,
) -> Result<(), BenchError> {
    record.settings.clone_from(settings);
    file.append(&record)?;
    on_event(RunEvent::Record(&record));
    Ok(())
}

/// The completer for a body: the model's raw output (cut to the body as the benchmark cuts it,
/// [`body_of`]), exact (no reused KV cache, no time budget, the benchmark's layout), at most
/// `max_new_tokens` tokens ([`EXEC_MAX_NEW_TOKENS`] when `None`).
pub fn exec_completer(base: &Completer, max_new_tokens: Option<u32>) -> Completer {
    base.clone()
        .with_unit(Unit::Raw)
        .with_kv_reuse(false)
        .with_steady_prompts(false)
        .with_next_line(false)
        .with_generate_budget(None)
        .with_max_new_tokens(max_new_tokens.unwrap_or(EXEC_MAX_NEW_TOKENS))
}

/// The case's file goes into `index` as `setting` shows it, the snapshot is taken, and the
/// file is read back from disk (also on an error): what a completion of the case works from.
pub fn lay_out_exec(
    case: &ExecCase,
    repos: &Path,
    setting: Setting,
    max_file_bytes: u64,
    index: &Index,
) -> Result<(Arc<Snapshot>, Query), BenchError> {
    let view = exec_view(case, repos, setting, max_file_bytes)?;
    let laid = index.update_text(&view.path, &view.indexed);
    let snapshot = index.snapshot();
    index.update_files(&[&view.path])?;
    laid?;
    Ok((snapshot, view.query))
}

/// One case with one retriever.
struct Pair<'a> {
    case: &'a ExecCase,
    retriever_name: &'a str,
    retriever: &'a Arc<dyn Retriever>,
    snapshot: &'a Arc<Snapshot>,
    query: &'a Query,
}

impl Pair<'_> {
    fn run(
        &self,
        plan: &ExecPlan<'_>,
        completer: &Completer,
        runtime: &tokio::runtime::Runtime,
        tests: &ExecContext,
    ) -> RunRecord {
        let started = Instant::now();
        let mut completions: Vec<Completion> = Vec::new();
        for sample in 0..plan.samples.max(1) {
            let sampling = plan
                .sampling
                .map(|s| s.for_sample(&self.case.namespace, sample));
            let outcome = runtime.block_on(completer.clone().with_sampling(sampling).complete(
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
        for &k in &plan.ks {
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
        let mut record = with_completion(base, completer, first, total_ms);
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
    }
}
