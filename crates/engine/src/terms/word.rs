//! Words: maximal runs of Python `\w` characters.

use std::collections::HashSet;

/// Python's `\w` for `str` patterns: `str.isalnum()` or `_`.
///
/// `isalnum` is true for letters (categories L*) and for characters with a numeric value
/// (categories N*, e.g. `²` and `½`); combining marks are not word characters.
pub fn is_word_char(c: char) -> bool {
    use unicode_general_category::{GeneralCategory as G, get_general_category};
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    matches!(
        get_general_category(c),
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
            | G::DecimalNumber
            | G::LetterNumber
            | G::OtherNumber
    )
}

/// The maximal runs of word characters in `text`, in order.
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let start = rest.find(is_word_char)?;
        let tail = &rest[start..];
        let len = tail.find(|c: char| !is_word_char(c)).unwrap_or(tail.len());
        let (word, after) = tail.split_at(len);
        rest = after;
        Some(word)
    })
}

/// The distinct words of `text`.
pub fn word_set(text: &str) -> HashSet<&str> {
    words(text).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_follow_python_word_class() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("foo_bar(baz, 42)", &["foo_bar", "baz", "42"]),
            ("x² + ½y", &["x²", "½y"]),
            ("cafe\u{301} ok", &["cafe", "ok"]),
            ("日本語 テスト", &["日本語", "テスト"]),
            ("emoji🎉here", &["emoji", "here"]),
        ];
        for (text, want) in cases {
            let got: Vec<&str> = words(text).collect();
            assert_eq!(&got, want, "words({text:?})");
        }
    }
}
