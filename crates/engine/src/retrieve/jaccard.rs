//! `jaccard`: token-set Jaccard similarity between the lines before the cursor and every sliding
//! window (RepoCoder, Continue).

use super::{Exclude, Hit, Query, RetrieveError, Retriever};
use crate::chunk::ChunkerKind;
use crate::index::Snapshot;
use crate::terms::{TermId, Vocab, words};

pub struct Jaccard {
    /// Lines before the cursor (its partial line included) that form the query window.
    pub query_lines: u32,
    /// What of the cursor's own file is left out.
    pub exclude: Exclude,
}

impl Retriever for Jaccard {
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let window = query.search_window(|left| Query::last_lines(left, self.query_lines as usize));
        let mut distinct: Vec<&str> = words(&window).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let query_len = distinct.len();
        let vocab = Vocab::global();
        let known = TermSet::new(distinct.iter().filter_map(|w| vocab.get(w)));
        if known.is_empty() || top_k == 0 {
            return Ok(Vec::new());
        }
        // (score, file, chunk); files and chunks are visited in (path, line) order, so ties
        // break by path, then line, through the indices.
        let mut scored: Vec<(f64, usize, usize)> = Vec::new();
        let files: Vec<_> = snapshot.files().collect();
        for (fi, file) in files.iter().enumerate() {
            if query
                .language
                .is_some_and(|l| l.name() != file.language.name())
            {
                continue;
            }
            for (ci, window_words) in file.sliding_words.iter().enumerate() {
                let shared = window_words
                    .iter()
                    .filter(|&&id| known.contains(id))
                    .count();
                if shared == 0 {
                    continue;
                }
                let Some(chunk) = file.sliding.get(ci) else {
                    continue;
                };
                if self.exclude.leaves_out(query, &file.path, &chunk.lines) {
                    continue;
                }
                let union = query_len + window_words.len() - shared;
                scored.push((shared as f64 / union as f64, fi, ci));
            }
        }
        let order = |a: &(f64, usize, usize), b: &(f64, usize, usize)| {
            b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
        };
        if scored.len() > top_k {
            scored.select_nth_unstable_by(top_k - 1, order);
            scored.truncate(top_k);
        }
        scored.sort_by(order);
        Ok(scored
            .into_iter()
            .take(top_k)
            .filter_map(|(score, fi, ci)| {
                let file = files[fi];
                let chunk = file.sliding.get(ci)?;
                Some(Hit {
                    path: file.path.clone(),
                    lines: chunk.lines.clone(),
                    score,
                    text: chunk.text(ChunkerKind::Sliding, &file.text),
                    chunker: Some(ChunkerKind::Sliding),
                    source: None,
                })
            })
            .collect())
    }
}

/// A set of term ids as a bitset over the vocabulary: one load per membership test.
struct TermSet {
    bits: Vec<u64>,
    len: usize,
}

impl TermSet {
    fn new(ids: impl Iterator<Item = TermId>) -> TermSet {
        let mut set = TermSet {
            bits: Vec::new(),
            len: 0,
        };
        for id in ids {
            let (word, bit) = ((id / 64) as usize, id % 64);
            if set.bits.len() <= word {
                set.bits.resize(word + 1, 0);
            }
            if set.bits[word] & (1 << bit) == 0 {
                set.bits[word] |= 1 << bit;
                set.len += 1;
            }
        }
        set
    }

    fn contains(&self, id: TermId) -> bool {
        self.bits
            .get((id / 64) as usize)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::TermSet;

    #[test]
    fn term_sets_hold_exactly_their_ids() {
        let set = TermSet::new([3, 64, 3, 1000, 100_000].into_iter());
        assert_eq!(set.len, 4);
        for id in [3, 64, 1000, 100_000] {
            assert!(set.contains(id), "{id}");
        }
        for id in [0, 2, 4, 63, 65, 999, u32::MAX - 1] {
            assert!(!set.contains(id), "{id}");
        }
        assert!(TermSet::new(std::iter::empty()).is_empty());
    }
}
