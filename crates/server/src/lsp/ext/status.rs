//! The server's status, typed: `crossfile.status`'s answer (the model and where it comes from,
//! the backend, the cache directory, each folder's index and trust, the arena) — see
//! `docs/lsp-extensions.md`, kept in step with this file too.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{ArenaStatus, Command};

/// `crossfile.status`: what the server runs with: the model and where it comes from, the
/// backend, the cache directory, and each folder's index and trust (no argument).
pub enum Status {}

impl Command for Status {
    const NAME: &'static str = "crossfile.status";
    type Params = Option<serde_json::Value>;
    type Result = StatusResult;
}

/// `crossfile.status`'s answer.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StatusResult {
    /// The server's version.
    pub version: String,
    pub model: ModelStatus,
    pub backend: BackendStatus,
    /// Where indexes, vectors and fetched models are kept.
    pub cache_dir: PathBuf,
    /// The user's config file, and whether it exists.
    pub user_config: Option<PathBuf>,
    pub user_config_exists: bool,
    /// The retriever completions use.
    pub retriever: String,
    pub folders: Vec<FolderStatus>,
    /// The arena, when a folder has it on (`arena.enabled` and two arms or more).
    pub arena: Option<ArenaStatus>,
}

/// The model: its label, where its file comes from, and whether it is there and loaded.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelStatus {
    /// As the status line shows it: a catalogue name, a GGUF file name, or an HTTP backend and
    /// its model.
    pub label: String,
    /// `catalogue` (fetched into the cache on first use) or `path` (`model.path`).
    pub source: String,
    /// The catalogue's name (`model.name`), when it is the source.
    pub name: Option<String>,
    /// The GGUF file: `model.path`, or where the catalogue's model is cached.
    pub file: PathBuf,
    /// Whether the file exists (the server fetches a catalogue model when it loads it: at the
    /// start, and when the model settings change).
    pub present: bool,
    /// Whether the server has loaded it.
    pub loaded: bool,
    /// While it is being fetched: what is being done.
    pub downloading: Option<String>,
}

/// The backend completions go to.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BackendStatus {
    /// As `backend.kind` spells it (`embedded`, `none` or an HTTP kind).
    pub kind: String,
    /// An HTTP backend's endpoint, where the workspace's code is sent.
    pub endpoint: Option<String>,
    /// An HTTP backend's model name.
    pub model: Option<String>,
}

/// A workspace folder: its index and its trust.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FolderStatus {
    pub name: String,
    pub root: PathBuf,
    /// `building`, `ready` or `failed`.
    pub index: String,
    /// Files and chunks the index holds, when it is ready.
    pub files: Option<usize>,
    pub chunks: Option<usize>,
    /// Why building the index failed.
    pub error: Option<String>,
    /// Whether its `crossfile.toml` may choose endpoints, model files and the cache directory.
    pub trusted: bool,
}
