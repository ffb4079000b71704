//! The report of one run: per-group summaries, pairwise retriever comparisons, for cases mined
//! from history EM and ES by line category, where each retriever's context comes from and what
//! each source of a composed one gave, as one serializable value that the Markdown, JSON and HTML outputs all render.

use serde::{Deserialize, Serialize};

use super::bootstrap::Bootstrap;
use super::category::{ByCategory, CategoryCell, by_category, category_comparisons};
use super::compare::{Comparison, pairwise};
use super::provenance::{Provenance, RetrieverProvenance, provenance};
use super::sources::{RetrieverSources, Sources, sources};
use super::summary::{GroupSummary, languages, retrievers, summarize};
use crate::bench::runfile::reader::Run;
use crate::bench::scoring::scale::{scale_note, sort_categories};

/// What `bench report` prints: `--json` serializes this value.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// The run file.
    pub run: String,
    pub records: usize,
    pub retrievers: Vec<String>,
    /// What was tolerated while reading (a torn last line).
    pub warnings: Vec<String>,
    pub bootstrap: Bootstrap,
    /// Which scale each format's metrics are shown in, one sentence per format.
    pub scales: Vec<String>,
    pub summaries: Vec<GroupSummary>,
    /// Every two retrievers over their shared scored cases, B − A.
    pub comparisons: Vec<Comparison>,
    /// Cases mined from history: EM and ES per line category and retriever,
    /// `{category: {retriever: {n, errors, em, es, em_ci, es_ci}}}`; empty when no record has a
    /// category.
    pub by_category: ByCategory,
    /// Every two retrievers compared within each line category (`em` and `es`, B − A), each
    /// with its `category`.
    pub category_comparisons: Vec<Comparison>,
    /// Where each retriever's chunks come from and EM / ES by identifier overlap,
    /// `{retriever: {chunks, origins: {origin: share}, by_overlap: [{bucket, n, em, es}],
    /// unmeasured}}`; empty when no record has them.
    pub provenance: Provenance,
    /// What each source of a composed context (`mix:`) gave, `{retriever: {sources: [{source,
    /// chunks, in_prompt, token_share, reference_overlap}], by_drawn_on: [{source, n, em, es,
    /// chrf}]}}`; empty when no chunk names a source.
    pub sources: Sources,
}

/// Summarizes and compares the retrievers of a run.
pub fn build_report(run: &Run, bootstrap: &Bootstrap) -> Report {
    let mut formats: Vec<String> = languages(&run.records)
        .into_iter()
        .map(|(format, _)| format)
        .collect();
    formats.dedup();
    Report {
        run: run.path.display().to_string(),
        records: run.records.len(),
        retrievers: retrievers(&run.records),
        warnings: run.warnings.clone(),
        bootstrap: *bootstrap,
        scales: formats.iter().map(|f| scale_note(f)).collect(),
        summaries: summarize(&run.records, bootstrap),
        comparisons: pairwise(&run.records, bootstrap),
        by_category: by_category(&run.records, bootstrap),
        category_comparisons: category_comparisons(&run.records, bootstrap),
        provenance: provenance(&run.records),
        sources: sources(&run.records),
    }
}

impl Report {
    /// Every (category, retriever) cell of [`Report::by_category`], categories in Long Code
    /// Arena's order and retrievers in the run's.
    pub fn category_cells(&self) -> Vec<(&str, &str, &CategoryCell)> {
        let mut names: Vec<String> = self.by_category.keys().cloned().collect();
        sort_categories(&mut names);
        let mut out = Vec::new();
        for name in names {
            let Some((category, cells)) = self.by_category.get_key_value(&name) else {
                continue;
            };
            for retriever in &self.retrievers {
                if let Some((retriever, cell)) = cells.get_key_value(retriever) {
                    out.push((category.as_str(), retriever.as_str(), cell));
                }
            }
        }
        out
    }

    /// Each retriever's provenance, in the run's order of retrievers.
    pub fn provenance_rows(&self) -> Vec<(&str, &RetrieverProvenance)> {
        self.retrievers
            .iter()
            .filter_map(|r| self.provenance.get_key_value(r))
            .map(|(r, p)| (r.as_str(), p))
            .collect()
    }

    /// Each composed retriever's sources, in the run's order of retrievers.
    pub fn source_rows(&self) -> Vec<(&str, &RetrieverSources)> {
        self.retrievers
            .iter()
            .filter_map(|r| self.sources.get_key_value(r))
            .map(|(r, s)| (r.as_str(), s))
            .collect()
    }

    /// Whether `retriever` sees the reference in any of its records.
    pub fn is_upper_bound(&self, retriever: &str) -> bool {
        self.summaries
            .iter()
            .any(|s| s.retriever == retriever && s.upper_bound)
    }
}
