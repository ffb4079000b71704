//! `crossfile bench mine`: the real binary on real workspaces of every language; each case is
//! read back as a CrossCodeEval record and checked against the file on disk and the index.

use std::collections::HashSet;
use std::path::Path;

use crossfile::bench::cases::cceval::CcevalRecord;
use crossfile::config::Settings;
use crossfile::index::{Index, Progress, Snapshot};
use crossfile::lang::Language;

use crate::support::{Workspace, corpus_workspace, crossfile, read_text, stderr, stdout};

/// Runs `bench mine ROOT --out <tmp> --n N --seed S --json`; returns its summary and the file.
fn mine(root: &Path, n: usize, seed: u64, cache: &Path) -> (serde_json::Value, String) {
    let out_dir = tempfile::tempdir().expect("tempdir");
    let out = out_dir.path().join("cases.jsonl");
    let args = [
        "bench",
        "mine",
        root.to_str().expect("utf-8 path"),
        "--out",
        out.to_str().expect("utf-8 path"),
        "--n",
        &n.to_string(),
        "--seed",
        &seed.to_string(),
        "--json",
    ];
    let output = crossfile(&args, cache);
    assert!(output.status.success(), "{}", stderr(&output));
    let summary: serde_json::Value =
        serde_json::from_str(&stdout(&output)).expect("one JSON document");
    let cases = std::fs::read_to_string(&out).expect("the cases file");
    (summary, cases)
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
        let elsewhere = snapshot.definitions(&name).iter().any(|d| {
            d.path != m.file
                && snapshot
                    .file(d.path)
                    .is_some_and(|f| f.language.name() == language.name())
        });
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

/// Mines `n` cases from a corpus workspace and checks them; returns the summary and cases.
fn mine_and_check(name: &str, n: usize) -> (serde_json::Value, Vec<CcevalRecord>) {
    let root = corpus_workspace(name);
    let cache = tempfile::tempdir().expect("tempdir");
    let (summary, jsonl) = mine(&root, n, 1, cache.path());
    let cases = check_cases(&root, &jsonl, &snapshot(&root, cache.path()));
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
    let (summary, jsonl) = mine(ws.root(), 10, 1, cache);
    assert_eq!(summary["cases"], 2, "{summary}");
    assert_eq!(summary["exhausted"], true, "{summary}");
    let cases = check_cases(ws.root(), &jsonl, &snapshot(ws.root(), cache));
    let refs: Vec<&str> = cases.iter().map(|c| c.groundtruth.as_str()).collect();
    assert_eq!(refs, ["helper(1)", "helper(2)"]);
}
