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

use crate::support::{Workspace, default_model, stderr};

/// A listener on 127.0.0.1 that records every request it is sent and answers each with
/// `answer` (a whole HTTP response).
struct Recorder {
    url: String,
    received: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    fn start(answer: &'static [u8]) -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let request = read_request(&stream);
                log.lock().expect("log").push(request);
                let _ = (&stream).write_all(answer);
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
