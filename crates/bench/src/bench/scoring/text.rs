//! Scoring one prediction of a case with its benchmark's own metrics.

use std::collections::BTreeMap;

use crate::bench::cases::{Case, CaseFormat};
use crossfile_engine::metrics::{
    CcevalInput, CcevalScores, MetricsError, cceval_metrics, repoeval_metrics,
};

/// The case's metrics for `prediction` — the raw model output, since the benchmarks' scripts
/// cut it themselves — named as the benchmark's scripts name them: CrossCodeEval `em`, `es`,
/// `id_em`, `id_precision`, `id_recall`, `id_f1` (and `es_with_python_levenshtein`), and the same
/// for history cases, which are CrossCodeEval lines; RepoEval `em`, `es`; and for both `chrf`
/// (sacrebleu's chrF of the texts ES compares, 0..100), which neither benchmark's scripts have.
pub fn score(case: &Case, prediction: &str) -> Result<BTreeMap<String, f64>, MetricsError> {
    let bool_value = |b: bool| if b { 1.0 } else { 0.0 };
    let pairs: Vec<(&str, f64)> = match case.format {
        CaseFormat::Cceval | CaseFormat::History => {
            let s = cceval_scores(case, prediction);
            vec![
                ("em", bool_value(s.em)),
                ("es", s.es),
                ("es_with_python_levenshtein", s.es_with_python_levenshtein),
                ("chrf", s.chrf),
                ("id_em", bool_value(s.id_em)),
                ("id_precision", s.id_precision),
                ("id_recall", s.id_recall),
                ("id_f1", s.id_f1),
            ]
        }
        CaseFormat::Repoeval => {
            let s = repoeval_metrics(prediction, &case.reference)?;
            vec![("em", bool_value(s.em)), ("es", s.es), ("chrf", s.chrf)]
        }
    };
    Ok(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// Aggregate scores of predictions, as the benchmark's scripts report them: CrossCodeEval's
/// (and history cases') `results.json` per language (`em`, `es`, `id_*` in percent, rounded to 2 decimals, and
/// `total`); RepoEval's per-repository means (`em`, `es` in 0..1, rounded to 4 decimals).
#[derive(Debug, Default)]
pub struct ScoreTable {
    /// Group (language, or repository) → metric → value; `total` counts the cases.
    pub groups: BTreeMap<String, BTreeMap<String, f64>>,
    /// Cases that have no prediction (left out of every mean).
    pub unpredicted: Vec<String>,
    /// Predictions whose `task_id` names no case.
    pub unknown: Vec<String>,
}

/// CrossCodeEval's metrics of `prediction` for `case`.
fn cceval_scores(case: &Case, prediction: &str) -> CcevalScores {
    cceval_metrics(&CcevalInput {
        language: case.language,
        prompt: &case.prompt,
        prediction,
        groundtruth: &case.reference,
    })
}

/// Scores `predictions` against `cases` (matched by case id) and aggregates them.
pub fn score_predictions(
    format: CaseFormat,
    cases: &[Case],
    predictions: &[crate::bench::Prediction],
) -> Result<ScoreTable, MetricsError> {
    use crossfile_engine::metrics::{
        EsBackend, cceval_aggregate, repoeval_by_repository, repoeval_repository,
    };
    let by_id: BTreeMap<&str, &str> = predictions
        .iter()
        .map(|p| (p.task_id.as_str(), p.pred.as_str()))
        .collect();
    let known: std::collections::HashSet<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    let mut table = ScoreTable {
        unknown: predictions
            .iter()
            .filter(|p| !known.contains(p.task_id.as_str()))
            .map(|p| p.task_id.clone())
            .collect(),
        ..ScoreTable::default()
    };
    let mut cceval_rows: BTreeMap<&str, [Vec<crossfile_engine::metrics::CcevalRow>; 2]> =
        BTreeMap::new();
    let mut repo_values: Vec<(&str, f64, f64)> = Vec::new();
    for case in cases {
        let Some(&prediction) = by_id.get(case.id.as_str()) else {
            table.unpredicted.push(case.id.clone());
            continue;
        };
        match format {
            CaseFormat::Cceval | CaseFormat::History => {
                let s = cceval_scores(case, prediction);
                let rows = cceval_rows.entry(case.language.name()).or_default();
                rows[0].push(s.row(EsBackend::Difflib));
                rows[1].push(s.row(EsBackend::PythonLevenshtein));
            }
            CaseFormat::Repoeval => {
                let s = repoeval_metrics(prediction, &case.reference)?;
                let em = if s.em { 1.0 } else { 0.0 };
                repo_values.push((repoeval_repository(&case.task_id), em, s.es));
            }
        }
    }
    for (language, [difflib, levenshtein]) in cceval_rows {
        let a = cceval_aggregate(&difflib)?;
        let l = cceval_aggregate(&levenshtein)?;
        let group: BTreeMap<String, f64> = [
            ("em", a.em),
            ("es", a.es),
            ("id_em", a.id_em),
            ("id_precision", a.id_precision),
            ("id_recall", a.id_recall),
            ("id_f1", a.id_f1),
            ("total", a.total as f64),
            ("es_with_python_levenshtein", l.es),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        table.groups.insert(language.to_string(), group);
    }
    let ems = repoeval_by_repository(repo_values.iter().map(|&(r, em, _)| (r, em)));
    let ess = repoeval_by_repository(repo_values.iter().map(|&(r, _, es)| (r, es)));
    for (repository, em) in ems {
        let es = ess.get(&repository).map_or(f64::NAN, |m| m.mean);
        let group = [("em", em.mean), ("es", es), ("total", em.count as f64)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        table.groups.insert(repository, group);
    }
    Ok(table)
}
