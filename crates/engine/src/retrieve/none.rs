//! `none`: no cross-file context (in-file context only).

use super::{Hit, Query, RetrieveError, Retriever};
use crate::index::Snapshot;

pub struct NoRetriever;

impl Retriever for NoRetriever {
    fn retrieve(&self, _: &Snapshot, _: &Query, _: usize) -> Result<Vec<Hit>, RetrieveError> {
        Ok(Vec::new())
    }
}
