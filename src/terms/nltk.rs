//! CrossCodeEval's tokenizer: NLTK 3.8.1 `word_tokenize(text, preserve_line=True)`, then every
//! run of Python `\w` characters inside each token.

/// The tokens CrossCodeEval's BM25 sees in `text`, in order, repeats included.
///
/// Every token is a substring of `text`.
pub fn cceval_tokens(text: &str) -> Vec<&str> {
    let _ = text;
    todo!("terms: NLTK 3.8.1 port")
}
