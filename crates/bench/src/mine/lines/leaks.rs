//! The leak audit: which other indexed files hold a case's reference verbatim.
//!
//! A reference leaks when its text, trimmed, occurs anywhere in the text of another indexed file
//! of the workspace (any language, non-UTF-8 files included as indexed): a retriever can then
//! hand the model the answer itself. References shorter than a minimum number of characters
//! are not audited, since short code (`self.name`, `get(key)`) recurs by coincidence. One
//! Aho-Corasick pass over every file finds all of a batch's references at once.

use std::collections::HashMap;

use aho_corasick::AhoCorasick;

use crossfile_engine::index::FileEntry;

/// One case to audit: the path of its file and its reference.
#[derive(Clone, Copy, Debug)]
pub(super) struct Audited<'a> {
    pub path: &'a str,
    pub reference: &'a str,
}

/// Per case of `cases`, the paths of the other files of `files` whose text contains its trimmed
/// reference, in the order of `files`; empty when none does or when the trimmed reference has
/// fewer than `min_chars` characters.
pub(super) fn audit(
    files: &[&FileEntry],
    cases: &[Audited<'_>],
    min_chars: usize,
) -> Vec<Vec<String>> {
    let mut found = vec![Vec::new(); cases.len()];
    // Each distinct reference once, with the cases that have it.
    let mut patterns: Vec<&str> = Vec::new();
    let mut owners: Vec<Vec<usize>> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, case) in cases.iter().enumerate() {
        let reference = case.reference.trim();
        if reference.is_empty() || reference.chars().count() < min_chars {
            continue;
        }
        let id = *index.entry(reference).or_insert_with(|| {
            patterns.push(reference);
            owners.push(Vec::new());
            patterns.len() - 1
        });
        owners[id].push(i);
    }
    if patterns.is_empty() {
        return found;
    }
    let matcher = AhoCorasick::new(&patterns).ok();
    let mut hit = vec![false; patterns.len()];
    for file in files {
        let text: &str = &file.text;
        hit.fill(false);
        match &matcher {
            Some(ac) => {
                for m in ac.find_overlapping_iter(text) {
                    if let Some(h) = hit.get_mut(m.pattern().as_usize()) {
                        *h = true;
                    }
                }
            }
            // Too many patterns for one automaton (not reached at miner sizes): one by one.
            None => {
                for (h, pattern) in hit.iter_mut().zip(&patterns) {
                    *h = text.contains(pattern);
                }
            }
        }
        for (_, owners) in hit.iter().zip(&owners).filter(|(h, _)| **h) {
            for &case in owners {
                if cases[case].path != file.path {
                    found[case].push(file.path.clone());
                }
            }
        }
    }
    found
}
