//! Benchmark replay: each benchmark's cases ([`cases`]), a case laid out in its repository
//! ([`layout`]), the runner that replays cases through the completion pipeline ([`runner`]) into
//! run files ([`runfile`]), scoring by each benchmark's own metrics and tests ([`scoring`]), and
//! the judging of one completion that the runner and the editors share ([`evaluate`]).
//! Reports over run files are `report`'s job; mining new cases is `mine`'s.

pub mod cases;
mod error;
pub mod evaluate;
pub mod layout;
pub mod outputs;
pub mod runfile;
pub mod runner;
pub mod scoring;
pub mod shard;
pub mod tally;
#[cfg(test)]
pub(crate) mod testdata;

pub use cases::{
    BenchFormat, Case, CaseFormat, CaseProblem, LoadedCases, LoadedPredictions, NotReplayable,
    Prediction, ReplayFormat, Scoring, Target, load_cases, load_predictions,
};
pub use error::BenchError;
pub use layout::case_view::CaseView;
pub use layout::replay_copy::{InPlaceLock, Placeable, Placed, ReplayCopies};
pub use runfile::{Resumed, RunFile};
pub use scoring::{ScoreTable, score, score_predictions};
