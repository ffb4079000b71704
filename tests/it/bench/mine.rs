//! `crossfile bench mine`: the real binary on real workspaces of every language; each case is
//! read back as a CrossCodeEval record and checked against the file on disk and the index; the
//! quality filters and the leak audit on a workspace written to hold one cursor for each.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crossfile_bench::bench::cases::cceval::CcevalRecord;
use crossfile_bench::bench::{CaseFormat, load_cases};
use crossfile_bench::mine::lines::reference_tokens;
use crossfile_engine::config::Settings;
use crossfile_engine::index::{Index, Progress, Snapshot};
use crossfile_engine::lang::Language;
use serde_json::json;

use crate::support::{Workspace, corpus_workspace, crossfile, read_text, stderr, stdout};

/// Runs `bench mine ROOT --out <tmp> --n N --seed S --json`; returns its summary and the file.
fn mine(root: &Path, n: usize, seed: u64, cache: &Path) -> (serde_json::Value, String) {
    mine_with(root, n, seed, cache, &[])
}

/// [`mine`] with `extra` flags.
fn mine_with(
    root: &Path,
    n: usize,
    seed: u64,
    cache: &Path,
    extra: &[&str],
) -> (serde_json::Value, String) {
    let out_dir = tempfile::tempdir().expect("tempdir");
    let out = out_dir.path().join("cases.jsonl");
    let (n, seed) = (n.to_string(), seed.to_string());
    let mut args = vec![
        "bench",
        "mine",
        root.to_str().expect("utf-8 path"),
        "--out",
        out.to_str().expect("utf-8 path"),
        "--n",
        &n,
        "--seed",
        &seed,
        "--json",
    ];
    args.extend_from_slice(extra);
    let output = crossfile(&args, cache);
    assert!(output.status.success(), "{}", stderr(&output));
    let summary: serde_json::Value =
        serde_json::from_str(&stdout(&output)).expect("one JSON document");
    assert!(
        stderr(&output).contains(&format!(
            "filters: {} candidate cursors",
            summary["candidates"]
        )),
        "{}",
        stderr(&output)
    );
    let cases = std::fs::read_to_string(&out).expect("the cases file");
    (summary, cases)
}

/// Each line's `metadata.leak` (empty when absent).
fn leaks_of(jsonl: &str) -> Vec<Vec<String>> {
    jsonl
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            value["metadata"]
                .get("leak")
                .map(|l| serde_json::from_value(l.clone()).expect("a list of paths"))
                .unwrap_or_default()
        })
        .collect()
}

fn snapshot(root: &Path, cache: &Path) -> std::sync::Arc<Snapshot> {
    let mut settings = Settings::default();
    settings.index.cache_dir = cache.to_path_buf();
    let (index, _) = Index::open_or_build(root, &settings.index, &Progress::none()).expect("index");
    index.snapshot()
}

/// Parses every line as a CrossCodeEval record and checks the miner's promises; returns them.
fn check_cases(root: &Path, jsonl: &str, snapshot: &Snapshot) -> Vec<CcevalRecord> {
    let repository = root
        .file_name()
        .and_then(|n| n.to_str())
        .expect("a folder name");
    let mut ids = HashSet::new();
    let mut cursors = HashSet::new();
    let mut cases = Vec::new();
    for (i, line) in jsonl.lines().enumerate() {
        let case: CcevalRecord =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let m = &case.metadata;
        let at = format!("{} ({}:{})", m.task_id, m.file, m.groundtruth_start_lineno);
        assert_eq!(m.repository, repository, "{at}");
        assert!(case.crossfile_context.is_none(), "{at}");
        let text = read_text(&root.join(&m.file));
        assert!(
            format!("{}{}{}", case.prompt, case.groundtruth, case.right_context) == text,
            "{at}: prompt + groundtruth + right_context is not the file"
        );
        assert_eq!(m.context_start_lineno, 0, "{at}");
        assert_eq!(
            m.groundtruth_start_lineno as usize,
            case.prompt.matches('\n').count(),
            "{at}"
        );
        assert_eq!(
            m.right_context_start_lineno,
            m.groundtruth_start_lineno + 1,
            "{at}"
        );
        assert!(!case.groundtruth.contains('\n'), "{at}");
        assert!(
            case.right_context.is_empty() || case.right_context.starts_with('\n'),
            "{at}"
        );
        assert!(
            case.groundtruth
                .chars()
                .filter(|c| !c.is_whitespace())
                .count()
                >= 3,
            "{at}: trivial reference {:?}",
            case.groundtruth
        );
        assert!(ids.insert(m.task_id.clone()), "{at}: duplicate task id");
        assert!(
            cursors.insert((m.file.clone(), m.groundtruth_start_lineno)),
            "{at}: duplicate cursor"
        );

        // The task id names the file's language.
        let language = Language::from_path(Path::new(&m.file)).expect("a source file");
        let (prefix, k) = m.task_id.split_once('/').expect("mined_<language>/<k>");
        assert_eq!(prefix, format!("mined_{}", language.name()), "{at}");
        assert!(k.parse::<u32>().is_ok(), "{at}");

        // The identifier rule, checked with the index's own symbol table and imports.
        let name: String = case
            .groundtruth
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        assert!(!name.is_empty(), "{at}: {:?}", case.groundtruth);
        assert!(!language.is_keyword(&name), "{at}: {name}");
        let file = snapshot.file(&m.file).expect("an indexed file");
        assert!(
            !file.outline.symbols.iter().any(|s| s.name == name),
            "{at}: {name} is defined in its own file"
        );
        let elsewhere = snapshot
            .definitions(&name)
            .iter()
            .any(|d| d.file.path != m.file && d.file.language.name() == language.name());
        let imported = file
            .outline
            .imports
            .iter()
            .any(|imp| imp.names.contains(&name));
        assert!(
            elsewhere || imported,
            "{at}: {name} is neither defined in another file nor imported"
        );
        // Python and TypeScript module scopes need imports: a bare name must be imported.
        let member = case.prompt.trim_end().ends_with('.');
        if matches!(language.name(), "python" | "typescript") && !member {
            assert!(imported, "{at}: the bare name {name} is not imported");
        }
        cases.push(case);
    }
    cases
}

/// Checks the default filters and the leak audit on mined cases: 10 prompt lines, 3 to 30
/// reference tokens, no reference twice in a file's cases, and `metadata.leak` naming exactly the
/// other indexed files that hold a reference of 20 characters or more.
fn check_default_filters(jsonl: &str, cases: &[CcevalRecord], snapshot: &Snapshot) {
    let leaks = leaks_of(jsonl);
    let mut references = HashSet::new();
    for (case, leak) in cases.iter().zip(&leaks) {
        let m = &case.metadata;
        let at = format!("{} ({}:{})", m.task_id, m.file, m.groundtruth_start_lineno);
        assert!(m.groundtruth_start_lineno >= 10, "{at}: short prompt");
        let tokens = reference_tokens(&case.groundtruth);
        assert!((3..=30).contains(&tokens), "{at}: {tokens} tokens");
        let reference = case.groundtruth.trim();
        assert!(
            references.insert((m.file.clone(), reference.to_owned())),
            "{at}: duplicate reference {reference:?}"
        );
        let holders: Vec<String> = if reference.chars().count() >= 20 {
            snapshot
                .files()
                .filter(|f| f.path != m.file && f.text.contains(reference))
                .map(|f| f.path.clone())
                .collect()
        } else {
            Vec::new()
        };
        assert_eq!(leak, &holders, "{at}: {reference:?}");
    }
}

/// Mines `n` cases from a corpus workspace and checks them; returns the summary and cases.
fn mine_and_check(name: &str, n: usize) -> (serde_json::Value, Vec<CcevalRecord>) {
    let root = corpus_workspace(name);
    let cache = tempfile::tempdir().expect("tempdir");
    let (summary, jsonl) = mine(&root, n, 1, cache.path());
    let snapshot = snapshot(&root, cache.path());
    let cases = check_cases(&root, &jsonl, &snapshot);
    check_default_filters(&jsonl, &cases, &snapshot);
    let flagged = leaks_of(&jsonl).iter().filter(|l| !l.is_empty()).count();
    assert_eq!(summary["leaks"], flagged, "{name}: {summary}");
    assert_eq!(summary["cases"], cases.len(), "{name}: {summary}");
    assert_eq!(cases.len(), n, "{name}: {summary}");
    let files: HashSet<&str> = cases.iter().map(|c| c.metadata.file.as_str()).collect();
    assert!(
        files.len() >= 15,
        "{name}: the cases come from only {} files",
        files.len()
    );
    (summary, cases)
}

#[test]
fn python_cases_from_click() {
    let (summary, _) = mine_and_check("click", 60);
    assert_eq!(summary["languages"], serde_json::json!({"python": 60}));
}

#[test]
fn java_cases_from_cordova_android() {
    // Its one TypeScript file is a declaration file (`types/index.d.ts`), which gives no cases.
    let (summary, _) = mine_and_check("cordova-android", 60);
    assert_eq!(summary["languages"], serde_json::json!({"java": 60}));
}

#[test]
fn typescript_cases_from_mobx() {
    let (summary, _) = mine_and_check("mobx", 60);
    assert_eq!(summary["languages"], serde_json::json!({"typescript": 60}));
}

#[test]
fn csharp_and_python_cases_from_pythonnet_take_turns() {
    let (summary, _) = mine_and_check("pythonnet", 60);
    assert_eq!(
        summary["languages"],
        serde_json::json!({"python": 30, "csharp": 30})
    );
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_another_seed_differs() {
    let root = corpus_workspace("click");
    let (cache_a, cache_b) = (
        tempfile::tempdir().expect("tmp"),
        tempfile::tempdir().expect("tmp"),
    );
    let (_, first) = mine(&root, 40, 7, cache_a.path());
    let (_, again) = mine(&root, 40, 7, cache_b.path());
    assert!(first == again, "two runs with seed 7 differ");
    let (_, other) = mine(&root, 40, 8, cache_a.path());
    assert_ne!(first, other, "seeds 7 and 8 give the same cases");
    assert_eq!(other.lines().count(), 40);
}

#[test]
fn a_single_file_workspace_gives_no_cases_and_says_why() {
    let ws = Workspace::new(
        "//- only.py\nfrom os import path\n\ndef f():\n    return g(path)\n\ndef g(x):\n    return f()\n",
    );
    let out = ws.root().join("cases.jsonl");
    let args = [
        "bench",
        "mine",
        ws.root().to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
    ];
    let output = crossfile(&args, ws.cache.path());
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("no qualifying cursors"),
        "{}",
        stderr(&output)
    );
    assert!(
        stdout(&output).starts_with("0 cases"),
        "{}",
        stdout(&output)
    );
    assert_eq!(std::fs::read_to_string(&out).expect("the cases file"), "");
}

#[test]
fn fewer_qualifying_cursors_than_asked_writes_all_and_says_so() {
    let ws = Workspace::new(
        "//- a.py\ndef helper(x):\n    return x\n//- b.py\nfrom a import helper\n\nvalue = helper(1)\nother = helper(2)\n",
    );
    let cache = ws.cache.path();
    let (summary, jsonl) = mine_with(ws.root(), 10, 1, cache, &["--min-prompt-lines", "0"]);
    assert_eq!(summary["cases"], 2, "{summary}");
    assert_eq!(summary["exhausted"], true, "{summary}");
    let cases = check_cases(ws.root(), &jsonl, &snapshot(ws.root(), cache));
    let refs: Vec<&str> = cases.iter().map(|c| c.groundtruth.as_str()).collect();
    assert_eq!(refs, ["helper(1)", "helper(2)"]);
}

/// One candidate cursor for each filter: `use.py` imports `helper` and `compute_total` from
/// `lib.py`; `notes.py` holds one reference verbatim (and gives no cursor: its `compute_total`
/// is not imported).
const FILTERED: &str = "\
//- lib.py
def helper(*args):
    return args


def compute_total(a, b):
    return a + b
//- notes.py
def sample(first_value, second_value):
    return compute_total(first_value, second_value)
//- use.py
from lib import helper, compute_total
early = helper(0)
n2 = 2
n3 = 3
n4 = 4
n5 = 5
n6 = 6
n7 = 7
n8 = 8
n9 = 9
callback = helper
wide = helper(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
a = helper(7)
b = helper(7)  
result = compute_total(first_value, second_value)
value = helper(42)
";

/// The cursor lines of `use.py` among the cases, with each case's `metadata.leak`.
fn lines_and_leaks(jsonl: &str) -> Vec<(u32, Vec<String>)> {
    jsonl
        .lines()
        .zip(leaks_of(jsonl))
        .map(|(line, leak)| {
            let case: CcevalRecord = serde_json::from_str(line).expect("a record");
            assert_eq!(case.metadata.file, "use.py");
            (case.metadata.groundtruth_start_lineno, leak)
        })
        .collect()
}

#[test]
fn each_filter_drops_exactly_its_cursors_and_the_audit_flags_the_leaked_reference() {
    let ws = Workspace::new(FILTERED);
    let cache = ws.cache.path();
    let leaked = vec!["notes.py".to_owned()];

    // Defaults: line 1 has 1 line above it, `helper` is 1 token, `helper(1, …, 16)` 34, lines
    // 12 and 13 have the same reference (13's trailing spaces trimmed); 14 is kept, flagged.
    let (summary, jsonl) = mine(ws.root(), 100, 1, cache);
    assert_eq!(summary["candidates"], 7, "{summary}");
    assert_eq!(
        summary["dropped"],
        json!({"short_prompt": 1, "few_reference_tokens": 1, "many_reference_tokens": 1,
               "duplicate_reference": 2, "leak": 0}),
        "{summary}"
    );
    assert_eq!(summary["leaks"], 1, "{summary}");
    assert_eq!(summary["cases"], 2, "{summary}");
    assert_eq!(
        lines_and_leaks(&jsonl),
        [(14, leaked.clone()), (15, Vec::new())]
    );
    check_cases(ws.root(), &jsonl, &snapshot(ws.root(), cache));

    // Each filter turned off or moved keeps its cursors, and only those.
    let off = |flags: &[&str]| {
        let (summary, jsonl) = mine_with(ws.root(), 100, 1, cache, flags);
        let lines: Vec<u32> = lines_and_leaks(&jsonl).iter().map(|(l, _)| *l).collect();
        (summary, lines)
    };
    assert_eq!(off(&["--min-prompt-lines", "1"]).1, [1, 14, 15]);
    assert_eq!(off(&["--min-reference-tokens", "1"]).1, [10, 14, 15]);
    assert_eq!(off(&["--max-reference-tokens", "34"]).1, [11, 14, 15]);
    assert_eq!(off(&["--max-reference-tokens", "33"]).1, [14, 15]);
    assert_eq!(off(&["--allow-duplicate-references"]).1, [12, 13, 14, 15]);
    let (summary, all) = off(&[
        "--min-prompt-lines",
        "0",
        "--min-reference-tokens",
        "0",
        "--max-reference-tokens",
        "1000",
        "--allow-duplicate-references",
    ]);
    assert_eq!(all, [1, 10, 11, 12, 13, 14, 15]);
    assert_eq!(
        summary["dropped"],
        json!({"short_prompt": 0, "few_reference_tokens": 0, "many_reference_tokens": 0,
               "duplicate_reference": 0, "leak": 0}),
        "{summary}"
    );

    // The leak audit: dropped on request, and only references of the minimum length audited
    // (`compute_total(first_value, second_value)` has 40 characters).
    let (summary, jsonl) = mine_with(ws.root(), 100, 1, cache, &["--drop-leaks"]);
    assert_eq!(lines_and_leaks(&jsonl), [(15, Vec::new())]);
    assert_eq!(summary["dropped"]["leak"], 1, "{summary}");
    assert_eq!(summary["leaks"], 0, "{summary}");
    let (_, jsonl) = mine_with(ws.root(), 100, 1, cache, &["--min-leak-chars", "40"]);
    assert_eq!(lines_and_leaks(&jsonl), [(14, leaked), (15, Vec::new())]);
    let (summary, jsonl) = mine_with(ws.root(), 100, 1, cache, &["--min-leak-chars", "41"]);
    assert_eq!(
        lines_and_leaks(&jsonl),
        [(14, Vec::new()), (15, Vec::new())]
    );
    assert_eq!(summary["leaks"], 0, "{summary}");
}

#[test]
fn cases_with_a_leak_load_as_cceval_and_score_through_bench_score() {
    let ws = Workspace::new(FILTERED);
    let cache = ws.cache.path();
    let out = ws.root().join("cases.jsonl");
    let args = [
        "bench",
        "mine",
        ws.root().to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
    ];
    let output = crossfile(&args, cache);
    assert!(output.status.success(), "{}", stderr(&output));
    let jsonl = std::fs::read_to_string(&out).expect("the cases file");
    assert!(jsonl.contains(r#""leak":["notes.py"]"#), "{jsonl}");

    // `bench run --format cceval` loads cases with this function.
    let loaded = load_cases(&out, CaseFormat::Cceval, 1 << 20).expect("the cases load");
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    assert_eq!(loaded.cases.len(), 2);

    // The real binary scores the references as predictions: every case found, all exact.
    let predictions = ws.root().join("predictions.jsonl");
    let lines: Vec<String> = jsonl
        .lines()
        .map(|line| {
            let case: CcevalRecord = serde_json::from_str(line).expect("a record");
            json!({"task_id": case.metadata.task_id, "pred": case.groundtruth}).to_string()
        })
        .collect();
    std::fs::write(&predictions, lines.join("\n") + "\n").expect("write");
    let output = crossfile(
        &[
            "bench",
            "score",
            "--format",
            "cceval",
            "--cases",
            out.to_str().expect("utf-8"),
            "--predictions",
            predictions.to_str().expect("utf-8"),
            "--json",
        ],
        cache,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let score: HashMap<String, serde_json::Value> =
        serde_json::from_str(&stdout(&output)).expect("the score");
    assert_eq!(score["python"]["total"].as_f64(), Some(2.0), "{score:?}");
    assert_eq!(score["python"]["em"].as_f64(), Some(100.0), "{score:?}");
}
