//! RepoEval's (RepoCoder's) records, field for field — line, API and function levels — and the
//! [`Case`] each one is: its task ids repeat, so a case's id is its path and line.

use serde::{Deserialize, Serialize};

use super::problem::{RecordError, bad, checked_component};
use super::{Case, CaseFormat, Target, language_of};

/// One RepoEval (RepoCoder) record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepoevalRecord {
    /// The left context given to the model in the benchmark (about 2k tokens).
    pub prompt: String,
    pub metadata: RepoevalMetadata,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepoevalMetadata {
    /// Not unique (`<repo>/idx`); the case id is `fpath_tuple` joined with `/`, `:`, `lineno`.
    pub task_id: String,
    /// The completion: whole lines from `lineno`, ending with `\n` at function level.
    pub ground_truth: String,
    /// The path split into parts; the first is the repository folder.
    pub fpath_tuple: Vec<String>,
    #[serde(default)]
    pub context_start_lineno: u32,
    /// 0-based line where the ground truth starts.
    pub lineno: u32,
    /// Present at function level only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_name: Option<String>,
}

/// The case of a record, every field checked.
pub(super) fn to_case(r: RepoevalRecord) -> Result<Case, RecordError> {
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
        category: None,
        identifiers: Vec::new(),
        recent: Vec::new(),
        record_line: 0,
    })
}
