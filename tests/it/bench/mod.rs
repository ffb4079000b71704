//! Benchmark replay and its tools through the real binary and library: cases of every benchmark,
//! `bench run`, scoring against the official scripts, reports, the arena's simulated votes,
//! mining, and the performance harnesses.

mod arena_simulate;
mod cceval_records;
mod cceval_reference;
pub mod checks;
mod codereval;
pub mod evocodebench;
pub mod history;
mod metrics_conformance;
mod mine;
mod mine_functions;
mod mine_history;
#[cfg(feature = "embedded")]
mod model;
#[cfg(feature = "embedded")]
pub mod perf_harness;
mod report;
mod run;
#[cfg(feature = "embedded")]
mod typing;
