//! Workspace-relative paths, and keeping paths inside the root.

use std::path::{Component, Path, PathBuf};

use super::WorkspaceError;

/// `path` relative to `root`, `/`-separated; `None` if it is not under `root` or not UTF-8.
pub fn relative_path(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// Resolves `file` (relative to `root`, or absolute) to `(absolute path, relative path)`,
/// refusing anything that leaves the root: `..` above it, or a symlink that points out of it.
/// The file need not exist; its existing ancestors are resolved through symlinks.
pub fn resolve_in_root(root: &Path, file: &Path) -> Result<(PathBuf, String), WorkspaceError> {
    let root = root.canonicalize().map_err(|error| WorkspaceError::Read {
        path: root.into(),
        error,
    })?;
    let outside = || WorkspaceError::OutsideRoot {
        path: file.into(),
        root: root.clone(),
    };
    let joined = if file.is_absolute() {
        file.to_path_buf()
    } else {
        root.join(file)
    };
    let mut lexical = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                if !lexical.pop() {
                    return Err(outside());
                }
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    // Resolve symlinks through the longest existing ancestor.
    let mut existing = lexical.as_path();
    let mut tail = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_os_string());
                existing = parent;
            }
            _ => return Err(outside()),
        }
    }
    let mut resolved = existing
        .canonicalize()
        .map_err(|error| WorkspaceError::Read {
            path: existing.into(),
            error,
        })?;
    for name in tail.iter().rev() {
        resolved.push(name);
    }
    if !resolved.starts_with(&root) {
        return Err(outside());
    }
    let rel = relative_path(&root, &resolved).ok_or_else(outside)?;
    Ok((resolved, rel))
}

/// The folder of a workspace-relative, `/`-separated path (`""` at the root).
pub fn relative_folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// The last part of a workspace-relative, `/`-separated path.
pub fn relative_file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_path_splits_into_folder_and_file_name() {
        assert_eq!(relative_folder("src/a/b.py"), "src/a");
        assert_eq!(relative_folder("b.py"), "");
        assert_eq!(relative_file_name("src/a/b.py"), "b.py");
        assert_eq!(relative_file_name("b.py"), "b.py");
    }

    #[test]
    fn paths_stay_inside_the_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/pkg")).expect("mkdir");
        std::fs::write(root.join("src/pkg/a.py"), "x = 1\n").expect("write");
        let ok = |p: &str| resolve_in_root(root, Path::new(p)).map(|(_, rel)| rel).ok();
        assert_eq!(ok("src/pkg/a.py").as_deref(), Some("src/pkg/a.py"));
        assert_eq!(ok("./src/../src/pkg/a.py").as_deref(), Some("src/pkg/a.py"));
        assert_eq!(ok("src/new.py").as_deref(), Some("src/new.py"));
        assert_eq!(ok("../escape.py"), None);
        assert_eq!(ok("src/../../escape.py"), None);
        assert_eq!(ok("/etc/passwd"), None);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc", root.join("out")).expect("symlink");
            assert_eq!(ok("out/passwd"), None);
        }
    }
}
