//! Code-aware terms for the tantivy `bm25` retriever: every identifier whole, plus its
//! camelCase / snake_case parts, lower-cased.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

use super::word::words;

/// The terms of `text`: each word lower-cased, followed by its parts when it has more than one
/// (`getUserName` gives `getusername`, `get`, `user`, `name`; `MAX_SIZE` gives `max_size`,
/// `max`, `size`).
pub fn code_terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in words(text) {
        push_word_terms(word, &mut |term| out.push(term));
    }
    out
}

/// Calls `sink` with the whole lower-cased word, then with each part if it splits.
fn push_word_terms(word: &str, sink: &mut dyn FnMut(String)) {
    sink(word.to_lowercase());
    let parts = identifier_parts(word);
    if parts.len() > 1 {
        for part in parts {
            sink(part.to_lowercase());
        }
    }
}

/// Splits an identifier on `_` and on case changes: `parseHTTPResponse2` gives `parse`, `HTTP`,
/// `Response2`; `snake_case_name` gives `snake`, `case`, `name`.
fn identifier_parts(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for piece in word.split('_').filter(|p| !p.is_empty()) {
        let chars: Vec<(usize, char)> = piece.char_indices().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (at, c) = chars[i];
            let prev = chars[i - 1].1;
            let next_is_lower = chars.get(i + 1).is_some_and(|&(_, n)| n.is_lowercase());
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase() && c.is_uppercase() && next_is_lower);
            if boundary {
                parts.push(&piece[start..at]);
                start = at;
            }
        }
        parts.push(&piece[start..]);
    }
    parts
}

/// [`code_terms`] as a tantivy tokenizer, registered under [`CodeTokenizer::NAME`].
#[derive(Clone, Default)]
pub struct CodeTokenizer;

impl CodeTokenizer {
    /// The name the index registers this tokenizer under.
    pub const NAME: &'static str = "crossfile_code";
}

/// A token stream over precomputed terms.
pub struct CodeTokenStream {
    tokens: Vec<Token>,
    at: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        let mut tokens = Vec::new();
        for word in words(text) {
            let offset = word.as_ptr() as usize - text.as_ptr() as usize;
            push_word_terms(word, &mut |term| {
                let position = tokens.len();
                tokens.push(Token {
                    offset_from: offset,
                    offset_to: offset + word.len(),
                    position,
                    text: term,
                    position_length: 1,
                });
            });
        }
        CodeTokenStream { tokens, at: 0 }
    }
}

impl TokenStream for CodeTokenStream {
    fn advance(&mut self) -> bool {
        if self.at < self.tokens.len() {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self
            .at
            .saturating_sub(1)
            .min(self.tokens.len().saturating_sub(1))]
    }

    fn token_mut(&mut self) -> &mut Token {
        let i = self
            .at
            .saturating_sub(1)
            .min(self.tokens.len().saturating_sub(1));
        &mut self.tokens[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_on_case_and_underscores() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("x", &["x"]),
            ("getUserName", &["getusername", "get", "user", "name"]),
            ("MAX_SIZE", &["max_size", "max", "size"]),
            (
                "parseHTTPResponse2",
                &["parsehttpresponse2", "parse", "http", "response2"],
            ),
            ("__init__", &["__init__"]),
            (
                "self.client_id = 3",
                &["self", "client_id", "client", "id", "3"],
            ),
            ("ÉtéÀ", &["étéà", "été", "à"]),
        ];
        for (text, want) in cases {
            assert_eq!(code_terms(text), *want, "code_terms({text:?})");
        }
    }

    #[test]
    fn tokenizer_stream_matches_code_terms() {
        let text = "fooBar = baz_qux(1)";
        let mut tokenizer = CodeTokenizer;
        let mut stream = tokenizer.token_stream(text);
        let mut got = Vec::new();
        while stream.advance() {
            got.push(stream.token().text.clone());
        }
        assert_eq!(got, code_terms(text));
    }
}
