//! Performance measurement, the harnesses behind `bench perf`, `bench model`, `bench lsp`,
//! `bench typing` and `bench harness`:
//! each takes its parameters, measures, and returns a report value that the command line prints
//! (as text or, serialized, as `--json`). Also what they measure with: deterministic cursors,
//! the upstream llama.cpp server as a measured peer, and a language client over stdio.

mod cursors;
mod exec;
mod generation;
mod llama_server;
pub mod lsp_client;
mod lsp_round_trips;
mod retrieval;
mod serve_child;
pub mod typing;

pub use cursors::sample_cursors;
pub use exec::{ExecParams, ExecReport, ExecTiming, measure_exec};
pub use generation::{GenerationParams, GenerationReport, measure_generation};
pub use llama_server::{LlamaServer, ServerError, ServerTimings};
pub use lsp_client::{ClientError, LspClient};
pub use lsp_round_trips::{LspParams, LspReport, TARGET_P95_MS, TARGET_RSS_MB, measure_lsp};
pub use retrieval::{RetrievalParams, RetrievalReport, measure_retrieval};
pub use serve_child::file_uri;
pub use typing::{Pace, TypingParams, TypingReport, measure_typing};

use crate::report::bootstrap;

/// Why a measurement could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    #[error(transparent)]
    Config(#[from] crossfile_engine::config::ConfigError),
    #[error(transparent)]
    Workspace(#[from] crossfile_engine::workspace::WorkspaceError),
    #[error(transparent)]
    Index(#[from] crossfile_engine::index::IndexError),
    #[error(transparent)]
    Retrieve(#[from] crossfile_engine::retrieve::RetrieveError),
    #[error(transparent)]
    Model(#[from] crossfile_engine::model::ModelError),
    #[error(transparent)]
    Backend(#[from] crossfile_engine::backend::BackendError),
    #[error(transparent)]
    Complete(#[from] crossfile_engine::complete::CompleteError),
    #[error(transparent)]
    Server(#[from] ServerError),
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("{what}: {error}")]
    Io { what: String, error: std::io::Error },
    /// The measurement cannot be made as asked (an empty workspace, a missing retriever).
    #[error("{0}")]
    Unmeasurable(String),
}

impl PerfError {
    fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> PerfError {
        let what = what.into();
        move |error| PerfError::Io { what, error }
    }
}

/// The nearest-rank percentile, NaN for no values.
fn percentile(values: &[f64], p: f64) -> f64 {
    bootstrap::percentile(values, p).unwrap_or(f64::NAN)
}

/// The mean, NaN for no values.
fn mean(values: &[f64]) -> f64 {
    bootstrap::mean(values).unwrap_or(f64::NAN)
}

/// Milliseconds of a duration.
fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
