//! The keyword sets CrossCodeEval's identifier metric excludes, exactly as its code has them.

use crate::lang::Language;

/// The words CrossCodeEval's `extract_identifiers` does not count as identifiers for
/// `language`, sorted (byte order); TSX uses TypeScript's.
///
/// These are benchmark constants, not the languages' keyword lists: `get_language_keywords` of
/// amazon-science/cceval (`scripts/keywords/{java,typescript,csharp}.txt`, and CPython 3.11's
/// `keyword.kwlist` minus `True` and `False`). Java lacks `true`, `false`, `null`; C# lacks `var`,
/// `true`, `false`; TypeScript lacks `undefined`, `null`, `async`, `await`, `of`, `type`; Python
/// counts `True`, `False`, `self` and `match` as identifiers. They live in `lang` (one list per
/// language); a test holds them equal, element for element, to
/// `shared/bench/conformance/cceval-keywords.json`.
pub fn cceval_keywords(language: Language) -> &'static [&'static str] {
    // `lang` holds exactly these sets (and is tested against the same file).
    language.keywords()
}

/// Whether `word` is in [`cceval_keywords`] of `language`.
pub fn is_cceval_keyword(language: Language, word: &str) -> bool {
    cceval_keywords(language).binary_search(&word).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each list equals the official set in `cceval-keywords.json`, element for element.
    #[test]
    fn keywords_equal_the_conformance_file() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/bench/conformance/cceval-keywords.json"
        );
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let json: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        for language in Language::ALL {
            let mut expected: Vec<&str> = json[language.name()]
                .as_array()
                .unwrap_or_else(|| panic!("{path}: no list for {}", language.name()))
                .iter()
                .map(|word| {
                    word.as_str()
                        .unwrap_or_else(|| panic!("{path}: {word} is not a string"))
                })
                .collect();
            expected.sort_unstable();
            assert_eq!(
                cceval_keywords(language),
                expected.as_slice(),
                "{language:?}"
            );
        }
    }

    #[test]
    fn identifiers_that_look_like_keywords() {
        use Language::*;
        for (language, word, keyword) in [
            (Python, "None", true),
            (Python, "True", false),
            (Python, "self", false),
            (Python, "match", false),
            (Java, "null", false),
            (Java, "var", true),
            (CSharp, "var", false),
            (CSharp, "null", true),
            (TypeScript, "undefined", false),
            (TypeScript, "await", false),
            (Tsx, "function", true),
        ] {
            assert_eq!(
                is_cceval_keyword(language, word),
                keyword,
                "{language:?} {word}"
            );
        }
    }
}
