//! How much retrieved context shares with a reference: the share of the reference's distinct
//! identifiers that occur in some retrieved chunk, with CrossCodeEval's identifiers. CrossCodeEval
//! (§3.5, Fig. 5) buckets EM and ES by the identifier overlap between the retrieved context and
//! the reference; its exact formula was not in the sources at hand (its repository has no code
//! for it), so this is the plain reading: the reference's identifiers the context holds.

use std::collections::HashSet;

use super::identifiers::cceval_identifiers;
use crate::lang::Language;

/// `|ids(reference) ∩ ids(chunk₁ ∪ … ∪ chunkₙ)| / |ids(reference)|` over distinct identifiers,
/// each text's identifiers as CrossCodeEval's metric extracts them ([`cceval_identifiers`]: string
/// literals removed, `language`'s keywords left out; each chunk on its own, so no literal spans
/// two chunks). `None` when the reference has no identifier or there is no chunk: there is
/// nothing to measure. A chunk without identifiers still counts as a chunk.
pub fn identifier_overlap<'c>(
    language: Language,
    reference: &str,
    chunks: impl IntoIterator<Item = &'c str>,
) -> Option<f64> {
    let wanted: HashSet<String> = cceval_identifiers(language, reference)
        .into_iter()
        .collect();
    if wanted.is_empty() {
        return None;
    }
    let mut any_chunk = false;
    let mut found: HashSet<&str> = HashSet::new();
    for chunk in chunks {
        any_chunk = true;
        for id in cceval_identifiers(language, chunk) {
            if let Some(hit) = wanted.get(&id) {
                found.insert(hit);
            }
        }
        if found.len() == wanted.len() {
            break;
        }
    }
    any_chunk.then(|| found.len() as f64 / wanted.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Language::*;

    #[test]
    fn share_of_the_references_distinct_identifiers() {
        // (language, reference, chunks, overlap), each worked out by hand from the definition.
        let rows: &[(Language, &str, &[&str], Option<f64>)] = &[
            // {store, add, amount}: `store` and `amount` are in the chunks → 2/3.
            (
                Python,
                "store.add(amount)",
                &["store = Store()", "def total(amount): ..."],
                Some(2.0 / 3.0),
            ),
            // Repeats count once: {ledger, add} both found → 1.
            (
                Python,
                "ledger.add(ledger)",
                &["ledger", "x.add()"],
                Some(1.0),
            ),
            // CrossCodeEval's Python keywords include `None` but not `True`: {x, True}, and the
            // chunk has `True` → 1/2.
            (
                Python,
                "return x if True else None",
                &["flag = True or None"],
                Some(0.5),
            ),
            // Identifiers inside a chunk's string literal do not count.
            (Python, "render(page)", &["'render page'"], Some(0.0)),
            // Java: {list, size}; `size` in the second chunk, `list` nowhere (`List` differs).
            (
                Java,
                "list.size();",
                &["List<String> items;", "int size() {"],
                Some(0.5),
            ),
            // Nothing to measure: no identifier in the reference, or no chunk.
            (Python, ")", &["x"], None),
            (Python, "\"text\"", &["text"], None),
            (Python, "f(x)", &[], None),
            // A chunk without identifiers is still a chunk.
            (Python, "f(x)", &[""], Some(0.0)),
            // `await` is an identifier for CrossCodeEval's TypeScript list: {await, load} → 1/2.
            (TypeScript, "await load(🎉)", &["load"], Some(0.5)),
        ];
        for &(language, reference, chunks, want) in rows {
            let got = identifier_overlap(language, reference, chunks.iter().copied());
            assert_eq!(got, want, "{language:?} {reference:?} {chunks:?}");
        }
    }
}
