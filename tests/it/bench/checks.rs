//! What the bench tests read and check, typed: run files as [`RunRecord`]s and `bench report
//! --json` as its [`Report`], so a record without a field it promises does not read, and the
//! checks that need an optional field `expect` it rather than compare `None`. The test at the end
//! shows each check failing on a record without its field (each once passed on one).

use std::path::Path;

use crossfile_bench::bench::runfile::record::RunRecord;
use crossfile_bench::report::build::Report;
use crossfile_bench::report::category::CategoryCell;
use serde_json::{Value, json};

/// Every record of a run file, each line read as a [`RunRecord`].
pub fn run_records(path: &Path) -> Vec<RunRecord> {
    let text = std::fs::read_to_string(path).expect("run file");
    text.lines()
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}", i + 1)))
        .collect()
}

/// `bench report --json`'s output, read as the report it serializes.
pub fn report(json: &str) -> Report {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("the report: {e}\n{json}"))
}

/// No chunk of the record's own file covers `hidden` (1-based), the line its case hides: a
/// chunk without its lines fails (a history case's chunks come from its tree, with lines).
pub fn no_chunk_covers(record: &RunRecord, hidden: u32) {
    for chunk in record.chunks.iter().filter(|c| c.path == record.path) {
        let start = chunk.start_line.expect("a chunk's start_line");
        let end = chunk.end_line.expect("a chunk's end_line");
        assert!(
            !(start..=end).contains(&hidden),
            "{}: {chunk:?} covers the hidden line {hidden}",
            record.case_id
        );
    }
}

/// A category cell's EM interval holds its mean, both present.
pub fn interval_holds_mean(cell: &CategoryCell) {
    let em = cell.em.expect("the cell's em");
    let ci = cell.em_ci.expect("the cell's em_ci");
    assert!(ci.low <= em && em <= ci.high, "{cell:?}");
    assert!((0.0..=100.0).contains(&em), "{cell:?}");
}

/// The prompt fits the model's window less the tokens generated.
pub fn prompt_within(record: &RunRecord, n_ctx: u32, max_new_tokens: u32) {
    assert!(
        record.prompt_tokens.total <= n_ctx - max_new_tokens,
        "{}: {:?}",
        record.case_id,
        record.prompt_tokens
    );
}

/// A scored history record whose one chunk of its own file ends above the hidden line.
fn record() -> Value {
    json!({
        "version": 1, "case_id": "r/a.py:9", "retriever": "bm25", "format": "history",
        "language": "python", "repository": "r", "path": "a.py", "line": 9, "col": 0,
        "upper_bound": false, "backend": "none", "template": "plain",
        "chunks": [{"path": "a.py", "start_line": 1, "end_line": 5, "score": 1.0}],
        "prompt_tokens": {"crossfile": 10, "left": 20, "right": 0, "total": 31},
        "prompt_hash": "", "prompt": "", "raw_suggestion": "x", "suggestion": "x",
        "reference": "x", "metrics": {"em": 1.0},
        "timings_ms": {"retrieve": 0.0, "prompt": 0.0, "generate": 0.0, "postprocess": 0.0,
                       "total": 0.0},
        "error": null
    })
}

fn cell() -> Value {
    json!({
        "n": 3, "errors": 0, "em": 33.3, "es": 50.0, "chrf": null,
        "em_ci": {"low": 0.0, "high": 100.0}, "es_ci": null, "chrf_ci": null
    })
}

/// Whether `check` fails on `value`: it does not read, or the check panics.
fn fails<T: serde::de::DeserializeOwned>(value: Value, check: impl Fn(&T)) -> bool {
    match serde_json::from_value::<T>(value) {
        Err(_) => true,
        Ok(typed) => {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&typed))).is_err()
        }
    }
}

#[test]
fn each_check_fails_on_a_record_without_its_field() {
    let leak = |r: &RunRecord| no_chunk_covers(r, 10);
    let budget = |r: &RunRecord| prompt_within(r, 1024, 16);
    // Whole, each passes.
    assert!(!fails(record(), leak) && !fails(record(), budget));
    assert!(!fails(cell(), interval_holds_mean));

    // The leak check (it passed when `end_line` was absent).
    for field in ["start_line", "end_line"] {
        let mut r = record();
        r["chunks"][0].as_object_mut().expect("chunk").remove(field);
        assert!(fails(r, leak), "a chunk without {field}");
    }
    // The interval (`None <= em` held when `em_ci.low` was absent).
    let mut c = cell();
    c["em_ci"].as_object_mut().expect("em_ci").remove("low");
    assert!(fails(c, interval_holds_mean), "em_ci without low");
    let mut c = cell();
    c.as_object_mut().expect("cell").remove("em_ci");
    assert!(fails(c, interval_holds_mean), "no em_ci");
    // The budget (`as_u64() <= Some(…)` held when `total` was absent).
    let mut r = record();
    r["prompt_tokens"]
        .as_object_mut()
        .expect("prompt_tokens")
        .remove("total");
    assert!(fails(r, budget), "prompt_tokens without total");
    let mut r = record();
    r.as_object_mut().expect("record").remove("prompt_tokens");
    assert!(fails(r, budget), "no prompt_tokens");
}
