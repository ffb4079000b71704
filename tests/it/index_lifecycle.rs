//! The index through its life: build, edit, create, delete, rename, a settings change, a
//! corrupted directory and a held lock; each step checked through retrieval results.

use crossfile_engine::Position;
use crossfile_engine::chunk::ChunkerKind;
use crossfile_engine::index::IndexSettings;
use crossfile_engine::index::{Index, Progress};
use crossfile_engine::retrieve::{self, Query};

use crate::support::Workspace;

const FIXTURE: &str = r#"
//- app/main.py
from app.store import open_store

def run():
    store = open_store()
    return store.
//- app/store.py
class KeyValueStore:
    def fetch_record(self, key):
        return self.records[key]

def open_store():
    return KeyValueStore()
//- app/util.py
def slugify_title(text):
    return text.lower().replace(" ", "-")
"#;

/// Paths of the `bm25` hits for a query whose last line is `query_line`, asked from a scratch
/// file that is not indexed.
fn hit_paths(index: &Index, query_line: &str) -> Vec<String> {
    let text = format!("{query_line}\n");
    let query = Query::new(
        "scratch.py",
        &text,
        Position {
            line: 0,
            col: query_line.len() as u32,
        },
    )
    .expect("cursor");
    let settings = crossfile_engine::config::Settings::default();
    let retriever =
        retrieve::build(&"bm25".parse().expect("spec"), &settings.retrieve).expect("build");
    let mut paths: Vec<String> = retriever
        .retrieve(&index.snapshot(), &query, 10)
        .expect("retrieve")
        .into_iter()
        .map(|h| h.path)
        .collect();
    paths.dedup();
    paths
}

fn open(ws: &Workspace, settings: &IndexSettings) -> Index {
    Index::open_or_build(ws.root(), settings, &Progress::none())
        .expect("index")
        .0
}

#[test]
fn edits_creations_deletions_and_renames_update_single_files() {
    let ws = Workspace::new(FIXTURE);
    let settings = ws.index_settings();
    let index = open(&ws, &settings);
    assert_eq!(index.snapshot().len(), 3);
    assert_eq!(hit_paths(&index, "fetch_record"), ["app/store.py"]);

    // Changed file.
    ws.write(
        "app/store.py",
        "class KeyValueStore:\n    def load_entry(self, key):\n        return key\n",
    );
    let report = index.update_files(&["app/store.py"]).expect("update");
    assert_eq!((report.added, report.updated, report.removed), (0, 1, 0));
    assert!(hit_paths(&index, "fetch_record").is_empty());
    assert_eq!(hit_paths(&index, "load_entry"), ["app/store.py"]);

    // Created file.
    ws.write(
        "app/cache.py",
        "def evict_oldest(cache):\n    cache.popitem()\n",
    );
    index.update_files(&["app/cache.py"]).expect("create");
    assert_eq!(hit_paths(&index, "evict_oldest"), ["app/cache.py"]);

    // Deleted file.
    std::fs::remove_file(ws.root().join("app/util.py")).expect("rm");
    let report = index.update_files(&["app/util.py"]).expect("delete");
    assert_eq!(report.removed, 1);
    assert!(hit_paths(&index, "slugify_title").is_empty());

    // Renamed file: the old and the new path together.
    std::fs::rename(ws.root().join("app/cache.py"), ws.root().join("app/lru.py")).expect("mv");
    index
        .update_files(&["app/cache.py", "app/lru.py"])
        .expect("rename");
    assert_eq!(hit_paths(&index, "evict_oldest"), ["app/lru.py"]);
    assert_eq!(
        index.snapshot().paths().collect::<Vec<_>>(),
        ["app/lru.py", "app/main.py", "app/store.py"]
    );

    // The changes were committed: a fresh open sees them without re-analyzing anything.
    drop(index);
    let (index, report) =
        Index::open_or_build(ws.root(), &settings, &Progress::none()).expect("reopen");
    assert_eq!(
        (
            report.added,
            report.updated,
            report.removed,
            report.unchanged
        ),
        (0, 0, 0, 3)
    );
    assert_eq!(hit_paths(&index, "evict_oldest"), ["app/lru.py"]);
}

#[test]
fn a_sync_picks_up_changes_made_while_no_index_was_open() {
    let ws = Workspace::new(FIXTURE);
    let settings = ws.index_settings();
    drop(open(&ws, &settings));
    ws.write(
        "app/util.py",
        "def capitalize_words(text):\n    return text.upper()\n",
    );
    ws.write("app/extra.py", "def extra_helper():\n    pass\n");
    std::fs::remove_file(ws.root().join("app/main.py")).expect("rm");
    let (index, report) =
        Index::open_or_build(ws.root(), &settings, &Progress::none()).expect("sync");
    assert_eq!(
        (
            report.added,
            report.updated,
            report.removed,
            report.unchanged
        ),
        (1, 1, 1, 1)
    );
    assert_eq!(hit_paths(&index, "capitalize_words"), ["app/util.py"]);
    assert!(hit_paths(&index, "slugify_title").is_empty());
}

#[test]
fn unsaved_text_wins_over_the_disk() {
    let ws = Workspace::new(FIXTURE);
    let index = open(&ws, &ws.index_settings());
    index
        .update_text("app/util.py", "def unsaved_function_name():\n    pass\n")
        .expect("buffer");
    assert_eq!(hit_paths(&index, "unsaved_function_name"), ["app/util.py"]);
    assert!(hit_paths(&index, "slugify_title").is_empty());
    index.update_files(&["app/util.py"]).expect("back to disk");
    assert_eq!(hit_paths(&index, "slugify_title"), ["app/util.py"]);
}

#[test]
fn a_settings_change_builds_an_index_of_its_own() {
    let ws = Workspace::new(FIXTURE);
    let sliding = ws.index_settings();
    let mut syntax = sliding.clone();
    syntax.bm25_chunker = ChunkerKind::Syntax;
    let a = open(&ws, &sliding);
    let b = open(&ws, &syntax);
    assert_ne!(a.dir(), b.dir());
    let lines = |index: &Index| {
        let text = "fetch_record\n";
        let query = Query::new("scratch.py", text, Position { line: 0, col: 12 }).expect("cursor");
        let retriever = retrieve::build(
            &"bm25".parse().expect("spec"),
            &crossfile_engine::config::Settings::default().retrieve,
        )
        .expect("build");
        retriever
            .retrieve(&index.snapshot(), &query, 1)
            .expect("retrieve")[0]
            .lines
            .clone()
    };
    // Sliding windows start at line 0; the syntax chunk is the class definition.
    assert_eq!(lines(&a), 0..7);
    assert_eq!(lines(&b), 0..3);
}

#[test]
fn a_corrupted_index_is_rebuilt() {
    let ws = Workspace::new(FIXTURE);
    let settings = ws.index_settings();
    let dir = open(&ws, &settings).dir().to_path_buf();
    for entry in std::fs::read_dir(&dir).expect("index dir").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".store") || name == "meta.json" {
            std::fs::write(entry.path(), b"garbage").expect("corrupt");
        }
    }
    let index = open(&ws, &settings);
    assert_eq!(index.snapshot().len(), 3);
    assert_eq!(hit_paths(&index, "fetch_record"), ["app/store.py"]);

    // Our own meta file damaged, too.
    std::fs::write(dir.join("crossfile-index.json"), "{").expect("corrupt");
    let index = open(&ws, &settings);
    assert_eq!(hit_paths(&index, "slugify_title"), ["app/util.py"]);
}

#[test]
fn a_locked_index_is_reported_not_waited_on_forever() {
    let ws = Workspace::new(FIXTURE);
    let mut settings = ws.index_settings();
    settings.lock_wait_ms = 200;
    let holder = open(&ws, &settings);
    holder
        .update_text("app/util.py", "def held():\n    pass\n")
        .expect("takes the writer");
    let other = Index::open(ws.root(), &settings).expect("reading needs no lock");
    assert_eq!(hit_paths(&other, "held"), ["app/util.py"]);
    let err = other
        .update_text("app/util.py", "def other():\n    pass\n")
        .expect_err("the writer is held");
    assert!(
        err.to_string()
            .contains("locked by another crossfile process"),
        "{err}"
    );
    drop(holder);
    other
        .update_text("app/util.py", "def other():\n    pass\n")
        .expect("free again");
    assert_eq!(hit_paths(&other, "other"), ["app/util.py"]);
}
