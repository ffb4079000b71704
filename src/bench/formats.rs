//! The benchmarks' own record shapes, field for field, as serde types: CrossCodeEval's jsonl
//! (also what `bench mine` writes) and RepoEval's (RepoCoder's line, API and function levels).

use serde::{Deserialize, Serialize};

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
