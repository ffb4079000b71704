//! Performance measurement: deterministic cursors to measure at, and the upstream llama.cpp
//! server as a measured peer.

mod cursors;
mod server;

pub use cursors::sample_cursors;
pub use server::{LlamaServer, ServerError, ServerTimings};
