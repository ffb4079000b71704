//! Retrievers.
#[derive(Debug, thiserror::Error)]
pub enum RetrieveError {}
