//! Where each retriever's context comes from: the share of its chunks by origin (the case's own
//! file, its folder, a module it imports, elsewhere), and EM and ES bucketed by the identifier
//! overlap between the chunks and the reference, as CrossCodeEval's Fig. 5 buckets them.
//!
//! Both come from the run records alone: each chunk's `origin` and each record's `overlap`,
//! written by `bench run`. Records written before them carry neither, and a run without any
//! has no provenance.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::bootstrap::mean;
use super::summary::retrievers;
use crate::bench::runfile::record::RunRecord;
use crate::bench::scoring::scale::{display_max, display_value};
use crossfile_engine::retrieve::Origin;

/// The overlap buckets: exactly 0, then four quarters, each closed above.
pub const OVERLAP_BUCKETS: [&str; 5] =
    ["0", "(0, 0.25]", "(0.25, 0.5]", "(0.5, 0.75]", "(0.75, 1]"];

/// One retriever's provenance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetrieverProvenance {
    /// Chunks with an origin, over every record of the retriever (errors included: their chunks
    /// were retrieved).
    pub chunks: usize,
    /// The share of those chunks per origin, 0..1, each of `same_file`, `same_dir`, `imported`,
    /// `elsewhere` present (and any other name a run file holds).
    pub origins: BTreeMap<String, f64>,
    /// Scored records by overlap bucket, every bucket present in order.
    pub by_overlap: Vec<OverlapBucket>,
    /// Scored records without an overlap: nothing retrieved, or no identifier in the reference.
    pub unmeasured: usize,
}

/// The scored records of one overlap bucket.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OverlapBucket {
    /// One of [`OVERLAP_BUCKETS`].
    pub bucket: String,
    pub n: usize,
    /// Means as percentages, 0..100, whatever the format's own scale (`em` × 100; `es` as
    /// CrossCodeEval scores it, RepoEval's × 100); `None` when the bucket is empty or its records
    /// have no such metric.
    pub em: Option<f64>,
    pub es: Option<f64>,
}

/// `{retriever: provenance}` for every retriever whose records have a chunk with an origin or an
/// overlap; empty for a run without them.
pub type Provenance = BTreeMap<String, RetrieverProvenance>;

/// The bucket of an overlap, an index into [`OVERLAP_BUCKETS`]; `None` outside 0..=1.
pub fn bucket_of(overlap: f64) -> Option<usize> {
    if overlap == 0.0 {
        Some(0)
    } else if overlap > 0.0 && overlap <= 1.0 {
        // (0, 0.25] → 1, …, (0.75, 1] → 4.
        Some(((overlap * 4.0).ceil() as usize).clamp(1, 4))
    } else {
        None
    }
}

/// Each retriever's provenance, for those that have one.
pub fn provenance(records: &[RunRecord]) -> Provenance {
    let mut out = Provenance::new();
    for retriever in retrievers(records) {
        let of: Vec<&RunRecord> = records
            .iter()
            .filter(|r| r.retriever == retriever)
            .collect();
        let origins: Vec<&str> = of
            .iter()
            .flat_map(|r| r.chunks.iter().filter_map(|c| c.origin.as_deref()))
            .collect();
        if origins.is_empty() && of.iter().all(|r| r.overlap.is_none()) {
            continue;
        }
        let mut counts: BTreeMap<String, usize> = Origin::ALL
            .iter()
            .map(|o| (o.name().to_string(), 0))
            .collect();
        for origin in &origins {
            *counts.entry((*origin).to_string()).or_default() += 1;
        }
        let total = origins.len();
        let shares = counts
            .into_iter()
            .map(|(name, n)| {
                let share = if total == 0 {
                    0.0
                } else {
                    n as f64 / total as f64
                };
                (name, share)
            })
            .collect();
        let scored: Vec<&RunRecord> = of.iter().copied().filter(|r| r.error.is_none()).collect();
        let mut buckets: [Vec<&RunRecord>; OVERLAP_BUCKETS.len()] = Default::default();
        let mut unmeasured = 0;
        for r in &scored {
            match r.overlap.and_then(bucket_of) {
                Some(b) => buckets[b].push(r),
                None => unmeasured += 1,
            }
        }
        let by_overlap = OVERLAP_BUCKETS
            .iter()
            .zip(&buckets)
            .map(|(bucket, group)| OverlapBucket {
                bucket: bucket.to_string(),
                n: group.len(),
                em: percent_mean(group, "em"),
                es: percent_mean(group, "es"),
            })
            .collect();
        out.insert(
            retriever,
            RetrieverProvenance {
                chunks: total,
                origins: shares,
                by_overlap,
                unmeasured,
            },
        );
    }
    out
}

/// The mean of `metric` over `group` as a percentage of the format's scale.
pub(super) fn percent_mean(group: &[&RunRecord], metric: &str) -> Option<f64> {
    let values: Vec<f64> = group
        .iter()
        .filter_map(|r| {
            let max = display_max(&r.format, metric)?;
            Some(display_value(r, metric)? * 100.0 / max)
        })
        .collect();
    mean(&values)
}

/// The origin names of `provenance`, in [`Origin::ALL`]'s order, then any other name.
pub fn origin_names(provenance: &Provenance) -> Vec<String> {
    let mut names: Vec<String> = Origin::ALL.iter().map(|o| o.name().to_string()).collect();
    for p in provenance.values() {
        for name in p.origins.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::runfile::record::ChunkRef;
    use crate::bench::testdata::{errored, record};

    fn chunk(origin: &str) -> ChunkRef {
        ChunkRef {
            path: "a.py".into(),
            start_line: Some(1),
            end_line: Some(2),
            score: 1.0,
            origin: Some(origin.into()),
            source: None,
            tokens: None,
            reference_overlap: None,
            suggestion_overlap: None,
        }
    }

    /// A scored record with chunks of `origins` and `overlap`; `quality` is its EM (0 or 1) and
    /// ES / 100.
    fn with(
        case: &str,
        retriever: &str,
        quality: f64,
        origins: &[&str],
        overlap: Option<f64>,
    ) -> RunRecord {
        RunRecord {
            chunks: origins.iter().map(|o| chunk(o)).collect(),
            overlap,
            ..record(case, retriever, quality)
        }
    }

    #[test]
    fn buckets_are_zero_then_quarters_closed_above() {
        let rows: &[(f64, Option<usize>)] = &[
            (0.0, Some(0)),
            (-0.0, Some(0)),
            (1e-9, Some(1)),
            (0.25, Some(1)),
            (0.250_001, Some(2)),
            (0.5, Some(2)),
            (2.0 / 3.0, Some(3)),
            (0.75, Some(3)),
            (0.76, Some(4)),
            (1.0, Some(4)),
            (1.01, None),
            (-0.1, None),
            (f64::NAN, None),
            (f64::INFINITY, None),
        ];
        for &(overlap, want) in rows {
            assert_eq!(bucket_of(overlap), want, "{overlap}");
        }
    }

    #[test]
    fn shares_by_origin_and_metrics_by_overlap() {
        let records = vec![
            with(
                "a",
                "bm25",
                1.0,
                &["same_file", "same_dir", "imported"],
                Some(1.0),
            ),
            with("b", "bm25", 0.0, &["elsewhere"], Some(0.0)),
            with("c", "bm25", 0.5, &["same_file"], Some(0.9)),
            with("d", "bm25", 1.0, &[], None),
            // An error's chunks count; it is left out of the buckets.
            RunRecord {
                chunks: vec![chunk("imported")],
                overlap: Some(0.5),
                ..errored("e", "bm25")
            },
            with("a", "none", 0.0, &[], None),
            // A run file written before origins: no provenance for it.
            record("a", "old", 1.0),
        ];
        let p = provenance(&records);
        assert_eq!(p.keys().collect::<Vec<_>>(), ["bm25"]);
        let bm25 = &p["bm25"];
        assert_eq!(bm25.chunks, 6);
        let shares: Vec<(&str, f64)> = bm25.origins.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            shares,
            [
                ("elsewhere", 1.0 / 6.0),
                ("imported", 2.0 / 6.0),
                ("same_dir", 1.0 / 6.0),
                ("same_file", 2.0 / 6.0),
            ]
        );
        let buckets: Vec<(&str, usize, Option<f64>, Option<f64>)> = bm25
            .by_overlap
            .iter()
            .map(|b| (b.bucket.as_str(), b.n, b.em, b.es))
            .collect();
        // testdata's records: `em` = quality (×100 shown), `es` = 100 × quality.
        assert_eq!(
            buckets,
            [
                ("0", 1, Some(0.0), Some(0.0)),
                ("(0, 0.25]", 0, None, None),
                ("(0.25, 0.5]", 0, None, None),
                ("(0.5, 0.75]", 0, None, None),
                ("(0.75, 1]", 2, Some(75.0), Some(75.0)),
            ]
        );
        assert_eq!(bm25.unmeasured, 1);
        assert!(provenance(&[record("a", "bm25", 1.0)]).is_empty());
    }

    #[test]
    fn repoeval_metrics_are_shown_as_percentages() {
        let mut r = with("a", "bm25", 1.0, &["elsewhere"], Some(0.3));
        r.format = "repoeval".into();
        r.metrics = [("em".to_string(), 1.0), ("es".to_string(), 0.5)]
            .into_iter()
            .collect();
        let p = provenance(&[r]);
        let bucket = &p["bm25"].by_overlap[2];
        assert_eq!(
            (bucket.n, bucket.em, bucket.es),
            (1, Some(100.0), Some(50.0))
        );
    }

    #[test]
    fn markdown_and_html_sections_only_when_records_have_them() {
        use crate::bench::runfile::reader::Run;
        use crate::report::bootstrap::Bootstrap;
        use crate::report::build::build_report;
        use crate::report::markdown::report_markdown;
        let run = |records| Run {
            path: "run.jsonl".into(),
            records,
            warnings: Vec::new(),
        };
        let with_them = run(vec![
            with("a", "none", 0.0, &[], None),
            with(
                "a",
                "bm25",
                1.0,
                &["same_file", "imported", "imported"],
                Some(1.0),
            ),
            with("b", "none", 0.0, &[], None),
            with("b", "bm25", 0.0, &["elsewhere"], Some(0.25)),
        ]);
        let report = build_report(&with_them, &Bootstrap::default());
        let text = report_markdown(&report);
        let section = text
            .split("## Where the context comes from")
            .nth(1)
            .expect("the section");
        for row in [
            "| retriever | chunks | same_file | same_dir | imported | elsewhere |",
            "| bm25 | 4 | 25.0% | 0.0% | 50.0% | 25.0% |",
            "| bm25 | 0 | 0 | – | – |",
            "| bm25 | (0, 0.25] | 1 | 0.00 | 0.00 |",
            "| bm25 | (0.75, 1] | 1 | 100.00 | 100.00 |",
            "| bm25 | unmeasured | 0 | – | – |",
        ] {
            assert!(section.lines().any(|l| l == row), "{row} in\n{section}");
        }
        assert!(!section.contains("| none"), "{section}");
        let page = crate::report::render_html(&with_them, &report);
        for part in [
            "id=\"provenance\"",
            "href=\"#provenance\"",
            "chunks by origin",
            "em by identifier overlap",
            "es by identifier overlap",
            "<td class=\"t\">(0.75, 1]</td><td>1</td><td>100.00</td>",
            "score 1.0000 · imported",
        ] {
            assert!(page.contains(part), "{part}");
        }
        let without = run(vec![record("a", "none", 0.0), record("a", "bm25", 1.0)]);
        let report = build_report(&without, &Bootstrap::default());
        assert!(!report_markdown(&report).contains("Where the context comes from"));
        assert!(!crate::report::render_html(&without, &report).contains("id=\"provenance\""));
    }
}
