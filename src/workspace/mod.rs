//! Which files belong to a workspace, their language, and the document store.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {}
