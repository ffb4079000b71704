//! EM and ES by line category: cases mined from history carry Long Code Arena's category of their
//! line (`committed`, `inproject`, `infile`, `common`, `non_informative`, `random`) in their run
//! records, and retrieval helps some kinds of line and not others. Per category and retriever,
//! the means with bootstrap intervals; per category, every two retrievers compared over the
//! cases both scored, paired as the report's other comparisons are ([`compare_pairs`]).
//!
//! Categories pool every language and format of the run: only history records carry one.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::bootstrap::{Bootstrap, Interval, mean};
use super::compare::{ALL_LANGUAGES, Comparison, Pair, compare_pairs, retriever_pairs};
use super::summary::retrievers;
use crate::bench::runfile::record::RunRecord;
use crate::bench::scoring::scale::{display_value, sort_categories};

/// The metrics shown by category.
pub const CATEGORY_METRICS: [&str; 3] = ["em", "es", "chrf"];

/// One retriever's records of one category.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CategoryCell {
    /// Scored records: the means are over these.
    pub n: usize,
    /// Records with an `error`, left out of the means.
    pub errors: usize,
    /// Means in the benchmark's display scale (`em` ×100, `es` 0..100 for history cases);
    /// `None` when nothing was scored.
    pub em: Option<f64>,
    pub es: Option<f64>,
    /// sacrebleu's chrF, 0..100 (absent from run files written before it was recorded).
    pub chrf: Option<f64>,
    pub em_ci: Option<Interval>,
    pub es_ci: Option<Interval>,
    pub chrf_ci: Option<Interval>,
}

/// `{category: {retriever: cell}}`; empty when no record has a category.
pub type ByCategory = BTreeMap<String, BTreeMap<String, CategoryCell>>;

/// The categories of `records`, in Long Code Arena's order.
pub fn categories(records: &[RunRecord]) -> Vec<String> {
    let mut out: Vec<String> = records.iter().filter_map(|r| r.category.clone()).collect();
    out.sort();
    out.dedup();
    sort_categories(&mut out);
    out
}

/// Each category's cells, one per retriever that has records of it.
pub fn by_category(records: &[RunRecord], bootstrap: &Bootstrap) -> ByCategory {
    let names = retrievers(records);
    let mut jobs: Vec<(String, String, Vec<&RunRecord>)> = Vec::new();
    for category in categories(records) {
        for retriever in &names {
            let group: Vec<&RunRecord> = records
                .iter()
                .filter(|r| r.category.as_ref() == Some(&category) && &r.retriever == retriever)
                .collect();
            if !group.is_empty() {
                jobs.push((category.clone(), retriever.clone(), group));
            }
        }
    }
    let cells: Vec<(String, String, CategoryCell)> = jobs
        .into_par_iter()
        .map(|(category, retriever, group)| (category, retriever, cell(&group, bootstrap)))
        .collect();
    let mut out = ByCategory::new();
    for (category, retriever, cell) in cells {
        out.entry(category).or_default().insert(retriever, cell);
    }
    out
}

fn cell(group: &[&RunRecord], bootstrap: &Bootstrap) -> CategoryCell {
    let scored: Vec<&RunRecord> = group
        .iter()
        .copied()
        .filter(|r| r.error.is_none())
        .collect();
    let [em, es, chrf] = CATEGORY_METRICS.map(|metric| {
        scored
            .iter()
            .filter_map(|r| display_value(r, metric))
            .collect::<Vec<f64>>()
    });
    let [em_ci, es_ci, chrf_ci] = match bootstrap.mean_intervals(&[&em, &es, &chrf])[..] {
        [em_ci, es_ci, chrf_ci] => [em_ci, es_ci, chrf_ci],
        _ => [None, None, None],
    };
    CategoryCell {
        n: scored.len(),
        errors: group.len() - scored.len(),
        em: mean(&em),
        es: mean(&es),
        chrf: mean(&chrf),
        em_ci,
        es_ci,
        chrf_ci,
    }
}

/// Every two retrievers (A first in the run) compared within each category over the cases both
/// scored: `em` and `es`, B − A with a bootstrap interval of the paired differences. Each
/// comparison's `category` names its category and its `language` is the category's one
/// language, or [`ALL_LANGUAGES`].
pub fn category_comparisons(records: &[RunRecord], bootstrap: &Bootstrap) -> Vec<Comparison> {
    let names = retrievers(records);
    let mut jobs: Vec<(String, String, String, Vec<Pair<'_>>)> = Vec::new();
    for category in categories(records) {
        let of: Vec<&RunRecord> = records
            .iter()
            .filter(|r| r.category.as_ref() == Some(&category))
            .collect();
        let mut languages: Vec<&str> = of.iter().map(|r| r.language.as_str()).collect();
        languages.sort_unstable();
        languages.dedup();
        let language = match languages[..] {
            [one] => one.to_string(),
            _ => ALL_LANGUAGES.to_string(),
        };
        let format = of.first().map(|r| r.format.clone()).unwrap_or_default();
        for pairs in retriever_pairs(&of, &names) {
            jobs.push((category.clone(), format.clone(), language.clone(), pairs));
        }
    }
    jobs.par_iter()
        .map(|(category, format, language, pairs)| {
            let mut c = compare_pairs(format, language, pairs, bootstrap);
            c.metrics
                .retain(|m| CATEGORY_METRICS.contains(&m.name.as_str()));
            Comparison {
                category: Some(category.clone()),
                ..c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testdata::{errored, record};

    fn of(category: &str, mut r: RunRecord) -> RunRecord {
        r.format = "history".into();
        r.category = Some(category.into());
        r
    }

    #[test]
    fn cells_and_paired_differences_per_category() {
        let records = vec![
            of("inproject", record("a", "none", 0.0)),
            of("inproject", record("b", "none", 0.0)),
            of("common", record("c", "none", 1.0)),
            of("inproject", record("a", "bm25", 1.0)),
            of("inproject", errored("b", "bm25")),
            of("common", record("c", "bm25", 1.0)),
            record("d", "bm25", 1.0),
        ];
        assert_eq!(categories(&records), ["inproject", "common"]);
        let cells = by_category(&records, &Bootstrap::default());
        let inproject = &cells["inproject"];
        let bm25 = &inproject["bm25"];
        assert_eq!(
            (bm25.n, bm25.errors, bm25.em, bm25.es),
            (1, 1, Some(100.0), Some(100.0))
        );
        let none = &inproject["none"];
        assert_eq!((none.n, none.em), (2, Some(0.0)));
        assert!(none.em_ci.is_some_and(|ci| ci.low == 0.0 && ci.high == 0.0));
        assert_eq!(cells["common"].len(), 2);
        let compared = category_comparisons(&records, &Bootstrap::default());
        let labels: Vec<(Option<&str>, &str, &str, usize, usize)> = compared
            .iter()
            .map(|c| {
                (
                    c.category.as_deref(),
                    c.a.as_str(),
                    c.b.as_str(),
                    c.pairs,
                    c.excluded,
                )
            })
            .collect();
        assert_eq!(
            labels,
            [
                (Some("inproject"), "none", "bm25", 1, 1),
                (Some("common"), "none", "bm25", 1, 0)
            ]
        );
        let metrics: Vec<(&str, f64)> = compared[0]
            .metrics
            .iter()
            .map(|m| (m.name.as_str(), m.diff))
            .collect();
        assert_eq!(metrics, [("em", 100.0), ("es", 100.0)]);
        assert_eq!(compared[0].format, "history");
        assert_eq!(compared[0].language, "python");
    }

    #[test]
    fn a_run_without_categories_has_none() {
        let records = vec![record("a", "none", 1.0), record("a", "bm25", 0.0)];
        assert!(by_category(&records, &Bootstrap::default()).is_empty());
        assert!(category_comparisons(&records, &Bootstrap::default()).is_empty());
    }
}
