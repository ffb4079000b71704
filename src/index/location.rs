//! Where a workspace's index lives: a directory keyed by root and index settings.

use std::path::{Path, PathBuf};

use super::IndexSettings;
use super::store::FORMAT;

/// `<cache_dir>/index/<root name>-<16 hex digits>`; `root` should be canonical.
pub fn index_dir(root: &Path, settings: &IndexSettings) -> PathBuf {
    let key = blake3::hash(format!("{}\0{}", root.display(), fingerprint(settings)).as_bytes());
    let name: String = root
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("root")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    settings
        .cache_dir
        .join("index")
        .join(format!("{name}-{}", &key.to_hex()[..16]))
}

/// Everything that changes what an index holds, as one line.
pub fn fingerprint(settings: &IndexSettings) -> String {
    let c = &settings.chunker;
    format!(
        "format={FORMAT} bm25_chunker={:?} fixed_lines={} sliding_lines={} sliding_stride={} syntax_max_lines={} max_file_bytes={}",
        settings.bm25_chunker,
        c.fixed_lines,
        c.sliding_lines,
        c.sliding_stride,
        c.syntax_max_lines,
        settings.workspace.max_file_bytes
    )
}
