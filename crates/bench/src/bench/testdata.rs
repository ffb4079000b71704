//! Run records for the unit tests of the modules that read them (the tally, reports).

use std::collections::BTreeMap;

use super::runfile::record::{
    ChunkRef, PromptTokenCounts, RUN_FORMAT, RunError, RunRecord, StageTimings,
};

/// A scored CrossCodeEval Python record: `em`, `id_em`, `id_f1` are `score`, `es` is
/// `100 × score`. `oracle` is an upper bound.
pub fn record(case_id: &str, retriever: &str, score: f64) -> RunRecord {
    let metrics: BTreeMap<String, f64> = [
        ("em", score),
        ("es", 100.0 * score),
        ("id_em", score),
        ("id_f1", score),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    RunRecord {
        version: RUN_FORMAT,
        case_id: case_id.to_string(),
        retriever: retriever.to_string(),
        format: "cceval".into(),
        language: "python".into(),
        repository: "owner-repo-abc1234".into(),
        path: "pkg/mod.py".into(),
        line: 10,
        col: 4,
        upper_bound: retriever == "oracle",
        backend: "none".into(),
        template: "plain".into(),
        chunks: vec![ChunkRef {
            path: "pkg/util.py".into(),
            start_line: Some(1),
            end_line: Some(10),
            score: 3.5,
            origin: None,
            source: None,
            tokens: None,
            reference_overlap: None,
            suggestion_overlap: None,
        }],
        prompt_tokens: PromptTokenCounts {
            crossfile: 10,
            left: 20,
            right: 0,
            total: 30,
        },
        prompt_hash: "00".into(),
        prompt: "def f():\n    return ".into(),
        raw_suggestion: "x + 1\nmore".into(),
        suggestion: "x + 1".into(),
        reference: "x + 2".into(),
        metrics,
        timings_ms: StageTimings {
            retrieve: 1.0,
            prompt: 1.0,
            generate: 10.0 + score,
            postprocess: 0.5,
            total: 12.5 + score,
        },
        cached: false,
        error: None,
        samples: Vec::new(),
        settings: None,
        category: None,
        overlap: None,
    }
}

/// A record of `case_id` whose backend failed.
pub fn errored(case_id: &str, retriever: &str) -> RunRecord {
    RunRecord {
        metrics: BTreeMap::new(),
        error: Some(RunError {
            kind: "backend".into(),
            message: "connection refused".into(),
        }),
        ..record(case_id, retriever, 0.0)
    }
}

/// Run settings for tests: the embedded backend with `n_ctx`, greedy, one sample.
pub fn run_settings(n_ctx: u32) -> super::runfile::settings::RunSettings {
    super::runfile::settings::RunSettings {
        backend: "embedded".into(),
        model: "m.gguf".into(),
        model_sha256: Some("ab".into()),
        n_ctx,
        template: "plain".into(),
        layout: Some("comment".into()),
        top_k: 10,
        max_new_tokens: None,
        retrieval: serde_json::json!({"query_lines": 10}),
        sampling: None,
        samples: 1,
        setting: None,
    }
}
