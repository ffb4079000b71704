//! Benchmarks over real workspaces: today, deterministic cursor sampling for performance runs
//! and tests; benchmark cases, replay, metrics and reports come with the replay issue.

mod cursors;

pub use cursors::{SplitMix64, sample_cursors};
