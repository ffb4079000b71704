//! Replacing an answer made from the last answer's layout. When the cross-file block or the
//! left context's start changes, the embedded backend answers at once from the last answer's
//! layout with this cursor's text (its KV cache is warm) and reads the new prompt meanwhile
//! ([`crate::backend::GenerateRequest::fallback`]). The user then often types along that
//! answer, and the model is not asked again for a while. So the new prompt's own answer is asked
//! for in the background, and once it comes it takes the fallback's place as the document's last
//! suggestion if the user has typed nothing but a start of it: the rest the next keystroke is
//! answered with is the fresh prompt's.
//!
//! It gives way to the user: a request that asks the model, in any document, cancels it
//! ([`super::inflight::Requests::cancel_refresh`]; there is one model), and it waits for nothing the user does.

use std::sync::Arc;

use tower_lsp::lsp_types::Url;

use super::at_cursor::{self, Cursor};
use super::completed::{LastCompletion, at_most_chars};
use super::state::{Engine, State};

/// The answer a completion gave from the fallback, to be replaced.
pub struct Replaced {
    pub uri: Url,
    /// The fallback's completion as it was kept (its done, where it was shown).
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
                tracing::debug!(uri = %replaced.uri, "the fallback's answer stays: {e}");
                return;
            }
        };
        let shown = at_most_chars(done.completion.suggestion.clone(), replaced.limit);
        let done = Arc::new(done);
        let kept = state.replace_last(&replaced.uri, |now| {
            let rest = typed_since(&replaced.last, now, &shown)?;
            Some(LastCompletion {
                position: now.position,
                asked_at: replaced.last.asked_at,
                case_id: None,
                shown: rest.to_string(),
                anchor: now.anchor,
                done: done.clone(),
            })
        });
        tracing::debug!(uri = %replaced.uri, kept, suggestion = shown, "the fallback's answer replaced");
    });
}

/// What is left of `shown` (asked where `fallback` was shown) once the user has typed what they
/// typed along `fallback` to reach `now`: when `now` is `fallback` or an answer of typing along
/// it, and what was typed is a start of `shown` too.
fn typed_since<'s>(
    fallback: &LastCompletion,
    now: &LastCompletion,
    shown: &'s str,
) -> Option<&'s str> {
    if !Arc::ptr_eq(&fallback.done, &now.done) {
        return None;
    }
    let typed = fallback
        .shown
        .get(..fallback.shown.len().checked_sub(now.shown.len())?)?;
    shown.strip_prefix(typed)
}
