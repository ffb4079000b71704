//! Benchmark cases: loading CrossCodeEval and RepoEval files into [`Case`]s, validating every
//! record. A bad record becomes a [`CaseProblem`] naming the file, the line and the field, and
//! the other records still load.
//!
//! Case ids (DESIGN.md section 6): CrossCodeEval's `metadata.task_id`; RepoEval's task ids
//! repeat, so its id is `<fpath_tuple joined with />:<lineno>`.

use std::collections::HashSet;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use super::BenchError;
use super::formats::{CcevalRecord, RepoevalRecord};
use crate::lang::Language;
use crate::retrieve::Hit;

/// A benchmark's file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CaseFormat {
    /// CrossCodeEval jsonl (also what `bench mine` writes).
    Cceval,
    /// RepoEval (RepoCoder) jsonl: line, API or function level.
    Repoeval,
}

impl CaseFormat {
    pub const ALL: [CaseFormat; 2] = [CaseFormat::Cceval, CaseFormat::Repoeval];

    pub fn name(self) -> &'static str {
        match self {
            CaseFormat::Cceval => "cceval",
            CaseFormat::Repoeval => "repoeval",
        }
    }

    pub fn from_name(name: &str) -> Option<CaseFormat> {
        CaseFormat::ALL.into_iter().find(|f| f.name() == name)
    }

    /// [`CaseFormat::from_name`], or an error naming the formats there are.
    pub fn parse(name: &str) -> Result<CaseFormat, String> {
        CaseFormat::from_name(name)
            .ok_or_else(|| format!("unknown format {name:?}: cceval or repoeval"))
    }

    /// The format of a cases file, told by its first record: CrossCodeEval records carry
    /// `groundtruth`, RepoEval's `metadata.fpath_tuple`. `None` when neither (or no record).
    pub fn detect(path: &Path) -> Result<Option<CaseFormat>, BenchError> {
        use std::io::BufRead;
        let file = std::fs::File::open(path).map_err(|error| BenchError::Read {
            path: path.into(),
            error,
        })?;
        for line in std::io::BufReader::new(file).lines() {
            let line = line.map_err(|error| BenchError::Read {
                path: path.into(),
                error,
            })?;
            if line.trim().is_empty() {
                continue;
            }
            let record: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            return Ok(if record.get("groundtruth").is_some() {
                Some(CaseFormat::Cceval)
            } else if record.pointer("/metadata/fpath_tuple").is_some() {
                Some(CaseFormat::Repoeval)
            } else {
                None
            });
        }
        Ok(None)
    }
}

impl fmt::Display for CaseFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What is completed: the rest of a line (CrossCodeEval; RepoEval line and API level) or a
/// function body (RepoEval function level).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Line,
    Function,
}

/// One benchmark case, as its file gives it. The text around the cursor comes with the record
/// (CrossCodeEval) or from the repository ([`super::view`], RepoEval).
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub id: String,
    /// The benchmark's own task id (RepoEval's repeat; its scripts group by their first part).
    pub task_id: String,
    pub format: CaseFormat,
    pub target: Target,
    pub language: Language,
    /// The repository's folder under the repositories directory.
    pub repository: String,
    /// The file, relative to the repository, `/`-separated, checked to stay inside it.
    pub path: String,
    /// 0-based line of the cursor.
    pub line: u32,
    /// The reference completion.
    pub reference: String,
    /// The left context the benchmark scores with (CrossCodeEval's `prompt`: its Python
    /// statement cut parses it); RepoEval's `prompt`.
    pub prompt: String,
    /// CrossCodeEval's `right_context` (the text after the reference); `None` for RepoEval.
    pub right_context: Option<String>,
    /// Cross-file context the case ships with (CrossCodeEval `crossfile_context.list`).
    pub provided: Option<Vec<Hit>>,
    /// 1-based line of the record in its file.
    pub record_line: usize,
}

/// A record that could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseProblem {
    pub file: PathBuf,
    /// 1-based line in the file.
    pub line: usize,
    /// The dotted field (`metadata.file`), or `.` for the record as a whole.
    pub field: String,
    pub message: String,
}

impl fmt::Display for CaseProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file.display(),
            self.line,
            self.field,
            self.message
        )
    }
}

/// The cases of a file and the records that were skipped.
#[derive(Debug, Default)]
pub struct LoadedCases {
    pub cases: Vec<Case>,
    pub problems: Vec<CaseProblem>,
}

/// A record may be this many times `workspace.max_file_bytes`: it holds the file's text
/// (JSON-escaped) and the context it ships with.
pub const RECORD_BYTES_PER_FILE_BYTE: u64 = 4;

/// Loads every record of `path`. Only an unreadable file is an error; a bad record is a
/// problem, and so is a second record with an id already seen (the first one is kept).
///
/// `max_file_bytes` (`workspace.max_file_bytes`) bounds a case as it bounds a workspace file: a
/// record longer than [`RECORD_BYTES_PER_FILE_BYTE`] times it is skipped unparsed, and so is a
/// case whose file text (prompt, reference and right context) is longer than it.
pub fn load_cases(
    path: &Path,
    format: CaseFormat,
    max_file_bytes: u64,
) -> Result<LoadedCases, BenchError> {
    let mut loaded = LoadedCases::default();
    let mut seen = HashSet::new();
    let max_record_bytes = max_file_bytes.saturating_mul(RECORD_BYTES_PER_FILE_BYTE);
    for line in super::jsonl::read_lines(path)? {
        let number = line.number;
        let problem = |field: &str, message: String| CaseProblem {
            file: path.into(),
            line: number,
            field: field.into(),
            message,
        };
        let case = line
            .text
            .map_err(|m| (".".to_string(), m))
            .and_then(|text| {
                if text.len() as u64 > max_record_bytes {
                    return Err((
                        ".".to_string(),
                        format!(
                            "the record is {} bytes, over {RECORD_BYTES_PER_FILE_BYTE} × \
                             workspace.max_file_bytes ({max_file_bytes}): raise \
                             workspace.max_file_bytes to load it",
                            text.len()
                        ),
                    ));
                }
                match format {
                    CaseFormat::Cceval => parse_record::<CcevalRecord>(&text).and_then(cceval_case),
                    CaseFormat::Repoeval => {
                        parse_record::<RepoevalRecord>(&text).and_then(repoeval_case)
                    }
                }
            })
            .and_then(|case| within_file_bound(case, max_file_bytes));
        match case {
            Ok(mut case) if seen.insert(case.id.clone()) => {
                case.record_line = number;
                loaded.cases.push(case);
            }
            Ok(case) => loaded.problems.push(problem(
                ".",
                format!("case id {:?} repeats an earlier record", case.id),
            )),
            Err((field, message)) => loaded.problems.push(problem(&field, message)),
        }
    }
    Ok(loaded)
}

/// A case whose file would be larger than `max_file_bytes` is refused, as such a workspace file
/// is skipped by the index.
fn within_file_bound(case: Case, max_file_bytes: u64) -> Result<Case, RecordError> {
    let bytes = case.prompt.len()
        + case.reference.len()
        + case.right_context.as_ref().map_or(0, String::len);
    if bytes as u64 > max_file_bytes {
        return Err((
            "prompt".to_string(),
            format!(
                "the case's file text is {bytes} bytes (prompt, reference and right context), \
                 over workspace.max_file_bytes ({max_file_bytes})"
            ),
        ));
    }
    Ok(case)
}

/// `(dotted field, message)` of a bad record.
pub(super) type RecordError = (String, String);

pub(super) fn parse_record<T: serde::de::DeserializeOwned>(line: &str) -> Result<T, RecordError> {
    let mut de = serde_json::Deserializer::from_str(line);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        // A truncated line or a syntax error is about the record, not a field.
        let message = inner.to_string();
        // serde names a missing field in its message, at the path of the object that lacks it.
        let missing = message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next());
        let field = if inner.is_syntax() || inner.is_eof() {
            ".".to_string()
        } else {
            match (missing, field.as_str()) {
                (Some(name), "" | ".") => name.to_string(),
                (Some(name), parent) => format!("{parent}.{name}"),
                (None, "") => ".".to_string(),
                (None, _) => field,
            }
        };
        (field, message)
    })
}

fn bad(field: &str, message: impl Into<String>) -> RecordError {
    (field.to_string(), message.into())
}

fn cceval_case(r: CcevalRecord) -> Result<Case, RecordError> {
    let m = &r.metadata;
    if m.task_id.is_empty() {
        return Err(bad("metadata.task_id", "empty"));
    }
    let repository = checked_component(&m.repository).map_err(|e| bad("metadata.repository", e))?;
    let path = checked_relative(&m.file).map_err(|e| bad("metadata.file", e))?;
    let language = language_of(&path).map_err(|e| bad("metadata.file", e))?;
    if r.groundtruth.contains('\n') {
        return Err(bad(
            "groundtruth",
            "contains a newline: a CrossCodeEval reference is the rest of one line",
        ));
    }
    if !(r.right_context.is_empty() || r.right_context.starts_with('\n')) {
        return Err(bad(
            "right_context",
            "must start with the newline that ends the cursor's line",
        ));
    }
    let prompt_lines = u32::try_from(r.prompt.matches('\n').count()).unwrap_or(u32::MAX);
    let line = m.context_start_lineno.saturating_add(prompt_lines);
    if line != m.groundtruth_start_lineno {
        return Err(bad(
            "metadata.groundtruth_start_lineno",
            format!(
                "is {} but the prompt ends on line {line} (context_start_lineno {} + its {prompt_lines} newlines)",
                m.groundtruth_start_lineno, m.context_start_lineno
            ),
        ));
    }
    if m.right_context_start_lineno != line + 1 {
        return Err(bad(
            "metadata.right_context_start_lineno",
            format!(
                "is {} but must be groundtruth_start_lineno + 1 = {}",
                m.right_context_start_lineno,
                line + 1
            ),
        ));
    }
    let provided = r.crossfile_context.as_ref().map(|c| {
        c.list
            .iter()
            .map(|chunk| Hit {
                path: chunk.filename.clone(),
                lines: 0..0,
                score: chunk.score,
                text: chunk.retrieved_chunk.clone(),
                chunker: None,
            })
            .collect()
    });
    Ok(Case {
        id: m.task_id.clone(),
        task_id: m.task_id.clone(),
        format: CaseFormat::Cceval,
        target: Target::Line,
        language,
        repository,
        path,
        line,
        reference: r.groundtruth,
        prompt: r.prompt,
        right_context: Some(r.right_context),
        provided,
        record_line: 0,
    })
}

fn repoeval_case(r: RepoevalRecord) -> Result<Case, RecordError> {
    let m = &r.metadata;
    let Some((repo, rest)) = m.fpath_tuple.split_first() else {
        return Err(bad("metadata.fpath_tuple", "empty"));
    };
    let repository = checked_component(repo).map_err(|e| bad("metadata.fpath_tuple[0]", e))?;
    if rest.is_empty() {
        return Err(bad(
            "metadata.fpath_tuple",
            "names a repository but no file inside it",
        ));
    }
    for (i, part) in rest.iter().enumerate() {
        checked_component(part).map_err(|e| bad(&format!("metadata.fpath_tuple[{}]", i + 1), e))?;
    }
    let path = rest.join("/");
    let language = language_of(&path).map_err(|e| bad("metadata.fpath_tuple", e))?;
    if m.ground_truth.trim().is_empty() {
        return Err(bad("metadata.ground_truth", "empty"));
    }
    Ok(Case {
        id: format!("{}:{}", m.fpath_tuple.join("/"), m.lineno),
        task_id: m.task_id.clone(),
        format: CaseFormat::Repoeval,
        target: if m.function_name.is_some() {
            Target::Function
        } else {
            Target::Line
        },
        language,
        repository,
        path,
        line: m.lineno,
        reference: m.ground_truth.clone(),
        prompt: r.prompt,
        right_context: None,
        provided: None,
        record_line: 0,
    })
}

/// One path component: not empty, not `.` or `..`, no separator.
pub(super) fn checked_component(part: &str) -> Result<String, String> {
    if part.is_empty() || part == "." || part == ".." || part.contains(['/', '\\', '\0']) {
        return Err(format!("{part:?} is not a single path component"));
    }
    Ok(part.to_string())
}

/// A relative `/`-separated path that cannot leave the directory it is joined to.
pub(super) fn checked_relative(path: &str) -> Result<String, String> {
    let p = Path::new(path);
    let normal = !path.is_empty()
        && !path.contains(['\\', '\0'])
        && p.components().all(|c| matches!(c, Component::Normal(_)));
    if !normal {
        return Err(format!(
            "{path:?} must be a relative path inside the repository (no `..`, no root)"
        ));
    }
    Ok(path.to_string())
}

fn language_of(path: &str) -> Result<Language, String> {
    Language::from_path(Path::new(path))
        .ok_or_else(|| format!("{path:?}: not a Python, Java, TypeScript or C# file"))
}

#[cfg(test)]
mod tests;
