//! The workspace view of a case: its repository, the file with the reference removed, the
//! cursor, and the text the index may see of the file (the leakage rule, DESIGN.md section 4).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::bench::BenchError;
use crate::bench::cases::{Case, CaseFormat};
use crossfile_engine::Position;
use crossfile_engine::retrieve::Query;
use crossfile_engine::workspace;

/// A case laid out in its repository.
#[derive(Clone, Debug)]
pub struct CaseView {
    /// The repository's root.
    pub root: PathBuf,
    /// The file, relative to `root`.
    pub path: String,
    /// The text before the cursor.
    pub left: String,
    /// The text after the reference.
    pub right: String,
    pub cursor: Position,
}

impl CaseView {
    /// Lays `case` out under `repos/<repository>`. The path must stay inside the repository
    /// (no `..`, no symlink out of it); RepoEval's text comes from the file, whose lines from the
    /// case's line on must start with the reference. A file read from the repository is bounded
    /// by `max_file_bytes` (`workspace.max_file_bytes`), as the index bounds it. A history case's
    /// file is the one its commit adds: it need not be there (its text is all in the record).
    pub fn new(case: &Case, repos: &Path, max_file_bytes: u64) -> Result<CaseView, BenchError> {
        let root = repos.join(&case.repository);
        if !root.is_dir() {
            return Err(BenchError::Case {
                id: case.id.clone(),
                message: format!(
                    "the repository folder {} does not exist (is --repos right?)",
                    root.display()
                ),
            });
        }
        let (abs, path) =
            workspace::resolve_in_root(&root, Path::new(&case.path)).map_err(|e| {
                BenchError::Case {
                    id: case.id.clone(),
                    message: e.to_string(),
                }
            })?;
        // The case's file must be there (and a file): otherwise the case cannot be laid out as
        // its benchmark means, and the file that does hold the reference might be retrieved.
        // A history case's file may be absent, but nothing else may stand at its path.
        match std::fs::metadata(&abs) {
            Ok(m) if m.is_file() => {}
            Ok(_) => {
                return Err(BenchError::Case {
                    id: case.id.clone(),
                    message: format!("{path}: not a regular file in {}", root.display()),
                });
            }
            Err(e) if case.format.file_in_repository() || e.kind() != ErrorKind::NotFound => {
                return Err(BenchError::Case {
                    id: case.id.clone(),
                    message: format!("{path}: the case's file is not in {}: {e}", root.display()),
                });
            }
            Err(_) => {}
        }
        let root = root.canonicalize().map_err(|error| BenchError::Read {
            path: root.clone(),
            error,
        })?;
        match (case.format, &case.right_context) {
            (CaseFormat::Cceval | CaseFormat::History, Some(right)) => {
                let last = case.prompt.rsplit('\n').next().unwrap_or("");
                let left = cceval_left(case, &abs, max_file_bytes)?;
                Ok(CaseView {
                    root,
                    path,
                    left,
                    right: right.clone(),
                    cursor: Position {
                        line: case.line,
                        col: u32::try_from(last.len()).unwrap_or(u32::MAX),
                    },
                })
            }
            _ => repoeval_view(case, root, path, &abs, max_file_bytes),
        }
    }

    /// The file as a reader of the case sees it: the reference removed.
    pub fn text(&self) -> String {
        format!("{}{}", self.left, self.right)
    }

    /// What the index may hold of this file: the left context, plus the right context when the
    /// prompt uses it (fill-in-the-middle). The reference is never in it.
    pub fn indexed_text(&self, with_right: bool) -> String {
        if with_right {
            self.text()
        } else {
            self.left.clone()
        }
    }

    /// The retrieval query at the cursor.
    pub fn query(&self, case: &Case) -> Result<Query, BenchError> {
        let mut query =
            Query::new(&self.path, &self.text(), self.cursor).map_err(|e| BenchError::Case {
                id: case.id.clone(),
                message: e.to_string(),
            })?;
        query.reference = Some(case.reference.clone());
        query.provided = case.provided.clone();
        query.case_recent = case.recent.clone().into();
        query.repo = case.repository.clone();
        Ok(query)
    }
}

/// CrossCodeEval's left context: its `prompt`, after the file's first lines when the prompt
/// starts later (`context_start_lineno` > 0), so that the cursor's line is the file's. A history
/// case's prompt always starts at the file's first line (its loader checks it), so its file is
/// never read.
fn cceval_left(case: &Case, abs: &Path, max_file_bytes: u64) -> Result<String, BenchError> {
    let prompt_lines = u32::try_from(case.prompt.matches('\n').count()).unwrap_or(u32::MAX);
    let skipped = case.line.saturating_sub(prompt_lines);
    if skipped == 0 {
        return Ok(case.prompt.clone());
    }
    let source = workspace::read_source(abs, max_file_bytes).map_err(|e| BenchError::Case {
        id: case.id.clone(),
        message: format!("the prompt starts at line {}: {e}", skipped + 1),
    })?;
    let head: String = source
        .text
        .split_inclusive('\n')
        .take(usize::try_from(skipped).unwrap_or(usize::MAX))
        .collect();
    Ok(head + &case.prompt)
}

fn repoeval_view(
    case: &Case,
    root: PathBuf,
    path: String,
    abs: &Path,
    max_file_bytes: u64,
) -> Result<CaseView, BenchError> {
    let source = workspace::read_source(abs, max_file_bytes).map_err(|e| BenchError::Case {
        id: case.id.clone(),
        message: e.to_string(),
    })?;
    let text = source.text;
    let offsets = workspace::line_start_offsets(&text);
    let start = usize::try_from(case.line)
        .ok()
        .and_then(|l| offsets.get(l).copied())
        .ok_or_else(|| BenchError::Case {
            id: case.id.clone(),
            message: format!(
                "{}: line {} is past the end of the file ({} lines)",
                path,
                case.line + 1,
                offsets.len()
            ),
        })?;
    if !text[start..].starts_with(&case.reference) {
        return Err(BenchError::Case {
            id: case.id.clone(),
            message: format!(
                "{}: the file's text at line {} does not start with metadata.ground_truth \
                 (another commit of the repository?)",
                path,
                case.line + 1
            ),
        });
    }
    Ok(CaseView {
        root,
        path,
        left: text[..start].to_string(),
        right: text[start + case.reference.len()..].to_string(),
        cursor: Position {
            line: case.line,
            col: 0,
        },
    })
}
