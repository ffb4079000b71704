//! CrossCodeEval's tokenizer: NLTK 3.8.1 `word_tokenize(text, preserve_line=True)`, then every
//! run of Python `\w` characters inside each token.
//!
//! NLTK's Treebank rules only insert spaces and swap one non-word character for others (`"`
//! becomes ` '' ` or ``` `` ```), so the `\w` runs of its output are the `\w` runs of the input,
//! except where a rule puts a space between two word characters. Three rule families do: the
//! `n't` / `N'T` ending-quote rule (`can't ` gives `ca n't`), the MacIntyre contractions
//! (`cannot`, `gimme`, `gonna`, `gotta`, `lemme`, `wanna`) and ` 'tis` / ` 'twas`. A text
//! containing none of their trigger words takes the fast path, plain [`words`]; any other text
//! runs the whole NLTK 3.8.1 rule pipeline, because whether `n't` is followed by a space depends
//! on what the earlier rules did to the text (`can't.` at the end splits, `can't\n` does not).

use std::borrow::Cow;
use std::sync::OnceLock;

use fancy_regex::Regex;

use super::word::{is_word_char, words};
use crate::chunk::is_python_whitespace;

/// The tokens CrossCodeEval's BM25 sees in `text`, in order, repeats included.
///
/// Every token is a substring of `text`.
pub fn cceval_tokens(text: &str) -> Vec<&str> {
    if !has_trigger(text) {
        return words(text).collect();
    }
    match treebank(text).and_then(|treebanked| align(text, &treebanked)) {
        Some(tokens) => tokens,
        None => {
            // Unreachable with valid rules: the pipeline keeps every word character in order.
            tracing::warn!("NLTK rule pipeline failed; falling back to plain word runs");
            words(text).collect()
        }
    }
}

/// Python's `re.IGNORECASE` equivalents of an ASCII letter, beyond its two ASCII cases.
///
/// Python 3.11 also matches `İ` (U+0130) and `ı` (U+0131) for `i`, `ſ` (U+017F) for `s` and
/// `K` (U+212A, Kelvin) for `k`; no other ASCII letter has one.
fn python_case_extras(letter: u8) -> &'static str {
    match letter {
        b'i' => "\u{130}\u{131}",
        b's' => "\u{17F}",
        b'k' => "\u{212A}",
        _ => "",
    }
}

/// A trigger window: bytes of the folded text packed big-endian into a `u64`, with a mask.
struct Trigger {
    bits: u64,
    mask: u64,
}

const fn trigger(word: &[u8]) -> Trigger {
    let mut bits = 0u64;
    let mut i = 0;
    while i < word.len() {
        bits = (bits << 8) | word[i] as u64;
        i += 1;
    }
    let mask = if word.len() >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * word.len())) - 1
    };
    Trigger { bits, mask }
}

/// Lower-cased substrings without which NLTK's output has the same `\w` runs as its input.
const TRIGGERS: [Trigger; 9] = [
    trigger(b"n't"),
    trigger(b"cannot"),
    trigger(b"gimme"),
    trigger(b"gonna"),
    trigger(b"gotta"),
    trigger(b"lemme"),
    trigger(b"wanna"),
    trigger(b"'tis"),
    trigger(b"'twas"),
];

/// Whether `text` contains a trigger, case-insensitively as Python's `re.IGNORECASE` compares.
fn has_trigger(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut window = 0u64;
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        let folded = if b.is_ascii() {
            at += 1;
            b.to_ascii_lowercase()
        } else {
            let c = text[at..]
                .chars()
                .next()
                .unwrap_or(char::REPLACEMENT_CHARACTER);
            at += c.len_utf8();
            fold(c)
        };
        window = (window << 8) | u64::from(folded);
        // Every trigger ends in one of these letters.
        if matches!(folded, b't' | b'e' | b'a' | b's')
            && TRIGGERS.iter().any(|t| window & t.mask == t.bits)
        {
            return true;
        }
    }
    false
}

/// `c` lower-cased to the ASCII letter Python's `re.IGNORECASE` matches it with, ASCII
/// characters as themselves, anything else 0.
fn fold(c: char) -> u8 {
    if c.is_ascii() {
        return c.to_ascii_lowercase() as u8;
    }
    [b'i', b's', b'k']
        .into_iter()
        .find(|&letter| python_case_extras(letter).contains(c))
        .unwrap_or(0)
}

/// One `re.sub` of NLTK's pipeline.
enum Step {
    /// A pattern run by `fancy_regex` (all but one need no look-around, so the `regex` crate
    /// runs them); the replacement names groups as `${n}`.
    Regex {
        re: Regex,
        replacement: &'static str,
    },
    /// STARTING_QUOTES' `(?i)(\')(?!re|ve|ll|m|t|s|d|n)(\w)\b` → `\1 \2`.
    Clitic,
    /// A MacIntyre contraction → ` \1 \2 `.
    Contraction(Contraction),
    /// `text = " " + text + " "`.
    Pad,
}

/// A MacIntyre contraction: two case-insensitive literals NLTK pulls apart.
struct Contraction {
    before: Before,
    first: &'static str,
    second: &'static str,
    after: After,
}

/// What a contraction's match needs before its first literal.
#[derive(Clone, Copy, PartialEq)]
enum Before {
    /// `\b`: no word character just before.
    Boundary,
    /// A space, which the match includes (CONTRACTIONS3's ` ('t)(is)\b`).
    Space,
}

/// What a contraction's match needs after its second literal.
#[derive(Clone, Copy, PartialEq)]
enum After {
    /// `\b`: no word character just after.
    Boundary,
    /// `(?=\s)`: a whitespace character just after.
    Whitespace,
}

/// Python's `\s` for `str` patterns (`str.isspace()`): Unicode White_Space plus U+001C..U+001F.
const S: &str = r"[\s\x1C-\x1F]";

/// NLTK 3.8.1's `NLTKWordTokenizer.tokenize`, step by step, with Python's `re` syntax made
/// explicit (`\s` as [`S`]; `\d` is `\p{Nd}` in both engines).
fn step_sources() -> Vec<Result<Step, fancy_regex::Error>> {
    let regex = |pattern: &str, replacement: &'static str| {
        Ok(Step::Regex {
            re: Regex::new(pattern)?,
            replacement,
        })
    };
    // `\s*$` becomes `\s*\z`: a greedy `\s*` that could stop before a final `\n` can also take it,
    // and Python's backtracking prefers that longer match, so both forms match the same spans.
    let final_period = format!(r#"([^.])(\.)([\])}}>"'»”’ ]*){S}*\z"#);
    let final_period_tight = format!(r#"([^.])(\.)([\])}}>"']*){S}*\z"#);
    let contraction = |first, second| Ok(Step::Contraction(Contraction::new(first, second)));
    vec![
        // STARTING_QUOTES
        regex(r"([«“‘„]|`+)", " ${1} "),
        regex(r#"\A""#, "``"),
        regex(r"(``)", " ${1} "),
        regex(r#"([ (\[{<])("|'{2})"#, "${1} `` "),
        Ok(Step::Clitic),
        // PUNCTUATION
        regex(&final_period, "${1} ${2} ${3} "),
        regex(r"([:,])([^\d])", " ${1} ${2}"),
        // Python's `$` without MULTILINE: the end, or before a final `\n`.
        regex(r"([:,])(?=\n?\z)", " ${1} "),
        regex(r"\.{2,}", " ${0} "),
        regex(r"[;@#$%&]", " ${0} "),
        regex(&final_period_tight, "${1} ${2}${3} "),
        regex(r"[?!]", " ${0} "),
        regex(r"([^'])' ", "${1} ' "),
        regex(r"[*]", " ${0} "),
        // PARENS_BRACKETS
        regex(r"[\]\[(){}<>]", " ${0} "),
        // DOUBLE_DASHES
        regex(r"--", " -- "),
        Ok(Step::Pad),
        // ENDING_QUOTES
        regex(r"([»”’])", " ${1} "),
        regex(r"''", " '' "),
        regex(r#"""#, " '' "),
        regex(r"([^' ])('[sS]|'[mM]|'[dD]|') ", "${1} ${2} "),
        regex(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", "${1} ${2} "),
        // CONTRACTIONS2
        contraction("can", "not"),
        contraction("d", "'ye"),
        contraction("gim", "me"),
        contraction("gon", "na"),
        contraction("got", "ta"),
        contraction("lem", "me"),
        contraction("more", "'n"),
        Ok(Step::Contraction(Contraction {
            after: After::Whitespace,
            ..Contraction::new("wan", "na")
        })),
        // CONTRACTIONS3
        Ok(Step::Contraction(Contraction {
            before: Before::Space,
            ..Contraction::new("'t", "is")
        })),
        Ok(Step::Contraction(Contraction {
            before: Before::Space,
            ..Contraction::new("'t", "was")
        })),
    ]
}

/// The compiled steps; `None` if a pattern failed to compile (a bug the tests catch).
fn steps() -> Option<&'static [Step]> {
    static STEPS: OnceLock<Option<Vec<Step>>> = OnceLock::new();
    STEPS
        .get_or_init(|| step_sources().into_iter().collect::<Result<_, _>>().ok())
        .as_deref()
}

/// NLTK's `NLTKWordTokenizer.tokenize(text)` joined by whitespace; `None` on a regex failure.
fn treebank(text: &str) -> Option<String> {
    let mut s = Cow::Borrowed(text);
    for step in steps()? {
        s = match step {
            Step::Regex { re, replacement } => match re.try_replacen(&s, 0, *replacement).ok()? {
                Cow::Borrowed(_) => s,
                Cow::Owned(replaced) => Cow::Owned(replaced),
            },
            Step::Clitic => sub_fixed(
                s,
                |b| b == b'\'',
                clitic_len,
                |m, out| {
                    // The match is `'` and one word character.
                    out.push_str(&m[..1]);
                    out.push(' ');
                    out.push_str(&m[1..]);
                },
            ),
            Step::Contraction(c) => sub_fixed(
                s,
                |b| c.may_start(b),
                |s, at| c.match_len(s, at),
                |m, out| {
                    let body = if c.before == Before::Space {
                        &m[1..]
                    } else {
                        m
                    };
                    let split = c.first_len(body);
                    out.push(' ');
                    out.push_str(&body[..split]);
                    out.push(' ');
                    out.push_str(&body[split..]);
                    out.push(' ');
                },
            ),
            Step::Pad => Cow::Owned(format!(" {s} ")),
        };
    }
    Some(s.into_owned())
}

/// Python's `re.sub` for a pattern without alternatives of different lengths: the leftmost
/// position where `match_len` finds a match is replaced by `replace`, and the scan resumes
/// after it. `match_len(s, at)` sees all of `s`, as Python's look-arounds do; it is only asked
/// at character boundaries whose first byte passes `may_start`.
fn sub_fixed<'a>(
    s: Cow<'a, str>,
    may_start: impl Fn(u8) -> bool,
    match_len: impl Fn(&str, usize) -> Option<usize>,
    replace: impl Fn(&str, &mut String),
) -> Cow<'a, str> {
    let mut out: Option<String> = None;
    let (mut copied, mut at) = (0, 0);
    while let Some(&b) = s.as_bytes().get(at) {
        let found = if may_start(b) && s.is_char_boundary(at) {
            match_len(&s, at)
        } else {
            None
        };
        match found {
            Some(len) => {
                let o = out.get_or_insert_with(|| String::with_capacity(s.len() + 16));
                o.push_str(&s[copied..at]);
                replace(&s[at..at + len], o);
                at += len;
                copied = at;
            }
            None => at += 1,
        }
    }
    match out {
        Some(mut o) => {
            o.push_str(&s[copied..]);
            Cow::Owned(o)
        }
        None => s,
    }
}

/// The byte length of `(?i)(\')(?!re|ve|ll|m|t|s|d|n)(\w)\b` at `at`, if it matches there.
fn clitic_len(s: &str, at: usize) -> Option<usize> {
    let rest = s[at..].strip_prefix('\'')?;
    if ["re", "ve", "ll", "m", "t", "s", "d", "n"]
        .iter()
        .any(|p| ci_prefix_len(rest, p).is_some())
    {
        return None;
    }
    let mut chars = rest.chars();
    let word = chars.next().filter(|&c| is_word_char(c))?;
    if chars.next().is_some_and(is_word_char) {
        return None;
    }
    Some(1 + word.len_utf8())
}

impl Contraction {
    /// `(?i)\b(first)(second)\b`.
    fn new(first: &'static str, second: &'static str) -> Contraction {
        Contraction {
            before: Before::Boundary,
            first,
            second,
            after: After::Boundary,
        }
    }

    /// Whether a match can start at a character whose first byte is `b`.
    fn may_start(&self, b: u8) -> bool {
        if self.before == Before::Space {
            return b == b' ';
        }
        // The first letter in either ASCII case, or a non-ASCII character Python's `(?i)` may
        // equate with it.
        self.first
            .as_bytes()
            .first()
            .is_some_and(|&f| b.to_ascii_lowercase() == f || !b.is_ascii())
    }

    /// The byte length of this contraction's match at `at`, if it matches there.
    fn match_len(&self, s: &str, at: usize) -> Option<usize> {
        let mut len = 0;
        if self.before == Before::Space {
            s[at..].strip_prefix(' ')?;
            len = 1;
        } else if s[..at].chars().next_back().is_some_and(is_word_char) {
            return None;
        }
        len += ci_prefix_len(&s[at + len..], self.first)?;
        len += ci_prefix_len(&s[at + len..], self.second)?;
        let next = s[at + len..].chars().next();
        let boundary = match self.after {
            After::Boundary => !next.is_some_and(is_word_char),
            After::Whitespace => next.is_some_and(is_python_whitespace),
        };
        boundary.then_some(len)
    }

    /// The byte length of the `first` part at the start of a matched `body`.
    fn first_len(&self, body: &str) -> usize {
        ci_prefix_len(body, self.first).unwrap_or(0)
    }
}

/// The byte length of the prefix of `s` that Python's `(?i)` matches with the ASCII `literal`.
fn ci_prefix_len(s: &str, literal: &str) -> Option<usize> {
    let mut len = 0;
    let mut chars = s.chars();
    for want in literal.bytes() {
        let c = chars.next().filter(|&c| fold(c) == want)?;
        len += c.len_utf8();
    }
    Some(len)
}

/// The word runs of `treebanked` as slices of `text`: they are `text`'s word characters, in
/// order, with some runs split. `None` if they are not.
fn align<'t>(text: &'t str, treebanked: &str) -> Option<Vec<&'t str>> {
    let mut out = Vec::new();
    let mut rest = text;
    for word in words(treebanked) {
        let start = rest.find(is_word_char)?;
        let end = start + word.len();
        let token = rest.get(start..end).filter(|&t| t == word)?;
        out.push(token);
        rest = rest.get(end..)?;
    }
    if rest.contains(is_word_char) {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(cases: &[(&str, &[&str])]) {
        for (text, want) in cases {
            let got = cceval_tokens(text);
            assert_eq!(&got, want, "cceval_tokens({text:?})");
        }
    }

    #[test]
    fn patterns_compile() {
        assert!(steps().is_some());
    }

    #[test]
    fn plain_text_is_word_runs() {
        check(&[
            ("", &[]),
            ("   \n\t", &[]),
            ("foo_bar(baz, 42)", &["foo_bar", "baz", "42"]),
            ("x² + ½y", &["x²", "½y"]),
            ("cafe\u{301} ok", &["cafe", "ok"]),
            ("emoji🎉here", &["emoji", "here"]),
            ("a = \"b\"\r\nc", &["a", "b", "c"]),
            ("``quoted''", &["quoted"]),
            ("it's 'cause y'all", &["it", "s", "cause", "y", "all"]),
        ]);
    }

    // Expected values are NLTK 3.8.1's own output.
    #[test]
    fn nt_splits_only_before_a_space_in_the_rewritten_text() {
        check(&[
            ("can't x", &["ca", "n", "t", "x"]),
            ("can't\nx", &["can", "t", "x"]),
            ("can't\r\nx", &["can", "t", "x"]),
            ("can't", &["ca", "n", "t"]),
            ("can't,x", &["ca", "n", "t", "x"]),
            ("can't)", &["ca", "n", "t"]),
            ("\"can't\" x", &["ca", "n", "t", "x"]),
            ("`can't`\nx", &["ca", "n", "t", "x"]),
            ("x can't.\n", &["x", "ca", "n", "t"]),
            ("don't.\nit's", &["don", "t", "it", "s"]),
            ("can't'x\n", &["ca", "n", "t", "x"]),
            ("n't", &["n", "t"]),
            ("²½ can't", &["²½", "ca", "n", "t"]),
            ("cafe\u{301}n't x", &["cafe", "n", "t", "x"]),
            ("🎉can't🎉\n", &["can", "t"]),
        ]);
    }

    #[test]
    fn contractions_split_as_python_ignorecase_matches() {
        check(&[
            ("cannot", &["can", "not"]),
            ("Cannot\n", &["Can", "not"]),
            ("xcannot", &["xcannot"]),
            ("'tis x", &["t", "is", "x"]),
            ("'Twas", &["T", "was"]),
            ("'t\u{130}s", &["t", "\u{130}s"]),
            ("wanna.", &["wan", "na"]),
            ("wanna\n", &["wan", "na"]),
            ("wannabe", &["wannabe"]),
            ("g\u{130}mme", &["g\u{130}m", "me"]),
        ]);
    }

    #[test]
    fn every_token_is_a_slice_of_the_text() {
        let text = "We can't: 'tis gonna\n";
        let range = text.as_bytes().as_ptr_range();
        for token in cceval_tokens(text) {
            assert!(
                range.contains(&token.as_ptr()),
                "{token:?} is not a slice of the text"
            );
        }
    }
}
