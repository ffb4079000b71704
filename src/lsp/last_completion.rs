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

/// `text` cut to its first `limit` characters.
pub fn at_most_chars(mut text: String, limit: usize) -> String {
    if let Some((byte, _)) = text.char_indices().nth(limit) {
        text.truncate(byte);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_cut_by_characters() {
        assert_eq!(at_most_chars("abc".into(), 5), "abc");
        assert_eq!(at_most_chars("abc".into(), 3), "abc");
        assert_eq!(at_most_chars("é🎉中x".into(), 3), "é🎉中");
        assert_eq!(at_most_chars("é🎉".into(), 0), "");
        assert_eq!(at_most_chars(String::new(), 0), "");
    }
}
