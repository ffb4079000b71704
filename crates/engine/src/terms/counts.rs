//! Counting terms: each distinct term of a token list with its count, and a map keyed by term
//! ids that hashes them cheaply.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasherDefault, Hasher};

use super::TermId;

/// Distinct terms of `tokens` with counts, in order of first appearance.
pub fn term_counts(tokens: &[TermId]) -> Vec<(TermId, u32)> {
    let mut slots = IdMap::<usize>::default();
    let mut counts: Vec<(TermId, u32)> = Vec::new();
    for &term in tokens {
        match slots.entry(term) {
            Entry::Occupied(slot) => {
                let count = &mut counts[*slot.get()].1;
                *count = count.saturating_add(1);
            }
            Entry::Vacant(slot) => {
                slot.insert(counts.len());
                counts.push((term, 1));
            }
        }
    }
    counts
}

/// A hash map keyed by term ids, with a multiplicative hash instead of SipHash.
pub type IdMap<V> = HashMap<TermId, V, BuildHasherDefault<IdHasher>>;

/// Fibonacci hashing of a `u32` (the only key hashed): cheap, and spreads dense ids.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn term_counts_keep_first_appearance_order() {
        type Row = (&'static [TermId], &'static [(TermId, u32)]);
        let cases: &[Row] = &[
            (&[], &[]),
            (&[7], &[(7, 1)]),
            (
                &[5, 3, 5, 5, TermId::MAX, 3],
                &[(5, 3), (3, 2), (TermId::MAX, 1)],
            ),
            (&[0, 0, 0], &[(0, 3)]),
        ];
        for (tokens, want) in cases {
            assert_eq!(term_counts(tokens), *want, "term_counts({tokens:?})");
        }
    }
}
