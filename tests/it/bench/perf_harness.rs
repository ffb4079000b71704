//! The performance harnesses as a library: `bench perf`'s and `bench lsp`'s measurements run on
//! a small real workspace (the real index, the real `crossfile serve` over stdio) and report what
//! they did. Their figures are for docs/performance.md, measured by the commands; here only their counts
//! and shape are checked.

use std::cell::RefCell;

use crossfile_bench::perf::{LspParams, RetrievalParams, measure_lsp, measure_retrieval};
use crossfile_engine::progress::Progress;

use crate::support::{Workspace, small_model};

/// A small workspace of three files that use each other (also typed into by `bench_typing`).
pub(crate) const WORKSPACE: &str = r#"
//- shapes/area.py
def rectangle_area(width, height):
    return width * height


def square_area(side):
    return rectangle_area(side, side)
//- shapes/volume.py
from shapes.area import rectangle_area


def box_volume(width, height, depth):
    base = rectangle_area(width, height)
    return base * depth
//- app.py
from shapes.volume import box_volume

print(box_volume(1, 2, 3))
"#;

#[test]
fn retrieval_is_measured_for_every_retriever_on_the_same_cursors() {
    let ws = Workspace::new(WORKSPACE);
    let report = measure_retrieval(&RetrievalParams {
        root: ws.root().to_path_buf(),
        settings: ws.settings(),
        retrievers: vec![
            "bm25".parse().expect("spec"),
            "jaccard".parse().expect("spec"),
        ],
        cursors: 6,
        reference_cursors: 0,
        python: "python3".into(),
    })
    .expect("measured");
    assert_eq!((report.files, report.language.as_str()), (3, "python"));
    let names: Vec<&str> = report
        .retrieval
        .iter()
        .map(|r| r.retriever.as_str())
        .collect();
    assert_eq!(names, ["bm25", "jaccard"]);
    assert!(
        report
            .retrieval
            .iter()
            .all(|r| r.queries == 6 && r.p50_ms <= r.p99_ms)
    );
    assert!(report.reindex_one_file_ms.edits > 0);
    assert!(report.reference.is_none());
    // The workspace's own cache dir is not where the cold index went.
    assert_eq!(
        std::fs::read_dir(ws.cache.path()).expect("cache").count(),
        0
    );
}

#[test]
fn the_reference_needs_bm25_cceval_among_the_retrievers() {
    let ws = Workspace::new(WORKSPACE);
    let error = measure_retrieval(&RetrievalParams {
        root: ws.root().to_path_buf(),
        settings: ws.settings(),
        retrievers: vec!["bm25".parse().expect("spec")],
        cursors: 3,
        reference_cursors: 1,
        python: "python3".into(),
    })
    .expect_err("no bm25-cceval to compare");
    assert!(error.to_string().contains("bm25-cceval"), "{error}");
}

#[test]
fn lsp_round_trips_are_timed_through_the_real_server() {
    let ws = Workspace::new(WORKSPACE);
    let said = RefCell::new(Vec::new());
    let report = measure_lsp(
        &LspParams {
            server: env!("CARGO_BIN_EXE_crossfile").into(),
            workspace: ws.root().canonicalize().expect("root"),
            settings: ws.settings(),
            requests: 12,
            seed: 3,
            files: 2,
            backend: "none".into(),
            n_ctx: None,
            model: Some(small_model()),
            cache_dir: Some(ws.cache.path().to_path_buf()),
            debounce_ms: 0,
        },
        &Progress::none(),
        &|line| said.borrow_mut().push(line.to_string()),
    )
    .expect("measured");
    assert_eq!((report.requests, report.errors), (12, 0));
    assert_eq!(report.exit_code, Some(0), "shut down cleanly");
    assert_eq!(report.files_indexed, "3 files indexed");
    let memory = report.memory_mb;
    assert!(memory.after_index.rss > 0.0 && memory.after_requests.hwm >= memory.after_index.rss);
    let lat = report.latency_ms;
    assert!(lat.p50 <= lat.p95 && lat.p95 <= lat.max, "{lat:?}");
    let said = said.into_inner();
    assert_eq!(
        said.iter().filter(|l| l.starts_with("opened ")).count(),
        2,
        "{said:?}"
    );
}
