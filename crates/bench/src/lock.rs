//! One writer per file across processes: an exclusive lock on a sidecar `<file>.lock` that says
//! who holds it.
//!
//! The lock is the operating system's (`flock` through `File::try_lock`), so a killed holder
//! releases it at once; the sidecar holds the holder's pid and job, for the message a second
//! writer gets. The holder removes the sidecar when it is done; a taker checks that the file it
//! locked is still the one at the path, so a sidecar removed meanwhile is never locked twice.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Why a lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "{} is in use by another crossfile ({holder}); wait for it to finish or use another file",
        .target.display()
    )]
    Held { target: PathBuf, holder: String },
    #[error("cannot lock {}: {error}", .path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// An exclusive lock on a file, held until dropped.
#[derive(Debug)]
pub struct FileLock {
    path: PathBuf,
    file: File,
}

/// The sidecar lock file of `target`: `<target>.lock`.
pub fn lock_path(target: &Path) -> PathBuf {
    let mut name = target.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

impl FileLock {
    /// Takes the lock of `target` for `job` (shown to whoever is refused), or says who holds it.
    pub fn acquire(target: &Path, job: &str) -> Result<FileLock, LockError> {
        FileLock::acquire_at(lock_path(target), target, job)
    }

    /// Like [`FileLock::acquire`] with the lock file at `path`, for a `target` (named in the
    /// refusal) that must not get a file beside it.
    pub fn acquire_at(path: PathBuf, target: &Path, job: &str) -> Result<FileLock, LockError> {
        let io = |error| LockError::Io {
            path: path.clone(),
            error,
        };
        loop {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    let _ = file.read_to_string(&mut holder);
                    let holder = holder.trim();
                    return Err(LockError::Held {
                        target: target.to_path_buf(),
                        holder: if holder.is_empty() {
                            "a process that is starting".into()
                        } else {
                            holder.into()
                        },
                    });
                }
                Err(TryLockError::Error(error)) => return Err(io(error)),
            }
            // The holder before us may have removed the sidecar between our open and our lock.
            if !is_current(&file, &path) {
                continue;
            }
            file.set_len(0).map_err(io)?;
            file.seek(SeekFrom::Start(0)).map_err(io)?;
            write!(file, "pid {}: {job}", std::process::id()).map_err(io)?;
            file.flush().map_err(io)?;
            return Ok(FileLock { path, file });
        }
    }
}

/// Whether `file` is still the file at `path` (not removed or replaced since it was opened).
fn is_current(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Removed while still locked, so no one can lock the old file and think it current.
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_is_told_who_holds_the_lock_until_it_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("run.jsonl");
        let first = FileLock::acquire(&target, "bench run").expect("first lock");
        assert!(lock_path(&target).exists());
        let err = FileLock::acquire(&target, "bench run").expect_err("held");
        let message = err.to_string();
        assert!(
            message.contains(&format!("pid {}: bench run", std::process::id()))
                && message.contains("run.jsonl"),
            "{message}"
        );
        drop(first);
        assert!(!lock_path(&target).exists(), "the sidecar is removed");
        let again = FileLock::acquire(&target, "bench run").expect("free again");
        drop(again);
    }
}
