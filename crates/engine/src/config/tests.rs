//! Layers and the resolver: a later layer wins key by key (tables merge, they do not replace),
//! defaults fill the rest, and a bad layer names its file, line and every bad key.

use std::path::PathBuf;

use super::{ConfigError, Options, Settings, Source};
use crate::chunk::ChunkerKind;
use crate::retrieve::RetrieverSpec;

fn file(name: &str) -> Source {
    Source::File(PathBuf::from(name))
}

fn layer(text: &str, name: &str) -> Options {
    Options::parse_toml(text, file(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn later_layers_win_key_by_key_and_defaults_fill_the_rest() {
    let user = layer(
        "[retrieve]\ntop_k = 7\nretriever = \"jaccard\"\n[retrieve.dense]\nendpoint = \"http://127.0.0.1:9\"\n[index]\nfixed_lines = 5\n",
        "user.toml",
    );
    let workspace = layer("[retrieve]\ntop_k = 3\n", "crossfile.toml");
    let settings = Settings::resolve(&user.overlay(workspace));
    assert_eq!(settings.retrieve.top_k, 3, "the workspace's top_k wins");
    assert_eq!(
        settings.retrieve.retriever,
        RetrieverSpec::Jaccard,
        "the user's stays"
    );
    assert_eq!(
        settings.retrieve.dense.endpoint.as_deref(),
        Some("http://127.0.0.1:9"),
        "a nested table merges"
    );
    assert_eq!(settings.index.chunker.fixed_lines, 5);
    // Untouched keys keep their defaults.
    let defaults = Settings::default();
    assert_eq!(
        settings.index.chunker.sliding_lines,
        defaults.index.chunker.sliding_lines
    );
    assert_eq!(settings.index.bm25_chunker, ChunkerKind::Sliding);
    assert_eq!(settings.prompt.max_new_tokens, 50);
    assert_eq!(settings.index.workspace.max_file_bytes, 1 << 20);
}

#[test]
fn a_bad_layer_names_its_file_line_and_every_bad_key() {
    match Options::parse_toml("[retrieve]\ntop_k = \n", file("bad.toml")) {
        Err(ConfigError::Syntax { line, .. }) => assert_eq!(line, 2),
        other => panic!("{other:?}"),
    }
    let e = Options::parse_toml(
        "[retrieve]\ntop_kk = 3\n[index]\nfixd_lines = 2\n",
        file("typo.toml"),
    )
    .expect_err("unknown keys");
    let shown = e.to_string();
    assert!(
        shown.starts_with("typo.toml: ")
            && shown.contains("retrieve.top_kk: unknown key")
            && shown.contains("index.fixd_lines: unknown key"),
        "{shown}"
    );
    let e = Options::parse_toml("[retrieve]\ntop_k = \"five\"\n", file("type.toml"))
        .expect_err("mistyped");
    assert!(e.to_string().contains("retrieve.top_k"), "{e}");
    let e = Options::parse_toml("[workspace]\nmax_file_bytes = 0\n", file("range.toml"))
        .expect_err("out of range");
    assert!(
        e.to_string()
            .contains("workspace.max_file_bytes: must be at least 1"),
        "{e}"
    );
    let e = Options::parse_toml("[retrieve]\nexclude = \"files\"\n", file("exclude.toml"))
        .expect_err("not a setting");
    assert!(
        e.to_string()
            .contains("retrieve.exclude: `files` is not one of none, window, file"),
        "{e}"
    );
    let file_only = Options::parse_toml("[retrieve]\nexclude = \"file\"\n", file("ok.toml"))
        .expect("a setting");
    assert_eq!(
        Settings::resolve(&file_only).retrieve.exclude,
        crate::retrieve::Exclude::File
    );
}

#[test]
fn client_settings_are_checked_by_dotted_path() {
    assert!(Options::from_client(None).is_ok());
    assert!(Options::from_client(Some(serde_json::Value::Null)).is_ok());
    // Neovim sends an empty Lua table as `[]`; a non-empty array is still refused.
    assert!(Options::from_client(Some(serde_json::json!([]))).is_ok());
    assert!(Options::from_client(Some(serde_json::json!([1]))).is_err());
    let good = Options::from_client(Some(serde_json::json!({"retrieve": {"top_k": 3}})));
    assert_eq!(
        good.ok().and_then(|o| o.retrieve).and_then(|r| r.top_k),
        Some(3)
    );
    let bad = Options::from_client(Some(serde_json::json!({
        "retrieve": {"top_k": "many", "colour": 1},
    })));
    let message = bad.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("client settings"), "{message}");
    assert!(
        message.contains("retrieve.colour: unknown key"),
        "{message}"
    );
    assert!(message.contains("retrieve.top_k"), "{message}");
}
