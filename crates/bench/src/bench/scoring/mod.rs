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

/// The per-case metric holding the reference's likelihood as the answer: the mean natural-log
/// probability per token the model gave the reference after the prompt (≤ 0, higher is likelier;
/// [`crossfile_engine::backend::Likelihood`]). Recorded where the backend measures it (the embedded one).
pub const LOGPROB: &str = "logprob";
pub use typed::{common_prefix, common_suffix, typed_between};
