//! `crossfile.status` and `crossfile.retrievers`: what the server resolved (the model and where it
//! comes from, the backend, the cache directory, each folder's index and trust) and the retriever
//! specs it accepts, as the clients show them; both follow a settings change.

use std::time::{Duration, Instant};

use crossfile_server::lsp::ext::{RetrieverInfo, Retrievers, Status};
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

fn retriever<'a>(list: &'a [RetrieverInfo], spec: &str) -> &'a RetrieverInfo {
    list.iter()
        .find(|r| r.spec == spec)
        .unwrap_or_else(|| panic!("no {spec} in {list:?}"))
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

    let status = client.command::<Status>(Value::Null);
    assert_eq!(status.version, env!("CARGO_PKG_VERSION"), "{status:?}");
    let folder = &status.folders[0];
    assert_eq!(folder.index, "ready", "{status:?}");
    assert_eq!(folder.files, Some(2), "{status:?}");
    assert!(folder.chunks.is_some_and(|n| n > 0), "{status:?}");
    // Untrusted: its file cannot send the code to an endpoint; the rest of it applies.
    assert!(!folder.trusted, "{status:?}");
    assert_eq!(status.backend.kind, "embedded", "{status:?}");
    assert_eq!(status.backend.endpoint, None, "{status:?}");
    assert_eq!(status.retriever, "jaccard", "{status:?}");
    assert_eq!(status.cache_dir, cache, "{status:?}");
    assert_eq!(status.user_config, Some(cache.join("user.toml")));
    assert!(status.user_config_exists);
    let shown = &status.model;
    assert_eq!(shown.source, "catalogue", "{status:?}");
    assert_eq!(shown.name.as_deref(), Some(model.name), "{status:?}");
    assert_eq!(shown.label, model.name, "{status:?}");
    assert_eq!(shown.file, cache.join("models").join(model.file));
    assert!(shown.present, "{status:?}");
    assert_eq!(shown.downloading, None, "{status:?}");
    // Loaded a moment after the start.
    let started = Instant::now();
    while !client.command::<Status>(Value::Null).model.loaded {
        assert!(started.elapsed() < Duration::from_secs(120), "never loaded");
        std::thread::sleep(Duration::from_millis(100));
    }

    let list = client.command::<Retrievers>(Value::Null);
    let bm25 = retriever(&list, "bm25");
    assert_eq!(bm25.needs, "nothing");
    assert_eq!((bm25.available, bm25.default), (true, false));
    assert!(retriever(&list, "jaccard").default, "{list:?}");
    assert!(retriever(&list, "oracle").upper_bound, "{list:?}");
    let dense = retriever(&list, "dense");
    assert_eq!(dense.needs, "dense-endpoint");
    assert!(!dense.available, "{list:?}");
    assert_eq!(retriever(&list, "dataset").needs, "case-context");
    let hybrid = retriever(&list, "hybrid:<spec>+<spec>[+<spec>...]");
    assert!(hybrid.composite, "{list:?}");
    // Every simple spec the list names is one the server takes.
    for spec in list.iter().filter(|s| !s.composite) {
        assert!(
            spec.spec
                .parse::<crossfile_engine::retrieve::RetrieverSpec>()
                .is_ok(),
            "{}",
            spec.spec
        );
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
    let status = client.command::<Status>(Value::Null);
    assert!(status.folders[0].trusted, "{status:?}");
    assert_eq!(status.backend.kind, "openai", "{status:?}");
    assert_eq!(
        status.backend.endpoint.as_deref(),
        Some("http://127.0.0.1:9/v1"),
        "{status:?}"
    );
    assert_eq!(status.model.label, "openai default", "{status:?}");
    let list = client.command::<Retrievers>(Value::Null);
    assert!(retriever(&list, "dense").available, "{list:?}");
    client.finish(true);
}
