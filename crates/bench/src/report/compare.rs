//! Paired comparisons: two retrievers of one run, or two runs, over the cases both scored —
//! mean difference B − A of each metric with a bootstrap interval, wins, ties and losses.
//!
//! Pairing rule for two runs ([`compare_runs`]): records pair by (case id, retriever). When each
//! run has exactly one retriever and their names differ, they pair by case id alone (the usual
//! "same cases, another retriever or model" comparison). A pair counts only when both records
//! are scored; pairs with an error on either side are counted, not compared.

use std::collections::HashMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::bootstrap::{Bootstrap, Interval, mean};
use super::summary::retrievers;
use crate::bench::runfile::reader::Run;
use crate::bench::runfile::record::RunRecord;
use crate::bench::scoring::scale::{display_value, sort_metrics};

/// The label of the group that pools every language of a format.
pub const ALL_LANGUAGES: &str = "all";

/// One paired comparison of B against A.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Comparison {
    pub format: String,
    /// A language, or [`ALL_LANGUAGES`].
    pub language: String,
    /// What A and B are: retriever names.
    pub a: String,
    pub b: String,
    pub a_upper_bound: bool,
    pub b_upper_bound: bool,
    /// The line category the cases are of, for a comparison within one ([`super::category`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Cases both sides scored: the differences are over these.
    pub pairs: usize,
    /// Shared cases left out because A's or B's record is an error.
    pub excluded: usize,
    pub metrics: Vec<MetricDiff>,
}

/// One metric of a [`Comparison`], in display scale.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetricDiff {
    pub name: String,
    pub n: usize,
    pub mean_a: f64,
    pub mean_b: f64,
    /// Mean of B − A per case.
    pub diff: f64,
    pub ci: Option<Interval>,
    /// Cases where B is higher, equal, lower.
    pub wins: usize,
    pub ties: usize,
    pub losses: usize,
}

/// Records of one case on both sides.
#[derive(Clone, Copy, Debug)]
pub struct Pair<'a> {
    pub a: &'a RunRecord,
    pub b: &'a RunRecord,
}

/// Compares the pairs; the labels come from the first pair (empty if there is none).
pub fn compare_pairs(
    format: &str,
    language: &str,
    pairs: &[Pair<'_>],
    bootstrap: &Bootstrap,
) -> Comparison {
    let scored: Vec<&Pair<'_>> = pairs
        .iter()
        .filter(|p| p.a.error.is_none() && p.b.error.is_none())
        .collect();
    // Every metric both sides scored at some pair, each compared over the pairs that have it on
    // both sides (a likelihood a prompt too long for the context left out drops that pair, not
    // the metric).
    let mut names: Vec<String> = scored
        .iter()
        .flat_map(|p| p.a.metrics.keys().filter(|k| p.b.metrics.contains_key(*k)))
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    sort_metrics(&mut names);
    let sides: Vec<(Vec<f64>, Vec<f64>)> = names
        .iter()
        .map(|name| {
            scored
                .iter()
                .filter_map(|p| Some((display_value(p.a, name)?, display_value(p.b, name)?)))
                .unzip()
        })
        .collect();
    let diffs: Vec<Vec<f64>> = sides
        .iter()
        .map(|(a, b)| a.iter().zip(b).map(|(x, y)| y - x).collect())
        .collect();
    let slices: Vec<&[f64]> = diffs.iter().map(Vec::as_slice).collect();
    let intervals = bootstrap.mean_intervals(&slices);
    let metrics = names
        .into_iter()
        .zip(sides.iter().zip(&diffs).zip(intervals))
        .map(|(name, (((a, b), diffs), ci))| MetricDiff {
            n: diffs.len(),
            mean_a: mean(a).unwrap_or(0.0),
            mean_b: mean(b).unwrap_or(0.0),
            diff: mean(diffs).unwrap_or(0.0),
            ci,
            wins: diffs.iter().filter(|d| **d > 0.0).count(),
            ties: diffs.iter().filter(|d| **d == 0.0).count(),
            losses: diffs.iter().filter(|d| **d < 0.0).count(),
            name,
        })
        .collect();
    let first = pairs.first();
    Comparison {
        format: format.to_string(),
        language: language.to_string(),
        a: first.map(|p| p.a.retriever.clone()).unwrap_or_default(),
        b: first.map(|p| p.b.retriever.clone()).unwrap_or_default(),
        a_upper_bound: pairs.iter().any(|p| p.a.upper_bound),
        b_upper_bound: pairs.iter().any(|p| p.b.upper_bound),
        category: None,
        pairs: scored.len(),
        excluded: pairs.len() - scored.len(),
        metrics,
    }
}

/// Every two retrievers of a run compared over their shared cases, per (format, language) and,
/// when a format has several languages, over all of them ([`ALL_LANGUAGES`]). A is the retriever
/// that appears first in the run.
pub fn pairwise(records: &[RunRecord], bootstrap: &Bootstrap) -> Vec<Comparison> {
    let names = retrievers(records);
    let mut jobs: Vec<(String, String, Vec<Pair<'_>>)> = Vec::new();
    let all: Vec<&RunRecord> = records.iter().collect();
    for (format, language, group) in language_groups(&all, |r| r) {
        for pairs in retriever_pairs(&group, &names) {
            jobs.push((format.clone(), language.clone(), pairs));
        }
    }
    jobs.par_iter()
        .map(|(format, language, pairs)| compare_pairs(format, language, pairs, bootstrap))
        .collect()
}

/// Every two retrievers of `names` (A the earlier) with the cases of `group` both have, paired;
/// retrievers that share no case are left out.
pub fn retriever_pairs<'a>(group: &[&'a RunRecord], names: &[String]) -> Vec<Vec<Pair<'a>>> {
    let mut out = Vec::new();
    for (i, a) in names.iter().enumerate() {
        let by_case: HashMap<&str, &RunRecord> = group
            .iter()
            .filter(|r| &r.retriever == a)
            .map(|r| (r.case_id.as_str(), *r))
            .collect();
        for b in &names[i + 1..] {
            let pairs: Vec<Pair<'a>> = group
                .iter()
                .filter(|r| &r.retriever == b)
                .filter_map(|r| by_case.get(r.case_id.as_str()).map(|a| Pair { a, b: r }))
                .collect();
            if !pairs.is_empty() {
                out.push(pairs);
            }
        }
    }
    out
}

/// The items of each (format, language), sorted, then of each format with several languages as
/// [`ALL_LANGUAGES`]; `record` gives an item's record.
fn language_groups<'a, T: Copy>(
    items: &[T],
    record: impl Fn(T) -> &'a RunRecord,
) -> Vec<(String, String, Vec<T>)> {
    let mut keys: Vec<(&str, &str)> = items
        .iter()
        .map(|&i| {
            let r = record(i);
            (r.format.as_str(), r.language.as_str())
        })
        .collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<(String, String, Vec<T>)> = Vec::new();
    for (index, &(format, language)) in keys.iter().enumerate() {
        let group = items
            .iter()
            .copied()
            .filter(|&i| record(i).format == format && record(i).language == language)
            .collect();
        out.push((format.to_string(), language.to_string(), group));
        let last_of_format = keys.get(index + 1).is_none_or(|next| next.0 != format);
        let several = keys.iter().filter(|k| k.0 == format).count() > 1;
        if last_of_format && several {
            let all = items
                .iter()
                .copied()
                .filter(|&i| record(i).format == format)
                .collect();
            out.push((format.to_string(), ALL_LANGUAGES.to_string(), all));
        }
    }
    out
}

/// How the records of two runs were paired.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Pairing {
    /// By (case id, retriever).
    CaseAndRetriever,
    /// By case id: each run has one retriever, and their names differ.
    Case {
        a_retriever: String,
        b_retriever: String,
    },
}

/// Two runs compared.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunComparison {
    pub a: String,
    pub b: String,
    pub pairing: Pairing,
    pub bootstrap: Bootstrap,
    /// Pairs present in both runs, scored or not.
    pub shared: usize,
    /// Records with no partner in the other run.
    pub only_in_a: usize,
    pub only_in_b: usize,
    /// One comparison per (format, language, retriever), and per (format, retriever) over all
    /// languages when there are several.
    pub comparisons: Vec<Comparison>,
    /// The scored pairs whose `es` changed most, largest |ΔES| first, at most [`TOP_CHANGES`].
    pub changes: Vec<CaseChange>,
    /// How the runs' settings differ beyond what is compared (`n_ctx: 1024 / 2048`, one per
    /// setting); empty when they agree or a run does not say.
    pub settings_differ: Vec<String>,
}

/// How many changed cases a comparison lists.
pub const TOP_CHANGES: usize = 10;

/// A case whose edit similarity changed between the runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseChange {
    pub case_id: String,
    pub language: String,
    pub retriever_a: String,
    pub retriever_b: String,
    /// `es` in display scale, and B − A.
    pub es_a: f64,
    pub es_b: f64,
    pub delta: f64,
    pub reference: String,
    pub suggestion_a: String,
    pub suggestion_b: String,
}

/// Why two runs cannot be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("{a} and {b} share no {what}: nothing to compare")]
    NothingShared { a: String, b: String, what: String },
}

/// Compares run B against run A (see the module doc for the pairing rule).
pub fn compare_runs(
    a: &Run,
    b: &Run,
    bootstrap: &Bootstrap,
) -> Result<RunComparison, CompareError> {
    let a_names = retrievers(&a.records);
    let b_names = retrievers(&b.records);
    let pairing = match (a_names.as_slice(), b_names.as_slice()) {
        ([x], [y]) if x != y => Pairing::Case {
            a_retriever: x.clone(),
            b_retriever: y.clone(),
        },
        _ => Pairing::CaseAndRetriever,
    };
    let key = |r: &RunRecord| match pairing {
        Pairing::Case { .. } => (r.case_id.clone(), String::new()),
        Pairing::CaseAndRetriever => (r.case_id.clone(), r.retriever.clone()),
    };
    let in_a: HashMap<(String, String), &RunRecord> =
        a.records.iter().map(|r| (key(r), r)).collect();
    let pairs: Vec<Pair<'_>> = b
        .records
        .iter()
        .filter_map(|r| in_a.get(&key(r)).map(|ra| Pair { a: ra, b: r }))
        .collect();
    if pairs.is_empty() {
        return Err(CompareError::NothingShared {
            a: a.path.display().to_string(),
            b: b.path.display().to_string(),
            what: match pairing {
                Pairing::Case { .. } => "case id".into(),
                Pairing::CaseAndRetriever => "(case id, retriever) pair".into(),
            },
        });
    }
    let mut labels: Vec<(&str, &str)> = Vec::new();
    for p in &pairs {
        let label = (p.a.retriever.as_str(), p.b.retriever.as_str());
        if !labels.contains(&label) {
            labels.push(label);
        }
    }
    labels.sort_by_key(|(ra, _)| a_names.iter().position(|n| n == ra));
    let mut jobs = Vec::new();
    for (ra, rb) in labels {
        let of_label: Vec<Pair<'_>> = pairs
            .iter()
            .filter(|p| p.a.retriever == ra && p.b.retriever == rb)
            .copied()
            .collect();
        jobs.extend(language_groups(&of_label, |p| p.a));
    }
    let comparisons = jobs
        .par_iter()
        .map(|(format, language, group)| compare_pairs(format, language, group, bootstrap))
        .collect();
    Ok(RunComparison {
        a: a.path.display().to_string(),
        b: b.path.display().to_string(),
        shared: pairs.len(),
        only_in_a: a.records.len() - pairs.len(),
        only_in_b: b.records.len() - pairs.len(),
        changes: top_changes(&pairs),
        settings_differ: settings_differ(a, b),
        pairing,
        bootstrap: *bootstrap,
        comparisons,
    })
}

/// How B's run settings differ from A's (the first record of each that says).
fn settings_differ(a: &Run, b: &Run) -> Vec<String> {
    let first = |run: &Run| run.records.iter().find_map(|r| r.settings.clone());
    match (first(a), first(b)) {
        (Some(a), Some(b)) => a.differences(&b),
        _ => Vec::new(),
    }
}

/// The scored pairs with the largest nonzero |ΔES|, ties by case id and retriever.
fn top_changes(pairs: &[Pair<'_>]) -> Vec<CaseChange> {
    let mut changes: Vec<CaseChange> = pairs
        .iter()
        .filter(|p| p.a.error.is_none() && p.b.error.is_none())
        .filter_map(|p| {
            let es_a = display_value(p.a, "es")?;
            let es_b = display_value(p.b, "es")?;
            (es_a != es_b).then(|| CaseChange {
                case_id: p.b.case_id.clone(),
                language: p.b.language.clone(),
                retriever_a: p.a.retriever.clone(),
                retriever_b: p.b.retriever.clone(),
                es_a,
                es_b,
                delta: es_b - es_a,
                reference: p.b.reference.clone(),
                suggestion_a: p.a.suggestion.clone(),
                suggestion_b: p.b.suggestion.clone(),
            })
        })
        .collect();
    changes.sort_by(|x, y| {
        y.delta
            .abs()
            .total_cmp(&x.delta.abs())
            .then_with(|| x.case_id.cmp(&y.case_id))
            .then_with(|| x.retriever_b.cmp(&y.retriever_b))
    });
    changes.truncate(TOP_CHANGES);
    changes
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::bench::testdata::{errored, record};

    fn run(name: &str, records: Vec<RunRecord>) -> Run {
        Run {
            path: PathBuf::from(name),
            records,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn runs_made_with_other_settings_say_how() {
        let with = |n_ctx: u32| {
            let mut r = record("a", "bm25", 1.0);
            r.settings = Some(crate::bench::testdata::run_settings(n_ctx));
            r
        };
        let same = compare_runs(
            &run("a", vec![with(2048)]),
            &run("b", vec![with(2048)]),
            &Bootstrap::default(),
        )
        .expect("compare");
        assert!(same.settings_differ.is_empty());
        let other = compare_runs(
            &run("a", vec![with(2048)]),
            &run("b", vec![with(1024)]),
            &Bootstrap::default(),
        )
        .expect("compare");
        assert_eq!(other.settings_differ, ["n_ctx: 2048 / 1024"]);
        let unsaid = compare_runs(
            &run("a", vec![record("a", "bm25", 1.0)]),
            &run("b", vec![with(1024)]),
            &Bootstrap::default(),
        )
        .expect("compare");
        assert!(unsaid.settings_differ.is_empty());
    }

    #[test]
    fn pairwise_uses_shared_scored_cases_only() {
        let records = vec![
            record("a", "bm25", 0.0),
            record("b", "bm25", 1.0),
            errored("c", "bm25"),
            record("d", "bm25", 0.0),
            record("a", "jaccard", 1.0),
            record("b", "jaccard", 1.0),
            record("c", "jaccard", 1.0),
        ];
        let comparisons = pairwise(&records, &Bootstrap::default());
        assert_eq!(comparisons.len(), 1);
        let c = &comparisons[0];
        assert_eq!((c.a.as_str(), c.b.as_str()), ("bm25", "jaccard"));
        assert_eq!((c.pairs, c.excluded), (2, 1));
        let em = &c.metrics[0];
        assert_eq!(em.name, "em");
        assert_eq!((em.mean_a, em.mean_b, em.diff), (50.0, 100.0, 50.0));
        assert_eq!((em.wins, em.ties, em.losses), (1, 1, 0));
        let ci = em.ci.expect("interval");
        assert!(ci.low >= 0.0 && ci.high <= 100.0 && ci.low <= 50.0 && 50.0 <= ci.high);
    }

    #[test]
    fn a_metric_some_pairs_lack_is_compared_over_the_pairs_that_have_it() {
        // The reference's likelihood is left out where prompt and reference overflow n_ctx.
        let with_logprob = |case: &str, retriever: &str, logprob: f64| {
            let mut r = record(case, retriever, 1.0);
            r.metrics.insert("logprob".into(), logprob);
            r
        };
        let records = vec![
            with_logprob("a", "none", -2.0),
            with_logprob("b", "none", -1.0),
            record("c", "none", 0.0),
            with_logprob("a", "identifiers", -1.0),
            with_logprob("b", "identifiers", -1.5),
            with_logprob("c", "identifiers", -0.5),
        ];
        let c = &pairwise(&records, &Bootstrap::default())[0];
        assert_eq!(c.pairs, 3);
        let logprob = c
            .metrics
            .iter()
            .find(|m| m.name == "logprob")
            .expect("the likelihood is compared");
        assert_eq!(logprob.n, 2);
        assert_eq!((logprob.mean_a, logprob.mean_b), (-1.5, -1.25));
        assert_eq!((logprob.wins, logprob.losses), (1, 1));
        let em = c.metrics.iter().find(|m| m.name == "em").expect("em");
        assert_eq!((em.n, em.diff), (3, 100.0 / 3.0));
    }

    #[test]
    fn several_languages_get_an_all_group() {
        let mut java = record("j", "bm25", 1.0);
        java.language = "java".into();
        let mut java2 = record("j", "oracle", 1.0);
        java2.language = "java".into();
        let records = vec![
            record("p", "bm25", 0.0),
            java,
            record("p", "oracle", 1.0),
            java2,
        ];
        let comparisons = pairwise(&records, &Bootstrap::default());
        let languages: Vec<&str> = comparisons.iter().map(|c| c.language.as_str()).collect();
        assert_eq!(languages, ["java", "python", "all"]);
        assert_eq!(comparisons[2].pairs, 2);
        assert!(comparisons[2].b_upper_bound);
    }

    #[test]
    fn runs_pair_by_case_and_retriever() {
        let a = run(
            "a.jsonl",
            vec![
                record("x", "bm25", 0.0),
                record("y", "bm25", 1.0),
                record("x", "oracle", 1.0),
            ],
        );
        let b = run(
            "b.jsonl",
            vec![
                record("x", "bm25", 1.0),
                record("z", "bm25", 1.0),
                record("x", "oracle", 1.0),
            ],
        );
        let c = compare_runs(&a, &b, &Bootstrap::default()).expect("comparable");
        assert_eq!(c.pairing, Pairing::CaseAndRetriever);
        assert_eq!((c.shared, c.only_in_a, c.only_in_b), (2, 1, 1));
        assert_eq!(c.comparisons.len(), 2);
        assert_eq!(c.changes.len(), 1);
        assert_eq!(
            (c.changes[0].case_id.as_str(), c.changes[0].delta),
            ("x", 100.0)
        );
    }

    #[test]
    fn single_retriever_runs_with_different_names_pair_by_case() {
        let a = run(
            "a.jsonl",
            vec![record("x", "bm25", 0.0), record("y", "bm25", 1.0)],
        );
        let b = run(
            "b.jsonl",
            vec![record("x", "jaccard", 1.0), record("y", "jaccard", 0.0)],
        );
        let c = compare_runs(&a, &b, &Bootstrap::default()).expect("comparable");
        assert_eq!(
            c.pairing,
            Pairing::Case {
                a_retriever: "bm25".into(),
                b_retriever: "jaccard".into()
            }
        );
        let em = &c.comparisons[0].metrics[0];
        assert_eq!((em.wins, em.ties, em.losses, em.diff), (1, 0, 1, 0.0));
        let ids: Vec<&str> = c.changes.iter().map(|x| x.case_id.as_str()).collect();
        assert_eq!(ids, ["x", "y"], "equal |ΔES| ordered by case id");
    }

    #[test]
    fn nothing_shared_is_an_error() {
        let a = run(
            "a.jsonl",
            vec![record("x", "bm25", 0.0), record("x", "oracle", 0.0)],
        );
        let b = run("b.jsonl", vec![record("y", "bm25", 0.0)]);
        let error = compare_runs(&a, &b, &Bootstrap::default()).expect_err("disjoint");
        assert_eq!(
            error.to_string(),
            "a.jsonl and b.jsonl share no (case id, retriever) pair: nothing to compare"
        );
    }
}
