//! Predictions made elsewhere, for `bench score`: one JSON line per case, `task_id` (the case
//! id) and `pred` (the raw model output). Each line is validated like a case record.

use std::path::Path;

use serde::Deserialize;

use super::problem::{CaseProblem, parse_record};
use crate::bench::BenchError;

/// One prediction.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Prediction {
    pub task_id: String,
    pub pred: String,
}

/// The predictions of a file and the lines that were skipped.
#[derive(Debug, Default)]
pub struct LoadedPredictions {
    pub predictions: Vec<Prediction>,
    pub problems: Vec<CaseProblem>,
}

/// Loads every line of `path`; a bad line, or a second prediction for a task id, is a problem
/// naming the line and field.
pub fn load_predictions(path: &Path) -> Result<LoadedPredictions, BenchError> {
    let mut loaded = LoadedPredictions::default();
    let mut seen = std::collections::HashSet::new();
    for line in super::jsonl::read_lines(path)? {
        let number = line.number;
        let problem = |field: String, message: String| CaseProblem {
            file: path.into(),
            line: number,
            field,
            message,
        };
        let parsed = line
            .text
            .map_err(|m| (".".to_string(), m))
            .and_then(|text| parse_record::<Prediction>(&text));
        match parsed {
            Ok(p) if seen.insert(p.task_id.clone()) => loaded.predictions.push(p),
            Ok(p) => loaded.problems.push(problem(
                "task_id".into(),
                format!("{:?} has an earlier prediction", p.task_id),
            )),
            Err((field, message)) => loaded.problems.push(problem(field, message)),
        }
    }
    Ok(loaded)
}
