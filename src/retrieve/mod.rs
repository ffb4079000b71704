//! Retrievers.
pub mod okapi;
#[derive(Debug, thiserror::Error)]
pub enum RetrieveError {}
