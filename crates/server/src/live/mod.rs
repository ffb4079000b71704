//! Live completion: what the language server does per keystroke, without the protocol. A
//! workspace [`Folder`] holds its settings, its open buffers and its index, which a task keeps
//! current with them ([`follow`]); an [`Engine`] is the model every completion shares; each
//! document keeps its last completion ([`LastCompletions`]), and typing the start of the
//! suggestion shown is answered from it ([`along`]) without the model.
//!
//! `lsp/` maps messages onto this module; nothing here names a protocol type. Positions are kept
//! as the client gave them ([`Spot`]) and compared, never interpreted: byte offsets come from
//! the caller.

pub mod along;
mod error;
mod folder;
mod follow;
mod last;

use std::sync::Arc;

pub use error::LiveError;
pub use folder::{Folder, IndexState};
pub use follow::UPDATE_DELAY;
pub use last::{Done, LastCompletion, LastCompletions, Spot, at_most_chars};

use crossfile_engine::backend::{Backend, BackendError};
use crossfile_engine::complete::{backend_for, tokenizer_for};
use crossfile_engine::config::Settings;
use crossfile_engine::progress::Progress;
use crossfile_engine::tokenize::Tokenizer;

/// The model, loaded once and shared by every completion.
#[derive(Clone)]
pub struct Engine {
    pub backend: Arc<dyn Backend>,
    pub tokenizer: Arc<dyn Tokenizer>,
}

impl Engine {
    /// Loads the backend and the tokenizer `settings` name, on the calling thread (a catalogue
    /// model is fetched first, reported to `progress`), then gives the heap the load freed back.
    pub fn load(settings: &Settings, progress: &Progress) -> Result<Engine, BackendError> {
        let backend = backend_for(settings, progress)?;
        let tokenizer = tokenizer_for(settings, backend.as_ref(), progress)?;
        tracing::info!(backend = backend.name(), "model ready");
        crossfile_engine::memory::release_free_heap();
        Ok(Engine { backend, tokenizer })
    }

    /// Whether an engine loaded with `loaded` serves `settings` (the same model and backend).
    pub fn serves(loaded: &Settings, settings: &Settings) -> bool {
        loaded.model == settings.model && loaded.backend == settings.backend
    }
}
