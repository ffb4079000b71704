//! EvoCodeBench's Recall@k: the share of a case's reference dependencies that a generated body
//! uses (found by `deps` in the case's file), best over the first k samples; over all
//! dependencies and for each kind apart.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::bench::cases::evocodebench::ExecCase;
use crate::deps::{Resolver, Site};
use crossfile_engine::metrics::recall_at_k;

/// The dependency kinds, as the records name them.
pub const KINDS: [&str; 3] = ["intra_class", "intra_file", "cross_file"];

/// One sample's recall: over all the case's dependencies and per kind (`None` where the case has
/// none of that kind).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleRecall {
    pub all: Option<f64>,
    pub by_kind: BTreeMap<String, f64>,
}

/// The reference dependencies of `case` of `kind` (`None`: all).
pub fn reference(case: &ExecCase, kind: Option<&str>) -> Vec<String> {
    let d = &case.dependency;
    match kind {
        None => d.all().cloned().collect(),
        Some("intra_class") => d.intra_class.clone(),
        Some("intra_file") => d.intra_file.clone(),
        Some("cross_file") => d.cross_file.clone(),
        Some(_) => Vec::new(),
    }
}

/// Each body's recall against `case`'s dependencies, read from its file in `repos`; `None` when
/// the case has no dependency (recall is undefined) or its file cannot be read or parsed.
pub fn sample_recalls(case: &ExecCase, repos: &Path, bodies: &[&str]) -> Option<Vec<SampleRecall>> {
    let all = reference(case, None);
    if all.is_empty() {
        return None;
    }
    let text = std::fs::read_to_string(case.file_in(repos)).ok()?;
    let resolver = Resolver::new(&Site {
        file_text: &text,
        signature: case.signature,
        namespace: &case.namespace,
    })?;
    Some(
        bodies
            .iter()
            .map(|body| {
                let used: Vec<String> = resolver.dependencies(body).into_iter().collect();
                let share = |reference: &[String]| recall_at_k(reference, &used, used.len()).ok();
                SampleRecall {
                    all: share(&all),
                    by_kind: KINDS
                        .iter()
                        .filter_map(|kind| {
                            Some((kind.to_string(), share(&reference(case, Some(kind)))?))
                        })
                        .collect(),
                }
            })
            .collect(),
    )
}

/// The best of the first `k` samples' values (`None` without k samples or without values).
pub fn best_of_first(values: &[Option<f64>], k: usize) -> Option<f64> {
    if k == 0 || values.len() < k {
        return None;
    }
    values[..k].iter().flatten().copied().reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_at_k_is_the_best_of_the_first_k_samples() {
        let values = [Some(0.5), Some(0.0), Some(1.0)];
        assert_eq!(best_of_first(&values, 1), Some(0.5));
        assert_eq!(best_of_first(&values, 2), Some(0.5));
        assert_eq!(best_of_first(&values, 3), Some(1.0));
        assert_eq!(best_of_first(&values, 4), None);
        assert_eq!(best_of_first(&values, 0), None);
    }
}
