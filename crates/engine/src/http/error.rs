//! What can go wrong talking to a server: each kind is told apart, so that a replay records an
//! *error* (a server timed out, refused, answered 500 or garbage), never a *miss*.

/// Why an HTTP exchange failed. Endpoints in messages never carry credentials.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("{endpoint}: no answer within {after_ms} ms")]
    Timeout { endpoint: String, after_ms: u64 },
    #[error("{endpoint}: HTTP {status}: {body}")]
    Status {
        endpoint: String,
        status: u16,
        body: String,
    },
    #[error("{endpoint}: malformed response: {message}")]
    Malformed { endpoint: String, message: String },
    #[error("{endpoint}: cannot connect: {message}")]
    Refused { endpoint: String, message: String },
    #[error("the request was cancelled")]
    Cancelled,
    /// A bad endpoint or a missing key (the message names the config key).
    #[error("{0}")]
    Config(String),
}

impl HttpError {
    /// A short machine name of the kind of error, for run records.
    pub fn kind(&self) -> &'static str {
        match self {
            HttpError::Timeout { .. } => "timeout",
            HttpError::Status { .. } => "http_status",
            HttpError::Malformed { .. } => "malformed",
            HttpError::Refused { .. } => "refused",
            HttpError::Cancelled => "cancelled",
            HttpError::Config(_) => "config",
        }
    }
}
