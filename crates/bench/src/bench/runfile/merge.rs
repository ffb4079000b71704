//! Joining run files made apart (`bench run --shard K/N` on N machines) into one run file for
//! `report` and `compare`: every file read and checked as a run file, no (case, retriever) pair
//! twice across them, and the settings a run's records share (format, backend, prompt template,
//! and the run settings they carry: model and its sha256, n_ctx, retrieval, top-k, sampling)
//! the same in all of them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::reader::{RunFileError, read_run};
use super::record::RunRecord;
use super::settings::RunSettings;

/// Why run files cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Run(#[from] RunFileError),
    #[error(
        "the pair ({case_id:?}, {retriever:?}) is in both {} and {}: were the shards' --shard \
         values the same?",
        first.display(),
        second.display()
    )]
    Twice {
        case_id: String,
        retriever: String,
        first: PathBuf,
        second: PathBuf,
    },
    #[error(
        "{} and {} were run with different {field}: {first_value:?} and {second_value:?}",
        first.display(),
        second.display()
    )]
    Disagree {
        field: &'static str,
        first: PathBuf,
        first_value: String,
        second: PathBuf,
        second_value: String,
    },
    #[error(
        "{} and {} were run with other settings ({differences}, first / second): shards of one \
         run share them",
        first.display(),
        second.display()
    )]
    SettingsDiffer {
        first: PathBuf,
        second: PathBuf,
        differences: String,
    },
}

/// The merged records, in the order of the files given, and what reading tolerated.
#[derive(Debug)]
pub struct Merged {
    pub records: Vec<RunRecord>,
    pub warnings: Vec<String>,
}

/// The run-level settings of a record (empty for an error record that never reached a backend).
fn settings(record: &RunRecord) -> [(&'static str, &str); 3] {
    [
        ("formats", record.format.as_str()),
        ("backends", record.backend.as_str()),
        ("prompt templates", record.template.as_str()),
    ]
}

/// Reads and joins `paths`.
pub fn merge_runs(paths: &[PathBuf]) -> Result<Merged, MergeError> {
    let mut merged = Merged {
        records: Vec::new(),
        warnings: Vec::new(),
    };
    let mut seen: HashMap<(String, String), &Path> = HashMap::new();
    let mut first_settings: [Option<(String, &Path)>; 3] = [None, None, None];
    let mut first_run_settings: Option<(RunSettings, &Path)> = None;
    for path in paths {
        let run = read_run(path)?;
        merged.warnings.extend(run.warnings);
        for record in run.records {
            let pair = (record.case_id.clone(), record.retriever.clone());
            if let Some(first) = seen.get(&pair) {
                return Err(MergeError::Twice {
                    case_id: pair.0,
                    retriever: pair.1,
                    first: first.to_path_buf(),
                    second: path.clone(),
                });
            }
            seen.insert(pair, path);
            for (slot, (field, value)) in first_settings.iter_mut().zip(settings(&record)) {
                if value.is_empty() {
                    continue;
                }
                match slot {
                    None => *slot = Some((value.to_string(), path)),
                    Some((first_value, first)) if first_value != value => {
                        return Err(MergeError::Disagree {
                            field,
                            first: first.to_path_buf(),
                            first_value: first_value.clone(),
                            second: path.clone(),
                            second_value: value.to_string(),
                        });
                    }
                    Some(_) => {}
                }
            }
            if let Some(settings) = &record.settings {
                match &first_run_settings {
                    None => first_run_settings = Some((settings.clone(), path)),
                    Some((first_value, first)) => {
                        let differences = first_value.differences(settings);
                        if !differences.is_empty() {
                            return Err(MergeError::SettingsDiffer {
                                first: first.to_path_buf(),
                                second: path.clone(),
                                differences: differences.join("; "),
                            });
                        }
                    }
                }
            }
            merged.records.push(record);
        }
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testdata::{errored, record};

    fn write(dir: &Path, name: &str, records: &[RunRecord]) -> PathBuf {
        let path = dir.join(name);
        let lines: Vec<String> = records
            .iter()
            .map(|r| serde_json::to_string(r).expect("json"))
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").expect("write");
        path
    }

    #[test]
    fn shards_join_in_order_and_a_pair_twice_or_other_settings_are_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let a = write(
            dir.path(),
            "a.jsonl",
            &[record("c1", "bm25", 1.0), record("c3", "bm25", 0.0)],
        );
        let b = write(
            dir.path(),
            "b.jsonl",
            &[record("c2", "bm25", 1.0), errored("c4", "bm25")],
        );
        let merged = merge_runs(&[a.clone(), b.clone()]).expect("merges");
        let ids: Vec<&str> = merged.records.iter().map(|r| r.case_id.as_str()).collect();
        assert_eq!(ids, ["c1", "c3", "c2", "c4"]);

        let again = write(dir.path(), "c.jsonl", &[record("c3", "bm25", 1.0)]);
        let twice = merge_runs(&[a.clone(), again]).expect_err("c3 twice");
        assert!(
            matches!(twice, MergeError::Twice { ref case_id, .. } if case_id == "c3"),
            "{twice}"
        );

        let mut other = record("c9", "bm25", 1.0);
        other.backend = "openai".into();
        let other = write(dir.path(), "d.jsonl", &[other]);
        let disagree = merge_runs(&[a, other]).expect_err("another backend");
        assert!(
            matches!(
                disagree,
                MergeError::Disagree {
                    field: "backends",
                    ..
                }
            ),
            "{disagree}"
        );

        // Shards made with another n_ctx are refused, naming it.
        let with = |case: &str, n_ctx: u32| {
            let mut r = record(case, "bm25", 1.0);
            r.settings = Some(crate::bench::testdata::run_settings(n_ctx));
            r
        };
        let x = write(dir.path(), "x.jsonl", &[with("c1", 2048)]);
        let y = write(dir.path(), "y.jsonl", &[with("c2", 2048)]);
        let z = write(dir.path(), "z.jsonl", &[with("c3", 1024)]);
        assert_eq!(
            merge_runs(&[x.clone(), y])
                .expect("same settings")
                .records
                .len(),
            2
        );
        let differ = merge_runs(&[x, z]).expect_err("another n_ctx");
        assert!(
            differ.to_string().contains("n_ctx: 2048 / 1024"),
            "{differ}"
        );
    }
}
