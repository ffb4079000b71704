//! `bench mine-functions`: EvoCodeBench cases from any Python workspace with tests. The
//! workspace's functions ([`candidates`]) are matched to the tests that reach them, found by
//! running its test command once with a tracer ([`trace`]); a function becomes a case when its
//! reference body passes each of those tests and its emptied body (`pass`, run for real) fails
//! at least one — both through the harness, in copies, in the sandbox. The case's requirement is
//! its docstring; its dependencies are what its reference body uses of the workspace
//! ([`crate::deps`]), by EvoCodeBench's kinds.

mod candidates;
mod trace;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

pub use candidates::{Candidate, Unfit, candidates, module_name};
pub use trace::{TestTrace, Traces, trace};

use crate::deps::{Resolver, Site};
use crate::harness::{Harness, PythonEnv, Status, Trial};
use crossfile_engine::lang::Language;
use crossfile_engine::workspace::{WorkspaceSettings, discover, read_source};

/// What to mine and how.
pub struct MineFunctions<'a> {
    pub root: &'a Path,
    /// The folder name the cases' `completion_path` starts with.
    pub repository: &'a str,
    pub env: &'a PythonEnv,
    /// The shell command that runs the workspace's tests under pytest.
    pub tests: &'a str,
    /// How long the traced test run may take.
    pub trace_limit: Duration,
    pub harness: &'a Harness,
    /// Functions verified at once.
    pub jobs: usize,
    /// The tests kept per case: the most focused of those reaching it ([`focused_first`]).
    pub max_tests: usize,
    /// Which files are read.
    pub workspace: &'a WorkspaceSettings,
    /// Stop once this many cases are found (`None`: test every reached function).
    pub limit: Option<usize>,
}

/// How many functions went where.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MineReport {
    pub files: usize,
    pub functions: usize,
    /// Left out before any test: an empty or placeholder body, or a one-line layout.
    pub trivial: usize,
    pub layout: usize,
    /// Tests the command ran, and those that passed.
    pub tests_run: usize,
    pub tests_passed: usize,
    /// Functions no passing test reaches.
    pub unreached: usize,
    /// Reached, but the reference body fails a test run alone (or could not be run).
    pub reference_fails: usize,
    /// Reached, but the emptied body passes every test: the tests do not judge the body.
    pub emptied_passes: usize,
    /// Reached, but not tested: the limit of cases was reached first.
    pub not_tried: usize,
    pub cases: usize,
}

/// The cases (EvoCodeBench records, in path and line order) and the report.
pub struct Mined {
    pub records: Vec<Value>,
    pub report: MineReport,
}

/// Mines `params.root`; `on_verified(done, total)` after each function is tested.
pub fn mine_functions(
    params: &MineFunctions,
    cancel: &AtomicBool,
    on_verified: &(dyn Fn(usize, usize) + Sync),
) -> Result<Mined, String> {
    let mut report = MineReport::default();
    let discovery = discover(params.root, params.workspace)
        .map_err(|e| format!("{}: {e}", params.root.display()))?;
    let mut texts = BTreeMap::new();
    let mut found = Vec::new();
    let modules: BTreeSet<String> = discovery
        .files
        .iter()
        .filter(|f| f.language == Language::Python)
        .map(|f| module_name(&f.rel))
        .collect();
    for file in discovery
        .files
        .iter()
        .filter(|f| f.language == Language::Python)
    {
        if is_test_file(&file.rel) {
            continue;
        }
        let Ok(source) = read_source(&file.abs, params.workspace.max_file_bytes) else {
            continue;
        };
        report.files += 1;
        let (fit, unfit) = candidates(&file.rel, &source.text);
        report.functions += fit.len() + unfit.len();
        for (_, why) in &unfit {
            match why {
                Unfit::Trivial => report.trivial += 1,
                Unfit::Layout => report.layout += 1,
            }
        }
        found.extend(fit);
        texts.insert(file.rel.clone(), source.text);
    }
    let traces = trace(
        params.harness,
        params.root,
        params.env,
        params.tests,
        params.trace_limit,
        cancel,
    )?;
    report.tests_run = traces.len();
    report.tests_passed = traces.values().filter(|t| t.passed).count();
    let reaching = tests_reaching(&traces);
    let mut reached = Vec::new();
    for candidate in found {
        let key = (candidate.path.clone(), candidate.first_line);
        match reaching.get(&key) {
            Some(tests) => {
                let mut tests = focused_first(&candidate, tests, &traces);
                tests.truncate(params.max_tests);
                reached.push((candidate, tests));
            }
            None => report.unreached += 1,
        }
    }
    let verdicts = verify(params, &texts, &reached, cancel, on_verified);
    let mut records = Vec::new();
    for ((candidate, tests), verdict) in reached.iter().zip(verdicts) {
        match verdict {
            Verdict::Case => {
                let text = &texts[&candidate.path];
                records.push(record(params.repository, candidate, tests, text, &modules));
            }
            Verdict::ReferenceFails => report.reference_fails += 1,
            Verdict::EmptiedPasses => report.emptied_passes += 1,
            Verdict::NotTried => report.not_tried += 1,
        }
    }
    if let Some(limit) = params.limit {
        report.not_tried += records.len().saturating_sub(limit);
        records.truncate(limit);
    }
    report.cases = records.len();
    Ok(Mined { records, report })
}

/// Test files are where cases are judged, not where they come from.
fn is_test_file(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    rel.split('/').any(|part| part == "tests" || part == "test")
        || name.starts_with("test_")
        || name.ends_with("_test.py")
        || name == "conftest.py"
}

/// For each function (path, first line): the passing tests that call it, by node id.
fn tests_reaching(traces: &Traces) -> BTreeMap<(String, usize), BTreeSet<String>> {
    let mut reaching: BTreeMap<(String, usize), BTreeSet<String>> = BTreeMap::new();
    for (id, test) in traces.iter().filter(|(_, t)| t.passed) {
        for call in &test.calls {
            reaching.entry(call.clone()).or_default().insert(id.clone());
        }
    }
    reaching
}

/// The tests reaching `candidate`, the most focused first: a test in a file named after the
/// function's module (`test_<module>.py`), then the tests that call fewer of the workspace's
/// functions (unit tests before end-to-end ones), then by id.
fn focused_first(candidate: &Candidate, tests: &BTreeSet<String>, traces: &Traces) -> Vec<String> {
    let stem = candidate
        .path
        .rsplit('/')
        .next()
        .and_then(|name| name.strip_suffix(".py"))
        .unwrap_or_default();
    let named_after = |id: &str| {
        let file = id.split("::").next().unwrap_or(id);
        let name = file.rsplit('/').next().unwrap_or(file);
        name == format!("test_{stem}.py") || name == format!("{stem}_test.py")
    };
    let mut ranked: Vec<(bool, usize, &String)> = tests
        .iter()
        .map(|id| {
            let calls = traces.get(id).map_or(usize::MAX, |t| t.calls.len());
            (!named_after(id), calls, id)
        })
        .collect();
    ranked.sort();
    ranked.into_iter().map(|(_, _, id)| id.clone()).collect()
}

/// What testing a reached function showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Case,
    ReferenceFails,
    EmptiedPasses,
    NotTried,
}

/// Tests each reached function's reference body and emptied body, `jobs` at a time, in order,
/// until the limit of cases is found.
fn verify(
    params: &MineFunctions,
    texts: &BTreeMap<String, String>,
    reached: &[(Candidate, Vec<String>)],
    cancel: &AtomicBool,
    on_verified: &(dyn Fn(usize, usize) + Sync),
) -> Vec<Verdict> {
    let verdicts = Mutex::new(vec![Verdict::NotTried; reached.len()]);
    let (next, finished, found) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    std::thread::scope(|scope| {
        for _ in 0..params.jobs.clamp(1, reached.len().max(1)) {
            scope.spawn(|| {
                loop {
                    if params
                        .limit
                        .is_some_and(|limit| found.load(Ordering::Relaxed) >= limit)
                    {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((candidate, tests)) = reached.get(i) else {
                        break;
                    };
                    let text = &texts[&candidate.path];
                    let verdict = verdict_of(params, text, candidate, tests, cancel);
                    if verdict == Verdict::Case {
                        found.fetch_add(1, Ordering::Relaxed);
                    }
                    if let Ok(mut all) = verdicts.lock() {
                        all[i] = verdict;
                    }
                    on_verified(finished.fetch_add(1, Ordering::Relaxed) + 1, reached.len());
                }
            });
        }
    });
    verdicts.into_inner().unwrap_or_default()
}

fn verdict_of(
    params: &MineFunctions,
    text: &str,
    candidate: &Candidate,
    tests: &[String],
    cancel: &AtomicBool,
) -> Verdict {
    let run = |body: &str| {
        params.harness.run(
            &Trial {
                repository: params.root,
                file: &candidate.path,
                body: candidate.body,
                indent: candidate.indent,
                completion: body,
                tests,
                env: params.env,
            },
            cancel,
        )
    };
    if run(&reference_body(text, candidate)).status != Status::Pass {
        return Verdict::ReferenceFails;
    }
    // `pass`, run for real (the harness fails a bare `pass` body without running it).
    let emptied = format!("{}pass  # emptied\n", " ".repeat(candidate.indent));
    match run(&emptied).status {
        Status::Fail | Status::Timeout => Verdict::Case,
        Status::Pass => Verdict::EmptiedPasses,
        Status::Error => Verdict::ReferenceFails,
    }
}

/// The candidate's body lines, with their line ends.
fn reference_body(text: &str, candidate: &Candidate) -> String {
    let (first, last) = candidate.body;
    text.split_inclusive('\n')
        .skip(first - 1)
        .take(last + 1 - first)
        .collect()
}

/// The EvoCodeBench record of a case.
fn record(
    repository: &str,
    candidate: &Candidate,
    tests: &[String],
    text: &str,
    modules: &BTreeSet<String>,
) -> Value {
    let dependency = dependencies(candidate, text, modules);
    json!({
        "namespace": candidate.namespace,
        "type": candidate.kind,
        "completion_path": format!("{repository}/{}", candidate.path),
        "signature_position": [candidate.signature.0, candidate.signature.1],
        "body_position": [candidate.body.0, candidate.body.1],
        "dependency": dependency,
        "requirement": {
            "Functionality": candidate.docstring.clone().unwrap_or_default(),
            "Arguments": "",
        },
        "tests": tests,
        "indent": candidate.indent,
    })
}

/// What the reference body uses of the workspace, by kind: the class's own members
/// (`intra_class`), the file's names (`intra_file`), other modules of the workspace
/// (`cross_file`); the standard library and installed packages are not dependencies.
fn dependencies(candidate: &Candidate, text: &str, modules: &BTreeSet<String>) -> Value {
    let site = Site {
        file_text: text,
        signature: candidate.signature,
        namespace: &candidate.namespace,
    };
    let used = Resolver::new(&site)
        .map(|r| r.dependencies(&reference_body(text, candidate)))
        .unwrap_or_default();
    let module = module_name(&candidate.path);
    let class = (candidate.kind == "method")
        .then(|| candidate.namespace.rsplit('.').nth(1))
        .flatten();
    let (mut intra_class, mut intra_file, mut cross_file) = (Vec::new(), Vec::new(), Vec::new());
    for name in used {
        let owner = name.rsplit_once('.').map_or("", |(owner, _)| owner);
        if class.is_some_and(|c| owner == format!("{module}.{c}")) {
            intra_class.push(name);
        } else if owner == module {
            intra_file.push(name);
        } else if modules.contains(owner) {
            cross_file.push(name);
        }
    }
    json!({"intra_class": intra_class, "intra_file": intra_file, "cross_file": cross_file})
}
