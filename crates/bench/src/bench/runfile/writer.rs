//! Appending to a run file, resumably: the records already there are read back, a torn last
//! line (a writer killed mid-line) is cut off, and each new record is one `write` of a whole
//! line, so a kill — even `kill -9` — loses at most the line being written. One writer at a
//! time: a run file is locked while open (`crate::lock`), and a second writer is refused.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::record::{RUN_FORMAT, RunRecord};
use crate::bench::BenchError;
use crate::lock::FileLock;

/// A run file open for appending, locked against other writers.
pub struct RunFile {
    path: PathBuf,
    file: File,
    lock: FileLock,
}

/// What a run file already held.
#[derive(Debug, Default)]
pub struct Resumed {
    /// The (case id, retriever) pairs done, errors included.
    pub done: HashSet<(String, String)>,
    pub records: Vec<RunRecord>,
    /// Bytes of a torn last line that were cut off.
    pub torn_bytes: u64,
}

impl RunFile {
    /// Opens (or creates) `path`, reads its records and cuts a torn last line.
    pub fn open(path: &Path) -> Result<(RunFile, Resumed), BenchError> {
        let lock = FileLock::acquire(path, "bench run is writing it")?;
        RunFile::open_locked(path, lock)
    }

    fn open_locked(path: &Path, lock: FileLock) -> Result<(RunFile, Resumed), BenchError> {
        let write_err = |error| BenchError::Write {
            path: path.into(),
            error,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(write_err)?;
        let mut resumed = Resumed::default();
        let mut good_end = 0u64;
        let mut reader = BufReader::new(&file);
        let mut line = Vec::new();
        let mut number = 0;
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .map_err(|error| BenchError::Read {
                    path: path.into(),
                    error,
                })?;
            if n == 0 {
                break;
            }
            number += 1;
            // A last line without its newline was being written when the writer died.
            if !line.ends_with(b"\n") {
                resumed.torn_bytes = n as u64;
                break;
            }
            let record: RunRecord = serde_json::from_slice(&line)
                .map_err(|e| run_file_error(path, number, format!("not a run record: {e}")))?;
            if record.version != RUN_FORMAT {
                return Err(run_file_error(
                    path,
                    number,
                    format!(
                        "run format {} (this crossfile writes {RUN_FORMAT}); start a new run file",
                        record.version
                    ),
                ));
            }
            if !resumed
                .done
                .insert((record.case_id.clone(), record.retriever.clone()))
            {
                return Err(run_file_error(
                    path,
                    number,
                    format!(
                        "case {} with retriever {} is recorded twice",
                        record.case_id, record.retriever
                    ),
                ));
            }
            resumed.records.push(record);
            good_end += n as u64;
        }
        drop(reader);
        if resumed.torn_bytes > 0 {
            file.set_len(good_end).map_err(write_err)?;
            file.seek(SeekFrom::End(0)).map_err(write_err)?;
        }
        Ok((
            RunFile {
                path: path.into(),
                file,
                lock,
            },
            resumed,
        ))
    }

    /// Like [`RunFile::open`], first rewriting the file without its error records so that their
    /// pairs run again; the new file replaces the old one atomically (a kill leaves one or the
    /// other). Also returns how many were dropped.
    pub fn open_dropping_errors(path: &Path) -> Result<(RunFile, Resumed, usize), BenchError> {
        let (run, resumed) = RunFile::open(path)?;
        let dropped = resumed.records.iter().filter(|r| r.error.is_some()).count();
        if dropped == 0 {
            return Ok((run, resumed, 0));
        }
        let write_err = |error| BenchError::Write {
            path: path.into(),
            error,
        };
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(write_err)?;
        for record in resumed.records.iter().filter(|r| r.error.is_none()) {
            let line =
                serde_json::to_string(record).map_err(|e| write_err(std::io::Error::other(e)))?;
            writeln!(tmp, "{line}").map_err(write_err)?;
        }
        tmp.as_file().sync_all().map_err(write_err)?;
        tmp.persist(path).map_err(|e| write_err(e.error))?;
        let RunFile { lock, .. } = run;
        let (run, resumed) = RunFile::open_locked(path, lock)?;
        Ok((run, resumed, dropped))
    }

    /// Appends one record as one line, in one `write`.
    pub fn append(&mut self, record: &RunRecord) -> Result<(), BenchError> {
        let mut line = serde_json::to_vec(record).map_err(|e| BenchError::Write {
            path: self.path.clone(),
            error: std::io::Error::other(e),
        })?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|()| self.file.flush())
            .map_err(|error| BenchError::Write {
                path: self.path.clone(),
                error,
            })
    }
}

fn run_file_error(path: &Path, line: usize, message: String) -> BenchError {
    BenchError::RunFile {
        path: path.into(),
        line,
        message,
    }
}
