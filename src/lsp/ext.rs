//! The `crossfile.*` extensions of LSP, typed: for each `workspace/executeCommand` command a
//! marker type naming it ([`Command`]), its one argument and its answer, as serde types. What the
//! server answers is built from these types and nothing else, so the shapes live in one place;
//! `docs/lsp-extensions.md` documents them, and a tidy test fails when this file changes without
//! that document.
//!
//! Field names are camelCase on the wire. An argument with an unknown field, a missing one or a
//! value of the wrong type is answered with `InvalidParams` naming the field.

use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tower_lsp::lsp_types::{NumberOrString, Position, Url};

/// Every command, as announced in `executeCommandProvider`.
pub const ALL: [&str; 7] = [
    ReplayCase::NAME,
    NextCase::NAME,
    PreviousCase::NAME,
    Score::NAME,
    Compare::NAME,
    Context::NAME,
    ListCases::NAME,
];

/// A command of `workspace/executeCommand`: its name, its one argument and its answer.
pub trait Command {
    const NAME: &'static str;
    type Params: DeserializeOwned;
    type Result: Serialize;
}

/// `crossfile.replayCase`: open a benchmark case at its cursor, the reference removed.
pub enum ReplayCase {}

impl Command for ReplayCase {
    const NAME: &'static str = "crossfile.replayCase";
    type Params = ReplayCaseParams;
    type Result = ReplayCaseResult;
}

/// `crossfile.replayCase`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplayCaseParams {
    /// The cases file (CrossCodeEval, RepoEval or EvoCodeBench jsonl).
    pub cases: PathBuf,
    /// The folder holding each case's repository as `<repos>/<repository>`.
    pub repos: PathBuf,
    /// `cceval`, `repoeval` or `evocodebench`; told from the first record when absent.
    pub format: Option<String>,
    /// EvoCodeBench: what the model is shown (`baseline`, `local_completion`, the default, or
    /// `local_infilling`).
    pub setting: Option<String>,
    /// EvoCodeBench: the folder of the repositories' environments (default: the cache's, where
    /// `bench setup-env` makes them).
    pub envs: Option<PathBuf>,
    /// EvoCodeBench: tokens generated for a body (default: the benchmark's 500), as `bench run
    /// --max-new-tokens`.
    pub max_new_tokens: Option<u32>,
    /// A case id, or a 0-based index into the file's cases.
    pub case: CaseRef,
    /// Replay in the repository itself instead of a copy (the opt-in): the file's bytes are
    /// saved first and put back before the next case, at shutdown, or at the next start.
    #[serde(default)]
    pub in_place: bool,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum CaseRef {
    Index(usize),
    Id(String),
}

/// `crossfile.score`'s arguments: the case and either the text to score or the buffer holding it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScoreParams {
    pub case_id: String,
    /// The text to score.
    pub suggestion: Option<String>,
    /// The open buffer of the case's file: what it holds between the case's left context and its
    /// right context is scored.
    pub uri: Option<Url>,
    /// The client's token for progress reports (the tests of an EvoCodeBench case).
    pub work_done_token: Option<NumberOrString>,
}

/// `crossfile.compare`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompareParams {
    pub uri: Url,
    pub position: Position,
    pub retrievers: Vec<String>,
    /// The client's token for progress reports (the tests at an EvoCodeBench case's cursor).
    pub work_done_token: Option<NumberOrString>,
}

/// `crossfile.context`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextParams {
    pub uri: Url,
}

/// `crossfile.nextCase`: open the next case of the file being replayed (no argument).
pub enum NextCase {}

impl Command for NextCase {
    const NAME: &'static str = "crossfile.nextCase";
    type Params = Option<serde_json::Value>;
    type Result = ReplayCaseResult;
}

/// `crossfile.previousCase`: open the previous case (no argument).
pub enum PreviousCase {}

impl Command for PreviousCase {
    const NAME: &'static str = "crossfile.previousCase";
    type Params = Option<serde_json::Value>;
    type Result = ReplayCaseResult;
}

/// `crossfile.score`: a replayed case scored with its benchmark's own metrics. Its answer is not
/// typed yet (docs/lsp-extensions.md gives its shape).
pub enum Score {}

impl Command for Score {
    const NAME: &'static str = "crossfile.score";
    type Params = ScoreParams;
    type Result = serde_json::Value;
}

/// `crossfile.compare`: every named retriever at one cursor, side by side. Its answer is not typed
/// yet (docs/lsp-extensions.md gives its shape).
pub enum Compare {}

impl Command for Compare {
    const NAME: &'static str = "crossfile.compare";
    type Params = CompareParams;
    type Result = serde_json::Value;
}

/// `crossfile.context`: what the last completion in a document was made of (`null` before the
/// first). Its answer is not typed yet (docs/lsp-extensions.md gives its shape).
pub enum Context {}

impl Command for Context {
    const NAME: &'static str = "crossfile.context";
    type Params = ContextParams;
    type Result = serde_json::Value;
}

/// `crossfile.listCases`: every usable case of a cases file, in order.
pub enum ListCases {}

impl Command for ListCases {
    const NAME: &'static str = "crossfile.listCases";
    type Params = ListCasesParams;
    type Result = Vec<CaseRow>;
}

/// `crossfile.listCases`'s arguments.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListCasesParams {
    /// The cases file (CrossCodeEval, RepoEval or EvoCodeBench jsonl).
    pub cases: PathBuf,
    /// `cceval`, `repoeval` or `evocodebench`; told from the first record when absent.
    pub format: Option<String>,
}

/// A case opened for replay: the file to show, its text and the cursor.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayCaseResult {
    pub uri: Url,
    /// The file's text as the case shows it (line breaks as `\n`).
    pub text: String,
    /// The case's cursor.
    pub position: Position,
    pub case: ReplayedCaseInfo,
}

/// What the client shows of the case open now.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayedCaseInfo {
    pub id: String,
    /// 0-based, in the cases file's usable cases.
    pub index: usize,
    /// The file's usable cases.
    pub count: usize,
    pub cases_file: PathBuf,
    #[serde(flatten)]
    pub details: CaseDetails,
}

/// What a case is, as its benchmark gives it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseDetails {
    /// `cceval`, `repoeval` or `evocodebench`.
    pub benchmark: String,
    pub language: String,
    pub repository: String,
    pub path: String,
    /// 1-based line of the cursor.
    pub line: u32,
    /// `line` or `function`.
    pub target: String,
    /// 1-based line of the case's record in the cases file.
    pub record_line: usize,
    /// CrossCodeEval and RepoEval: the benchmark's own task id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// EvoCodeBench: `function` or `method`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// EvoCodeBench: what the model is shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
    /// EvoCodeBench: the tests that decide the case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests: Option<Vec<String>>,
}

/// One case of a cases file, for a picker.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseRow {
    pub id: String,
    /// 0-based.
    pub index: usize,
    pub language: String,
    pub repository: String,
    pub path: String,
    /// 1-based.
    pub line: u32,
    /// EvoCodeBench: `function` or `method`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}
