//! `dataset`: the cross-file context a benchmark case ships with, carried in the query.

use super::{Hit, Query, RetrieveError, Retriever};
use crate::index::Snapshot;

pub struct Dataset;

impl Retriever for Dataset {
    fn retrieve(
        &self,
        _: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let provided = query
            .provided
            .as_ref()
            .ok_or(RetrieveError::NoDatasetContext)?;
        Ok(provided.iter().take(top_k).cloned().collect())
    }
}
