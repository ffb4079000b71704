//! `bm25-cceval` agrees with the Python reference (NLTK 3.8.1 + rank_bm25, run by this test) on
//! the top 5 for 200 cursors in corpus workspaces of all four languages: same chunks, same order,
//! scores within 1e-9.

use std::io::Write;
use std::process::{Command, Stdio};

use crossfile_engine::config::Settings;
use crossfile_engine::index::{Index, Progress};
use crossfile_engine::lang::Language;
use crossfile_engine::retrieve::{Query, rank_cceval};

use crossfile_bench::perf::sample_cursors;

use crate::support::corpus_workspace;

const PER_LANGUAGE: usize = 50;

#[test]
fn bm25_cceval_agrees_with_the_python_reference_on_200_queries() {
    let cache = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.index.cache_dir = cache.path().to_path_buf();
    let mut all = Vec::new();
    let mut indexes = Vec::new();
    for (i, (name, language)) in [
        ("click", Language::Python),
        ("cordova-android", Language::Java),
        ("mobx", Language::TypeScript),
        ("pythonnet", Language::CSharp),
    ]
    .into_iter()
    .enumerate()
    {
        let index =
            Index::open_or_build(&corpus_workspace(name), &settings.index, &Progress::none())
                .expect("index")
                .0;
        let queries = sample_cursors(&index.snapshot(), language, PER_LANGUAGE, 42 + i as u64);
        assert_eq!(queries.len(), PER_LANGUAGE, "{name}");
        all.extend(
            queries
                .into_iter()
                .map(|query| (index.root().to_path_buf(), language, query)),
        );
        indexes.push(index);
    }
    let requests: String = all
        .iter()
        .map(|(root, language, query)| {
            serde_json::json!({
                "root": root, "file": query.path, "language": language.name(),
                "prompt": query.left, "top_k": 5, "mode": "ranked",
            })
            .to_string()
                + "\n"
        })
        .collect();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/cceval_reference.py");
    let mut child = Command::new("python3")
        .arg(&script)
        .args(["query", "--reuse-tokens"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs (pip install nltk==3.8.1 rank-bm25)");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(requests.as_bytes()));
    let output = child.wait_with_output().expect("python3 finishes");
    writer
        .join()
        .expect("writer thread")
        .expect("requests written");
    assert!(
        output.status.success(),
        "the reference failed (pip install nltk==3.8.1 rank-bm25): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answers: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("reference JSON"))
        .collect();
    assert_eq!(answers.len(), all.len());

    let (mut agree, mut bit_equal, mut scores) = (0, 0, 0);
    let mut differences = Vec::new();
    for (i, ((_, language, query), answer)) in all.iter().zip(&answers).enumerate() {
        let snapshot = indexes[i / PER_LANGUAGE].snapshot();
        let window = Query::last_nonblank_lines(&query.left, 10);
        let ours: Vec<_> = rank_cceval(&snapshot, &query.path, *language, &window)
            .into_iter()
            .take(5)
            .collect();
        let theirs = answer["hits"].as_array().expect("hits");
        let same = ours.len() == theirs.len()
            && ours.iter().zip(theirs).all(|(o, t)| {
                let text = o.file.fixed[o.file.cceval[o.chunk_no].fixed as usize]
                    .text(crossfile_engine::chunk::ChunkerKind::Fixed, &o.file.text);
                let score = t["score"].as_f64().unwrap_or(f64::NAN);
                scores += 1;
                if o.score.to_bits() == score.to_bits() {
                    bit_equal += 1;
                }
                o.file.path == t["path"].as_str().unwrap_or("")
                    && o.chunk_no as u64 == t["chunk_no"].as_u64().unwrap_or(u64::MAX)
                    && text == t["text"].as_str().unwrap_or("")
                    && (o.score - score).abs() <= 1e-9
            });
        if same {
            agree += 1;
        } else {
            let got: Vec<_> = ours
                .iter()
                .map(|o| format!("{}|{} {}", o.file.path, o.chunk_no, o.score))
                .collect();
            let want: Vec<_> = theirs
                .iter()
                .map(|t| format!("{}|{} {}", t["path"], t["chunk_no"], t["score"]))
                .collect();
            differences.push(format!(
                "{}:{}:{}\n    ours   {got:?}\n    python {want:?}",
                query.path,
                query.cursor.line + 1,
                query.cursor.col + 1
            ));
        }
    }
    println!(
        "bm25-cceval agrees with the reference on {agree} of {} queries; {bit_equal} of {scores} scores bit-equal",
        all.len()
    );
    assert!(
        differences.is_empty(),
        "{} queries differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
