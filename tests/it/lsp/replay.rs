//! Replaying benchmark cases through `crossfile serve` (real stdio, the embedded model):
//! `crossfile.replayCase` + inline completion + `crossfile.score` give exactly what `bench run`
//! gives for the same cases, retriever and model; the case opens in a copy, never in the
//! repository; `nextCase` / `previousCase` walk the file.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crossfile_bench::bench::runfile::record::RunRecord;
use crossfile_engine::retrieve::DEFAULT_RETRIEVER;
use crossfile_server::lsp::ext::{Compare, Context, Metrics, Score, ScoreResult, Scored};
use serde_json::{Value, json};

use crate::bench::checks;
use crate::lsp::client::{Client, made_columns, user_config};
use crate::support::{bench_repos, copy_tree, shared_dir};

/// Cases replayed both ways (each is read twice by the model, so a few: they prove the two
/// ways agree, not the model).
const CASES: usize = 8;

/// Model settings both sides use: a short context and suggestion keep the test quick.
const MODEL: &str = "n_ctx = 1024\n[prompt]\nmax_new_tokens = 16\n";

/// Every record of a `bench run` file, by case id.
fn run_records(path: &Path) -> BTreeMap<String, RunRecord> {
    checks::run_records(path)
        .into_iter()
        .map(|r| (r.case_id.clone(), r))
        .collect()
}

/// `bench run` of `cases` in `format` with the default retriever (the server's), one job, the
/// user config `cache/user.toml` and the cache the server uses, into `out`.
fn bench_run(format: &str, cases: &Path, repos: &Path, cache: &Path, out: &Path) {
    let run = Command::new(env!("CARGO_BIN_EXE_crossfile"))
        .args(["bench", "run", "--format", format, "--retriever"])
        .arg(DEFAULT_RETRIEVER.to_string())
        .args(["--jobs", "1", "--cases"])
        .arg(cases)
        .arg("--repos")
        .arg(repos)
        .arg("--out")
        .arg(out)
        .env("CROSSFILE_CACHE_DIR", cache)
        .env("CROSSFILE_CONFIG", cache.join("user.toml"))
        .env_remove("CROSSFILE_LOG")
        .output()
        .expect("bench run");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// A digest of every file under `root` (path and bytes), to show a repository is untouched.
pub fn tree_digest(root: &Path) -> BTreeMap<String, Vec<u8>> {
    walk(root).0
}

/// Every folder under `root`, relative (a folder left behind is a change a file digest misses).
fn folders(root: &Path) -> Vec<String> {
    walk(root).1
}

/// The files under `root` with their bytes, and the folders, sorted; paths relative to it.
fn walk(root: &Path) -> (BTreeMap<String, Vec<u8>>, Vec<String>) {
    let (mut files, mut folders) = (BTreeMap::new(), Vec::new());
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .expect("inside")
                .display()
                .to_string();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
                folders.push(rel);
            } else if let Ok(bytes) = std::fs::read(&path) {
                files.insert(rel, bytes);
            }
        }
    }
    folders.sort();
    (files, folders)
}

#[test]
fn replay_through_the_server_scores_exactly_as_bench_run() {
    let cache = tempfile::tempdir().expect("tempdir");
    let config = cache.path().join("user.toml");
    std::fs::write(&config, user_config(MODEL)).expect("config");
    let all = std::fs::read_to_string(shared_dir().join("bench/cceval/python-dev.jsonl"))
        .expect("DEV cases");
    let cases = cache.path().join("cases.jsonl");
    let lines: Vec<&str> = all.lines().take(CASES).collect();
    std::fs::write(&cases, lines.join("\n") + "\n").expect("write cases");
    let repos = bench_repos();
    let before = tree_digest(&repos);

    // `bench run`, one job, the same user config and cache as the server.
    let out = cache.path().join("run.jsonl");
    bench_run("cceval", &cases, &repos, cache.path(), &out);
    let records = run_records(&out);
    assert_eq!(records.len(), CASES);

    // The server, with no workspace folder: each case opens in its replay copy.
    let mut client = Client::start_without_folders(cache.path(), MODEL);
    let mut raw_scored = 0;
    for i in 0..CASES {
        let opened = client.execute(
            "crossfile.replayCase",
            json!({"cases": cases, "repos": repos, "format": "cceval", "case": i}),
        );
        let id = opened
            .pointer("/case/id")
            .and_then(Value::as_str)
            .expect("id")
            .to_string();
        assert_eq!(opened.pointer("/case/index"), Some(&json!(i)));
        let record = &records[&id];
        let uri = opened["uri"].as_str().expect("uri").to_string();
        let file = url_path(&uri);
        assert!(file.starts_with(cache.path().join("replay")), "{uri}");
        assert_eq!(
            std::fs::read_to_string(&file).ok().as_ref(),
            opened["text"].as_str().map(str::to_string).as_ref(),
            "the copy holds the case's text"
        );
        let answer = open_and_complete(&mut client, &opened);
        let suggestion = answer
            .pointer("/result/items/0/insertText")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let scored = client.command::<Score>(json!({"caseId": id, "suggestion": suggestion}));
        // The same scores; the run also records how likely the model found the reference, a
        // measurement of the model at the case, not a score of a suggestion.
        let mut expected = record.metrics.clone();
        let measured = expected.remove("logprob");
        assert!(measured.is_some_and(|l| l < 0.0), "case {id}: {record:?}");
        let expected = Metrics::Scores(expected);
        assert_eq!(scored.metrics, expected, "case {id}: {scored:?}");
        assert_eq!(scored.benchmark, "cceval");
        assert_eq!(scored.reference, record.reference);
        if scored.scored == Scored::Raw {
            raw_scored += 1;
        }
        // The same prompt, byte for byte, and the same model output.
        let context = client
            .command::<Context>(json!({"uri": uri}))
            .expect("the case's completion");
        assert_eq!(context.prompt, record.prompt, "case {id}");
        assert_eq!(context.raw_suggestion, record.raw_suggestion, "case {id}");
        assert_eq!(context.case_id.as_deref(), Some(id.as_str()));
        // Compared at the cursor with the run's retriever, the column is judged as the run
        // judged the pair: the same suggestion, scores, overlap and origins of its chunks.
        let compared = client
            .command::<Compare>(json!({"uri": uri, "position": opened["position"],
                   "retrievers": [record.retriever]}));
        let columns = made_columns(&compared);
        let column = &columns[0];
        assert_eq!(column.made.suggestion, record.suggestion, "case {id}");
        assert_eq!(
            column.metrics.as_ref(),
            Some(&expected),
            "case {id}: {column:?}"
        );
        assert_eq!(column.overlap, record.overlap, "case {id}");
        let shown: Vec<Option<&str>> = column
            .made
            .chunks
            .iter()
            .map(|c| c.origin.as_deref())
            .collect();
        let recorded: Vec<Option<&str>> =
            record.chunks.iter().map(|c| c.origin.as_deref()).collect();
        assert_eq!(shown, recorded, "case {id}");
        assert!(!recorded.is_empty(), "case {id}: chunks to compare");
        client.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
    }
    assert_eq!(raw_scored, CASES, "every suggestion was the server's own");

    // Walking the file: next, previous, and an error past the first case.
    let first = client.execute(
        "crossfile.replayCase",
        json!({"cases": cases, "repos": repos, "case": 0}),
    );
    let second = client.execute("crossfile.nextCase", Value::Null);
    assert_eq!(second.pointer("/case/index"), Some(&json!(1)));
    let back = client.execute("crossfile.previousCase", Value::Null);
    assert_eq!(back["case"], first["case"]);
    assert_eq!(back["text"], first["text"]);
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": "crossfile.previousCase", "arguments": []}),
    );
    let message = answer.pointer("/error/message").and_then(Value::as_str);
    assert!(
        message.is_some_and(|m| m.contains("is the first")),
        "{answer}"
    );
    // A case id that is not loaded, and a bad argument, are errors that say so.
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": "crossfile.score", "arguments": [{"caseId": "nope", "suggestion": "x"}]}),
    );
    let message = answer.pointer("/error/message").and_then(Value::as_str);
    assert!(message.is_some_and(|m| m.contains("\"nope\"")), "{answer}");
    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": "crossfile.replayCase", "arguments": [{"cases": cases}]}),
    );
    assert_eq!(
        answer.pointer("/error/code"),
        Some(&json!(-32602)),
        "{answer}"
    );
    let message = answer.pointer("/error/message").and_then(Value::as_str);
    assert!(
        message.is_some_and(|m| m.contains("crossfile.replayCase") && m.contains("`repos`")),
        "the message names the command and the missing field: {answer}"
    );

    // A RepoEval function-level case (its format told from the file): the body is hidden, and
    // the reference itself, given as the suggestion, scores em 1 and es 1.
    let repoeval = shared_dir().join("bench/repoeval/function-dev.jsonl");
    let opened = client.execute(
        "crossfile.replayCase",
        json!({"cases": repoeval, "repos": repos, "case": 0}),
    );
    assert_eq!(opened.pointer("/case/benchmark"), Some(&json!("repoeval")));
    assert_eq!(opened.pointer("/case/target"), Some(&json!("function")));
    let id = opened
        .pointer("/case/id")
        .and_then(Value::as_str)
        .expect("id");
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&repoeval)
            .expect("cases")
            .lines()
            .next()
            .expect("a record"),
    )
    .expect("a record");
    let reference = first
        .pointer("/metadata/ground_truth")
        .and_then(Value::as_str)
        .expect("reference");
    let text = opened["text"].as_str().expect("text");
    assert!(!text.contains(reference.trim()), "the body is hidden");
    let scored = client.command::<Score>(json!({"caseId": id, "suggestion": reference}));
    assert_eq!(scored.scored, Scored::Given);
    let perfect = [("em", 1.0), ("es", 1.0), ("chrf", 100.0)];
    assert_eq!(
        scored.metrics,
        Metrics::Scores(perfect.map(|(m, v)| (m.to_string(), v)).into()),
        "{scored:?}"
    );
    // A stub scores low (the check once passed with no `es` at all: `None < Some(0.5)`).
    let scored = client.command::<Score>(json!({"caseId": id, "suggestion": "pass\n"}));
    let es = match &scored.metrics {
        Metrics::Scores(scores) => scores.get("es").copied(),
        Metrics::Failed { error } => panic!("{error}"),
    };
    assert!(es.expect("the stub's es") < 0.5, "{scored:?}");
    assert_eq!(client.finish(true), Some(0));

    // The repositories themselves were never written.
    assert!(before == tree_digest(&repos), "a repository changed");
}

/// Opens a replayed case's file as an editor would and asks for the inline completion at its
/// cursor; the answer.
fn open_and_complete(client: &mut Client, opened: &Value) -> Value {
    let uri = &opened["uri"];
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1,
               "text": opened["text"]}}),
    );
    client.request(
        "textDocument/inlineCompletion",
        json!({"textDocument": {"uri": uri}, "position": opened["position"],
               "context": {"triggerKind": 1}}),
    )
}

fn url_path(uri: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(uri.strip_prefix("file://").expect("a file URI"))
}

/// Replaying in the repository itself, opted into with `inPlace`: the case's file is written
/// there, put back byte for byte before the next case and at shutdown, and a server killed
/// mid-replay has it put back by the next one at `initialize`.
#[test]
fn in_place_replay_always_puts_the_file_back() {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let repos = dir.path().join("repos");
    copy_tree(&bench_repos(), &repos);
    let all = std::fs::read_to_string(shared_dir().join("bench/cceval/python-dev.jsonl"))
        .expect("DEV cases");
    let cases = cache.path().join("cases.jsonl");
    std::fs::write(
        &cases,
        all.lines().take(2).collect::<Vec<_>>().join("\n") + "\n",
    )
    .expect("write cases");
    let before = tree_digest(&repos);
    let none = "[backend]\nkind = \"none\"\n";

    let mut client = Client::start_without_folders(cache.path(), none);
    let replay = json!({"cases": cases, "repos": repos, "case": 0, "inPlace": true});
    let first = client.execute("crossfile.replayCase", replay.clone());
    let file = url_path(first["uri"].as_str().expect("uri"));
    assert!(
        file.starts_with(repos.canonicalize().expect("repos")),
        "{file:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).ok().as_deref(),
        first["text"].as_str()
    );
    let second = client.execute("crossfile.nextCase", Value::Null);
    let second_file = url_path(second["uri"].as_str().expect("uri"));
    assert_ne!(file, second_file, "the two cases are in two files");
    let rel = file
        .strip_prefix(repos.canonicalize().expect("repos"))
        .expect("inside");
    assert_eq!(
        std::fs::read(&file).ok().as_ref(),
        before.get(&rel.display().to_string()),
        "the first case's file is back"
    );
    assert_eq!(client.finish(true), Some(0));
    assert!(
        before == tree_digest(&repos),
        "shutdown put every file back"
    );

    // Killed mid-replay: the file stays changed until the next server starts.
    let mut client = Client::start_without_folders(cache.path(), none);
    client.execute("crossfile.replayCase", replay);
    client.kill();
    assert!(
        before != tree_digest(&repos),
        "the killed server left its case in place"
    );
    let mut client = Client::start_with(cache.path(), none);
    client.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "workspaceFolders": [], "capabilities": {}}),
    );
    assert!(before == tree_digest(&repos), "the next server put it back");
    let message = client.first_shown_message(std::time::Duration::from_secs(5));
    assert!(
        message.as_deref().is_some_and(|m| m.contains("restored")),
        "{message:?}"
    );
    assert_eq!(client.finish(true), Some(0));
}

/// Cases mined from history replayed through the server: each opens with its file, absent from
/// the parent commit's tree, made in the replay copy (or, opted in, in the tree itself) with the
/// case's category and identifiers, the prompt `bench run` builds, and its text metrics; the
/// file and the folders made for it are gone again before the next case and at shutdown.
#[test]
fn history_cases_replay_with_their_category_and_leave_the_tree_unchanged() {
    let cache = tempfile::tempdir().expect("tempdir");
    let config = cache.path().join("user.toml");
    std::fs::write(&config, user_config(MODEL)).expect("config");
    let (cases, repos) = crate::bench::history::history_fixture(cache.path());
    let (before, folders_before) = (tree_digest(&repos), folders(&repos));
    let records: Vec<Value> = std::fs::read_to_string(&cases)
        .expect("cases")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a record"))
        .collect();

    let out = cache.path().join("run.jsonl");
    bench_run("history", &cases, &repos, cache.path(), &out);
    let run = run_records(&out);

    let mut client = Client::start_without_folders(cache.path(), MODEL);
    let rows = client.execute(
        "crossfile.listCases",
        json!({"cases": cases, "format": "history"}),
    );
    let listed: Vec<&str> = rows
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["category"].as_str())
        .collect();
    let expected: Vec<&str> = records
        .iter()
        .filter_map(|r| r.pointer("/metadata/category").and_then(Value::as_str))
        .collect();
    assert_eq!(listed, expected);
    let copy = cache
        .path()
        .join("replay")
        .join(crate::bench::history::REPOSITORY);
    let mut previous: Option<std::path::PathBuf> = None;
    for (i, record) in records.iter().enumerate() {
        let opened = if i == 0 {
            // The format told from the file.
            client.execute(
                "crossfile.replayCase",
                json!({"cases": cases, "repos": repos, "case": 0}),
            )
        } else {
            client.execute("crossfile.nextCase", Value::Null)
        };
        let case = &opened["case"];
        let meta = &record["metadata"];
        assert_eq!(case["benchmark"], "history");
        assert_eq!(case["category"], meta["category"], "{case}");
        assert_eq!(case["identifiers"], meta["identifiers"], "{case}");
        assert_eq!(case["path"], meta["path"]);
        assert_eq!(case["line"].as_u64(), meta["line"].as_u64().map(|l| l + 1));
        let text = format!(
            "{}{}",
            record["prompt"].as_str().expect("prompt"),
            record["right_context"].as_str().expect("right context")
        );
        assert_eq!(opened["text"].as_str(), Some(text.as_str()));
        let indent = record["prompt"]
            .as_str()
            .and_then(|p| p.rsplit('\n').next());
        assert_eq!(
            opened["position"],
            json!({"line": meta["line"], "character": indent.map_or(0, str::len)})
        );
        let uri = opened["uri"].as_str().expect("uri").to_string();
        let file = url_path(&uri);
        assert!(file.starts_with(&copy), "{uri}");
        assert_eq!(std::fs::read_to_string(&file).ok(), Some(text.clone()));
        // The previous case's file, added by the commit, is not in the copy any more (unless
        // this case is in the same file).
        if let Some(previous) = previous.filter(|p| *p != file) {
            assert!(
                !previous.exists(),
                "{} left in the copy",
                previous.display()
            );
        }
        previous = Some(file);

        let answer = open_and_complete(&mut client, &opened);
        assert!(answer.get("result").is_some(), "{answer}");
        let id = case["id"].as_str().expect("id");
        let context = client
            .command::<Context>(json!({"uri": uri}))
            .expect("the case's completion");
        assert_eq!(
            context.prompt, run[id].prompt,
            "case {id}: bench run's prompt"
        );
        let reference = record["groundtruth"].clone();
        let score = |client: &mut Client, suggestion: Value| -> ScoreResult {
            client.command::<Score>(json!({"caseId": id, "suggestion": suggestion}))
        };
        let metric = |scored: &ScoreResult, name: &str| match &scored.metrics {
            Metrics::Scores(scores) => scores.get(name).copied(),
            Metrics::Failed { .. } => None,
        };
        let scored = score(&mut client, reference);
        assert_eq!(scored.benchmark, "history");
        assert_eq!(metric(&scored, "em"), Some(1.0), "{scored:?}");
        assert_eq!(metric(&scored, "es"), Some(100.0), "{scored:?}");
        let scored = score(&mut client, json!("pass"));
        assert_eq!(metric(&scored, "em"), Some(0.0), "{scored:?}");
        client.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
    }
    // Back to the other added file: the copy is the parent's tree and that file alone, the last
    // case's file gone.
    client.execute(
        "crossfile.replayCase",
        json!({"cases": cases, "repos": repos, "case": 0, "format": "history"}),
    );
    let mut expected = folders(&repos.join(crate::bench::history::REPOSITORY));
    expected.push("pkg/report".into());
    expected.sort();
    assert_eq!(folders(&copy), expected);
    assert!(!copy.join("pkg/cli.py").exists());

    // In place: the file is made in the tree itself, and removed with its folders.
    let in_place = client.execute(
        "crossfile.replayCase",
        json!({"cases": cases, "repos": repos, "case": 1, "inPlace": true}),
    );
    let file = url_path(in_place["uri"].as_str().expect("uri"));
    assert!(
        file.starts_with(repos.canonicalize().expect("repos")) && file.is_file(),
        "{file:?}"
    );
    assert_eq!(
        in_place.pointer("/case/category"),
        Some(&json!("inproject"))
    );
    let other_file = client.execute("crossfile.nextCase", Value::Null);
    assert_eq!(
        other_file.pointer("/case/path"),
        Some(&json!("pkg/report/summary.py"))
    );
    assert_eq!(client.finish(true), Some(0));
    assert!(before == tree_digest(&repos), "a file of the tree changed");
    assert_eq!(folders(&repos), folders_before, "a folder was left");
}
