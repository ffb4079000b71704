//! Metrics: how a completion is scored, exactly as the benchmarks' own scripts score it.
//!
//! - CrossCodeEval ([`cceval_metrics`], [`cceval_aggregate`]): the one-statement cut (it calls
//!   [`crate::postprocess::cceval_statement`]), comment removal, EM, ES (fuzzywuzzy over a port
//!   of CPython's `difflib`), identifier EM / precision / recall / F1, and `results.json`.
//! - RepoEval ([`repoeval_metrics`], [`repoeval_by_repository`]): RepoCoder's EM and ES.
//! - Retrieved context: [`identifier_overlap`], the share of a reference's identifiers that
//!   the retrieved chunks hold (after CrossCodeEval §3.5).
//! - chrF ([`chrf`]): sacrebleu's character n-gram F-score, beside EM and ES on every line and
//!   body scored against its reference (not an official metric of these benchmarks).
//! - General: [`levenshtein`], [`sentence_bleu`], [`pass_at_k`], [`recall_at_k`].
//!
//! "Exactly" means character for character on Python `str` semantics (code points, Unicode
//! whitespace, `splitlines` boundaries) and float operation for float operation where the
//! official numbers are rounded, with Python's `round` reproduced on binary floats.
//! `shared/bench/conformance/` holds the values the official code computes; the integration
//! test `metrics_conformance` checks every row.

mod aggregate;
mod bleu;
mod cceval;
mod chrf;
mod difflib;
mod edit;
mod identifiers;
mod keywords;
mod overlap;
mod passk;
mod pyround;
mod pystr;
mod recall;
mod repoeval;

pub use aggregate::{
    CcevalAggregate, CcevalRow, EsBackend, RepoMean, cceval_aggregate, repoeval_by_repository,
    repoeval_repository,
};
pub use bleu::{sentence_bleu, tokenize_13a};
pub use cceval::{
    CcevalInput, CcevalScores, cceval_em, cceval_es, cceval_es_with_python_levenshtein,
    cceval_metrics, remove_comments,
};
pub use chrf::chrf;
pub use difflib::{Match, SequenceMatcher, fuzz_ratio};
pub use edit::{indel_distance, levenshtein};
pub use identifiers::{IdMatch, cceval_identifiers, remove_string_literals};
pub use keywords::{cceval_keywords, is_cceval_keyword};
pub use overlap::identifier_overlap;
pub use passk::pass_at_k;
pub use pyround::{round_half_even, round_to};
pub use pystr::{splitlines, splitlines_keepends, strip, stripped_nonempty};
pub use recall::recall_at_k;
pub use repoeval::{RepoevalScores, repoeval_em, repoeval_es, repoeval_metrics};

/// Why a metric has no value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MetricsError {
    /// An aggregate over no rows (the official scripts divide by zero).
    #[error("no rows to aggregate")]
    NoRows,
    /// The reference is empty (RepoEval ES: no non-blank line, so `max(len) = 0`; Recall@k: no
    /// reference item), so the metric divides by zero.
    #[error("the reference is empty, so the metric is undefined")]
    EmptyReference,
    /// Pass@k outside `c <= n`, `1 <= k <= n`.
    #[error("pass@k needs c <= n and 1 <= k <= n, got n = {n}, c = {c}, k = {k}")]
    PassAtK { n: u64, c: u64, k: u64 },
}
