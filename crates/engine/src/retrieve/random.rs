//! `random:<spec>[:<seed>]`: a control (Drain et al. §5.2). It returns as many chunks as the inner
//! retriever returns at that cursor, drawn uniformly from the other files of the cursor's
//! language, with the inner hits' chunker: what retrieval adds over the same amount of context
//! chosen at random. The draw is seeded by the seed and the cursor (repository, file, position),
//! so a run repeats exactly.

use std::hash::{Hash, Hasher};

use super::{Hit, Query, RetrieveError, Retriever};
use crate::index::Snapshot;
use crate::seeded::SplitMix64;

pub struct Random {
    pub inner: Box<dyn Retriever>,
    pub seed: u64,
}

impl Retriever for Random {
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let inner = self.inner.retrieve(snapshot, query, top_k)?;
        let wanted = inner.len();
        if wanted == 0 {
            return Ok(Vec::new());
        }
        let kind = inner
            .iter()
            .find_map(|h| h.chunker)
            .unwrap_or_else(|| snapshot.bm25_chunker());
        // Every chunk of another file of the cursor's language, as (file, chunk), in (path, line)
        // order.
        let files: Vec<_> = snapshot
            .files()
            .filter(|file| {
                file.path != query.path
                    && query
                        .language
                        .is_none_or(|l| l.name() == file.language.name())
            })
            .collect();
        let mut candidates: Vec<(usize, usize)> = files
            .iter()
            .enumerate()
            .flat_map(|(fi, file)| (0..file.chunks(kind).len()).map(move |ci| (fi, ci)))
            .collect();
        let mut rng = SplitMix64(draw_seed(self.seed, query));
        // A partial Fisher–Yates shuffle: the first `wanted` places are a uniform sample.
        let take = wanted.min(candidates.len());
        for i in 0..take {
            let j = i + rng.below(candidates.len() - i);
            candidates.swap(i, j);
        }
        let hits = candidates[..take]
            .iter()
            .filter_map(|&(fi, ci)| {
                let file = files.get(fi)?;
                let chunk = file.chunks(kind).get(ci)?;
                Some(Hit {
                    path: file.path.clone(),
                    lines: chunk.lines.clone(),
                    score: 0.0,
                    text: chunk.text(kind, &file.text),
                    chunker: Some(kind),
                    source: None,
                })
            })
            .collect();
        Ok(hits)
    }
}

/// The seed of one cursor's draw.
fn draw_seed(seed: u64, query: &Query) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (
        seed,
        &query.repo,
        &query.path,
        query.cursor.line,
        query.cursor.col,
    )
        .hash(&mut hasher);
    hasher.finish()
}
