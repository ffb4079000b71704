//! Line and function cases in a run: the case's file laid out in its repository's bench index as
//! the case shows it, then one completion per retriever, run concurrently in the runner's pool,
//! each scored against the reference with the benchmark's own metrics.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::{Made, Named, Pool, RunPlan, complete_error, with_completion};
use crate::bench::BenchError;
use crate::bench::cases::Case;
use crate::bench::evaluate::metrics_of;
use crate::bench::layout::case_view::CaseView;
use crate::bench::layout::{LaidOut, completer_for, lay_out};
use crate::bench::runfile::record::{
    PromptTokenCounts, RUN_FORMAT, RunError, RunRecord, StageTimings,
};
use crossfile_engine::choice::Choice;
use crossfile_engine::complete::{Completer, Exact, Mode};
use crossfile_engine::index::{Index, Snapshot};
use crossfile_engine::retrieve::{Origins, Query, Retriever, RetrieverSpec};

/// Lays `case` out in `index` (or records why it cannot be, for every retriever in `todo`) and
/// starts its completions in `pool`.
pub(super) fn replay(
    case: &Case,
    todo: &[&Named],
    index: &Result<Index, String>,
    plan: &RunPlan<'_>,
    completer: &Completer,
    pool: &mut Pool<'_, '_>,
) -> Result<(), BenchError> {
    let uses_right = completer.template().is_fim();
    let laid_out = index
        .as_ref()
        .map_err(|message| BenchError::Case {
            id: case.id.clone(),
            message: message.clone(),
        })
        .and_then(|index| {
            let view = CaseView::new(case, &plan.repos, plan.index.workspace.max_file_bytes)?;
            lay_out(case, view, index, uses_right)
        });
    let LaidOut {
        query,
        snapshot,
        col,
        ..
    } = match laid_out {
        Ok(laid_out) => laid_out,
        Err(e) => {
            for (name, _) in todo {
                pool.write(&failed(case, name, case_error(&e)))?;
            }
            return Ok(());
        }
    };
    let completer = completer_for(completer, case, plan.max_new_tokens);
    // The case's file and the files its imports name, once for all its retrievers.
    let origins = Arc::new(Origins::new(&snapshot, &query));
    for (name, retriever) in todo {
        pool.wait_for_room()?;
        let task = Task {
            case: case.clone(),
            retriever_name: name.clone(),
            retriever: retriever.clone(),
            completer: completer.clone(),
            snapshot: snapshot.clone(),
            query: query.clone(),
            origins: origins.clone(),
            col,
            top_k: plan.top_k,
        };
        let sender = pool.start();
        pool.runtime.spawn(async move {
            let (case, name) = (task.case.clone(), task.retriever_name.clone());
            // A panic in the pipeline becomes this pair's error, not a lost pair.
            let record = tokio::spawn(task.run()).await.unwrap_or_else(|e| {
                let error = RunError {
                    kind: "internal".into(),
                    message: format!("the completion task failed: {e}"),
                };
                failed(&case, &name, Some(error))
            });
            // The receiver lives until every task has reported.
            let _ = sender.send(record);
        });
    }
    Ok(())
}

struct Task {
    case: Case,
    retriever_name: String,
    retriever: Arc<dyn Retriever>,
    completer: Completer,
    snapshot: Arc<Snapshot>,
    query: Query,
    origins: Arc<Origins>,
    /// The cursor's column, in characters.
    col: u32,
    top_k: usize,
}

impl Task {
    async fn run(self) -> RunRecord {
        let started = Instant::now();
        let outcome = self
            .completer
            .clone()
            .with_mode(Mode::Exact(Exact {
                sampling: None,
                likelihood_of: Some(self.case.reference.clone()),
            }))
            .complete(
                self.snapshot,
                self.query,
                self.retriever,
                self.top_k,
                &CancellationToken::new(),
            )
            .await;
        let total = started.elapsed().as_secs_f64() * 1e3;
        match outcome {
            Ok(completion) => RunRecord {
                col: self.col,
                ..scored(
                    &self.case,
                    &self.retriever_name,
                    Made {
                        completer: &self.completer,
                        completion,
                        total_ms: total,
                        origins: &self.origins,
                        language: self.case.language,
                    },
                )
            },
            Err(e) => failed(&self.case, &self.retriever_name, complete_error(&e)),
        }
    }
}

fn scored(case: &Case, retriever: &str, made: Made<'_>) -> RunRecord {
    let (metrics, error) = match metrics_of(case, &made.completion) {
        Ok(metrics) => (metrics, None),
        Err(e) => (
            BTreeMap::new(),
            Some(RunError {
                kind: "score".into(),
                message: e.to_string(),
            }),
        ),
    };
    RunRecord {
        metrics,
        error,
        ..with_completion(failed(case, retriever, None), made)
    }
}

/// A record without a completion: `error` says why (or, with `None`, a base to fill in).
pub(super) fn failed(case: &Case, retriever: &str, error: Option<RunError>) -> RunRecord {
    let upper_bound = retriever
        .parse::<RetrieverSpec>()
        .is_ok_and(|s| s.is_upper_bound());
    RunRecord {
        version: RUN_FORMAT,
        case_id: case.id.clone(),
        retriever: retriever.to_string(),
        format: case.format.name().to_string(),
        language: case.language.name().to_string(),
        repository: case.repository.clone(),
        path: case.path.clone(),
        line: case.line,
        col: 0,
        upper_bound,
        backend: String::new(),
        template: String::new(),
        chunks: Vec::new(),
        prompt_tokens: PromptTokenCounts::default(),
        prompt_hash: String::new(),
        prompt: String::new(),
        raw_suggestion: String::new(),
        suggestion: String::new(),
        reference: case.reference.clone(),
        metrics: BTreeMap::new(),
        timings_ms: StageTimings::default(),
        cached: false,
        error,
        samples: Vec::new(),
        settings: None,
        category: case.category.map(|c| c.name().to_string()),
        overlap: None,
    }
}

fn case_error(e: &BenchError) -> Option<RunError> {
    let kind = match e {
        BenchError::Index(_) => "index",
        BenchError::Retrieve(_) => "retrieve",
        _ => "case",
    };
    Some(RunError {
        kind: kind.into(),
        message: e.to_string(),
    })
}
