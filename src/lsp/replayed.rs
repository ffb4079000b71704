//! The replay session the server holds: the cases file being replayed and the case open now, laid
//! out ([`crate::bench::replay::LaidOut`]). The commands that change it are `replay.rs`'s.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tower_lsp::lsp_types::{Position, Url};

use crate::bench::replay::LaidOut;
use crate::bench::{Case, InPlaceLock};

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
    pub cases: Vec<Case>,
    /// The case open now.
    pub at: usize,
    pub in_place: bool,
}

/// The case open now, laid out.
pub struct ReplayedCase {
    pub case: Case,
    pub uri: Url,
    /// The case's cursor, in the protocol's units.
    pub position: Position,
    /// The file as the case shows it (the reference removed), line breaks as `\n`.
    pub text: String,
    pub laid_out: LaidOut,
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
    pub async fn loaded_case(&self, id: &str) -> Option<Case> {
        let session = self.session.lock().await;
        session
            .as_ref()
            .and_then(|s| s.cases.iter().find(|c| c.id == id))
            .cloned()
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
