//! `dense` against a real embeddings server (`llama-server --embedding` with the default model):
//! a query that repeats a chunk finds that chunk, only the query's language is ranked, the disk
//! cache spares a second run every chunk request, and the retriever composes inside `hybrid` and
//! `mmr`, with rayon and inside a tokio runtime. Plus the errors of an unreachable endpoint.

use crossfile_engine::Position;
use crossfile_engine::config::Settings;
use crossfile_engine::index::{Index, Progress, Snapshot};
use crossfile_engine::retrieve::dense::{Dense, DenseStats};
use crossfile_engine::retrieve::{self, Hit, Query, RetrieveError, Retriever, RetrieverSpec};
use crossfile_engine::retrieve::{DenseSettings, RetrieveSettings};
use rayon::prelude::*;

use crate::backends::servers;
use crate::support::Workspace;

/// Small files, each one sliding chunk, on unrelated topics; a Java file that must never be
/// ranked for a Python query. No blank lines: the query (non-blank lines before the cursor)
/// repeating a file is then exactly its chunk's text.
const FIXTURE: &str = r#"
//- geometry/shapes.py
import math
class Circle:
    def __init__(self, radius):
        self.radius = radius
    def area(self):
        return math.pi * self.radius ** 2
//- net/http_client.py
import urllib.request
def fetch_json(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        body = response.read().decode("utf-8")
    return json.loads(body)
//- text/slug.py
import re
def slugify(title):
    lowered = title.strip().lower()
    return re.sub(r"[^a-z0-9]+", "-", lowered).strip("-")
//- db/users.py
def find_user_by_email(connection, email):
    cursor = connection.execute("SELECT id, name FROM users WHERE email = ?", (email,))
    row = cursor.fetchone()
    return None if row is None else {"id": row[0], "name": row[1]}
//- stats/mean.py
def mean(values):
    if not values:
        raise ValueError("mean of an empty sequence")
    return sum(values) / len(values)
//- app/Main.java
public class Main {
    public static void main(String[] args) {
        System.out.println("slugify area mean fetch_json find_user_by_email");
    }
}
"#;

const PYTHON_FILES: [&str; 5] = [
    "geometry/shapes.py",
    "net/http_client.py",
    "text/slug.py",
    "db/users.py",
    "stats/mean.py",
];

fn dense_settings(endpoint: &str, cache_dir: &std::path::Path) -> DenseSettings {
    DenseSettings {
        endpoint: Some(endpoint.to_string()),
        model: "smollm2-135m-test".into(),
        api_key_env: None,
        timeout_ms: 60_000,
        cache_dir: cache_dir.to_path_buf(),
    }
}

/// A query from a scratch file (not indexed) whose text before the cursor is `text`.
fn query_repeating(text: &str) -> Query {
    let lines: Vec<&str> = text.split('\n').collect();
    let line = (lines.len() - 1) as u32;
    let col = lines.last().map_or(0, |l| l.len()) as u32;
    Query::new("scratch/query.py", text, Position { line, col }).expect("cursor")
}

/// For each Python file: the top hits of a query repeating its whole text (20 lines, so the
/// query is exactly the chunk).
fn rank_all(dense: &Dense, ws: &Workspace, snapshot: &Snapshot) -> Vec<Vec<Hit>> {
    PYTHON_FILES
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(ws.root().join(path)).expect("read");
            let text = text.trim_end_matches('\n');
            dense
                .retrieve(snapshot, &query_repeating(text), 3)
                .unwrap_or_else(|e| panic!("{path}: {e}"))
        })
        .collect()
}

#[test]
fn dense_finds_the_repeated_chunk_and_its_disk_cache_spares_the_second_run() {
    let _one = servers::exclusive();
    let server = servers::llama_server_embeddings();
    let ws = Workspace::new(FIXTURE);
    let (index, _) =
        Index::open_or_build(ws.root(), &ws.index_settings(), &Progress::none()).expect("index");
    let snapshot = index.snapshot();
    let settings = dense_settings(&server.url, ws.cache.path());

    let first = Dense::new(&settings).expect("dense").with_query_lines(20);
    let ranked = rank_all(&first, &ws, &snapshot);
    for (path, hits) in PYTHON_FILES.iter().zip(&ranked) {
        let top = hits.first().unwrap_or_else(|| panic!("{path}: no hits"));
        assert_eq!(top.path, *path, "{path}: {hits:#?}");
        assert!(
            top.score > 0.999,
            "{path}: identical text, cosine {}",
            top.score
        );
        assert!(
            hits.iter().all(|h| h.path.ends_with(".py")),
            "{path}: only Python is ranked for a Python query: {hits:#?}"
        );
        assert!(
            hits.windows(2).all(|w| w[0].score >= w[1].score),
            "{hits:#?}"
        );
    }
    // One batch of the five Python chunks, then one request per query.
    assert_eq!(
        first.stats(),
        DenseStats {
            requests: 1 + PYTHON_FILES.len() as u64,
            chunks_embedded: PYTHON_FILES.len() as u64,
        }
    );
    let file = first.cache_dir().join("vectors.bin");
    assert!(file.is_file(), "{}", file.display());
    assert!(
        first
            .cache_dir()
            .starts_with(ws.cache.path().join("embeddings"))
    );
    drop(first);

    // A new retriever (as in a new process) reads the vectors back: no chunk is sent again.
    let second = Dense::new(&settings).expect("dense").with_query_lines(20);
    let again = rank_all(&second, &ws, &snapshot);
    assert_eq!(
        second.stats(),
        DenseStats {
            requests: PYTHON_FILES.len() as u64,
            chunks_embedded: 0,
        },
        "the second run embeds only its queries"
    );
    for (a, b) in ranked.iter().zip(&again) {
        let paths = |hits: &[Hit]| hits.iter().map(|h| h.path.clone()).collect::<Vec<_>>();
        assert_eq!(paths(a), paths(b));
        for (x, y) in a.iter().zip(b) {
            assert!((x.score - y.score).abs() < 1e-4, "{x:?} vs {y:?}");
        }
    }

    // An edited file: only its chunk is embedded again.
    ws.write("stats/mean.py", "def median(values):\n    ordered = sorted(values)\n    return ordered[len(ordered) // 2]\n");
    index.sync(&Progress::none()).expect("sync");
    let snapshot = index.snapshot();
    let q = query_repeating(
        "def median(values):\n    ordered = sorted(values)\n    return ordered[len(ordered) // 2]",
    );
    let hits = second.retrieve(&snapshot, &q, 1).expect("retrieve");
    assert_eq!(hits.first().map(|h| h.path.as_str()), Some("stats/mean.py"));
    assert_eq!(second.stats().chunks_embedded, 1);

    // Warming embeds what no query needed: here the Java file's chunk.
    assert_eq!(second.warm(&snapshot).expect("warm"), 1);
    assert_eq!(second.warm(&snapshot).expect("warm"), 0);

    // Inside `hybrid` and `mmr`, built from specs as a user writes them.
    let retrieve_settings = RetrieveSettings {
        query_lines: 20,
        dense: settings.clone(),
        ..Settings::default().retrieve
    };
    for spec in ["hybrid:bm25+dense", "mmr:dense:0.5"] {
        let spec: RetrieverSpec = spec.parse().expect("spec");
        let composed = retrieve::build(&spec, &retrieve_settings).expect("build");
        let hits = composed.retrieve(&snapshot, &q, 3).expect("retrieve");
        assert_eq!(
            hits.first().map(|h| h.path.as_str()),
            Some("stats/mean.py"),
            "{spec}: {hits:#?}"
        );
        assert!(
            hits.iter().all(|h| h.path.ends_with(".py")),
            "{spec}: {hits:#?}"
        );
    }

    // It composes: from rayon threads and from inside a tokio runtime, and drops there.
    let some = &PYTHON_FILES[..3];
    let parallel: Vec<Vec<Hit>> = some
        .par_iter()
        .map(|path| {
            let text = std::fs::read_to_string(ws.root().join(path)).expect("read");
            second
                .retrieve(&snapshot, &query_repeating(text.trim_end_matches('\n')), 1)
                .expect("retrieve")
        })
        .collect();
    for (path, hits) in some.iter().zip(&parallel) {
        assert_eq!(hits.first().map(|h| h.path.as_str()), Some(*path));
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let hits = second.retrieve(&snapshot, &q, 1).expect("inside a runtime");
        assert_eq!(hits.len(), 1);
        drop(second);
    });
}

#[test]
fn an_unreachable_endpoint_makes_dense_unavailable_with_the_reason() {
    let ws = Workspace::new(FIXTURE);
    let (index, _) =
        Index::open_or_build(ws.root(), &ws.index_settings(), &Progress::none()).expect("index");
    let port = servers::free_port();
    let mut settings = dense_settings(&format!("http://127.0.0.1:{port}"), ws.cache.path());
    settings.timeout_ms = 2_000;
    let dense = Dense::new(&settings).expect("nothing is sent yet");
    let e = dense
        .retrieve(&index.snapshot(), &query_repeating("def mean(values):"), 3)
        .expect_err("nothing listens");
    assert!(matches!(e, RetrieveError::Unavailable { .. }), "{e}");
    assert!(e.to_string().contains("cannot connect"), "{e}");

    settings.endpoint = Some("not a url".into());
    let e = Dense::new(&settings).err().expect("bad url");
    assert!(
        e.to_string()
            .contains("retrieve.dense.endpoint `not a url`"),
        "{e}"
    );
}
