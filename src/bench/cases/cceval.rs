//! CrossCodeEval's records, field for field (also what `bench mine` writes), and the [`Case`]
//! each one is: the rest of a line after the record's prompt, with the record's right context
//! and the cross-file context it ships with.

use serde::{Deserialize, Serialize};

use super::problem::{RecordError, bad, checked_component, checked_relative};
use super::{Case, CaseFormat, Target, language_of};
use crate::retrieve::Hit;

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
