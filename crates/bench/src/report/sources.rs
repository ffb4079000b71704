//! What each source of a composed context (`mix:`) gave: its share of the prompt's context
//! tokens, how much of the reference its chunks hold, and the scores of the cases grouped by the
//! source the suggestion draws on most.
//!
//! From the run records alone: each chunk's `source`, `tokens`, `reference_overlap` and
//! `suggestion_overlap`, written by `bench run`. A retriever whose chunks name no source (one
//! retriever gave them all) has no row.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::bootstrap::mean;
use super::provenance::percent_mean;
use super::summary::retrievers;
use crate::bench::runfile::record::{ChunkRef, RunRecord};

/// The group of the cases whose suggestion shares no identifier with any chunk.
pub const NO_SOURCE: &str = "none";

/// One retriever's sources.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetrieverSources {
    /// Per source, in the order the sources first appear.
    pub sources: Vec<SourceShare>,
    /// Scored cases by the source of the chunk whose identifiers the suggestion shares most
    /// (ties: the earlier chunk); [`NO_SOURCE`] when it shares none.
    pub by_drawn_on: Vec<SourceScores>,
}

/// What one source gave over every record of a retriever.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceShare {
    pub source: String,
    /// Chunks it gave, and how many of them the prompt held.
    pub chunks: usize,
    pub in_prompt: usize,
    /// Its share of the tokens of every chunk the prompts held, 0..1.
    pub token_share: f64,
    /// The mean share of the reference's identifiers its chunks in the prompt hold, 0..1;
    /// `None` without such a chunk.
    pub reference_overlap: Option<f64>,
}

/// The scored cases whose suggestion draws most on one source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceScores {
    pub source: String,
    pub n: usize,
    /// Means as percentages, 0..100; `None` when the records have no such metric.
    pub em: Option<f64>,
    pub es: Option<f64>,
    pub chrf: Option<f64>,
}

/// `{retriever: sources}` for every retriever whose chunks name a source.
pub type Sources = BTreeMap<String, RetrieverSources>;

/// Each composed retriever's sources.
pub fn sources(records: &[RunRecord]) -> Sources {
    let mut out = Sources::new();
    for retriever in retrievers(records) {
        let of: Vec<&RunRecord> = records
            .iter()
            .filter(|r| r.retriever == retriever)
            .collect();
        let chunks: Vec<&ChunkRef> = of.iter().flat_map(|r| &r.chunks).collect();
        let mut names: Vec<&str> = Vec::new();
        for c in &chunks {
            if let Some(s) = c.source.as_deref()
                && !names.contains(&s)
            {
                names.push(s);
            }
        }
        if names.is_empty() {
            continue;
        }
        let held = |c: &&&ChunkRef| c.tokens.is_some_and(|t| t > 0);
        let all_tokens: u64 = chunks.iter().filter_map(|c| c.tokens).map(u64::from).sum();
        let shares = names
            .iter()
            .map(|&name| {
                let given: Vec<&&ChunkRef> = chunks
                    .iter()
                    .filter(|c| c.source.as_deref() == Some(name))
                    .collect();
                let kept: Vec<&&ChunkRef> = given.iter().copied().filter(held).collect();
                let tokens: u64 = kept.iter().filter_map(|c| c.tokens).map(u64::from).sum();
                let overlaps: Vec<f64> = kept.iter().filter_map(|c| c.reference_overlap).collect();
                SourceShare {
                    source: name.to_owned(),
                    chunks: given.len(),
                    in_prompt: kept.len(),
                    token_share: if all_tokens == 0 {
                        0.0
                    } else {
                        tokens as f64 / all_tokens as f64
                    },
                    reference_overlap: mean(&overlaps),
                }
            })
            .collect();
        let mut groups: Vec<(String, Vec<&RunRecord>)> = names
            .iter()
            .map(|n| ((*n).to_owned(), Vec::new()))
            .chain([(NO_SOURCE.to_owned(), Vec::new())])
            .collect();
        for r in of.iter().copied().filter(|r| r.error.is_none()) {
            let drawn = drawn_on(r).unwrap_or(NO_SOURCE);
            if let Some((_, group)) = groups.iter_mut().find(|(name, _)| name == drawn) {
                group.push(r);
            }
        }
        let by_drawn_on = groups
            .into_iter()
            .map(|(source, group)| SourceScores {
                n: group.len(),
                em: percent_mean(&group, "em"),
                es: percent_mean(&group, "es"),
                chrf: percent_mean(&group, "chrf"),
                source,
            })
            .collect();
        out.insert(
            retriever,
            RetrieverSources {
                sources: shares,
                by_drawn_on,
            },
        );
    }
    out
}

/// The source of the record's chunk whose identifiers its suggestion shares most, among the
/// chunks its prompt held; `None` when it shares none.
fn drawn_on(record: &RunRecord) -> Option<&str> {
    let mut best: Option<(f64, &str)> = None;
    for c in &record.chunks {
        let (Some(overlap), Some(source), Some(tokens)) =
            (c.suggestion_overlap, c.source.as_deref(), c.tokens)
        else {
            continue;
        };
        if tokens > 0 && overlap > 0.0 && best.is_none_or(|(b, _)| overlap > b) {
            best = Some((overlap, source));
        }
    }
    best.map(|(_, source)| source)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testdata::record;

    fn chunk(source: &str, tokens: u32, reference: f64, suggestion: f64) -> ChunkRef {
        ChunkRef {
            path: "lib.py".into(),
            start_line: Some(1),
            end_line: Some(5),
            score: 1.0,
            origin: None,
            source: Some(source.into()),
            tokens: Some(tokens),
            reference_overlap: Some(reference),
            suggestion_overlap: Some(suggestion),
        }
    }

    #[test]
    fn shares_overlaps_and_scores_by_the_source_drawn_on() {
        let spec = "mix:definitions*1+bm25*1";
        let mut a = record("t/0", spec, 1.0);
        a.chunks = vec![
            chunk("definitions", 30, 1.0, 0.5),
            chunk("bm25", 10, 0.0, 0.9),
            // Left out by the budget: no tokens, never drawn on.
            chunk("bm25", 0, 1.0, 1.0),
        ];
        let mut b = record("t/1", spec, 0.5);
        b.chunks = vec![chunk("definitions", 60, 0.5, 0.0)];
        let plain = record("t/0", "bm25", 1.0);
        let got = sources(&[a, b, plain]);
        assert_eq!(got.keys().collect::<Vec<_>>(), [spec]);
        let s = &got[spec];
        let rows: Vec<(&str, usize, usize, f64, Option<f64>)> = s
            .sources
            .iter()
            .map(|r| {
                (
                    r.source.as_str(),
                    r.chunks,
                    r.in_prompt,
                    r.token_share,
                    r.reference_overlap,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("definitions", 2, 2, 0.9, Some(0.75)),
                ("bm25", 2, 1, 0.1, Some(0.0)),
            ]
        );
        let groups: Vec<(&str, usize, Option<f64>)> = s
            .by_drawn_on
            .iter()
            .map(|g| (g.source.as_str(), g.n, g.es))
            .collect();
        assert_eq!(
            groups,
            [
                ("definitions", 0, None),
                ("bm25", 1, Some(100.0)),
                ("none", 1, Some(50.0))
            ]
        );
    }
}
