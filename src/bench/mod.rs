//! Benchmarks: benchmark cases and their replay into run files, everything that reads run
//! files (reports in Markdown, JSON and HTML, paired comparisons, prediction exports),
//! case mining from any workspace, deterministic cursor sampling, and a measured llama-server
//! peer for performance runs and tests.

pub mod bootstrap;
mod case;
mod charts;
pub mod compare;
mod cursors;
mod drilldown;
mod error;
pub mod export;
pub mod formats;
mod html;
mod jsonl;
pub mod markdown;
pub mod mine;
pub mod outputs;
mod predictions;
pub mod record;
pub mod replay;
pub mod report;
pub mod run;
pub mod run_reader;
mod run_writer;
mod sandbox;
mod score;
mod server;
pub mod summary;
#[cfg(test)]
mod testdata;
pub mod textdiff;
mod view;

pub use case::{Case, CaseFormat, CaseProblem, LoadedCases, Target, load_cases};
pub use cursors::sample_cursors;
pub use error::BenchError;
pub use html::render_html;
pub use mine::{MineParams, Mined, mine};
pub use predictions::{LoadedPredictions, Prediction, load_predictions};
pub use run_writer::{Resumed, RunFile};
pub use sandbox::{InPlaceLock, Placed, Sandbox};
pub use score::{ScoreTable, score, score_predictions};
pub use server::{LlamaServer, ServerError, ServerTimings};
pub use view::CaseView;
