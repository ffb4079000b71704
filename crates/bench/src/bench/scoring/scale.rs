//! Each benchmark's own way of showing its metrics: the scale (CrossCodeEval and history ×100,
//! RepoEval 0..1), the decimals of its official aggregates, the order of its metrics and of
//! history cases' line categories. The run's live totals and every report show metrics this way.

use crate::bench::cases::history::Category;
use crate::bench::runfile::record::RunRecord;
use crossfile_engine::choice::Choice;

/// The metrics of the benchmarks, in the order tables show them; others follow by name.
const METRIC_ORDER: &[&str] = &[
    "em",
    "es",
    "chrf",
    "logprob",
    "id_em",
    "id_precision",
    "id_recall",
    "id_f1",
];

/// The factor a stored metric is multiplied by for display, the benchmark's own reporting scale:
/// CrossCodeEval's `results.json` shows `em` and the identifier metrics ×100 and `es` as stored
/// (already 0..100), and so are history cases' (CrossCodeEval lines) shown; RepoEval (RepoCoder's
/// `compute_score.py`) shows `em` and `es` as 0..1.
pub fn display_factor(format: &str, metric: &str) -> f64 {
    match (format, metric) {
        ("cceval" | "history", "em" | "id_em" | "id_precision" | "id_recall" | "id_f1") => 100.0,
        _ => 1.0,
    }
}

/// The top of a metric's display scale, when it is known.
pub fn display_max(format: &str, metric: &str) -> Option<f64> {
    match (format, metric) {
        ("cceval" | "history", m) if METRIC_ORDER.contains(&m) => Some(100.0),
        ("repoeval", "em" | "es") => Some(1.0),
        ("repoeval", "chrf") => Some(100.0),
        ("evocodebench", m) if m.starts_with("pass@") || m.starts_with("recall@") => Some(1.0),
        _ => None,
    }
}

/// Decimal places a metric of `format` is shown with (the official aggregates' rounding).
pub fn display_decimals(format: &str) -> usize {
    if matches!(format, "repoeval" | "evocodebench") {
        4
    } else {
        2
    }
}

/// One sentence saying which scale a format's metrics are shown in.
pub fn scale_note(format: &str) -> String {
    match format {
        "cceval" => "cceval: em and id_* ×100 (0..100) as in CrossCodeEval's results.json; \
                     es as scored (0..100); chrf as sacrebleu scores it (0..100)"
            .to_string(),
        "history" => "history: scored as CrossCodeEval lines, em and id_* ×100 (0..100), es as \
                      scored (0..100), chrf as sacrebleu scores it (0..100)"
            .to_string(),
        "repoeval" => {
            "repoeval: em and es as 0..1, as RepoCoder's compute_score.py prints them; chrf as \
             sacrebleu scores it (0..100)"
                .to_string()
        }
        "evocodebench" => "evocodebench: pass@k and recall@k as 0..1, each pair's value the \
                           case's unbiased estimate over its samples (so the mean is the \
                           benchmark's Pass@k)"
            .to_string(),
        other => format!("{other}: metrics as stored"),
    }
}

/// Sorts metric names: the benchmarks' metrics in their usual order, then others by name.
pub fn sort_metrics(names: &mut [String]) {
    names.sort_by_key(|name| {
        let rank = METRIC_ORDER
            .iter()
            .position(|m| m == name)
            .unwrap_or(METRIC_ORDER.len());
        (rank, name.clone())
    });
}

/// Sorts line categories (history cases') in Long Code Arena's order, the precedence a line's
/// category is chosen by (`committed`, `inproject`, `infile`, `common`, `non_informative`,
/// `random`); names it does not know follow by name.
pub fn sort_categories(names: &mut [String]) {
    names.sort_by_key(|name| {
        let rank = name
            .parse::<Category>()
            .ok()
            .and_then(|c| Category::all().iter().position(|a| *a == c))
            .unwrap_or(Category::all().len());
        (rank, name.clone())
    });
}

/// A record's metric in display scale.
pub fn display_value(record: &RunRecord, metric: &str) -> Option<f64> {
    record
        .metrics
        .get(metric)
        .map(|v| v * display_factor(&record.format, metric))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_follow_the_official_scripts() {
        assert_eq!(display_factor("cceval", "em"), 100.0);
        assert_eq!(display_factor("cceval", "es"), 1.0);
        assert_eq!(display_factor("cceval", "id_f1"), 100.0);
        assert_eq!(display_factor("repoeval", "em"), 1.0);
        assert_eq!(display_factor("repoeval", "es"), 1.0);
        assert_eq!(display_max("repoeval", "es"), Some(1.0));
        assert_eq!(display_max("other", "x"), None);
        assert_eq!(display_max("evocodebench", "pass@3"), Some(1.0));
        assert_eq!(display_factor("evocodebench", "recall@1"), 1.0);
        assert_eq!(display_decimals("evocodebench"), 4);
        assert_eq!(display_factor("history", "em"), 100.0);
        assert_eq!(display_factor("history", "es"), 1.0);
        assert_eq!(display_max("history", "id_f1"), Some(100.0));
        assert_eq!(display_decimals("history"), 2);
    }

    #[test]
    fn category_order_is_long_code_arenas() {
        let mut names: Vec<String> = [
            "random",
            "zeta",
            "common",
            "commited",
            "inproject",
            "infile",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        sort_categories(&mut names);
        assert_eq!(
            names,
            [
                "commited",
                "inproject",
                "infile",
                "common",
                "random",
                "zeta"
            ]
        );
    }

    #[test]
    fn metric_order() {
        let mut names: Vec<String> = ["zeta", "id_f1", "es", "em", "alpha"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        sort_metrics(&mut names);
        assert_eq!(names, ["em", "es", "id_f1", "alpha", "zeta"]);
    }
}
