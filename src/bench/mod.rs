//! Benchmarks: case formats and run records of benchmark replay, deterministic cursor sampling,
//! a measured llama-server peer for performance runs and tests, and everything that reads run
//! files: reports (Markdown, JSON, HTML), paired comparisons and prediction exports.

pub mod bootstrap;
mod charts;
pub mod compare;
mod cursors;
mod drilldown;
pub mod export;
pub mod formats;
mod html;
pub mod markdown;
pub mod record;
pub mod report;
pub mod runfile;
mod server;
pub mod summary;
#[cfg(test)]
mod testdata;
pub mod textdiff;

pub use cursors::{SplitMix64, sample_cursors};
pub use html::render_html;
pub use server::{LlamaServer, ServerError, ServerTimings};
