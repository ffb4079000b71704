//! `jaccard`: token-set Jaccard similarity between the lines before the cursor and every sliding
//! window (RepoCoder, Continue).

use super::{Hit, Query, RetrieveError, Retriever};
use crate::chunk::ChunkerKind;
use crate::index::Snapshot;
use crate::terms::{TermId, Vocab, words};

pub struct Jaccard {
    /// Lines before the cursor (its partial line included) that form the query window.
    pub query_lines: u32,
}

impl Retriever for Jaccard {
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let window = Query::last_lines(&query.left, self.query_lines as usize);
        let mut distinct: Vec<&str> = words(&window).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let query_len = distinct.len();
        let vocab = Vocab::global();
        let mut known: Vec<TermId> = distinct.iter().filter_map(|w| vocab.get(w)).collect();
        known.sort_unstable();
        if known.is_empty() || top_k == 0 {
            return Ok(Vec::new());
        }
        // (score, file, chunk); files and chunks are visited in (path, line) order, so a stable
        // sort on score alone breaks ties by path, then line.
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
                let shared = count_shared(&known, window_words);
                if shared == 0 {
                    continue;
                }
                let Some(chunk) = file.sliding.get(ci) else {
                    continue;
                };
                if query.overlaps_own_region(&file.path, &chunk.lines) {
                    continue;
                }
                let union = query_len + window_words.len() - shared;
                scored.push((shared as f64 / union as f64, fi, ci));
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
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
                })
            })
            .collect())
    }
}

/// Size of the intersection of two sorted, deduplicated lists.
fn count_shared(a: &[TermId], b: &[TermId]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::count_shared;

    #[test]
    fn shared_counts_the_intersection() {
        assert_eq!(count_shared(&[], &[1, 2]), 0);
        assert_eq!(count_shared(&[1, 3, 5, 7], &[2, 3, 4, 7, 9]), 2);
        assert_eq!(count_shared(&[u32::MAX], &[u32::MAX]), 1);
    }
}
