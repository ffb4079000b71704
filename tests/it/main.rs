//! Integration tests: one binary (STYLE.md), one module per concern. Real workspaces, real
//! indexes on disk, the real binary, the real Python reference.

mod bad_input;
mod bench_mine;
mod bench_report;
mod bench_run;
#[cfg(feature = "embedded")]
mod bench_typing;
mod cceval_records;
mod cceval_reference;
mod cli;
mod codereval;
mod config;
mod dense;
#[cfg(feature = "embedded")]
mod embedded;
mod evocodebench;
mod hostile;
mod http_backends;
mod index_lifecycle;
#[cfg(feature = "embedded")]
mod kv_reuse;
#[cfg(feature = "embedded")]
mod live_completion;
#[cfg(feature = "embedded")]
mod lsp;
#[cfg(feature = "embedded")]
mod lsp_client;
#[cfg(feature = "embedded")]
mod lsp_commands;
#[cfg(feature = "embedded")]
mod lsp_exec;
#[cfg(feature = "embedded")]
mod lsp_fallback;
#[cfg(feature = "embedded")]
mod lsp_replay;
#[cfg(feature = "embedded")]
mod lsp_robustness;
#[cfg(feature = "embedded")]
mod lsp_score;
mod metrics_conformance;
mod mine_functions;
mod model_fetch;
mod nltk_tokens;
mod okapi;
#[cfg(feature = "embedded")]
mod perf_harness;
mod postprocess_conformance;
mod prompt_budget;
mod servers;
mod support;
mod tidy;
#[cfg(feature = "embedded")]
mod tokenizer;
