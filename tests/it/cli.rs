//! The command-line contract: `index` and `retrieve --json` on a real workspace.

use crate::shape::shape;
use crate::support::{Workspace, corpus_workspace, crossfile, stderr, stdout};

#[test]
fn retrieve_json_gives_one_based_hits_for_every_retriever_on_click() {
    let ws = corpus_workspace("click");
    let cache = tempfile::tempdir().expect("tempdir");
    let root = ws.to_str().expect("utf-8 path");
    let out = crossfile(&["index", root, "--json"], cache.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("index --json");
    // The machine output's shape is the contract scripts read.
    expect_test::expect![[r#"
        {
          added: number
          cceval_chunks: number
          chunker: string
          chunks: number
          files: number
          index_bytes: number
          index_dir: string
          removed: number
          root: string
          seconds: number
          skipped: number
          unchanged: number
          updated: number
        }
    "#]]
    .assert_eq(&shape(&summary));
    assert_eq!(summary["files"], 46, "click has 46 Python files");
    assert!(summary["chunks"].as_u64().unwrap_or(0) > 1000);

    for spec in [
        "none",
        "bm25",
        "bm25-cceval",
        "bm25-cceval-rg1",
        "jaccard",
        "oracle",
        "mmr:bm25:0.5",
        "hybrid:bm25+jaccard",
    ] {
        let out = crossfile(
            &[
                "retrieve",
                root,
                "--at",
                "src/click/core.py:1275:19",
                "--retriever",
                spec,
                "--top-k",
                "5",
                "--json",
            ],
            cache.path(),
        );
        assert!(out.status.success(), "{spec}: {}", stderr(&out));
        let doc: serde_json::Value =
            serde_json::from_str(&stdout(&out)).expect("one JSON document");
        if spec == "bm25" {
            expect_test::expect![[r#"
                {
                  col: number
                  hits: [{
                    end_line: number
                    path: string
                    score: number
                    start_line: number
                    text: string
                  }]
                  line: number
                  path: string
                  retrieve_ms: number
                  retriever: string
                  upper_bound: bool
                }
            "#]]
            .assert_eq(&shape(&doc));
        }
        let hits = doc["hits"].as_array().expect("a hits array");
        assert_eq!(hits.is_empty(), spec == "none", "{spec}: {hits:?}");
        assert!(hits.len() <= 5);
        for h in hits {
            let (path, start, end) = (
                h["path"].as_str().expect("path"),
                h["start_line"].as_u64().expect("start"),
                h["end_line"].as_u64().expect("end"),
            );
            assert!(
                !path.contains('\\') && !path.starts_with('/'),
                "{spec}: {path}"
            );
            assert!(1 <= start && start <= end, "{spec}: {start}-{end}");
            assert!(h["score"].is_number() && h["text"].is_string());
            assert!(
                !(path == "src/click/core.py" && start <= 1275 && 1275 <= end),
                "{spec}: a hit overlaps the cursor"
            );
        }
        assert_eq!(doc["upper_bound"], spec == "oracle", "{spec}");
    }
}

#[test]
fn the_oracle_sees_the_rest_of_the_line_or_the_given_reference() {
    let ws = Workspace::new(
        r#"
//- pkg/app.py
import pkg.geometry

def area(shape):
    return pkg.geometry.compute_polygon_area(shape.points)
//- pkg/geometry.py
def compute_polygon_area(points):
    return shoelace(points)
//- pkg/other.py
def unrelated():
    return 42
//- pkg/filler_a.py
import json
data = json.loads(payload)
//- pkg/filler_b.py
for item in items:
    print(item)
//- pkg/filler_c.py
class Config:
    debug = False
//- pkg/filler_d.py
while running:
    step()
"#,
    );
    let root = ws.root().to_str().expect("utf-8");
    let cache = ws.cache.path();
    let top = |extra: &[&str]| {
        let mut args = vec![
            "retrieve",
            root,
            "--at",
            "pkg/app.py:4:12",
            "--retriever",
            "oracle",
            "--top-k",
            "1",
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = crossfile(&args, cache);
        assert!(out.status.success(), "{}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
        doc["hits"][0]["path"].as_str().unwrap_or("").to_string()
    };
    assert_eq!(top(&[]), "pkg/geometry.py");
    assert_eq!(top(&["--reference", "unrelated()"]), "pkg/other.py");
    // Cut from the query, the rest of the line is still the reference.
    assert_eq!(top(&["--cut-line"]), "pkg/geometry.py");
}

#[test]
fn cut_line_leaves_the_rest_of_the_line_out_of_the_prompt_only() {
    let ws = Workspace::new(
        r#"
//- app.py
import geometry

def area(shape):
    return geometry.compute_polygon_area(shape.points)

def perimeter(shape):
    return geometry.walk(shape.points)
"#,
    );
    let root = ws.root().to_str().expect("utf-8");
    let prompt = |extra: &[&str]| {
        let mut args = vec![
            "complete",
            root,
            "--at",
            "app.py:4:21",
            "--backend",
            "none",
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = crossfile(&args, ws.cache.path());
        assert!(out.status.success(), "{}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
        doc["prompt"].as_str().expect("a prompt").to_string()
    };
    let whole = prompt(&[]);
    assert!(
        whole.contains("compute_polygon_area(shape.points)"),
        "{whole}"
    );
    let cut = prompt(&["--cut-line"]);
    assert!(!cut.contains("compute_polygon_area"), "{cut}");
    assert!(
        cut.contains("return geometry."),
        "the text before the cursor stays: {cut}"
    );
    assert!(
        cut.contains("return geometry.walk(shape.points)"),
        "the lines after stay: {cut}"
    );
    assert!(
        std::fs::read_to_string(ws.root().join("app.py"))
            .expect("app.py")
            .contains("compute_polygon_area(shape.points)"),
        "the file on disk is untouched"
    );
}

#[test]
fn text_output_lists_path_lines_and_score() {
    let ws = Workspace::new(
        "//- a.py\nimport b\nb.helper_function(\n//- b.py\ndef helper_function():\n    return 1\n",
    );
    let out = crossfile(
        &[
            "retrieve",
            ws.root().to_str().expect("utf-8"),
            "--at",
            "a.py:2:19",
        ],
        ws.cache.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("1. b.py:1-"), "{text}");
    assert!(text.contains("    def helper_function():"), "{text}");
}

/// `--log-file` takes the logs stderr would get (a skipped file, at `info`), and a log file that
/// cannot be opened is an error naming it.
#[test]
fn log_file_takes_the_logs_instead_of_stderr() {
    let ws = Workspace::new("//- good.py\nx = 1\n");
    std::fs::write(ws.root().join("bad.py"), [0xff, 0xfe, 0x00]).expect("write");
    let log = ws.cache.path().join("crossfile.log");
    let root = ws.root().to_str().expect("utf-8");
    let log_arg = log.to_str().expect("utf-8");
    let args = ["index", root, "--log-level", "info", "--log-file", log_arg];
    let output = crossfile(&args, ws.cache.path());
    assert!(output.status.success(), "{}", stderr(&output));
    let logged = std::fs::read_to_string(&log).expect("the log file");
    assert!(
        logged.contains("skipped") && logged.contains("bad.py"),
        "{logged}"
    );
    assert!(!logged.contains('\u{1b}'), "no colour codes: {logged:?}");
    assert!(!stderr(&output).contains("skipped"), "{}", stderr(&output));

    let missing = ws.cache.path().join("no-such-dir/crossfile.log");
    let missing_arg = missing.to_str().expect("utf-8");
    let output = crossfile(&["index", root, "--log-file", missing_arg], ws.cache.path());
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("cannot open the log file"),
        "{}",
        stderr(&output)
    );
}
