//! Benchmark replay: loading benchmark cases (CrossCodeEval, RepoEval) and predictions, laying a
//! case out in its repository, replaying cases through the completion pipeline into run files,
//! and scoring predictions made elsewhere. Reading run files back is `report`'s job.

mod case;
pub mod codereval;
pub mod envs;
mod error;
pub mod evocodebench;
pub mod exec_recall;
pub mod exec_run;
pub mod exec_score;
pub mod exec_view;
pub mod formats;
mod jsonl;
pub mod mine_functions;
pub mod outputs;
mod predictions;
pub mod record;
pub mod replay;
pub mod run;
pub mod run_settings;
mod run_writer;
mod sandbox;
pub mod scale;
mod score;
pub mod shard;
pub mod tally;
#[cfg(test)]
pub(crate) mod testdata;
mod view;

pub use case::{Case, CaseFormat, CaseProblem, LoadedCases, Target, load_cases};
pub use error::BenchError;
pub use predictions::{LoadedPredictions, Prediction, load_predictions};
pub use run_writer::{Resumed, RunFile};
pub use sandbox::{InPlaceLock, Placeable, Placed, Sandbox};
pub use score::{ScoreTable, score, score_predictions};
pub use view::CaseView;
