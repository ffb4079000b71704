//! Integration tests: one binary (STYLE.md), one module per concern. Real workspaces, real
//! indexes on disk, the real binary, the real Python reference.

mod arena;
mod backends;
mod bad_input;
mod bench;
mod chrf_reference;
mod cli;
mod config;
mod hostile;
mod index_lifecycle;
#[cfg(feature = "embedded")]
mod lsp;
mod nltk_tokens;
mod okapi;
mod postprocess_conformance;
mod prompt_budget;
mod shape;
mod support;
