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

/// Every named choice of the settings: its dotted key and the names its type accepts.
fn choices() -> Vec<(&'static str, Vec<&'static str>)> {
    use crate::choice::{Choice, OrAuto};
    vec![
        ("index.bm25_chunker", ChunkerKind::names().to_vec()),
        (
            "retrieve.exclude",
            crate::retrieve::Exclude::names().to_vec(),
        ),
        (
            "backend.kind",
            crate::backend::BackendKind::names().to_vec(),
        ),
        ("backend.fim", crate::backend::FimRoute::names().to_vec()),
        (
            "prompt.template",
            OrAuto::<crate::prompt::Template>::names(),
        ),
        (
            "prompt.layout",
            OrAuto::<crate::prompt::CrossfileLayout>::names(),
        ),
        (
            "postprocess.unit",
            crate::postprocess::Unit::names().to_vec(),
        ),
        ("arena.pairs", super::PairRule::names().to_vec()),
    ]
}

/// A bad name names the key, the value and every name the key's type accepts; every bad key of
/// a layer is reported, not only the first.
#[test]
fn a_bad_name_is_reported_with_its_key_and_the_names_from_its_type() {
    let mut text = String::new();
    let mut section = "";
    for (key, _) in choices() {
        let (table, leaf) = key.split_once('.').expect("a dotted key");
        if table != section {
            text.push_str(&format!("[{table}]\n"));
            section = table;
        }
        text.push_str(&format!("{leaf} = \"nonesuch\"\n"));
    }
    let shown = Options::parse_toml(&text, file("names.toml"))
        .expect_err("no such names")
        .to_string();
    for (key, names) in choices() {
        let expected = format!("{key}: `nonesuch` is not one of {}", names.join(", "));
        assert!(shown.contains(&expected), "{expected}\nin\n{shown}");
    }
    assert!(
        shown.contains("backend.kind: `nonesuch` is not one of embedded, openai, openai-chat"),
        "{shown}"
    );
}

/// docs/configuration.md's line for each named choice lists every name its type accepts.
#[test]
fn the_configuration_doc_lists_every_name_of_each_choice() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    let doc = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    for (key, names) in choices() {
        let (table, leaf) = key.split_once('.').expect("a dotted key");
        let line = doc
            .lines()
            .skip_while(|l| !l.starts_with(&format!("[{table}]")))
            .skip(1)
            .take_while(|l| !l.starts_with('['))
            .find(|l| l.starts_with(&format!("{leaf} = ")))
            .unwrap_or_else(|| panic!("{path}: no line for {key}"));
        for name in names {
            assert!(
                line.contains(name),
                "{path}: {key} does not list `{name}`: {line}"
            );
        }
    }
}

/// The VS Code extension's settings offer each named choice by the names of its type, in its
/// order (and the catalogue's models by name): an enum there is the type's list, not a copy that
/// could drift from it.
#[test]
fn the_vscode_settings_offer_each_choice_by_the_names_of_its_type() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../editors/vscode/package.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let package: serde_json::Value = serde_json::from_str(&text).expect("package.json");
    let enum_of = |key: &str| -> Option<Vec<String>> {
        // One section, or a list of them.
        let configuration = &package["contributes"]["configuration"];
        let sections = configuration
            .as_array()
            .map_or_else(|| vec![configuration], |all| all.iter().collect());
        let property = sections
            .iter()
            .find_map(|s| s["properties"].get(format!("crossfile.{key}")))?;
        let names = property.get("enum")?.as_array()?;
        Some(
            names
                .iter()
                .map(|n| n.as_str().expect("a name").to_string())
                .collect(),
        )
    };
    let mut offered = 0;
    for (key, names) in choices() {
        if let Some(list) = enum_of(key) {
            assert_eq!(list, names, "{path}: crossfile.{key}");
            offered += 1;
        }
    }
    assert!(offered >= 5, "the extension offers its choices as enums");
    let models: Vec<&str> = crate::model::catalogue::CATALOGUE
        .iter()
        .map(|m| m.name)
        .collect();
    assert_eq!(
        enum_of("model.name").expect("crossfile.model.name's enum"),
        models,
        "{path}: crossfile.model.name"
    );
}
