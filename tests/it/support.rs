//! Shared test support: fixtures on disk, the corpus workspaces, the DEV repositories,
//! CrossCodeEval's chunks, the Python reference, the `crossfile` binary and a seeded generator.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crossfile_engine::chunk::is_blank;
use crossfile_engine::config::Settings;
use crossfile_engine::fixture::Fixture;
use crossfile_engine::index::IndexSettings;

/// Where `../shared/corpus/fetch` puts the corpus: `$CROSSFILE_CORPUS`, else
/// `${XDG_CACHE_HOME:-$HOME/.cache}/crossfile-corpus` (empty variables count as unset).
pub fn corpus_dir() -> PathBuf {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("CROSSFILE_CORPUS") {
        return dir;
    }
    let cache = var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|home| home.join(".cache")))
        .expect("neither XDG_CACHE_HOME nor HOME is set: set CROSSFILE_CORPUS");
    cache.join("crossfile-corpus")
}

/// The fetched corpus workspace `name`; panics, saying how to fetch it, if it is missing.
pub fn corpus_workspace(name: &str) -> PathBuf {
    let dir = corpus_dir().join(name);
    assert!(
        dir.is_dir(),
        "corpus workspace {name:?} is missing at {}: run `../shared/corpus/fetch` \
         (or set CROSSFILE_CORPUS to where it was fetched)",
        dir.display()
    );
    dir
}

/// The corpus workspaces, with their language's file extensions.
pub const WORKSPACES: &[(&str, &[&str])] = &[
    ("click", &["py"]),
    ("rich", &["py"]),
    ("pytest", &["py"]),
    ("django", &["py"]),
    ("cordova-android", &["java"]),
    ("jpype", &["java"]),
    ("react-native-svg", &["java"]),
    ("mobx", &["ts", "tsx"]),
    ("redux-toolkit", &["ts", "tsx"]),
    ("rxjs", &["ts", "tsx"]),
    ("effect", &["ts", "tsx"]),
    ("pythonnet", &["cs"]),
    ("unitask", &["cs"]),
];

/// The source extensions of all four languages.
pub const ALL_EXTS: &[&str] = &["py", "java", "ts", "tsx", "cs"];

/// Files under `root` whose name ends in `.<ext>` for one of `exts`, sorted. Hidden files and
/// directories (names starting with `.`) and symbolic links are skipped.
pub fn source_files(root: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("read_dir {}: {e}", dir.display()));
        for entry in entries {
            let entry = entry.unwrap_or_else(|e| panic!("read_dir {}: {e}", dir.display()));
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            let kind = entry
                .file_type()
                .unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() && exts.iter().any(|ext| name.ends_with(&format!(".{ext}"))) {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

/// A file's text as Python's `open(path, encoding="utf-8").read()` gives it: CRLF and lone CR
/// become LF and a BOM stays. A file that is not UTF-8 is decoded with U+FFFD replacement and no
/// newline conversion (CrossCodeEval's fallback).
pub fn read_text(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    match String::from_utf8(bytes) {
        Ok(text) => text.replace("\r\n", "\n").replace('\r', "\n"),
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// CrossCodeEval's chunks of a file's text: its non-blank lines, 10 at a time, joined by `\n`.
pub fn cceval_chunks(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.split('\n').filter(|line| !is_blank(line)).collect();
    lines.chunks(10).map(|window| window.join("\n")).collect()
}

/// Every CrossCodeEval chunk of workspace `name`, in file order.
pub fn workspace_chunks(name: &str, exts: &[&str]) -> Vec<String> {
    source_files(&corpus_workspace(name), exts)
        .iter()
        .flat_map(|file| cceval_chunks(&read_text(file)))
        .collect()
}

const PIP_HINT: &str = "pip install nltk==3.8.1 rank-bm25 sacrebleu==2.6.0";

/// Fails the test, saying what to install, unless `python3` has NLTK 3.8.1, rank-bm25 and
/// sacrebleu 2.6.0.
pub fn require_python_reference() {
    let check = "import nltk, rank_bm25, sacrebleu; assert nltk.__version__ == '3.8.1', \
                 nltk.__version__; assert sacrebleu.__version__ == '2.6.0', sacrebleu.__version__";
    match Command::new("python3").args(["-c", check]).output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "python3 lacks the reference libraries ({}); run `{PIP_HINT}`",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => panic!("cannot run python3 ({e}); install Python 3 and run `{PIP_HINT}`"),
    }
}

/// Runs `python3 <args>` over `inputs` (one JSON document per line, without newlines) and
/// returns its stdout lines, one per input, in order. The inputs are split into `workers`
/// contiguous parts, each fed to its own process.
pub fn python_lines(args: &[&str], inputs: &[String], workers: usize) -> Vec<String> {
    require_python_reference();
    let per_worker = inputs.len().div_ceil(workers.max(1)).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = inputs
            .chunks(per_worker)
            .map(|part| scope.spawn(move || run_python(args, part)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("python worker thread panicked"))
            .collect()
    })
}

fn run_python(args: &[&str], inputs: &[String]) -> Vec<String> {
    let mut child = Command::new("python3")
        .args(args)
        .env("PYTHONIOENCODING", "utf-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}); run `{PIP_HINT}`"));
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let lines = std::thread::scope(|scope| {
        scope.spawn(move || {
            // Dropping the writer at the end closes the pipe, so python3 sees the end of input.
            let mut w = std::io::BufWriter::new(stdin);
            for input in inputs {
                assert!(
                    !input.contains('\n'),
                    "a Python input line contains a newline"
                );
                w.write_all(input.as_bytes())
                    .and_then(|()| w.write_all(b"\n"))
                    .expect("write to python3");
            }
            w.flush().expect("write to python3");
        });
        BufReader::new(stdout)
            .lines()
            .map(|line| line.expect("read from python3"))
            .collect::<Vec<_>>()
    });
    let status = child.wait().expect("wait for python3");
    assert!(status.success(), "python3 {args:?} failed: {status}");
    assert_eq!(
        lines.len(),
        inputs.len(),
        "python3 {args:?} answered {} of {} lines",
        lines.len(),
        inputs.len()
    );
    lines
}

/// The path of the repository's reference script.
pub fn reference_script() -> String {
    format!("{}/scripts/cceval_reference.py", env!("CARGO_MANIFEST_DIR"))
}

pub use crossfile_engine::seeded::SplitMix64;

/// The DEV benchmark repositories (`shared/bench/unpack-repos`).
pub fn bench_repos() -> PathBuf {
    let dir = match std::env::var_os("CROSSFILE_BENCH_REPOS") {
        Some(dir) => PathBuf::from(dir),
        None => corpus_dir()
            .parent()
            .map(|p| p.join("crossfile-bench-repos"))
            .unwrap_or_default(),
    };
    assert!(
        dir.is_dir(),
        "the DEV repositories are missing at {}: run ../shared/bench/unpack-repos",
        dir.display()
    );
    dir
}

/// Copies the directory tree `from` to `to` (which must not exist yet), for tests that change
/// a real workspace.
pub fn copy_tree(from: &Path, to: &Path) {
    let copied = Command::new("cp")
        .arg("-r")
        .arg(from)
        .arg(to)
        .status()
        .expect("run cp");
    assert!(
        copied.success(),
        "cp -r {} {}",
        from.display(),
        to.display()
    );
}

/// `../shared` beside the project root.
pub fn shared_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared")
}

/// A workspace written from a fixture ([`crossfile_engine::fixture`]: `//- path` lines start files, `$0`
/// is the cursor). Also holds a private cache dir for the index, so tests never share or touch
/// the user's.
pub struct Workspace {
    pub dir: tempfile::TempDir,
    pub cache: tempfile::TempDir,
    pub fixture: Fixture,
}

impl Workspace {
    pub fn new(fixture: &str) -> Workspace {
        let ws = Workspace {
            dir: tempfile::tempdir().expect("tempdir"),
            cache: tempfile::tempdir().expect("tempdir"),
            fixture: Fixture::parse(fixture),
        };
        ws.fixture.write(ws.root()).expect("write the fixture");
        ws
    }

    /// The fixture's `$0`: its file and its LSP position (UTF-16 character).
    pub fn cursor(&self) -> (&str, u32, u32) {
        let cursor = self.fixture.cursor.as_ref().expect("the fixture has a $0");
        (cursor.path.as_str(), cursor.position.line, cursor.utf16_col)
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    /// Default settings with this workspace's private cache dir.
    pub fn settings(&self) -> Settings {
        let mut settings = Settings::default();
        settings.index.cache_dir = self.cache.path().to_path_buf();
        settings
    }

    pub fn index_settings(&self) -> IndexSettings {
        self.settings().index
    }
}

/// Threads of every model a test runs. Two tests run at once on two cores, and a model of two
/// threads beside another waits in llama.cpp's spinning barriers for a core: two such processes
/// generated 30 to 50 times slower than one alone (docs/testing.md, "Models").
pub const MODEL_THREADS: u32 = 1;

/// The user config of a test's `crossfile` process (`$CROSSFILE_CONFIG`), written under `cache`:
/// nothing but [`MODEL_THREADS`].
pub fn test_user_config(cache: &Path) -> PathBuf {
    std::fs::create_dir_all(cache).expect("the test's cache directory");
    let path = cache.join("test-user-config.toml");
    std::fs::write(&path, format!("[model]\nthreads = {MODEL_THREADS}\n"))
        .expect("write the test's user config");
    path
}

/// Runs the `crossfile` binary with an isolated cache and a user config of [`test_user_config`].
pub fn crossfile(args: &[&str], cache: &Path) -> Output {
    crossfile_with_env(args, cache, &[])
}

/// [`crossfile`] with `env` added to its environment.
pub fn crossfile_with_env(args: &[&str], cache: &Path, env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crossfile"))
        .args(args)
        .env("CROSSFILE_CACHE_DIR", cache)
        .env("CROSSFILE_CONFIG", test_user_config(cache))
        .env_remove("CROSSFILE_LOG")
        .envs(env.iter().copied())
        .output()
        .expect("run crossfile")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The small model (SmolLM2-135M, `smollm2-135m`), fetched once into the user's cache (one test
/// fetches; the others running at the same time wait for it): the tests of mechanics run it,
/// named explicitly, to stay fast; the default model's own tests use [`default_model`].
pub fn small_model() -> PathBuf {
    static FETCHED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    FETCHED
        .get_or_init(|| fetched(&crossfile_engine::model::SMOLLM2_135M))
        .clone()
}

/// The default model (Qwen2.5-Coder-0.5B), fetched once into the user's cache.
pub fn default_model() -> PathBuf {
    static FETCHED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    FETCHED
        .get_or_init(|| fetched(&crossfile_engine::model::DEFAULT_MODEL))
        .clone()
}

/// `model`'s file in the user's cache, fetched if it is not there.
fn fetched(model: &crossfile_engine::model::PinnedModel) -> PathBuf {
    crossfile_engine::model::fetch(
        model,
        &crossfile_engine::config::default_cache_dir(),
        &crossfile_engine::progress::Progress::none(),
    )
    .unwrap_or_else(|e| panic!("fetch {}: {e}", model.name))
}
