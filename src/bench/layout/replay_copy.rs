//! Replay copies: a copy of a case's repository in which the case's file shows the reference
//! removed. This is what an editor opens to replay a case, so the user's repository is never
//! written.
//!
//! Each repository has one copy, `<dir>/<repository>/`, made once (everything but `.git`; a
//! symlink is copied as a symlink). Placing a case first puts back the file the previous case
//! changed (named in `<dir>/<repository>.replayed`, so this holds across sessions), then writes
//! the case's file as the case shows it.
//!
//! A user may opt in to replaying in the repository itself ([`ReplayCopies::place_in_place`]). The
//! file's bytes are saved first to `<dir>/in-place/` with a journal naming it, and
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
use crate::workspace;

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
}

impl ReplayCopies {
    pub fn new(dir: impl Into<PathBuf>) -> ReplayCopies {
        ReplayCopies { dir: dir.into() }
    }

    /// Places `case`, laid out as `view` (from `repos`), in the copy of its repository.
    pub fn place(&self, case: &impl Placeable, view: &CaseView) -> Result<Placed, BenchError> {
        let copy = self.dir.join(case.repository());
        let marker = self.dir.join(format!("{}.replayed", case.repository()));
        if copy.is_dir() {
            self.put_back(&view.root, &copy, &marker)?;
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
        fs::write(&file, view.text()).map_err(|error| write_error(&file, error))?;
        let root = copy.canonicalize().map_err(|error| BenchError::Read {
            path: copy.clone(),
            error,
        })?;
        Ok(Placed { root, file })
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
        self.restore_in_place(lock)?;
        let saved = self.dir.join("in-place");
        fs::create_dir_all(&saved).map_err(|error| write_error(&saved, error))?;
        let (file, _) =
            workspace::resolve_in_root(&view.root, Path::new(&view.path)).map_err(|e| {
                BenchError::Case {
                    id: case.id().to_string(),
                    message: e.to_string(),
                }
            })?;
        let backup = saved.join("original");
        fs::copy(&file, &backup).map_err(|error| write_error(&backup, error))?;
        sync(&backup)?;
        let journal = saved.join("journal");
        let entry = file.to_string_lossy().into_owned();
        fs::write(&journal, &entry).map_err(|error| write_error(&journal, error))?;
        sync(&journal)?;
        fs::write(&file, view.text()).map_err(|error| write_error(&file, error))?;
        Ok(Placed {
            root: view.root.clone(),
            file,
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
        let backup = saved.join("original");
        fs::copy(&backup, &file).map_err(|error| write_error(&file, error))?;
        sync(&file)?;
        fs::remove_file(&journal).map_err(|error| write_error(&journal, error))?;
        Ok(Some(file))
    }

    /// Copies back from the repository the file the previous case changed in `copy`.
    fn put_back(&self, repository: &Path, copy: &Path, marker: &Path) -> Result<(), BenchError> {
        let previous = match fs::read_to_string(marker) {
            Ok(previous) => previous,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
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
        let (changed, _) = inside(copy)?;
        fs::copy(&original, &changed).map_err(|error| write_error(&changed, error))?;
        fs::remove_file(marker).map_err(|error| write_error(marker, error))
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
mod tests {
    use super::*;
    use crate::bench::cases::{CaseFormat, Target};
    use crate::lang::Language;

    fn case(path: &str, line: u32, prompt: &str, reference: &str, right: &str) -> Case {
        Case {
            id: format!("{path}:{line}"),
            task_id: "t".into(),
            format: CaseFormat::Cceval,
            target: Target::Line,
            language: Language::Python,
            repository: "repo".into(),
            path: path.into(),
            line,
            reference: reference.into(),
            prompt: prompt.into(),
            right_context: Some(right.into()),
            provided: None,
            record_line: 1,
        }
    }

    #[test]
    fn cases_are_placed_in_a_copy_and_the_previous_file_is_put_back() {
        let temp = tempfile::tempdir().expect("temp dir");
        let repos = temp.path().join("repos");
        let repo = repos.join("repo");
        fs::create_dir_all(repo.join("pkg")).expect("mkdir");
        fs::create_dir_all(repo.join(".git")).expect("mkdir");
        fs::write(repo.join(".git/HEAD"), "ref").expect("write");
        let a = "import os\nx = os.getcwd()\n";
        let b = "def f():\n    return 1\n";
        fs::write(repo.join("a.py"), a).expect("write");
        fs::write(repo.join("pkg/b.py"), b).expect("write");
        let copies = ReplayCopies::new(temp.path().join("replay"));

        let first = case("a.py", 1, "import os\nx = ", "os.getcwd()", "\n");
        let view = CaseView::new(&first, &repos, 1 << 20).expect("view");
        let placed = copies.place(&first, &view).expect("placed");
        assert_eq!(
            fs::read_to_string(&placed.file).ok().as_deref(),
            Some("import os\nx = \n")
        );
        assert_eq!(
            fs::read_to_string(placed.root.join("pkg/b.py"))
                .ok()
                .as_deref(),
            Some(b)
        );
        assert!(!placed.root.join(".git").exists());
        // The repository itself is untouched.
        assert_eq!(
            fs::read_to_string(repo.join("a.py")).ok().as_deref(),
            Some(a)
        );

        // The next case, in another file, puts a.py back; new copies (a new session) too.
        let second = case("pkg/b.py", 1, "def f():\n    return ", "1", "\n");
        let view = CaseView::new(&second, &repos, 1 << 20).expect("view");
        let copies = ReplayCopies::new(temp.path().join("replay"));
        let placed = copies.place(&second, &view).expect("placed");
        assert_eq!(
            fs::read_to_string(placed.root.join("a.py")).ok().as_deref(),
            Some(a)
        );
        assert_eq!(
            fs::read_to_string(&placed.file).ok().as_deref(),
            Some("def f():\n    return \n")
        );
        assert_eq!(
            fs::read_to_string(repo.join("pkg/b.py")).ok().as_deref(),
            Some(b)
        );
    }

    #[test]
    fn in_place_cases_are_restored_byte_for_byte() {
        let temp = tempfile::tempdir().expect("temp dir");
        let repos = temp.path().join("repos");
        let repo = repos.join("repo");
        fs::create_dir_all(&repo).expect("mkdir");
        let a = "import os\r\nx = os.getcwd()\r\n";
        fs::write(repo.join("a.py"), a).expect("write");
        fs::write(repo.join("b.py"), "y = 2\nz = y\n").expect("write");
        let copies = ReplayCopies::new(temp.path().join("replay"));
        assert_eq!(copies.restore_abandoned().ok(), Some(None));

        let first = case("a.py", 1, "import os\nx = ", "os.getcwd()", "\n");
        let view = CaseView::new(&first, &repos, 1 << 20).expect("view");
        let lock = copies.lock_in_place(&view.root).expect("in-place lock");
        // Another session on the same copies is refused while this one holds it.
        let other = ReplayCopies::new(temp.path().join("replay"));
        let refused = other.lock_in_place(&view.root).expect_err("held");
        assert!(
            refused.to_string().contains("in use by another crossfile"),
            "{refused}"
        );
        let placed = copies.place_in_place(&first, &view, &lock).expect("placed");
        assert_eq!(placed.file, repo.canonicalize().expect("root").join("a.py"));
        assert_eq!(
            fs::read_to_string(repo.join("a.py")).ok().as_deref(),
            Some("import os\nx = \n")
        );
        // The next case restores the first file before it writes its own.
        let second = case("b.py", 1, "y = 2\nz = ", "y", "\n");
        let view = CaseView::new(&second, &repos, 1 << 20).expect("view");
        copies
            .place_in_place(&second, &view, &lock)
            .expect("placed");
        assert_eq!(
            fs::read(repo.join("a.py")).ok(),
            Some(a.as_bytes().to_vec())
        );
        // A live holder's file is not "abandoned": another session leaves it alone.
        assert_eq!(other.restore_abandoned().ok(), Some(None));
        assert_eq!(
            fs::read_to_string(repo.join("b.py")).ok().as_deref(),
            Some("y = 2\nz = \n")
        );
        // Its holder gone (as after a crash), a new session restores what it left.
        drop(lock);
        let restored = other.restore_abandoned().expect("restored");
        assert_eq!(
            restored,
            Some(repo.canonicalize().expect("root").join("b.py"))
        );
        assert_eq!(
            fs::read_to_string(repo.join("b.py")).ok().as_deref(),
            Some("y = 2\nz = y\n")
        );
        assert_eq!(other.restore_abandoned().ok(), Some(None));
    }

    #[test]
    fn replaying_moves_from_in_place_to_a_copy_restoring_and_releasing() {
        let temp = tempfile::tempdir().expect("temp dir");
        let repos = temp.path().join("repos");
        let repo = repos.join("repo");
        fs::create_dir_all(&repo).expect("mkdir");
        let a = "import os\nx = os.getcwd()\n";
        fs::write(repo.join("a.py"), a).expect("write");
        let copies = ReplayCopies::new(temp.path().join("replay"));
        let first = case("a.py", 1, "import os\nx = ", "os.getcwd()", "\n");
        let view = CaseView::new(&first, &repos, 1 << 20).expect("view");

        let (placed, held) = copies.replay(&first, &view, true, None).expect("in place");
        assert_eq!(placed.root, view.root);
        assert!(held.is_some(), "in place holds the lock");
        // The same repository in place again keeps the one lock.
        let (_, held) = copies.replay(&first, &view, true, held).expect("again");
        assert_eq!(
            fs::read_to_string(repo.join("a.py")).ok().as_deref(),
            Some("import os\nx = \n")
        );

        // A copy next: the repository's file goes back and the lock is released.
        let (placed, held) = copies.replay(&first, &view, false, held).expect("copy");
        assert!(held.is_none());
        assert_ne!(placed.root, view.root);
        assert_eq!(
            fs::read_to_string(repo.join("a.py")).ok().as_deref(),
            Some(a)
        );
        let other = ReplayCopies::new(temp.path().join("replay"));
        assert!(other.lock_in_place(&view.root).is_ok(), "released");
    }
}
