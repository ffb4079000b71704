//! Per-group summaries of a run: cases, errors, metric means in the benchmark's own scale with
//! bootstrap intervals, and latency percentiles, for each (format, language, retriever).

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::bootstrap::{Bootstrap, Interval, mean, percentile_sorted};
use crate::bench::runfile::record::RunRecord;
use crate::bench::scoring::scale::{display_value, sort_metrics};

/// The records of one (format, language, retriever).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GroupSummary {
    pub format: String,
    pub language: String,
    pub retriever: String,
    /// The retriever sees the reference (`oracle`): an upper bound, not a result.
    pub upper_bound: bool,
    /// The retriever is a control (`none`, `random:…`): the baseline the others are read against.
    pub control: bool,
    /// Records, errors included.
    pub cases: usize,
    /// Records with metrics; the means are over these.
    pub scored: usize,
    /// Records with an `error`, excluded from the means, by kind.
    pub errors: usize,
    pub error_kinds: BTreeMap<String, usize>,
    pub metrics: Vec<MetricMean>,
    /// Latencies of the scored records, in milliseconds.
    pub total_ms: Quantiles,
    pub generate_ms: Quantiles,
}

/// A metric's mean in display scale, with its bootstrap interval.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetricMean {
    pub name: String,
    /// Records the mean is over (scored records that carry this metric).
    pub n: usize,
    pub mean: f64,
    pub ci: Option<Interval>,
}

/// Nearest-rank percentiles of a latency; all zero when there are no values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    pub p5: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p95: f64,
    pub max: f64,
}

impl Quantiles {
    pub fn of(values: &[f64]) -> Quantiles {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let p = |q| percentile_sorted(&sorted, q).unwrap_or(0.0);
        Quantiles {
            p5: p(5.0),
            p25: p(25.0),
            p50: p(50.0),
            p75: p(75.0),
            p95: p(95.0),
            max: p(100.0),
        }
    }
}

/// The (format, language) pairs of `records`, sorted.
pub fn languages(records: &[RunRecord]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = records
        .iter()
        .map(|r| (r.format.clone(), r.language.clone()))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The retrievers of `records` in order of first appearance.
pub fn retrievers(records: &[RunRecord]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for record in records {
        if !out.contains(&record.retriever) {
            out.push(record.retriever.clone());
        }
    }
    out
}

/// One summary per (format, language, retriever) present, languages sorted and retrievers in
/// order of first appearance.
pub fn summarize(records: &[RunRecord], bootstrap: &Bootstrap) -> Vec<GroupSummary> {
    let mut groups: Vec<Vec<&RunRecord>> = Vec::new();
    for (format, language) in languages(records) {
        for retriever in retrievers(records) {
            let group: Vec<&RunRecord> = records
                .iter()
                .filter(|r| {
                    r.format == format && r.language == language && r.retriever == retriever
                })
                .collect();
            if !group.is_empty() {
                groups.push(group);
            }
        }
    }
    groups
        .par_iter()
        .map(|group| summarize_group(group, bootstrap))
        .collect()
}

/// The summary of records of one (format, language, retriever); `group` is not empty.
fn summarize_group(group: &[&RunRecord], bootstrap: &Bootstrap) -> GroupSummary {
    let first = group[0];
    let scored: Vec<&RunRecord> = group
        .iter()
        .copied()
        .filter(|r| r.error.is_none())
        .collect();
    let mut error_kinds = BTreeMap::new();
    for record in group {
        if let Some(error) = &record.error {
            *error_kinds.entry(error.kind.clone()).or_insert(0) += 1;
        }
    }
    let mut names: Vec<String> = scored
        .iter()
        .flat_map(|r| r.metrics.keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    sort_metrics(&mut names);
    let columns: Vec<Vec<f64>> = names
        .iter()
        .map(|name| {
            scored
                .iter()
                .filter_map(|r| display_value(r, name))
                .collect()
        })
        .collect();
    let slices: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
    let intervals = bootstrap.mean_intervals(&slices);
    let metrics = names
        .into_iter()
        .zip(columns.iter().zip(intervals))
        .filter_map(|(name, (values, ci))| {
            Some(MetricMean {
                n: values.len(),
                mean: mean(values)?,
                ci,
                name,
            })
        })
        .collect();
    // Answers from the response cache took no model time: they would flatter the latencies.
    let timed = || scored.iter().filter(|r| !r.cached);
    let total: Vec<f64> = timed().map(|r| r.timings_ms.total).collect();
    let generate: Vec<f64> = timed().map(|r| r.timings_ms.generate).collect();
    GroupSummary {
        format: first.format.clone(),
        language: first.language.clone(),
        retriever: first.retriever.clone(),
        upper_bound: group.iter().any(|r| r.upper_bound),
        control: is_control(&first.retriever),
        cases: group.len(),
        scored: scored.len(),
        errors: group.len() - scored.len(),
        error_kinds,
        metrics,
        total_ms: Quantiles::of(&total),
        generate_ms: Quantiles::of(&generate),
    }
}

/// Whether the retriever spec `name` is a control: no context (`none`) or random context
/// (`random:…`).
pub fn is_control(name: &str) -> bool {
    name.parse::<crossfile_engine::retrieve::RetrieverSpec>()
        .is_ok_and(|spec| spec.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testdata::{errored, record};

    #[test]
    fn errors_are_counted_and_left_out_of_the_means() {
        let records = vec![
            record("a", "bm25", 1.0),
            record("b", "bm25", 0.0),
            errored("c", "bm25"),
            record("a", "oracle", 1.0),
        ];
        let summaries = summarize(&records, &Bootstrap::default());
        assert_eq!(summaries.len(), 2);
        let bm25 = &summaries[0];
        assert_eq!((bm25.cases, bm25.scored, bm25.errors), (3, 2, 1));
        assert_eq!(bm25.error_kinds.get("backend"), Some(&1));
        assert!(!bm25.upper_bound);
        let em = &bm25.metrics[0];
        assert_eq!((em.name.as_str(), em.n, em.mean), ("em", 2, 50.0));
        let names: Vec<&str> = bm25.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["em", "es", "id_em", "id_f1"]);
        let es = &bm25.metrics[1];
        assert_eq!(es.mean, 50.0, "es is shown as stored");
        assert!(summaries[1].upper_bound);
    }

    #[test]
    fn latency_quantiles() {
        let q = Quantiles::of(&(1..=100).map(f64::from).collect::<Vec<_>>());
        assert_eq!((q.p5, q.p50, q.p95, q.max), (5.0, 50.0, 95.0, 100.0));
        assert_eq!(Quantiles::of(&[]), Quantiles::default());
    }
}
