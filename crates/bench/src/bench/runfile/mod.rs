//! Run files, written and read in one place: one [`RunRecord`] per (case, retriever) as a JSON
//! line ([`record`]), with what the run was made with ([`settings`]); appended resumably by
//! [`RunFile`] ([`writer`]), read back with every line checked ([`reader`]), and shards of one
//! run joined ([`merge`]). Reports, comparisons and exports read only these files.

pub mod merge;
pub mod reader;
pub mod record;
pub mod settings;
mod writer;

pub use record::RunRecord;
pub use writer::{Resumed, RunFile};
