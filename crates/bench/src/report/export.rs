//! Predictions of one retriever of a run in a benchmark's own file shape, so its official
//! scoring script can score them.
//!
//! - CrossCodeEval (`scripts/eval_metric.py` reads `<output_dir>/prediction.jsonl`): one line per
//!   case, `{"task_id": <case id>, "pred": <text>}`. The script cuts the prediction to one
//!   statement itself, so the raw suggestion is exported by default. Cases mined from history
//!   are CrossCodeEval lines (their file has CrossCodeEval's fields), so a history run exports
//!   in this shape too, for the same script run on the history cases file.
//! - RepoEval (RepoCoder's `compute_score.py`): one line per case, `{"prompt", "choices":
//!   [{"text"}], "metadata": {"task_id", "ground_truth", "fpath_tuple", "lineno"}}`. `task_id` is
//!   the case id, whose first `/`-part is the repository folder, as the script's per-repository
//!   grouping (`task_id.split('/')[0]`) expects.
//!
//! - EvoCodeBench (`pass_k.py`, and `bench score --format evocodebench`): one line per sample,
//!   `{"namespace", "completion"}`, the body that was tested (post-processed whatever the text
//!   asked for: the official scripts take bodies).
//!
//! Records with an `error` are skipped, never exported as an empty prediction (that would score
//! a failure as a miss); the caller reports how many.

use crossfile_engine::choice::Choice;
use serde_json::json;

use crate::bench::runfile::reader::Run;
use crate::bench::runfile::record::RunRecord;

crossfile_engine::choice! {
    /// A benchmark's predictions format.
    pub enum ExportFormat {
        /// CrossCodeEval's `prediction.jsonl` (also for a run of cases mined from history).
        Cceval,
        /// RepoCoder's predictions file.
        Repoeval,
        /// EvoCodeBench's completion file: one line per sample, the tested body.
        #[strum(serialize = "evocodebench")]
        EvoCodeBench,
    }
}

impl ExportFormat {
    /// Whether records of run `format` can be written in this shape.
    pub fn takes(self, format: &str) -> bool {
        format == self.name() || (self == ExportFormat::Cceval && format == "history")
    }
}

crossfile_engine::choice! {
    /// Which text of a record is the prediction.
    pub enum PredictionText {
        /// What the model generated (the default: the official scripts post-process themselves).
        Raw,
        /// The suggestion after crossfile's post-processing.
        Postprocessed,
    }
}

/// What to export.
#[derive(Clone, Debug)]
pub struct ExportParams {
    pub format: ExportFormat,
    /// The retriever whose records to export; needed when the run has several.
    pub retriever: Option<String>,
    pub text: PredictionText,
}

/// The exported predictions.
#[derive(Clone, Debug)]
pub struct Export {
    pub retriever: String,
    pub upper_bound: bool,
    /// One JSON document per exported case, without newlines, in run order.
    pub lines: Vec<String>,
    /// Case ids skipped because their record is an error.
    pub skipped_errors: Vec<String>,
}

/// Why predictions cannot be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{path}: the run has no records")]
    Empty { path: String },
    #[error("{path}: the run has several retrievers ({}); choose one with --retriever", .retrievers.join(", "))]
    SeveralRetrievers {
        path: String,
        retrievers: Vec<String>,
    },
    #[error("{path}: no records of retriever {retriever:?} (the run has: {})", .retrievers.join(", "))]
    UnknownRetriever {
        path: String,
        retriever: String,
        retrievers: Vec<String>,
    },
    #[error("{path}: case {case_id:?} is a {found} case, not {wanted}")]
    WrongFormat {
        path: String,
        case_id: String,
        found: String,
        wanted: &'static str,
    },
}

/// The predictions of one retriever of `run` in `params.format`'s shape.
pub fn export(run: &Run, params: &ExportParams) -> Result<Export, ExportError> {
    let path = run.path.display().to_string();
    let retrievers: Vec<String> = run.retrievers().into_iter().map(String::from).collect();
    let retriever = match (&params.retriever, retrievers.as_slice()) {
        (_, []) => return Err(ExportError::Empty { path }),
        (Some(wanted), _) if !retrievers.contains(wanted) => {
            return Err(ExportError::UnknownRetriever {
                path,
                retriever: wanted.clone(),
                retrievers,
            });
        }
        (Some(wanted), _) => wanted.clone(),
        (None, [only]) => only.clone(),
        (None, _) => return Err(ExportError::SeveralRetrievers { path, retrievers }),
    };
    let mut out = Export {
        retriever: retriever.clone(),
        upper_bound: false,
        lines: Vec::new(),
        skipped_errors: Vec::new(),
    };
    for record in run.records.iter().filter(|r| r.retriever == retriever) {
        if !params.format.takes(&record.format) {
            return Err(ExportError::WrongFormat {
                path,
                case_id: record.case_id.clone(),
                found: record.format.clone(),
                wanted: params.format.name(),
            });
        }
        out.upper_bound |= record.upper_bound;
        if record.error.is_some() {
            out.skipped_errors.push(record.case_id.clone());
            continue;
        }
        let text = match params.text {
            PredictionText::Raw => &record.raw_suggestion,
            PredictionText::Postprocessed => &record.suggestion,
        };
        let value = match params.format {
            ExportFormat::Cceval => json!({"task_id": record.case_id, "pred": text}),
            ExportFormat::Repoeval => repoeval_line(record, text),
            ExportFormat::EvoCodeBench => {
                // One line per sample: the body that was tested, as `pass_k.py` takes it.
                for sample in &record.samples {
                    let line =
                        json!({"namespace": record.case_id, "completion": sample.suggestion});
                    out.lines.push(line.to_string());
                }
                continue;
            }
        };
        out.lines.push(value.to_string());
    }
    Ok(out)
}

fn repoeval_line(record: &RunRecord, text: &str) -> serde_json::Value {
    let mut fpath_tuple = vec![record.repository.clone()];
    fpath_tuple.extend(
        record
            .path
            .split('/')
            .filter(|p| !p.is_empty())
            .map(String::from),
    );
    json!({
        "prompt": record.prompt,
        "choices": [{"text": text}],
        "metadata": {
            "task_id": record.case_id,
            "ground_truth": record.reference,
            "fpath_tuple": fpath_tuple,
            "lineno": record.line,
        },
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::bench::testdata::{errored, record};

    fn run(records: Vec<RunRecord>) -> Run {
        Run {
            path: PathBuf::from("run.jsonl"),
            records,
            warnings: Vec::new(),
        }
    }

    fn params(format: ExportFormat, retriever: Option<&str>) -> ExportParams {
        ExportParams {
            format,
            retriever: retriever.map(String::from),
            text: PredictionText::Raw,
        }
    }

    #[test]
    fn cceval_lines_carry_the_raw_suggestion_and_skip_errors() {
        let r = run(vec![
            record("t/1", "bm25", 1.0),
            errored("t/2", "bm25"),
            record("t/1", "oracle", 1.0),
        ]);
        let error = export(&r, &params(ExportFormat::Cceval, None)).expect_err("two retrievers");
        assert_eq!(
            error.to_string(),
            "run.jsonl: the run has several retrievers (bm25, oracle); choose one with --retriever"
        );
        let e = export(&r, &params(ExportFormat::Cceval, Some("bm25"))).expect("export");
        assert_eq!(e.lines, [r#"{"pred":"x + 1\nmore","task_id":"t/1"}"#]);
        assert_eq!(e.skipped_errors, ["t/2"]);
        assert!(!e.upper_bound);
        let missing = export(&r, &params(ExportFormat::Cceval, Some("jaccard")));
        assert!(matches!(missing, Err(ExportError::UnknownRetriever { .. })));
    }

    #[test]
    fn evocodebench_lines_are_one_per_sample_with_the_tested_body() {
        use crate::bench::runfile::record::ExecSample;
        use crate::harness::Outcome;
        let sample = |body: &str| ExecSample {
            raw_suggestion: format!("{body}\nclass Next:"),
            suggestion: body.to_string(),
            recall: None,
            outcome: Outcome::error("not run here"),
        };
        let mut rec = record("pkg.mod.f", "bm25", 1.0);
        rec.format = "evocodebench".into();
        rec.samples = vec![sample("    return 1\n"), sample("    return 2\n")];
        let mut failed = errored("pkg.mod.g", "bm25");
        failed.format = "evocodebench".into();
        let e = export(
            &run(vec![rec, failed]),
            &params(ExportFormat::EvoCodeBench, None),
        )
        .expect("export");
        assert_eq!(
            e.lines,
            [
                r#"{"completion":"    return 1\n","namespace":"pkg.mod.f"}"#,
                r#"{"completion":"    return 2\n","namespace":"pkg.mod.f"}"#
            ]
        );
        assert_eq!(e.skipped_errors, ["pkg.mod.g"]);
    }

    #[test]
    fn repoeval_lines_have_repocoders_shape() {
        let mut rec = record("CarperAI_trlx/trlx/a.py:19", "bm25", 1.0);
        rec.format = "repoeval".into();
        rec.repository = "CarperAI_trlx".into();
        rec.path = "trlx/a.py".into();
        rec.line = 19;
        let e = export(
            &run(vec![rec.clone()]),
            &params(ExportFormat::Repoeval, None),
        )
        .expect("export");
        let value: serde_json::Value = serde_json::from_str(&e.lines[0]).expect("json");
        assert_eq!(value["choices"][0]["text"], "x + 1\nmore");
        assert_eq!(value["metadata"]["task_id"], "CarperAI_trlx/trlx/a.py:19");
        assert_eq!(value["metadata"]["ground_truth"], "x + 2");
        assert_eq!(
            value["metadata"]["fpath_tuple"],
            json!(["CarperAI_trlx", "trlx", "a.py"])
        );
        assert_eq!(value["metadata"]["lineno"], 19);
        let wrong = export(&run(vec![rec]), &params(ExportFormat::Cceval, None));
        assert!(matches!(wrong, Err(ExportError::WrongFormat { .. })));
    }

    /// A line mined from history exports as a CrossCodeEval line (it is scored as one), and only
    /// as one.
    #[test]
    fn history_lines_export_in_crosscodeevals_shape() {
        let mut rec = record("click/abc/src/x.py:12", "bm25", 1.0);
        rec.format = "history".into();
        let e =
            export(&run(vec![rec.clone()]), &params(ExportFormat::Cceval, None)).expect("export");
        assert_eq!(
            e.lines,
            [r#"{"pred":"x + 1\nmore","task_id":"click/abc/src/x.py:12"}"#]
        );
        let wrong = export(&run(vec![rec]), &params(ExportFormat::Repoeval, None));
        assert!(matches!(wrong, Err(ExportError::WrongFormat { .. })));
    }
}
