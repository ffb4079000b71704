//! Sentence-level chrF as sacrebleu computes it: character n-gram F-score (Popović, WMT 2015),
//! the metric of the 2025 context-collection challenge for code completion.

use std::collections::HashMap;

use crate::chunk::is_python_whitespace;

/// The highest character n-gram order (sacrebleu's `CHRF.CHAR_ORDER`).
const CHAR_ORDER: usize = 6;

/// Recall weighs `BETA` times as much as precision (sacrebleu's `CHRF.BETA`).
const BETA: f64 = 2.0;

/// chrF of `hypothesis` against one `reference`, 0..=100: sacrebleu 2.x
/// `CHRF().sentence_score(hypothesis, [reference]).score` with its defaults (character orders 1
/// to 6, no word n-grams, β = 2, case kept, whitespace removed, effective-order averaging):
///
/// - both texts lose every whitespace character (Python's `''.join(text.split())`, so the
///   characters `str.isspace()` accepts);
/// - for each order n, the hypothesis and reference n-grams of code points are counted, and the
///   matches are the hypothesis n-grams clipped by their count in the reference; an order the
///   reference has no n-gram of counts no hypothesis n-gram either;
/// - an order counts ("effective") when both texts have n-grams of it; its precision and recall
///   are averaged over the effective orders, and the score is
///   `100 · (1 + β²) · P · R / (β² · P + R)`, 0 when `P + R` is 0 or no order counts.
///
/// The float operations follow sacrebleu's order.
pub fn chrf(hypothesis: &str, reference: &str) -> f64 {
    let hypothesis = without_whitespace(hypothesis);
    let reference = without_whitespace(reference);
    let factor = BETA * BETA;
    let (mut avg_prec, mut avg_rec) = (0.0f64, 0.0f64);
    let mut effective_order = 0u32;
    for n in 1..=CHAR_ORDER {
        let hyp = ngram_counts(&hypothesis, n);
        let reference = ngram_counts(&reference, n);
        let (n_hyp, n_ref, n_match) = match_statistics(&hyp, &reference);
        if n_hyp > 0 && n_ref > 0 {
            avg_prec += n_match as f64 / n_hyp as f64;
            avg_rec += n_match as f64 / n_ref as f64;
            effective_order += 1;
        }
    }
    if effective_order == 0 {
        return 0.0;
    }
    avg_prec /= f64::from(effective_order);
    avg_rec /= f64::from(effective_order);
    if avg_prec + avg_rec == 0.0 {
        return 0.0;
    }
    let mut score = (1.0 + factor) * avg_prec * avg_rec;
    score /= (factor * avg_prec) + avg_rec;
    100.0 * score
}

/// The text's code points without whitespace.
fn without_whitespace(text: &str) -> Vec<char> {
    text.chars().filter(|&c| !is_python_whitespace(c)).collect()
}

/// How often each n-gram of `chars` occurs.
fn ngram_counts(chars: &[char], n: usize) -> HashMap<&[char], usize> {
    let mut counts = HashMap::new();
    for ngram in chars.windows(n) {
        *counts.entry(ngram).or_insert(0) += 1;
    }
    counts
}

/// sacrebleu's `_get_match_statistics`: hypothesis n-grams (0 when the reference has none of
/// this order), reference n-grams, and the clipped matches.
fn match_statistics(
    hyp: &HashMap<&[char], usize>,
    reference: &HashMap<&[char], usize>,
) -> (usize, usize, usize) {
    let n_hyp: usize = hyp.values().sum();
    let n_ref: usize = reference.values().sum();
    let n_match = hyp
        .iter()
        .map(|(ngram, &count)| count.min(reference.get(ngram).copied().unwrap_or(0)))
        .sum();
    (if reference.is_empty() { 0 } else { n_hyp }, n_ref, n_match)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_score_100_and_disjoint_ones_0() {
        assert_eq!(
            chrf("self.assertEqual(a, b)", "self.assertEqual(a, b)"),
            100.0
        );
        assert_eq!(chrf("abc", "xyz"), 0.0);
        assert_eq!(chrf("", "abc"), 0.0);
        assert_eq!(chrf("abc", ""), 0.0);
        assert_eq!(chrf("", ""), 0.0);
    }

    #[test]
    fn whitespace_does_not_count() {
        assert_eq!(chrf("return  x +\ty", "returnx+y"), 100.0);
        // U+001C is whitespace to Python's str.split(), though not to Unicode.
        assert_eq!(chrf("a\u{1c}b", "ab"), 100.0);
    }

    #[test]
    fn recall_weighs_more_than_precision() {
        // "ab" against "abcd": P = 1 over both orders, R = (2/4 + 1/3) / 2.
        let (p, r) = (1.0, (2.0 / 4.0 + 1.0 / 3.0) / 2.0);
        let expected = 100.0 * (5.0 * p * r) / (4.0 * p + r);
        assert!((chrf("ab", "abcd") - expected).abs() < 1e-12);
        // The same texts the other way round weigh the short one's recall.
        assert!(chrf("abcd", "ab") > chrf("ab", "abcd"));
    }

    #[test]
    fn only_orders_both_texts_have_count() {
        // "a" has 1-grams only: one effective order, a full match.
        let expected = 100.0 * 5.0 * (1.0 / 7.0) / (4.0 + 1.0 / 7.0);
        assert!((chrf("a", "abcdefg") - expected).abs() < 1e-12);
    }
}
