//! `recent`: chunks of the files the user had open or edited lately, from a bounded ring.
//!
//! What a user looked at and changed a moment ago is often what the next line uses: Tabby sends
//! snippets of recently changed and opened files, llama.vim a ring of 16 chunks of 64 lines
//! gathered as the user moves around, near-duplicates dropped. [`Ring`] is that ring: whoever
//! sees the user's files (the language server, from the document events both editors send)
//! notes chunks into it, and a [`Query`] carries what it holds at the cursor
//! ([`Query::recent`]). The `recent` retriever ranks those chunks of other files by the
//! token-set Jaccard similarity of their words to the lines before the cursor (newest first on
//! a tie); a chunk sharing no word with them is left out. It reads no index. `recent-commit`
//! ranks the same way what a benchmark case names as lately edited ([`Query::case_recent`]; a
//! history case: the other files of its commit, as committed), which no other spec reads.

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::sync::Arc;

use super::{Hit, Query, RetrieveError, Retriever};
use crate::chunk::ChunkerKind;
use crate::index::Snapshot;
use crate::lang::Language;
use crate::terms::words;

/// Chunks the ring holds at most (llama.vim's).
pub const RING_CHUNKS: usize = 16;
/// Lines of a chunk at most (llama.vim's).
pub const RING_LINES: u32 = 64;
/// A chunk at least this alike an older one (by llama.vim's measure: twice the lines they
/// share over the lines of both) replaces it.
const SAME_CHUNK: f64 = 0.9;

/// The chunks a user saw or changed lately, newest first.
#[derive(Clone, Debug, Default)]
pub struct Ring {
    chunks: VecDeque<Hit>,
    /// [`Ring::chunks`] as last handed out, until a note or a forget changes the ring: a
    /// completion per keystroke shares it rather than copying every chunk.
    shared: Option<Arc<[Hit]>>,
}

impl Ring {
    pub fn new() -> Ring {
        Ring::default()
    }

    /// Notes `chunk`, lines of `path` from line `first` (0-based) on: at most [`RING_LINES`] of
    /// them from its start; nothing when it holds no non-blank line. A chunk this alike an
    /// older one ([`SAME_CHUNK`]) replaces it; past [`RING_CHUNKS`] the oldest goes.
    pub fn note(&mut self, path: &str, first: u32, chunk: &str) {
        let kept: Vec<&str> = chunk.split('\n').take(RING_LINES as usize).collect();
        if kept.iter().all(|l| l.trim().is_empty()) {
            return;
        }
        let text = kept.join("\n");
        self.chunks
            .retain(|old| similarity(&old.text, &text) < SAME_CHUNK);
        self.chunks.push_front(Hit {
            path: path.to_string(),
            lines: first..first + kept.len() as u32,
            score: 0.0,
            text,
            chunker: Some(ChunkerKind::Sliding),
            source: None,
        });
        self.chunks.truncate(RING_CHUNKS);
        self.shared = None;
    }

    /// Forgets every chunk of `path` (a file deleted or renamed away).
    pub fn forget(&mut self, path: &str) {
        self.chunks.retain(|chunk| chunk.path != path);
        self.shared = None;
    }

    /// What the ring holds, newest first, for a [`Query`].
    pub fn chunks(&mut self) -> Arc<[Hit]> {
        let chunks = &self.chunks;
        Arc::clone(
            self.shared
                .get_or_insert_with(|| chunks.iter().cloned().collect()),
        )
    }
}

/// llama.vim's chunk similarity: twice the lines of `a` also in `b` over the lines of both.
fn similarity(a: &str, b: &str) -> f64 {
    let theirs: HashSet<&str> = b.split('\n').collect();
    let (mut ours, mut shared) = (0usize, 0usize);
    for line in a.split('\n') {
        ours += 1;
        shared += usize::from(theirs.contains(line));
    }
    let both = ours + b.split('\n').count();
    2.0 * shared as f64 / both as f64
}

/// The `recent` retriever, and `recent-commit`, which ranks a benchmark case's chunks the same
/// way.
pub struct Recent {
    /// Lines before the cursor (its partial line included) whose words are compared.
    pub query_lines: u32,
    pub from: From,
}

/// Which chunks a [`Recent`] ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum From {
    /// The ring's: [`Query::recent`].
    Ring,
    /// The case's: [`Query::case_recent`].
    Case,
}

impl Retriever for Recent {
    fn retrieve(
        &self,
        _snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let window = query.search_window(|left| Query::last_lines(left, self.query_lines as usize));
        let wanted: HashSet<&str> = words(&window).collect();
        if wanted.is_empty() || top_k == 0 {
            return Ok(Vec::new());
        }
        let chunks = match self.from {
            From::Ring => &query.recent,
            From::Case => &query.case_recent,
        };
        let mut scored: Vec<(f64, usize)> = chunks
            .iter()
            .enumerate()
            .filter(|(_, chunk)| {
                chunk.path != query.path
                    && Language::from_path(Path::new(&chunk.path)) == query.language
            })
            .filter_map(|(at, chunk)| {
                let theirs: HashSet<&str> = words(&chunk.text).collect();
                let shared = theirs.intersection(&wanted).count();
                let union = wanted.len() + theirs.len() - shared;
                (shared > 0).then(|| (shared as f64 / union as f64, at))
            })
            .collect();
        // Best first; on a tie the newer (nearer the ring's front).
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(scored
            .into_iter()
            .take(top_k)
            .filter_map(|(score, at)| {
                chunks.get(at).map(|chunk| Hit {
                    score,
                    ..chunk.clone()
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: u32, tag: &str) -> String {
        (0..n)
            .map(|i| format!("{tag}_{i} = {i}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_chunk_keeps_its_first_64_lines_and_blank_ones_are_none() {
        let mut ring = Ring::new();
        ring.note("a.py", 68, &numbered(100, "row"));
        let chunks = ring.chunks();
        assert_eq!(chunks[0].lines, 68..132);
        assert_eq!(chunks[0].text.split('\n').count(), 64);
        assert!(chunks[0].text.ends_with("row_63 = 63"));
        ring.note("blank.py", 0, "\n   \n");
        assert_eq!(ring.chunks()[0].path, "a.py", "blank lines are no chunk");
        let shared = ring.chunks();
        assert!(
            Arc::ptr_eq(&shared, &ring.chunks()),
            "shared until it changes"
        );
        ring.note("b.py", 0, "x = 1");
        assert_eq!(ring.chunks()[0].path, "b.py");
    }

    #[test]
    fn a_near_copy_replaces_the_older_chunk_and_the_ring_keeps_sixteen() {
        let text = numbered(64, "row");
        let mut ring = Ring::new();
        ring.note("a.py", 0, &text);
        // The same lines, one edited: 63 of 64 shared (0.98), so one chunk.
        let edited = text.replacen("row_5 = 5", "row_5 = 55", 1);
        ring.note("a.py", 0, &edited);
        assert_eq!(ring.chunks().len(), 1);
        assert!(ring.chunks()[0].text.contains("row_5 = 55"));
        for i in 0..20 {
            ring.note(&format!("f{i}.py"), 0, &numbered(10, &format!("f{i}")));
        }
        let chunks = ring.chunks();
        assert_eq!(chunks.len(), RING_CHUNKS);
        assert_eq!(chunks[0].path, "f19.py");
        assert_eq!(
            chunks[RING_CHUNKS - 1].path,
            "f4.py",
            "the oldest went first"
        );
        ring.forget("f19.py");
        assert_eq!(ring.chunks()[0].path, "f18.py");
    }
}
