//! CrossCodeEval's records, field for field (also what `bench mine` writes), and the [`Case`]
//! each one is: the rest of a line after the record's prompt, with the record's right context
//! and the cross-file context it ships with. [`LineRecord`] holds the checks every record of this
//! shape shares (history's too).

use serde::{Deserialize, Serialize};

use super::problem::{RecordError, bad, checked_component, checked_relative};
use super::{Case, CaseFormat, Target, language_of};
use crossfile_engine::retrieve::Hit;

/// One CrossCodeEval record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CcevalRecord {
    /// The file's text before the cursor.
    pub prompt: String,
    /// The rest of the cursor's line, without its newline.
    pub groundtruth: String,
    /// The file's text after the groundtruth, from the newline that ends the cursor's line.
    pub right_context: String,
    pub metadata: CcevalMetadata,
    /// The cross-file context the record ships with (absent in mined cases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crossfile_context: Option<CcevalCrossfile>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CcevalMetadata {
    pub task_id: String,
    /// `owner-name-sha7`: the folder under the repositories directory.
    pub repository: String,
    /// Path inside the repository, `/`-separated.
    pub file: String,
    #[serde(default)]
    pub context_start_lineno: u32,
    /// 0-based line of the cursor.
    pub groundtruth_start_lineno: u32,
    pub right_context_start_lineno: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CcevalCrossfile {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub list: Vec<CcevalChunk>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CcevalChunk {
    pub retrieved_chunk: String,
    pub filename: String,
    pub score: f64,
}

/// The case of a record, every field checked.
pub(super) fn to_case(r: CcevalRecord) -> Result<Case, RecordError> {
    let m = r.metadata;
    let provided = r.crossfile_context.as_ref().map(|c| {
        c.list
            .iter()
            .map(|chunk| Hit {
                path: chunk.filename.clone(),
                lines: 0..0,
                score: chunk.score,
                text: chunk.retrieved_chunk.clone(),
                chunker: None,
                source: None,
            })
            .collect()
    });
    let record = LineRecord {
        format: CaseFormat::Cceval,
        task_id: m.task_id,
        repository: m.repository,
        path_field: "metadata.file",
        path: m.file,
        prompt: r.prompt,
        groundtruth: r.groundtruth,
        right_context: r.right_context,
    };
    let case = record.into_case(|prompt_lines| {
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
        Ok(line)
    })?;
    Ok(Case { provided, ..case })
}

/// What a record in CrossCodeEval's shape (CrossCodeEval's own, and history's) says of its
/// line case, before the checks they share.
pub(super) struct LineRecord {
    pub format: CaseFormat,
    pub task_id: String,
    pub repository: String,
    /// The dotted field that names the file (`metadata.file`, `metadata.path`), for errors.
    pub path_field: &'static str,
    pub path: String,
    pub prompt: String,
    pub groundtruth: String,
    pub right_context: String,
}

impl LineRecord {
    /// The case, the fields every such record has checked: a task id, a repository that is one
    /// folder, a path inside it of a supported language, a groundtruth that is the rest of one
    /// line and a right context that starts at its newline. `line` gets the prompt's newline
    /// count and returns the cursor's 0-based line, or the error of the record's own line
    /// fields.
    pub(super) fn into_case(
        self,
        line: impl FnOnce(u32) -> Result<u32, RecordError>,
    ) -> Result<Case, RecordError> {
        if self.task_id.is_empty() {
            return Err(bad("metadata.task_id", "empty"));
        }
        let repository =
            checked_component(&self.repository).map_err(|e| bad("metadata.repository", e))?;
        let path = checked_relative(&self.path).map_err(|e| bad(self.path_field, e))?;
        let language = language_of(&path).map_err(|e| bad(self.path_field, e))?;
        if self.groundtruth.contains('\n') {
            return Err(bad(
                "groundtruth",
                "contains a newline: a CrossCodeEval reference is the rest of one line",
            ));
        }
        if !(self.right_context.is_empty() || self.right_context.starts_with('\n')) {
            return Err(bad(
                "right_context",
                "must start with the newline that ends the cursor's line",
            ));
        }
        let prompt_lines = u32::try_from(self.prompt.matches('\n').count()).unwrap_or(u32::MAX);
        let line = line(prompt_lines)?;
        Ok(Case {
            id: self.task_id.clone(),
            task_id: self.task_id,
            format: self.format,
            target: Target::Line,
            language,
            repository,
            path,
            line,
            reference: self.groundtruth,
            prompt: self.prompt,
            right_context: Some(self.right_context),
            provided: None,
            category: None,
            identifiers: Vec::new(),
            recent: Vec::new(),
            record_line: 0,
        })
    }
}
