//! `bm25-cceval-rg1` at each CrossCodeEval DEV record's cursor returns the record's own
//! `crossfile_context.list`: same files, chunk texts and order, scores within 1e-6.

use std::collections::HashMap;

use crossfile_engine::config::Settings;
use crossfile_engine::index::{Index, Progress};
use crossfile_engine::retrieve::{self, Query};
use crossfile_engine::workspace;

use crate::support::{bench_repos, shared_dir};

#[test]
fn bm25_cceval_rg1_reproduces_the_dev_records_crossfile_context() {
    let repos = bench_repos();
    let cache = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.index.cache_dir = cache.path().to_path_buf();
    let retriever = retrieve::build(
        &"bm25-cceval-rg1".parse().expect("spec"),
        &settings.retrieve,
    )
    .expect("build");
    let cases = std::fs::read_to_string(shared_dir().join("bench/cceval/python-dev.jsonl"))
        .expect("DEV records");
    let mut indexes: HashMap<String, Index> = HashMap::new();
    let (mut exact, mut total, mut misses) = (0, 0, Vec::new());
    for line in cases.lines().filter(|l| !l.trim().is_empty()) {
        let record: serde_json::Value = serde_json::from_str(line).expect("a JSON record");
        let meta = &record["metadata"];
        let (task, repo, file) = (
            meta["task_id"].as_str().unwrap_or(""),
            meta["repository"].as_str().unwrap_or(""),
            meta["file"].as_str().unwrap_or(""),
        );
        let prompt = record["prompt"].as_str().unwrap_or("");
        total += 1;
        let root = repos.join(repo);
        let index = indexes.entry(repo.to_string()).or_insert_with(|| {
            Index::open_or_build(&root, &settings.index, &Progress::none())
                .expect("index")
                .0
        });
        let text = workspace::read_source(&root.join(file), u64::MAX)
            .expect("case file")
            .text;
        let line_no = meta["groundtruth_start_lineno"].as_u64().unwrap_or(0);
        let col = prompt.len() - prompt.rfind('\n').map_or(0, |i| i + 1);
        let cursor = crossfile_engine::Position {
            line: line_no as u32,
            col: col as u32,
        };
        let query = Query::new(file, &text, cursor).expect("cursor inside the file");
        assert_eq!(
            query.left, prompt,
            "{task}: the text before the cursor is the record's prompt"
        );
        let hits = retriever
            .retrieve(&index.snapshot(), &query, 5)
            .expect("retrieve");
        let want = record["crossfile_context"]["list"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let same = hits.len() == want.len()
            && hits.iter().zip(&want).all(|(h, w)| {
                h.path == w["filename"].as_str().unwrap_or("")
                    && h.text.trim_end_matches('\n')
                        == w["retrieved_chunk"]
                            .as_str()
                            .unwrap_or("")
                            .trim_end_matches('\n')
                    && (h.score - w["score"].as_f64().unwrap_or(f64::NAN)).abs() < 1e-6
            });
        if same {
            exact += 1;
        } else {
            let got: Vec<_> = hits.iter().map(|h| (h.path.clone(), h.score)).collect();
            let wanted: Vec<_> = want
                .iter()
                .map(|w| (w["filename"].clone(), w["score"].clone()))
                .collect();
            misses.push(format!("{task}: got {got:?}\n    want {wanted:?}"));
        }
    }
    println!(
        "bm25-cceval-rg1 reproduces {exact} of {total} DEV records ({:.1} %)",
        100.0 * exact as f64 / total as f64
    );
    assert!(
        total == 30 && misses.is_empty(),
        "{} records differ:\n{}",
        misses.len(),
        misses.join("\n")
    );
}
