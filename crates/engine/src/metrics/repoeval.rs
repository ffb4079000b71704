//! RepoEval's metrics, as RepoCoder's `compute_EM` and `compute_ES` compute them.

use super::MetricsError;
use super::edit::levenshtein;
use super::pystr::{splitlines, stripped_nonempty};

/// RepoEval's two numbers for one completion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RepoevalScores {
    /// Exact match of the stripped non-empty lines ([`repoeval_em`]).
    pub em: bool,
    /// Edit similarity 0..=1 ([`repoeval_es`]).
    pub es: f64,
    /// sacrebleu's chrF (0..=100) of the two texts ES compares (not RepoCoder's metric).
    pub chrf: f64,
}

/// Both RepoEval metrics of `prediction` against `groundtruth`.
///
/// # Errors
///
/// [`MetricsError::EmptyReference`] when the groundtruth has no non-blank line (ES would divide
/// by zero, as the official code does).
pub fn repoeval_metrics(
    prediction: &str,
    groundtruth: &str,
) -> Result<RepoevalScores, MetricsError> {
    let (predicted, target) = lines(prediction, groundtruth);
    Ok(RepoevalScores {
        em: repoeval_em(prediction, groundtruth),
        es: repoeval_es(prediction, groundtruth)?,
        chrf: super::chrf::chrf(&predicted.join("\n"), &target.join("\n")),
    })
}

/// RepoCoder's `compute_EM` with one prediction: both texts split with Python's
/// `str.splitlines()`, lines stripped and empty ones dropped; the prediction keeps only as many
/// lines as the groundtruth has; equal lists match.
pub fn repoeval_em(prediction: &str, groundtruth: &str) -> bool {
    let (predicted, target) = lines(prediction, groundtruth);
    predicted == target
}

/// RepoCoder's `compute_ES` with one prediction: the line lists of [`repoeval_em`] joined with
/// `\n` into `p` and `t`, then `1 - lev(t, p) / max(len(t), len(p))` with the exact Levenshtein
/// distance over code points. A float in 0..=1.
///
/// The official numbers were computed with editdistance 0.6.2, which is wrong on some inputs
/// longer than 640 items (fixed upstream later); this is the exact value.
///
/// # Errors
///
/// [`MetricsError::EmptyReference`] when the groundtruth has no non-blank line.
pub fn repoeval_es(prediction: &str, groundtruth: &str) -> Result<f64, MetricsError> {
    let (predicted, target) = lines(prediction, groundtruth);
    let (p, t) = (predicted.join("\n"), target.join("\n"));
    let longest = t.chars().count().max(p.chars().count());
    if longest == 0 {
        return Err(MetricsError::EmptyReference);
    }
    Ok(1.0 - levenshtein(&t, &p) as f64 / longest as f64)
}

/// The prediction's and the groundtruth's stripped non-empty lines, the prediction's cut to as
/// many as the groundtruth's.
fn lines<'a>(prediction: &'a str, groundtruth: &'a str) -> (Vec<&'a str>, Vec<&'a str>) {
    let target = stripped_nonempty(splitlines(groundtruth));
    let mut predicted = stripped_nonempty(splitlines(prediction));
    predicted.truncate(target.len());
    (predicted, target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn em_cuts_the_prediction_to_the_reference_lines() {
        assert!(repoeval_em("a\n  b\nc\n", "a\nb"));
        assert!(repoeval_em("a\r\n\n\u{2028}b", " a \n b "));
        assert!(!repoeval_em("a", "a\nb"));
        assert!(repoeval_em("anything", ""));
    }

    #[test]
    fn es_values() {
        assert_eq!(repoeval_es("a\nb\nextra", "a\nb"), Ok(1.0));
        assert_eq!(repoeval_es("", "abcd"), Ok(0.0));
        // "abcd" vs "abce": one substitution of 4.
        assert_eq!(repoeval_es("abce", "abcd"), Ok(0.75));
        // Form feed and U+2028 break lines for splitlines().
        assert_eq!(repoeval_es("x\x0cy", "x\ny"), Ok(1.0));
        assert_eq!(repoeval_es("x", "  \n"), Err(MetricsError::EmptyReference));
    }
}
