//! A repository's private copy: every file and folder copied (a symlink as a symlink, never
//! followed), so that generated code edits and runs in the copy and the original is never written.

use std::fs;
use std::io;
use std::path::Path;

/// Copies the tree at `from` to `to` (which must not exist): folders, files with their
/// permissions, symlinks as symlinks.
pub fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&source)?, &target)?;
        } else if kind.is_dir() {
            copy_tree(&source, &target)?;
        } else if kind.is_file() {
            fs::copy(&source, &target)?;
        }
        // Sockets, fifos and devices are not part of a repository's tree: left out.
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_is_copied_with_its_symlinks_unfollowed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let from = dir.path().join("repo");
        fs::create_dir_all(from.join("pkg/sub")).expect("mkdir");
        fs::write(from.join("pkg/sub/a.py"), "x = 1\n").expect("write");
        std::os::unix::fs::symlink("sub/a.py", from.join("pkg/link.py")).expect("symlink");
        std::os::unix::fs::symlink("/etc/hostname", from.join("outside")).expect("symlink");
        let to = dir.path().join("copy");
        copy_tree(&from, &to).expect("copy");
        assert_eq!(
            fs::read_to_string(to.join("pkg/sub/a.py")).expect("read"),
            "x = 1\n"
        );
        assert_eq!(
            fs::read_link(to.join("pkg/link.py")).expect("link"),
            Path::new("sub/a.py")
        );
        assert_eq!(
            fs::read_link(to.join("outside")).expect("link"),
            Path::new("/etc/hostname")
        );
        fs::write(to.join("pkg/sub/a.py"), "x = 2\n").expect("write the copy");
        assert_eq!(
            fs::read_to_string(from.join("pkg/sub/a.py")).expect("read"),
            "x = 1\n",
            "the original is untouched"
        );
        assert!(
            copy_tree(&from, &to).is_err(),
            "an existing target is refused"
        );
    }
}
