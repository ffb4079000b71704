//! What keeps a live prompt the same from one keystroke to the next, so that a kept KV cache
//! (the embedded backend's, or llama-server's `cache_prompt`) holds most of it: the left context
//! starts at coarse line steps ([`crate::prompt::Layout::Steady`]), and the cross-file block of
//! the last prompt in the same file is kept, in its order, while retrieval still ranks its chunks
//! best. Where the block or the left context's start changes all the same, the last answer's
//! block and start are at hand for an answer while the new prompt is read.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::retrieve::Hit;

/// Files whose last block is remembered; past this many, the memory starts over.
const FILES: usize = 64;

/// Whether two hits show the same chunk: where it is from and its text.
fn same_chunk(a: &Hit, b: &Hit) -> bool {
    a.path == b.path && a.lines == b.lines && a.text == b.text
}

/// What the last answered prompt in a file showed.
#[derive(Clone, Debug, PartialEq)]
pub struct Shown {
    /// Its cross-file block's chunks, in their order.
    pub block: Vec<Hit>,
    /// The line its left context started at ([`crate::prompt::start_line`]).
    pub left_line: Option<usize>,
}

/// What each file's last answered prompt showed.
#[derive(Debug, Default)]
pub struct SteadyBlocks {
    last: Mutex<HashMap<String, Shown>>,
}

impl SteadyBlocks {
    /// `hits` (best first) in the order that keeps as much of `path`'s last block as it can: the
    /// longest run of the block's first chunks that are all still among the best (as many as the
    /// block had) comes first, in the block's order, then the other hits as ranked. The chunks are
    /// the same as retrieved, only their order is kept: a chunk that now ranks above one of the
    /// block's still goes in, after the kept run.
    pub fn order(&self, path: &str, mut hits: Vec<Hit>) -> Vec<Hit> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let Some(Shown { block, .. }) = last.get(path) else {
            return hits;
        };
        let best = &hits[..block.len().min(hits.len())];
        let kept = block
            .iter()
            .take_while(|shown| best.iter().any(|hit| same_chunk(shown, hit)))
            .count();
        if kept < block.len() {
            tracing::debug!(path, kept, of = block.len(), "the cross-file block changes");
        }
        let mut ordered = Vec::with_capacity(hits.len());
        for shown in &block[..kept] {
            if let Some(at) = hits.iter().position(|hit| same_chunk(shown, hit)) {
                ordered.push(hits.remove(at));
            }
        }
        ordered.extend(hits);
        ordered
    }

    /// Remembers what an answered prompt in `path` showed.
    pub fn remember(&self, path: &str, shown: Shown) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last.len() >= FILES && !last.contains_key(path) {
            last.clear();
        }
        last.insert(path.to_string(), shown);
    }

    /// What `path`'s last answered prompt showed, if `block` shows other chunks or another
    /// order or `left_line` is another start: a prompt from before retrieval changed its mind or
    /// the left context moved a step, for an answer while the new prompt is read.
    pub fn replaced(&self, path: &str, block: &[Hit], left_line: Option<usize>) -> Option<Shown> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let old = last.get(path)?;
        let same_block = old.block.len() == block.len()
            && old.block.iter().zip(block).all(|(a, b)| same_chunk(a, b));
        (!same_block || old.left_line != left_line).then(|| old.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str, line: u32) -> Hit {
        Hit {
            path: path.into(),
            lines: line..line + 10,
            score: f64::from(line),
            text: format!("{path}:{line}"),
            chunker: None,
            source: None,
        }
    }

    fn names(hits: &[Hit]) -> Vec<String> {
        hits.iter().map(|h| h.text.clone()).collect()
    }

    #[test]
    fn the_last_block_keeps_its_order_as_far_as_its_chunks_are_still_the_best() {
        let steady = SteadyBlocks::default();
        let first = vec![hit("a", 1), hit("b", 2), hit("c", 3)];
        assert_eq!(
            steady.order("m.py", first.clone()),
            first,
            "nothing remembered"
        );
        steady.remember("m.py", shown(&first[..2], Some(0)));
        let reranked = vec![hit("b", 2), hit("a", 1), hit("d", 4)];
        assert_eq!(
            names(&steady.order("m.py", reranked.clone())),
            ["a:1", "b:2", "d:4"],
            "the block's chunks in its order, then the rest"
        );
        assert_eq!(
            names(&steady.order("other.py", reranked.clone())),
            names(&reranked),
            "per file"
        );
        let outranked = vec![hit("d", 4), hit("a", 1), hit("b", 2)];
        assert_eq!(
            names(&steady.order("m.py", outranked)),
            ["a:1", "d:4", "b:2"],
            "`b` fell out of the best two: `a` is kept first, then the ranking"
        );
        let first_lost = vec![hit("b", 2), hit("c", 3), hit("a", 1)];
        assert_eq!(
            steady.order("m.py", first_lost.clone()),
            first_lost,
            "the block's first chunk is no longer among the best two"
        );
        let mut edited = hit("a", 1);
        edited.text.push('!');
        let changed = vec![edited, hit("b", 2)];
        assert_eq!(
            steady.order("m.py", changed.clone()),
            changed,
            "a chunk's text changed"
        );
        assert_eq!(
            steady.order("m.py", vec![hit("a", 1)]),
            [hit("a", 1)],
            "fewer hits"
        );
    }

    fn shown(block: &[Hit], left_line: Option<usize>) -> Shown {
        Shown {
            block: block.to_vec(),
            left_line,
        }
    }

    #[test]
    fn a_replaced_block_or_start_is_given_back_for_an_answer_while_the_new_one_is_read() {
        let steady = SteadyBlocks::default();
        let block = vec![hit("a", 1), hit("b", 2)];
        let last = Some(shown(&block, Some(32)));
        assert_eq!(
            steady.replaced("m.py", &block, Some(32)),
            None,
            "nothing remembered"
        );
        steady.remember("m.py", shown(&block, Some(32)));
        assert_eq!(
            steady.replaced("m.py", &block, Some(32)),
            None,
            "the same prompt"
        );
        assert_eq!(steady.replaced("m.py", &block, Some(64)), last, "a step");
        assert_eq!(steady.replaced("m.py", &block, None), last);
        let other = [hit("a", 1), hit("c", 3)];
        assert_eq!(steady.replaced("m.py", &other, Some(32)), last);
        let reordered = [hit("b", 2), hit("a", 1)];
        assert_eq!(steady.replaced("m.py", &reordered, Some(32)), last);
        assert_eq!(steady.replaced("m.py", &block[..1], Some(32)), last);
        assert_eq!(steady.replaced("n.py", &other, Some(32)), None, "per file");
    }
}
