//! The replay session the server holds: the cases file being replayed and the case open now, laid
//! out as `bench run` lays it out. The commands that change it are `replay.rs`'s.
//!
//! A case is of one of two kinds: one scored by comparing text (CrossCodeEval, RepoEval: a
//! [`Case`]) or one scored by running its repository's tests (EvoCodeBench: an [`ExecCase`],
//! with the setting its prompt is laid out for and the environments its tests run in).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tower_lsp::lsp_types::{Position, Url};

use crossfile_bench::bench::cases::evocodebench::ExecCase;
use crossfile_bench::bench::layout::evocodebench::Setting;
use crossfile_bench::bench::scoring::envs::EnvStore;
use crossfile_bench::bench::{Case, InPlaceLock};
use crossfile_engine::index::Snapshot;
use crossfile_engine::retrieve::Query;

/// The replay session: the cases file being replayed and the case open now.
#[derive(Default)]
pub struct Replay {
    /// Held through a whole command, so commands replay one at a time.
    pub session: tokio::sync::Mutex<Option<Session>>,
    current: Mutex<Option<Arc<ReplayedCase>>>,
    /// While a case is replayed in place: this process's lock on the journal and repository.
    in_place: Mutex<Option<InPlaceLock>>,
}

/// A loaded cases file.
pub struct Session {
    pub file: PathBuf,
    pub repos: PathBuf,
    /// The format the cases were asked for as (`None`: told from the file).
    pub format: Option<String>,
    pub cases: Cases,
    /// The case open now.
    pub at: usize,
    pub in_place: bool,
}

/// A cases file's usable cases.
pub enum Cases {
    /// Scored by comparing text.
    Text(Vec<Case>),
    /// Scored by running tests.
    Exec(ExecCases),
}

/// EvoCodeBench cases and how they are replayed.
pub struct ExecCases {
    pub cases: Vec<ExecCase>,
    /// What the model is shown at a case's cursor.
    pub setting: Setting,
    /// Where the repositories' environments are.
    pub envs: EnvStore,
    /// Tokens generated for a body (the benchmark's 500 when `None`).
    pub max_new_tokens: Option<u32>,
}

impl Cases {
    pub fn len(&self) -> usize {
        match self {
            Cases::Text(cases) => cases.len(),
            Cases::Exec(exec) => exec.cases.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The index of case `id`.
    pub fn position(&self, id: &str) -> Option<usize> {
        match self {
            Cases::Text(cases) => cases.iter().position(|c| c.id == id),
            Cases::Exec(exec) => exec.cases.iter().position(|c| c.namespace == id),
        }
    }

    /// Case `at`, with what scoring it needs.
    pub fn get(&self, at: usize, repos: &std::path::Path) -> Option<Replayable> {
        match self {
            Cases::Text(cases) => cases
                .get(at)
                .cloned()
                .map(|c| Replayable::Text(Box::new(c))),
            Cases::Exec(exec) => exec.cases.get(at).map(|case| {
                Replayable::Exec(Arc::new(ExecTarget {
                    case: case.clone(),
                    setting: exec.setting,
                    repos: repos.to_path_buf(),
                    envs: exec.envs.clone(),
                    max_new_tokens: exec.max_new_tokens,
                }))
            }),
        }
    }
}

/// A case of the session, with what scoring it needs.
#[derive(Clone)]
pub enum Replayable {
    Text(Box<Case>),
    Exec(Arc<ExecTarget>),
}

/// An EvoCodeBench case and where its tests run.
pub struct ExecTarget {
    pub case: ExecCase,
    pub setting: Setting,
    /// The folder holding its repository (the tests run in a copy of it).
    pub repos: PathBuf,
    pub envs: EnvStore,
    pub max_new_tokens: Option<u32>,
}

impl Replayable {
    pub fn id(&self) -> &str {
        match self {
            Replayable::Text(case) => &case.id,
            Replayable::Exec(exec) => &exec.case.namespace,
        }
    }
}

/// The case open now, laid out.
pub struct ReplayedCase {
    pub case: Replayable,
    pub uri: Url,
    /// The case's cursor, in the protocol's units.
    pub position: Position,
    /// The file as the case shows it (the reference removed), line breaks as `\n`.
    pub text: String,
    /// `text` before the cursor and after it: what the buffer holds between them is the user's.
    pub left: String,
    pub right: String,
    /// What a completion at the cursor works from, as `bench run` lays it out: the index with
    /// the case's file as the case shows it, and the query.
    pub snapshot: Arc<Snapshot>,
    pub query: Query,
}

impl ReplayedCase {
    pub fn id(&self) -> &str {
        self.case.id()
    }
}

impl Replay {
    /// The case open now, if `position` of `uri` is its cursor.
    pub fn case_at(&self, uri: &Url, position: Position) -> Option<Arc<ReplayedCase>> {
        lock_ignoring_poison(&self.current)
            .as_ref()
            .filter(|c| &c.uri == uri && c.position == position)
            .cloned()
    }

    /// The case open now.
    pub fn current(&self) -> Option<Arc<ReplayedCase>> {
        lock_ignoring_poison(&self.current).clone()
    }

    /// The case `id` of the cases file being replayed.
    pub async fn loaded_case(&self, id: &str) -> Option<Replayable> {
        let session = self.session.lock().await;
        let s = session.as_ref()?;
        s.cases.get(s.cases.position(id)?, &s.repos)
    }

    pub fn set_current(&self, case: Arc<ReplayedCase>) {
        *lock_ignoring_poison(&self.current) = Some(case);
    }

    /// The in-place lock held, taken from the session (it goes back with [`Replay::hold`]).
    pub fn take_in_place(&self) -> Option<InPlaceLock> {
        lock_ignoring_poison(&self.in_place).take()
    }

    pub fn hold(&self, lock: Option<InPlaceLock>) {
        *lock_ignoring_poison(&self.in_place) = lock;
    }
}

/// The mutex's value, also after a panic elsewhere (the value is still consistent: it is only
/// ever replaced whole).
fn lock_ignoring_poison<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
