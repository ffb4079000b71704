//! Replacing an answer in the background by a better one at the same cursor, when the user has
//! typed nothing but a start of it since. Two answers are replaced:
//! - one made from the last answer's layout: when the cross-file block or the left context's
//!   start changes, the embedded backend answers at once from the last answer's layout with this
//!   cursor's text (its KV cache is warm) and reads the new prompt meanwhile
//!   ([`crossfile_engine::backend::GenerateRequest::fallback`]); the new prompt's own answer replaces it;
//! - one its time budget cut (`lsp.max_generate_ms`): the embedded backend goes on decoding where
//!   it stopped (its slot holds the answer so far) and the whole answer replaces the cut one.
//!
//! The user often types along the first answer, and the model is not asked again for a while:
//! the rest the next keystroke is answered with is then the replacement's.
//!
//! It gives way to the user: a request that asks the model, in any document, cancels it
//! ([`super::inflight::Requests::cancel_refresh`]; there is one model), and it waits for nothing the user does.

use std::sync::Arc;

use tower_lsp::lsp_types::Url;

use super::at_cursor::{self, Cursor};
use crate::live::{Engine, LastCompletion, at_most_chars};
use crate::lsp::state::State;

/// The answer a completion gave from the fallback or cut at its budget, to be replaced.
pub struct Replaced {
    pub uri: Url,
    /// The completion as it was kept (its done, where it was shown).
    pub last: Arc<LastCompletion>,
    /// At most this many characters of a suggestion are shown.
    pub limit: usize,
}

/// Asks for `cursor`'s own answer in the background, to replace `replaced`.
pub fn replace_later(state: &Arc<State>, cursor: Cursor, engine: Engine, replaced: Replaced) {
    let cancel = state.requests.begin_refresh();
    let state = state.clone();
    tokio::spawn(async move {
        let done = match at_cursor::complete_own(&cursor, &engine, &cancel).await {
            Ok(done) => done,
            Err(e) => {
                tracing::debug!(uri = %replaced.uri, "the answer stays: {e}");
                return;
            }
        };
        let shown = at_most_chars(done.completion.suggestion.clone(), replaced.limit);
        let kept = state
            .last
            .replace_along(&replaced.uri, &replaced.last, &shown, Arc::new(done));
        tracing::debug!(uri = %replaced.uri, kept, suggestion = shown, "the answer replaced");
    });
}
