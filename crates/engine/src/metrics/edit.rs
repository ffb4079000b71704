//! Edit distances over code points: Levenshtein and InDel.

/// The Levenshtein distance between `a` and `b` over code points: insertions, deletions and
/// substitutions, each costing 1. Exact (rapidfuzz's bit-parallel algorithm, not an
/// approximation).
pub fn levenshtein(a: &str, b: &str) -> usize {
    rapidfuzz::distance::levenshtein::distance(a.chars(), b.chars())
}

/// The InDel distance between `a` and `b` over code points: insertions and deletions only,
/// i.e. `len(a) + len(b) - 2 * LCS(a, b)`.
pub fn indel_distance(a: &str, b: &str) -> usize {
    rapidfuzz::distance::indel::distance(a.chars(), b.chars())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook dynamic programme, as a reference.
    fn reference(a: &str, b: &str, substitute: usize) -> usize {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.iter().enumerate() {
            let mut diagonal = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let above = row[j + 1];
                let cost = if ca == cb { 0 } else { substitute };
                row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + cost);
                diagonal = above;
            }
        }
        row[b.len()]
    }

    #[test]
    fn table() {
        let cases = [
            ("", "", 0, 0),
            ("abc", "", 3, 3),
            ("kitten", "sitting", 3, 5),
            ("abcd", "abce", 1, 2),
            ("é🎉", "e🎉", 1, 2),
            ("🎉🎉", "🎉", 1, 1),
        ];
        for (a, b, lev, indel) in cases {
            assert_eq!(levenshtein(a, b), lev, "levenshtein({a:?}, {b:?})");
            assert_eq!(indel_distance(a, b), indel, "indel({a:?}, {b:?})");
        }
    }

    /// Long and random inputs, past the 64-character blocks of the bit-parallel algorithm and
    /// past the 640 items where editdistance 0.6.2 went wrong, agree with the textbook answer.
    #[test]
    fn exact_on_long_random_texts() {
        let alphabet: Vec<char> = "ab c\néü🎉(){};xyz".chars().collect();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound as u64) as usize
        };
        for round in 0..40 {
            let len_a = next(if round < 20 { 80 } else { 900 });
            let a: String = (0..len_a).map(|_| alphabet[next(alphabet.len())]).collect();
            // b: a with random edits, so the texts are related, as completions are.
            let mut b: Vec<char> = a.chars().collect();
            for _ in 0..next(60) {
                let at = next(b.len() + 1);
                match next(3) {
                    0 if at < b.len() => {
                        b.remove(at);
                    }
                    1 if at < b.len() => b[at] = alphabet[next(alphabet.len())],
                    _ => b.insert(at, alphabet[next(alphabet.len())]),
                }
            }
            let b: String = b.into_iter().collect();
            assert_eq!(levenshtein(&a, &b), reference(&a, &b, 1), "{a:?} / {b:?}");
            assert_eq!(
                indel_distance(&a, &b),
                reference(&a, &b, 2),
                "{a:?} / {b:?}"
            );
        }
    }
}
