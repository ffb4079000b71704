//! Inputs that lie, are special or are huge: a case whose file is missing, FIFOs named like
//! source, oversized records and files, malformed lines and impossible metrics.

use super::*;
use crate::support::{Workspace, stderr};

#[test]
fn a_crosscodeeval_case_whose_file_is_missing_is_an_error_not_a_score() {
    let dir = tempfile::tempdir().expect("tempdir");
    let original = dev_cases(dir.path(), 1);
    let mut record: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&original).expect("read").trim())
            .expect("JSON");
    let file = record["metadata"]["file"]
        .as_str()
        .expect("metadata.file")
        .to_string();
    record["metadata"]["file"] = serde_json::json!(format!("{file}.missing.py"));
    let cases = dir.path().join("missing.jsonl");
    std::fs::write(&cases, format!("{record}\n")).expect("write");
    let run = dir.path().join("run.jsonl");
    let out = bench_run_cceval(
        &cases,
        &run,
        &["--backend", "none"],
        &dir.path().join("cache"),
        &dir.path().join("none.toml"),
    );
    assert_eq!(out.status.code(), Some(1), "an error record fails the run");
    let written: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&run).expect("run").trim()).expect("record");
    assert_eq!(
        written["error"]["kind"],
        serde_json::json!("case"),
        "{written}"
    );
    assert!(
        written["metrics"].as_object().is_none_or(|m| m.is_empty()),
        "no metrics: {written}"
    );
}

#[test]
fn fifos_named_like_source_are_skipped_and_never_read() {
    let ws = Workspace::new("//- a.py\ndef f():\n    return 1\n");
    mkfifo(&ws.root().join("fifo.py"));
    let root = ws.root().to_str().expect("utf-8");
    let out = crossfile_within(&["index", root, "--json"], ws.cache.path(), 60);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("index --json");
    assert_eq!(
        (report["files"].as_u64(), report["skipped"].as_u64()),
        (Some(1), Some(1)),
        "{report}"
    );
    let out = crossfile_within(&["retrieve", root, "--at", "a.py:2:5"], ws.cache.path(), 60);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = crossfile_within(
        &["retrieve", root, "--at", "fifo.py:1:1"],
        ws.cache.path(),
        60,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("not a regular file"),
        "{}",
        stderr(&out)
    );
}

/// A repository holding a FIFO is replayed (its copy made without it), never hung on.
#[cfg(feature = "embedded")]
#[test]
fn a_repository_holding_a_fifo_is_replayed_without_it() {
    use crate::lsp::client::Client;
    use serde_json::json;

    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let (repos, cases) = repos_copy(dir.path(), 1);
    let case: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&cases).expect("read").trim()).expect("JSON");
    let repository = case["metadata"]["repository"].as_str().expect("repository");
    mkfifo(&repos.join(repository).join("fifo.py"));
    let mut client = Client::start_without_folders(cache.path(), NO_MODEL);
    let answer = client.execute(
        "crossfile.replayCase",
        json!({"cases": cases, "repos": repos, "case": 0}),
    );
    let uri = answer["uri"].as_str().expect("uri");
    let copy = std::path::PathBuf::from(uri.strip_prefix("file://").expect("file URI"));
    let copy_root = copy
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == repository))
        .expect("the copy's root");
    assert!(!copy_root.join("fifo.py").exists(), "the FIFO was copied");
    assert_eq!(client.finish(true), Some(0));
}

#[test]
fn small_things_are_said_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let user = dir.path().join("none.toml");

    // One byte that is not UTF-8 costs its line, named, not the file.
    let good = dev_cases(dir.path(), 2);
    let text = std::fs::read(&good).expect("read");
    let mut bytes = b"{\"bad\": \"\xff\"}\n".to_vec();
    bytes.extend(&text);
    let cases = dir.path().join("latin1.jsonl");
    std::fs::write(&cases, bytes).expect("write");
    let run = dir.path().join("run.jsonl");
    let out = bench_run_cceval(
        &cases,
        &run,
        &["--backend", "none", "--json"],
        &cache,
        &user,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("latin1.jsonl:1") && stderr(&out).contains("not UTF-8"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&run).expect("run").lines().count(),
        2
    );

    // A file given as a workspace root, a folder as the model: said as such.
    let file = dir.path().join("main.py");
    std::fs::write(&file, "x = 1\n").expect("write");
    let out = crossfile_with(
        &["index", file.to_str().expect("utf-8")],
        &cache,
        &user,
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("not a directory") && !stderr(&out).contains("crossfile.toml"),
        "{}",
        stderr(&out)
    );
    let ws = Workspace::new("//- a.py\nx = 1\n");
    let root = ws.root().to_str().expect("utf-8");
    let folder = dir.path().to_str().expect("utf-8");
    let out = crossfile_with(
        &["complete", root, "--at", "a.py:1:2", "--model", folder],
        &cache,
        &user,
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("a folder, not a GGUF file"),
        "{}",
        stderr(&out)
    );

    // No "caused by" line repeats what the error above it already said.
    let out = crossfile_with(
        &["index", "/nonexistent/crossfile-test-root"],
        &cache,
        &user,
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let said = stderr(&out);
    let lines: Vec<&str> = said.lines().collect();
    for pair in lines.windows(2) {
        if let Some(cause) = pair[1].trim().strip_prefix("caused by: ") {
            assert!(!pair[0].contains(cause), "repeated: {lines:?}");
        }
    }
}

/// A cases file loaded once is not taken again under another format, however wrong.
#[cfg(feature = "embedded")]
#[test]
fn a_loaded_cases_file_still_has_its_format_checked() {
    use crate::lsp::client::Client;
    use serde_json::{Value, json};

    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = dev_cases(dir.path(), 1);
    let repos = bench_repos();
    let mut client = Client::start_without_folders(cache.path(), NO_MODEL);
    client.execute(
        "crossfile.replayCase",
        json!({"cases": cases, "repos": repos, "case": 0, "format": "cceval"}),
    );
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": "crossfile.replayCase",
               "arguments": [{"cases": cases, "repos": repos, "case": 0, "format": "bogus"}]}),
    );
    let message = answer
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // The key, the value and the accepted names, from the format's enum.
    assert!(
        message.contains("format: `bogus` is not one of cceval, repoeval, history, evocodebench"),
        "{answer}"
    );
    assert_eq!(client.finish(true), Some(0));
}

/// `workspace.max_file_bytes` bounds a case as it bounds a file: a case whose file text is
/// larger is skipped by its line and field, a record many times larger is skipped unparsed, and
/// the other cases run.
#[test]
fn an_oversized_case_is_skipped_by_its_line_and_field_and_the_rest_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = dev_cases(dir.path(), 2);
    let text = std::fs::read_to_string(&cases).expect("read");
    let first: serde_json::Value =
        serde_json::from_str(text.lines().next().expect("a case")).expect("JSON");
    let padded = |id: &str, lines: usize| {
        let mut record = first.clone();
        let prompt = record["prompt"].as_str().expect("prompt").to_string();
        record["prompt"] = serde_json::json!("x = 1\n".repeat(lines) + &prompt);
        record["metadata"]["task_id"] = serde_json::json!(id);
        for key in ["groundtruth_start_lineno", "right_context_start_lineno"] {
            let line = record["metadata"][key].as_u64().expect(key);
            record["metadata"][key] = serde_json::json!(line + lines as u64);
        }
        record.to_string()
    };
    // 240 kB of file text, then a 1.2 MB record: over 200,000 bytes and over 4 × that.
    let with_big = format!(
        "{text}{}\n{}\n",
        padded("big", 40_000),
        padded("huge", 200_000)
    );
    std::fs::write(&cases, with_big).expect("write");
    let run = dir.path().join("run.jsonl");
    let out = bench_run_cceval(
        &cases,
        &run,
        &["--backend", "none", "--max-file-bytes", "200000"],
        &dir.path().join("cache"),
        &dir.path().join("none.toml"),
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let name = cases.display().to_string();
    assert!(
        err.contains(&format!("{name}:3: prompt: the case's file text is"))
            && err.contains("over workspace.max_file_bytes (200000)"),
        "{err}"
    );
    assert!(
        err.contains(&format!("{name}:4: .: the record is")),
        "{err}"
    );
    let ran: Vec<serde_json::Value> = std::fs::read_to_string(&run)
        .expect("run file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("record"))
        .collect();
    assert_eq!(ran.len(), 2, "the two small cases ran");
    assert!(ran.iter().all(|r| r["error"].is_null()), "{ran:?}");
}
