//! The runner of `bench run`: every (case, retriever) pair not yet in the run file is laid out
//! in its repository, completed, scored and appended to the run file as soon as it finishes —
//! for both kinds of case ([`RunCases`]): line and function cases scored against their reference
//! ([`text`]), and EvoCodeBench cases whose generated bodies are scored by running their
//! repository's tests ([`executed`]).
//!
//! Cases are taken repository by repository. Each repository has its own index in
//! `<cache_dir>/bench/` (never the user's index of the same folder, since cases rewrite files in
//! it). For each case the case's file is indexed as the case shows it — the left context, plus
//! the right context only when the prompt uses it — so no chunk can hold the reference (the
//! leakage rule, DESIGN.md section 4); the snapshot taken then is what every retriever of that
//! case ranks, and the file is read back from disk before the next case. Line and function
//! completions run concurrently, at most `jobs` at a time; an executed case's samples are
//! generated one after the other and tested `tests.jobs` at a time. A failure of one pair (a
//! dead backend, a case that does not fit its repository, tests that could not run) is recorded
//! as that pair's error, never as a miss, and the run goes on.

mod executed;
mod text;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;

pub use executed::Executed;

use crate::bench::BenchError;
use crate::bench::cases::Case;
use crate::bench::cases::evocodebench::ExecCase;
use crate::bench::evaluate::judge_context;
use crate::bench::runfile::RunFile;
use crate::bench::runfile::record::{PromptTokenCounts, RunError, RunRecord, StageTimings};
use crate::bench::runfile::settings::RunSettings;
use crossfile_engine::complete::{CompleteError, Completer, Completion};
use crossfile_engine::index::{Index, IndexSettings, Progress};
use crossfile_engine::lang::Language;
use crossfile_engine::retrieve::{self, Origins, RetrieveSettings, Retriever, RetrieverSpec};

/// What to run.
pub struct RunPlan<'a> {
    pub cases: RunCases<'a>,
    pub retrievers: Vec<RetrieverSpec>,
    /// The folder holding each case's repository as `<repos>/<repository>`.
    pub repos: PathBuf,
    /// Line and function completions in flight at once.
    pub jobs: usize,
    pub top_k: usize,
    /// Tokens to generate; `None` keeps the completer's (line cases),
    /// [`crate::bench::layout::FUNCTION_MAX_NEW_TOKENS`] (function bodies) or
    /// [`crate::bench::layout::evocodebench::EXEC_MAX_NEW_TOKENS`] (EvoCodeBench bodies).
    pub max_new_tokens: Option<u32>,
    /// Indexes of the cases' repositories (their `cache_dir` gets a `bench/` below it).
    pub index: IndexSettings,
    pub retrieve: RetrieveSettings,
    /// What every record says the run was made with.
    pub settings: Option<RunSettings>,
}

/// The cases of a run, by how they are scored.
pub enum RunCases<'a> {
    /// Line and function cases (CrossCodeEval, RepoEval), scored against their reference.
    Text(&'a [Case]),
    /// EvoCodeBench cases, scored by their repository's tests.
    Executed(Executed<'a>),
}

/// One case of a run, of either kind.
#[derive(Clone, Copy)]
enum PlanCase<'a> {
    Text(&'a Case),
    Executed(&'a ExecCase, &'a Executed<'a>),
}

impl<'a> RunCases<'a> {
    fn each(&'a self) -> Vec<PlanCase<'a>> {
        match self {
            RunCases::Text(cases) => cases.iter().map(PlanCase::Text).collect(),
            RunCases::Executed(executed) => executed
                .cases
                .iter()
                .map(|case| PlanCase::Executed(case, executed))
                .collect(),
        }
    }
}

impl<'a> PlanCase<'a> {
    /// The case's id in the run file.
    fn id(&self) -> &'a str {
        match self {
            PlanCase::Text(case) => &case.id,
            PlanCase::Executed(case, _) => &case.namespace,
        }
    }

    fn repository(&self) -> &'a str {
        match self {
            PlanCase::Text(case) => &case.repository,
            PlanCase::Executed(case, _) => &case.repository,
        }
    }
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
    let mut by_repository: BTreeMap<&str, Vec<(PlanCase<'_>, Vec<&Named>)>> = BTreeMap::new();
    let mut pending = 0;
    for case in plan.cases.each() {
        let todo: Vec<&Named> = retrievers
            .iter()
            .filter(|(name, _)| !done.contains(&(case.id().to_string(), name.clone())))
            .collect();
        if !todo.is_empty() {
            pending += todo.len();
            by_repository
                .entry(case.repository())
                .or_default()
                .push((case, todo));
        }
    }
    on_event(RunEvent::Start {
        pending,
        done: done.len(),
    });
    let mut index_settings = plan.index.clone();
    index_settings.cache_dir = plan.index.cache_dir.join("bench");
    let (sender, results) = mpsc::channel::<RunRecord>();
    let mut pool = Pool {
        runtime,
        settings: &plan.settings,
        jobs: plan.jobs.max(1),
        in_flight: 0,
        sender,
        results,
        file,
        on_event,
    };
    for (repository, cases) in by_repository {
        // A repository that cannot be indexed fails its own cases, not the run.
        let index = repository_index(&plan.repos.join(repository), &index_settings);
        for (case, todo) in cases {
            match case {
                PlanCase::Text(case) => {
                    text::replay(case, &todo, &index, plan, completer, &mut pool)?;
                }
                PlanCase::Executed(case, executed) => {
                    executed::replay(case, executed, &todo, &index, plan, completer, &mut pool)?;
                }
            }
        }
    }
    while pool.in_flight > 0 {
        pool.receive()?;
    }
    Ok(())
}

/// A retriever and its spec string (a record's `retriever`).
type Named = (String, Arc<dyn Retriever>);

/// Each spec's retriever, named by its spec string.
fn named_retrievers(
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
fn repository_index(root: &Path, settings: &IndexSettings) -> Result<Index, String> {
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

/// Completions in flight, the runtime they run on, and the writer of finished ones.
struct Pool<'f, 'e> {
    runtime: &'f tokio::runtime::Runtime,
    settings: &'f Option<RunSettings>,
    jobs: usize,
    in_flight: usize,
    sender: mpsc::Sender<RunRecord>,
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

    /// Counts one more completion in flight and gives the sender it reports on.
    fn start(&mut self) -> mpsc::Sender<RunRecord> {
        self.in_flight += 1;
        self.sender.clone()
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

/// What a pair's completion is recorded with, besides the record it fills in.
struct Made<'a> {
    completer: &'a Completer,
    completion: Completion,
    /// The pair's wall time, in milliseconds.
    total_ms: f64,
    /// Where chunks come from relative to the case's file (one per case, shared by its pairs).
    origins: &'a Origins,
    /// The case's language, whose identifiers the overlap counts.
    language: Language,
}

/// `base` with what the completion was: its chunks (each with its origin), their identifier
/// overlap with `base`'s reference, prompt, suggestion, backend, template and timings.
fn with_completion(base: RunRecord, made: Made<'_>) -> RunRecord {
    let Made {
        completer,
        completion: c,
        total_ms,
        origins,
        language,
    } = made;
    let t = &c.prompt.tokens;
    let context = judge_context(
        &c,
        &base.reference,
        language,
        origins,
        completer.tokenizer().as_ref(),
    );
    RunRecord {
        chunks: context.chunks,
        overlap: context.overlap,
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
        template: completer.template().to_string(),
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

fn complete_error(e: &CompleteError) -> Option<RunError> {
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
