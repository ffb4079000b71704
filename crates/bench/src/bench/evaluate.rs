//! One completion at a case's cursor, judged: where each chunk of its context comes from, how
//! many of its tokens the prompt holds, which identifiers it shares with the reference and the
//! suggestion, and every metric of the case's benchmark.
//!
//! Invariant: `bench run` (each pair's record) and the editors (`crossfile.compare`'s columns at
//! a replayed case) judge a completion here and nowhere else, so a column shows what the run
//! file would record for the same completion.

use std::collections::BTreeMap;

use crate::bench::cases::Case;
use crate::bench::runfile::record::ChunkRef;
use crate::bench::scoring::{LOGPROB, score};
use crossfile_engine::complete::Completion;
use crossfile_engine::lang::Language;
use crossfile_engine::metrics::{MetricsError, identifier_overlap};
use crossfile_engine::retrieve::Origins;
use crossfile_engine::tokenize::Tokenizer;

/// What a completion's context was, next to the text it should have led to.
#[derive(Clone, Debug, PartialEq)]
pub struct ContextJudged {
    /// Each retrieved chunk, in rank order.
    pub chunks: Vec<ChunkRef>,
    /// The share of the reference's distinct identifiers the chunks hold together; `None` when
    /// the reference has none.
    pub overlap: Option<f64>,
}

/// Judges `completion`'s chunks against `reference` (identifiers as `language` writes them):
/// each one's origin relative to the case's file (`origins`), its tokens in the prompt
/// (`tokenizer`'s; 0 when the budget left it out) and its identifier overlap with the reference
/// and with the suggestion.
pub fn judge_context(
    completion: &Completion,
    reference: &str,
    language: Language,
    origins: &Origins,
    tokenizer: &dyn Tokenizer,
) -> ContextJudged {
    let hits = &completion.hits;
    let chunks = hits
        .iter()
        .enumerate()
        .map(|(i, h)| ChunkRef {
            path: h.path.clone(),
            start_line: h.chunker.map(|_| h.lines.start + 1),
            end_line: h.chunker.map(|_| h.lines.end),
            score: h.score,
            origin: Some(origins.of(&h.path).name().to_string()),
            source: h.source.clone(),
            tokens: Some(if i < completion.prompt.hits_used {
                u32::try_from(tokenizer.count(&h.text)).unwrap_or(u32::MAX)
            } else {
                0
            }),
            reference_overlap: identifier_overlap(language, reference, [h.text.as_str()]),
            suggestion_overlap: identifier_overlap(
                language,
                &completion.suggestion,
                [h.text.as_str()],
            ),
        })
        .collect();
    ContextJudged {
        chunks,
        overlap: identifier_overlap(language, reference, hits.iter().map(|h| h.text.as_str())),
    }
}

/// Every metric of `case`'s benchmark for `completion` (scored from its raw suggestion, which
/// each benchmark's own scripts cut themselves), with the reference's mean log-probability
/// where the backend measured it ([`LOGPROB`]).
pub fn metrics_of(
    case: &Case,
    completion: &Completion,
) -> Result<BTreeMap<String, f64>, MetricsError> {
    let mut metrics = score(case, &completion.raw_suggestion)?;
    let likelihood = completion.generation.likelihood;
    if let Some(l) = likelihood.filter(|l| l.mean_logprob.is_finite()) {
        metrics.insert(LOGPROB.to_string(), l.mean_logprob);
    }
    Ok(metrics)
}
