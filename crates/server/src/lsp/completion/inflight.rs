//! The work in flight: per document, the completion whose answer is still wanted (a newer
//! request for the document cancels the one before it); the one completion running in the
//! background to replace an answer (one at a time: there is one model); and the work the client
//! may cancel through its progress token (tests running). Every token is a child of the
//! session's, so ending the session cancels them all.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio_util::sync::CancellationToken;
use tower_lsp::lsp_types::Url;

/// The cancel tokens of the work on the model.
pub struct Requests {
    session: CancellationToken,
    /// Per document: the number and the cancel token of its completion in flight.
    inflight: Mutex<HashMap<Url, (u64, CancellationToken)>>,
    next: AtomicU64,
    /// The background completion's token.
    refreshing: Mutex<Option<CancellationToken>>,
    /// Cancellable work, by its progress token (as `progress.rs` spells it out).
    work: Mutex<HashMap<String, CancellationToken>>,
}

/// A completion in flight: its number and the token that cancels it.
pub struct InFlight {
    id: u64,
    pub token: CancellationToken,
}

impl Requests {
    pub fn new(session: CancellationToken) -> Requests {
        Requests {
            session,
            inflight: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            refreshing: Mutex::new(None),
            work: Mutex::new(HashMap::new()),
        }
    }

    /// A number no other call returns (for progress tokens the server makes).
    pub fn unique(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The cancel token of work reported under progress token `key` (none: cancelled only with
    /// the session); forgotten with [`Requests::end_work`].
    pub fn begin_work(&self, key: Option<&str>) -> CancellationToken {
        let token = self.session.child_token();
        if let Some(key) = key {
            let mut work = self.work.lock().unwrap_or_else(|e| e.into_inner());
            work.insert(key.to_string(), token.clone());
        }
        token
    }

    pub fn end_work(&self, key: Option<&str>) {
        if let Some(key) = key {
            let mut work = self.work.lock().unwrap_or_else(|e| e.into_inner());
            work.remove(key);
        }
    }

    /// `window/workDoneProgress/cancel`: cancels the work reported under `key`, if any runs.
    pub fn cancel_work(&self, key: &str) {
        let work = self.work.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(token) = work.get(key) {
            token.cancel();
        }
    }

    /// A fresh cancel token for a completion in `uri`; the previous one for that document is
    /// cancelled (a newer request wins).
    pub fn begin(&self, uri: &Url) -> InFlight {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let token = self.session.child_token();
        let mut inflight = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, older)) = inflight.insert(uri.clone(), (id, token.clone())) {
            older.cancel();
        }
        InFlight { id, token }
    }

    /// Forgets `request` if it is still `uri`'s request in flight.
    pub fn end(&self, uri: &Url, request: &InFlight) {
        let mut inflight = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
        if inflight.get(uri).is_some_and(|(id, _)| *id == request.id) {
            inflight.remove(uri);
        }
    }

    /// The token of a new background completion, cancelling the one before it.
    pub fn begin_refresh(&self) -> CancellationToken {
        let token = self.session.child_token();
        let mut refreshing = self.refreshing.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(older) = refreshing.replace(token.clone()) {
            older.cancel();
        }
        token
    }

    /// Cancels the background completion, if one runs, whichever document it is for: the model
    /// is wanted for a request.
    pub fn cancel_refresh(&self) {
        let mut refreshing = self.refreshing.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(token) = refreshing.take() {
            token.cancel();
        }
    }
}
