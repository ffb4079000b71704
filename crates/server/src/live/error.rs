//! Why a live folder could not give what a completion waits for.

use tokio::task::JoinError;

use crossfile_engine::index::IndexError;

#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// Building the folder's index failed; the message says why.
    #[error("{0}")]
    IndexFailed(String),
    /// The folder was removed while the caller waited for it.
    #[error("the folder is gone")]
    FolderGone,
    /// Work on the blocking pool panicked or was dropped.
    #[error("{what} failed: {source}")]
    Task {
        what: &'static str,
        source: JoinError,
    },
    #[error(transparent)]
    Index(#[from] IndexError),
}
