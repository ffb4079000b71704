//! The run file of `bench run`: one [`RunRecord`] per (case, retriever) as a JSON line, and
//! nothing else. Reports, comparisons and exports read only this file.
//!
//! Field names are the file format; [`RUN_FORMAT`] is bumped when one changes meaning.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::settings::RunSettings;
use crate::harness::Outcome;

/// The run file's format version, written in every record's `version`.
pub const RUN_FORMAT: u32 = 1;

/// One case replayed with one retriever.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub version: u32,
    /// The case id (DESIGN.md section 6): CrossCodeEval's `metadata.task_id`, RepoEval's
    /// `<fpath_tuple joined with />:<lineno>`.
    pub case_id: String,
    /// The retriever spec string, as given (`bm25`, `mmr:bm25:0.5`, …).
    pub retriever: String,
    /// `cceval`, `repoeval`, `history` or `evocodebench`.
    pub format: String,
    /// `python`, `java`, `typescript` or `csharp`.
    pub language: String,
    /// The repository folder under `--repos` and the file, workspace-relative.
    pub repository: String,
    pub path: String,
    /// The cursor, 0-based line and column (characters; 0 when the case could not be laid out).
    pub line: u32,
    pub col: u32,
    /// True for retrievers that see the reference (`oracle`): an upper bound, not a result.
    pub upper_bound: bool,
    /// The backend's name (`embedded`, `none`, …) and the prompt template.
    pub backend: String,
    pub template: String,
    /// The retrieved chunks, best first, as they went into the prompt's candidates.
    pub chunks: Vec<ChunkRef>,
    /// Token counts of the prompt's parts, with the model's tokenizer.
    pub prompt_tokens: PromptTokenCounts,
    /// blake3 of the full prompt text, hex; equal prompts have equal hashes.
    pub prompt_hash: String,
    /// The full prompt text (for the report's drill-down).
    pub prompt: String,
    /// What the model generated, before post-processing.
    pub raw_suggestion: String,
    /// The suggestion after the protocol's post-processing.
    pub suggestion: String,
    /// The case's reference completion.
    pub reference: String,
    /// Metric name → value, as the benchmark's own scripts name them (`em`, `es`, `id_em`,
    /// `id_precision`, `id_recall`, `id_f1` for CrossCodeEval; `em`, `es` for RepoEval). Empty
    /// when `error` is set.
    pub metrics: BTreeMap<String, f64>,
    /// Milliseconds per stage.
    pub timings_ms: StageTimings,
    /// The generation came from the response cache (an identical prompt earlier in the run):
    /// its generation time is not the model's.
    #[serde(default)]
    pub cached: bool,
    /// `None` for a scored case; otherwise why it could not be scored (never counted as a miss).
    pub error: Option<RunError>,
    /// Execution-based cases (EvoCodeBench): every sample's body and how its tests ended, in
    /// sample order (`suggestion` is the first's); empty for the other formats.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<ExecSample>,
    /// What the run was made with (model and its sha256, backend, n_ctx, retrieval, top-k,
    /// sampling); `None` in run files written before they were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<RunSettings>,
    /// A history case's line category (`committed`, `inproject`, `infile`, `common`,
    /// `non_informative`, `random`), so reports group by it without the cases file; absent for
    /// the other formats and in run files written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The share of the reference's distinct identifiers (CrossCodeEval's) that some retrieved
    /// chunk holds, 0..1 ([`crossfile_engine::metrics::identifier_overlap`]); `None` when the pair
    /// retrieved nothing, the reference has no identifier, or the run file predates it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap: Option<f64>,
}

/// One sampled body of an execution-based case and its tests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExecSample {
    /// What the model generated, and the body post-processed from it (what was tested).
    pub raw_suggestion: String,
    pub suggestion: String,
    /// The share of the reference's dependencies the body uses (`None`: the reference has
    /// none).
    pub recall: Option<f64>,
    pub outcome: Outcome,
}

/// A retrieved chunk, by place and score.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChunkRef {
    pub path: String,
    /// 1-based, inclusive, as `retrieve --json` prints them; `None` for context a case ships
    /// with (CrossCodeEval's `crossfile_context` names files, not lines).
    pub start_line: Option<u32>,
    pub end_line: Option<u32>,
    pub score: f64,
    /// Where the chunk comes from relative to the case's file ([`crossfile_engine::retrieve::Origin`]'s
    /// name: `same_file`, `same_dir`, `imported`, `elsewhere`); `None` in run files that predate
    /// it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The source that gave it, as a spec, where a `mix:` composed the context
    /// ([`crossfile_engine::retrieve::Hit::source`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Tokens of the chunk's text (the model's tokenizer) when the prompt holds it, whole or
    /// cut; 0 when the block's budget left it out. `None` in run files that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u32>,
    /// The share of the reference's distinct identifiers this chunk holds
    /// ([`crossfile_engine::metrics::identifier_overlap`]); `None` when the reference has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_overlap: Option<f64>,
    /// The same share of the suggestion's identifiers: how much the suggestion draws on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion_overlap: Option<f64>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PromptTokenCounts {
    pub crossfile: u32,
    pub left: u32,
    pub right: u32,
    pub total: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageTimings {
    pub retrieve: f64,
    pub prompt: f64,
    pub generate: f64,
    pub postprocess: f64,
    pub total: f64,
}

/// Why a case has no score.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunError {
    /// A short machine-readable kind: `backend`, `retrieve`, `prompt`, `case`, `timeout`, …
    pub kind: String,
    pub message: String,
}

impl RunRecord {
    /// The record's key in a run: a (case, retriever) pair appears once.
    pub fn key(&self) -> (&str, &str) {
        (&self.case_id, &self.retriever)
    }
}
