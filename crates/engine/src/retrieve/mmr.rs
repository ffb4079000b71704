//! `mmr:<inner>[:<λ>]`: Maximal Marginal Relevance rerank (Carbonell and Goldstein; Drain et al.
//! for code) of an inner retriever's top 4k, trading relevance for diversity.

use std::collections::HashSet;

use super::{Hit, Query, RetrieveError, Retriever};
use crate::index::Snapshot;
use crate::terms::words;

pub struct Mmr {
    pub inner: Box<dyn Retriever>,
    pub lambda: f64,
}

impl Retriever for Mmr {
    /// Picks, one at a time, the candidate maximising λ·rel − (1−λ)·max sim(candidate, picked),
    /// where rel is the inner score min-max normalised over the candidates and sim is token-set
    /// Jaccard between chunk texts. A hit's score is that objective when it was picked.
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let candidates = self
            .inner
            .retrieve(snapshot, query, top_k.saturating_mul(4))?;
        Ok(rerank(candidates, self.lambda, top_k))
    }
}

fn rerank(candidates: Vec<Hit>, lambda: f64, top_k: usize) -> Vec<Hit> {
    if candidates.is_empty() {
        return candidates;
    }
    let (lo, hi) = candidates
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), h| {
            (lo.min(h.score), hi.max(h.score))
        });
    let rel: Vec<f64> = candidates
        .iter()
        .map(|h| {
            if hi > lo {
                (h.score - lo) / (hi - lo)
            } else {
                1.0
            }
        })
        .collect();
    let sets: Vec<HashSet<&str>> = candidates
        .iter()
        .map(|h| words(&h.text).collect())
        .collect();
    let mut max_sim = vec![0.0f64; candidates.len()];
    let mut picked: Vec<(usize, f64)> = Vec::new();
    let mut free: Vec<bool> = vec![true; candidates.len()];
    while picked.len() < top_k {
        // Candidates are in the inner retriever's order, so the first maximum breaks ties.
        let best = (0..candidates.len())
            .filter(|&i| free[i])
            .map(|i| (i, lambda * rel[i] - (1.0 - lambda) * max_sim[i]))
            .fold(None, |best: Option<(usize, f64)>, (i, v)| match best {
                Some((_, bv)) if bv >= v => best,
                _ => Some((i, v)),
            });
        let Some((i, value)) = best else { break };
        free[i] = false;
        picked.push((i, value));
        for j in (0..candidates.len()).filter(|&j| free[j]) {
            max_sim[j] = max_sim[j].max(jaccard(&sets[i], &sets[j]));
        }
    }
    let mut slots: Vec<Option<Hit>> = candidates.into_iter().map(Some).collect();
    picked
        .into_iter()
        .filter_map(|(i, value)| {
            let mut hit = slots[i].take()?;
            hit.score = value;
            Some(hit)
        })
        .collect()
}

fn jaccard(a: &HashSet<&str>, b: &HashSet<&str>) -> f64 {
    let shared = a.intersection(b).count();
    let union = a.len() + b.len() - shared;
    if union == 0 {
        0.0
    } else {
        shared as f64 / union as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str, score: f64, text: &str) -> Hit {
        Hit {
            path: path.into(),
            lines: 0..1,
            score,
            text: text.into(),
            chunker: None,
            source: None,
        }
    }

    #[test]
    fn mmr_prefers_a_diverse_second_pick() {
        let candidates = vec![
            hit("a", 10.0, "alpha beta gamma"),
            hit("b", 9.0, "alpha beta gamma"),
            hit("c", 8.0, "delta epsilon"),
        ];
        let order = |lambda| {
            rerank(candidates.clone(), lambda, 3)
                .into_iter()
                .map(|h| h.path)
                .collect::<Vec<_>>()
        };
        assert_eq!(order(1.0), ["a", "b", "c"], "λ = 1 keeps relevance order");
        assert_eq!(order(0.5), ["a", "c", "b"], "λ = 0.5 skips the duplicate");
        assert!(rerank(Vec::new(), 0.5, 3).is_empty());
    }
}
