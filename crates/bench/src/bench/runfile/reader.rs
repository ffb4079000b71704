//! Reading a run file: every line checked, a torn last line tolerated, duplicate pairs refused.
//!
//! A run file is what `bench run` writes: one [`RunRecord`] per (case, retriever) as a JSON line.
//! [`read_run`] is the only way the report, compare and export commands read one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::record::{RUN_FORMAT, RunRecord};

/// A run file, read and checked: its records in file order and what was tolerated.
#[derive(Clone, Debug)]
pub struct Run {
    pub path: PathBuf,
    pub records: Vec<RunRecord>,
    /// Things tolerated while reading (a torn last line), one sentence each, for stderr.
    pub warnings: Vec<String>,
}

/// Why a run file cannot be used. Each variant names the file and, where there is one, the
/// 1-based line and the field.
#[derive(Debug, thiserror::Error)]
pub enum RunFileError {
    #[error("{}: cannot read: {error}", path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}:{line}: field `{field}`: {message}", path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        /// The dotted path of the offending field (`.` for the line as a whole).
        field: String,
        message: String,
    },
    #[error(
        "{}:{line}: duplicate (case, retriever) pair ({case_id:?}, {retriever:?}), first on line {first_line}",
        path.display()
    )]
    Duplicate {
        path: PathBuf,
        line: usize,
        first_line: usize,
        case_id: String,
        retriever: String,
    },
}

/// Reads and checks a run file.
///
/// Every line must be a [`RunRecord`] of format [`RUN_FORMAT`] with a non-empty case id and
/// retriever, finite metrics and timings, and no metrics when it records an error. Blank lines
/// are skipped. A last line that does not end with a newline and does not parse is what a killed
/// writer leaves: it is ignored and reported in [`Run::warnings`]. Any other bad line, and a
/// second record of the same (case, retriever) pair, is an error.
pub fn read_run(path: &Path) -> Result<Run, RunFileError> {
    let bytes = std::fs::read(path).map_err(|error| RunFileError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    parse_run(path, &bytes)
}

/// [`read_run`] on bytes already read; `path` names them in errors.
pub fn parse_run(path: &Path, bytes: &[u8]) -> Result<Run, RunFileError> {
    let mut run = Run {
        path: path.to_path_buf(),
        records: Vec::new(),
        warnings: Vec::new(),
    };
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    let ends_with_newline = bytes.last() == Some(&b'\n');
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    // `split` yields one empty piece after a final newline; it is not a line.
    let count = if ends_with_newline {
        lines.len() - 1
    } else {
        lines.len()
    };
    for (i, raw) in lines.iter().take(count).enumerate() {
        let number = i + 1;
        let torn_candidate = number == count && !ends_with_newline;
        let invalid = |field: &str, message: String| RunFileError::Invalid {
            path: path.to_path_buf(),
            line: number,
            field: field.to_string(),
            message,
        };
        let text = match std::str::from_utf8(raw) {
            Ok(text) => text,
            Err(e) if torn_candidate => {
                run.warnings
                    .push(torn_warning(path, number, &e.to_string()));
                break;
            }
            Err(e) => return Err(invalid(".", format!("not UTF-8: {e}"))),
        };
        if text.trim().is_empty() {
            continue;
        }
        let record = match parse_line(text) {
            Ok(record) => record,
            Err((_, message)) if torn_candidate => {
                run.warnings.push(torn_warning(path, number, &message));
                break;
            }
            Err((field, message)) => return Err(invalid(&field, message)),
        };
        if let Some((field, message)) = problem(&record) {
            return Err(invalid(field, message));
        }
        let key = (record.case_id.clone(), record.retriever.clone());
        if let Some(&first_line) = seen.get(&key) {
            return Err(RunFileError::Duplicate {
                path: path.to_path_buf(),
                line: number,
                first_line,
                case_id: key.0,
                retriever: key.1,
            });
        }
        seen.insert(key, number);
        run.records.push(record);
    }
    Ok(run)
}

/// One line as a record, or the dotted path of the bad field and what is wrong with it.
fn parse_line(text: &str) -> Result<RunRecord, (String, String)> {
    let mut de = serde_json::Deserializer::from_str(text);
    let record: RunRecord = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| (e.path().to_string(), e.into_inner().to_string()))?;
    de.end().map_err(|e| (".".to_string(), e.to_string()))?;
    Ok(record)
}

fn torn_warning(path: &Path, line: usize, why: &str) -> String {
    format!(
        "{}:{line}: ignoring a torn last line (no final newline; a killed writer?): {why}",
        path.display()
    )
}

/// Whether a per-case metric can have `value`: exact matches and identifier scores lie in
/// [0, 1], edit similarities and chrF in [0, 100] (CrossCodeEval's scale; RepoEval's ES is in
/// [0, 1]), a log-probability at most 0.
fn metric_in_range(name: &str, value: f64) -> bool {
    match name {
        "em" | "id_em" | "id_precision" | "id_recall" | "id_f1" => (0.0..=1.0).contains(&value),
        "es" | "es_with_python_levenshtein" | "chrf" => (0.0..=100.0).contains(&value),
        crate::bench::scoring::LOGPROB => value <= 0.0,
        _ => true,
    }
}

/// The first thing wrong with a well-formed record, as (field, message).
fn problem(record: &RunRecord) -> Option<(&'static str, String)> {
    if record.version != RUN_FORMAT {
        return Some((
            "version",
            format!(
                "run format {} is not the supported {RUN_FORMAT}",
                record.version
            ),
        ));
    }
    if record.case_id.is_empty() {
        return Some(("case_id", "empty".into()));
    }
    if record.retriever.is_empty() {
        return Some(("retriever", "empty".into()));
    }
    if let Some((name, value)) = record.metrics.iter().find(|(_, v)| !v.is_finite()) {
        return Some((
            "metrics",
            format!("`{name}` is {value}, not a finite number"),
        ));
    }
    if let Some((name, value)) = record
        .metrics
        .iter()
        .find(|(name, value)| !metric_in_range(name, **value))
    {
        return Some(("metrics", format!("`{name}` is {value}, outside its range")));
    }
    if record.error.is_some() && !record.metrics.is_empty() {
        return Some((
            "metrics",
            "a record with an `error` has no metrics".to_string(),
        ));
    }
    let t = &record.timings_ms;
    let timings = [t.retrieve, t.prompt, t.generate, t.postprocess, t.total];
    if timings.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return Some((
            "timings_ms",
            "a stage time is negative or not finite".to_string(),
        ));
    }
    None
}

impl Run {
    /// The retrievers of the run, in order of first appearance.
    pub fn retrievers(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for record in &self.records {
            if !out.contains(&record.retriever.as_str()) {
                out.push(&record.retriever);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testdata::record;

    fn lines(records: &[RunRecord]) -> String {
        records
            .iter()
            .map(|r| serde_json::to_string(r).expect("serialize") + "\n")
            .collect()
    }

    fn parse(text: &str) -> Result<Run, RunFileError> {
        parse_run(Path::new("run.jsonl"), text.as_bytes())
    }

    #[test]
    fn reads_every_record_in_order() {
        let records = vec![record("a", "bm25", 1.0), record("a", "oracle", 1.0)];
        let run = parse(&lines(&records)).expect("valid");
        assert_eq!(run.records, records);
        assert!(run.warnings.is_empty());
        assert_eq!(run.retrievers(), ["bm25", "oracle"]);
    }

    #[test]
    fn a_torn_last_line_is_a_warning() {
        let mut text = lines(&[record("a", "bm25", 1.0), record("b", "bm25", 0.0)]);
        let third = serde_json::to_string(&record("c", "bm25", 1.0)).expect("serialize");
        text.push_str(&third[..third.len() / 2]);
        let run = parse(&text).expect("torn last line tolerated");
        assert_eq!(run.records.len(), 2);
        assert_eq!(run.warnings.len(), 1);
        assert!(run.warnings[0].starts_with("run.jsonl:3: ignoring a torn last line"));
    }

    #[test]
    fn a_torn_line_before_the_end_is_an_error() {
        let first = serde_json::to_string(&record("a", "bm25", 1.0)).expect("serialize");
        let text = format!("{}\n{}", &first[..20], lines(&[record("b", "bm25", 1.0)]));
        let error = parse(&text).expect_err("torn middle line");
        assert!(
            matches!(error, RunFileError::Invalid { line: 1, .. }),
            "{error}"
        );
    }

    #[test]
    fn a_complete_last_line_without_newline_is_kept() {
        let text = lines(&[record("a", "bm25", 1.0)]);
        let run = parse(text.trim_end()).expect("valid");
        assert_eq!(run.records.len(), 1);
        assert!(run.warnings.is_empty());
    }

    #[test]
    fn a_mistyped_field_is_named_with_its_line() {
        let good = lines(&[record("a", "bm25", 1.0)]);
        let mut bad: serde_json::Value =
            serde_json::to_value(record("b", "bm25", 1.0)).expect("value");
        bad["timings_ms"]["total"] = serde_json::json!("fast");
        let text = format!("{good}{bad}\n");
        let error = parse(&text).expect_err("mistyped");
        let message = error.to_string();
        assert!(
            message.starts_with("run.jsonl:2: field `timings_ms.total`: invalid type: string"),
            "{message}"
        );
    }

    #[test]
    fn a_wrong_version_is_refused() {
        let mut r = record("a", "bm25", 1.0);
        r.version = 99;
        let error = parse(&lines(&[r])).expect_err("version");
        assert!(
            error
                .to_string()
                .starts_with("run.jsonl:1: field `version`: run format 99"),
            "{error}"
        );
    }

    #[test]
    fn duplicate_pairs_are_refused_naming_both_lines() {
        let text = lines(&[
            record("a", "bm25", 1.0),
            record("b", "bm25", 1.0),
            record("a", "bm25", 0.0),
        ]);
        let error = parse(&text).expect_err("duplicate");
        assert_eq!(
            error.to_string(),
            "run.jsonl:3: duplicate (case, retriever) pair (\"a\", \"bm25\"), first on line 1"
        );
    }

    #[test]
    fn impossible_metrics_are_refused_naming_line_and_field() {
        for (name, value) in [("em", -5.0), ("es", 1e308), ("id_f1", 1.5), ("es", -0.1)] {
            let mut r = record("c1", "bm25", 1.0);
            r.metrics.insert(name.to_string(), value);
            let error = parse(&lines(&[r])).expect_err("impossible metric");
            let text = error.to_string();
            assert!(
                text.contains(":1") && text.contains("field `metrics`") && text.contains(name),
                "{text}"
            );
        }
    }

    #[test]
    fn metrics_on_an_error_record_are_refused() {
        let mut r = record("a", "bm25", 1.0);
        r.error = Some(crate::bench::runfile::record::RunError {
            kind: "backend".into(),
            message: "refused".into(),
        });
        let error = parse(&lines(&[r])).expect_err("metrics with error");
        assert!(error.to_string().contains("field `metrics`"), "{error}");
    }

    #[test]
    fn blank_lines_and_an_empty_file_are_fine() {
        assert!(parse("").expect("empty").records.is_empty());
        let text = format!("\n{}\n", lines(&[record("a", "bm25", 1.0)]));
        assert_eq!(parse(&text).expect("blank lines").records.len(), 1);
    }

    #[test]
    fn trailing_garbage_after_a_record_is_an_error() {
        let text = lines(&[record("a", "bm25", 1.0)]).replace('\n', " x\n");
        let error = parse(&text).expect_err("trailing characters");
        assert!(error.to_string().starts_with("run.jsonl:1:"), "{error}");
    }
}
