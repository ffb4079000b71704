//! Integration tests: one binary (STYLE.md). Real workspaces, real indexes on disk, the real binary.

mod bad_input;
mod cceval_records;
mod cceval_reference;
mod cli;
mod config;
mod index_lifecycle;
mod support;
mod tidy;
