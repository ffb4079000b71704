//! EvoCodeBench: its records (a function body to generate, scored by the repository's own tests)
//! and its prediction files (`{"namespace", "completion"}`, several lines per namespace for
//! several samples). Records are validated as the other loaders do: a bad one is a
//! [`CaseProblem`] naming the file, line and field, and the rest load.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::jsonl::load_records;
use super::problem::{CaseProblem, RecordError, checked_component, checked_relative, parse_record};
use crate::bench::BenchError;

/// One record as the benchmark's `data.jsonl` writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    namespace: String,
    #[serde(rename = "type")]
    kind: String,
    completion_path: String,
    signature_position: [usize; 2],
    body_position: [usize; 2],
    dependency: Dependency,
    tests: Vec<String>,
    requirement: Requirement,
    indent: usize,
    /// Added upstream in June 2024; not used.
    #[serde(default)]
    #[allow(dead_code)]
    domain: Option<String>,
}

/// The namespaces the reference body uses, by kind (the benchmark's Recall@k counts them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dependency {
    pub intra_class: Vec<String>,
    pub intra_file: Vec<String>,
    pub cross_file: Vec<String>,
}

impl Dependency {
    /// Every dependency, of every kind.
    pub fn all(&self) -> impl Iterator<Item = &String> {
        self.intra_class
            .iter()
            .chain(&self.intra_file)
            .chain(&self.cross_file)
    }
}

/// The natural-language specification the model is given.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    #[serde(rename = "Functionality")]
    pub functionality: String,
    #[serde(rename = "Arguments")]
    pub arguments: String,
}

/// An EvoCodeBench case: a function body in a file of a repository, and the tests that judge it.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecCase {
    /// The benchmark's id (the target's dotted path).
    pub namespace: String,
    /// `function` or `method`.
    pub kind: String,
    /// The repository's folder under the repositories directory.
    pub repository: String,
    /// The file, relative to the repository, checked to stay inside it.
    pub path: String,
    /// The signature's lines, 1-based and inclusive.
    pub signature: (usize, usize),
    /// The reference body's lines, 1-based and inclusive.
    pub body: (usize, usize),
    /// The body's indentation in spaces.
    pub indent: usize,
    /// pytest node ids relative to the repository's root, checked to stay inside it.
    pub tests: Vec<String>,
    pub dependency: Dependency,
    pub requirement: Requirement,
    /// 1-based line of the record in its file.
    pub record_line: usize,
}

impl ExecCase {
    /// The case's file in `repos`.
    pub fn file_in(&self, repos: &Path) -> PathBuf {
        repos.join(&self.repository).join(&self.path)
    }

    /// The reference body: the file's lines `body` (with their line ends), from `repos`.
    pub fn reference_body(&self, repos: &Path) -> Result<String, BenchError> {
        let path = self.file_in(repos);
        let text = std::fs::read_to_string(&path).map_err(|error| BenchError::Read {
            path: path.clone(),
            error,
        })?;
        let (first, last) = self.body;
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        lines
            .get(first - 1..last)
            .map(|body| body.concat())
            .ok_or_else(|| BenchError::Case {
                id: self.namespace.clone(),
                message: format!(
                    "{}: the body's lines {first}..{last} are past its end ({} lines)",
                    path.display(),
                    lines.len()
                ),
            })
    }
}

/// The cases of a file and the records that were skipped.
#[derive(Debug, Default)]
pub struct LoadedExecCases {
    pub cases: Vec<ExecCase>,
    pub problems: Vec<CaseProblem>,
}

/// The deepest body indentation a record may give (a deeper one is a broken record, not code).
const MAX_INDENT: usize = 256;

/// Whether `path`'s first record is an EvoCodeBench one (it has `namespace` and
/// `completion_path`); an unreadable file is an error.
pub fn is_exec_cases_file(path: &Path) -> Result<bool, BenchError> {
    use std::io::BufRead;
    let read = |error| BenchError::Read {
        path: path.into(),
        error,
    };
    let file = std::fs::File::open(path).map_err(read)?;
    for line in std::io::BufReader::new(file).lines() {
        let line = line.map_err(read)?;
        if line.trim().is_empty() {
            continue;
        }
        let record: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        return Ok(record.get("namespace").is_some() && record.get("completion_path").is_some());
    }
    Ok(false)
}

/// Loads every record of `path`; only an unreadable file is an error.
pub fn load_exec_cases(path: &Path) -> Result<LoadedExecCases, BenchError> {
    let loaded = load_records(
        path,
        |text, line| {
            let mut case = parse_record::<Record>(text).and_then(exec_case)?;
            case.record_line = line;
            Ok(case)
        },
        |case| Some(("namespace", &case.namespace)),
    )?;
    Ok(LoadedExecCases {
        cases: loaded.records,
        problems: loaded.problems,
    })
}

fn bad(field: &str, message: impl Into<String>) -> RecordError {
    (field.to_string(), message.into())
}

fn exec_case(r: Record) -> Result<ExecCase, RecordError> {
    if r.namespace.trim().is_empty() {
        return Err(bad("namespace", "empty"));
    }
    if !matches!(r.kind.as_str(), "function" | "method") {
        return Err(bad(
            "type",
            format!("{:?}: must be \"function\" or \"method\"", r.kind),
        ));
    }
    let (repository, path) = r
        .completion_path
        .split_once('/')
        .ok_or_else(|| bad("completion_path", "must be <repository>/<path in it>"))?;
    let repository = checked_component(repository).map_err(|e| bad("completion_path", e))?;
    let path = checked_relative(path).map_err(|e| bad("completion_path", e))?;
    if !path.ends_with(".py") {
        return Err(bad(
            "completion_path",
            format!("{path:?} is not a Python file"),
        ));
    }
    let [sig_first, sig_last] = r.signature_position;
    let [first, last] = r.body_position;
    if sig_first == 0 || sig_first > sig_last {
        return Err(bad(
            "signature_position",
            format!("[{sig_first}, {sig_last}]: must be 1-based lines, first ≤ last"),
        ));
    }
    if first <= sig_last || first > last {
        return Err(bad(
            "body_position",
            format!(
                "[{first}, {last}]: must be lines after the signature (which ends on line \
                 {sig_last}), first ≤ last"
            ),
        ));
    }
    if r.indent > MAX_INDENT {
        return Err(bad("indent", format!("{} is over {MAX_INDENT}", r.indent)));
    }
    if r.tests.is_empty() {
        return Err(bad("tests", "no test: the case cannot be judged"));
    }
    for (i, test) in r.tests.iter().enumerate() {
        let file = test.split("::").next().unwrap_or_default();
        checked_relative(file).map_err(|e| bad(&format!("tests[{i}]"), e))?;
        if test.starts_with('-') {
            return Err(bad(
                &format!("tests[{i}]"),
                "a test id cannot start with `-`",
            ));
        }
    }
    Ok(ExecCase {
        namespace: r.namespace,
        kind: r.kind,
        repository,
        path,
        signature: (sig_first, sig_last),
        body: (first, last),
        indent: r.indent,
        tests: r.tests,
        dependency: r.dependency,
        requirement: r.requirement,
        record_line: 0,
    })
}

/// One generated body, as the benchmark's completion files give it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Completion {
    pub namespace: String,
    pub completion: String,
}

/// The completions of a file (in order: a namespace's samples in the order given) and the lines
/// that were skipped.
#[derive(Debug, Default)]
pub struct LoadedCompletions {
    pub completions: Vec<Completion>,
    pub problems: Vec<CaseProblem>,
}

/// Loads a `{"namespace", "completion"}` file; only an unreadable file is an error.
pub fn load_completions(path: &Path) -> Result<LoadedCompletions, BenchError> {
    let loaded = load_records(path, |text, _| parse_record::<Completion>(text), |_| None)?;
    Ok(LoadedCompletions {
        completions: loaded.records,
        problems: loaded.problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(edit: impl FnOnce(&mut serde_json::Value)) -> String {
        let mut value = serde_json::json!({
            "namespace": "pkg.mod.f", "type": "function",
            "completion_path": "repo/pkg/mod.py",
            "signature_position": [3, 3], "body_position": [5, 7],
            "dependency": {"intra_class": [], "intra_file": ["pkg.mod.g"], "cross_file": []},
            "tests": ["tests/test_mod.py::test_f"],
            "requirement": {"Functionality": "F.", "Arguments": ":param x: int"},
            "indent": 4
        });
        edit(&mut value);
        value.to_string()
    }

    fn load(lines: &[String]) -> LoadedExecCases {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("cases.jsonl");
        std::fs::write(&path, lines.join("\n")).expect("write");
        load_exec_cases(&path).expect("readable")
    }

    #[test]
    fn a_record_loads_into_a_case() {
        let loaded = load(&[record(|_| {})]);
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        let case = &loaded.cases[0];
        assert_eq!(
            (
                case.repository.as_str(),
                case.path.as_str(),
                case.body,
                case.indent
            ),
            ("repo", "pkg/mod.py", (5, 7), 4)
        );
        assert_eq!(case.dependency.all().count(), 1);
        assert_eq!(case.record_line, 1);
    }

    #[test]
    fn bad_records_name_their_line_and_field_and_the_rest_load() {
        let lines = [
            record(|r| r["completion_path"] = "repo/../../etc/passwd.py".into()),
            record(|r| r["completion_path"] = "norepo".into()),
            record(|r| r["body_position"] = serde_json::json!([2, 7])),
            record(|r| r["body_position"] = serde_json::json!([9, 7])),
            record(|r| r["tests"] = serde_json::json!(["../outside.py::t"])),
            record(|r| r["tests"] = serde_json::json!([])),
            record(|r| r["type"] = "class".into()),
            record(|r| {
                r.as_object_mut().expect("object").remove("indent");
            }),
            record(|r| r["requirement"]["Functionality"] = 3.into()),
            "{not json".to_string(),
            record(|r| r["namespace"] = "pkg.mod.h".into()),
            record(|r| r["namespace"] = "pkg.mod.h".into()),
        ];
        let loaded = load(&lines);
        let got: Vec<(usize, &str)> = loaded
            .problems
            .iter()
            .map(|p| (p.line, p.field.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (1, "completion_path"),
                (2, "completion_path"),
                (3, "body_position"),
                (4, "body_position"),
                (5, "tests[0]"),
                (6, "tests"),
                (7, "type"),
                (8, "indent"),
                (9, "requirement.Functionality"),
                (10, "."),
                (12, "namespace"),
            ]
        );
        assert_eq!(loaded.cases.len(), 1);
        assert_eq!(loaded.cases[0].record_line, 11);
        let shown = loaded.problems[0].to_string();
        assert!(
            shown.contains("cases.jsonl:1: completion_path: "),
            "{shown}"
        );
    }

    #[test]
    fn completions_load_with_their_samples_in_order() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("completions.jsonl");
        std::fs::write(
            &path,
            "{\"namespace\": \"a\", \"completion\": \"x\"}\n{\"namespace\": \"a\"}\n\
             {\"namespace\": \"a\", \"completion\": \"y\"}\n",
        )
        .expect("write");
        let loaded = load_completions(&path).expect("readable");
        let bodies: Vec<&str> = loaded
            .completions
            .iter()
            .map(|c| c.completion.as_str())
            .collect();
        assert_eq!(bodies, ["x", "y"]);
        assert_eq!(
            (loaded.problems[0].line, loaded.problems[0].field.as_str()),
            (2, "completion")
        );
    }
}
