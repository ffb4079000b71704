//! What a finished completion leaves behind: how it was made ([`Done`]) and, per document, the
//! last one ([`LastCompletion`]) that `crossfile.context` shows and `crossfile.score` recognises.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tower_lsp::lsp_types::Position;

use super::along::Anchor;

use crate::complete::Completion;
use crate::retrieve::RetrieverSpec;

/// A completion and how it was made.
pub struct Done {
    /// Which completion of this server it is (1, 2, …): the answers of typing along it share it.
    pub serial: u64,
    pub completion: Completion,
    pub retriever: RetrieverSpec,
    pub latency_ms: f64,
}

impl Done {
    /// A finished completion, numbered after the last one this process made.
    pub fn new(completion: Completion, retriever: RetrieverSpec, latency_ms: f64) -> Done {
        static MADE: AtomicU64 = AtomicU64::new(0);
        Done {
            serial: MADE.fetch_add(1, Ordering::Relaxed) + 1,
            completion,
            retriever,
            latency_ms,
        }
    }
}

/// The last completion in a document.
pub struct LastCompletion {
    /// Where it was shown.
    pub position: Position,
    /// Where the completion it came from was asked (`position` but for the answers of typing
    /// along it).
    pub asked_at: Position,
    /// The replayed case whose cursor it was at.
    pub case_id: Option<String>,
    /// The suggestion as the client got it.
    pub shown: String,
    /// Where it was shown, to recognise the user typing along it (`None`: the document was not
    /// open).
    pub anchor: Option<Anchor>,
    /// The completion it came from (shared by the answers of typing along it).
    pub done: Arc<Done>,
}
