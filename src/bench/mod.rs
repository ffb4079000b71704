//! Benchmarks over real workspaces: deterministic cursor sampling and a measured llama-server
//! peer for performance runs and tests; benchmark cases, replay, metrics and reports come with
//! the replay issue.

mod cursors;
mod server;

pub use cursors::{SplitMix64, sample_cursors};
pub use server::{LlamaServer, ServerError, ServerTimings};
