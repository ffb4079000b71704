//! A port of CPython 3.11 `difflib.SequenceMatcher` (no junk function, `autojunk` on) over
//! code points, and fuzzywuzzy's `fuzz.ratio` on top of it.

use std::collections::HashMap;

use super::pyround::round_half_even;

/// A matching block: `a[a..a + size] == b[b..b + size]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Match {
    /// Start in `a`.
    pub a: usize,
    /// Start in `b`.
    pub b: usize,
    /// Length of the block.
    pub size: usize,
}

/// `difflib.SequenceMatcher(None, a, b)` with `autojunk=True`, over code points.
///
/// With no junk function the junk set is empty, so only *popular* elements matter: when `b` has
/// at least 200 elements, an element occurring more than `1 + len(b) // 100` times in `b` is left
/// out of the index, so no match starts from it, though a match found elsewhere may still be
/// extended over it (exactly as CPython does).
pub struct SequenceMatcher {
    a: Vec<char>,
    b: Vec<char>,
    /// `b2j`: for each element of `b` that is not popular, its indices in `b`, increasing.
    b2j: HashMap<char, Vec<usize>>,
}

impl SequenceMatcher {
    /// Prepares to compare `a` with `b` (`b` is the indexed side, as in difflib).
    pub fn new(a: &str, b: &str) -> SequenceMatcher {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        let mut b2j: HashMap<char, Vec<usize>> = HashMap::new();
        for (j, &c) in b.iter().enumerate() {
            b2j.entry(c).or_default().push(j);
        }
        let n = b.len();
        if n >= 200 {
            let ntest = n / 100 + 1;
            b2j.retain(|_, indices| indices.len() <= ntest);
        }
        SequenceMatcher { a, b, b2j }
    }

    /// `find_longest_match(alo, ahi, blo, bhi)`: the longest matching block in `a[alo..ahi]` and
    /// `b[blo..bhi]`; of the longest, the one starting earliest in `a`, and of those the one
    /// starting earliest in `b`. Size 0 when nothing matches.
    pub fn find_longest_match(&self, alo: usize, ahi: usize, blo: usize, bhi: usize) -> Match {
        let (a, b) = (&self.a, &self.b);
        let (mut besti, mut bestj, mut bestsize) = (alo, blo, 0);
        // `prev[j + 1 - blo]` is difflib's `j2len[j]`: the length of the match ending at a[i - 1]
        // and b[j]; `cur` is `newj2len` for the current i. Touched entries are reset after use.
        let width = bhi.saturating_sub(blo) + 1;
        let mut prev = vec![0usize; width];
        let mut cur = vec![0usize; width];
        let mut prev_touched: Vec<usize> = Vec::new();
        let mut cur_touched: Vec<usize> = Vec::new();
        for (i, c) in a.iter().enumerate().take(ahi).skip(alo) {
            if let Some(indices) = self.b2j.get(c) {
                for &j in indices {
                    if j < blo {
                        continue;
                    }
                    if j >= bhi {
                        break;
                    }
                    let k = prev[j - blo] + 1;
                    cur[j + 1 - blo] = k;
                    cur_touched.push(j + 1 - blo);
                    if k > bestsize {
                        besti = i + 1 - k;
                        bestj = j + 1 - k;
                        bestsize = k;
                    }
                }
            }
            for &t in &prev_touched {
                prev[t] = 0;
            }
            prev_touched.clear();
            std::mem::swap(&mut prev, &mut cur);
            std::mem::swap(&mut prev_touched, &mut cur_touched);
        }
        // Extend the match by equal elements on each side. difflib extends first over non-junk
        // and then over junk elements; the junk set is empty here, so popular elements count as
        // non-junk and one pass each way is the whole of it.
        while besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1] {
            besti -= 1;
            bestj -= 1;
            bestsize += 1;
        }
        while besti + bestsize < ahi
            && bestj + bestsize < bhi
            && a[besti + bestsize] == b[bestj + bestsize]
        {
            bestsize += 1;
        }
        Match {
            a: besti,
            b: bestj,
            size: bestsize,
        }
    }

    /// `get_matching_blocks()`: the longest match, then recursively the longest matches to its
    /// left and right; sorted, adjacent blocks merged, and ending with the sentinel
    /// `(len(a), len(b), 0)`.
    pub fn matching_blocks(&self) -> Vec<Match> {
        let (la, lb) = (self.a.len(), self.b.len());
        let mut queue = vec![(0, la, 0, lb)];
        let mut blocks = Vec::new();
        while let Some((alo, ahi, blo, bhi)) = queue.pop() {
            let m = self.find_longest_match(alo, ahi, blo, bhi);
            if m.size == 0 {
                continue;
            }
            blocks.push(m);
            if alo < m.a && blo < m.b {
                queue.push((alo, m.a, blo, m.b));
            }
            if m.a + m.size < ahi && m.b + m.size < bhi {
                queue.push((m.a + m.size, ahi, m.b + m.size, bhi));
            }
        }
        blocks.sort_unstable();
        let mut merged: Vec<Match> = Vec::with_capacity(blocks.len() + 1);
        for m in blocks {
            match merged.last_mut() {
                Some(last) if last.a + last.size == m.a && last.b + last.size == m.b => {
                    last.size += m.size;
                }
                _ => merged.push(m),
            }
        }
        merged.push(Match {
            a: la,
            b: lb,
            size: 0,
        });
        merged
    }

    /// `ratio()`: `2.0 * M / T` with `M` the matched elements and `T` the total length of both
    /// sequences; 1.0 when both are empty.
    pub fn ratio(&self) -> f64 {
        let matches: usize = self.matching_blocks().iter().map(|m| m.size).sum();
        let length = self.a.len() + self.b.len();
        if length == 0 {
            1.0
        } else {
            2.0 * matches as f64 / length as f64
        }
    }
}

/// fuzzywuzzy 0.18.0 `fuzz.ratio(s1, s2)` without python-Levenshtein: 100 when the strings are
/// equal (both empty included), 0 when one is empty, else `round(100 * r)` (half to even) with
/// `r = SequenceMatcher(None, s1, s2).ratio()`. Not symmetric: `s2` is difflib's indexed side.
pub fn fuzz_ratio(s1: &str, s2: &str) -> f64 {
    if s1 == s2 {
        return 100.0;
    }
    if s1.is_empty() || s2.is_empty() {
        return 0.0;
    }
    round_half_even(100.0 * SequenceMatcher::new(s1, s2).ratio())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(a: &str, b: &str) -> Vec<(usize, usize, usize)> {
        SequenceMatcher::new(a, b)
            .matching_blocks()
            .iter()
            .map(|m| (m.a, m.b, m.size))
            .collect()
    }

    #[test]
    fn matching_blocks_match_cpython() {
        // Values from CPython 3.11 `SequenceMatcher(None, a, b).get_matching_blocks()`.
        assert_eq!(
            blocks("abxcd", "abcd"),
            vec![(0, 0, 2), (3, 2, 2), (5, 4, 0)]
        );
        assert_eq!(blocks("", ""), vec![(0, 0, 0)]);
        assert_eq!(blocks("abc", ""), vec![(3, 0, 0)]);
        // The earliest longest match in `a` wins, then the earliest in `b`.
        assert_eq!(blocks("ab", "abab"), vec![(0, 0, 2), (2, 4, 0)]);
        assert_eq!(
            blocks("qabxcd", "abycdf"),
            vec![(1, 0, 2), (4, 3, 2), (6, 6, 0)]
        );
        // Code points, not bytes or UTF-16 units.
        assert_eq!(blocks("é🎉x", "🎉x"), vec![(1, 0, 2), (3, 2, 0)]);
    }

    #[test]
    fn ratio_is_not_symmetric() {
        // CPython 3.11: SequenceMatcher(None, "tide", "diet").ratio() == 0.25 and the swap 0.5.
        assert_eq!(SequenceMatcher::new("tide", "diet").ratio(), 0.25);
        assert_eq!(SequenceMatcher::new("diet", "tide").ratio(), 0.5);
        assert_eq!(SequenceMatcher::new("", "").ratio(), 1.0);
    }

    #[test]
    fn autojunk_ignores_popular_characters_of_long_b() {
        // 200 characters: `x` occurs 198 times in b, more than 1 + 200 // 100 = 3, so it is
        // popular. Matches cannot start from it; only "ab" and "cd" can be found, and they are
        // extended over neighbouring x's when the sides agree.
        let b = format!("ab{}cd", "x".repeat(196));
        let a = format!("{}ab", "x".repeat(10));
        // CPython 3.11: SequenceMatcher(None, a, b).get_matching_blocks() == [(10, 0, 2), ...].
        assert_eq!(blocks(&a, &b), vec![(10, 0, 2), (12, 200, 0)]);
        // Without autojunk (b shorter than 200) the run of x's matches.
        let short_b = format!("ab{}cd", "x".repeat(100));
        assert_eq!(blocks(&a, &short_b), vec![(0, 2, 10), (12, 104, 0)]);
        // A match found from a non-popular character extends over popular ones.
        let a = format!("abxxx{}", "y".repeat(3));
        assert_eq!(blocks(&a, &b), vec![(0, 0, 5), (8, 200, 0)]);
    }

    #[test]
    fn fuzz_ratio_edges() {
        assert_eq!(fuzz_ratio("", ""), 100.0);
        assert_eq!(fuzz_ratio("a", ""), 0.0);
        assert_eq!(fuzz_ratio("", "a"), 0.0);
        assert_eq!(fuzz_ratio("same", "same"), 100.0);
        // r = 2 * 3 / 8 = 0.75 -> 75.
        assert_eq!(fuzz_ratio("abcd", "abce"), 75.0);
        // r = 2 * 5 / 16 = 0.625 -> 62.5 -> 62 (half to even).
        assert_eq!(fuzz_ratio("abcdeXXX", "abcdeYYY"), 62.0);
    }
}
