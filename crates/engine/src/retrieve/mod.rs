//! Retrievers: rank chunks of other files for a cursor.
//!
//! A [`Retriever`] sees a [`Query`] (the cursor's file, the text around it, and, for the oracle
//! and the dataset retriever only, what a benchmark case provides) and a [`Snapshot`]; it never
//! sees a benchmark case. [`build`] turns a [`RetrieverSpec`] tree into a retriever; MMR,
//! hybrid and mix wrap others, the way tantivy collectors compose.

mod bm25;
mod catalogue;
mod cceval;
mod dataset;
mod definitions;
pub mod dense;
pub mod embeddings;
mod exclude;
mod hybrid;
mod identifiers;
mod jaccard;
mod mix;
mod mmr;
mod names;
mod none;
pub mod okapi;
mod origin;
mod query;
mod random;
mod recent;
mod settings;
mod spec;
#[cfg(test)]
mod tests;
mod threshold;

use std::ops::Range;

pub use catalogue::{Need, RETRIEVERS, RetrieverForm, valid_specs};
pub use cceval::{CcevalMode, rank_cceval};
pub use exclude::Exclude;
pub use origin::{Origin, Origins};
pub use query::{OWN_REGION_LINES, Query};
pub use recent::{RING_CHUNKS, RING_LINES, Ring};
pub use settings::{DEFAULT_RETRIEVER, DenseSettings, RetrieveSettings};
pub use spec::{DEFAULT_MMR_LAMBDA, RetrieverSpec};

use crate::chunk::ChunkerKind;
use crate::index::Snapshot;

/// One retrieved chunk.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// Workspace-relative, `/`-separated.
    pub path: String,
    /// 0-based, half-open line range in that file.
    pub lines: Range<u32>,
    pub score: f64,
    pub text: String,
    /// The chunker that made it (`None` for context a benchmark case provides).
    pub chunker: Option<ChunkerKind>,
    /// The source that gave it, as a spec (`definitions`), where a `mix:` composed the list;
    /// `None` when one retriever gave them all.
    pub source: Option<String>,
}

/// A retriever: ranks chunks for a query.
pub trait Retriever: Send + Sync {
    /// Up to `top_k` hits, best first, none of them what `retrieve.exclude` ([`Exclude`]) leaves
    /// out of the query's own file (a conformance retriever keeps its benchmark's rule); ties
    /// are broken deterministically.
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError>;
}

/// Why retrieval failed.
#[derive(Debug, thiserror::Error)]
pub enum RetrieveError {
    #[error("unknown retriever `{spec}`; valid retrievers: {}", valid_specs())]
    BadSpec { spec: String },
    #[error("retriever `{retriever}` is not available: {why}")]
    Unavailable { retriever: String, why: String },
    #[error(
        "the `dataset` retriever needs a benchmark case's own context; a plain cursor has none"
    )]
    NoDatasetContext,
    #[error("{path}: `{retriever}` needs a Python, Java, TypeScript or C# file")]
    UnsupportedLanguage { path: String, retriever: String },
    #[error("{path}: the cursor {line}:{col} (0-based line, byte column) is not inside the text")]
    Cursor { path: String, line: u32, col: u32 },
    #[error("search failed: {0}")]
    Search(String),
}

/// Builds the retriever a spec names.
pub fn build(
    spec: &RetrieverSpec,
    settings: &RetrieveSettings,
) -> Result<Box<dyn Retriever>, RetrieveError> {
    Ok(match spec {
        RetrieverSpec::None => Box::new(none::NoRetriever),
        RetrieverSpec::Bm25 => Box::new(bm25::Bm25 {
            query_lines: settings.query_lines,
            exclude: settings.exclude,
        }),
        RetrieverSpec::Bm25Cceval => Box::new(cceval::Cceval {
            mode: CcevalMode::Ranked,
        }),
        RetrieverSpec::Bm25CcevalRg1 => Box::new(cceval::Cceval {
            mode: CcevalMode::NextChunk,
        }),
        RetrieverSpec::Oracle => Box::new(cceval::Cceval {
            mode: CcevalMode::Oracle,
        }),
        RetrieverSpec::Jaccard => Box::new(jaccard::Jaccard {
            query_lines: settings.jaccard_query_lines,
            exclude: settings.exclude,
        }),
        RetrieverSpec::Dataset => Box::new(dataset::Dataset),
        RetrieverSpec::Definitions => Box::new(definitions::Definitions),
        RetrieverSpec::Identifiers => Box::new(identifiers::Identifiers),
        RetrieverSpec::Recent => Box::new(recent::Recent {
            query_lines: settings.jaccard_query_lines,
            from: recent::From::Ring,
        }),
        RetrieverSpec::RecentCommit => Box::new(recent::Recent {
            query_lines: settings.jaccard_query_lines,
            from: recent::From::Case,
        }),
        RetrieverSpec::Dense => Box::new(
            dense::Dense::new(&settings.dense)?
                .with_query_lines(settings.query_lines)
                .with_exclude(settings.exclude),
        ),
        RetrieverSpec::Mmr { inner, lambda } => Box::new(mmr::Mmr {
            inner: build(inner, settings)?,
            lambda: *lambda,
        }),
        RetrieverSpec::Random { inner, seed } => Box::new(random::Random {
            inner: build(inner, settings)?,
            seed: *seed,
        }),
        RetrieverSpec::Threshold { inner, min } => Box::new(threshold::Threshold {
            inner: build(inner, settings)?,
            min: *min,
        }),
        RetrieverSpec::Mix(parts) => Box::new(mix::Mix {
            parts: parts
                .iter()
                .map(|(spec, weight)| {
                    Ok(mix::Part {
                        retriever: build(spec, settings)?,
                        name: spec.to_string(),
                        weight: *weight,
                    })
                })
                .collect::<Result<_, RetrieveError>>()?,
        }),
        RetrieverSpec::Hybrid(parts) => Box::new(hybrid::Hybrid {
            parts: parts
                .iter()
                .map(|p| build(p, settings))
                .collect::<Result<_, _>>()?,
            k: settings.rrf_k,
        }),
    })
}

/// Sorts hits by score, best first, ties by path then first line (ascending): the order every
/// retriever but CrossCodeEval's own uses.
pub(crate) fn sort_hits(hits: &mut [Hit]) {
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.lines.start.cmp(&b.lines.start))
            .then_with(|| a.lines.end.cmp(&b.lines.end))
    });
}
