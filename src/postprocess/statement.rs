//! CrossCodeEval's one-statement cut (its `postprocess_code_lines`).

use crate::lang::Language;

/// Python: the shortest prefix that ends a statement (the prompt plus the prefix parses without
/// an ERROR node and the next character is a newline), trailing whitespace removed; otherwise the
/// prediction unchanged. Java, TypeScript, C#: up to and including the first `;`, `{` or `}` when
/// it is not the first character; otherwise unchanged.
pub fn cceval_statement(language: Language, prompt: &str, prediction: &str) -> String {
    let _ = (language, prompt, prediction);
    todo!("postprocess: CrossCodeEval statement cut")
}
