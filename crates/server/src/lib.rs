//! crossfile's language server over the engine (`crossfile-engine`) and the benchmarks
//! (`crossfile-bench`).
//!
//! `live` is completion at typing speed (kept KV caches, typing along a suggestion, time
//! budgets); `lsp` maps the Language Server Protocol and crossfile's extensions onto engine,
//! benchmark and live calls, and nothing more; `settings` resolves the keys only the server
//! reads (`[lsp]`, `[arena]`) beside the engine's.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod live;
pub mod lsp;
pub mod settings;
