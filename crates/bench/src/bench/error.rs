//! Errors of benchmark loading, replay and run files.

use std::path::PathBuf;

/// A benchmark problem that stops the command (a bad record or case is reported, not this).
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("cannot read {}: {error}", .path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot write {}: {error}", .path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A case that cannot be replayed (recorded as that case's error, never fatal to a run).
    #[error("case {id}: {message}")]
    Case { id: String, message: String },
    /// A run file that is not one (a torn last line is not this: it is cut off).
    #[error("{}:{line}: {message}", .path.display())]
    RunFile {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// An output path that is one of the command's inputs.
    #[error(
        "{} is also an input ({}): refusing to overwrite it, choose another output",
        .output.display(),
        .input.display()
    )]
    OutputIsInput { output: PathBuf, input: PathBuf },
    /// The channel of finished pairs closed early (cannot happen while the runner holds a
    /// sender; a panicking task reports its pair as an error).
    #[error("a completion task ended without reporting its result")]
    TaskLost,
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
    #[error(transparent)]
    Index(#[from] crossfile_engine::index::IndexError),
    #[error(transparent)]
    Retrieve(#[from] crossfile_engine::retrieve::RetrieveError),
}
