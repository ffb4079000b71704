//! CrossCodeEval's one-statement cut (its `postprocess_code_lines`).

use crate::chunk::is_python_whitespace;
use crate::lang::{self, Language};

/// Python: the shortest prefix that ends a statement (the prompt plus the prefix parses without
/// an ERROR node and the next character is a newline), trailing whitespace removed; otherwise the
/// prediction unchanged. Java, TypeScript, C#: up to and including the first `;`, `{` or `}` when
/// it is not the first character; otherwise unchanged.
///
/// This is step 1 of `shared/bench/conformance/README.md`, character for character: positions
/// are code points, "whitespace" is Python's `str.isspace()`, and a tree with only zero-width
/// MISSING nodes counts as valid. TSX follows TypeScript.
pub fn cceval_statement(language: Language, prompt: &str, prediction: &str) -> String {
    match language {
        Language::Python => python_statement(prompt, prediction),
        Language::Java | Language::TypeScript | Language::Tsx | Language::CSharp => {
            bracket_statement(prediction)
        }
    }
}

/// The first `;`, `{` or `}` (inside strings and comments too); index 0 counts as "none", as the
/// official code tests the index for truthiness.
fn bracket_statement(prediction: &str) -> String {
    match prediction
        .char_indices()
        .find(|&(_, c)| matches!(c, ';' | '{' | '}'))
    {
        Some((at, _)) if at > 0 => prediction[..=at].to_string(),
        _ => prediction.to_string(),
    }
}

/// The official loop parses `prompt + prediction[:i + 1]` for every `i` and returns at the first
/// valid one followed by `\n`. Validity only matters where the look-ahead holds, so only the
/// positions followed by a newline are parsed; the answer is the same.
fn python_statement(prompt: &str, prediction: &str) -> String {
    let mut code = String::with_capacity(prompt.len() + prediction.len());
    code.push_str(prompt);
    // `end` is the byte length of `prediction[:i + 1]` where `prediction[i + 1] == '\n'`.
    for (end, _) in prediction.match_indices('\n').filter(|&(end, _)| end > 0) {
        code.truncate(prompt.len());
        code.push_str(&prediction[..end]);
        if python_parses(&code) {
            return prediction[..end]
                .trim_end_matches(is_python_whitespace)
                .to_string();
        }
    }
    prediction.to_string()
}

/// Whether tree-sitter parses `code` with no ERROR node anywhere (MISSING nodes are fine). A
/// parse that tree-sitter gives up on counts as invalid, as the official `get_ast` failure does.
fn python_parses(code: &str) -> bool {
    let Some(tree) = lang::parse(Language::Python, code) else {
        return false;
    };
    !contains_error(tree.root_node())
}

/// Searches only the subtrees tree-sitter marks as having an error (an ERROR or a MISSING node
/// somewhere inside), with an explicit stack so deep trees cannot overflow it.
fn contains_error(root: tree_sitter::Node<'_>) -> bool {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_error() {
            return true;
        }
        if !node.has_error() {
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::cceval_statement;
    use crate::lang::Language;

    fn check(language: Language, prompt: &str, prediction: &str, expected: &str) {
        let got = cceval_statement(language, prompt, prediction);
        assert_eq!(got, expected, "{language:?} {prompt:?} + {prediction:?}");
    }

    #[test]
    fn brace_languages_cut_at_the_first_terminator() {
        let rows = [
            ("", ""),
            ("x = 1; y = 2;", "x = 1;"),
            ("if (a) { b; }", "if (a) {"),
            ("}", "}"),
            (";\nfoo();", ";\nfoo();"),
            ("a}", "a}"),
            ("no terminator", "no terminator"),
            ("\"😀;\"", "\"😀;"),
            ("é{x", "é{"),
            ("a\r\nb;", "a\r\nb;"),
        ];
        for language in [
            Language::Java,
            Language::TypeScript,
            Language::Tsx,
            Language::CSharp,
        ] {
            for (prediction, expected) in rows {
                check(language, "ignored(", prediction, expected);
            }
        }
    }

    #[test]
    fn python_keeps_the_first_complete_statement() {
        let rows = [
            ("x = ", "", ""),
            ("x = ", "1\ny = 2\n", "1"),
            ("x = ", "1  \ny = 2", "1"),
            ("x = ", "1", "1"),
            ("x = ", "1\n", "1"),
            ("x = ", "foo(1,\n  2)\nz", "foo(1,\n  2)"),
            ("def f():\n    ", "return 1\n    x", "return 1"),
            ("x = ", "\n1", "\n1"),
            ("x = ", "'😀'\nnext", "'😀'"),
            ("x = ", "f(\n", "f(\n"),
            ("if a:\n", "    pass\nelse:\n    b", "    pass"),
            ("x = ", "1 \t\ny", "1"),
            // Zero-width MISSING nodes do not make a parse invalid; ERROR nodes do.
            ("", "def f(:\n    x", "def f(:"),
            ("", "print('a'\n)", "print('a'\n)"),
            // An empty block parses, so a header alone is a statement.
            ("", "for i in x:\n    y", "for i in x:"),
        ];
        for (prompt, prediction, expected) in rows {
            check(Language::Python, prompt, prediction, expected);
        }
    }
}
