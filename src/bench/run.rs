//! The replay runner of `bench run`: every (case, retriever) pair not yet in the run file is
//! laid out in its repository, retrieved, prompted, generated, post-processed and scored, and
//! appended to the run file as soon as it finishes.
//!
//! Cases are taken repository by repository. Each repository has its own index in
//! `<cache_dir>/bench/` (never the user's index of the same folder, since cases rewrite files in
//! it). For each case the case's file is indexed as the case shows it — the left context, plus
//! the right context only when the prompt template uses it — so no chunk can hold the
//! reference (the leakage rule, DESIGN.md section 4); the snapshot taken then is what every
//! retriever of that case ranks, and the file is read back from disk before the next case.
//! Completions run concurrently, at most `jobs` at a time; a failure of one (a dead backend, a
//! case that does not fit its repository) is recorded as that pair's error, never as a miss,
//! and the run goes on.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::BenchError;
use super::case::Case;
use super::record::{ChunkRef, PromptTokenCounts, RUN_FORMAT, RunError, RunRecord, StageTimings};
use super::replay::{LaidOut, completer_for, lay_out};
use super::run_settings::RunSettings;
use super::run_writer::RunFile;
use super::score::score;
use super::view::CaseView;
use crate::complete::{CompleteError, Completer, Completion};
use crate::index::IndexSettings;
use crate::index::{Index, Progress, Snapshot};
use crate::retrieve::RetrieveSettings;
use crate::retrieve::{self, Query, Retriever, RetrieverSpec};

/// What to run.
pub struct RunPlan<'a> {
    pub cases: &'a [Case],
    pub retrievers: Vec<RetrieverSpec>,
    /// The folder holding each case's repository as `<repos>/<repository>`.
    pub repos: PathBuf,
    /// Completions in flight at once.
    pub jobs: usize,
    pub top_k: usize,
    /// Tokens to generate; `None` keeps the completer's (line cases) or
    /// [`super::replay::FUNCTION_MAX_NEW_TOKENS`] (function bodies).
    pub max_new_tokens: Option<u32>,
    /// Indexes of the cases' repositories (their `cache_dir` gets a `bench/` below it).
    pub index: IndexSettings,
    pub retrieve: RetrieveSettings,
    /// What every record says the run was made with.
    pub settings: Option<RunSettings>,
}

/// Progress of a run, for a progress bar.
pub enum RunEvent<'a> {
    /// Pairs to run now, and pairs the run file already had.
    Start { pending: usize, done: usize },
    /// A pair finished and was written.
    Record(&'a RunRecord),
}

/// Replays every pair of `plan` not in `done`, appending each to `file`.
pub fn run(
    plan: &RunPlan<'_>,
    completer: &Completer,
    runtime: &tokio::runtime::Runtime,
    file: &mut RunFile,
    done: &HashSet<(String, String)>,
    on_event: &mut dyn FnMut(RunEvent<'_>),
) -> Result<(), BenchError> {
    let retrievers = named_retrievers(&plan.retrievers, &plan.retrieve)?;
    let pending: Vec<(usize, Vec<usize>)> = plan
        .cases
        .iter()
        .enumerate()
        .map(|(c, case)| {
            let todo = (0..retrievers.len())
                .filter(|&r| !done.contains(&(case.id.clone(), retrievers[r].0.clone())))
                .collect::<Vec<_>>();
            (c, todo)
        })
        .filter(|(_, todo)| !todo.is_empty())
        .collect();
    on_event(RunEvent::Start {
        pending: pending.iter().map(|(_, t)| t.len()).sum(),
        done: done.len(),
    });

    let mut by_repository: BTreeMap<&str, Vec<(usize, Vec<usize>)>> = BTreeMap::new();
    for (c, todo) in pending {
        by_repository
            .entry(&plan.cases[c].repository)
            .or_default()
            .push((c, todo));
    }
    let mut index_settings = plan.index.clone();
    index_settings.cache_dir = plan.index.cache_dir.join("bench");
    let (sender, results) = mpsc::channel::<RunRecord>();
    let mut pool = Pool {
        settings: &plan.settings,
        jobs: plan.jobs.max(1),
        in_flight: 0,
        results,
        file,
        on_event,
    };
    let uses_right = completer.template().is_fim();
    for (repository, cases) in by_repository {
        let root = plan.repos.join(repository);
        // A repository that cannot be indexed fails its own cases, not the run.
        let index = repository_index(&root, &index_settings);
        for (c, todo) in cases {
            let case = &plan.cases[c];
            let laid_out = index
                .as_ref()
                .map_err(|message| BenchError::Case {
                    id: case.id.clone(),
                    message: message.clone(),
                })
                .and_then(|index| {
                    let view =
                        CaseView::new(case, &plan.repos, plan.index.workspace.max_file_bytes)?;
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
                    for r in todo {
                        let record = failed(case, &retrievers[r].0, case_error(&e));
                        pool.write(&record)?;
                    }
                    continue;
                }
            };
            let completer = completer_for(completer, case, plan.max_new_tokens);
            for r in todo {
                pool.wait_for_room()?;
                let task = Task {
                    case: case.clone(),
                    retriever_name: retrievers[r].0.clone(),
                    retriever: retrievers[r].1.clone(),
                    completer: completer.clone(),
                    snapshot: snapshot.clone(),
                    query: query.clone(),
                    col,
                    top_k: plan.top_k,
                };
                let sender = sender.clone();
                pool.in_flight += 1;
                runtime.spawn(async move {
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
        }
    }
    while pool.in_flight > 0 {
        pool.receive()?;
    }
    Ok(())
}

/// A retriever and its spec string (a record's `retriever`).
pub(super) type Named = (String, Arc<dyn Retriever>);

/// Each spec's retriever, named by its spec string.
pub(super) fn named_retrievers(
    specs: &[RetrieverSpec],
    settings: &RetrieveSettings,
) -> Result<Vec<Named>, BenchError> {
    specs
        .iter()
        .map(|spec| retrieve::build(spec, settings).map(|r| (spec.to_string(), Arc::from(r))))
        .collect::<Result<_, _>>()
        .map_err(Into::into)
}

/// The bench index of the repository at `root` (`settings.cache_dir` the bench one), or why
/// there is none: its cases fail with that message, the run goes on.
pub(super) fn repository_index(root: &Path, settings: &IndexSettings) -> Result<Index, String> {
    if !root.is_dir() {
        return Err(format!(
            "the repository folder {} does not exist (is --repos right?)",
            root.display()
        ));
    }
    Index::open_or_build(root, settings, &Progress::none())
        .map(|(index, _)| index)
        .map_err(|e| e.to_string())
}

/// Completions in flight and the writer of finished ones.
struct Pool<'f, 'e> {
    settings: &'f Option<RunSettings>,
    jobs: usize,
    in_flight: usize,
    results: mpsc::Receiver<RunRecord>,
    file: &'f mut RunFile,
    on_event: &'e mut dyn FnMut(RunEvent<'_>),
}

impl Pool<'_, '_> {
    fn wait_for_room(&mut self) -> Result<(), BenchError> {
        while self.in_flight >= self.jobs {
            self.receive()?;
        }
        Ok(())
    }

    fn receive(&mut self) -> Result<(), BenchError> {
        let record = self.results.recv().map_err(|_| BenchError::TaskLost)?;
        self.in_flight -= 1;
        self.write(&record)
    }

    fn write(&mut self, record: &RunRecord) -> Result<(), BenchError> {
        let mut record = record.clone();
        record.settings.clone_from(self.settings);
        let record = &record;
        self.file.append(record)?;
        (self.on_event)(RunEvent::Record(record));
        Ok(())
    }
}

struct Task {
    case: Case,
    retriever_name: String,
    retriever: Arc<dyn Retriever>,
    completer: Completer,
    snapshot: Arc<Snapshot>,
    query: Query,
    /// The cursor's column, in characters.
    col: u32,
    top_k: usize,
}

impl Task {
    async fn run(self) -> RunRecord {
        let started = Instant::now();
        let outcome = self
            .completer
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
                    &self.completer,
                    completion,
                    total,
                )
            },
            Err(e) => failed(&self.case, &self.retriever_name, complete_error(&e)),
        }
    }
}

fn scored(
    case: &Case,
    retriever: &str,
    completer: &Completer,
    c: Completion,
    total_ms: f64,
) -> RunRecord {
    let (metrics, error) = match score(case, &c.raw_suggestion) {
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
        ..with_completion(failed(case, retriever, None), completer, c, total_ms)
    }
}

/// `base` with what completion `c` of `completer` was: its chunks, prompt, suggestion, backend,
/// template and timings.
pub(super) fn with_completion(
    base: RunRecord,
    completer: &Completer,
    c: Completion,
    total_ms: f64,
) -> RunRecord {
    let t = &c.prompt.tokens;
    RunRecord {
        chunks: c
            .hits
            .iter()
            .map(|h| ChunkRef {
                path: h.path.clone(),
                start_line: h.chunker.map(|_| h.lines.start + 1),
                end_line: h.chunker.map(|_| h.lines.end),
                score: h.score,
            })
            .collect(),
        prompt_tokens: PromptTokenCounts {
            crossfile: t.crossfile,
            left: t.left,
            right: t.right,
            total: t.total,
        },
        prompt_hash: blake3::hash(c.prompt.text.as_bytes()).to_hex().to_string(),
        prompt: c.prompt.text,
        cached: c.generation.cached,
        raw_suggestion: c.raw_suggestion,
        suggestion: c.suggestion,
        backend: completer.backend().name().to_string(),
        template: completer.template().name().to_string(),
        timings_ms: StageTimings {
            retrieve: c.timings.retrieve_ms,
            prompt: c.timings.prompt_ms,
            generate: c.timings.generate_ms,
            postprocess: c.timings.postprocess_ms,
            total: total_ms,
        },
        ..base
    }
}

/// A record without a completion: `error` says why (or, with `None`, a base to fill in).
fn failed(case: &Case, retriever: &str, error: Option<RunError>) -> RunRecord {
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

pub(super) fn complete_error(e: &CompleteError) -> Option<RunError> {
    let kind = match e {
        CompleteError::Retrieve(_) => "retrieve".to_string(),
        CompleteError::Backend(b) => format!("backend.{}", b.kind()),
        CompleteError::Task(_) => "internal".to_string(),
    };
    Some(RunError {
        kind,
        message: e.to_string(),
    })
}
