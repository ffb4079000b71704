//! Pass@k: the unbiased estimator of Chen et al. (2021), computed stably.

use super::MetricsError;

/// The probability that at least one of `k` samples drawn without replacement from `n`
/// generated samples, `c` of which pass, passes: `1 - C(n - c, k) / C(n, k)`.
///
/// Computed as Codex's paper does (Chen et al., "Evaluating Large Language Models Trained on
/// Code", 2021, Figure 3), without binomials that overflow: 1 when `n - c < k`, else
/// `1 - prod_{i = n - c + 1}^{n} (1 - k / i)`.
///
/// # Errors
///
/// [`MetricsError::PassAtK`] unless `c <= n` and `1 <= k <= n`.
pub fn pass_at_k(n: u64, c: u64, k: u64) -> Result<f64, MetricsError> {
    if c > n || k == 0 || k > n {
        return Err(MetricsError::PassAtK { n, c, k });
    }
    if n - c < k {
        return Ok(1.0);
    }
    let kept = ((n - c + 1)..=n).fold(1.0, |acc, i| acc * (1.0 - k as f64 / i as f64));
    Ok(1.0 - kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let close = |got: f64, want: f64| assert!((got - want).abs() < 1e-12, "{got} != {want}");
        // k = 1 is the pass rate.
        close(pass_at_k(10, 3, 1).expect("valid"), 0.3);
        // 1 - C(2, 2) / C(4, 2) = 1 - 1/6.
        close(pass_at_k(4, 2, 2).expect("valid"), 5.0 / 6.0);
        // 1 - C(197, 10) / C(200, 10), by hand: 1 - (190 * 189 * 188) / (200 * 199 * 198).
        close(
            pass_at_k(200, 3, 10).expect("valid"),
            1.0 - (190.0 * 189.0 * 188.0) / (200.0 * 199.0 * 198.0),
        );
        assert_eq!(pass_at_k(5, 0, 3), Ok(0.0));
        assert_eq!(pass_at_k(5, 5, 5), Ok(1.0));
        assert_eq!(pass_at_k(5, 3, 3), Ok(1.0));
        // Large n: binomials would overflow u64, the product does not.
        let p = pass_at_k(u64::from(u32::MAX), 1, 1).expect("valid");
        close(p, 1.0 / f64::from(u32::MAX));
        for (n, c, k) in [(3, 4, 1), (3, 1, 0), (3, 1, 4), (0, 0, 1)] {
            assert_eq!(pass_at_k(n, c, k), Err(MetricsError::PassAtK { n, c, k }));
        }
    }
}
