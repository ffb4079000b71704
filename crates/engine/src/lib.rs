//! crossfile: the engine of a repository-level code completion tool.
//!
//! The engine indexes a workspace into cross-file chunks, retrieves the chunks that help a
//! completion at a cursor, builds the prompt within the model's token budget (`prompt`), calls a
//! model (`backend`), cuts the suggestion (`postprocess`) and scores it (`metrics`); `complete`
//! runs that pipeline. Benchmarks (`crossfile-bench`), the language server (`crossfile-server`)
//! and the command line (`crossfile`) call the same entry points, the first of which are shown
//! here; this crate depends on none of them.
//!
//! ```no_run
//! use crossfile_engine::Position;
//! use crossfile_engine::config::Settings;
//! use crossfile_engine::index::{Index, Progress};
//! use crossfile_engine::retrieve::{self, Query};
//!
//! # fn main() -> crossfile_engine::Result<()> {
//! let root = std::path::Path::new("path/to/workspace");
//! let settings = Settings::load(root)?;
//! let (index, _report) = Index::open_or_build(root, &settings.index, &Progress::none())?;
//! let text = std::fs::read_to_string(root.join("src/app.py")).unwrap_or_default();
//! let query = Query::new("src/app.py", &text, Position { line: 41, col: 8 })?;
//! let retriever = retrieve::build(&"bm25".parse()?, &settings.retrieve)?;
//! for hit in retriever.retrieve(&index.snapshot(), &query, 5)? {
//!     println!("{}:{}-{} {:.3}", hit.path, hit.lines.start + 1, hit.lines.end, hit.score);
//! }
//! # Ok(())
//! # }
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod backend;
pub mod choice;
pub mod chunk;
pub mod complete;
pub mod config;
pub mod fixture;
pub mod http;
pub mod index;
pub mod lang;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod postprocess;
pub mod progress;
pub mod prompt;
pub mod retrieve;
pub mod seeded;
pub mod terms;
pub mod tokenize;
pub mod workspace;

mod error;

pub use error::{Error, Result};

/// A place in a document: 0-based line and byte column within that line.
///
/// The command line speaks 1-based lines and character columns; it converts at its edge
/// ([`workspace::position_from_chars`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// 0-based line number.
    pub line: u32,
    /// Byte offset within the line.
    pub col: u32,
}
