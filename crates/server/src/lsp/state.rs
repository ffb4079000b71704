//! What the server holds between messages: client settings, workspace folders (each with its open
//! buffers and its index: [`crate::live::Folder`]), the model, the completion in flight and the
//! last one per document.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use tokio_util::sync::CancellationToken;
use tower_lsp::Client;
use tower_lsp::lsp_types::Url;

use super::completion::inflight::Requests;
use super::replay::session::Replay;

use crate::live::{Engine, Folder, LastCompletions};
use crate::settings::ServerSettings;
use crossfile_bench::arena::battle::{Battles, PairDraw};
use crossfile_engine::backend::Foreground;
use crossfile_engine::config::{Options, Settings};
use crossfile_engine::workspace;

/// The server's state, shared by every handler.
pub struct State {
    pub client: Client,
    /// The last good client options (`initializationOptions`).
    options: RwLock<Options>,
    folders: RwLock<Vec<Arc<Folder>>>,
    /// The model and the settings it was loaded with (`State::engine`, in `engine.rs`).
    pub(super) engine: tokio::sync::Mutex<Option<(Arc<Settings>, Engine)>>,
    /// Models loaded for arena arms that name another (`State::engine_for`).
    pub(super) arm_engines: tokio::sync::Mutex<Vec<(Arc<Settings>, Engine)>>,
    /// Arena battles shown and not yet decided, by document, and the last decided.
    pub battles: Arc<Battles<Url>>,
    /// The arena's pair draws, made for the seed the settings name.
    draws: Mutex<Option<(Option<u64>, Arc<PairDraw>)>>,
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
    pub last: LastCompletions<Url>,
    /// Warnings the user has been shown once (each configuration change repeats them in the log
    /// only).
    warned: Mutex<BTreeSet<String>>,
    /// While the model is being fetched: what a completion asked for meanwhile is told.
    downloading: Mutex<Option<String>>,
}

impl State {
    pub fn new(client: Client) -> State {
        let session = CancellationToken::new();
        State {
            client,
            options: RwLock::new(Options::default()),
            folders: RwLock::new(Vec::new()),
            engine: tokio::sync::Mutex::new(None),
            arm_engines: tokio::sync::Mutex::new(Vec::new()),
            battles: Arc::default(),
            draws: Mutex::new(None),
            requests: Requests::new(session.clone()),
            session,
            work_done_progress: AtomicBool::new(false),
            watch_registration: AtomicBool::new(false),
            replay: Replay::default(),
            last: LastCompletions::default(),
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

    /// The first folder's settings, else the user's file and the client's (the client's alone
    /// if the user's file is bad; the error was shown when it was read).
    pub fn first_settings(&self) -> Arc<ServerSettings> {
        match self.folders().first() {
            Some(folder) => folder.settings(),
            None => {
                let options = self.options();
                Arc::new(
                    ServerSettings::load_without_workspace(options.clone())
                        .unwrap_or_else(|_| ServerSettings::resolve(&options)),
                )
            }
        }
    }

    /// The engine's part of [`State::first_settings`]: what the model is loaded with.
    pub fn engine_settings(&self) -> Arc<Settings> {
        self.first_settings().engine.clone()
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

    /// The arena's pair draws under `seed` (`None`: one drawn from the clock, kept for the
    /// session); new draws when the settings name another seed.
    pub fn pair_draw(&self, seed: Option<u64>) -> Arc<PairDraw> {
        let mut draws = self.draws.lock().unwrap_or_else(|e| e.into_inner());
        match draws.as_ref() {
            Some((for_seed, draw)) if *for_seed == seed => draw.clone(),
            _ => {
                let draw = Arc::new(PairDraw::new(seed));
                *draws = Some((seed, draw.clone()));
                draw
            }
        }
    }

    /// Whether the model is loaded (not while it loads).
    pub fn model_loaded(&self) -> bool {
        self.engine.try_lock().is_ok_and(|loaded| loaded.is_some())
    }

    pub fn supports_progress(&self) -> bool {
        self.work_done_progress.load(Ordering::Relaxed)
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
