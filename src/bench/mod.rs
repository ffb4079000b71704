//! Benchmarks: case formats and run records of benchmark replay, deterministic cursor sampling,
//! case mining from any workspace, and a measured llama-server peer for performance runs and tests.

mod cursors;
pub mod formats;
pub mod mine;
pub mod record;
mod server;

pub use cursors::{SplitMix64, sample_cursors};
pub use mine::{MineParams, Mined, mine};
pub use server::{LlamaServer, ServerError, ServerTimings};
