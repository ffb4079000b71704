//! `mix:<spec>[*<weight>]+<spec>[*<weight>][+…]`: one budgeted list from several sources, each
//! filling its share of the cross-file block.
//!
//! Each source ranks its own top `k`; the composer then takes hits in turns, always from the
//! source whose share is least filled (bytes taken over its weight; ties go to the earlier
//! source), so however far down the prompt's budget cuts the list (the block drops its last
//! hits first), each source holds about its weight's share of what is kept. A hit every line of
//! which (trimmed, blank lines aside) a hit already taken shows is dropped: two sources finding
//! the same code send it once, while a window that shows the bodies a skeleton elided is kept.
//! Each kept hit names its source ([`Hit::source`]), and a source that finds nothing gives its
//! share to the others, so a composition of `threshold:` parts sends nothing when no part is
//! confident.

use std::collections::HashSet;

use rayon::prelude::*;

use super::{Hit, Query, RetrieveError, Retriever};
use crate::index::Snapshot;

/// One source of a mix and its weight.
pub struct Part {
    pub retriever: Box<dyn Retriever>,
    /// The source's spec, as each hit it gives names it.
    pub name: String,
    /// Its share of the block, relative to the others' (> 0).
    pub weight: f64,
}

pub struct Mix {
    pub parts: Vec<Part>,
}

impl Retriever for Mix {
    /// Up to `top_k` hits from each source, in the order the block should keep them.
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let lists: Vec<Vec<Hit>> = self
            .parts
            .par_iter()
            .map(|part| part.retriever.retrieve(snapshot, query, top_k))
            .collect::<Result<_, _>>()?;
        let weights: Vec<f64> = self.parts.iter().map(|p| p.weight).collect();
        let mut taken = compose(lists, &weights);
        for (hit, source) in &mut taken {
            hit.source = self.parts.get(*source).map(|p| p.name.clone());
        }
        Ok(taken.into_iter().map(|(hit, _)| hit).collect())
    }
}

/// The hits of `lists` (each best first) interleaved by `weights`, repeats dropped, each with
/// the index of its list.
fn compose(lists: Vec<Vec<Hit>>, weights: &[f64]) -> Vec<(Hit, usize)> {
    let mut queues: Vec<std::vec::IntoIter<Hit>> = lists.into_iter().map(Vec::into_iter).collect();
    let mut filled = vec![0.0_f64; queues.len()];
    let mut open: Vec<bool> = vec![true; queues.len()];
    let mut shown: HashSet<String> = HashSet::new();
    let mut taken: Vec<(Hit, usize)> = Vec::new();
    loop {
        let next = (0..queues.len()).filter(|&i| open[i]).min_by(|&a, &b| {
            let share = |i: usize| filled[i] / weights.get(i).copied().unwrap_or(1.0);
            share(a).total_cmp(&share(b)).then(a.cmp(&b))
        });
        let Some(source) = next else {
            break;
        };
        let Some(hit) = queues[source].next() else {
            open[source] = false;
            continue;
        };
        if lines(&hit.text).all(|line| shown.contains(line)) {
            continue;
        }
        shown.extend(lines(&hit.text).map(str::to_owned));
        filled[source] += hit.text.len() as f64;
        taken.push((hit, source));
    }
    taken
}

/// A text's lines, trimmed, blank ones left out.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::ChunkerKind;

    fn hit(path: &str, lines: std::ops::Range<u32>, text: &str) -> Hit {
        Hit {
            path: path.into(),
            lines,
            score: 1.0,
            text: text.into(),
            chunker: Some(ChunkerKind::Sliding),
            source: None,
        }
    }

    fn order(taken: &[(Hit, usize)]) -> Vec<(usize, &str)> {
        taken.iter().map(|(h, s)| (*s, h.text.as_str())).collect()
    }

    #[test]
    fn sources_take_turns_by_the_bytes_their_weight_allows() {
        let a: Vec<Hit> = (0..4)
            .map(|i| {
                hit(
                    "a.py",
                    i * 10..i * 10 + 5,
                    &format!("a{i}-{}", "x".repeat(97)),
                )
            })
            .collect();
        let b: Vec<Hit> = (0..4)
            .map(|i| {
                hit(
                    "b.py",
                    i * 10..i * 10 + 5,
                    &format!("b{i}-{}", "y".repeat(47)),
                )
            })
            .collect();
        // Equal weights: b's hits are half as long, so b gives two for each of a's.
        let taken = compose(vec![a.clone(), b.clone()], &[1.0, 1.0]);
        let sources: Vec<usize> = taken.iter().map(|(_, s)| *s).collect();
        assert_eq!(sources, [0, 1, 1, 0, 1, 1, 0, 0]);
        // a weighs twice as much: it takes about two thirds of the bytes early on.
        let taken = compose(vec![a, b], &[4.0, 1.0]);
        let first: Vec<usize> = taken.iter().take(4).map(|(_, s)| *s).collect();
        assert_eq!(first, [0, 1, 0, 0]);
    }

    #[test]
    fn code_already_shown_is_sent_once_and_new_lines_are_kept() {
        let a = vec![
            hit("m.py", 10..20, "def f():\n    return 1\n"),
            hit("n.py", 0..5, "same"),
        ];
        let b = vec![
            // The same lines at another range, or in another file: shown already.
            hit("m.py", 15..25, "  def f():\n\n    return 1"),
            // A line not shown yet: kept, though it overlaps `a`'s first hit.
            hit("m.py", 12..22, "def f():\n    return 2"),
            hit("o.py", 0..5, "  same\n"),
            hit("p.py", 0..1, "\n  \n"),
        ];
        let taken = compose(vec![a, b], &[1.0, 1.0]);
        assert_eq!(
            order(&taken),
            [
                (0, "def f():\n    return 1\n"),
                (1, "def f():\n    return 2"),
                // b's turn comes first; a's `same` is then shown already.
                (1, "  same\n"),
            ]
        );
    }

    #[test]
    fn an_empty_source_leaves_the_block_to_the_others_and_none_gives_nothing() {
        let a = vec![hit("a.py", 0..5, "one"), hit("a.py", 5..9, "two")];
        let taken = compose(vec![Vec::new(), a], &[9.0, 1.0]);
        assert_eq!(order(&taken), [(1, "one"), (1, "two")]);
        assert!(compose(vec![Vec::new(), Vec::new()], &[1.0, 1.0]).is_empty());
    }
}
