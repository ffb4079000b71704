//! Recall@k: how many of a case's reference items are among the top k retrieved.

use std::collections::HashSet;
use std::hash::Hash;

use super::MetricsError;

/// The fraction of the distinct `reference` items (a case's reference dependencies) that occur
/// among the first `k` of `retrieved` (best first). Duplicates count once on both sides.
///
/// EvoCodeBench's Recall@k takes, over k generated programs, the best of this fraction; call
/// this per program and take the maximum.
///
/// # Errors
///
/// [`MetricsError::EmptyReference`] when `reference` is empty (the fraction is undefined).
pub fn recall_at_k<T: Eq + Hash>(
    reference: &[T],
    retrieved: &[T],
    k: usize,
) -> Result<f64, MetricsError> {
    let reference: HashSet<&T> = reference.iter().collect();
    if reference.is_empty() {
        return Err(MetricsError::EmptyReference);
    }
    let top: HashSet<&T> = retrieved.iter().take(k).collect();
    let found = reference.iter().filter(|item| top.contains(*item)).count();
    Ok(found as f64 / reference.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let reference = ["a.f", "b.g", "a.f", "c.h", "d.i"];
        let retrieved = ["x", "b.g", "a.f", "b.g", "d.i"];
        assert_eq!(recall_at_k(&reference, &retrieved, 0), Ok(0.0));
        assert_eq!(recall_at_k(&reference, &retrieved, 2), Ok(0.25));
        assert_eq!(recall_at_k(&reference, &retrieved, 3), Ok(0.5));
        assert_eq!(recall_at_k(&reference, &retrieved, 100), Ok(0.75));
        assert_eq!(
            recall_at_k::<&str>(&[], &retrieved, 3),
            Err(MetricsError::EmptyReference)
        );
    }
}
