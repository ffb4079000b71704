//! Why a request failed: the engine's own errors, typed until the protocol's edge
//! ([`ServeError::to_response`]) turns them into a JSON-RPC error with one message.

use tokio::task::JoinError;
use tower_lsp::jsonrpc;

use crate::live::LiveError;
use crossfile_bench::bench::BenchError;
use crossfile_engine::backend::BackendError;
use crossfile_engine::complete::CompleteError;
use crossfile_engine::config::ConfigError;
use crossfile_engine::index::IndexError;
use crossfile_engine::retrieve::RetrieveError;
use crossfile_engine::workspace::WorkspaceError;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The request was cancelled: by a newer one for the same document, by `$/cancelRequest`,
    /// or by the end of the session.
    #[error("cancelled")]
    Cancelled,
    /// What the request asks cannot be done as asked; the message says why and what to give.
    #[error("{0}")]
    Request(String),
    /// The model is being fetched: completions start when it is ready (the message says how far).
    #[error("{0}")]
    ModelDownloading(String),
    /// Work on the blocking pool panicked or was dropped.
    #[error("{what} failed: {source}")]
    Task {
        what: &'static str,
        source: JoinError,
    },
    /// The folder's index failed to build (the message was shown to the user when it did), or
    /// the folder was removed while the request waited for it.
    #[error(transparent)]
    Live(#[from] LiveError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Source(#[from] WorkspaceError),
    #[error(transparent)]
    Retrieve(#[from] RetrieveError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Bench(#[from] BenchError),
    #[error(transparent)]
    Complete(CompleteError),
}

impl From<CompleteError> for ServeError {
    /// A backend that stopped for a cancel is a cancel, not a failure.
    fn from(e: CompleteError) -> ServeError {
        match e {
            CompleteError::Backend(BackendError::Cancelled) => ServeError::Cancelled,
            e => ServeError::Complete(e),
        }
    }
}

impl ServeError {
    /// A request that cannot be done as asked, for `message`'s reason.
    pub fn request(message: impl Into<String>) -> ServeError {
        ServeError::Request(message.into())
    }

    /// A failure of the work `what` on the blocking pool.
    pub fn task(what: &'static str) -> impl FnOnce(JoinError) -> ServeError {
        move |source| ServeError::Task { what, source }
    }

    pub fn is_cancelled(&self) -> bool {
        matches!(self, ServeError::Cancelled)
    }

    /// The JSON-RPC error a client gets: `RequestCancelled` for a cancel, else an internal error
    /// whose message is `context: ` and this error's.
    pub fn to_response(&self, context: &str) -> jsonrpc::Error {
        match self {
            ServeError::Cancelled => jsonrpc::Error::request_cancelled(),
            ServeError::ModelDownloading(note) => jsonrpc::Error {
                code: jsonrpc::ErrorCode::ServerError(REQUEST_FAILED),
                message: note.clone().into(),
                data: None,
            },
            e if context.is_empty() => internal(e.to_string()),
            e => internal(format!("{context}: {e}")),
        }
    }
}

/// LSP's `RequestFailed`: a well-formed request the server could not answer now.
const REQUEST_FAILED: i64 = -32803;

/// An internal error with `message`.
pub fn internal(message: String) -> jsonrpc::Error {
    jsonrpc::Error {
        code: jsonrpc::ErrorCode::InternalError,
        message: message.into(),
        data: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_cancel_is_a_cancel_and_other_failures_keep_their_message() {
        let cancelled = ServeError::from(CompleteError::Backend(BackendError::Cancelled));
        assert!(cancelled.is_cancelled());
        assert_eq!(
            cancelled.to_response("x").code,
            jsonrpc::ErrorCode::RequestCancelled
        );
        let failed = ServeError::from(CompleteError::Task("boom".into()));
        assert!(!failed.is_cancelled());
        let response = failed.to_response("crossfile.compare");
        assert_eq!(response.code, jsonrpc::ErrorCode::InternalError);
        assert_eq!(
            response.message,
            "crossfile.compare: a completion task failed: boom"
        );
        assert_eq!(
            ServeError::Request("no case".into())
                .to_response("")
                .message,
            "no case"
        );
    }
}
