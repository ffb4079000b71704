//! Settings: every key typed and defaulted in one place, read from `crossfile.toml` and flags.
//!
//! Raw [`Options`] (every field optional, as written in a file or on the command line) become
//! [`Settings`] through one resolver. Layers, later winning: defaults, the user's config file
//! (`$XDG_CONFIG_HOME/crossfile/crossfile.toml`, or `$CROSSFILE_CONFIG`), the workspace's
//! `crossfile.toml`, command-line flags. Each layer is checked on its own, so every problem names
//! the file it is in and its dotted key; all problems of a layer are reported together. What a
//! workspace's file may set depends on whether the user trusts it ([`trust`]).

pub mod arena;
mod check;
mod options;
mod settings;
#[cfg(test)]
mod tests;
pub mod trust;

use std::fmt;
use std::path::{Path, PathBuf};

pub use arena::{ArmOptions, PairRule};
pub use options::{
    ArenaOptions, BackendOptions, DenseOptions, IndexOptions, LspOptions, ModelOptions, Options,
    Overlay, PostprocessOptions, PromptOptions, RetrieveOptions, TrustOptions, WorkspaceOptions,
};
pub use settings::Settings;
pub use trust::Ignored;

/// The workspace config file's name.
pub const WORKSPACE_FILE: &str = "crossfile.toml";

/// Where a layer of options came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    File(PathBuf),
    CommandLine,
    /// An editor's settings (LSP `initializationOptions` or `didChangeConfiguration`).
    Client,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::File(path) => write!(f, "{}", path.display()),
            Source::CommandLine => f.write_str("command line"),
            Source::Client => f.write_str("client settings"),
        }
    }
}

/// One bad key: its dotted path and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub key: String,
    pub message: String,
}

/// A config layer that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{origin}: cannot read: {error}")]
    Read {
        origin: Source,
        error: std::io::Error,
    },
    #[error("{origin}:{line}: not valid TOML: {message}")]
    Syntax {
        origin: Source,
        line: usize,
        message: String,
    },
    #[error("{origin}: {}", render_problems(.problems))]
    Invalid {
        origin: Source,
        problems: Vec<Problem>,
    },
}

fn render_problems(problems: &[Problem]) -> String {
    let lines: Vec<String> = problems
        .iter()
        .map(|p| format!("{}: {}", p.key, p.message))
        .collect();
    lines.join("; ")
}

impl Settings {
    /// Settings for a workspace: defaults, the user's file, the workspace's file.
    pub fn load(root: &Path) -> Result<Settings, ConfigError> {
        Settings::load_with(root, Options::default())
    }

    /// Like [`Settings::load`], with command-line options on top. Keys of the workspace's file
    /// that an untrusted workspace may not set are logged as warnings and left out.
    pub fn load_with(root: &Path, flags: Options) -> Result<Settings, ConfigError> {
        let (settings, ignored) = Settings::load_reporting(root, flags)?;
        for key in ignored {
            tracing::warn!("{key}");
        }
        Ok(settings)
    }

    /// Like [`Settings::load_with`], returning the workspace file's ignored keys instead of
    /// logging them (a language server shows them to the user).
    pub fn load_reporting(
        root: &Path,
        flags: Options,
    ) -> Result<(Settings, Vec<Ignored>), ConfigError> {
        Settings::layers(user_config_path().as_deref(), Some(root), flags)
    }

    /// Settings outside any workspace (a language server with no folder open): the user's file
    /// and `flags`.
    pub fn load_without_workspace(flags: Options) -> Result<Settings, ConfigError> {
        Settings::layers(user_config_path().as_deref(), None, flags).map(|(settings, _)| settings)
    }

    /// Settings from an explicit user config file (if any), the workspace's file and flags, with
    /// the workspace file's ignored keys.
    pub fn load_layers(
        user_config: Option<&Path>,
        root: &Path,
        flags: Options,
    ) -> Result<(Settings, Vec<Ignored>), ConfigError> {
        Settings::layers(user_config, Some(root), flags)
    }

    fn layers(
        user_config: Option<&Path>,
        root: Option<&Path>,
        flags: Options,
    ) -> Result<(Settings, Vec<Ignored>), ConfigError> {
        let (options, ignored) = layered(user_config, root, flags)?;
        Ok((Settings::resolve(&options), ignored))
    }
}

/// Every layer merged, later winning: an explicit user config file (if any), the workspace's
/// file under `root` (if any; the keys an untrusted workspace may not set left out and returned)
/// and `flags`. What [`Settings`] resolves from, and the language server its own keys.
pub fn layered(
    user_config: Option<&Path>,
    root: Option<&Path>,
    flags: Options,
) -> Result<(Options, Vec<Ignored>), ConfigError> {
    let user = match user_config {
        Some(path) => Options::read_file(path)?.unwrap_or_default(),
        None => Options::default(),
    };
    flags.check(&Source::CommandLine)?;
    let mut ignored = Vec::new();
    let mut workspace = Options::default();
    // A root that is no folder has no config file (the command then says it is no folder).
    if let Some(root) = root.filter(|r| r.is_dir()) {
        let file = root.join(WORKSPACE_FILE);
        if let Some(mut options) = Options::read_file(&file)? {
            let trusted = trust::is_trusted(root, &user, &flags);
            ignored = trust::restrict(&mut options, trusted)
                .into_iter()
                .map(|key| Ignored {
                    file: file.clone(),
                    key,
                })
                .collect();
            workspace = options;
        }
    }
    Ok((user.overlay(workspace).overlay(flags), ignored))
}

/// The user's config file: `$CROSSFILE_CONFIG`, else `<config dir>/crossfile/crossfile.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CROSSFILE_CONFIG") {
        return Some(PathBuf::from(path));
    }
    directories::ProjectDirs::from("", "", "crossfile")
        .map(|dirs| dirs.config_dir().join(WORKSPACE_FILE))
}

/// The cache directory: `$CROSSFILE_CACHE_DIR`, else `<cache dir>/crossfile`.
pub fn default_cache_dir() -> PathBuf {
    if let Some(path) = std::env::var_os("CROSSFILE_CACHE_DIR") {
        return PathBuf::from(path);
    }
    directories::ProjectDirs::from("", "", "crossfile")
        .map(|dirs| dirs.cache_dir().to_path_buf())
        .unwrap_or_else(|| std::env::temp_dir().join("crossfile-cache"))
}

/// Whether the workspace at `root` is trusted, by the user's file or by `flags` (the command
/// line's or the client's options): whether its `crossfile.toml` may choose endpoints, model
/// files and the cache directory.
pub fn workspace_trusted(root: &Path, flags: &Options) -> Result<bool, ConfigError> {
    let user = match user_config_path() {
        Some(path) => Options::read_file(&path)?.unwrap_or_default(),
        None => Options::default(),
    };
    Ok(trust::is_trusted(root, &user, flags))
}
