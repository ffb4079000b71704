//! Loading and validating case records: good records load, each kind of bad record is reported
//! with its line and field while the others still load.

use std::path::Path;

use crate::bench::cases::history::Category;
use crate::bench::{CaseFormat, Target, load_cases};
use crossfile_engine::lang::Language;

fn cceval_line(task: &str, file: &str, prompt: &str, gt: &str, right: &str) -> String {
    let line = prompt.matches('\n').count();
    serde_json::json!({
        "prompt": prompt, "groundtruth": gt, "right_context": right,
        "metadata": {"task_id": task, "repository": "owner-repo-abc1234", "file": file,
                     "context_start_lineno": 0, "groundtruth_start_lineno": line,
                     "right_context_start_lineno": line + 1},
        "crossfile_context": {"text": "# x", "list": [{"retrieved_chunk": "def f(): pass", "filename": "a.py", "score": 1.5}]},
    })
    .to_string()
}

fn write(dir: &Path, lines: &[String]) -> std::path::PathBuf {
    let path = dir.join("cases.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    path
}

#[test]
fn good_cceval_records_load_with_their_cursor_and_context() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(
        dir.path(),
        &[cceval_line(
            "t/1",
            "pkg/mod.py",
            "import os\nx = ",
            "os.getcwd()",
            "\nprint(x)\n",
        )],
    );
    let loaded = load_cases(&path, CaseFormat::Cceval, 1 << 20).expect("load");
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let case = &loaded.cases[0];
    assert_eq!(
        (case.id.as_str(), case.line, case.language, case.target),
        ("t/1", 1, Language::Python, Target::Line)
    );
    assert_eq!(case.reference, "os.getcwd()");
    assert_eq!(case.record_line, 1);
    let provided = case.provided.as_ref().expect("crossfile_context");
    assert_eq!(
        (provided[0].path.as_str(), provided[0].score),
        ("a.py", 1.5)
    );
}

#[test]
fn each_bad_record_is_reported_by_line_and_field_and_the_rest_load() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = cceval_line("t/ok", "a.py", "x = ", "1", "\n");
    let truncated = good[..good.len() / 2].to_string();
    let missing: String = {
        let mut v: serde_json::Value = serde_json::from_str(&good).expect("json");
        v["metadata"]
            .as_object_mut()
            .expect("object")
            .remove("file");
        v.to_string()
    };
    let wrong_type = good.replace(
        "\"groundtruth_start_lineno\":0",
        "\"groundtruth_start_lineno\":\"zero\"",
    );
    assert_ne!(wrong_type, good);
    let escaping = cceval_line("t/esc", "../../etc/passwd.py", "x = ", "1", "\n");
    let not_code = cceval_line("t/md", "README.md", "x = ", "1", "\n");
    let wrong_line = good.replace(
        "\"groundtruth_start_lineno\":0",
        "\"groundtruth_start_lineno\":3",
    );
    let newline_gt = cceval_line("t/nl", "a.py", "x = ", "1\n2", "\n");
    let duplicate = good.clone();
    let path = write(
        dir.path(),
        &[
            good, truncated, missing, wrong_type, escaping, not_code, wrong_line, newline_gt,
            duplicate,
        ],
    );
    let loaded = load_cases(&path, CaseFormat::Cceval, 1 << 20).expect("load");
    assert_eq!(loaded.cases.len(), 1);
    let found: Vec<(usize, &str)> = loaded
        .problems
        .iter()
        .map(|p| (p.line, p.field.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (2, "."),
            (3, "metadata.file"),
            (4, "metadata.groundtruth_start_lineno"),
            (5, "metadata.file"),
            (6, "metadata.file"),
            (7, "metadata.groundtruth_start_lineno"),
            (8, "groundtruth"),
            (9, "."),
        ]
    );
    let shown = loaded.problems[3].to_string();
    assert!(
        shown.starts_with(&format!("{}:5: metadata.file:", path.display())) && shown.contains(".."),
        "{shown}"
    );
}

#[test]
fn repoeval_ids_join_the_path_and_line_and_function_level_is_a_body() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = |lineno: u32, function: Option<&str>, parts: &[&str]| {
        let mut metadata = serde_json::json!({
            "task_id": "repo/idx", "ground_truth": "    return 1\n", "fpath_tuple": parts,
            "context_start_lineno": 0, "lineno": lineno,
        });
        if let Some(f) = function {
            metadata["function_name"] = f.into();
        }
        serde_json::json!({"prompt": "def f():\n", "metadata": metadata}).to_string()
    };
    let path = write(
        dir.path(),
        &[
            record(4, Some("f"), &["repo", "src", "m.py"]),
            record(9, None, &["repo", "src", "m.py"]),
            record(1, None, &["repo", "..", "m.py"]),
            record(1, None, &["repo"]),
        ],
    );
    let loaded = load_cases(&path, CaseFormat::Repoeval, 1 << 20).expect("load");
    let ids: Vec<(&str, Target)> = loaded
        .cases
        .iter()
        .map(|c| (c.id.as_str(), c.target))
        .collect();
    assert_eq!(
        ids,
        [
            ("repo/src/m.py:4", Target::Function),
            ("repo/src/m.py:9", Target::Line)
        ]
    );
    assert_eq!(loaded.cases[0].path, "src/m.py");
    assert_eq!(loaded.cases[0].repository, "repo");
    let fields: Vec<&str> = loaded.problems.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(fields, ["metadata.fpath_tuple[1]", "metadata.fpath_tuple"]);
}

#[test]
fn an_unreadable_cases_file_is_an_error_naming_it() {
    let e = load_cases(
        Path::new("/nonexistent/cases.jsonl"),
        CaseFormat::Cceval,
        1 << 20,
    )
    .expect_err("missing file");
    assert!(e.to_string().contains("/nonexistent/cases.jsonl"), "{e}");
}

#[test]
fn a_case_over_the_file_bound_is_skipped_and_named_and_the_rest_load() {
    let dir = tempfile::tempdir().expect("tempdir");
    let small = cceval_line("t/small", "a.py", "x = ", "1", "\n");
    let big_prompt = "y = 2\n".repeat(200) + "x = ";
    let big = cceval_line("t/big", "a.py", &big_prompt, "1", "\n");
    let path = write(dir.path(), &[small, big.clone()]);
    // The big case's file text is 1,206 bytes; its record fits 4 × 1,000 bytes.
    let loaded = load_cases(&path, CaseFormat::Cceval, 1_000).expect("load");
    let ids: Vec<&str> = loaded.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["t/small"]);
    let problem = &loaded.problems[0];
    assert_eq!((problem.line, problem.field.as_str()), (2, "prompt"));
    assert!(
        problem.message.contains("1206 bytes")
            && problem.message.contains("workspace.max_file_bytes (1000)"),
        "{problem}"
    );
    // A record longer than 4 × the bound is not even parsed.
    let loaded = load_cases(&path, CaseFormat::Cceval, 300).expect("load");
    let problem = &loaded.problems[0];
    assert_eq!((problem.line, problem.field.as_str()), (2, "."));
    assert!(
        problem
            .message
            .contains(&format!("the record is {} bytes", big.len())),
        "{problem}"
    );
    // Under a larger bound both load.
    let loaded = load_cases(&path, CaseFormat::Cceval, 1 << 20).expect("load");
    assert_eq!(loaded.cases.len(), 2, "{:?}", loaded.problems);
}

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
const PARENT: &str = "89abcdef0123456789abcdef0123456789abcdef";

/// A history record whose fields can be spoiled one at a time.
fn history_record(task: &str, spoil: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut record = serde_json::json!({
        "prompt": "import util\n\ndef f():\n    ", "groundtruth": "return util.helper(1)",
        "right_context": "\n\nf()\n",
        "metadata": {"task_id": task, "repository": "repo-0123456", "commit": COMMIT,
                     "parent": PARENT, "path": "pkg/added.py", "line": 3,
                     "category": "inproject", "identifiers": ["helper"]},
    });
    spoil(&mut record);
    record.to_string()
}

#[test]
fn good_history_records_load_as_cceval_lines_with_their_category() {
    let dir = tempfile::tempdir().expect("tempdir");
    let commited = history_record("h/2", |r| {
        r["metadata"]["category"] = "commited".into();
        r["metadata"]["recent"] = serde_json::json!([
            {"path": "pkg/util.py", "line": 4, "text": "def helper(n):\n    return n"},
            {"path": "pkg/other.py", "line": 0, "text": "X = 1"},
        ]);
    });
    let path = write(dir.path(), &[history_record("h/1", |_| {}), commited]);
    assert_eq!(
        CaseFormat::detect(&path).expect("read"),
        Some(CaseFormat::History)
    );
    let loaded = load_cases(&path, CaseFormat::History, 1 << 20).expect("load");
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let case = &loaded.cases[0];
    assert_eq!(
        (case.id.as_str(), case.format, case.target, case.language),
        ("h/1", CaseFormat::History, Target::Line, Language::Python)
    );
    assert_eq!(
        (case.repository.as_str(), case.path.as_str(), case.line),
        ("repo-0123456", "pkg/added.py", 3)
    );
    assert_eq!(case.reference, "return util.helper(1)");
    assert_eq!(case.right_context.as_deref(), Some("\n\nf()\n"));
    assert_eq!(case.category, Some(Category::Inproject));
    assert_eq!(case.identifiers, ["helper"]);
    assert_eq!(case.provided, None);
    assert!(case.recent.is_empty(), "no `recent` field, nothing recent");
    let committed = &loaded.cases[1];
    assert_eq!(
        committed.category,
        Some(Category::Committed),
        "Long Code Arena's spelling"
    );
    let recent: Vec<(&str, std::ops::Range<u32>, &str)> = committed
        .recent
        .iter()
        .map(|h| (h.path.as_str(), h.lines.clone(), h.text.as_str()))
        .collect();
    assert_eq!(
        recent,
        [
            ("pkg/util.py", 4..6, "def helper(n):\n    return n"),
            ("pkg/other.py", 0..1, "X = 1"),
        ],
        "in the record's order (newest first), each chunk's lines from its text"
    );
    // Other formats have no category.
    let cceval = write(dir.path(), &[cceval_line("t/1", "a.py", "x = ", "1", "\n")]);
    assert_eq!(
        CaseFormat::detect(&cceval).expect("read"),
        Some(CaseFormat::Cceval)
    );
    let loaded = load_cases(&cceval, CaseFormat::Cceval, 1 << 20).expect("load");
    assert_eq!(loaded.cases[0].category, None);
}

#[test]
fn each_bad_history_field_is_named() {
    type Spoil = fn(&mut serde_json::Value);
    let spoils: [(&str, Spoil); 14] = [
        ("metadata.task_id", |r| r["metadata"]["task_id"] = "".into()),
        ("metadata.repository", |r| {
            r["metadata"]["repository"] = "a/b".into()
        }),
        ("metadata.path", |r| {
            r["metadata"]["path"] = "../outside.py".into()
        }),
        ("metadata.path", |r| {
            r["metadata"]["path"] = "/abs.py".into()
        }),
        ("metadata.path", |r| {
            r["metadata"]["path"] = "notes.md".into()
        }),
        ("groundtruth", |r| r["groundtruth"] = "a\nb".into()),
        ("right_context", |r| r["right_context"] = "more\n".into()),
        ("metadata.line", |r| r["metadata"]["line"] = 2.into()),
        ("metadata.commit", |r| {
            r["metadata"]["commit"] = COMMIT.to_uppercase().into()
        }),
        ("metadata.parent", |r| {
            r["metadata"]["parent"] = "89abcdef".into()
        }),
        ("metadata.category", |r| {
            r["metadata"]["category"] = "sometimes".into()
        }),
        ("metadata.identifiers", |r| {
            r["metadata"]
                .as_object_mut()
                .expect("object")
                .remove("identifiers");
        }),
        ("metadata.line", |r| r["metadata"]["line"] = (-1).into()),
        ("metadata.recent[0].path", |r| {
            r["metadata"]["recent"] =
                serde_json::json!([{"path": "../outside.py", "line": 0, "text": "x = 1"}]);
        }),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let mut lines = vec![history_record("h/ok", |_| {})];
    lines.extend(
        spoils
            .iter()
            .enumerate()
            .map(|(i, (_, spoil))| history_record(&format!("h/{i}"), spoil)),
    );
    let path = write(dir.path(), &lines);
    let loaded = load_cases(&path, CaseFormat::History, 1 << 20).expect("load");
    let ids: Vec<&str> = loaded.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["h/ok"]);
    let found: Vec<(usize, &str)> = loaded
        .problems
        .iter()
        .map(|p| (p.line, p.field.as_str()))
        .collect();
    let expected: Vec<(usize, &str)> = spoils
        .iter()
        .enumerate()
        .map(|(i, (field, _))| (i + 2, *field))
        .collect();
    assert_eq!(found, expected, "{:#?}", loaded.problems);
    let commit = &loaded.problems[8];
    assert!(
        commit.message.contains("40 lowercase hex digits"),
        "{commit}"
    );
    let line = &loaded.problems[7];
    assert!(
        line.message.contains("is 2 but the prompt ends on line 3"),
        "{line}"
    );
}
