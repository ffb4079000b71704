//! The keyword sets CrossCodeEval's identifier metric excludes, exactly as its code has them.

use crate::lang::Language;

/// The words CrossCodeEval's `extract_identifiers` does not count as identifiers for
/// `language`, sorted (byte order); TSX uses TypeScript's.
///
/// These are benchmark constants, not the languages' keyword lists: `get_language_keywords` of
/// amazon-science/cceval (`scripts/keywords/{java,typescript,csharp}.txt`, and CPython 3.11's
/// `keyword.kwlist` minus `True` and `False`). Java lacks `true`, `false`, `null`; C# lacks `var`,
/// `true`, `false`; TypeScript lacks `undefined`, `null`, `async`, `await`, `of`, `type`; Python
/// counts `True`, `False`, `self` and `match` as identifiers. A test holds them equal to
/// `shared/bench/conformance/cceval-keywords.json`.
pub fn cceval_keywords(language: Language) -> &'static [&'static str] {
    match language {
        Language::Python => PYTHON,
        Language::Java => JAVA,
        Language::TypeScript | Language::Tsx => TYPESCRIPT,
        Language::CSharp => CSHARP,
    }
}

/// Whether `word` is in [`cceval_keywords`] of `language`.
pub fn is_cceval_keyword(language: Language, word: &str) -> bool {
    cceval_keywords(language).binary_search(&word).is_ok()
}

const PYTHON: &[&str] = &[
    "None", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

const JAVA: &[&str] = &[
    "abstract",
    "assert",
    "boolean",
    "break",
    "byte",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extends",
    "final",
    "finally",
    "float",
    "for",
    "goto",
    "if",
    "implements",
    "import",
    "instanceof",
    "int",
    "interface",
    "long",
    "native",
    "new",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "short",
    "static",
    "strictfp",
    "super",
    "switch",
    "synchronized",
    "this",
    "throw",
    "throws",
    "transient",
    "try",
    "var",
    "void",
    "volatile",
    "while",
];

const TYPESCRIPT: &[&str] = &[
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "finally",
    "for",
    "function",
    "if",
    "implements",
    "import",
    "in",
    "instanceof",
    "interface",
    "let",
    "new",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
];

const CSHARP: &[&str] = &[
    "abstract",
    "as",
    "base",
    "bool",
    "break",
    "byte",
    "case",
    "catch",
    "char",
    "checked",
    "class",
    "const",
    "continue",
    "decimal",
    "default",
    "delegate",
    "do",
    "double",
    "else",
    "enum",
    "event",
    "explicit",
    "extern",
    "finally",
    "fixed",
    "float",
    "for",
    "foreach",
    "goto",
    "if",
    "implicit",
    "in",
    "int",
    "interface",
    "internal",
    "is",
    "lock",
    "long",
    "namespace",
    "new",
    "null",
    "object",
    "operator",
    "out",
    "override",
    "params",
    "private",
    "protected",
    "public",
    "readonly",
    "ref",
    "return",
    "sbyte",
    "sealed",
    "short",
    "sizeof",
    "stackalloc",
    "static",
    "string",
    "struct",
    "switch",
    "this",
    "throw",
    "try",
    "typeof",
    "uint",
    "ulong",
    "unchecked",
    "unsafe",
    "ushort",
    "using",
    "virtual",
    "void",
    "volatile",
    "while",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Each list equals the official set in `cceval-keywords.json`, element for element.
    #[test]
    fn keywords_equal_the_conformance_file() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/bench/conformance/cceval-keywords.json"
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
