//! The on-disk index of a workspace.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {}
