//! `bench mine-history` on a repository the test makes with git: a file added by a commit gives
//! line cases with Long Code Arena's categories, the parent's tree written out as the context
//! (without the added files), the three texts making the file, merges skipped, the same bytes
//! twice.

use std::path::Path;
use std::process::Command;

use crossfile_bench::bench::cases::history::{Category, HistoryRecord};
use serde_json::Value;

use crate::bench::history::run_history;
use crate::support::crossfile;

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(repo)
        .env("GIT_AUTHOR_DATE", "2024-01-02T03:04:05Z")
        .env("GIT_COMMITTER_DATE", "2024-01-02T03:04:05Z")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn write(repo: &Path, rel: &str, text: &str) {
    let path = repo.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

const MODELS: &str = "class Store:\n    def __init__(self):\n        self.items = {}\n\n\ndef load_config(path):\n    return {}\n";

const HELPERS: &str = "def fresh_token(n):\n    return 'x' * n\n";

/// Lines of each category, in order: committed (`fresh_token` is new in this commit),
/// inproject (`Store` is in the parent's tree), infile (`summarize` defined above), common,
/// non-informative, and a line of locals only.
const SERVICE: &str = "import os\nfrom pkg.models import Store, load_config\nfrom pkg.helpers import fresh_token\n\n\ndef summarize(values):\n    total = 0\n    for value in values:\n        total += value\n    return total\n\n\ndef run(path):\n    token = fresh_token(8)\n    store = Store()\n    result = summarize([1, 2, 3])\n    print(len(str(result)))\n    print(os.path.join('a', 'b'))\n    pass\n    doubled = result + result\n    return doubled\n";

/// A repository: models first; then one commit adding the service and its helper; then a
/// branch merged with a merge commit (whose own diff adds a file).
fn history(repo: &Path) -> (String, String, String) {
    std::fs::create_dir_all(repo).expect("mkdir");
    git(repo, &["init", "-q"]);
    write(repo, "pkg/models.py", MODELS);
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "models"]);
    let parent = git(repo, &["rev-parse", "HEAD"]);
    write(repo, "pkg/service.py", SERVICE);
    write(repo, "pkg/helpers.py", HELPERS);
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "service"]);
    let commit = git(repo, &["rev-parse", "HEAD"]);
    git(repo, &["checkout", "-qb", "side"]);
    write(repo, "pkg/side.py", &functions("side", 4));
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "side"]);
    git(repo, &["checkout", "-q", "main"]);
    write(repo, "pkg/other.py", HELPERS);
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "other"]);
    git(repo, &["merge", "-q", "--no-ff", "-m", "merge", "side"]);
    let merge = git(repo, &["rev-parse", "HEAD"]);
    (parent, commit, merge)
}

fn mine(repo: &Path, dir: &Path, out: &str) -> Value {
    mine_with(repo, dir, out, &[])
}

fn mine_with(repo: &Path, dir: &Path, out: &str, extra: &[&str]) -> Value {
    let repo = repo.to_string_lossy();
    let out = dir.join(out).to_string_lossy().into_owned();
    let repos = dir.join("repos").to_string_lossy().into_owned();
    let mut args = vec![
        "bench",
        "mine-history",
        &repo,
        "--out",
        &out,
        "--repos-dir",
        &repos,
        "--min-lines",
        "5",
        "--lines-per-file",
        "20",
        "--json",
    ];
    args.extend(extra);
    let output = crossfile(&args, dir);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("json")
}

/// The mined cases, each line read as the [`HistoryRecord`] `bench run` reads.
fn records(path: &Path) -> Vec<HistoryRecord> {
    std::fs::read_to_string(path)
        .expect("cases")
        .lines()
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}", i + 1)))
        .collect()
}

#[test]
fn lines_of_an_added_file_get_their_categories_and_the_parent_tree_as_context() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("shop");
    let (parent, commit, merge) = history(&repo);
    let summary = mine(&repo, dir.path(), "cases.jsonl");
    // service, side and other: the first commit has no parent and the merge two.
    assert_eq!(summary["commits"], 3, "{summary}");
    let cases = records(&dir.path().join("cases.jsonl"));
    let of_service: Vec<&HistoryRecord> = cases
        .iter()
        .filter(|c| c.metadata.path == "pkg/service.py")
        .collect();
    assert!(!of_service.is_empty(), "{summary}");
    // side.py comes from the side branch's own commit, never from the merge's diff.
    assert!(cases.iter().any(|c| c.metadata.path == "pkg/side.py"));
    assert!(cases.iter().all(|c| c.metadata.commit != merge));
    let category_of = |text: &str| -> (Category, Vec<String>) {
        let case = of_service
            .iter()
            .find(|c| c.groundtruth == text)
            .unwrap_or_else(|| panic!("no case for {text:?}: {of_service:?}"));
        (case.metadata.category, case.metadata.identifiers.clone())
    };
    assert_eq!(
        category_of("token = fresh_token(8)"),
        (Category::Committed, vec!["fresh_token".into()])
    );
    assert_eq!(
        category_of("store = Store()"),
        (Category::Inproject, vec!["Store".into()])
    );
    assert_eq!(
        category_of("result = summarize([1, 2, 3])"),
        (Category::Infile, vec!["summarize".into()])
    );
    assert_eq!(
        category_of("print(len(str(result)))").0,
        Category::Random,
        "result is a local"
    );
    assert_eq!(
        category_of("print(os.path.join('a', 'b'))"),
        (
            Category::Common,
            vec!["print".into(), "os".into(), "path".into(), "join".into()]
        )
    );
    assert_eq!(category_of("pass").0, Category::NonInformative);
    assert_eq!(category_of("import os").0, Category::NonInformative);
    assert_eq!(category_of("return total").0, Category::Random);
    let m = &of_service[0].metadata;
    assert_eq!(m.commit, commit);
    assert_eq!(m.parent, parent);
    let folder = m.repository.as_str();
    assert_eq!(folder, format!("shop-{}", &parent[..12]));
    let context = dir.path().join("repos").join(folder);
    assert_eq!(
        std::fs::read_to_string(context.join("pkg/models.py")).expect("models"),
        MODELS
    );
    assert!(!context.join("pkg/service.py").exists(), "no leakage");
    assert!(!context.join("pkg/helpers.py").exists(), "no leakage");
    for case in &of_service {
        let text = format!("{}{}{}", case.prompt, case.groundtruth, case.right_context);
        assert_eq!(text, SERVICE);
        assert_eq!(
            case.prompt.matches('\n').count(),
            case.metadata.line as usize
        );
    }
    let again = mine(&repo, dir.path(), "again.jsonl");
    assert_eq!(again["trees_written"], 0, "folders kept: {again}");
    assert_eq!(
        std::fs::read(dir.path().join("cases.jsonl")).expect("first"),
        std::fs::read(dir.path().join("again.jsonl")).expect("second"),
        "the same bytes"
    );
}

/// A module of `n` small functions, each line its own.
fn functions(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("def {prefix}_{i}(x):\n    return x * {i} + {}\n\n\n", i + 1))
        .collect()
}

#[test]
fn moved_and_copied_files_make_no_cases_unless_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("moves");
    std::fs::create_dir_all(&repo).expect("mkdir");
    git(&repo, &["init", "-q"]);
    let engine = functions("step", 10);
    write(&repo, "pkg/models.py", MODELS);
    write(&repo, "pkg/engine.py", &engine);
    let tools = functions("tool", 10);
    write(&repo, "pkg/tools.py", &tools);
    let big = functions("big", 10);
    write(&repo, "app/big.py", &big);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "first"]);
    // A rename to another name with one of its 20 lines changed: 95 % the same.
    let runner = engine.replace("return x * 0 + 1", "return x");
    std::fs::remove_file(repo.join("pkg/engine.py")).expect("rm");
    write(&repo, "core/runner.py", &runner);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "move"]);
    // A copy under the same name in a new folder, the original kept; a sibling copied under
    // another name; a file split out of one the commit changes.
    write(&repo, "v2/runner.py", &runner);
    write(&repo, "pkg/tools_copy.py", &tools);
    write(&repo, "app/big.py", "from lib2.part import *\n");
    write(&repo, "lib2/part.py", &big);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "copy"]);
    // A file of its own, and one sharing 16 of its 20 lines with a same-named file.
    write(&repo, "pkg/fresh.py", &functions("fresh", 10));
    let mut partly: String = runner.split_inclusive("\n\n\n").take(8).collect();
    partly.push_str(&functions("other", 2));
    write(&repo, "lib/runner.py", &partly);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "new"]);

    let paths = |out: &str| -> std::collections::BTreeSet<String> {
        records(&dir.path().join(out))
            .iter()
            .map(|c| c.metadata.path.clone())
            .collect()
    };
    let summary = mine(&repo, dir.path(), "default.jsonl");
    assert_eq!(
        paths("default.jsonl"),
        ["lib/runner.py", "pkg/fresh.py"].map(String::from).into(),
        "{summary}"
    );
    assert_eq!(
        summary["skipped"]["a move or copy of a file of the parent"], 4,
        "{summary}"
    );
    let strict = mine_with(
        &repo,
        dir.path(),
        "strict.jsonl",
        &["--copy-similarity", "0.8"],
    );
    assert_eq!(
        paths("strict.jsonl"),
        ["pkg/fresh.py"].map(String::from).into(),
        "{strict}"
    );
    let kept = mine_with(&repo, dir.path(), "kept.jsonl", &["--keep-copies"]);
    assert_eq!(
        paths("kept.jsonl"),
        [
            "core/runner.py",
            "lib/runner.py",
            "lib2/part.py",
            "pkg/fresh.py",
            "pkg/tools_copy.py",
            "v2/runner.py"
        ]
        .map(String::from)
        .into(),
        "{kept}"
    );
    // A file's lines do not depend on which other files are drawn.
    let lines_of = |out: &str| -> Vec<u32> {
        records(&dir.path().join(out))
            .iter()
            .filter(|c| c.metadata.path == "pkg/fresh.py")
            .map(|c| c.metadata.line)
            .collect()
    };
    assert!(!lines_of("default.jsonl").is_empty());
    assert_eq!(lines_of("default.jsonl"), lines_of("kept.jsonl"));
}

#[test]
fn a_folder_that_is_not_a_repository_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = crossfile(
        &[
            "bench",
            "mine-history",
            &dir.path().to_string_lossy(),
            "--out",
            &dir.path().join("c.jsonl").to_string_lossy(),
            "--repos-dir",
            &dir.path().join("r").to_string_lossy(),
        ],
        dir.path(),
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not a git repository"), "{stderr}");
    assert!(!dir.path().join("c.jsonl").exists());
}

/// A module of `n` numbered constants, one per line.
fn constants(n: usize) -> String {
    (0..n).map(|i| format!("VALUE_{i} = {i}\n")).collect()
}

/// What a case's writer had lately edited: a commit that changes `pkg/models.py` far down and
/// adds `pkg/service.py`, a helper and a TypeScript file gives the service's cases the helper
/// whole and a window of the models centred on the change, as committed (the new function in
/// it), no chunk of the service itself or of another language; `recent-commit` reads them in
/// `bench run` and `recent` does not.
#[test]
fn a_case_carries_the_commits_other_edits_and_only_recent_commit_reads_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("shop");
    std::fs::create_dir_all(&repo).expect("mkdir");
    git(&repo, &["init", "-q"]);
    write(&repo, "pkg/models.py", &constants(100));
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "models"]);
    let changed = constants(100).replace(
        "VALUE_80 = 80\n",
        "VALUE_80 = 80\n\n\ndef fresh_store(size):\n    return [None] * size\n",
    );
    write(&repo, "pkg/models.py", &changed);
    write(&repo, "pkg/helpers.py", HELPERS);
    write(&repo, "web/client.ts", "export const freshToken = 1;\n");
    write(
        &repo,
        "pkg/service.py",
        "from pkg.models import fresh_store\nfrom pkg.helpers import fresh_token\n\n\ndef run():\n    store = fresh_store(4)\n    token = fresh_token(8)\n    return store, token\n",
    );
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "service"]);
    mine(&repo, dir.path(), "cases.jsonl");
    let cases = records(&dir.path().join("cases.jsonl"));
    let service: Vec<&HistoryRecord> = cases
        .iter()
        .filter(|c| c.metadata.path == "pkg/service.py")
        .collect();
    assert!(!service.is_empty(), "{cases:?}");
    for case in &service {
        let recent = &case.metadata.recent;
        let chunks: Vec<(&str, u32)> = recent.iter().map(|c| (c.path.as_str(), c.line)).collect();
        // Path order, newest first: the models' window (centred on the four new lines at
        // 81..85, shifted to end with the file's 104 lines), then the helper whole.
        assert_eq!(chunks, [("pkg/models.py", 40), ("pkg/helpers.py", 0)]);
        let models = &recent[0].text;
        assert!(models.contains("def fresh_store(size):"), "{models}");
        assert_eq!(models.lines().count(), 64);
        assert_eq!(recent[1].text, HELPERS.trim_end());
    }

    // `recent-commit` retrieves the committed text for `store = fresh_store(4)`; `recent` sees
    // nothing of the case's.
    let store = service
        .iter()
        .find(|c| c.groundtruth == "store = fresh_store(4)")
        .expect("the store line is a case");
    let one = dir.path().join("one.jsonl");
    let line = serde_json::to_string(store).expect("a record");
    std::fs::write(&one, format!("{line}\n")).expect("write");
    let out = dir.path().join("run.jsonl");
    let runs = run_history(
        dir.path(),
        [&one, &dir.path().join("repos"), &out],
        "recent-commit,recent",
        &["--n-ctx", "1024", "--max-new-tokens", "12"],
    );
    let chunks_of = |spec: &str| -> Vec<String> {
        let record = runs
            .iter()
            .find(|r| r.retriever == spec)
            .unwrap_or_else(|| panic!("no {spec} record: {runs:?}"));
        assert!(record.error.is_none(), "{record:?}");
        record.chunks.iter().map(|c| c.path.clone()).collect()
    };
    // Both share words with the lines above; the helper's few words make the higher Jaccard.
    assert_eq!(
        chunks_of("recent-commit"),
        ["pkg/helpers.py", "pkg/models.py"]
    );
    assert!(chunks_of("recent").is_empty());
}
