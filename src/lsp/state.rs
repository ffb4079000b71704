//! What the server holds between messages: client settings, workspace folders (each with its open
//! buffers and its index), the model, and the completion in flight per document.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use tokio::sync::{Notify, mpsc, watch};
use tokio_util::sync::CancellationToken;
use tower_lsp::Client;
use tower_lsp::lsp_types::Url;

use super::error::ServeError;
use super::inflight::Requests;
use super::last_completion::LastCompletion;
use super::replay_session::Replay;

use crate::backend::{Backend, Foreground};
use crate::complete::Completer;
use crate::config::{Options, Settings};
use crate::index::{Index, Progress};
use crate::retrieve::{self, RetrieveError, Retriever, RetrieverSpec};
use crate::tokenize::Tokenizer;
use crate::workspace::{self, Documents};

/// How long edits are gathered before the index takes them: a burst of keystrokes becomes one
/// update per file.
const UPDATE_DELAY: Duration = Duration::from_millis(300);

/// The server's state, shared by every handler.
pub struct State {
    pub client: Client,
    /// The last good client options (`initializationOptions`).
    options: RwLock<Options>,
    folders: RwLock<Vec<Arc<Folder>>>,
    /// The model and the settings it was loaded with (`State::engine`, in `engine.rs`).
    pub(super) engine: tokio::sync::Mutex<Option<(Arc<Settings>, Engine)>>,
    /// The parent of every request's cancel token: cancelled when the session ends (the client's
    /// input closed), so no work outlives it.
    session: CancellationToken,
    /// The completions in flight and the background one.
    pub requests: Requests,
    /// Whether the client takes `window/workDoneProgress/create`.
    pub work_done_progress: AtomicBool,
    /// Whether the client takes a dynamic registration of `workspace/didChangeWatchedFiles`.
    pub watch_registration: AtomicBool,
    /// Benchmark cases being replayed.
    pub replay: Replay,
    /// The last completion in each document.
    last: Mutex<HashMap<Url, Arc<LastCompletion>>>,
    /// Warnings the user has been shown once (each configuration change repeats them in the log
    /// only).
    warned: Mutex<BTreeSet<String>>,
    /// While the model is being fetched: what a completion asked for meanwhile is told.
    downloading: Mutex<Option<String>>,
}

/// The model, loaded once and shared by every completion.
#[derive(Clone)]
pub struct Engine {
    pub backend: Arc<dyn Backend>,
    pub tokenizer: Arc<dyn Tokenizer>,
}

/// A retriever and the settings it was built from.
type BuiltRetriever = (Arc<Settings>, Arc<dyn Retriever>);

/// A completer and the settings and model it was made for.
type BuiltCompleter = (Arc<Settings>, Arc<dyn Backend>, Completer);

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
    settings: RwLock<Arc<Settings>>,
    /// Retrievers built from the settings, by spec, each with the settings it was built from: a
    /// completion reuses one (a `dense` retriever keeps its HTTP client and vector cache) until
    /// the settings change.
    retrievers: Mutex<HashMap<String, BuiltRetriever>>,
    /// The completer for the settings and the model, made once and reused while both stay.
    completer: Mutex<Option<BuiltCompleter>>,
    /// Open buffers, by path relative to the root.
    pub documents: Documents,
    index: watch::Sender<IndexState>,
    dirty: mpsc::UnboundedSender<(String, u64)>,
    /// Paths queued for the index so far, and how many of them it holds (a count, so a
    /// completion can wait for the edits made before it).
    queued: AtomicU64,
    applied: watch::Sender<u64>,
    /// The queued paths the index does not hold yet, by their number in the queue.
    pending: Mutex<BTreeMap<u64, String>>,
    /// Asks the index task to apply its queue now rather than after [`UPDATE_DELAY`].
    flush: Notify,
}

impl State {
    pub fn new(client: Client) -> State {
        let session = CancellationToken::new();
        State {
            client,
            options: RwLock::new(Options::default()),
            folders: RwLock::new(Vec::new()),
            engine: tokio::sync::Mutex::new(None),
            requests: Requests::new(session.clone()),
            session,
            work_done_progress: AtomicBool::new(false),
            watch_registration: AtomicBool::new(false),
            replay: Replay::default(),
            last: Mutex::new(HashMap::new()),
            warned: Mutex::new(BTreeSet::new()),
            downloading: Mutex::new(None),
        }
    }

    /// Whether `message` is new to this session (and remembers it).
    pub fn first_time(&self, message: &str) -> bool {
        self.warned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(message.to_string())
    }

    /// The last good client options.
    pub fn options(&self) -> Options {
        self.options
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn set_options(&self, options: Options) {
        *self.options.write().unwrap_or_else(|e| e.into_inner()) = options;
    }

    pub fn folders(&self) -> Vec<Arc<Folder>> {
        self.folders
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn set_folders(&self, folders: Vec<Arc<Folder>>) {
        *self.folders.write().unwrap_or_else(|e| e.into_inner()) = folders;
    }

    pub fn add_folder(&self, folder: Arc<Folder>) {
        self.folders
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(folder);
    }

    /// Keeps `completion` as `uri`'s last.
    pub fn remember(&self, uri: Url, completion: LastCompletion) {
        self.remember_shared(uri, Arc::new(completion));
    }

    /// Keeps `completion`, which the caller holds too, as `uri`'s last.
    pub fn remember_shared(&self, uri: Url, completion: Arc<LastCompletion>) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        last.insert(uri, completion);
    }

    /// Replaces `uri`'s last completion with what `replace` makes of it, if it makes anything;
    /// no other completion is kept meanwhile.
    pub fn replace_last(
        &self,
        uri: &Url,
        replace: impl FnOnce(&LastCompletion) -> Option<LastCompletion>,
    ) -> bool {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let Some(new) = last.get(uri).and_then(|old| replace(old)) else {
            return false;
        };
        last.insert(uri.clone(), Arc::new(new));
        true
    }

    /// `uri`'s last completion.
    pub fn last(&self, uri: &Url) -> Option<Arc<LastCompletion>> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        last.get(uri).cloned()
    }

    /// The folder holding `uri`'s file (the innermost one when folders nest) and the file's path
    /// relative to it.
    pub fn locate(&self, uri: &Url) -> Option<(Arc<Folder>, String)> {
        let path = super::convert::file_path(uri)?;
        let path = canonical_or_lexical(&path);
        self.folders()
            .into_iter()
            .filter_map(|folder| {
                let rel = workspace::relative_path(&folder.root, &path)?;
                Some((folder, rel))
            })
            .min_by_key(|(_, rel)| rel.len())
    }

    /// Marks a completion that wants the model as on its way ([`Backend::foreground`]) while the
    /// guard lives, when the model is loaded: the backend leaves its idle work meanwhile.
    pub fn foreground(&self) -> Foreground {
        self.engine
            .try_lock()
            .ok()
            .and_then(|loaded| {
                loaded
                    .as_ref()
                    .map(|(_, engine)| engine.backend.foreground())
            })
            .unwrap_or_default()
    }

    /// Settings for the model: the first folder's, else the user's file and the client's (the
    /// client's alone if the user's file is bad; the error was shown when it was read).
    pub fn engine_settings(&self) -> Arc<Settings> {
        match self.folders().first() {
            Some(folder) => folder.settings(),
            None => {
                let options = self.options();
                Arc::new(
                    Settings::load_without_workspace(options.clone())
                        .unwrap_or_else(|_| Settings::resolve(&options)),
                )
            }
        }
    }

    /// A cancel token for work that is not a document's completion (compare); cancelled with
    /// the session.
    pub fn session_token(&self) -> CancellationToken {
        self.session.child_token()
    }

    /// Cancels all work in flight, for good: the session is over.
    pub fn end_session(&self) {
        self.session.cancel();
    }

    /// What a completion asked for while the model is being fetched is told (`None`: no fetch).
    pub fn downloading(&self) -> Option<String> {
        self.downloading
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(super) fn set_downloading(&self, note: Option<String>) {
        *self.downloading.lock().unwrap_or_else(|e| e.into_inner()) = note;
    }

    pub fn supports_progress(&self) -> bool {
        self.work_done_progress.load(Ordering::Relaxed)
    }
}

impl Folder {
    /// A folder whose index is not built yet; edits queue until it is. Starts the task that
    /// keeps the index current.
    pub fn new(root: PathBuf, name: String, settings: Settings) -> Arc<Folder> {
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
            index,
            dirty,
            queued: AtomicU64::new(0),
            applied,
            pending: Mutex::new(BTreeMap::new()),
            flush: Notify::new(),
        });
        tokio::spawn(keep_current(Arc::downgrade(&folder), queue));
        folder
    }

    pub fn settings(&self) -> Arc<Settings> {
        self.settings
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn set_settings(&self, settings: Settings) {
        *self.settings.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(settings);
    }

    /// The retriever `spec` names, built from `settings` (this folder's, as a completion read
    /// them) once and reused while they are the folder's.
    pub fn retriever(
        &self,
        spec: &RetrieverSpec,
        settings: &Arc<Settings>,
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
    pub fn completer(&self, settings: &Arc<Settings>, engine: &Engine) -> Completer {
        let mut built = self.completer.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((from, backend, completer)) = built.as_ref()
            && Arc::ptr_eq(from, settings)
            && Arc::ptr_eq(backend, &engine.backend)
        {
            return completer.clone();
        }
        // Live completion: the next keystroke's prompt shares most of this one's (unless the
        // settings turn that off).
        let reuse = settings.lsp.reuse_kv;
        let completer = Completer::new(settings, engine.backend.clone(), engine.tokenizer.clone())
            .with_kv_reuse(reuse)
            .with_steady_prompts(reuse)
            .with_next_line(true)
            .with_generate_budget(Some(settings.lsp.max_generate_ms))
            .with_live_right_lines(reuse.then_some(settings.lsp.right_context_lines as usize));
        *built = Some((settings.clone(), engine.backend.clone(), completer.clone()));
        completer
    }

    /// Waits until the index is built; the reason when building it failed.
    pub async fn ready_index(&self) -> Result<Arc<Index>, ServeError> {
        let mut ready = self.index.subscribe();
        let state = ready
            .wait_for(|s| !matches!(s, IndexState::Building))
            .await
            .map_err(|_| ServeError::FolderGone)?;
        match &*state {
            IndexState::Ready(index) => Ok(index.clone()),
            IndexState::Failed(message) => Err(ServeError::IndexFailed(message.clone())),
            IndexState::Building => Err(ServeError::IndexFailed("the index is not built".into())),
        }
    }

    /// The index, opened or built (on the blocking pool) if the folder has none yet: a replay
    /// copy's, which the editor did not announce.
    pub async fn index_or_build(&self) -> Result<Arc<Index>, ServeError> {
        if let Some(index) = self.index() {
            return Ok(index);
        }
        let (root, settings) = (self.root.clone(), self.settings());
        let (index, _) = tokio::task::spawn_blocking(move || {
            Index::open_or_build(&root, &settings.index, &Progress::none())
        })
        .await
        .map_err(ServeError::task("indexing"))??;
        let index = Arc::new(index);
        self.set_index(index.clone());
        Ok(index)
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

    /// Queues `rel` for the index: its open buffer's text if it is open, else the disk's.
    pub fn touch(&self, rel: &str) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let number = self.queued.fetch_add(1, Ordering::SeqCst) + 1;
        pending.insert(number, rel.to_string());
        let _ = self.dirty.send((rel.to_string(), number));
    }

    /// The index, once it holds every edit queued before this call: the queue is applied at
    /// once instead of after the usual delay, so a completion sees the text the user sees.
    pub async fn settled_index(&self) -> Result<Arc<Index>, ServeError> {
        let index = self.ready_index().await?;
        let target = self.queued.load(Ordering::SeqCst);
        let mut applied = self.applied.subscribe();
        if *applied.borrow() < target {
            self.flush.notify_one();
            applied
                .wait_for(|&n| n >= target)
                .await
                .map_err(|_| ServeError::FolderGone)?;
        }
        Ok(index)
    }

    /// The index for a completion at `line` of `rel`, whose buffer holds `text`: at once when
    /// all it lacks of the queued edits is that line's (a keystroke's), which retrieval leaves
    /// out anyway (the line lies in every query's own region), so typing does not commit the
    /// index at each keystroke; else [`Folder::settled_index`].
    pub async fn index_at(
        &self,
        rel: &str,
        text: Option<&str>,
        line: u32,
    ) -> Result<Arc<Index>, ServeError> {
        let index = self.ready_index().await?;
        let only_this_file = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .all(|path| path == rel);
        if let Some(text) = text
            && only_this_file
            && index
                .snapshot()
                .file(rel)
                .is_some_and(|file| workspace::differ_at_most_in_line(&file.text, text, line))
        {
            return Ok(index);
        }
        self.settled_index().await
    }
}

/// Applies queued paths to the folder's index, a batch at a time, on the blocking pool, so
/// neither the message loop nor a keystroke waits for a commit.
async fn keep_current(folder: Weak<Folder>, mut queue: mpsc::UnboundedReceiver<(String, u64)>) {
    while let Some(first) = queue.recv().await {
        let Some(f) = folder.upgrade() else { return };
        tokio::select! {
            () = tokio::time::sleep(UPDATE_DELAY) => {}
            () = f.flush.notified() => {}
        }
        drop(f);
        let (first, mut covered) = first;
        let mut paths = BTreeSet::from([first]);
        while let Ok((path, number)) = queue.try_recv() {
            paths.insert(path);
            covered = covered.max(number);
        }
        let index = match folder.upgrade() {
            Some(f) => f.ready_index().await,
            None => return,
        };
        // Without an index there is nothing to update; completions report why.
        let Ok(index) = index else { continue };
        // Texts are read after the index is ready, so the newest buffer content goes in.
        let Some(f) = folder.upgrade() else { return };
        let work: Vec<(String, Option<String>)> = paths
            .into_iter()
            .map(|rel| {
                let text = f.documents.text(&rel);
                (rel, text)
            })
            .collect();
        drop(f);
        let done = tokio::task::spawn_blocking(move || {
            for (rel, text) in work {
                let result = match &text {
                    Some(text) => index.update_text(&rel, text),
                    None => index.update_files(&[rel.as_str()]).map(|_| ()),
                };
                match result {
                    Ok(()) => tracing::debug!(path = %rel, open = text.is_some(), "index updated"),
                    Err(e) => tracing::warn!(path = %rel, "index update failed: {e}"),
                }
            }
        })
        .await;
        if let Err(e) = done {
            tracing::error!("index update task failed: {e}");
        }
        if let Some(f) = folder.upgrade() {
            let mut pending = f.pending.lock().unwrap_or_else(|e| e.into_inner());
            *pending = pending.split_off(&(covered + 1));
            drop(pending);
            f.applied.send_modify(|n| *n = (*n).max(covered));
        }
    }
}

/// `path` through symlinks when it exists; else its existing ancestor's canonical form joined
/// with the rest, so a file not yet on disk still finds its folder.
fn canonical_or_lexical(path: &Path) -> PathBuf {
    if let Ok(path) = path.canonicalize() {
        return path;
    }
    let mut tail = Vec::new();
    let mut existing = path;
    while let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) {
        tail.push(name.to_os_string());
        existing = parent;
        if let Ok(mut resolved) = existing.canonicalize() {
            resolved.extend(tail.iter().rev());
            return resolved;
        }
    }
    path.to_path_buf()
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
        let folder = Folder::new(PathBuf::from("/w"), "w".into(), Settings::default());
        let spec = RetrieverSpec::Bm25;
        let settings = folder.settings();
        let first = folder.retriever(&spec, &settings).expect("bm25");
        let again = folder.retriever(&spec, &settings).expect("bm25");
        assert!(
            Arc::ptr_eq(&first, &again),
            "reused while the settings stay"
        );
        folder.set_settings(Settings::default());
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
        let folder = Folder::new(PathBuf::from("/w"), "w".into(), Settings::default());
        let engine = || Engine {
            backend: Arc::new(crate::backend::NoBackend),
            tokenizer: Arc::new(crate::prompt::testing::CharTokenizer::new(&[])),
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
        folder.set_settings(Settings::default());
        folder.completer(&folder.settings(), &second);
        let (s4, _) = made_for(&folder);
        assert!(!Arc::ptr_eq(&s4, &s1), "made for the new settings");
    }
}
