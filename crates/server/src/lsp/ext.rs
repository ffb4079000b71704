//! The `crossfile.*` extensions of LSP, typed: for each `workspace/executeCommand` command a
//! marker type naming it ([`Command`]), its one argument and its answer, as serde types. What the
//! server answers is built from these types and nothing else, so the shapes live in one place;
//! `docs/lsp-extensions.md` documents them, and a tidy test fails when this file changes without
//! that document.
//!
//! Field names are camelCase on the wire. An argument with an unknown field, a missing one or a
//! value of the wrong type is answered with `InvalidParams` naming the field.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tower_lsp::lsp_types::{NumberOrString, Position, Url};
use ts_rs::TS;

use crossfile_engine::prompt::PromptTokens;

mod arena;
mod status;
#[cfg(test)]
mod typescript;
pub use arena::{
    ArenaReveal, ArenaRevealResult, ArenaStatus, ArenaVote, ArenaVoteParams, ArenaVoteResult,
};
pub use status::{BackendStatus, FolderStatus, ModelStatus, Status, StatusResult};

/// Every command, as announced in `executeCommandProvider`.
pub const ALL: [&str; 11] = [
    ReplayCase::NAME,
    NextCase::NAME,
    PreviousCase::NAME,
    Score::NAME,
    Compare::NAME,
    Context::NAME,
    ListCases::NAME,
    Retrievers::NAME,
    Status::NAME,
    ArenaVote::NAME,
    ArenaReveal::NAME,
];

/// A command of `workspace/executeCommand`: its name, its one argument and its answer. The answer
/// reads back as itself, so a Rust client (the integration tests) reads it typed.
pub trait Command {
    const NAME: &'static str;
    type Params: DeserializeOwned;
    type Result: Serialize + DeserializeOwned;
}

/// `crossfile.replayCase`: open a benchmark case at its cursor, the reference removed.
pub enum ReplayCase {}

impl Command for ReplayCase {
    const NAME: &'static str = "crossfile.replayCase";
    type Params = ReplayCaseParams;
    type Result = ReplayCaseResult;
}

/// `crossfile.replayCase`'s arguments.
#[derive(Debug, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(optional_fields = nullable)]
pub struct ReplayCaseParams {
    /// The cases file (CrossCodeEval, RepoEval, history or EvoCodeBench jsonl).
    pub cases: PathBuf,
    /// The folder holding each case's repository as `<repos>/<repository>` (for history cases,
    /// the parent commit's tree, which lacks the case's file).
    pub repos: PathBuf,
    /// `cceval`, `repoeval`, `history` or `evocodebench`; told from the first record when absent.
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
    #[ts(as = "Option<bool>", optional)]
    pub in_place: bool,
}

#[derive(Debug, Deserialize, TS)]
#[serde(untagged)]
pub enum CaseRef {
    Index(usize),
    Id(String),
}

/// `crossfile.score`'s arguments: the case and either the text to score or the buffer holding it.
#[derive(Debug, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(optional_fields = nullable)]
pub struct ScoreParams {
    pub case_id: String,
    /// The text to score.
    pub suggestion: Option<String>,
    /// The open buffer of the case's file: what it holds between the case's left context and its
    /// right context is scored.
    pub uri: Option<Url>,
    /// The client's token for progress reports (the tests of an EvoCodeBench case).
    #[ts(optional, type = "number | string")]
    pub work_done_token: Option<NumberOrString>,
}

/// `crossfile.compare`'s arguments.
#[derive(Debug, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(optional_fields = nullable)]
pub struct CompareParams {
    pub uri: Url,
    #[ts(type = "Position")]
    pub position: Position,
    pub retrievers: Vec<String>,
    /// The client's token for progress reports (the tests at an EvoCodeBench case's cursor).
    #[ts(optional, type = "number | string")]
    pub work_done_token: Option<NumberOrString>,
}

/// `crossfile.context`'s arguments.
#[derive(Debug, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(optional_fields = nullable)]
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

/// `crossfile.score`: a replayed case scored with its benchmark's own metrics.
pub enum Score {}

impl Command for Score {
    const NAME: &'static str = "crossfile.score";
    type Params = ScoreParams;
    type Result = ScoreResult;
}

/// `crossfile.compare`: every named retriever at one cursor, side by side.
pub enum Compare {}

impl Command for Compare {
    const NAME: &'static str = "crossfile.compare";
    type Params = CompareParams;
    type Result = CompareResult;
}

/// `crossfile.context`: what the last completion in a document was made of (`null` before the
/// first).
pub enum Context {}

impl Command for Context {
    const NAME: &'static str = "crossfile.context";
    type Params = ContextParams;
    type Result = Option<ContextResult>;
}

/// `crossfile.retrievers`: every retriever spec this server accepts, with what each needs (no
/// argument).
pub enum Retrievers {}

impl Command for Retrievers {
    const NAME: &'static str = "crossfile.retrievers";
    type Params = Option<serde_json::Value>;
    type Result = Vec<RetrieverInfo>;
}

/// `crossfile.listCases`: every usable case of a cases file, in order.
pub enum ListCases {}

impl Command for ListCases {
    const NAME: &'static str = "crossfile.listCases";
    type Params = ListCasesParams;
    type Result = Vec<CaseRow>;
}

/// `crossfile.listCases`'s arguments.
#[derive(Debug, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(optional_fields = nullable)]
pub struct ListCasesParams {
    /// The cases file (CrossCodeEval, RepoEval, history or EvoCodeBench jsonl).
    pub cases: PathBuf,
    /// `cceval`, `repoeval`, `history` or `evocodebench`; told from the first record when absent.
    pub format: Option<String>,
}

/// A case opened for replay: the file to show, its text and the cursor.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReplayCaseResult {
    pub uri: Url,
    /// The file's text as the case shows it (line breaks as `\n`).
    pub text: String,
    /// The case's cursor.
    #[ts(type = "Position")]
    pub position: Position,
    pub case: ReplayedCaseInfo,
}

/// What the client shows of the case open now.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
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
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CaseDetails {
    /// `cceval`, `repoeval`, `history` or `evocodebench`.
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
    /// CrossCodeEval, RepoEval and history: the benchmark's own task id.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub task_id: Option<String>,
    /// History: the line's category (`committed`, `inproject`, `infile`, `common`,
    /// `non_informative` or `random`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub category: Option<String>,
    /// History: the identifiers of the line that decided its category (possibly none).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub identifiers: Option<Vec<String>>,
    /// EvoCodeBench: `function` or `method`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub kind: Option<String>,
    /// EvoCodeBench: what the model is shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub setting: Option<String>,
    /// EvoCodeBench: the tests that decide the case.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tests: Option<Vec<String>>,
}

/// One case of a cases file, for a picker.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
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
    #[ts(optional)]
    pub kind: Option<String>,
    /// History: the line's category.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub category: Option<String>,
}

/// A case's metrics, by the benchmark's own names (`em`, `es`, `id_em`, `pass@1`…), or why they
/// could not be computed.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(untagged)]
pub enum Metrics {
    Scores(BTreeMap<String, f64>),
    Failed { error: String },
}

/// What was scored: the model's raw output behind the server's own suggestion, or the text given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Scored {
    Raw,
    Given,
}

/// `crossfile.score`'s answer.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScoreResult {
    pub case_id: String,
    /// `cceval`, `repoeval`, `history` or `evocodebench`.
    pub benchmark: String,
    pub metrics: Metrics,
    pub scored: Scored,
    /// The text scored (an EvoCodeBench case: the body tested).
    pub prediction: String,
    pub reference: String,
    /// An EvoCodeBench case: how its tests ended on the body.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub outcome: Option<TestOutcome>,
}

/// How a case's tests ended on one body.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TestOutcome {
    /// `pass`, `fail`, `timeout` or `error`.
    pub status: String,
    pub passed: bool,
    pub tests: Vec<TestRunInfo>,
    /// The first test that did not pass.
    pub first_failure: Option<String>,
    /// Why the tests could not run.
    pub message: Option<String>,
    pub secs: f64,
    /// Recall@1 of the body's dependencies, when the case lists them.
    pub recall: Option<f64>,
}

/// One test run.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TestRunInfo {
    pub id: String,
    pub status: String,
    pub exit_code: Option<i32>,
    pub secs: f64,
    /// The tail of its output.
    pub output: String,
}

/// `crossfile.compare`'s answer.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CompareResult {
    pub uri: Url,
    #[ts(type = "Position")]
    pub position: Position,
    /// The replayed case whose cursor it is.
    pub case_id: Option<String>,
    /// The case's reference: the text removed, or an EvoCodeBench case's body.
    pub reference: Option<String>,
    pub results: Vec<CompareColumn>,
}

/// One retriever's column: its completion, or the error it met.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CompareColumn {
    pub retriever: String,
    pub upper_bound: bool,
    #[serde(flatten)]
    #[ts(flatten)]
    pub answer: ColumnAnswer,
}

/// What a column's retriever gave: a completion, or the error it met.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(untagged)]
pub enum ColumnAnswer {
    Made(Box<MadeColumn>),
    Failed { error: String },
}

/// A column's completion and, at a replayed case, how it compares with the reference.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MadeColumn {
    #[serde(flatten)]
    #[ts(flatten)]
    pub made: MadeOf,
    /// At a replayed case: the share of the reference's distinct identifiers that the chunks
    /// hold, 0..1; absent without chunks or when the reference has no identifier.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub overlap: Option<f64>,
    /// At a text case: the runs that turn the reference into the suggestion.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub diff: Option<Vec<DiffRun>>,
    /// At a text case: the suggestion's metrics.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub metrics: Option<Metrics>,
    /// At an EvoCodeBench case: the body tested and how its tests ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub outcome: Option<TestOutcome>,
}

/// What a completion was made of and gave.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MadeOf {
    pub chunks: Vec<ChunkInfo>,
    /// `{crossfile, left, right, total}`: each part of the prompt tokenized alone, and the whole.
    pub prompt_tokens: PromptTokens,
    pub suggestion: String,
    pub latency_ms: f64,
}

/// A retrieved chunk. Context a case provides has no lines and no URI.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ChunkInfo {
    /// Relative to the workspace folder.
    pub path: String,
    pub uri: Option<Url>,
    /// 1-based, inclusive.
    pub start_line: Option<u32>,
    pub end_line: Option<u32>,
    pub score: f64,
    /// `crossfile.compare` only: where the chunk comes from relative to the cursor's file
    /// (`same_file`, `same_dir`, `imported`, `elsewhere`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub origin: Option<String>,
    /// The source that gave it, as a spec, when a `mix:` retriever composed the context.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub source: Option<String>,
    /// `crossfile.context` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
}

/// A run of a diff: `delete` is only in the reference, `insert` only in the suggestion.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct DiffRun {
    /// `equal`, `delete` or `insert`.
    pub op: String,
    pub text: String,
}

/// `crossfile.context`'s answer: the last completion in a document.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ContextResult {
    pub uri: Url,
    /// Where it was shown.
    #[ts(type = "Position")]
    pub position: Position,
    /// Where the completion it came from was asked (`position` but for typing along it).
    #[ts(type = "Position")]
    pub asked_at: Position,
    pub case_id: Option<String>,
    pub retriever: String,
    pub upper_bound: bool,
    #[serde(flatten)]
    pub made: MadeOf,
    pub raw_suggestion: String,
    pub prompt: String,
    /// A catalogue name, a GGUF file name, or an HTTP backend and its model.
    pub model: String,
    /// Which completion of the server it is (typing along it keeps the number).
    pub serial: u64,
    pub generation: GenerationInfo,
    pub timings_ms: TimingsMs,
}

/// What the backend reported of the generation.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GenerationInfo {
    pub prompt_tokens: Option<u32>,
    /// Prompt tokens a kept KV cache held already.
    pub reused_tokens: Option<u32>,
    pub generated_tokens: Option<u32>,
    /// Cut at `lsp.max_generate_ms`.
    pub out_of_time: bool,
    /// The model's text before post-processing.
    pub text: String,
    /// Answered from the last answer's layout while the new prompt was read.
    pub from_fallback: bool,
}

/// Where the time went, in milliseconds.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TimingsMs {
    pub retrieve: f64,
    pub prompt: f64,
    pub generate: f64,
    pub postprocess: f64,
    pub first_token: Option<f64>,
}

/// A retriever spec form (`crossfile.retrievers`).
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RetrieverInfo {
    /// The spec, or its pattern for a composite form (`mmr:<spec>[:<lambda in 0..1>]`).
    pub spec: String,
    pub summary: String,
    /// `nothing`, `dense-endpoint`, `case-context` (a replayed benchmark case's shipped context)
    /// or `parts` (the retrievers it combines).
    pub needs: String,
    /// Whether the settings of the first folder provide what it needs.
    pub available: bool,
    /// It sees the reference: its scores are an upper bound.
    pub upper_bound: bool,
    /// A pattern over other specs.
    pub composite: bool,
    /// The retriever completions use now (`retrieve.retriever`).
    pub default: bool,
}
