//! Benchmark cases: each benchmark's records loaded and validated, one module per benchmark —
//! CrossCodeEval and RepoEval lines and functions and lines mined from history into [`Case`]s
//! ([`cceval`], [`repoeval`], [`history`]), EvoCodeBench function bodies ([`evocodebench`]), CoderEval's inputs and recorded results
//! ([`codereval`]) — and predictions made elsewhere ([`predictions`]). A bad record becomes a
//! [`CaseProblem`] naming the file, the line and the field ([`problem`]), and the other records
//! still load.
//!
//! Case ids (DESIGN.md section 6): CrossCodeEval's and history's `metadata.task_id`; RepoEval's
//! task ids repeat, so its id is `<fpath_tuple joined with />:<lineno>`.

pub mod cceval;
pub mod codereval;
pub mod evocodebench;
pub mod history;
mod jsonl;
mod predictions;
mod problem;
pub mod repoeval;

pub use jsonl::Loaded;
pub use predictions::{LoadedPredictions, Prediction, load_predictions};
pub use problem::CaseProblem;

use std::collections::HashSet;
use std::path::Path;

use crate::bench::BenchError;
use cceval::CcevalRecord;
use crossfile_engine::lang::Language;
use crossfile_engine::retrieve::Hit;
use history::{Category, HistoryRecord};
use problem::{RecordError, parse_record};
use repoeval::RepoevalRecord;

crossfile_engine::choice! {
    /// A benchmark's file format.
    pub enum CaseFormat {
        /// CrossCodeEval jsonl (also what `bench mine` writes).
        Cceval,
        /// RepoEval (RepoCoder) jsonl: line, API or function level.
        Repoeval,
        /// Lines of files added by commits, in Long Code Arena's shape (what `bench mine-history`
        /// writes): CrossCodeEval's three texts, a commit, its parent and the line's category. The
        /// file is absent from the workspace (the parent's tree). Scored as a CrossCodeEval line.
        History,
    }
}

impl CaseFormat {
    /// Whether a case's file must be in its repository. A history case's file is the one its
    /// commit adds, so the parent's tree it is replayed in does not have it.
    pub fn file_in_repository(self) -> bool {
        match self {
            CaseFormat::Cceval | CaseFormat::Repoeval => true,
            CaseFormat::History => false,
        }
    }

    /// The format of a cases file, told by its first record: history records carry
    /// `metadata.commit` and `metadata.category` (and `groundtruth`, so they are told first),
    /// CrossCodeEval records `groundtruth`, RepoEval's `metadata.fpath_tuple`. `None` when
    /// neither (or no record).
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
            let history = ["/metadata/commit", "/metadata/category"]
                .iter()
                .all(|p| record.pointer(p).is_some());
            return Ok(if history {
                Some(CaseFormat::History)
            } else if record.get("groundtruth").is_some() {
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

crossfile_engine::choice! {
    /// A benchmark file's format, as `bench run`, `bench score` and a replay in the editor name it:
    /// one of the completion formats ([`CaseFormat`], scored by similarity) or an execution-based
    /// benchmark's. How its cases are scored ([`BenchFormat::scoring`]) decides what each command
    /// does with them; what cannot be replayed says why ([`BenchFormat::replay`]).
    pub enum BenchFormat {
        /// [`CaseFormat::Cceval`].
        Cceval,
        /// [`CaseFormat::Repoeval`].
        Repoeval,
        /// [`CaseFormat::History`].
        History,
        /// EvoCodeBench: function bodies generated, then scored by their repository's tests.
        Evocodebench,
        /// CoderEval: recorded verdicts scored (its harness is not public), never run.
        Codereval,
    }
}

/// How a format's cases are scored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scoring {
    /// Completions against their reference, in this completion format.
    Similarity(CaseFormat),
    /// Function bodies by their repository's tests (EvoCodeBench).
    Execution,
    /// Recorded verdicts (CoderEval: its harness is not public); nothing is run.
    Verdicts,
}

/// What replaying a format's cases means (`bench run`, a replay in the editor): completing at each
/// case's cursor, or generating each case's body and running its tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayFormat {
    Cases(CaseFormat),
    Execution,
}

/// A format whose cases cannot be replayed.
#[derive(Clone, Copy, Debug, thiserror::Error)]
#[error("{0} cases are recorded verdicts: `bench score` scores them; there is nothing to replay")]
pub struct NotReplayable(pub BenchFormat);

impl BenchFormat {
    /// How this format's cases are scored.
    pub fn scoring(self) -> Scoring {
        match self {
            BenchFormat::Cceval => Scoring::Similarity(CaseFormat::Cceval),
            BenchFormat::Repoeval => Scoring::Similarity(CaseFormat::Repoeval),
            BenchFormat::History => Scoring::Similarity(CaseFormat::History),
            BenchFormat::Evocodebench => Scoring::Execution,
            BenchFormat::Codereval => Scoring::Verdicts,
        }
    }

    /// What replaying this format's cases means, or why they cannot be replayed.
    pub fn replay(self) -> Result<ReplayFormat, NotReplayable> {
        match self.scoring() {
            Scoring::Similarity(format) => Ok(ReplayFormat::Cases(format)),
            Scoring::Execution => Ok(ReplayFormat::Execution),
            Scoring::Verdicts => Err(NotReplayable(self)),
        }
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
/// (CrossCodeEval, history) or from the repository ([`crate::bench::layout::case_view`], RepoEval).
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
    /// The left context the benchmark scores with (CrossCodeEval's and history's `prompt`: its
    /// Python statement cut parses it); RepoEval's `prompt`.
    pub prompt: String,
    /// CrossCodeEval's and history's `right_context` (the text after the reference); `None` for
    /// RepoEval.
    pub right_context: Option<String>,
    /// Cross-file context the case ships with (CrossCodeEval `crossfile_context.list`).
    pub provided: Option<Vec<Hit>>,
    /// A history case's line category (Long Code Arena's); `None` for the other formats.
    pub category: Option<Category>,
    /// The identifiers of a history case's line that decided its category (often none);
    /// empty for the other formats.
    pub identifiers: Vec<String>,
    /// What the case names as lately open or edited, newest first, for `recent-commit` alone
    /// (a history case: the other files its commit changes, as committed); empty for the
    /// other formats.
    pub recent: Vec<Hit>,
    /// 1-based line of the record in its file.
    pub record_line: usize,
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
    for line in jsonl::read_lines(path)? {
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
                    CaseFormat::Cceval => {
                        parse_record::<CcevalRecord>(&text).and_then(cceval::to_case)
                    }
                    CaseFormat::Repoeval => {
                        parse_record::<RepoevalRecord>(&text).and_then(repoeval::to_case)
                    }
                    CaseFormat::History => {
                        parse_record::<HistoryRecord>(&text).and_then(history::to_case)
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

/// The language of a case's file, told by its extension.
fn language_of(path: &str) -> Result<Language, String> {
    Language::from_path(Path::new(path))
        .ok_or_else(|| format!("{path:?}: not a Python, Java, TypeScript or C# file"))
}

#[cfg(test)]
mod tests;
