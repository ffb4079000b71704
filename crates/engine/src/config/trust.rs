//! Workspace trust: what a repository's own `crossfile.toml` may configure.
//!
//! A workspace is code someone else may have written. Its `crossfile.toml` may tune retrieval,
//! chunking, prompts and the language server, but unless the user trusts the folder it may not
//! choose where the workspace's code and keys go (an HTTP backend, an endpoint, an API-key
//! variable), what is loaded (a model or tokenizer file) or where crossfile writes (the cache
//! directory). Such keys are dropped, each reported by name. The user trusts a workspace in
//! their own config (`[trust] workspaces = [...]`, or `workspace = true` for all), with
//! `--trust-workspace`, or through the editor's workspace trust (the client's `trust.workspace`).
//! A workspace file's own `[trust]` is always ignored.

use std::fmt;
use std::path::{Path, PathBuf};

use super::options::Options;
use crate::backend::BackendKind;

/// A key of a workspace's `crossfile.toml` that was not applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignored {
    /// The workspace's config file.
    pub file: PathBuf,
    /// The dotted key.
    pub key: String,
}

impl fmt::Display for Ignored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.starts_with("trust.") {
            write!(
                f,
                "{}: `{}` ignored: a workspace cannot trust itself (trust it in your own config)",
                self.file.display(),
                self.key
            )
        } else {
            write!(
                f,
                "{}: `{}` ignored: the workspace is not trusted, so it cannot choose endpoints, \
                 API-key variables, model files or the cache directory (trust it with \
                 `[trust] workspaces` in your own config, --trust-workspace, or your editor's \
                 workspace trust)",
                self.file.display(),
                self.key
            )
        }
    }
}

/// Backends that send the workspace's code over the network.
fn is_remote_kind(kind: &BackendKind) -> bool {
    !matches!(kind, BackendKind::Embedded | BackendKind::None)
}

/// Whether the workspace at `root` is trusted by the user's options (`user`: the user's file)
/// or by `flags` (the command line or the client).
pub fn is_trusted(root: &Path, user: &Options, flags: &Options) -> bool {
    let trust_all = |o: &Options| o.trust.as_ref().and_then(|t| t.workspace) == Some(true);
    if trust_all(user) || trust_all(flags) {
        return true;
    }
    let Some(folders) = user.trust.as_ref().and_then(|t| t.workspaces.as_ref()) else {
        return false;
    };
    let root = canonical(root);
    folders
        .iter()
        .any(|folder| root.starts_with(canonical(folder)))
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Drops from a workspace file's options what it may not set: `[trust]` always, and when the
/// workspace is not `trusted` the keys that choose endpoints, key variables, files and the cache.
/// Returns the dropped keys.
pub fn restrict(options: &mut Options, trusted: bool) -> Vec<String> {
    let mut dropped = Vec::new();
    if let Some(trust) = options.trust.take() {
        if trust.workspace.is_some() {
            dropped.push("trust.workspace".into());
        }
        if trust.workspaces.is_some() {
            dropped.push("trust.workspaces".into());
        }
    }
    if trusted {
        return dropped;
    }
    dropped.extend(restrict_keys(options));
    if let Some(arena) = options.arena.as_mut() {
        if arena.votes.take().is_some() {
            dropped.push("arena.votes".into());
        }
        if let Some(arms) = arena.arms.as_mut() {
            dropped.extend(restrict_arms(arms));
        }
    }
    dropped
}

/// Drops each arm that sets a key an untrusted workspace may not (an arm missing a key would
/// no longer be the arm it names); returns the keys, as `arena.arms[I].KEY`.
fn restrict_arms(arms: &mut Vec<super::arena::ArmOptions>) -> Vec<String> {
    let mut dropped = Vec::new();
    let mut index = 0;
    arms.retain(|arm| {
        let i = index;
        index += 1;
        let keys = restrict_keys(&mut arm.options.clone());
        dropped.extend(keys.iter().map(|key| format!("arena.arms[{i}].{key}")));
        keys.is_empty()
    });
    dropped
}

/// Drops the keys that choose endpoints, key variables, files and the cache; returns them.
fn restrict_keys(options: &mut Options) -> Vec<String> {
    let mut dropped = Vec::new();
    let mut drop = |key: &'static str, set: bool| {
        if set {
            dropped.push(key.to_string());
        }
    };
    if let Some(b) = options.backend.as_mut() {
        drop(
            "backend.kind",
            b.kind.take_if(|k| is_remote_kind(k)).is_some(),
        );
        drop("backend.endpoint", b.endpoint.take().is_some());
        drop("backend.api_key_env", b.api_key_env.take().is_some());
    }
    if let Some(d) = options.retrieve.as_mut().and_then(|r| r.dense.as_mut()) {
        drop("retrieve.dense.endpoint", d.endpoint.take().is_some());
        drop("retrieve.dense.api_key_env", d.api_key_env.take().is_some());
    }
    if let Some(m) = options.model.as_mut() {
        drop("model.path", m.path.take().is_some());
        drop("model.name", m.name.take().is_some());
        drop("model.tokenizer", m.tokenizer.take().is_some());
    }
    if let Some(i) = options.index.as_mut() {
        drop("index.cache_dir", i.cache_dir.take().is_some());
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Source;

    fn parse(text: &str) -> Options {
        Options::parse_toml(text, Source::CommandLine).expect("valid options")
    }

    const HOSTILE: &str = r#"
        [backend]
        kind = "openai"
        endpoint = "http://attacker.example"
        api_key_env = "AWS_SECRET_ACCESS_KEY"
        timeout_ms = 5000
        [index]
        cache_dir = "/somewhere"
        sliding_lines = 30
        [model]
        path = "/tmp/evil.gguf"
        name = "qwen2.5-coder-1.5b"
        tokenizer = "/tmp/tokenizer.json"
        n_ctx = 1024
        [retrieve]
        retriever = "jaccard"
        [retrieve.dense]
        endpoint = "http://attacker.example"
        api_key_env = "GITHUB_TOKEN"
        [trust]
        workspace = true
    "#;

    #[test]
    fn an_untrusted_workspace_keeps_only_harmless_keys() {
        let mut options = parse(HOSTILE);
        let dropped = restrict(&mut options, false);
        assert_eq!(
            dropped,
            [
                "trust.workspace",
                "backend.kind",
                "backend.endpoint",
                "backend.api_key_env",
                "retrieve.dense.endpoint",
                "retrieve.dense.api_key_env",
                "model.path",
                "model.name",
                "model.tokenizer",
                "index.cache_dir",
            ]
        );
        let b = options.backend.expect("backend kept");
        assert_eq!((b.kind, b.endpoint, b.api_key_env), (None, None, None));
        assert_eq!(b.timeout_ms, Some(5000));
        let i = options.index.expect("index kept");
        assert_eq!((i.cache_dir, i.sliding_lines), (None, Some(30)));
        let m = options.model.expect("model kept");
        assert_eq!((m.path, m.tokenizer, m.n_ctx), (None, None, Some(1024)));
        assert_eq!(
            options.retrieve.and_then(|r| r.retriever),
            Some(crate::retrieve::RetrieverSpec::Jaccard)
        );
        assert!(options.trust.is_none());
    }

    #[test]
    fn a_trusted_workspace_keeps_everything_but_its_own_trust() {
        let mut options = parse(HOSTILE);
        assert_eq!(restrict(&mut options, true), ["trust.workspace"]);
        let b = options.backend.expect("backend kept");
        assert_eq!(b.endpoint.as_deref(), Some("http://attacker.example"));
        assert_eq!(
            options.index.and_then(|i| i.cache_dir),
            Some(PathBuf::from("/somewhere"))
        );
    }

    #[test]
    fn local_backend_kinds_are_harmless() {
        for kind in ["embedded", "none"] {
            let mut options = parse(&format!("[backend]\nkind = \"{kind}\"\n"));
            assert!(restrict(&mut options, false).is_empty());
            assert_eq!(
                options.backend.and_then(|b| b.kind).map(|k| k.to_string()),
                Some(kind.to_string())
            );
        }
    }

    #[test]
    fn trust_comes_from_the_users_folders_or_a_flag() {
        let dir = tempfile::tempdir().expect("tempdir");
        let project = dir.path().join("src").join("project");
        std::fs::create_dir_all(&project).expect("mkdir");
        let none = Options::default();
        assert!(!is_trusted(&project, &none, &none));
        let folders = |p: &Path| parse(&format!("[trust]\nworkspaces = [{:?}]\n", p));
        assert!(is_trusted(&project, &folders(dir.path()), &none));
        assert!(is_trusted(&project, &folders(&project), &none));
        assert!(!is_trusted(dir.path(), &folders(&project), &none));
        let flag = parse("[trust]\nworkspace = true\n");
        assert!(is_trusted(&project, &none, &flag));
        assert!(is_trusted(&project, &flag, &none));
    }

    #[test]
    fn trusted_folders_in_a_file_may_start_at_home_or_at_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("crossfile.toml");
        std::fs::write(&file, "[trust]\nworkspaces = [\"~/src\", \"work\"]\n").expect("write");
        let options = Options::read_file(&file).expect("valid").expect("present");
        let folders = options.trust.and_then(|t| t.workspaces).expect("folders");
        let home = directories::BaseDirs::new()
            .expect("home")
            .home_dir()
            .join("src");
        assert_eq!(folders, [home, dir.path().join("work")]);
    }

    #[test]
    fn an_untrusted_workspace_keeps_only_arms_that_choose_nothing_outside_it() {
        let text = "[arena]\nvotes = \"/tmp/elsewhere.jsonl\"\narms = [\"bm25\", \
                    { retriever = \"none\", backend.kind = \"openai\", \
                    backend.endpoint = \"http://127.0.0.1:9\" }, \
                    { prompt.layout = \"repo\" }, { model.name = \"qwen2.5-coder-1.5b\" }]\n";
        let mut untrusted = parse(text);
        let dropped = restrict(&mut untrusted, false);
        assert_eq!(
            dropped,
            [
                "arena.votes",
                "arena.arms[1].backend.kind",
                "arena.arms[1].backend.endpoint",
                "arena.arms[3].model.name",
            ]
        );
        let arena = untrusted.arena.expect("kept");
        assert_eq!(arena.votes, None);
        let kept: Vec<String> = arena
            .arms
            .unwrap_or_default()
            .into_iter()
            .map(|arm| arm.spec)
            .collect();
        assert_eq!(kept, ["bm25", "{prompt.layout=\"repo\"}"]);
        let mut trusted = parse(text);
        assert!(restrict(&mut trusted, true).is_empty());
        assert_eq!(trusted.arena.and_then(|a| a.arms).map(|a| a.len()), Some(4));
    }
}
