//! Benchmark-level numbers: CrossCodeEval's `results.json` and RepoCoder's per-repository means.

use std::collections::BTreeMap;

use super::MetricsError;
use super::cceval::CcevalScores;
use super::pyround::round_to;

/// Which edit similarity a CrossCodeEval aggregate averages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EsBackend {
    /// fuzzywuzzy over difflib, as the official requirements install it: the official number.
    Difflib,
    /// fuzzywuzzy with python-Levenshtein installed (`es_with_python_levenshtein`).
    PythonLevenshtein,
}

/// The six numbers of one scored CrossCodeEval completion, as the official
/// `detailed_results.json` names them (`em` and `id_em` are 0 or 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcevalRow {
    pub em: f64,
    pub es: f64,
    pub id_em: f64,
    pub id_precision: f64,
    pub id_recall: f64,
    pub id_f1: f64,
}

impl CcevalRow {
    /// The numbers under their official names, in `results.json` order.
    pub fn named(&self) -> [(&'static str, f64); 6] {
        [
            ("em", self.em),
            ("es", self.es),
            ("id_em", self.id_em),
            ("id_precision", self.id_precision),
            ("id_recall", self.id_recall),
            ("id_f1", self.id_f1),
        ]
    }
}

impl CcevalScores {
    /// This completion's row, with the edit similarity of `backend`.
    pub fn row(&self, backend: EsBackend) -> CcevalRow {
        CcevalRow {
            em: f64::from(u8::from(self.em)),
            es: match backend {
                EsBackend::Difflib => self.es,
                EsBackend::PythonLevenshtein => self.es_with_python_levenshtein,
            },
            id_em: f64::from(u8::from(self.id_em)),
            id_precision: self.id_precision,
            id_recall: self.id_recall,
            id_f1: self.id_f1,
        }
    }
}

/// CrossCodeEval's `results.json`: percentages rounded to 2 decimals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcevalAggregate {
    pub em: f64,
    pub es: f64,
    pub id_em: f64,
    pub id_precision: f64,
    pub id_recall: f64,
    pub id_f1: f64,
    /// The number of rows.
    pub total: usize,
}

/// Aggregates rows as `compute_metric_stmt` does, float operation for float operation:
/// `round(count / N * 100, 2)` for `em`, `round(sum / N, 2)` for `es` (already 0..100),
/// `round(sum / N * 100, 2)` for the identifier metrics, with sums taken left to right (CPython
/// 3.11's `sum`) and Python's `round` on binary floats.
///
/// # Errors
///
/// [`MetricsError::NoRows`] for an empty slice (the official code divides by zero).
pub fn cceval_aggregate(rows: &[CcevalRow]) -> Result<CcevalAggregate, MetricsError> {
    if rows.is_empty() {
        return Err(MetricsError::NoRows);
    }
    let n = rows.len() as f64;
    let sum = |field: fn(&CcevalRow) -> f64| rows.iter().map(field).fold(0.0, |acc, x| acc + x);
    let percent = |field: fn(&CcevalRow) -> f64| round_to(sum(field) / n * 100.0, 2);
    Ok(CcevalAggregate {
        em: percent(|r| r.em),
        es: round_to(sum(|r| r.es) / n, 2),
        id_em: percent(|r| r.id_em),
        id_precision: percent(|r| r.id_precision),
        id_recall: percent(|r| r.id_recall),
        id_f1: percent(|r| r.id_f1),
        total: rows.len(),
    })
}

/// One repository's mean in RepoCoder's `compute_score_by_repo_with_metadata`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RepoMean {
    /// `round(sum(values) / len(values), 4)`.
    pub mean: f64,
    /// How many cases the repository has.
    pub count: usize,
}

/// The repository of a RepoEval task id: the part before the first `/`
/// (`task_id.split('/')[0]`).
pub fn repoeval_repository(task_id: &str) -> &str {
    task_id.split('/').next().unwrap_or(task_id)
}

/// Per-repository means of `(repository, value)` pairs, as RepoCoder reports them: values
/// summed left to right in the given order, divided by the count, rounded to 4 decimals with
/// Python's `round`. EM values are 0 or 1; ES values 0..=1. Sorted by repository name.
pub fn repoeval_by_repository<'a>(
    values: impl IntoIterator<Item = (&'a str, f64)>,
) -> BTreeMap<String, RepoMean> {
    let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for (repository, value) in values {
        let entry = sums.entry(repository.to_string()).or_insert((0.0, 0));
        entry.0 += value;
        entry.1 += 1;
    }
    sums.into_iter()
        .map(|(repository, (sum, count))| {
            let mean = round_to(sum / count as f64, 4);
            (repository, RepoMean { mean, count })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(em: f64, es: f64, id: f64) -> CcevalRow {
        CcevalRow {
            em,
            es,
            id_em: em,
            id_precision: id,
            id_recall: id,
            id_f1: id,
        }
    }

    #[test]
    fn cceval_aggregate_rounds_like_python() {
        // Values from CPython 3.11: round(1/3*100, 2) == 33.33, round(125/3, 2) == 41.67.
        let rows = [
            row(1.0, 100.0, 0.5),
            row(0.0, 25.0, 0.0),
            row(0.0, 0.0, 0.0),
        ];
        let agg = cceval_aggregate(&rows).expect("rows");
        assert_eq!(agg.em, 33.33);
        assert_eq!(agg.es, 41.67);
        assert_eq!(agg.id_precision, 16.67);
        assert_eq!(agg.total, 3);
        assert_eq!(cceval_aggregate(&[]), Err(MetricsError::NoRows));
    }

    #[test]
    fn repoeval_means_per_repository() {
        assert_eq!(repoeval_repository("CarperAI--trlx/idx"), "CarperAI--trlx");
        assert_eq!(repoeval_repository("plain"), "plain");
        let means = repoeval_by_repository([
            ("r1", 1.0),
            ("r2", 0.5),
            ("r1", 0.0),
            ("r1", 0.0),
            ("r2", 0.00015),
        ]);
        assert_eq!(
            means["r1"],
            RepoMean {
                mean: 0.3333,
                count: 3
            }
        );
        // CPython 3.11: round((0.5 + 0.00015) / 2, 4) == 0.2501.
        assert_eq!(means["r2"].mean, 0.2501);
        assert_eq!(means.len(), 2);
    }
}
