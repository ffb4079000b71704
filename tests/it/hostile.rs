//! The threat model, tried as a hostile but fair user would: a repository's own config, two
//! processes on one file, inputs that are huge, special or lying. Each test uses the real binary
//! and real parts (a local listener that records what it was sent, real files compared byte for
//! byte); each fails without its fix.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::{Workspace, bench_repos, default_model, shared_dir, stderr};

/// A listener on 127.0.0.1 that records every request it is sent and answers each with
/// `answer` (a whole HTTP response).
struct Recorder {
    url: String,
    received: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    fn start(answer: impl Into<Vec<u8>>) -> Recorder {
        let answer: Arc<Vec<u8>> = Arc::new(answer.into());
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let request = read_request(&stream);
                log.lock().expect("log").push(request);
                let _ = (&stream).write_all(&answer);
            }
        });
        Recorder { url, received }
    }

    fn received(&self) -> Vec<String> {
        self.received.lock().expect("log").clone()
    }
}

/// One HTTP request: its head and as much body as `Content-Length` says.
fn read_request(mut stream: &TcpStream) -> String {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        data.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&data);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if data.len() >= end + 4 + length {
                break;
            }
        }
    }
    String::from_utf8_lossy(&data).into_owned()
}

/// A user config layer with no model backend, for tests that need no completion.
const NO_MODEL: &str = "[backend]\nkind = \"none\"\n";

const SERVER_ERROR: &[u8] =
    b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// The binary with `user_config` as the user's file, the test's own cache, and `env`.
fn crossfile_with(args: &[&str], cache: &Path, user_config: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_crossfile"));
    command
        .args(args)
        .env("CROSSFILE_CACHE_DIR", cache)
        .env("CROSSFILE_CONFIG", user_config)
        .env_remove("CROSSFILE_LOG");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("run crossfile")
}

#[test]
fn a_workspace_config_cannot_send_code_or_secrets_anywhere_new() {
    let attacker = Recorder::start(SERVER_ERROR);
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let planted_cache = elsewhere.path().join("planted-cache");
    let ws = Workspace::new(&format!(
        "//- crossfile.toml\n[backend]\nkind = \"openai\"\nendpoint = \"{}\"\n\
         api_key_env = \"CROSSFILE_TEST_SECRET\"\nretries = 0\n[index]\ncache_dir = {:?}\n\
         [retrieve]\ntop_k = 2\n//- app.py\ndef handler(request):\n    token = load_token()\n    return token\n",
        attacker.url, planted_cache
    ));
    // The user's own choice: no model backend, the default model's vocabulary for budgets.
    let user = ws.cache.path().join("user.toml");
    std::fs::write(
        &user,
        format!(
            "[backend]\nkind = \"none\"\n[model]\npath = {:?}\n",
            default_model()
        ),
    )
    .expect("write the user config");
    let root = ws.root().to_str().expect("utf-8");
    let secret = [("CROSSFILE_TEST_SECRET", "s3cret-value-123")];
    let complete = ["complete", root, "--at", "app.py:3:5"];

    let out = crossfile_with(&complete, ws.cache.path(), &user, &secret);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for key in [
        "backend.kind",
        "backend.endpoint",
        "backend.api_key_env",
        "index.cache_dir",
    ] {
        assert!(
            stderr(&out).contains(key),
            "no warning for {key}: {}",
            stderr(&out)
        );
    }
    assert_eq!(attacker.received(), Vec::<String>::new(), "code was sent");
    assert!(
        !planted_cache.exists(),
        "the workspace chose where to write"
    );

    // Trusted, the same file is obeyed: the test would see a leak.
    let trusted = [&complete[..], &["--trust-workspace"]].concat();
    let out = crossfile_with(&trusted, ws.cache.path(), &user, &secret);
    assert_eq!(out.status.code(), Some(1), "the 500 is an error");
    let received = attacker.received();
    assert_eq!(received.len(), 1, "{received:?}");
    assert!(
        received[0].contains("Bearer s3cret-value-123"),
        "{}",
        received[0]
    );
    assert!(received[0].contains("load_token"), "{}", received[0]);
    assert!(planted_cache.exists());
}

/// The same in an editor: the server ignores the keys, says so once, and obeys them when the
/// client says the workspace is trusted (VS Code's workspace trust, Neovim's `vim.secure`).
#[cfg(feature = "embedded")]
#[test]
fn the_server_warns_and_ignores_an_untrusted_workspace_config_until_the_client_trusts_it() {
    use crate::lsp_client::Client;
    use serde_json::{Value, json};

    let elsewhere = tempfile::tempdir().expect("tempdir");
    let planted_cache = elsewhere.path().join("planted-cache");
    let ws = Workspace::new(&format!(
        "//- crossfile.toml\n[backend]\nendpoint = \"http://127.0.0.1:9\"\n[index]\ncache_dir = {:?}\n\
         //- app.py\ndef handler():\n    return 1\n",
        planted_cache
    ));
    let warnings = |client: &Client| -> Vec<String> {
        client
            .notifications
            .iter()
            .filter(|m| m["method"] == json!("window/showMessage"))
            .filter_map(|m| m.pointer("/params/message").and_then(Value::as_str))
            .map(str::to_string)
            .collect()
    };

    let mut client = Client::start(ws.cache.path());
    client.initialize(ws.root(), json!({}));
    client.wait_for_index();
    let shown = warnings(&client);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].contains("backend.endpoint") && shown[0].contains("index.cache_dir"),
        "{}",
        shown[0]
    );
    assert!(!planted_cache.exists());
    assert_eq!(client.finish(true), Some(0));

    let mut client = Client::start(ws.cache.path());
    client.initialize(ws.root(), json!({"trust": {"workspace": true}}));
    client.wait_for_index();
    assert_eq!(warnings(&client), Vec::<String>::new());
    assert!(
        planted_cache.join("index").exists(),
        "the trusted cache_dir is used"
    );
    assert_eq!(client.finish(true), Some(0));
}

/// A listener on 127.0.0.1 that accepts connections and never answers; with the number of
/// connections it has accepted.
fn hanging_listener() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(stream);
        }
    });
    (url, accepted)
}

/// The first `n` DEV CrossCodeEval cases, written to `dir/cases.jsonl`.
fn dev_cases(dir: &Path, n: usize) -> std::path::PathBuf {
    let all = std::fs::read_to_string(shared_dir().join("bench/cceval/python-dev.jsonl"))
        .expect("DEV cases");
    let cases = dir.join("cases.jsonl");
    let lines: Vec<&str> = all.lines().take(n).collect();
    std::fs::write(&cases, lines.join("\n") + "\n").expect("write cases");
    cases
}

/// A writable copy of the DEV repositories in `dir/repos`, and the first `n` DEV cases.
fn repos_copy(dir: &Path, n: usize) -> (std::path::PathBuf, std::path::PathBuf) {
    let repos = dir.join("repos");
    crate::support::copy_tree(&bench_repos(), &repos);
    (repos, dev_cases(dir, n))
}

fn bench_run_args<'a>(
    format: &'a str,
    cases: &'a str,
    repos: &'a str,
    out: &'a str,
) -> Vec<&'a str> {
    vec![
        "bench",
        "run",
        "--format",
        format,
        "--cases",
        cases,
        "--repos",
        repos,
        "--retriever",
        "none",
        "--out",
        out,
    ]
}

#[test]
fn a_second_bench_run_on_the_same_run_file_is_refused_naming_the_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = dev_cases(dir.path(), 2);
    let out = dir.path().join("run.jsonl");
    let user = dir.path().join("user.toml");
    std::fs::write(
        &user,
        format!(
            "[backend]\nkind = \"openai\"\nendpoint = \"{}\"\ntimeout_ms = 60000\nretries = 0\n\
             [model]\npath = {:?}\n",
            hanging_listener().0,
            default_model()
        ),
    )
    .expect("write the user config");
    let repos = bench_repos();
    let (cases_s, repos_s, out_s) = (
        cases.to_str().expect("utf-8"),
        repos.to_str().expect("utf-8"),
        out.to_str().expect("utf-8"),
    );
    let args = bench_run_args("cceval", cases_s, repos_s, out_s);
    let mut first = Command::new(env!("CARGO_BIN_EXE_crossfile"))
        .args(&args)
        .env("CROSSFILE_CACHE_DIR", dir.path().join("cache"))
        .env("CROSSFILE_CONFIG", &user)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the first bench run");
    let lock = crossfile::lock::lock_path(&out);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.starts_with("pid")) {
        assert!(
            std::time::Instant::now() < deadline,
            "the first run never locked {}",
            out.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let second = crossfile_with(&args, &dir.path().join("cache"), &user, &[]);
    let _ = first.kill();
    let _ = first.wait();
    assert_eq!(second.status.code(), Some(1));
    let message = stderr(&second);
    assert!(
        message.contains("in use by another crossfile")
            && message.contains(&format!("pid {}", first.id())),
        "{message}"
    );
    let text = std::fs::read_to_string(&out).expect("run file");
    assert!(
        text.is_empty(),
        "nothing written while the model hung: {text}"
    );
}

#[test]
fn bench_refuses_outputs_that_are_inputs_and_runs_with_nothing_to_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let user = dir.path().join("no-user.toml");
    let cases = dev_cases(dir.path(), 1);
    let repos = bench_repos();
    let run = dir.path().join("run.jsonl");
    let (cases_s, repos_s, run_s) = (
        cases.to_str().expect("utf-8"),
        repos.to_str().expect("utf-8"),
        run.to_str().expect("utf-8"),
    );
    let none = ["--backend", "none"];
    let args = [
        &bench_run_args("cceval", cases_s, repos_s, run_s)[..],
        &none,
    ]
    .concat();
    let out = crossfile_with(&args, &cache, &user, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Resuming a finished run file runs nothing and is still a success.
    let out = crossfile_with(&args, &cache, &user, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let before = std::fs::read(&run).expect("run file");

    // An output that is an input, by its name or through links, is refused and left alone.
    let soft = dir.path().join("soft.jsonl");
    let hard = dir.path().join("hard.jsonl");
    std::os::unix::fs::symlink(&run, &soft).expect("symlink");
    std::fs::hard_link(&run, &hard).expect("hard link");
    for output in [&run, &soft, &hard] {
        let output = output.to_str().expect("utf-8");
        for refused in [
            vec!["bench", "report", run_s, "--html", output],
            vec![
                "bench", "export", run_s, "--format", "cceval", "--out", output,
            ],
        ] {
            let out = crossfile_with(&refused, &cache, &user, &[]);
            assert_eq!(out.status.code(), Some(1), "{refused:?}");
            assert!(
                stderr(&out).contains("is also an input"),
                "{}",
                stderr(&out)
            );
            assert_eq!(
                std::fs::read(&run).expect("run file"),
                before,
                "{refused:?}"
            );
        }
    }
    let args = [
        &bench_run_args("cceval", cases_s, repos_s, cases_s)[..],
        &none,
    ]
    .concat();
    let out = crossfile_with(&args, &cache, &user, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("is also an input"),
        "{}",
        stderr(&out)
    );

    // Nothing to run: an empty cases file, or every record skipped by the wrong format.
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").expect("write");
    let fresh = dir.path().join("fresh.jsonl");
    let fresh_s = fresh.to_str().expect("utf-8");
    for (format, file, says) in [
        (
            "cceval",
            empty.to_str().expect("utf-8"),
            "the file is empty",
        ),
        ("repoeval", cases_s, "is --format repoeval right?"),
    ] {
        let args = [&bench_run_args(format, file, repos_s, fresh_s)[..], &none].concat();
        let out = crossfile_with(&args, &cache, &user, &[]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("no case to run") && stderr(&out).contains(says),
            "{}",
            stderr(&out)
        );
        assert!(!fresh.exists(), "a run file was created for nothing");
    }
}

/// An HTTP 200 answer with `body` as JSON.
fn json_answer(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A listener that answers every request with a chunked JSON body that never ends.
fn endless_listener() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = read_request(&stream);
                let mut stream = stream;
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n";
                if stream.write_all(head.as_bytes()).is_err() {
                    return;
                }
                let chunk = format!("1000\r\n{}\r\n", " ".repeat(4096));
                while stream.write_all(chunk.as_bytes()).is_ok() {}
            });
        }
    });
    url
}

/// `crossfile complete` on a one-file workspace against an `openai` backend at `endpoint`.
fn complete_against(endpoint: &str, extra: &[&str]) -> Output {
    let ws = Workspace::new("//- app.py\ndef handler(request):\n    return request\n");
    let user = ws.cache.path().join("user.toml");
    std::fs::write(
        &user,
        format!(
            "[backend]\nkind = \"openai\"\nendpoint = \"{endpoint}\"\ntimeout_ms = 60000\nretries = 0\n\
             [model]\npath = {:?}\n[prompt]\nmax_new_tokens = 16\n",
            default_model()
        ),
    )
    .expect("write the user config");
    let root = ws.root().to_str().expect("utf-8");
    let args = [
        &["complete", root, "--at", "app.py:2:12", "--unit", "raw"][..],
        extra,
    ]
    .concat();
    crossfile_with(&args, ws.cache.path(), &user, &[])
}

#[test]
fn huge_or_endless_answers_are_refused_and_long_ones_cut_to_the_token_budget() {
    let text = "x".repeat(20 << 20);
    let huge = Recorder::start(json_answer(&format!(
        r#"{{"choices":[{{"text":"{text}"}}]}}"#
    )));
    let out = complete_against(&huge.url, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("larger than 4 MiB"),
        "{}",
        stderr(&out)
    );

    // A chunked answer that never ends stops at the limit too, long before the 60 s timeout.
    let out = complete_against(&endless_listener(), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("larger than 4 MiB"),
        "{}",
        stderr(&out)
    );

    // 200 kB of text for a 16-token request: the suggestion is what 16 tokens can be.
    let text = "y".repeat(200_000);
    let long = Recorder::start(json_answer(&format!(
        r#"{{"choices":[{{"text":"{text}"}}]}}"#
    )));
    let out = complete_against(&long.url, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let suggestion = crate::support::stdout(&out);
    assert!(
        suggestion.trim_end().len() <= 16 * 256 && suggestion.starts_with("yyyy"),
        "{} bytes",
        suggestion.len()
    );
}

#[test]
fn a_password_in_an_endpoint_is_never_shown() {
    let server = Recorder::start(SERVER_ERROR);
    let port = server.url.rsplit(':').next().expect("port");
    let endpoint = format!("http://alice:pw-s3cret@127.0.0.1:{port}");
    let out = complete_against(&endpoint, &["--log-level", "debug"]);
    assert_eq!(out.status.code(), Some(1));
    let shown = stderr(&out);
    assert!(shown.contains("***@127.0.0.1"), "{shown}");
    assert!(
        !shown.contains("pw-s3cret") && !shown.contains("alice"),
        "{shown}"
    );
    assert_eq!(server.received().len(), 1, "the request was made");

    // In a run file's error records too.
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = dev_cases(dir.path(), 1);
    let run = dir.path().join("run.jsonl");
    let user = dir.path().join("user.toml");
    std::fs::write(
        &user,
        format!(
            "[backend]\nkind = \"openai\"\nendpoint = \"{endpoint}\"\nretries = 0\n[model]\npath = {:?}\n",
            default_model()
        ),
    )
    .expect("write the user config");
    let repos = bench_repos();
    let args = bench_run_args(
        "cceval",
        cases.to_str().expect("utf-8"),
        repos.to_str().expect("utf-8"),
        run.to_str().expect("utf-8"),
    );
    let out = crossfile_with(&args, &dir.path().join("cache"), &user, &[]);
    assert_eq!(out.status.code(), Some(1), "a dead backend is an error");
    let record = std::fs::read_to_string(&run).expect("run file");
    assert!(record.contains("***@127.0.0.1"), "{record}");
    assert!(
        !record.contains("pw-s3cret") && !stderr(&out).contains("pw-s3cret"),
        "{record}"
    );
}

#[cfg(feature = "embedded")]
#[test]
fn serve_exits_at_once_when_its_input_closes_mid_completion() {
    use crate::lsp_client::{Client, uri};
    use serde_json::json;

    let (hang, accepted) = hanging_listener();
    let ws = Workspace::new("//- app.py\ndef handler(request):\n    return request\n");
    let mut client = Client::start_with(
        ws.cache.path(),
        &format!(
            "[backend]\nkind = \"openai\"\nendpoint = \"{hang}\"\ntimeout_ms = 60000\nretries = 0\n\
             [lsp]\ndebounce_ms = 0\n"
        ),
    );
    client.initialize(ws.root(), json!({}));
    client.wait_for_index();
    let doc = uri(ws.root(), "app.py");
    let text = std::fs::read_to_string(ws.root().join("app.py")).expect("read");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": doc, "languageId": "python", "version": 1, "text": text}}),
    );
    client.start_request(
        "textDocument/completion",
        json!({"textDocument": {"uri": doc}, "position": {"line": 1, "character": 11}}),
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while accepted.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the completion never reached the backend"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The backend would hang for 60 s; the server must not.
    let (code, took) = client.close_input();
    assert_eq!(code, Some(1), "no shutdown: an abrupt end");
    assert!(
        took < Duration::from_secs(10),
        "lingered {took:?} after its input closed"
    );
}

/// Two servers on one cache folder, both asked to replay in place in the same repositories:
/// the second is refused (naming the first), replays in its copy instead, and after both
/// walk their cases and shut down, every repository file is as it was, byte for byte.
#[cfg(feature = "embedded")]
#[test]
fn two_servers_replaying_in_place_never_lose_a_file() {
    use crate::lsp_client::Client;
    use crate::lsp_replay::tree_digest;
    use serde_json::{Value, json};

    let cache = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let (repos, cases) = repos_copy(dir.path(), 3);
    let before = tree_digest(&repos);
    let start = || Client::start_without_folders(cache.path(), NO_MODEL);
    let (mut a, mut b) = (start(), start());
    let in_place =
        |case: usize| json!({"cases": cases, "repos": repos, "case": case, "inPlace": true});
    a.execute("crossfile.replayCase", in_place(0));
    let refused = b.request(
        "workspace/executeCommand",
        json!({"command": "crossfile.replayCase", "arguments": [in_place(1)]}),
    );
    let message = refused
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    assert!(
        message.contains("in use by another crossfile")
            && message.contains(&format!("pid {}", a.pid())),
        "{refused}"
    );
    b.execute(
        "crossfile.replayCase",
        json!({"cases": cases, "repos": repos, "case": 1}),
    );
    for step in [
        "crossfile.nextCase",
        "crossfile.previousCase",
        "crossfile.nextCase",
    ] {
        a.execute(step, Value::Null);
        b.execute(
            if step.ends_with("nextCase") {
                "crossfile.previousCase"
            } else {
                "crossfile.nextCase"
            },
            Value::Null,
        );
    }
    assert_eq!(a.finish(true), Some(0));
    assert_eq!(b.finish(true), Some(0));
    assert!(
        before == tree_digest(&repos),
        "a repository file was left changed"
    );
}

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
    let repos = bench_repos();
    let args = [
        &bench_run_args(
            "cceval",
            cases.to_str().expect("utf-8"),
            repos.to_str().expect("utf-8"),
            run.to_str().expect("utf-8"),
        )[..],
        &["--backend", "none"],
    ]
    .concat();
    let out = crossfile_with(
        &args,
        &dir.path().join("cache"),
        &dir.path().join("none.toml"),
        &[],
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

/// Runs the binary, killed after `seconds` (a hang is a failure, not a stuck test).
fn crossfile_within(args: &[&str], cache: &Path, seconds: u64) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_crossfile"))
        .args(args)
        .env("CROSSFILE_CACHE_DIR", cache)
        .env("CROSSFILE_CONFIG", cache.join("no-user-config.toml"))
        .env_remove("CROSSFILE_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run crossfile");
    let deadline = std::time::Instant::now() + Duration::from_secs(seconds);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("crossfile {args:?} hung for {seconds} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
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
    use crate::lsp_client::Client;
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
    let repos = bench_repos();
    let args = [
        &bench_run_args(
            "cceval",
            cases.to_str().expect("utf-8"),
            repos.to_str().expect("utf-8"),
            run.to_str().expect("utf-8"),
        )[..],
        &["--backend", "none", "--json"],
    ]
    .concat();
    let out = crossfile_with(&args, &cache, &user, &[]);
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
    use crate::lsp_client::Client;
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
    assert!(message.contains("unknown format \"bogus\""), "{answer}");
    assert_eq!(client.finish(true), Some(0));
}
