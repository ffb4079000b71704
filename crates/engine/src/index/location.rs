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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::{ChunkerKind, ChunkerSettings};
    use crate::workspace::WorkspaceSettings;

    #[test]
    fn an_index_lives_apart_for_every_root_and_every_setting_that_changes_it() {
        let settings = IndexSettings {
            cache_dir: PathBuf::from("/cache"),
            bm25_chunker: ChunkerKind::Sliding,
            chunker: ChunkerSettings::default(),
            workspace: WorkspaceSettings {
                max_file_bytes: 1 << 20,
            },
            lock_wait_ms: 10_000,
        };
        let root = Path::new("/work/my repo");
        let dir = index_dir(root, &settings);
        assert_eq!(dir, index_dir(root, &settings), "stable");
        assert!(dir.starts_with(settings.cache_dir.join("index")));
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
        assert!(
            name.starts_with("my_repo-") && name.len() == "my_repo-".len() + 16,
            "{name}"
        );
        assert_ne!(dir, index_dir(Path::new("/work/other"), &settings));
        let mut chunked = settings.clone();
        chunked.chunker.sliding_lines += 1;
        assert_ne!(
            dir,
            index_dir(root, &chunked),
            "a chunk rule changes what it holds"
        );
        let mut bigger = settings.clone();
        bigger.workspace.max_file_bytes += 1;
        assert_ne!(
            dir,
            index_dir(root, &bigger),
            "so does which files it takes"
        );
        let mut waiting = settings.clone();
        waiting.lock_wait_ms += 1;
        assert_eq!(
            dir,
            index_dir(root, &waiting),
            "how long to wait for a lock does not"
        );
    }
}
