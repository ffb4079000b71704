//! Bootstrap confidence intervals of a mean, seeded so a report is the same on every run, and
//! nearest-rank percentiles.
//!
//! The rule (docs/replay.md, `bench report`): resample the values with replacement `resamples` times
//! (index `⌊x·n / 2⁶⁴⌋` for each number `x` of [`SplitMix64`] seeded with `seed`, fresh for
//! every interval), take each
//! resample's mean, sort the means, and return the `(1 − confidence)/2` and `(1 + confidence)/2`
//! percentiles: with 10,000 resamples at 95 %, the 251st and the 9,750th mean. For a paired
//! comparison the values are the per-case differences B − A, so the interval is that of the mean
//! difference.

use serde::{Deserialize, Serialize};

use crossfile_engine::seeded::SplitMix64;

/// The seed every report and comparison uses unless told otherwise.
pub const BOOTSTRAP_SEED: u64 = 20_240_607;

/// How intervals are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bootstrap {
    pub resamples: usize,
    pub seed: u64,
    /// The interval's coverage, e.g. 0.95.
    pub confidence: f64,
}

impl Default for Bootstrap {
    fn default() -> Bootstrap {
        Bootstrap {
            resamples: 10_000,
            seed: BOOTSTRAP_SEED,
            confidence: 0.95,
        }
    }
}

/// A closed interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Bootstrap {
    /// The percentile bootstrap interval of the mean of `values`; `None` when there are none.
    pub fn mean_interval(&self, values: &[f64]) -> Option<Interval> {
        self.mean_intervals(&[values]).pop().flatten()
    }

    /// [`Bootstrap::mean_interval`] of each column. Columns of the same length share one stream
    /// of resample indices, which gives exactly what separate calls give (each starts from the
    /// same seed) at a fraction of the cost.
    pub fn mean_intervals(&self, columns: &[&[f64]]) -> Vec<Option<Interval>> {
        let mut out = vec![None; columns.len()];
        let mut lengths: Vec<usize> = columns.iter().map(|c| c.len()).collect();
        lengths.sort_unstable();
        lengths.dedup();
        for n in lengths {
            let which: Vec<usize> = (0..columns.len())
                .filter(|&i| columns[i].len() == n)
                .collect();
            let same: Vec<&[f64]> = which.iter().map(|&i| columns[i]).collect();
            for (i, interval) in which.into_iter().zip(self.intervals_of_length(&same)) {
                out[i] = interval;
            }
        }
        out
    }

    /// Intervals of columns that all have the same length.
    fn intervals_of_length(&self, columns: &[&[f64]]) -> Vec<Option<Interval>> {
        let n = columns.first().map_or(0, |c| c.len());
        if n == 0 || self.resamples == 0 {
            return vec![None; columns.len()];
        }
        let mut rng = SplitMix64(self.seed);
        let mut means: Vec<Vec<f64>> = vec![Vec::with_capacity(self.resamples); columns.len()];
        let mut sums = vec![0.0; columns.len()];
        for _ in 0..self.resamples {
            sums.iter_mut().for_each(|s| *s = 0.0);
            for _ in 0..n {
                let index = below(&mut rng, n);
                for (sum, column) in sums.iter_mut().zip(columns) {
                    *sum += column[index];
                }
            }
            for (m, sum) in means.iter_mut().zip(&sums) {
                m.push(sum / n as f64);
            }
        }
        let r = self.resamples as f64;
        let alpha = ((1.0 - self.confidence) / 2.0).clamp(0.0, 0.5);
        let low = ((alpha * r).floor() as usize).min(self.resamples - 1);
        let high = (((1.0 - alpha) * r).ceil() as usize)
            .saturating_sub(1)
            .clamp(low, self.resamples - 1);
        means
            .into_iter()
            .map(|mut m| {
                m.sort_by(f64::total_cmp);
                Some(Interval {
                    low: m[low],
                    high: m[high],
                })
            })
            .collect()
    }
}

/// A resample index in `0..n`: the generator's next number scaled by multiplication (Lemire),
/// much cheaper than a division in this hot loop.
fn below(rng: &mut SplitMix64, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// The arithmetic mean, `None` for no values.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        None
    } else {
        Some(values.iter().sum::<f64>() / values.len() as f64)
    }
}

/// The nearest-rank `p`-th percentile (0..=100) of `values`: the smallest value with at least
/// `p` % of the values at or below it. `None` for no values.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    percentile_sorted(&sorted, p)
}

/// [`percentile`] of values already sorted ascending.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p.clamp(0.0, 100.0) / 100.0 * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.saturating_sub(1).min(sorted.len() - 1)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_values_give_a_point_interval() {
        let interval = Bootstrap::default().mean_interval(&[2.5; 40]);
        assert_eq!(
            interval,
            Some(Interval {
                low: 2.5,
                high: 2.5
            })
        );
        assert_eq!(
            Bootstrap::default().mean_interval(&[7.0]),
            Some(Interval {
                low: 7.0,
                high: 7.0
            })
        );
        assert_eq!(Bootstrap::default().mean_interval(&[]), None);
    }

    #[test]
    fn a_proportion_gets_about_the_normal_interval() {
        // 30 successes in 100: the normal approximation is 0.3 ± 1.96·√(0.21/100) = ±0.0898.
        let values: Vec<f64> = (0..100).map(|i| f64::from(u8::from(i < 30))).collect();
        let interval = Bootstrap::default()
            .mean_interval(&values)
            .expect("an interval");
        assert!((interval.low - 0.2102).abs() < 0.015, "{interval:?}");
        assert!((interval.high - 0.3898).abs() < 0.015, "{interval:?}");
        assert!(interval.low < 0.3 && 0.3 < interval.high);
    }

    #[test]
    fn paired_differences_centre_on_the_mean_difference() {
        // B − A per case: B wins by 10 on 60 cases, loses by 5 on 40: mean 4.
        let diffs: Vec<f64> = (0..100).map(|i| if i < 60 { 10.0 } else { -5.0 }).collect();
        let interval = Bootstrap::default()
            .mean_interval(&diffs)
            .expect("interval");
        // Standard error: 15·√(0.24/100) = 0.735, so about 4 ± 1.44.
        assert!((interval.low - 2.56).abs() < 0.25, "{interval:?}");
        assert!((interval.high - 5.44).abs() < 0.25, "{interval:?}");
    }

    #[test]
    fn the_seed_fixes_the_interval() {
        let values: Vec<f64> = (0..57)
            .map(|i| f64::from((i * 7919) % 1009) * 0.37)
            .collect();
        let a = Bootstrap::default().mean_interval(&values);
        let b = Bootstrap::default().mean_interval(&values);
        assert_eq!(a, b);
        let other = Bootstrap {
            seed: 1,
            ..Bootstrap::default()
        }
        .mean_interval(&values);
        assert_ne!(a, other);
    }

    #[test]
    fn the_interval_of_known_data_is_pinned() {
        // Pinned so a report stays byte-identical across versions; a change here changes every
        // published interval and must be deliberate.
        let values: Vec<f64> = (0..10).map(f64::from).collect();
        let interval = Bootstrap::default().mean_interval(&values);
        expect_test::expect![[r#"
            Some(
                Interval {
                    low: 2.7,
                    high: 6.3,
                },
            )
        "#]]
        .assert_debug_eq(&interval);
    }

    #[test]
    fn columns_of_a_length_share_indices_as_separate_calls_would() {
        let b = Bootstrap::default();
        let x: Vec<f64> = (0..30).map(|i| f64::from(i % 7)).collect();
        let y: Vec<f64> = (0..30).map(|i| f64::from(i * i % 11)).collect();
        let z: Vec<f64> = (0..9).map(f64::from).collect();
        let together = b.mean_intervals(&[&x, &z, &y, &[]]);
        let apart = [&x[..], &z, &y, &[]].map(|c| b.mean_interval(c));
        assert_eq!(together, apart);
        assert_eq!(together[3], None);
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let values = [5.0, 1.0, 4.0, 2.0, 3.0];
        let table = [
            (0.0, 1.0),
            (20.0, 1.0),
            (21.0, 2.0),
            (50.0, 3.0),
            (95.0, 5.0),
            (100.0, 5.0),
        ];
        for (p, expected) in table {
            assert_eq!(percentile(&values, p), Some(expected), "p{p}");
        }
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(
            percentile(&[f64::from(u32::MAX)], 95.0),
            Some(4_294_967_295.0)
        );
        assert_eq!(mean(&[1.0, 2.0]), Some(1.5));
        assert_eq!(mean(&[]), None);
    }
}
