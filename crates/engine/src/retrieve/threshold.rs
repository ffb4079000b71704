//! `threshold:<spec>:<min>`: the inner retriever's hits scoring at least `min` (Drain et al.'s
//! similarity threshold): no chunk below it, so a cursor with nothing similar enough gets no
//! cross-file context rather than the best of poor matches. The score is the inner retriever's
//! own (a Jaccard similarity in 0..1, a BM25 score, an embedding cosine).

use super::{Hit, Query, RetrieveError, Retriever};
use crate::index::Snapshot;

pub struct Threshold {
    pub inner: Box<dyn Retriever>,
    pub min: f64,
}

impl Retriever for Threshold {
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let mut hits = self.inner.retrieve(snapshot, query, top_k)?;
        hits.retain(|hit| hit.score >= self.min);
        Ok(hits)
    }
}
