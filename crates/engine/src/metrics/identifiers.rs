//! CrossCodeEval's identifier metric: identifiers of a text, and how two lists of them match.

use std::collections::HashSet;

use super::keywords::is_cceval_keyword;
use crate::lang::Language;
use crate::terms::words;

/// CrossCodeEval's `extract_identifiers`: string literals removed, then every maximal run of
/// Python `\w` characters (letters and digits of any script, `_`) whose first character is an
/// ASCII letter or `_` and that is not one of `language`'s [`cceval_keywords`]; in order,
/// duplicates kept. `café` is kept whole; `été` and `9abc` are not identifiers.
///
/// [`cceval_keywords`]: super::cceval_keywords
pub fn cceval_identifiers(language: Language, text: &str) -> Vec<String> {
    let code = remove_string_literals(text);
    words(&code)
        .filter(|word| word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        .filter(|word| !is_cceval_keyword(language, word))
        .map(str::to_string)
        .collect()
}

/// Deletes every match of CrossCodeEval's string pattern
/// `"([^"\\]*(\\.[^"\\]*)*)"|'([^'\\]*(\\.[^'\\]*)*)'`, scanning left to right as `re.sub`
/// does: a literal runs from a quote to the next unescaped same quote and may span lines; a
/// backslash escapes any character but `\n` (regex `.`), so a backslash before a newline ends
/// the attempt, and the search goes on from the character after the opening quote. Backticks
/// are not quotes.
pub fn remove_string_literals(text: &str) -> String {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = String::with_capacity(text.len());
    let mut kept_from = 0; // Byte offset of the first character not yet copied or removed.
    let mut i = 0;
    while i < chars.len() {
        let (at, quote) = chars[i];
        if (quote == '"' || quote == '\'')
            && let Some(end) = literal_end(&chars, i, quote)
        {
            out.push_str(&text[kept_from..at]);
            kept_from = chars.get(end).map_or(text.len(), |&(byte, _)| byte);
            i = end;
            continue;
        }
        i += 1;
    }
    out.push_str(&text[kept_from..]);
    out
}

/// The index just past the literal opened by `chars[open]` (a `quote`), if the pattern matches
/// there.
fn literal_end(chars: &[(usize, char)], open: usize, quote: char) -> Option<usize> {
    let mut j = open + 1;
    loop {
        let &(_, c) = chars.get(j)?;
        if c == quote {
            return Some(j + 1);
        }
        if c == '\\' {
            match chars.get(j + 1) {
                Some(&(_, escaped)) if escaped != '\n' => j += 2,
                _ => return None,
            }
        } else {
            j += 1;
        }
    }
}

/// How a predicted identifier list matches the reference's, as sets (`compute_id_match`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdMatch {
    /// Distinct identifiers in both.
    pub true_positives: usize,
    /// Distinct predicted identifiers not in the reference.
    pub false_positives: usize,
    /// Distinct reference identifiers not predicted.
    pub false_negatives: usize,
}

impl IdMatch {
    /// Compares the distinct identifiers of `predicted` and `reference`.
    pub fn new(predicted: &[String], reference: &[String]) -> IdMatch {
        let predicted: HashSet<&str> = predicted.iter().map(String::as_str).collect();
        let reference: HashSet<&str> = reference.iter().map(String::as_str).collect();
        let true_positives = predicted.intersection(&reference).count();
        IdMatch {
            true_positives,
            false_positives: predicted.len() - true_positives,
            false_negatives: reference.len() - true_positives,
        }
    }

    /// `tp / (tp + fp)`, 0 when nothing was predicted.
    pub fn precision(&self) -> f64 {
        ratio(
            self.true_positives,
            self.true_positives + self.false_positives,
        )
    }

    /// `tp / (tp + fn)`, 0 when the reference has no identifier.
    pub fn recall(&self) -> f64 {
        ratio(
            self.true_positives,
            self.true_positives + self.false_negatives,
        )
    }

    /// `2tp / (2tp + fp + fn)`, 0 when both lists are empty.
    pub fn f1(&self) -> f64 {
        ratio(
            2 * self.true_positives,
            2 * self.true_positives + self.false_positives + self.false_negatives,
        )
    }
}

/// Python's `a / b if b != 0 else 0` on integers.
fn ratio(numerator: usize, denominator: usize) -> f64 {
    if denominator == 0 {
        0.0
    } else {
        numerator as f64 / denominator as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(language: Language, text: &str) -> Vec<String> {
        cceval_identifiers(language, text)
    }

    #[test]
    fn identifier_rules() {
        use Language::*;
        let cases: &[(Language, &str, &[&str])] = &[
            (Python, "", &[]),
            (
                Python,
                "café = été + 9abc + _x9 + x²",
                &["café", "_x9", "x²"],
            ),
            (
                Python,
                "self.x = None if True else False",
                &["self", "x", "True", "False"],
            ),
            (Python, "return foo(foo)", &["foo", "foo"]),
            (Java, "if (x == null) return true;", &["x", "null", "true"]),
            (CSharp, "var s = new string('a', 3);", &["var", "s"]),
            (
                TypeScript,
                "const y = await f(undefined)",
                &["y", "await", "f", "undefined"],
            ),
            // String literals vanish, including their identifiers; backticks are not quotes.
            (Python, r#"f("a b", 'c\'d', e)"#, &["f", "e"]),
            (TypeScript, "g(`h ${i}`)", &["g", "h", "i"]),
            // Unicode words: the run is whole, only its first character is checked.
            (Python, "日本 a日本 _é", &["a日本", "_é"]),
        ];
        for (language, text, want) in cases {
            assert_eq!(ids(*language, text), *want, "{language:?} {text:?}");
        }
    }

    #[test]
    fn string_literals_follow_the_regex() {
        let cases: &[(&str, &str)] = &[
            (r#"a "b" c"#, "a  c"),
            ("a 'b\nc' d", "a  d"),
            (r#"a "b\"c" d"#, "a  d"),
            (r#"a "b\\" c" d"#, "a  c\" d"),
            // A backslash before a newline fails the match at this quote; the search resumes
            // after it and finds the literal `" y "`.
            ("\"x\\\n\" y \"", "\"x\\\n"),
            ("unterminated \"abc", "unterminated \"abc"),
            (r#"'a"b' "c'd""#, " "),
            ("é'🎉'ü", "éü"),
            ("", ""),
        ];
        for (text, want) in cases {
            assert_eq!(remove_string_literals(text), *want, "{text:?}");
        }
    }

    #[test]
    fn id_match_counts_sets() {
        let list = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let m = IdMatch::new(&list(&["a", "a", "b", "c"]), &list(&["b", "c", "d"]));
        assert_eq!(
            (m.true_positives, m.false_positives, m.false_negatives),
            (2, 1, 1)
        );
        assert_eq!(m.precision(), 2.0 / 3.0);
        assert_eq!(m.recall(), 2.0 / 3.0);
        assert_eq!(m.f1(), 4.0 / 6.0);
        let empty = IdMatch::new(&[], &[]);
        assert_eq!(
            (empty.precision(), empty.recall(), empty.f1()),
            (0.0, 0.0, 0.0)
        );
        let none_predicted = IdMatch::new(&[], &list(&["x"]));
        assert_eq!(none_predicted.precision(), 0.0);
        assert_eq!(none_predicted.recall(), 0.0);
    }
}
