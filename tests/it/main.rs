//! Integration tests: one binary, one module per concern.

mod nltk_tokens;
mod okapi;
mod support;
