//! Benchmarks: benchmark cases and their replay into run files, deterministic cursor sampling,
//! and a measured llama-server peer for performance runs and tests.

mod case;
mod cursors;
mod error;
pub mod formats;
mod predictions;
pub mod record;
pub mod run;
mod run_file;
mod score;
mod server;
mod view;

pub use case::{Case, CaseFormat, CaseProblem, LoadedCases, Target, load_cases};
pub use cursors::{SplitMix64, sample_cursors};
pub use error::BenchError;
pub use predictions::{LoadedPredictions, Prediction, load_predictions};
pub use run_file::{Resumed, RunFile};
pub use score::{ScoreTable, score, score_predictions};
pub use server::{LlamaServer, ServerError, ServerTimings};
pub use view::CaseView;
