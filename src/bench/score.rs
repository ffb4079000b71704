//! Scoring one prediction of a case with its benchmark's own metrics.

use std::collections::BTreeMap;

use super::case::{Case, CaseFormat};

/// The case's metrics for `prediction` (the raw model output: the benchmarks' scripts cut it
/// themselves), named as the benchmark's scripts name them.
pub fn score(case: &Case, prediction: &str) -> BTreeMap<String, f64> {
    let _ = (case.format == CaseFormat::Cceval, prediction);
    BTreeMap::new()
}
