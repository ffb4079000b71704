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

use crate::support::{bench_repos, shared_dir};

mod inputs;
mod network;
mod trust;
mod writers;

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

/// `bench run` of CrossCodeEval `cases` on the DEV repositories into `run` (retriever `none`),
/// with `extra` flags, the cache `cache` and the user config `user`.
fn bench_run_cceval(cases: &Path, run: &Path, extra: &[&str], cache: &Path, user: &Path) -> Output {
    let repos = bench_repos();
    let args = [
        &bench_run_args(
            "cceval",
            cases.to_str().expect("utf-8"),
            repos.to_str().expect("utf-8"),
            run.to_str().expect("utf-8"),
        )[..],
        extra,
    ]
    .concat();
    crossfile_with(&args, cache, user, &[])
}

/// Runs the binary, killed after `seconds` (a hang is a failure, not a stuck test).
fn crossfile_within(args: &[&str], cache: &Path, seconds: u64) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_crossfile"))
        .args(args)
        .env("CROSSFILE_CACHE_DIR", cache)
        .env("CROSSFILE_CONFIG", crate::support::test_user_config(cache))
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
