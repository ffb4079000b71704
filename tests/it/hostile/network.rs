//! What comes back over the network is bounded and what goes out is redacted: huge and endless
//! answers, passwords in endpoint URLs, a server whose client went away mid-completion.

use super::*;
use crate::support::{Workspace, small_model, stderr};

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
    let ws = Workspace::new("//- app.py\ndef handler(request):\n    return $0request\n");
    let user = ws.cache.path().join("user.toml");
    std::fs::write(
        &user,
        format!(
            "[backend]\nkind = \"openai\"\nendpoint = \"{endpoint}\"\ntimeout_ms = 60000\nretries = 0\n\
             [model]\npath = {:?}\n[prompt]\nmax_new_tokens = 16\n",
            small_model()
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
            small_model()
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
    use crate::lsp::client::{Client, uri};
    use serde_json::json;

    let (hang, accepted) = hanging_listener();
    let ws = Workspace::new("//- app.py\ndef handler(request):\n    return $0request\n");
    let mut client = Client::start_with(
        ws.cache.path(),
        &format!(
            "[backend]\nkind = \"openai\"\nendpoint = \"{hang}\"\ntimeout_ms = 60000\nretries = 0\n\
             [lsp]\ndebounce_ms = 0\n"
        ),
    );
    client.initialize(ws.root(), json!({}));
    client.wait_for_index();
    let (file, line, character) = ws.cursor();
    let doc = uri(ws.root(), file);
    let text = std::fs::read_to_string(ws.root().join(file)).expect("read");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": doc, "languageId": "python", "version": 1, "text": text}}),
    );
    client.start_request(
        "textDocument/completion",
        json!({"textDocument": {"uri": doc}, "position": {"line": line, "character": character}}),
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
