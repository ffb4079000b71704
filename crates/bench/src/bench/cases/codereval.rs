//! CoderEval (Python): its model inputs (`CEPythonRaw.jsonl`, `CEPythonHumanLabel.jsonl`:
//! `question_id`, `signature`, `docstring`, `input`) and its results files (each task's
//! generations with the official harness's verdict, and the task's runnable `level`). The harness
//! and the reference code are not public, so CoderEval is scored from recorded verdicts: Pass@k
//! over each task's generations, over all tasks and per runnable level.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use super::jsonl::Loaded;
use super::jsonl::load_records;
use super::problem::{RecordError, checked_relative, parse_record};
use crate::bench::BenchError;
use crate::bench::scoring::execution::{
    CaseOutcomes, GroupScore, case_outcomes, group_scores, pass_at_ks,
};
use crate::harness::{Outcome, Status};

/// How much of its project a task's function needs to run, as CoderEval classifies it.
pub const LEVELS: [&str; 6] = [
    "self_contained",
    "slib_runnable",
    "plib_runnable",
    "class_runnable",
    "file_runnable",
    "project_runnable",
];

/// A model input record.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoderevalPrompt {
    pub question_id: String,
    pub input: String,
    pub signature: String,
    pub docstring: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultRecord {
    #[serde(rename = "_id")]
    id: String,
    project: String,
    file_path: String,
    name: String,
    #[allow(dead_code)]
    docstring: String,
    level: String,
    #[allow(dead_code)]
    code: Vec<String>,
    generate_results: Vec<Generation>,
}

/// One generation and the official harness's verdict.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Generation {
    pub generate_code: String,
    pub is_pass: bool,
    pub return_code: i64,
}

/// A task's generations and verdicts.
#[derive(Clone, Debug, PartialEq)]
pub struct CoderevalResult {
    pub id: String,
    /// `owner/name` on GitHub.
    pub project: String,
    /// The function's file in the project, checked to stay inside it.
    pub file_path: String,
    pub name: String,
    /// One of [`LEVELS`].
    pub level: String,
    pub generations: Vec<Generation>,
    pub record_line: usize,
}

fn bad(field: &str, message: impl Into<String>) -> RecordError {
    (field.to_string(), message.into())
}

/// A task id: 24 hexadecimal digits (the benchmark's `_id`).
fn checked_id(field: &str, id: &str) -> Result<(), RecordError> {
    if id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(bad(
            field,
            format!("{id:?} is not a 24-digit hexadecimal task id"),
        ))
    }
}

/// Loads a model input file (`CEPythonRaw.jsonl` or `CEPythonHumanLabel.jsonl`).
pub fn load_prompts(path: &Path) -> Result<Loaded<CoderevalPrompt>, BenchError> {
    load_records(
        path,
        |text, _| {
            let record: CoderevalPrompt = parse_record(text)?;
            checked_id("question_id", &record.question_id)?;
            let signature = record.signature.trim_start();
            if !(signature.starts_with("def ") || signature.starts_with("async def ")) {
                return Err(bad("signature", "is not a `def` line"));
            }
            if !record.input.starts_with(&record.signature) {
                return Err(bad("input", "does not start with the signature"));
            }
            Ok(record)
        },
        |r| Some(("question_id", &r.question_id)),
    )
}

/// Loads a results file (generations with verdicts, and each task's level).
pub fn load_results(path: &Path) -> Result<Loaded<CoderevalResult>, BenchError> {
    load_records(
        path,
        |text, record_line| {
            let r: ResultRecord = parse_record(text)?;
            checked_id("_id", &r.id)?;
            let parts: Vec<&str> = r.project.split('/').collect();
            if parts.len() != 2 || parts.iter().any(|p| p.is_empty() || *p == "..") {
                return Err(bad("project", format!("{:?} is not owner/name", r.project)));
            }
            let file_path = checked_relative(&r.file_path).map_err(|e| bad("file_path", e))?;
            if !LEVELS.contains(&r.level.as_str()) {
                return Err(bad(
                    "level",
                    format!("{:?}: one of {}", r.level, LEVELS.join(", ")),
                ));
            }
            if r.generate_results.is_empty() {
                return Err(bad("generate_results", "no generation"));
            }
            for (i, g) in r.generate_results.iter().enumerate() {
                if g.is_pass != (g.return_code == 0) {
                    return Err(bad(
                        &format!("generate_results[{i}].is_pass"),
                        format!(
                            "{} but return_code is {}: the verdict contradicts itself",
                            g.is_pass, g.return_code
                        ),
                    ));
                }
            }
            Ok(CoderevalResult {
                id: r.id,
                project: r.project,
                file_path,
                name: r.name,
                level: r.level,
                generations: r.generate_results,
                record_line,
            })
        },
        |r| Some(("_id", &r.id)),
    )
}

/// Pass@k over the recorded verdicts, over all tasks and per runnable level.
#[derive(Clone, Debug, Serialize)]
pub struct CoderevalScore {
    pub cases: usize,
    pub pass_at_k: BTreeMap<String, f64>,
    pub by_level: BTreeMap<String, GroupScore>,
    pub per_case: Vec<CaseOutcomes>,
}

/// Scores `results` (their verdicts as recorded) for each of `ks`.
pub fn score_results(results: &[CoderevalResult], ks: &[u64]) -> CoderevalScore {
    let outcomes = |r: &CoderevalResult| {
        let details = r
            .generations
            .iter()
            .map(|g| Outcome {
                status: if g.is_pass {
                    Status::Pass
                } else {
                    Status::Fail
                },
                tests: Vec::new(),
                first_failure: None,
                message: (!g.is_pass).then(|| format!("return code {}", g.return_code)),
                secs: 0.0,
            })
            .collect();
        let mut case = case_outcomes(&r.id, details);
        case.groups = vec![r.level.clone()];
        case
    };
    let per_case: Vec<CaseOutcomes> = results.iter().map(outcomes).collect();
    let by_level = group_scores(&per_case, &LEVELS, ks, |_| false);
    CoderevalScore {
        cases: per_case.len(),
        pass_at_k: pass_at_ks(&per_case, ks),
        by_level,
        per_case,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(lines: &[String]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("records.jsonl");
        std::fs::write(&path, lines.join("\n")).expect("write");
        (dir, path)
    }

    fn result(edit: impl FnOnce(&mut serde_json::Value)) -> String {
        let mut value = serde_json::json!({
            "_id": "62e60f43d76274f8a4026e28", "project": "owner/name",
            "file_path": "pkg/mod.py", "name": "f", "docstring": "D.", "level": "file_runnable",
            "code": ["def f(): pass"],
            "generate_results": [
                {"generate_code": "def f(): pass", "is_pass": true, "return_code": 0},
                {"generate_code": "def f(): 1/0", "is_pass": false, "return_code": 1}
            ]
        });
        edit(&mut value);
        value.to_string()
    }

    #[test]
    fn bad_result_records_name_their_line_and_field() {
        let (_dir, path) = write(&[
            result(|r| r["_id"] = "xyz".into()),
            result(|r| r["level"] = "galaxy_runnable".into()),
            result(|r| r["file_path"] = "../etc/passwd".into()),
            result(|r| r["project"] = "just-a-name".into()),
            result(|r| r["generate_results"][1]["is_pass"] = true.into()),
            result(|_| {}),
            result(|_| {}),
        ]);
        let loaded = load_results(&path).expect("readable");
        let got: Vec<(usize, &str)> = loaded
            .problems
            .iter()
            .map(|p| (p.line, p.field.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (1, "_id"),
                (2, "level"),
                (3, "file_path"),
                (4, "project"),
                (5, "generate_results[1].is_pass"),
                (7, "_id"),
            ]
        );
        assert_eq!(loaded.records.len(), 1);
    }

    #[test]
    fn prompts_must_start_with_their_signature() {
        let prompt = |input: &str| {
            serde_json::json!({"question_id": "62e60f43d76274f8a4026e28", "input": input,
                "signature": "def f(x):", "docstring": "D."})
            .to_string()
        };
        let (_dir, path) = write(&[prompt("def f(x):\n\t\"\"\"D.\"\"\"\n\t"), prompt("x = 1")]);
        let loaded = load_prompts(&path).expect("readable");
        assert_eq!(loaded.records.len(), 1);
        assert_eq!(
            (loaded.problems[0].line, loaded.problems[0].field.as_str()),
            (2, "input")
        );
    }

    #[test]
    fn pass_at_k_comes_from_the_verdicts_per_level() {
        let (_dir, path) = write(&[
            result(|_| {}),
            result(|r| {
                r["_id"] = "62e60f43d76274f8a4026e29".into();
                r["level"] = "self_contained".into();
                r["generate_results"][0]["is_pass"] = false.into();
                r["generate_results"][0]["return_code"] = 1.into();
            }),
        ]);
        let loaded = load_results(&path).expect("readable");
        let score = score_results(&loaded.records, &[1, 2]);
        assert_eq!(score.cases, 2);
        assert_eq!(score.pass_at_k["1"], 0.25);
        assert_eq!(score.pass_at_k["2"], 0.5);
        assert_eq!(score.by_level["file_runnable"].pass_at_k["1"], 0.5);
        assert_eq!(score.by_level["self_contained"].pass_at_k["2"], 0.0);
        assert!(!score.by_level.contains_key("class_runnable"));
    }
}
