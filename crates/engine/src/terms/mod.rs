//! Retrieval terms: how text becomes the terms sparse retrievers match.
//!
//! Three vocabularies, one per retrieval family:
//! - [`cceval_tokens`]: CrossCodeEval's tokens (NLTK 3.8.1 `word_tokenize`, then `\w+` runs),
//!   reproduced exactly so that `bm25-cceval` ranks as the published script does;
//! - [`code_terms`]: identifiers whole and split on camelCase / snake_case, lower-cased, for the
//!   tantivy `bm25` retriever;
//! - [`word_set`]: the distinct `\w+` words of a text, for Jaccard similarity.

mod code;
mod counts;
mod nltk;
mod vocab;
mod word;

pub use code::{CodeTokenizer, code_terms};
pub use counts::{IdMap, term_counts};
pub use nltk::cceval_tokens;
pub use vocab::{TermId, Vocab};
pub use word::{is_word_char, word_set, words};
