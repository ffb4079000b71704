//! The HTTP client every HTTP backend and the `dense` retriever's embeddings share: JSON over
//! `POST`, a per-attempt timeout, retries with backoff, cancellation, and a bearer key that is
//! never logged and never put in an error.
//!
//! One attempt covers connecting, sending, and reading the whole body; it has
//! `timeout_ms` to finish. An attempt that fails with HTTP 429, a 5xx status, a refused
//! connection or a connection closed before any response is retried up to `retries` times, after
//! an exponential backoff (200 ms, 400 ms, 800 ms, … capped at 5 s, each scaled by a random
//! factor in [0.5, 1]), or after the server's `Retry-After` seconds when it sends them (capped at
//! 10 s). A timeout is not retried: a server that hangs once is likely to hang again, and a
//! completion that arrives after the user moved on is useless. Every wait (connect, response,
//! body, backoff) races the caller's cancellation token; a cancelled request is dropped, which
//! closes its connection, and the client stays usable.
//!
//! A success must carry a JSON content type (`application/json`, or any `…+json`); a response
//! without a `Content-Type` is parsed anyway. Bodies that end early, are not JSON, or lack a
//! field the caller needs are [`HttpError::Malformed`]. Callers wrap [`HttpError`] in their own
//! error (`BackendError`, the `dense` retriever's), keeping its kind and message.

mod answer;
mod client;
mod error;
mod redact;

pub use client::client_builder;
pub(crate) use client::{HttpClient, HttpSettings};
pub use error::HttpError;
