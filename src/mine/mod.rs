//! Mining benchmark cases from any workspace: CrossCodeEval-style line cases from an indexed
//! workspace ([`lines`], `bench mine`) and EvoCodeBench-style function cases from a Python
//! workspace with tests ([`functions`], `bench mine-functions`).

pub mod functions;
pub mod lines;
