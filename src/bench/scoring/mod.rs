//! Scoring: a prediction against its case's reference with the benchmark's own text metrics
//! ([`text`]), each benchmark's scale and decimals ([`scale`]), generated bodies by running their
//! repository's tests ([`execution`], in environments of [`envs`]) and EvoCodeBench's Recall@k
//! ([`recall`]); and what a user typed at a replayed case's cursor ([`typed_between`]).

pub mod envs;
pub mod execution;
pub mod recall;
pub mod scale;
mod text;
mod typed;

pub use text::{ScoreTable, score, score_predictions};
pub use typed::{common_prefix, common_suffix, typed_between};
