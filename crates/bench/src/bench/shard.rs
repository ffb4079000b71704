//! A share of a benchmark's cases for one machine: `--shard K/N` takes every N-th case starting
//! with the K-th (0-based, as a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` or a Slurm array
//! `0-(N-1)` numbers them), so N machines together take every case once.

use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Whether the case at position `position` of the cases file is this shard's.
    pub fn takes(&self, position: usize) -> bool {
        position % self.count == self.index
    }

    /// This shard's items, in order.
    pub fn of<'a, T>(&self, items: &'a [T]) -> Vec<&'a T> {
        items
            .iter()
            .enumerate()
            .filter(|(i, _)| self.takes(*i))
            .map(|(_, item)| item)
            .collect()
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let usage = || format!("{text:?}: a shard is K/N with 0 ≤ K < N (e.g. 0/8)");
        let (index, count) = text.split_once('/').ok_or_else(usage)?;
        let (index, count): (usize, usize) = (
            index.trim().parse().map_err(|_| usage())?,
            count.trim().parse().map_err(|_| usage())?,
        );
        if count == 0 || index >= count {
            return Err(usage());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_take_every_case_exactly_once() {
        let cases: Vec<usize> = (0..10).collect();
        let mut taken: Vec<usize> = (0..3)
            .flat_map(|k| Shard { index: k, count: 3 }.of(&cases).into_iter().copied())
            .collect();
        assert_eq!(Shard { index: 1, count: 3 }.of(&cases), [&1, &4, &7]);
        taken.sort_unstable();
        assert_eq!(taken, cases);
    }

    #[test]
    fn a_shard_is_k_of_n() {
        assert_eq!("2/8".parse(), Ok(Shard { index: 2, count: 8 }));
        for bad in ["8/8", "1/0", "x/2", "3", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(Shard { index: 0, count: 4 }.to_string(), "0/4");
    }
}
