//! The engine's umbrella error: one variant per boundary, each with its own typed error.

use crate::{
    config::ConfigError, index::IndexError, metrics::MetricsError, retrieve::RetrieveError,
    workspace::WorkspaceError,
};

/// Any error an engine entry point can return.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Retrieve(#[from] RetrieveError),
    #[error(transparent)]
    Metrics(#[from] MetricsError),
}

/// `Result` with the engine's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
