//! `crossfile.status` and `crossfile.retrievers`: what the server resolved (the model and where it
//! comes from, the backend, the cache directory, each folder's index and trust) and the retriever
//! specs it accepts, as the clients show them; both follow a settings change.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::lsp::client::Client;
use crate::support::{Workspace, default_model};

/// A workspace whose own file asks for an HTTP backend (honoured only when it is trusted) and
/// the `jaccard` retriever.
const FIXTURE: &str = r#"
//- app.py
from shapes import Box

def area(box):
    return box.width * box.height
//- shapes.py
class Box:
    def __init__(self, width, height):
        self.width = width
        self.height = height
//- crossfile.toml
[backend]
kind = "openai"
endpoint = "http://127.0.0.1:9/v1"
[retrieve]
retriever = "jaccard"
"#;

fn retriever<'a>(list: &'a Value, spec: &str) -> &'a Value {
    list.as_array()
        .and_then(|l| l.iter().find(|r| r["spec"] == spec))
        .unwrap_or_else(|| panic!("no {spec} in {list}"))
}

#[test]
fn status_and_retrievers_say_what_the_server_resolved() {
    let ws = Workspace::new(FIXTURE);
    let cache = ws.cache.path();
    // No model named: the catalogue's default, which the server loads at the start, found in
    // its cache (a link to the copy the tests share, so nothing is downloaded).
    let model = crossfile_engine::model::DEFAULT_MODEL;
    std::fs::create_dir_all(cache.join("models")).expect("mkdir");
    std::os::unix::fs::symlink(default_model(), cache.join("models").join(model.file))
        .expect("link the model");
    let mut client = Client::start_with_user_config(cache, "");
    client.initialize(ws.root(), json!({}));
    client.wait_for_index();

    let status = client.execute("crossfile.status", Value::Null);
    assert_eq!(status["version"], env!("CARGO_PKG_VERSION"), "{status}");
    let folder = &status["folders"][0];
    assert_eq!(folder["index"], "ready", "{status}");
    assert_eq!(folder["files"], 2, "{status}");
    assert!(folder["chunks"].as_u64().is_some_and(|n| n > 0), "{status}");
    // Untrusted: its file cannot send the code to an endpoint; the rest of it applies.
    assert_eq!(folder["trusted"], false, "{status}");
    assert_eq!(status["backend"]["kind"], "embedded", "{status}");
    assert_eq!(status["backend"]["endpoint"], Value::Null, "{status}");
    assert_eq!(status["retriever"], "jaccard", "{status}");
    assert_eq!(status["cacheDir"], json!(cache), "{status}");
    assert_eq!(status["userConfig"], json!(cache.join("user.toml")));
    assert_eq!(status["userConfigExists"], true);
    let shown = &status["model"];
    assert_eq!(shown["source"], "catalogue", "{status}");
    assert_eq!(shown["name"], model.name, "{status}");
    assert_eq!(shown["label"], model.name, "{status}");
    assert_eq!(shown["file"], json!(cache.join("models").join(model.file)));
    assert_eq!(shown["present"], true, "{status}");
    assert_eq!(shown["downloading"], Value::Null, "{status}");
    // Loaded a moment after the start.
    let started = Instant::now();
    while client.execute("crossfile.status", Value::Null)["model"]["loaded"] != true {
        assert!(started.elapsed() < Duration::from_secs(120), "never loaded");
        std::thread::sleep(Duration::from_millis(100));
    }

    let list = client.execute("crossfile.retrievers", Value::Null);
    let bm25 = retriever(&list, "bm25");
    assert_eq!(bm25["needs"], "nothing");
    assert_eq!(
        (bm25["available"].clone(), bm25["default"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(retriever(&list, "jaccard")["default"], true, "{list}");
    assert_eq!(retriever(&list, "oracle")["upperBound"], true, "{list}");
    let dense = retriever(&list, "dense");
    assert_eq!(dense["needs"], "dense-endpoint");
    assert_eq!(dense["available"], false, "{list}");
    assert_eq!(retriever(&list, "dataset")["needs"], "case-context");
    let hybrid = retriever(&list, "hybrid:<spec>+<spec>[+<spec>...]");
    assert_eq!(hybrid["composite"], true, "{list}");
    // Every simple spec the list names is one the server takes.
    for spec in list.as_array().into_iter().flatten() {
        if spec["composite"] == false {
            let name = spec["spec"].as_str().unwrap_or_default();
            assert!(
                name.parse::<crossfile_engine::retrieve::RetrieverSpec>()
                    .is_ok(),
                "{name}"
            );
        }
    }

    // The editor trusts the workspace and names an embeddings endpoint: its backend applies now,
    // and `dense` can run.
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"crossfile": {
            "trust": {"workspace": true},
            "retrieve": {"dense": {"endpoint": "http://127.0.0.1:9/v1"}},
        }}}),
    );
    let status = client.execute("crossfile.status", Value::Null);
    assert_eq!(status["folders"][0]["trusted"], true, "{status}");
    assert_eq!(status["backend"]["kind"], "openai", "{status}");
    assert_eq!(
        status["backend"]["endpoint"], "http://127.0.0.1:9/v1",
        "{status}"
    );
    assert_eq!(status["model"]["label"], "openai default", "{status}");
    let list = client.execute("crossfile.retrievers", Value::Null);
    assert_eq!(retriever(&list, "dense")["available"], true, "{list}");
    client.finish(true);
}
