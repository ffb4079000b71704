//! `bm25-cceval`, `bm25-cceval-rg1` and `oracle`: CrossCodeEval's own BM25 retrieval, reproduced
//! exactly (DESIGN.md section 4), over the index's CrossCodeEval chunks.
//!
//! The index keeps each file's token-bearing 10-line windows with their NLTK tokens counted, so a
//! query only orders the candidate files, gathers the first 1,000 chunks and scores them with
//! [`okapi_scores`] — the script's per-query rebuild without its per-query tokenizing.

use std::collections::HashSet;

use super::okapi::{OkapiDoc, okapi_scores};
use super::{Hit, Query, RetrieveError, Retriever};
use crate::chunk::ChunkerKind;
use crate::index::{FileEntry, Snapshot};
use crate::lang::Language;
use crate::terms::{Vocab, cceval_tokens};

/// The script's caps and window.
const MAX_FILES: usize = 1000;
const MAX_CHUNKS: usize = 1000;
const MAX_DISTANCE: usize = 100;
const QUERY_LINES: usize = 10;

/// Which of CrossCodeEval's variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcevalMode {
    /// The ranked chunks (`bm25-cceval`).
    Ranked,
    /// Each of the top ranked chunks replaced by the next chunk of its file, duplicates by text
    /// dropped (`bm25-cceval-rg1`, how the released `crossfile_context` was made).
    NextChunk,
    /// The ranked chunks for a query that includes the reference (`oracle`, an upper bound).
    Oracle,
}

pub struct Cceval {
    pub mode: CcevalMode,
}

/// A chunk as CrossCodeEval ranked it.
#[derive(Clone, Copy, Debug)]
pub struct RankedChunk<'a> {
    pub file: &'a FileEntry,
    /// The chunk's number among its file's token-bearing chunks.
    pub chunk_no: usize,
    pub score: f64,
}

impl Retriever for Cceval {
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let language = query
            .language
            .ok_or_else(|| RetrieveError::UnsupportedLanguage {
                path: query.path.clone(),
                retriever: "bm25-cceval".into(),
            })?;
        let window = match self.mode {
            CcevalMode::Oracle => {
                let with_reference = format!("{}{}", query.left, query.reference_or_rest_of_line());
                Query::last_nonblank_lines(&with_reference, QUERY_LINES)
            }
            CcevalMode::Ranked | CcevalMode::NextChunk => {
                query.search_window(|left| Query::last_nonblank_lines(left, QUERY_LINES))
            }
        };
        let ranked = rank_cceval(snapshot, &query.path, language, &window);
        let top = ranked.into_iter().take(top_k);
        if self.mode != CcevalMode::NextChunk {
            return Ok(top
                .filter_map(|r| hit(r.file, r.chunk_no, r.score))
                .collect());
        }
        let mut seen = HashSet::new();
        let mut hits = Vec::new();
        for r in top {
            let next = if r.chunk_no + 1 < r.file.cceval.len() {
                r.chunk_no + 1
            } else {
                r.chunk_no
            };
            let Some(hit) = hit(r.file, next, r.score) else {
                continue;
            };
            if seen.insert(hit.text.clone()) {
                hits.push(hit);
            }
        }
        Ok(hits)
    }
}

/// CrossCodeEval's ranking of the candidate chunks for `query_text`, best first: files of the
/// query's language but its own, nearest first; their first 1,000 chunks scored by BM25Okapi;
/// ties broken by `path|chunk_no` descending, compared as strings.
pub fn rank_cceval<'a>(
    snapshot: &'a Snapshot,
    path: &str,
    language: Language,
    query_text: &str,
) -> Vec<RankedChunk<'a>> {
    let mut files: Vec<(usize, &FileEntry)> = snapshot
        .files()
        .map(|f| f.as_ref())
        .filter(|f| is_candidate(f, path, language))
        .map(|f| (file_distance(path, &f.path), f))
        .filter(|&(d, _)| d <= MAX_DISTANCE)
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.path.cmp(&b.1.path)));
    files.truncate(MAX_FILES);

    let mut chunks: Vec<(&FileEntry, usize)> = Vec::with_capacity(MAX_CHUNKS);
    'files: for (_, file) in &files {
        for chunk_no in 0..file.cceval.len() {
            if chunks.len() == MAX_CHUNKS {
                break 'files;
            }
            chunks.push((file, chunk_no));
        }
    }
    let docs: Vec<OkapiDoc<'_>> = chunks
        .iter()
        .map(|&(f, no)| OkapiDoc {
            len: f.cceval[no].len,
            terms: &f.cceval[no].terms,
        })
        .collect();
    let vocab = Vocab::global();
    let query: Vec<_> = cceval_tokens(query_text)
        .into_iter()
        .filter_map(|t| vocab.get(t))
        .collect();
    let scores = okapi_scores(&docs, &query);

    let ids: Vec<String> = chunks
        .iter()
        .map(|&(f, no)| format!("{}|{no}", f.path))
        .collect();
    let mut order: Vec<usize> = (0..chunks.len()).collect();
    order.sort_by(|&a, &b| {
        scores[b]
            .total_cmp(&scores[a])
            .then_with(|| ids[b].cmp(&ids[a]))
    });
    order
        .into_iter()
        .map(|i| RankedChunk {
            file: chunks[i].0,
            chunk_no: chunks[i].1,
            score: scores[i],
        })
        .collect()
}

/// Python's `glob('**/*.<ext>')` from the root (no hidden names), the query's language, not
/// the query's file; TypeScript only under `src/`.
fn is_candidate(file: &FileEntry, query_path: &str, language: Language) -> bool {
    file.path != query_path
        && file.language.name() == language.name()
        && (language.name() != "typescript" || file.path.starts_with("src/"))
        && !file.path.split('/').any(|part| part.starts_with('.'))
}

/// Path separators between two files through their common directory.
fn file_distance(a: &str, b: &str) -> usize {
    let (da, db) = (dirs(a), dirs(b));
    let common = da.iter().zip(&db).take_while(|(x, y)| x == y).count();
    (da.len() - common) + (db.len() - common)
}

fn dirs(path: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    parts
}

fn hit(file: &FileEntry, chunk_no: usize, score: f64) -> Option<Hit> {
    let chunk = file.fixed.get(file.cceval.get(chunk_no)?.fixed as usize)?;
    Some(Hit {
        path: file.path.clone(),
        lines: chunk.lines.clone(),
        score,
        text: chunk.text(ChunkerKind::Fixed, &file.text),
        chunker: Some(ChunkerKind::Fixed),
        source: None,
    })
}

#[cfg(test)]
mod tests {
    use super::file_distance;

    #[test]
    fn file_distance_counts_separators_through_the_common_directory() {
        assert_eq!(file_distance("a.py", "b.py"), 0);
        assert_eq!(file_distance("pkg/a.py", "b.py"), 1);
        assert_eq!(file_distance("pkg/a.py", "pkg/sub/b.py"), 1);
        assert_eq!(file_distance("pkg/x/a.py", "pkg/y/b.py"), 2);
        assert_eq!(file_distance("src/a/b/c.py", "tests/d.py"), 4);
    }
}
