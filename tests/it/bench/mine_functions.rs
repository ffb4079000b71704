//! `crossfile bench mine-functions`: EvoCodeBench cases from a workspace's own functions and
//! tests, run for real (pytest under the tracer, each body in the sandbox). A small project of
//! our own gives exact counts (in microagents' DEV environment, which has pytest); microagents
//! itself gives back every one of its DEV cases; the click corpus workspace, in an environment
//! from its own pinned test requirements, gives cases that behave under `bench score` as
//! microagents' do: reference bodies pass, emptied bodies fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::bench::evocodebench::{dev_cases, env_cache, environments};
use crate::lsp::replay::tree_digest;
use crate::support::{bench_repos, corpus_dir, corpus_workspace, crossfile, stderr, stdout};

/// The environment the tests run in: microagents', made by `bench setup-env`.
fn env_dir() -> PathBuf {
    environments();
    env_cache().join("envs/evocodebench/microagents")
}

/// Mines `root` with `tests` in microagents' environment; the cases and the counts.
fn mine(root: &Path, tests: &str, out: &Path) -> (Vec<Value>, Value) {
    mine_in(root, tests, &env_dir(), out, &[])
}

/// Mines `root` with `tests` in `env`, with `extra` arguments; the cases and the counts.
fn mine_in(
    root: &Path,
    tests: &str,
    env: &Path,
    out: &Path,
    extra: &[&str],
) -> (Vec<Value>, Value) {
    let (root, env, out) = (
        root.to_string_lossy(),
        env.to_string_lossy(),
        out.to_string_lossy(),
    );
    let mut args = vec![
        "bench",
        "mine-functions",
        &root,
        "--tests",
        tests,
        "--env",
        &env,
        "--out",
        &out,
        "--jobs",
        "2",
        "--json",
    ];
    args.extend(extra);
    let output = crossfile(&args, &env_cache());
    assert!(output.status.success(), "{}", stderr(&output));
    let counts: Value = serde_json::from_str(&stdout(&output)).expect("the counts");
    let cases = std::fs::read_to_string(&*out)
        .expect("the cases")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a record"))
        .collect();
    (cases, counts)
}

const SHAPES: &str = r#"import math

from shapes.units import scale

SIDES = 4


def area(width, height):
    """The area of a rectangle."""
    product = width * height
    return scale(product)


def perimeter(width, height):
    """Not tested: nothing judges it."""
    return 2 * (width + height)


def log_only(message):
    """Its tests only call it."""
    print(message)


class Square:
    def __init__(self, side):
        self.side = side

    def diagonal(self):
        """The diagonal."""
        return self.side * math.sqrt(2)

    def corners(self):
        return SIDES
"#;

const UNITS: &str = "def scale(value):\n    return value\n";

const TESTS: &str = r#"from shapes.geometry import Square, area, log_only


def test_area():
    assert area(2, 3) == 6


def test_square():
    assert round(Square(1).diagonal(), 3) == 1.414
    assert Square(2).corners() == 4


def test_log():
    log_only("hi")


def test_broken():
    assert area(1, 1) == 2
"#;

#[test]
fn a_projects_judged_functions_become_cases_and_the_rest_are_counted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("shapes-project");
    for (rel, text) in [
        ("shapes/__init__.py", ""),
        ("shapes/geometry.py", SHAPES),
        ("shapes/units.py", UNITS),
        ("tests/test_geometry.py", TESTS),
    ] {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    let before = tree_digest(&root);
    let (cases, counts) = mine(
        &root,
        "python -m pytest -q tests",
        &dir.path().join("c.jsonl"),
    );
    let by_name: BTreeMap<&str, &Value> = cases
        .iter()
        .map(|c| (c["namespace"].as_str().expect("namespace"), c))
        .collect();
    // Judged by a passing test: area, diagonal, corners, scale (reached through area), __init__.
    let names: Vec<&str> = by_name.keys().copied().collect();
    assert_eq!(
        names,
        [
            "shapes.geometry.Square.__init__",
            "shapes.geometry.Square.corners",
            "shapes.geometry.Square.diagonal",
            "shapes.geometry.area",
            "shapes.units.scale",
        ],
        "{counts}"
    );
    let area = by_name["shapes.geometry.area"];
    assert_eq!(
        area,
        &json!({
            "namespace": "shapes.geometry.area", "type": "function",
            "completion_path": "shapes-project/shapes/geometry.py",
            "signature_position": [8, 8], "body_position": [10, 11], "indent": 4,
            "requirement": {"Functionality": "The area of a rectangle.", "Arguments": ""},
            "tests": ["tests/test_geometry.py::test_area"],
            "dependency": {"intra_class": [], "intra_file": [],
                           "cross_file": ["shapes.units.scale"]},
        })
    );
    let corners = by_name["shapes.geometry.Square.corners"];
    assert_eq!(corners["type"], "method");
    assert_eq!(
        corners["dependency"]["intra_file"],
        json!(["shapes.geometry.SIDES"])
    );
    let diagonal = by_name["shapes.geometry.Square.diagonal"];
    assert_eq!(
        diagonal["dependency"]["intra_class"],
        json!(["shapes.geometry.Square.side"])
    );
    // perimeter is reached by no test; log_only's emptied body passes its test; the failing
    // test judges nothing.
    assert_eq!(counts["cases"], 5, "{counts}");
    assert_eq!(counts["tests_run"], 4, "{counts}");
    assert_eq!(counts["tests_passed"], 3, "{counts}");
    assert_eq!(counts["unreached"], 1, "{counts}");
    assert_eq!(counts["emptied_passes"], 1, "{counts}");
    assert!(before == tree_digest(&root), "the workspace was written");
}

/// The reference body of a record, from its file under `repos`.
fn body(repos: &Path, case: &Value) -> String {
    let path = repos.join(case["completion_path"].as_str().expect("path"));
    let text = std::fs::read_to_string(path).expect("the file");
    let first = case["body_position"][0].as_u64().expect("first") as usize;
    let last = case["body_position"][1].as_u64().expect("last") as usize;
    text.split_inclusive('\n')
        .skip(first - 1)
        .take(last + 1 - first)
        .collect()
}

/// One `(namespace, completion)` per case, the completion made by `make`.
fn per_case(cases: &[Value], make: impl Fn(&Value) -> String) -> Vec<(String, String)> {
    cases
        .iter()
        .map(|c| (c["namespace"].as_str().expect("ns").to_string(), make(c)))
        .collect()
}

/// A case's body indentation.
fn pad(case: &Value) -> String {
    " ".repeat(case["indent"].as_u64().expect("indent") as usize)
}

/// `bench score` of one body per case: Pass@1.
fn pass_at_1(cases: &Path, repos: &Path, bodies: &[(String, String)], dir: &Path) -> Value {
    let predictions = dir.join("predictions.jsonl");
    let lines: Vec<String> = bodies
        .iter()
        .map(|(namespace, completion)| {
            json!({"namespace": namespace, "completion": completion}).to_string()
        })
        .collect();
    std::fs::write(&predictions, lines.join("\n") + "\n").expect("write");
    let output = crossfile(
        &[
            "bench",
            "score",
            "--format",
            "evocodebench",
            "--cases",
            &cases.to_string_lossy(),
            "--repos",
            &repos.to_string_lossy(),
            "--predictions",
            &predictions.to_string_lossy(),
            "--jobs",
            "2",
            "--json",
        ],
        &env_cache(),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let score: Value = serde_json::from_str(&stdout(&output)).expect("the score");
    score["pass_at_k"]["1"].clone()
}

#[test]
fn microagents_gives_back_its_dev_cases_and_its_mined_cases_behave() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repos = bench_repos();
    let root = repos.join("microagents");
    let out = dir.path().join("mined.jsonl");
    let (cases, counts) = mine(&root, "python -m pytest -q tests", &out);
    assert!(cases.len() >= 18, "{counts}");
    // Every DEV case of microagents: the same function, lines and indentation, one of its tests.
    let dev = std::fs::read_to_string(dev_cases()).expect("DEV cases");
    let key = |c: &Value| {
        (
            c["completion_path"].to_string(),
            c["body_position"].to_string(),
        )
    };
    let mined: BTreeMap<_, &Value> = cases.iter().map(|c| (key(c), c)).collect();
    for line in dev.lines() {
        let case: Value = serde_json::from_str(line).expect("a DEV case");
        if !case["completion_path"]
            .as_str()
            .is_some_and(|p| p.starts_with("microagents/"))
        {
            continue;
        }
        let found = mined
            .get(&key(&case))
            .unwrap_or_else(|| panic!("{} was not mined ({counts})", case["namespace"]));
        assert_eq!(found["signature_position"], case["signature_position"]);
        assert_eq!(found["indent"], case["indent"]);
        let tests = found["tests"].as_array().expect("tests");
        assert!(
            case["tests"]
                .as_array()
                .expect("tests")
                .iter()
                .any(|t| tests.contains(t)),
            "{}: {tests:?}",
            case["namespace"]
        );
    }
    // Scored as any EvoCodeBench file (a few of them: each is a run of its tests, and mining
    // ran them all already): the references pass, the emptied bodies fail.
    let scored = &cases[..cases.len().min(6)];
    let subset = dir.path().join("scored.jsonl");
    let lines: String = scored.iter().map(|c| format!("{c}\n")).collect();
    std::fs::write(&subset, lines).expect("write the scored cases");
    let references = per_case(scored, |c| body(&repos, c));
    assert_eq!(pass_at_1(&subset, &repos, &references, dir.path()), 1.0);
    let emptied = per_case(scored, |c| format!("{}return None\n", pad(c)));
    assert_eq!(pass_at_1(&subset, &repos, &emptied, dir.path()), 0.0);
}

/// The pytest environment of click, from the test requirements click pins itself.
fn click_env(dir: &Path) -> PathBuf {
    let requirements = dir.join("requirements");
    std::fs::create_dir_all(&requirements).expect("mkdir");
    let pinned = corpus_workspace("click").join("requirements/tests.txt");
    std::fs::copy(pinned, requirements.join("click.txt")).expect("click's test requirements");
    let output = crossfile(
        &[
            "bench",
            "setup-env",
            "--format",
            "evocodebench",
            "--repos",
            &corpus_dir().to_string_lossy(),
            "--requirements",
            &requirements.to_string_lossy(),
        ],
        &env_cache(),
    );
    assert!(output.status.success(), "setup-env: {}", stderr(&output));
    env_cache().join("envs/evocodebench/click")
}

#[test]
fn cases_mined_from_a_corpus_workspace_behave_the_same_way() {
    let dir = tempfile::tempdir().expect("tempdir");
    let env = click_env(dir.path());
    let root = corpus_workspace("click");
    let before = tree_digest(&root);
    let out = dir.path().join("click-cases.jsonl");
    let tests = "python -m pytest -q tests/test_parser.py tests/test_formatting.py";
    let (cases, counts) = mine_in(&root, tests, &env, &out, &["--limit", "8"]);
    assert_eq!(cases.len(), 8, "{counts}");
    for case in &cases {
        let path = case["completion_path"].as_str().expect("path");
        assert!(path.starts_with("click/src/click/"), "{case}");
        assert!(
            case["namespace"]
                .as_str()
                .is_some_and(|n| n.starts_with("click."))
        );
        assert!(!case["tests"].as_array().expect("tests").is_empty());
    }
    let repos = corpus_dir();
    let references = per_case(&cases, |c| body(&repos, c));
    assert_eq!(pass_at_1(&out, &repos, &references, dir.path()), 1.0);
    let stubs = per_case(&cases, |c| format!("{}raise NotImplementedError\n", pad(c)));
    assert_eq!(pass_at_1(&out, &repos, &stubs, dir.path()), 0.0);
    assert!(before == tree_digest(&root), "the workspace was written");
}
