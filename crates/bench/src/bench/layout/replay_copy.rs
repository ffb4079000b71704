//! Replay copies: a copy of a case's repository in which the case's file shows the reference
//! removed. This is what an editor opens to replay a case, so the user's repository is never
//! written.
//!
//! Each repository has one copy, `<dir>/<repository>/`, made once (everything but `.git`; a
//! symlink is copied as a symlink). Placing a case first puts back the file the previous case
//! changed (named in `<dir>/<repository>.replayed`, so this holds across sessions), then writes
//! the case's file as the case shows it. A case's file may be absent from its repository (a
//! history case's, added by its commit): it is written with the folders it needs, and putting it
//! back removes it and those folders, so the copy is the repository's tree again.
//!
//! A user may opt in to replaying in the repository itself ([`ReplayCopies::place_in_place`]). The
//! file's bytes are saved first to `<dir>/in-place/` with a journal naming it (for a file that was
//! absent, `<dir>/in-place/absent` holds how many folders were made for it instead), and
//! [`ReplayCopies::restore_in_place`] puts them back: before the next case and when the session ends;
//! [`ReplayCopies::restore_abandoned`] at the next start if the process was killed in between. Only
//! the holder of an [`InPlaceLock`] (the journal's, and the repository's across cache folders)
//! replays in place or restores, so a second process is refused, never interleaved.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::case_view::CaseView;
use crate::bench::BenchError;
use crate::bench::cases::Case;
use crate::bench::cases::evocodebench::ExecCase;
use crate::lock::FileLock;
use crossfile_engine::workspace;

/// This process's right to replay in place in one repository: the journal of the replay copies and
/// the repository itself are locked against other processes until it is dropped.
#[derive(Debug)]
pub struct InPlaceLock {
    repository: PathBuf,
    _journal: FileLock,
    _repository: FileLock,
}

impl InPlaceLock {
    /// The repository it was taken for.
    pub fn repository(&self) -> &Path {
        &self.repository
    }
}

/// What placing a case needs of it besides its view: its id (for errors) and its repository's
/// folder name (for the copy's).
pub trait Placeable {
    fn id(&self) -> &str;
    fn repository(&self) -> &str;
}

impl Placeable for Case {
    fn id(&self) -> &str {
        &self.id
    }

    fn repository(&self) -> &str {
        &self.repository
    }
}

impl Placeable for ExecCase {
    fn id(&self) -> &str {
        &self.namespace
    }

    fn repository(&self) -> &str {
        &self.repository
    }
}

/// The folder of replay copies.
#[derive(Clone, Debug)]
pub struct ReplayCopies {
    dir: PathBuf,
}

/// A case placed in its repository's copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The copy's root (canonical).
    pub root: PathBuf,
    /// The case's file in the copy (absolute).
    pub file: PathBuf,
    /// The file of the previous case that was put back in this root (relative to it), so an
    /// index of the root can read it again.
    pub restored: Option<String>,
}

impl ReplayCopies {
    pub fn new(dir: impl Into<PathBuf>) -> ReplayCopies {
        ReplayCopies { dir: dir.into() }
    }

    /// Places `case`, laid out as `view` (from `repos`), in the copy of its repository.
    pub fn place(&self, case: &impl Placeable, view: &CaseView) -> Result<Placed, BenchError> {
        let copy = self.dir.join(case.repository());
        let marker = self.dir.join(format!("{}.replayed", case.repository()));
        let mut restored = None;
        if copy.is_dir() {
            restored = self.put_back(&view.root, &copy, &marker)?;
        } else {
            let partial = self.dir.join(format!("{}.partial", case.repository()));
            if partial.exists() {
                fs::remove_dir_all(&partial).map_err(|error| write_error(&partial, error))?;
            }
            copy_tree(&view.root, &partial)?;
            fs::rename(&partial, &copy).map_err(|error| write_error(&copy, error))?;
        }
        let (file, _) = workspace::resolve_in_root(&copy, Path::new(&view.path)).map_err(|e| {
            BenchError::Case {
                id: case.id().to_string(),
                message: e.to_string(),
            }
        })?;
        // The marker first: if writing the file fails halfway, the next case still puts it back.
        fs::write(&marker, &view.path).map_err(|error| write_error(&marker, error))?;
        make_parent(&file)?;
        fs::write(&file, view.text()).map_err(|error| write_error(&file, error))?;
        let root = copy.canonicalize().map_err(|error| BenchError::Read {
            path: copy.clone(),
            error,
        })?;
        Ok(Placed {
            root,
            file,
            restored,
        })
    }

    /// Takes the in-place lock of `repository` (canonical): refused, naming the holder, while
    /// another process replays in place in these copies or in that repository.
    pub fn lock_in_place(&self, repository: &Path) -> Result<InPlaceLock, BenchError> {
        let saved = self.dir.join("in-place");
        fs::create_dir_all(&saved).map_err(|error| write_error(&saved, error))?;
        let job = format!("in-place replay in {}", repository.display());
        let journal = FileLock::acquire(&saved.join("journal"), &job)?;
        let key = blake3::hash(repository.as_os_str().as_encoded_bytes()).to_hex();
        let shared = std::env::temp_dir().join(format!("crossfile-in-place-{}.lock", &key[..16]));
        let held = FileLock::acquire_at(shared, repository, &job)?;
        Ok(InPlaceLock {
            repository: repository.to_path_buf(),
            _journal: journal,
            _repository: held,
        })
    }

    /// Writes `case`'s file, laid out as `view`, in its repository itself, after saving the
    /// file's bytes and a journal naming them. Any earlier in-place case is restored first.
    pub fn place_in_place(
        &self,
        case: &impl Placeable,
        view: &CaseView,
        lock: &InPlaceLock,
    ) -> Result<Placed, BenchError> {
        if lock.repository != view.root {
            return Err(BenchError::Case {
                id: case.id().to_string(),
                message: format!(
                    "the in-place lock is for {}, not {}",
                    lock.repository.display(),
                    view.root.display()
                ),
            });
        }
        let restored = self.restore_in_place(lock)?;
        let saved = self.dir.join("in-place");
        fs::create_dir_all(&saved).map_err(|error| write_error(&saved, error))?;
        let (file, _) =
            workspace::resolve_in_root(&view.root, Path::new(&view.path)).map_err(|e| {
                BenchError::Case {
                    id: case.id().to_string(),
                    message: e.to_string(),
                }
            })?;
        // Before the journal names the file: its bytes, or, for a file that is not there, how
        // many folders will be made for it (a stale note of an earlier crash is replaced).
        let (backup, absent) = (saved.join("original"), saved.join("absent"));
        if file.exists() {
            remove_if_present(&absent)?;
            fs::copy(&file, &backup).map_err(|error| write_error(&backup, error))?;
            sync(&backup)?;
        } else {
            let made = file.ancestors().skip(1).take_while(|d| !d.exists()).count();
            fs::write(&absent, made.to_string()).map_err(|error| write_error(&absent, error))?;
            sync(&absent)?;
        }
        let journal = saved.join("journal");
        let entry = file.to_string_lossy().into_owned();
        fs::write(&journal, &entry).map_err(|error| write_error(&journal, error))?;
        sync(&journal)?;
        make_parent(&file)?;
        fs::write(&file, view.text()).map_err(|error| write_error(&file, error))?;
        let restored = restored
            .and_then(|r| r.strip_prefix(&view.root).ok().map(Path::to_path_buf))
            .map(|r| r.to_string_lossy().into_owned());
        Ok(Placed {
            root: view.root.clone(),
            file,
            restored,
        })
    }

    /// Places `case`, seen as `view`, for replay: in its repository's copy ([`ReplayCopies::place`])
    /// or, `in_place`, in the repository itself ([`ReplayCopies::place_in_place`]). `held` is the
    /// in-place lock of the case before: the file that case changed goes back first, and the lock
    /// is kept for an in-place case in the same repository, else released (and, in place, taken
    /// for this one). Returns where the case is and the lock now held.
    pub fn replay(
        &self,
        case: &impl Placeable,
        view: &CaseView,
        in_place: bool,
        held: Option<InPlaceLock>,
    ) -> Result<(Placed, Option<InPlaceLock>), BenchError> {
        let mut kept = None;
        if let Some(lock) = held {
            self.restore_in_place(&lock)?;
            if in_place && lock.repository == view.root {
                kept = Some(lock);
            }
        }
        if !in_place {
            return Ok((self.place(case, view)?, None));
        }
        let lock = match kept {
            Some(lock) => lock,
            None => self.lock_in_place(&view.root)?,
        };
        let placed = self.place_in_place(case, view, &lock)?;
        Ok((placed, Some(lock)))
    }

    /// Puts back the file this process's in-place case changed, if any; returns it.
    pub fn restore_in_place(&self, _lock: &InPlaceLock) -> Result<Option<PathBuf>, BenchError> {
        self.restore_journal()
    }

    /// Puts back a file that a killed process left changed, if no live process holds the
    /// journal (one that does is replaying: its file is left alone); returns it.
    pub fn restore_abandoned(&self) -> Result<Option<PathBuf>, BenchError> {
        let saved = self.dir.join("in-place");
        if !saved.join("journal").exists() {
            return Ok(None);
        }
        let _journal =
            match FileLock::acquire(&saved.join("journal"), "restoring an in-place replay") {
                Ok(lock) => lock,
                Err(crate::lock::LockError::Held { .. }) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
        self.restore_journal()
    }

    fn restore_journal(&self) -> Result<Option<PathBuf>, BenchError> {
        let saved = self.dir.join("in-place");
        let journal = saved.join("journal");
        let file = match fs::read_to_string(&journal) {
            Ok(file) => PathBuf::from(file),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(BenchError::Read {
                    path: journal,
                    error,
                });
            }
        };
        let absent = saved.join("absent");
        match fs::read_to_string(&absent) {
            Ok(made) => remove_made(&file, made.trim().parse().unwrap_or(0))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let backup = saved.join("original");
                fs::copy(&backup, &file).map_err(|error| write_error(&file, error))?;
                sync(&file)?;
            }
            Err(error) => {
                return Err(BenchError::Read {
                    path: absent,
                    error,
                });
            }
        }
        fs::remove_file(&journal).map_err(|error| write_error(&journal, error))?;
        remove_if_present(&absent)?;
        Ok(Some(file))
    }

    /// Copies back from the repository the file the previous case changed in `copy` (or, when
    /// the repository has no such file, removes it and the folders made for it); returns it,
    /// relative to the copy.
    fn put_back(
        &self,
        repository: &Path,
        copy: &Path,
        marker: &Path,
    ) -> Result<Option<String>, BenchError> {
        let previous = match fs::read_to_string(marker) {
            Ok(previous) => previous,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(BenchError::Read {
                    path: marker.into(),
                    error,
                });
            }
        };
        let inside = |root: &Path| {
            workspace::resolve_in_root(root, Path::new(previous.trim())).map_err(|e| {
                BenchError::Case {
                    id: previous.clone(),
                    message: format!("{}: {e}", marker.display()),
                }
            })
        };
        let (original, _) = inside(repository)?;
        let (changed, rel) = inside(copy)?;
        if original.exists() {
            fs::copy(&original, &changed).map_err(|error| write_error(&changed, error))?;
        } else {
            // The folders the copy has and the repository has not were made for the file.
            let made = Path::new(&rel)
                .ancestors()
                .skip(1)
                .filter(|d| !d.as_os_str().is_empty())
                .take_while(|d| !repository.join(d).exists())
                .count();
            remove_made(&changed, made)?;
        }
        fs::remove_file(marker).map_err(|error| write_error(marker, error))?;
        Ok(Some(rel))
    }
}

/// Makes the folders `file` needs.
fn make_parent(file: &Path) -> Result<(), BenchError> {
    match file.parent() {
        Some(parent) => fs::create_dir_all(parent).map_err(|error| write_error(parent, error)),
        None => Ok(()),
    }
}

/// Removes `file` (if it is there) and then the `made` folders above it, innermost first,
/// stopping at one that is not empty (something else was put in it since).
fn remove_made(file: &Path, made: usize) -> Result<(), BenchError> {
    remove_if_present(file)?;
    for dir in file.ancestors().skip(1).take(made) {
        match fs::remove_dir(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(_) => break,
        }
    }
    Ok(())
}

fn remove_if_present(path: &Path) -> Result<(), BenchError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(write_error(path, e)),
        _ => Ok(()),
    }
}

/// Flushes `path` to the disk.
fn sync(path: &Path) -> Result<(), BenchError> {
    fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|error| write_error(path, error))
}

/// Copies the tree at `from` to `to` (which must not exist), leaving out `.git`.
fn copy_tree(from: &Path, to: &Path) -> Result<(), BenchError> {
    fs::create_dir_all(to).map_err(|error| write_error(to, error))?;
    let entries = fs::read_dir(from).map_err(|error| BenchError::Read {
        path: from.into(),
        error,
    })?;
    for entry in entries {
        let entry = entry.map_err(|error| BenchError::Read {
            path: from.into(),
            error,
        })?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let (source, target) = (entry.path(), to.join(&name));
        let kind = entry.file_type().map_err(|error| BenchError::Read {
            path: source.clone(),
            error,
        })?;
        if kind.is_symlink() {
            let link = fs::read_link(&source).map_err(|error| BenchError::Read {
                path: source.clone(),
                error,
            })?;
            std::os::unix::fs::symlink(&link, &target)
                .map_err(|error| write_error(&target, error))?;
        } else if kind.is_dir() {
            copy_tree(&source, &target)?;
        } else if kind.is_file() {
            fs::copy(&source, &target).map_err(|error| write_error(&target, error))?;
        } else {
            // A FIFO, socket or device: reading one could block forever, and it is no source.
            tracing::warn!(path = %source.display(), "not a regular file: left out of the replay copy");
        }
    }
    Ok(())
}

fn write_error(path: &Path, error: io::Error) -> BenchError {
    BenchError::Write {
        path: path.into(),
        error,
    }
}

#[cfg(test)]
#[path = "replay_copy_tests.rs"]
mod tests;
