//! Raw options as written in a file or given as flags: every field optional, checked per layer.
//!
//! Unknown keys are collected with `serde_ignored`, every one by dotted path, rather than with
//! `deny_unknown_fields`, which stops at the first; a mistyped value is located with
//! `serde_path_to_error`; ranges are checked by `check.rs`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{ConfigError, Problem, Source};
use crate::backend::{BackendKind, FimRoute};
use crate::choice::OrAuto;
use crate::chunk::ChunkerKind;
use crate::postprocess::Unit;
use crate::prompt::{CrossfileLayout, Template};
use crate::retrieve::{Exclude, RetrieverSpec};

/// Merges two layers of an options struct field by field, the second winning.
macro_rules! options {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$fmeta:meta])* pub $field:ident: Option<$ty:ty>,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, Deserialize)]
        pub struct $name { $($(#[$fmeta])* pub $field: Option<$ty>,)* }

        impl Overlay for $name {
            fn overlay(self, over: Self) -> Self {
                $name { $($field: merge(self.$field, over.$field),)* }
            }
        }
    };
}

/// A layer that can take another on top.
pub trait Overlay {
    fn overlay(self, over: Self) -> Self;
}

macro_rules! leaf_overlay {
    ($($ty:ty),*) => { $(impl Overlay for $ty { fn overlay(self, over: Self) -> Self { over } })* };
}
leaf_overlay!(
    u32,
    u64,
    usize,
    f64,
    bool,
    String,
    PathBuf,
    Vec<PathBuf>,
    Vec<super::arena::ArmOptions>,
    ChunkerKind,
    RetrieverSpec,
    Exclude,
    BackendKind,
    FimRoute,
    OrAuto<Template>,
    OrAuto<CrossfileLayout>,
    Unit,
    super::arena::PairRule
);

fn merge<T: Overlay>(base: Option<T>, over: Option<T>) -> Option<T> {
    match (base, over) {
        (Some(a), Some(b)) => Some(a.overlay(b)),
        (a, b) => b.or(a),
    }
}

options! {
    /// One layer of options. Field names are the TOML keys.
    pub struct Options {
        pub workspace: Option<WorkspaceOptions>,
        pub index: Option<IndexOptions>,
        pub retrieve: Option<RetrieveOptions>,
        pub model: Option<ModelOptions>,
        pub backend: Option<BackendOptions>,
        pub prompt: Option<PromptOptions>,
        pub postprocess: Option<PostprocessOptions>,
        pub lsp: Option<LspOptions>,
        pub trust: Option<TrustOptions>,
        pub arena: Option<ArenaOptions>,
    }
}

options! {
    /// `[arena]`: blind paired battles between arms in the editor (see `config::arena`).
    pub struct ArenaOptions {
        pub enabled: Option<bool>,
        /// Two or more arms, each a retriever spec or a table of settings keys (a later layer's
        /// list replaces an earlier one's).
        pub arms: Option<Vec<super::arena::ArmOptions>>,
        /// How a pair is drawn.
        pub pairs: Option<super::arena::PairRule>,
        pub seed: Option<u64>,
        /// The votes file.
        pub votes: Option<PathBuf>,
    }
}

options! {
    /// `[trust]`: which workspaces' own `crossfile.toml` may choose endpoints, keys, files and
    /// the cache (see `config::trust`). Read from the user's file, flags and the client only.
    pub struct TrustOptions {
        /// Trust every workspace (the user's file), or this one (`--trust-workspace`, an
        /// editor's workspace trust).
        pub workspace: Option<bool>,
        /// Folders whose workspaces are trusted (themselves and everything under them).
        pub workspaces: Option<Vec<PathBuf>>,
    }
}

options! {
    /// `[workspace]`: which files belong.
    pub struct WorkspaceOptions {
        /// Files larger than this many bytes are not indexed.
        pub max_file_bytes: Option<u64>,
    }
}

options! {
    /// `[index]`: where the index lives and how files are chunked.
    pub struct IndexOptions {
        pub cache_dir: Option<PathBuf>,
        /// Which chunks the tantivy `bm25` retriever ranks.
        pub bm25_chunker: Option<ChunkerKind>,
        pub fixed_lines: Option<u32>,
        pub sliding_lines: Option<u32>,
        pub sliding_stride: Option<u32>,
        pub syntax_max_lines: Option<u32>,
        /// How long to wait for another process that holds the index's write lock.
        pub lock_wait_ms: Option<u64>,
    }
}

options! {
    /// `[retrieve]`: which retriever and its parameters.
    pub struct RetrieveOptions {
        /// The default retriever spec (`identifiers` when unset; `bm25`, `mmr:bm25:0.7`, ...).
        pub retriever: Option<RetrieverSpec>,
        pub top_k: Option<usize>,
        /// Lines before the cursor that form the `bm25` query.
        pub query_lines: Option<u32>,
        /// Lines before the cursor that form the `jaccard` query window.
        pub jaccard_query_lines: Option<u32>,
        /// The rank constant of reciprocal rank fusion.
        pub rrf_k: Option<f64>,
        /// What of the cursor's own file `bm25`, `jaccard` and `dense` leave out.
        pub exclude: Option<Exclude>,
        /// `[retrieve.dense]`: the embeddings endpoint of the `dense` retriever.
        pub dense: Option<DenseOptions>,
    }
}

options! {
    /// `[retrieve.dense]`: an OpenAI-compatible `/v1/embeddings` endpoint.
    pub struct DenseOptions {
        pub endpoint: Option<String>,
        pub model: Option<String>,
        /// Name of the environment variable that holds the API key (never the key itself).
        pub api_key_env: Option<String>,
        pub timeout_ms: Option<u64>,
    }
}

options! {
    /// `[model]`: the GGUF the embedded backend runs (and HTTP backends' tokenizer comes from).
    pub struct ModelOptions {
        /// A GGUF file; default: the catalogue's model `name`, fetched.
        pub path: Option<PathBuf>,
        /// A model of the catalogue (`crossfile model list`), fetched into the cache on first
        /// use; default `qwen2.5-coder-0.5b`. `path` wins over it.
        pub name: Option<String>,
        /// Context size in tokens.
        pub n_ctx: Option<u32>,
        /// CPU threads for the embedded backend (default: every core).
        pub threads: Option<u32>,
        /// llama.cpp contexts the embedded backend keeps alive between completions, so a
        /// prompt's shared part is not read again (default 1; each holds `n_ctx` tokens of KV).
        pub kv_slots: Option<u32>,
        /// Runs of a kept KV cache at least this long are shifted to where a new prompt holds
        /// them again, as llama.cpp's `--cache-reuse` does (default 0: never; approximate).
        pub kv_shift_min_span: Option<u32>,
        /// A `tokenizer.json` to count tokens with instead of the GGUF's vocabulary.
        pub tokenizer: Option<PathBuf>,
    }
}

options! {
    /// `[backend]`: which model backend generates, and how it is reached.
    pub struct BackendOptions {
        pub kind: Option<BackendKind>,
        /// Base URL of an HTTP backend (`http://127.0.0.1:8080`).
        pub endpoint: Option<String>,
        /// Model name sent to HTTP backends that want one.
        pub model: Option<String>,
        /// Name of the environment variable that holds the API key (never the key itself).
        pub api_key_env: Option<String>,
        pub timeout_ms: Option<u64>,
        /// Retries on 429, 5xx and connection errors, with exponential backoff.
        pub retries: Option<u32>,
        /// Responses kept in the in-memory response cache (0 turns it off).
        pub cache_entries: Option<usize>,
        /// How `llamacpp` sends a fill-in-the-middle prompt.
        pub fim: Option<FimRoute>,
    }
}

options! {
    /// `[prompt]`: template and token budgets.
    pub struct PromptOptions {
        /// `auto`: from the model's vocabulary.
        pub template: Option<OrAuto<Template>>,
        /// How retrieved chunks are written; `auto`: `repo` when the vocabulary has Qwen's
        /// repository-level tokens, else `comment` (CrossCodeEval's).
        pub layout: Option<OrAuto<CrossfileLayout>>,
        /// Token budget of the cross-file block.
        pub crossfile_tokens: Option<u32>,
        /// Tokens the model may generate.
        pub max_new_tokens: Option<u32>,
    }
}

options! {
    /// `[postprocess]`: what unit a suggestion is cut to.
    pub struct PostprocessOptions {
        pub unit: Option<Unit>,
    }
}

options! {
    /// `[lsp]`: what only the language server reads.
    pub struct LspOptions {
        /// How long a completion request waits before it starts, so a newer one for the same
        /// document (a keystroke later) replaces it without running the model.
        pub debounce_ms: Option<u64>,
        /// Decoding a suggestion stops this many milliseconds after its request reached the
        /// model (reading the prompt counted; with `reuse_kv` off, after its first token) and
        /// the text so far is suggested (default 400), the whole answer then being finished in
        /// the background for typing along; 0 sets no limit. A second request for the next
        /// line, after an empty answer at a line's end, gets what the first left. Never at a
        /// replayed case's cursor.
        pub max_generate_ms: Option<u64>,
        /// Suggestions are cut to this many characters.
        pub max_suggestion_chars: Option<usize>,
        /// Live completion keeps the model's KV caches between requests and lays prompts out
        /// to stay the same while the user types (default true); false: every completion is
        /// laid out as `crossfile complete` lays it out and read in a fresh context.
        pub reuse_kv: Option<bool>,
        /// Lines below the cursor's line that a live fill-in-the-middle prompt shows after the
        /// rest of the cursor's line (default 0). Whatever follows the cursor in such a prompt
        /// is read again at every keystroke, since it comes after the text being typed.
        /// `crossfile complete`, `bench run` and a replayed case show all the right context the
        /// budget allows.
        pub right_context_lines: Option<u32>,
    }
}

impl Options {
    /// This layer with `over`'s set fields on top.
    pub fn overlay(self, over: Options) -> Options {
        Overlay::overlay(self, over)
    }

    /// Reads and checks a TOML file; `Ok(None)` if it does not exist.
    pub fn read_file(path: &Path) -> Result<Option<Options>, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(ConfigError::Read {
                    origin: Source::File(path.into()),
                    error,
                });
            }
        };
        let mut options = Options::parse_toml(&text, Source::File(path.into()))?;
        if let Some(dir) = path.parent() {
            options.resolve_paths(dir);
        }
        Ok(Some(options))
    }

    /// Makes the file paths of a configuration file relative to the file's directory.
    fn resolve_paths(&mut self, dir: &Path) {
        let resolve = |p: &mut Option<PathBuf>| {
            if let Some(path) = p.as_mut().filter(|p| p.is_relative()) {
                *path = dir.join(&*path);
            }
        };
        if let Some(index) = self.index.as_mut() {
            resolve(&mut index.cache_dir);
        }
        let home = directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf());
        let from_home = |path: &mut PathBuf| match (path.strip_prefix("~"), &home) {
            (Ok(rest), Some(home)) => {
                *path = home.join(rest);
                true
            }
            _ => false,
        };
        if let Some(votes) = self.arena.as_mut().and_then(|a| a.votes.as_mut())
            && !from_home(votes)
            && votes.is_relative()
        {
            *votes = dir.join(&*votes);
        }
        if let Some(model) = self.model.as_mut() {
            resolve(&mut model.path);
            resolve(&mut model.tokenizer);
        }
        if let Some(folders) = self.trust.as_mut().and_then(|t| t.workspaces.as_mut()) {
            for folder in folders.iter_mut() {
                if !from_home(folder) && folder.is_relative() {
                    *folder = dir.join(&*folder);
                }
            }
        }
    }

    /// Parses TOML text and checks it, naming `source` in errors.
    pub fn parse_toml(text: &str, source: Source) -> Result<Options, ConfigError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Syntax {
            line: e.span().map(|span| line_of(text, span.start)).unwrap_or(1),
            message: e.message().to_string(),
            origin: source.clone(),
        })?;
        // Read as JSON, as an editor's options are (the TOML of a config file holds no dates).
        let value = serde_json::to_value(table).map_err(|e| ConfigError::Invalid {
            origin: source.clone(),
            problems: vec![Problem {
                key: String::new(),
                message: e.to_string(),
            }],
        })?;
        Options::from_value(value, source)
    }

    /// An editor's options (`initializationOptions`, `workspace/didChangeConfiguration`: the keys
    /// of `crossfile.toml` as JSON), checked like a file's; none, `null` or `[]` is no option.
    pub fn from_client(value: Option<serde_json::Value>) -> Result<Options, ConfigError> {
        match value {
            None | Some(serde_json::Value::Null) => Ok(Options::default()),
            // An empty Lua table reaches JSON as `[]` (Neovim cannot tell it from a map).
            Some(serde_json::Value::Array(items)) if items.is_empty() => Ok(Options::default()),
            Some(value) => Options::from_value(value, Source::Client),
        }
    }

    /// Deserializes options from a parsed value (TOML read as JSON), reporting every unknown key
    /// and every value of the wrong type or name by dotted path, then checks value ranges. A
    /// value that does not read is taken out and the rest read again, so one bad key hides no
    /// other.
    pub fn from_value(
        mut value: serde_json::Value,
        source: Source,
    ) -> Result<Options, ConfigError> {
        // Every bad arm is reported with its keys, then left out so the rest reads.
        let mut problems = super::arena::take_bad_arms(&mut value);
        let (parsed, read) = read_value::<Options>(value);
        problems.extend(read);
        if let Some(options) = &parsed {
            problems.extend(options.problems());
        }
        match parsed {
            Some(options) if problems.is_empty() => Ok(options),
            _ => Err(ConfigError::Invalid {
                origin: source,
                problems,
            }),
        }
    }

    /// Checks value ranges; the error names `source`.
    pub fn check(&self, source: &Source) -> Result<(), ConfigError> {
        let problems = self.problems();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ConfigError::Invalid {
                origin: source.clone(),
                problems,
            })
        }
    }

    /// Every out-of-range value of this layer.
    pub(super) fn problems(&self) -> Vec<Problem> {
        super::check::problems(self)
    }
}

/// Reads `value` as a `T`, with every unknown key and every value of the wrong type or name by
/// dotted path. A value that does not read is taken out and the rest read again, so one bad key
/// hides no other; `None` when the rest does not read either.
pub(super) fn read_value<T: serde::de::DeserializeOwned>(
    mut value: serde_json::Value,
) -> (Option<T>, Vec<Problem>) {
    let mut unknown = std::collections::BTreeSet::new();
    let mut unread = Vec::new();
    let parsed = loop {
        // serde_ignored writes `?` for an `Option` level; a dotted key has none.
        let mut record = |path: serde_ignored::Path<'_>| {
            let text = path.to_string();
            let key: Vec<&str> = text.split('.').filter(|p| *p != "?").collect();
            unknown.insert(key.join("."));
        };
        let ignoring = serde_ignored::Deserializer::new(value.clone(), &mut record);
        match serde_path_to_error::deserialize::<_, T>(ignoring) {
            Ok(read) => break Some(read),
            Err(e) => {
                let taken_out = take_out(&mut value, e.path());
                unread.push(Problem {
                    key: e.path().to_string(),
                    message: e.into_inner().to_string(),
                });
                if !taken_out {
                    break None;
                }
            }
        }
    };
    let mut problems: Vec<Problem> = unknown
        .into_iter()
        .map(|key| Problem {
            key,
            message: "unknown key".into(),
        })
        .collect();
    problems.extend(unread);
    (parsed, problems)
}

/// Takes out of `value` the key whose value `path` leads into (an array's whole key), so the
/// rest can be read again; `false` when there is no key to take out.
fn take_out(value: &mut serde_json::Value, path: &serde_path_to_error::Path) -> bool {
    use serde_path_to_error::Segment;
    let keys: Vec<&str> = path
        .iter()
        .map_while(|segment| match segment {
            Segment::Map { key } => Some(key.as_str()),
            _ => None,
        })
        .collect();
    let Some((last, parents)) = keys.split_last() else {
        return false;
    };
    let mut node = value;
    for key in parents {
        match node.get_mut(*key) {
            Some(inner) => node = inner,
            None => return false,
        }
    }
    node.as_object_mut()
        .and_then(|map| map.remove(*last))
        .is_some()
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(offset)
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
