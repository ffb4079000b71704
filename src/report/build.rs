//! The report of one run: per-group summaries and pairwise retriever comparisons, as one
//! serializable value that the Markdown, JSON and HTML outputs all render.

use serde::Serialize;

use super::bootstrap::Bootstrap;
use super::compare::{Comparison, pairwise};
use super::summary::{GroupSummary, languages, retrievers, summarize};
use crate::bench::runfile::reader::Run;
use crate::bench::scoring::scale::scale_note;

/// What `bench report` prints: `--json` serializes this value.
#[derive(Clone, Debug, Serialize)]
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
    }
}

impl Report {
    /// Whether `retriever` sees the reference in any of its records.
    pub fn is_upper_bound(&self, retriever: &str) -> bool {
        self.summaries
            .iter()
            .any(|s| s.retriever == retriever && s.upper_bound)
    }
}
