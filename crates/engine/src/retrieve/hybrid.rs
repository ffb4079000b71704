//! `hybrid:<a>+<b>[+…]`: reciprocal rank fusion (Cormack et al.) of two or more retrievers.

use std::collections::HashMap;

use rayon::prelude::*;
use std::ops::Range;

use super::{Hit, Query, RetrieveError, Retriever, sort_hits};
use crate::index::Snapshot;

pub struct Hybrid {
    pub parts: Vec<Box<dyn Retriever>>,
    /// The rank constant (60 in the paper).
    pub k: f64,
}

impl Retriever for Hybrid {
    /// Each part ranks its top 4k; a chunk (same path and lines) scores Σ 1/(k + rank) over the
    /// parts that found it, rank counted from 1.
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        // The parts run in parallel; fusion runs in part order, so sums are deterministic.
        let lists: Vec<Vec<Hit>> = self
            .parts
            .par_iter()
            .map(|part| part.retrieve(snapshot, query, top_k.saturating_mul(4)))
            .collect::<Result<_, _>>()?;
        let mut fused: HashMap<(String, Range<u32>), Hit> = HashMap::new();
        for list in lists {
            for (rank, hit) in list.into_iter().enumerate() {
                let contribution = 1.0 / (self.k + rank as f64 + 1.0);
                fused
                    .entry((hit.path.clone(), hit.lines.clone()))
                    .and_modify(|h| h.score += contribution)
                    .or_insert(Hit {
                        score: contribution,
                        ..hit
                    });
            }
        }
        let mut hits: Vec<Hit> = fused.into_values().collect();
        sort_hits(&mut hits);
        hits.truncate(top_k);
        Ok(hits)
    }
}
