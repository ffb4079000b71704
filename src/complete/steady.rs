//! What keeps a live prompt the same from one keystroke to the next, so that a kept KV cache
//! (the embedded backend's, or llama-server's `cache_prompt`) holds most of it: the left context
//! starts at coarse line steps ([`crate::prompt::Layout::Steady`]), and the cross-file block of
//! the last prompt in the same file is kept, in its order, while retrieval still ranks its chunks
//! best.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Mutex;

use crate::retrieve::Hit;

/// Files whose last block is remembered; past this many, the memory starts over.
const FILES: usize = 64;

/// A chunk as the block shows it: where it is from and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Shown {
    path: String,
    lines: Range<u32>,
    text: String,
}

impl Shown {
    fn of(hit: &Hit) -> Shown {
        Shown {
            path: hit.path.clone(),
            lines: hit.lines.clone(),
            text: hit.text.clone(),
        }
    }

    fn is(&self, hit: &Hit) -> bool {
        self.path == hit.path && self.lines == hit.lines && self.text == hit.text
    }
}

/// The chunks of each file's last cross-file block, in their order.
#[derive(Debug, Default)]
pub struct SteadyBlocks {
    last: Mutex<HashMap<String, Vec<Shown>>>,
}

impl SteadyBlocks {
    /// `hits` (best first) in the order that keeps as much of `path`'s last block as it can: the
    /// longest run of the block's first chunks that are all still among the best (as many as the
    /// block had) comes first, in the block's order, then the other hits as ranked. The chunks are
    /// the same as retrieved, only their order is kept: a chunk that now ranks above one of the
    /// block's still goes in, after the kept run.
    pub fn order(&self, path: &str, mut hits: Vec<Hit>) -> Vec<Hit> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let Some(block) = last.get(path) else {
            return hits;
        };
        let best = &hits[..block.len().min(hits.len())];
        let kept = block
            .iter()
            .take_while(|shown| best.iter().any(|hit| shown.is(hit)))
            .count();
        if kept < block.len() {
            tracing::debug!(path, kept, of = block.len(), "the cross-file block changes");
        }
        let mut ordered = Vec::with_capacity(hits.len());
        for shown in &block[..kept] {
            if let Some(at) = hits.iter().position(|hit| shown.is(hit)) {
                ordered.push(hits.remove(at));
            }
        }
        ordered.extend(hits);
        ordered
    }

    /// Remembers `block`, the chunks a prompt in `path` showed.
    pub fn remember(&self, path: &str, block: &[Hit]) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last.len() >= FILES && !last.contains_key(path) {
            last.clear();
        }
        last.insert(path.to_string(), block.iter().map(Shown::of).collect());
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
        steady.remember("m.py", &first[..2]);
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
}
