//! Shared test support: fixtures on disk, real corpus workspaces, the DEV repositories, and the
//! `crossfile` binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crossfile::config::{IndexSettings, Settings};

/// `${CROSSFILE_CORPUS:-${XDG_CACHE_HOME:-$HOME/.cache}/crossfile-corpus}`, as `shared/corpus/fetch`.
pub fn corpus_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CROSSFILE_CORPUS") {
        return PathBuf::from(dir);
    }
    cache_home().join("crossfile-corpus")
}

/// A fetched corpus workspace; panics with the command to run if it is missing.
pub fn corpus_workspace(name: &str) -> PathBuf {
    let dir = corpus_dir().join(name);
    assert!(
        corpus_dir().join(".complete").join(name).exists(),
        "corpus workspace {name} is missing at {}: run ../shared/corpus/fetch {name}",
        dir.display()
    );
    dir
}

/// The DEV benchmark repositories (`shared/bench/unpack-repos`).
pub fn bench_repos() -> PathBuf {
    let dir = match std::env::var_os("CROSSFILE_BENCH_REPOS") {
        Some(dir) => PathBuf::from(dir),
        None => cache_home().join("crossfile-bench-repos"),
    };
    assert!(
        dir.is_dir(),
        "the DEV repositories are missing at {}: run ../shared/bench/unpack-repos",
        dir.display()
    );
    dir
}

/// `../shared` beside the project root.
pub fn shared_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared")
}

fn cache_home() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
        })
}

/// A workspace written from a fixture: `//- path` lines start files. Also holds a private cache
/// dir for the index, so tests never share or touch the user's.
pub struct Workspace {
    pub dir: tempfile::TempDir,
    pub cache: tempfile::TempDir,
}

impl Workspace {
    pub fn new(fixture: &str) -> Workspace {
        let ws = Workspace {
            dir: tempfile::tempdir().expect("tempdir"),
            cache: tempfile::tempdir().expect("tempdir"),
        };
        let mut current: Option<(String, String)> = None;
        for line in fixture.lines() {
            if let Some(path) = line.strip_prefix("//- ") {
                if let Some((p, text)) = current.take() {
                    ws.write(&p, &text);
                }
                current = Some((path.trim().to_string(), String::new()));
            } else if let Some((_, text)) = current.as_mut() {
                text.push_str(line);
                text.push('\n');
            }
        }
        if let Some((p, text)) = current {
            ws.write(&p, &text);
        }
        ws
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

/// Runs the `crossfile` binary with an isolated cache and config.
pub fn crossfile(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crossfile"))
        .args(args)
        .env("CROSSFILE_CACHE_DIR", cache)
        .env("CROSSFILE_CONFIG", cache.join("no-user-config.toml"))
        .env_remove("CROSSFILE_LOG")
        .output()
        .expect("run crossfile")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
