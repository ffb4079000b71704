//! The settings only the language server reads, beside the engine's: `[lsp]` (the wait, the
//! longest suggestion, the time budget, kept KV caches) and `[arena]` ([`arena`]), resolved from
//! the same merged layers as the engine's [`Settings`] (`crossfile_engine::config::layered`).

pub mod arena;

use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

use crossfile_engine::config::{self, ConfigError, Ignored, Options, Settings};

pub use arena::{ArenaSettings, Arm};

/// A workspace folder's settings: the engine's, and the server's own beside them. It derefs to
/// the engine's, which is what most of the server reads.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerSettings {
    pub engine: Arc<Settings>,
    pub lsp: LspSettings,
    pub arena: ArenaSettings,
}

impl Deref for ServerSettings {
    type Target = Settings;

    fn deref(&self) -> &Settings {
        &self.engine
    }
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings::resolve(&Options::default())
    }
}

impl ServerSettings {
    /// Applies defaults to checked options (every layer merged).
    pub fn resolve(options: &Options) -> ServerSettings {
        let l = options.lsp.clone().unwrap_or_default();
        ServerSettings {
            engine: Arc::new(Settings::resolve(options)),
            lsp: LspSettings {
                debounce_ms: l.debounce_ms.unwrap_or(50),
                max_suggestion_chars: l.max_suggestion_chars.unwrap_or(500),
                max_generate_ms: l.max_generate_ms.unwrap_or(DEFAULT_MAX_GENERATE_MS),
                reuse_kv: l.reuse_kv.unwrap_or(true),
                right_context_lines: l.right_context_lines.unwrap_or(0),
            },
            arena: arena::resolve(options),
        }
    }

    /// A folder's settings: the user's file, the folder's file and the editor's options, with
    /// the folder file's keys an untrusted workspace may not set (to show the user).
    pub fn load_reporting(
        root: &Path,
        flags: Options,
    ) -> Result<(ServerSettings, Vec<Ignored>), ConfigError> {
        let (options, ignored) =
            config::layered(config::user_config_path().as_deref(), Some(root), flags)?;
        Ok((ServerSettings::resolve(&options), ignored))
    }

    /// Settings outside any workspace folder: the user's file and the editor's options.
    pub fn load_without_workspace(flags: Options) -> Result<ServerSettings, ConfigError> {
        let (options, _) = config::layered(config::user_config_path().as_deref(), None, flags)?;
        Ok(ServerSettings::resolve(&options))
    }
}

/// The default time budget of a live suggestion, from its request reaching the model (the
/// prompt's reading counted): on two cores the default model reads a keystroke's change in
/// 0.1–0.3 s and decodes about 19 tokens a second, so a whole line (and more) takes longer than
/// a person's pause after a keystroke; at the budget the suggestion so far is shown, and typing
/// on asks for the rest (llama.vim's `t_max_prompt_ms` and `t_max_predict_ms` play the same part).
/// Never applied at a replayed case.
pub const DEFAULT_MAX_GENERATE_MS: u64 = 400;

/// `[lsp]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LspSettings {
    /// Wait before a completion starts (default 50 ms).
    pub debounce_ms: u64,
    /// Longest suggestion, in characters (default 500).
    pub max_suggestion_chars: usize,
    /// Time a live suggestion may take from its request reaching the model, in milliseconds
    /// (default [`DEFAULT_MAX_GENERATE_MS`]; 0: no limit).
    pub max_generate_ms: u64,
    /// Kept KV caches and steady prompts in live completion (default true).
    pub reuse_kv: bool,
    /// Lines below the cursor's line in a live fill-in-the-middle prompt (default 0: the rest of
    /// the cursor's line only).
    pub right_context_lines: u32,
}
