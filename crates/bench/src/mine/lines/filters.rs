//! CrossCodeEval's quality filters on a file's candidate cursors: enough prompt lines, a
//! reference of a bounded number of tokens, and no reference the file repeats.
//!
//! A *candidate* is a cursor the rule keeps (`rule.rs`: a line's first cross-file identifier
//! use, the line not trivial). The filters run in a fixed order and a dropped candidate is
//! counted under the first filter that drops it, so the counts add up to the candidates dropped:
//! 1. prompt lines: fewer than [`Filters::min_prompt_lines`] whole lines above the cursor's line;
//! 2. reference tokens: fewer than [`Filters::min_reference_tokens`] or more than
//!    [`Filters::max_reference_tokens`] [`reference_tokens`];
//! 3. duplicate references: the reference, trimmed, is the trimmed reference of another
//!    candidate of the same file (a line repeated verbatim is one such case), unless
//!    [`Filters::allow_duplicate_references`]; every copy is dropped, not all but one.

use std::collections::HashMap;

use super::rule::UseSite;
use crossfile_engine::terms::is_word_char;

/// CrossCodeEval's bounds on a reference's tokens, 3 to 30, as issue 35 gives them (the code
/// that built CrossCodeEval is not public).
pub const CCEVAL_MIN_REFERENCE_TOKENS: usize = 3;
/// See [`CCEVAL_MIN_REFERENCE_TOKENS`].
pub const CCEVAL_MAX_REFERENCE_TOKENS: usize = 30;
/// The default of [`Filters::min_prompt_lines`] (crossfile's choice).
pub const DEFAULT_MIN_PROMPT_LINES: usize = 10;
/// The default of [`Filters::min_leak_chars`] (crossfile's choice).
pub const DEFAULT_MIN_LEAK_CHARS: usize = 20;

/// Which candidate cursors become cases, and the leak audit's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filters {
    /// The fewest whole lines above the cursor's line (0: no limit).
    pub min_prompt_lines: usize,
    /// The fewest tokens of the reference (0: no limit).
    pub min_reference_tokens: usize,
    /// The most tokens of the reference.
    pub max_reference_tokens: usize,
    /// Keep candidates whose reference the file repeats.
    pub allow_duplicate_references: bool,
    /// References shorter than this many characters (trimmed) are not audited for leaks.
    pub min_leak_chars: usize,
    /// Drop cases the leak audit flags instead of keeping them with `metadata.leak`.
    pub drop_leaks: bool,
}

impl Default for Filters {
    /// CrossCodeEval's filters, the leak audit keeping what it flags.
    fn default() -> Filters {
        Filters {
            min_prompt_lines: DEFAULT_MIN_PROMPT_LINES,
            min_reference_tokens: CCEVAL_MIN_REFERENCE_TOKENS,
            max_reference_tokens: CCEVAL_MAX_REFERENCE_TOKENS,
            allow_duplicate_references: false,
            min_leak_chars: DEFAULT_MIN_LEAK_CHARS,
            drop_leaks: false,
        }
    }
}

/// How many candidates each filter dropped (the first filter that dropped each).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dropped {
    /// Fewer prompt lines than the minimum.
    pub short_prompt: usize,
    /// Fewer reference tokens than the minimum.
    pub few_reference_tokens: usize,
    /// More reference tokens than the maximum.
    pub many_reference_tokens: usize,
    /// A reference the file repeats.
    pub duplicate_reference: usize,
    /// Flagged by the leak audit with [`Filters::drop_leaks`] (counted per case drawn, not per
    /// candidate: the audit runs on drawn cases only).
    pub leak: usize,
}

impl Dropped {
    pub(super) fn add(&mut self, other: Dropped) {
        self.short_prompt += other.short_prompt;
        self.few_reference_tokens += other.few_reference_tokens;
        self.many_reference_tokens += other.many_reference_tokens;
        self.duplicate_reference += other.duplicate_reference;
        self.leak += other.leak;
    }
}

/// The tokens of a reference, counted without a model: each maximal run of word characters
/// (Python's `\w`, as [`crossfile_engine::terms::words`]) is one token, and so is every other character
/// that is not whitespace. `cmd.invoke(args)` has 6: `cmd . invoke ( args )`.
pub fn reference_tokens(reference: &str) -> usize {
    let mut count = 0;
    let mut in_word = false;
    for c in reference.chars() {
        if is_word_char(c) {
            if !in_word {
                count += 1;
            }
            in_word = true;
        } else {
            in_word = false;
            if !c.is_whitespace() {
                count += 1;
            }
        }
    }
    count
}

/// The candidates of one file (`text`) that pass the filters, in their order; what each filter
/// dropped is added to `dropped`.
pub(super) fn apply(
    candidates: Vec<UseSite>,
    text: &str,
    filters: &Filters,
    dropped: &mut Dropped,
) -> Vec<UseSite> {
    let reference = |c: &UseSite| text.get(c.offset..c.line_end).unwrap_or_default().trim();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    if !filters.allow_duplicate_references {
        for c in &candidates {
            *seen.entry(reference(c)).or_default() += 1;
        }
    }
    candidates
        .into_iter()
        .filter(|c| {
            let reference = reference(c);
            let tokens = reference_tokens(reference);
            let slot = if (c.line as usize) < filters.min_prompt_lines {
                &mut dropped.short_prompt
            } else if tokens < filters.min_reference_tokens {
                &mut dropped.few_reference_tokens
            } else if tokens > filters.max_reference_tokens {
                &mut dropped.many_reference_tokens
            } else if seen.get(reference).is_some_and(|&n| n > 1) {
                &mut dropped.duplicate_reference
            } else {
                return true;
            };
            *slot += 1;
            false
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_tokens_are_word_runs_and_other_characters() {
        let cases: &[(&str, usize)] = &[
            ("", 0),
            ("   ", 0),
            ("x", 1),
            ("cmd.invoke(args)", 6),
            ("calculate_rotary_embedding_base()", 3),
            ("active is False", 3),
            ("a == b", 4),
            ("x²+½y", 3),
            ("emoji🎉here", 3),
            ("\"two words\"", 4),
        ];
        for (text, want) in cases {
            assert_eq!(reference_tokens(text), *want, "{text:?}");
        }
    }

    fn cursor(text: &str, line: u32, at: &str) -> UseSite {
        let line_start: usize = text
            .split_inclusive('\n')
            .take(line as usize)
            .map(str::len)
            .sum();
        let line_text = text[line_start..].split('\n').next().unwrap_or_default();
        let offset = line_start
            + line_text
                .find(at)
                .expect("the cursor's text is on its line");
        UseSite {
            line,
            offset,
            line_end: line_start + line_text.len(),
            name: at.to_owned(),
        }
    }

    #[test]
    fn each_filter_drops_its_candidates_and_counts_them_once() {
        let text = "a = helper(1)\n\
                    b = helper(2)\n\
                    c = helper(2)  \n\
                    d = go()\n\
                    e = long(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)\n\
                    f = helper(3)\n";
        let candidates = vec![
            cursor(text, 0, "helper"),
            cursor(text, 1, "helper"),
            cursor(text, 2, "helper"),
            cursor(text, 3, "go"),
            cursor(text, 4, "long"),
            cursor(text, 5, "helper"),
        ];
        let filters = Filters {
            min_prompt_lines: 1,
            ..Filters::default()
        };
        let mut dropped = Dropped::default();
        let kept = apply(candidates.clone(), text, &filters, &mut dropped);
        let lines: Vec<u32> = kept.iter().map(|c| c.line).collect();
        assert_eq!(lines, [3, 5]);
        assert_eq!(
            dropped,
            Dropped {
                short_prompt: 1,
                few_reference_tokens: 0,
                many_reference_tokens: 1,
                duplicate_reference: 2,
                leak: 0,
            }
        );
        // `go()` has 3 tokens: it passes at 3 and is dropped at 4.
        let strict = Filters {
            min_reference_tokens: 4,
            ..filters.clone()
        };
        let mut dropped = Dropped::default();
        apply(candidates.clone(), text, &strict, &mut dropped);
        assert_eq!(dropped.few_reference_tokens, 1);

        let off = Filters {
            min_prompt_lines: 0,
            min_reference_tokens: 0,
            max_reference_tokens: usize::MAX,
            allow_duplicate_references: true,
            ..Filters::default()
        };
        let mut dropped = Dropped::default();
        let kept = apply(candidates, text, &off, &mut dropped);
        assert_eq!(kept.len(), 6);
        assert_eq!(dropped, Dropped::default());
    }
}
