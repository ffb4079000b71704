//! crossfile's benchmarks over the engine (`crossfile-engine`).
//!
//! `bench` reads benchmark cases (CrossCodeEval, RepoEval, EvoCodeBench, CoderEval, cases mined
//! from git history), replays them through the engine's exact completion, scores each pair and
//! writes resumable run files; `report` turns run files into Markdown, HTML and JSON; `mine`
//! mines cases from a repository's history or functions; `arena` fits retrievers' standings from
//! blind battles; `harness` and `deps` run a repository's own tests in a sandbox; `perf` measures
//! the engine (`crossfile bench perf`).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod arena;
pub mod bench;
pub mod deps;
pub mod harness;
pub mod lock;
pub mod mine;
pub mod perf;
pub mod report;
