//! A workspace folder being edited: its settings, its open buffers, its index (kept current by
//! [`super::follow`]), the ring of what the user opened and edited lately, and the retrievers
//! and completer made from its settings, reused while they stay.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::{Notify, mpsc, watch};

use super::Engine;
use super::error::LiveError;
use super::follow;
use crate::settings::ServerSettings;
use crossfile_engine::backend::Backend;
use crossfile_engine::complete::{Completer, Live, Mode};
use crossfile_engine::index::{Index, Progress};
use crossfile_engine::retrieve::{
    self, Hit, RING_LINES, RetrieveError, Retriever, RetrieverSpec, Ring,
};
use crossfile_engine::workspace::Documents;

/// A retriever and the settings it was built from.
type BuiltRetriever = (Arc<ServerSettings>, Arc<dyn Retriever>);

/// A completer and the settings and model it was made for.
type BuiltCompleter = (Arc<ServerSettings>, Arc<dyn Backend>, Completer);

/// Where a folder's index stands.
pub enum IndexState {
    Building,
    Ready(Arc<Index>),
    /// Building failed (the message says why); completions in the folder fail with it.
    Failed(String),
}

/// One workspace folder: its settings, its open buffers and its index.
pub struct Folder {
    /// The canonical root.
    pub root: PathBuf,
    pub name: String,
    settings: RwLock<Arc<ServerSettings>>,
    /// Retrievers built from the settings, by spec, each with the settings it was built from: a
    /// completion reuses one (a `dense` retriever keeps its HTTP client and vector cache) until
    /// the settings change.
    retrievers: Mutex<HashMap<String, BuiltRetriever>>,
    /// The completer for the settings and the model, made once and reused while both stay.
    completer: Mutex<Option<BuiltCompleter>>,
    /// Open buffers, by path relative to the root.
    pub documents: Documents,
    /// Chunks of the buffers the user opened and edited lately, for the `recent` retriever.
    recent: Mutex<Ring>,
    pub(super) index: watch::Sender<IndexState>,
    pub(super) dirty: mpsc::UnboundedSender<(String, u64)>,
    /// Paths queued for the index so far, and how many of them it holds (a count, so a
    /// completion can wait for the edits made before it).
    pub(super) queued: AtomicU64,
    pub(super) applied: watch::Sender<u64>,
    /// The queued paths the index does not hold yet, by their number in the queue.
    pub(super) pending: Mutex<BTreeMap<u64, String>>,
    /// Asks the index task to apply its queue now rather than after [`follow::UPDATE_DELAY`].
    pub(super) flush: Notify,
}

impl Folder {
    /// A folder whose index is not built yet; edits queue until it is. Starts the task that
    /// keeps the index current (inside a tokio runtime).
    pub fn new(root: PathBuf, name: String, settings: ServerSettings) -> Arc<Folder> {
        let (dirty, queue) = mpsc::unbounded_channel();
        let (index, _) = watch::channel(IndexState::Building);
        let (applied, _) = watch::channel(0);
        let folder = Arc::new(Folder {
            root,
            name,
            settings: RwLock::new(Arc::new(settings)),
            retrievers: Mutex::new(HashMap::new()),
            completer: Mutex::new(None),
            documents: Documents::default(),
            recent: Mutex::new(Ring::new()),
            index,
            dirty,
            queued: AtomicU64::new(0),
            applied,
            pending: Mutex::new(BTreeMap::new()),
            flush: Notify::new(),
        });
        tokio::spawn(follow::keep_current(Arc::downgrade(&folder), queue));
        folder
    }

    pub fn settings(&self) -> Arc<ServerSettings> {
        self.settings
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn set_settings(&self, settings: ServerSettings) {
        *self.settings.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(settings);
    }

    /// Notes the lines of the open buffer `rel` around `line` (0-based) as recent: where it was
    /// opened or edited.
    pub fn note_recent(&self, rel: &str, line: u32) {
        if let Some((first, text)) = self.documents.lines_around(rel, line, RING_LINES) {
            self.recent().note(rel, first, &text);
        }
    }

    /// Forgets the recent chunks of `rel` (deleted on disk).
    pub fn forget_recent(&self, rel: &str) {
        self.recent().forget(rel);
    }

    /// The recent chunks, newest first, for a completion's query.
    pub fn recent_chunks(&self) -> Arc<[Hit]> {
        self.recent().chunks()
    }

    fn recent(&self) -> std::sync::MutexGuard<'_, Ring> {
        self.recent.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The retriever `spec` names, built from `settings` (this folder's, as a completion read
    /// them) once and reused while they are the folder's.
    pub fn retriever(
        &self,
        spec: &RetrieverSpec,
        settings: &Arc<ServerSettings>,
    ) -> Result<Arc<dyn Retriever>, RetrieveError> {
        let key = spec.to_string();
        let mut built = self.retrievers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((from, retriever)) = built.get(&key)
            && Arc::ptr_eq(from, settings)
        {
            return Ok(retriever.clone());
        }
        let retriever: Arc<dyn Retriever> = Arc::from(retrieve::build(spec, &settings.retrieve)?);
        built.insert(key, (settings.clone(), retriever.clone()));
        Ok(retriever)
    }

    /// The completer for `settings` (this folder's, as a completion read them) and `engine`,
    /// made once and reused while both are current.
    pub fn completer(&self, settings: &Arc<ServerSettings>, engine: &Engine) -> Completer {
        let mut built = self.completer.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((from, backend, completer)) = built.as_ref()
            && Arc::ptr_eq(from, settings)
            && Arc::ptr_eq(backend, &engine.backend)
        {
            return completer.clone();
        }
        // Live completion: the next keystroke's prompt shares most of this one's (unless the
        // settings turn that off).
        let live = Live::typing(
            settings.lsp.reuse_kv,
            Some(settings.lsp.right_context_lines as usize),
            settings.lsp.max_generate_ms,
        );
        let completer = Completer::new(
            &settings.engine,
            engine.backend.clone(),
            engine.tokenizer.clone(),
            Mode::Live(live),
        );
        *built = Some((settings.clone(), engine.backend.clone(), completer.clone()));
        completer
    }

    /// Where the index stands.
    pub fn index_state(&self) -> watch::Ref<'_, IndexState> {
        self.index.borrow()
    }

    /// The index, if it is built.
    pub fn index(&self) -> Option<Arc<Index>> {
        match &*self.index.borrow() {
            IndexState::Ready(index) => Some(index.clone()),
            _ => None,
        }
    }

    pub fn set_index(&self, index: Arc<Index>) {
        self.index.send_replace(IndexState::Ready(index));
    }

    /// Records that building the index failed, unless an older index still serves.
    pub fn set_index_failed(&self, message: String) {
        self.index.send_if_modified(|state| match state {
            IndexState::Ready(_) => false,
            _ => {
                *state = IndexState::Failed(message);
                true
            }
        });
    }

    /// Waits until the index is built; the reason when building it failed.
    pub async fn ready_index(&self) -> Result<Arc<Index>, LiveError> {
        let mut ready = self.index.subscribe();
        let state = ready
            .wait_for(|s| !matches!(s, IndexState::Building))
            .await
            .map_err(|_| LiveError::FolderGone)?;
        match &*state {
            IndexState::Ready(index) => Ok(index.clone()),
            IndexState::Failed(message) => Err(LiveError::IndexFailed(message.clone())),
            IndexState::Building => Err(LiveError::IndexFailed("the index is not built".into())),
        }
    }

    /// The index, opened or built (on the blocking pool) if the folder has none yet: a replay
    /// copy's, which the editor did not announce.
    pub async fn index_or_build(&self) -> Result<Arc<Index>, LiveError> {
        if let Some(index) = self.index() {
            return Ok(index);
        }
        let (root, settings) = (self.root.clone(), self.settings());
        let (index, _) = tokio::task::spawn_blocking(move || {
            Index::open_or_build(&root, &settings.index, &Progress::none())
        })
        .await
        .map_err(|source| LiveError::Task {
            what: "indexing",
            source,
        })??;
        let index = Arc::new(index);
        self.set_index(index.clone());
        Ok(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A runtime for `Folder::new`, which starts the folder's index task.
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    }

    #[test]
    fn a_folders_retriever_is_built_once_per_settings() {
        let runtime = runtime();
        let _entered = runtime.enter();
        let folder = Folder::new(PathBuf::from("/w"), "w".into(), ServerSettings::default());
        let spec = RetrieverSpec::Bm25;
        let settings = folder.settings();
        let first = folder.retriever(&spec, &settings).expect("bm25");
        let again = folder.retriever(&spec, &settings).expect("bm25");
        assert!(
            Arc::ptr_eq(&first, &again),
            "reused while the settings stay"
        );
        folder.set_settings(ServerSettings::default());
        let changed = folder.retriever(&spec, &folder.settings()).expect("bm25");
        assert!(
            !Arc::ptr_eq(&first, &changed),
            "built again for new settings"
        );
        let other = folder.retriever(&RetrieverSpec::Jaccard, &folder.settings());
        assert!(other.is_ok_and(|r| !Arc::ptr_eq(&r, &changed)));
    }

    #[test]
    fn a_folders_completer_is_made_again_only_for_new_settings_or_a_new_model() {
        let runtime = runtime();
        let _entered = runtime.enter();
        let folder = Folder::new(PathBuf::from("/w"), "w".into(), ServerSettings::default());
        let engine = || Engine {
            backend: Arc::new(crossfile_engine::backend::NoBackend),
            tokenizer: Arc::new(crossfile_engine::prompt::testing::CharTokenizer::new(&[])),
        };
        let made_for = |folder: &Folder| {
            let built = folder.completer.lock().expect("unpoisoned");
            built
                .as_ref()
                .map(|(settings, backend, _)| (settings.clone(), backend.clone()))
                .expect("a completer")
        };
        let (first, second) = (engine(), engine());
        let settings = folder.settings();
        folder.completer(&settings, &first);
        let (s1, b1) = made_for(&folder);
        folder.completer(&settings, &first);
        let (s2, b2) = made_for(&folder);
        assert!(Arc::ptr_eq(&s1, &s2) && Arc::ptr_eq(&b1, &b2), "kept");
        folder.completer(&settings, &second);
        let (_, b3) = made_for(&folder);
        assert!(Arc::ptr_eq(&b3, &second.backend), "made for the new model");
        folder.set_settings(ServerSettings::default());
        folder.completer(&folder.settings(), &second);
        let (s4, _) = made_for(&folder);
        assert!(!Arc::ptr_eq(&s4, &s1), "made for the new settings");
    }
}
