//! What keeps a live prompt the same from one keystroke to the next, so that a kept KV cache
//! (the embedded backend's, or llama-server's `cache_prompt`) holds most of it: the left context
//! starts at coarse line steps ([`crate::prompt::Layout::Steady`]), and the cross-file block of
//! the last prompt in the same file is kept while retrieval still returns every chunk of it.

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
    /// The `top_k` hits to lay out, from `ranked` (best first, possibly more than `top_k`): when
    /// every chunk of `path`'s last block is among them, those first in the block's order, then
    /// the best others; otherwise the best `top_k`.
    pub fn order(&self, path: &str, mut ranked: Vec<Hit>, top_k: usize) -> Vec<Hit> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let places: Option<Vec<usize>> = last.get(path).and_then(|block| {
            block
                .iter()
                .map(|shown| ranked.iter().position(|hit| shown.is(hit)))
                .collect()
        });
        drop(last);
        let Some(places) = places.filter(|p| !p.is_empty()) else {
            tracing::debug!(path, "a new cross-file block");
            ranked.truncate(top_k);
            return ranked;
        };
        let mut kept: Vec<Hit> = places.iter().map(|&at| ranked[at].clone()).collect();
        let mut index = 0;
        ranked.retain(|_| {
            index += 1;
            !places.contains(&(index - 1))
        });
        kept.extend(ranked);
        kept.truncate(top_k.max(places.len()));
        kept
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
    fn the_last_block_keeps_its_order_while_every_chunk_of_it_is_retrieved() {
        let steady = SteadyBlocks::default();
        let first = vec![hit("a", 1), hit("b", 2), hit("c", 3)];
        assert_eq!(
            steady.order("m.py", first.clone(), 3),
            first,
            "nothing remembered"
        );
        assert_eq!(
            steady.order("m.py", first.clone(), 2),
            first[..2],
            "the best top k"
        );
        steady.remember("m.py", &first[..2]);
        let reranked = vec![
            hit("d", 4),
            hit("b", 2),
            hit("c", 3),
            hit("e", 5),
            hit("a", 1),
        ];
        assert_eq!(
            names(&steady.order("m.py", reranked.clone(), 3)),
            ["a:1", "b:2", "d:4"],
            "the block's chunks, deeper than top k, then the best others"
        );
        assert_eq!(
            names(&steady.order("other.py", reranked.clone(), 3)),
            names(&reranked[..3]),
            "per file"
        );
        let lost_one = vec![hit("b", 2), hit("c", 3), hit("d", 4)];
        assert_eq!(steady.order("m.py", lost_one.clone(), 3), lost_one);
        let mut edited = hit("a", 1);
        edited.text.push('!');
        let changed = vec![hit("b", 2), edited];
        assert_eq!(
            steady.order("m.py", changed.clone(), 3),
            changed,
            "a chunk's text changed"
        );
    }
}
