//! Mining benchmark cases from any workspace: CrossCodeEval-style line cases from an indexed
//! workspace ([`lines`], `bench mine`) and EvoCodeBench-style function cases from a Python
//! workspace with tests ([`functions`], `bench mine-functions`), and Long Code Arena-style line
//! cases from a git repository's history ([`history`], `bench mine-history`).

pub mod functions;
pub mod history;
pub mod lines;
