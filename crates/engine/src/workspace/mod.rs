//! Which files belong to a workspace, how they are read, and the document store.
//!
//! Discovery walks the root with the `ignore` crate ([`discover`]); [`read_source`] decodes a
//! file the way CrossCodeEval's scripts read it; [`Documents`] overlays unsaved editor buffers on
//! the disk; [`resolve_in_root`] keeps every path a user or a case file names inside the root.

mod discover;
mod documents;
mod paths;
mod position;
mod settings;
mod text;

use std::path::PathBuf;

pub use discover::{Discovery, SkipReason, Skipped, SourceFile, discover, is_binary, mtime_ns};
pub use documents::{Documents, centred};
pub use paths::{relative_file_name, relative_folder, relative_path, resolve_in_root};
pub use position::{differ_at_most_in_line, line_start_offsets, offset_of, position_from_chars};
pub use settings::WorkspaceSettings;
pub use text::{SourceText, decode, normalize_newlines, read_source};

/// A problem with a workspace path or file.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("{}: cannot read: {error}", .path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: not a directory", .path.display())]
    NotADirectory { path: PathBuf },
    #[error("{}: is outside the workspace {}", .path.display(), .root.display())]
    OutsideRoot { path: PathBuf, root: PathBuf },
    #[error("{}: not a regular file (a FIFO, socket or device is never read)", .path.display())]
    NotARegularFile { path: PathBuf },
    #[error("{}: looks binary (it has NUL bytes)", .path.display())]
    Binary { path: PathBuf },
    #[error("{}: {size} bytes is over the limit of {limit} (workspace.max_file_bytes)", .path.display())]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    #[error("{path}:{line}:{col}: {message}")]
    Position {
        path: String,
        line: u64,
        col: u64,
        message: String,
    },
}
