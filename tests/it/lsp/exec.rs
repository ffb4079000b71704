//! EvoCodeBench cases replayed in the editor over real stdio (`crossfile serve`, the embedded
//! model, the DEV repositories and their environments): `crossfile.replayCase` opens the file with
//! the body removed and the requirement as the docstring; the completion at the cursor and
//! `crossfile.score` of the buffer give what `bench run --format evocodebench` gives (the same
//! prompt, body and outcome), with progress per test; a body the user typed is tested as typed;
//! `crossfile.compare` tests each retriever's body; cancelling the tests stops them; the
//! repository is never written.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crossfile_bench::bench::runfile::record::RunRecord;
use crossfile_engine::retrieve::DEFAULT_RETRIEVER;
use crossfile_server::lsp::ext::{Compare, Context, Metrics, Score, ScoreResult, Scored};
use serde_json::{Value, json};

use crate::bench::checks;
use crate::bench::evocodebench::{dev_cases, env_cache, environments};
use crate::lsp::client::{Client, made_columns, user_config};
use crate::lsp::replay::tree_digest;
use crate::support::bench_repos;

const MODEL: &str = "n_ctx = 1024\n";
/// Tokens per body: short bodies keep the test quick; the same for the run and the server.
const TOKENS: &str = "48";
/// DEV cases: two methods and a function, one with two tests.
const PICKED: [usize; 3] = [0, 2, 3];

/// `bench run --format evocodebench` of `cases` with the default retriever, which the server
/// uses when its settings name none: its records by case.
fn bench_run(cases: &Path, config: &Path, dir: &Path) -> BTreeMap<String, RunRecord> {
    let out = dir.join("run.jsonl");
    let output = Command::new(env!("CARGO_BIN_EXE_crossfile"))
        .args([
            "bench",
            "run",
            "--format",
            "evocodebench",
            "--retriever",
            &DEFAULT_RETRIEVER.to_string(),
        ])
        .args(["--setting", "local_completion", "--max-new-tokens", TOKENS])
        .args(["--jobs", "1", "--json"])
        .arg("--cases")
        .arg(cases)
        .arg("--repos")
        .arg(bench_repos())
        .arg("--out")
        .arg(&out)
        .arg("--cache-dir")
        .arg(dir.join("bench-indexes"))
        // The environments are in the user's cache; the model and context in the config.
        .env("CROSSFILE_CACHE_DIR", env_cache())
        .env("CROSSFILE_CONFIG", config)
        .env_remove("CROSSFILE_LOG")
        .output()
        .expect("bench run");
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{log}");
    checks::run_records(&out)
        .into_iter()
        .map(|r| (r.case_id.clone(), r))
        .collect()
}

/// `text` with `inserted` at `position` (its line's characters are ASCII: the indentation).
fn insert_at(text: &str, position: &Value, inserted: &str) -> String {
    let line = position["line"].as_u64().expect("line") as usize;
    let character = position["character"].as_u64().expect("character") as usize;
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    let at = start + character;
    format!("{}{inserted}{}", &text[..at], &text[at..])
}

/// Replaces the whole text of the open document `uri`.
fn set_text(client: &mut Client, uri: &str, version: i64, text: &str) {
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version},
               "contentChanges": [{"text": text}]}),
    );
}

/// The `$/progress` values reported under `token`, in order, up to its end (which may come after
/// the command's answer: notifications and answers are separate streams in the server).
fn progress_of(client: &mut Client, token: &str) -> Vec<Value> {
    let is_progress = |m: &Value| m["method"] == "$/progress" && m["params"]["token"] == token;
    let mut values: Vec<Value> = client
        .notifications
        .iter()
        .filter(|m| is_progress(m))
        .map(|m| m["params"]["value"].clone())
        .collect();
    if values.last().is_none_or(|v| v["kind"] != "end") {
        let end = client.wait_until(Duration::from_secs(10), |m| {
            is_progress(m) && m["params"]["value"]["kind"] == "end"
        });
        values.extend(end.map(|m| m["params"]["value"].clone()));
    }
    values
}

#[test]
fn evocodebench_cases_replayed_and_scored_in_the_editor_agree_with_bench_run() {
    environments();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("user.toml");
    std::fs::write(&config, user_config(MODEL)).expect("config");
    let all = std::fs::read_to_string(dev_cases()).expect("DEV cases");
    let lines: Vec<&str> = all.lines().collect();
    let picked: Vec<&str> = PICKED.iter().map(|&i| lines[i]).collect();
    let cases = dir.path().join("cases.jsonl");
    std::fs::write(&cases, picked.join("\n") + "\n").expect("write cases");
    let repos = bench_repos();
    let before = tree_digest(&repos.join("microagents"));
    let records = bench_run(&cases, &config, dir.path());
    assert_eq!(records.len(), PICKED.len());

    let cache = dir.path().join("server-cache");
    std::fs::create_dir_all(&cache).expect("mkdir");
    let mut client = Client::start_without_folders(&cache, MODEL);
    let envs = env_cache().join("envs").join("evocodebench");
    let replay = |i: usize| {
        json!({"cases": cases, "repos": repos, "format": "evocodebench", "case": i,
               "setting": "local_completion", "envs": envs, "maxNewTokens": 48})
    };
    let mut last = Value::Null;
    let mut last_ran: Option<&RunRecord> = None;
    for (i, line) in picked.iter().enumerate() {
        let record: Value = serde_json::from_str(line).expect("a case");
        let namespace = record["namespace"].as_str().expect("namespace");
        let ran = &records[namespace];
        assert!(ran.error.is_none(), "{ran:?}");
        let opened = client.execute("crossfile.replayCase", replay(i));
        assert_eq!(opened["case"]["id"], namespace);
        assert_eq!(opened["case"]["benchmark"], "evocodebench");
        assert_eq!(opened["case"]["setting"], "local_completion");
        let (uri, text, position) = (
            opened["uri"].as_str().expect("uri").to_string(),
            opened["text"].as_str().expect("text").to_string(),
            opened["position"].clone(),
        );
        // The body removed, the requirement as the docstring, the cursor after its indentation.
        assert!(!text.contains(ran.reference.trim()), "{namespace}: {text}");
        let functionality = record["requirement"]["Functionality"]
            .as_str()
            .expect("functionality");
        let words: Vec<&str> = functionality.split_whitespace().take(5).collect();
        assert!(text.contains(&words.join(" ")), "{namespace}: {text}");
        let indent = record["indent"].as_u64().expect("indent");
        assert_eq!(position["character"].as_u64(), Some(indent), "{opened}");

        client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                    "text": text}}),
        );
        let answer = client.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": position}),
        );
        let shown = answer
            .pointer("/result/items/0/insertText")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        // The prompt and the model's output are `bench run`'s, byte for byte.
        let context = client
            .command::<Context>(json!({"uri": uri}))
            .expect("the case's completion");
        assert_eq!(context.prompt, ran.prompt, "{namespace}");
        assert_eq!(context.raw_suggestion, ran.raw_suggestion, "{namespace}");

        // Accepted into the buffer and scored: the body `bench run` tested, the same outcome.
        set_text(&mut client, &uri, 2, &insert_at(&text, &position, &shown));
        let token = format!("score-{i}");
        let scored = client
            .command::<Score>(json!({"caseId": namespace, "uri": uri, "workDoneToken": token}));
        assert_eq!(scored.scored, Scored::Raw, "{scored:?}");
        assert_eq!(scored.prediction, ran.suggestion, "{namespace}");
        let sample = &ran.samples.first().expect("a sample").outcome;
        let outcome = scored.outcome.as_ref().expect("the body's outcome");
        assert_eq!(
            outcome.status,
            sample.status.name(),
            "{scored:?}\n{sample:?}"
        );
        assert_eq!(outcome.first_failure, sample.first_failure);
        let reports = progress_of(&mut client, &token);
        let kinds: Vec<&str> = reports.iter().filter_map(|v| v["kind"].as_str()).collect();
        assert_eq!(kinds.first(), Some(&"begin"), "{reports:?}");
        assert_eq!(kinds.last(), Some(&"end"), "{reports:?}");
        let tests = record["tests"].as_array().expect("tests").len();
        let started = reports
            .iter()
            .filter(|v| {
                v["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("test "))
            })
            .count();
        // Every test that ran was reported as it started.
        let ran_tests = outcome.tests.len();
        assert!(ran_tests <= tests && started == ran_tests, "{reports:?}");
        last = json!({"uri": uri, "text": text, "position": position, "namespace": namespace,
                      "record": record});
        last_ran = Some(ran);
    }

    // The last case, typed by hand: its reference body passes, a wrong one fails with output.
    let (uri, text, position) = (
        last["uri"].as_str().expect("uri").to_string(),
        last["text"].as_str().expect("text").to_string(),
        last["position"].clone(),
    );
    let namespace = last["namespace"].as_str().expect("namespace").to_string();
    let indent = last["record"]["indent"].as_u64().expect("indent") as usize;
    let ran = last_ran.expect("a case ran");
    let reference = ran.reference.as_str();
    let typed = reference
        .trim_end_matches('\n')
        .get(indent..)
        .expect("the reference's indentation");
    set_text(&mut client, &uri, 3, &insert_at(&text, &position, typed));
    let score = |client: &mut Client| -> ScoreResult {
        client.command::<Score>(json!({"caseId": namespace, "uri": uri}))
    };
    // How a scored body's tests ended, and its first test's output.
    let outcome_of = |scored: &ScoreResult| -> (String, Option<String>, String) {
        let outcome = scored.outcome.as_ref().expect("the body's outcome");
        let output = outcome.tests.first().map(|t| t.output.clone());
        (
            outcome.status.clone(),
            outcome.first_failure.clone(),
            output.unwrap_or_default(),
        )
    };
    let passed = score(&mut client);
    let (status, _, _) = outcome_of(&passed);
    assert_eq!(passed.scored, Scored::Given, "{passed:?}");
    assert_eq!(status, "pass", "{passed:?}");
    assert_eq!(
        passed.metrics,
        Metrics::Scores([("pass@1".to_string(), 1.0)].into()),
        "{passed:?}"
    );
    let wrong = "raise RuntimeError('not the body')";
    set_text(&mut client, &uri, 4, &insert_at(&text, &position, wrong));
    let failed = score(&mut client);
    let (status, first_failure, output) = outcome_of(&failed);
    assert_eq!(status, "fail", "{failed:?}");
    assert!(first_failure.is_some(), "{failed:?}");
    assert!(output.contains("not the body"), "{failed:?}");

    // A typed body that reads a key from a home folder outside /tmp and prints it in its
    // output: the sandbox shows no such folder, so the output names only the error.
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("home");
    let key = home.path().join("id_ed25519");
    std::fs::write(&key, "crossfile-probe-editor-key\n").expect("plant the key");
    let lines = [
        "try:".to_string(),
        format!("    secret = open({:?}).read()", key.to_string_lossy()),
        "except OSError as error:".into(),
        "    raise RuntimeError('hidden: %s' % type(error).__name__)".into(),
        "raise RuntimeError('seen: ' + secret)".into(),
    ];
    let probe = lines.join(&format!("\n{}", " ".repeat(indent)));
    set_text(&mut client, &uri, 5, &insert_at(&text, &position, &probe));
    let probed = score(&mut client);
    let (_, _, output) = outcome_of(&probed);
    assert!(output.contains("hidden: FileNotFoundError"), "{probed:?}");
    assert!(
        !format!("{probed:?}").contains("crossfile-probe-editor-key"),
        "{probed:?}"
    );

    // Each retriever's body tested at the case's cursor; the default's is the run's.
    set_text(&mut client, &uri, 6, &text);
    let compared = client.command::<Compare>(json!({"uri": uri, "position": position,
               "retrievers": ["none", DEFAULT_RETRIEVER.to_string()]}));
    let results = made_columns(&compared);
    assert_eq!(results.len(), 2, "{results:?}");
    for result in &results {
        assert!(result.outcome.is_some(), "{result:?}");
    }
    assert_eq!(
        results[1].body.as_deref(),
        Some(ran.suggestion.as_str()),
        "{results:?}"
    );
    let sample = &ran.samples.first().expect("a sample").outcome;
    let status = results[1].outcome.as_ref().map(|o| o.status.as_str());
    assert_eq!(status, Some(sample.status.name()));

    // A body that would run for a minute: cancelled through its progress token, it stops.
    let slow = format!("import time\n{}time.sleep(60)", " ".repeat(indent));
    set_text(&mut client, &uri, 7, &insert_at(&text, &position, &slow));
    let id = client.start_request(
        "workspace/executeCommand",
        json!({"command": "crossfile.score",
               "arguments": [{"caseId": namespace, "uri": uri, "workDoneToken": "slow"}]}),
    );
    let running = client.wait_until(Duration::from_secs(60), |m| {
        m["method"] == "$/progress"
            && m["params"]["token"] == "slow"
            && m["params"]["value"]["message"]
                .as_str()
                .is_some_and(|t| t.starts_with("test 1 of"))
    });
    assert!(running.is_some(), "the first test never started");
    let cancelled = Instant::now();
    client.notify("window/workDoneProgress/cancel", json!({"token": "slow"}));
    let answer = client
        .response(id)
        .expect("an answer to the cancelled score");
    assert!(answer["error"].is_object(), "{answer}");
    // Well within the test's own 20 s limit: stopped, not timed out.
    assert!(
        cancelled.elapsed() < Duration::from_secs(10),
        "{:?}",
        cancelled.elapsed()
    );

    assert!(
        before == tree_digest(&repos.join("microagents")),
        "the repository was written"
    );
    assert_eq!(client.finish(true), Some(0));
}
