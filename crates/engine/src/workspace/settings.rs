//! Which files of a workspace are taken.

/// `[workspace]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WorkspaceSettings {
    /// Files larger than this are skipped (default 1 MiB).
    pub max_file_bytes: u64,
}
