//! `bench report`, `bench compare` and `bench export` through the real binary, on run files
//! written from `RunRecord` values; the HTML page rendered in headless Chromium.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crossfile_bench::bench::runfile::record::{
    ChunkRef, PromptTokenCounts, RUN_FORMAT, RunError, RunRecord, StageTimings,
};
use crossfile_bench::report::build::Report;
use crossfile_bench::report::compare::{Pairing, RunComparison};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::checks;
use crate::support::{crossfile, stderr, stdout};

/// A scored CrossCodeEval record; `quality` in 0..=1 sets every metric.
fn record(case: usize, language: &str, retriever: &str, quality: f64) -> RunRecord {
    let reference = format!("value_{case} = compute(\"naïve\", {case})");
    let suggestion = if quality >= 1.0 {
        reference.clone()
    } else if case.is_multiple_of(3) {
        format!("<script>alert(\"x\")</script> & {retriever} 😀")
    } else {
        format!("value_{case} = compute('naive', {})", case + 1)
    };
    let em = if quality >= 1.0 { 1.0 } else { 0.0 };
    let metrics: BTreeMap<String, f64> = [
        ("em", em),
        ("es", (100.0 * quality).round()),
        ("id_em", em),
        ("id_precision", quality),
        ("id_recall", quality),
        ("id_f1", quality),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let ext = if language == "java" { "java" } else { "py" };
    RunRecord {
        version: RUN_FORMAT,
        case_id: format!("{language}/task_{case}"),
        retriever: retriever.to_string(),
        format: "cceval".into(),
        language: language.into(),
        repository: "owner-repo-abc1234".into(),
        path: format!("src/mod_{case}.{ext}"),
        line: 10 + case as u32,
        col: 4,
        upper_bound: retriever == "oracle",
        backend: "none".into(),
        template: "plain".into(),
        chunks: vec![ChunkRef {
            path: format!("src/util_{case}.{ext}"),
            start_line: Some(1),
            end_line: Some(10),
            score: 7.25 - quality,
            origin: Some(["same_file", "same_dir", "imported", "elsewhere"][case % 4].into()),
            source: None,
            tokens: None,
            reference_overlap: None,
            suggestion_overlap: None,
        }],
        prompt_tokens: PromptTokenCounts {
            crossfile: 40,
            left: 60,
            right: 0,
            total: 100,
        },
        prompt_hash: format!("{case:064x}"),
        prompt: format!("# {retriever} context </details> <b>\nimport util\nvalue_{case} = "),
        raw_suggestion: format!("{suggestion}\nnext_line()"),
        suggestion,
        reference,
        metrics,
        timings_ms: StageTimings {
            retrieve: 2.0 + case as f64,
            prompt: 1.0,
            generate: 40.0 + 5.0 * case as f64,
            postprocess: 0.5,
            total: 45.0 + 6.0 * case as f64,
        },
        cached: false,
        error: None,
        samples: Vec::new(),
        settings: None,
        category: None,
        overlap: Some(quality),
    }
}

/// Quality of a retriever on a case: oracle best, jaccard a bit better than bm25.
fn quality(case: usize, retriever: &str) -> f64 {
    match retriever {
        "oracle" => 1.0,
        "jaccard" if case.is_multiple_of(2) => 1.0,
        "jaccard" => 0.6,
        _ if case.is_multiple_of(4) => 1.0,
        _ => 0.4 + 0.05 * (case % 5) as f64,
    }
}

/// A run of 12 Python and 6 Java cases for bm25, jaccard and oracle; jaccard fails on one case.
fn run_records() -> Vec<RunRecord> {
    let mut out = Vec::new();
    for retriever in ["bm25", "jaccard", "oracle"] {
        for (language, cases) in [("python", 12), ("java", 6)] {
            for case in 0..cases {
                let mut r = record(case, language, retriever, quality(case, retriever));
                if retriever == "jaccard" && language == "python" && case == 5 {
                    r.metrics.clear();
                    r.error = Some(RunError {
                        kind: "timeout".into(),
                        message: "generation took longer than 30 s".into(),
                    });
                }
                out.push(r);
            }
        }
    }
    out
}

fn write_run(dir: &Path, name: &str, records: &[RunRecord]) -> PathBuf {
    let path = dir.join(name);
    let text: String = records
        .iter()
        .map(|r| serde_json::to_string(r).expect("serialize") + "\n")
        .collect();
    std::fs::write(&path, text).expect("write run");
    path
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "crossfile failed: {}\n{}",
        output.status,
        stderr(output)
    );
    stdout(output)
}

/// The one JSON document on stdout, read as the type the command serializes.
fn json<T: DeserializeOwned>(output: &Output) -> T {
    let text = ok(output);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("stdout's document: {e}\n{text}"))
}

#[test]
fn report_prints_tables_per_language_and_pairwise_differences() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = write_run(dir.path(), "run.jsonl", &run_records());
    let run = run.to_str().expect("utf-8 path");
    let markdown = ok(&crossfile(&["bench", "report", run], dir.path()));
    for expected in [
        "## Results",
        "### cceval · python",
        "### cceval · java",
        "| retriever | cases | errors | em | es | id_em | id_precision | id_recall | id_f1 | total p50 ms |",
        "| oracle (upper bound) | 12 | 0 | 100.00 [100.00, 100.00] | 100.00 [100.00, 100.00] |",
        "| jaccard | 12 | 1 (timeout 1) |",
        "## Pairwise differences",
        "### cceval · all languages",
        "Scale — cceval: em and id_* ×100",
    ] {
        assert!(
            markdown.contains(expected),
            "missing {expected:?} in\n{markdown}"
        );
    }

    let report_json = || ok(&crossfile(&["bench", "report", run, "--json"], dir.path()));
    let text = report_json();
    assert_eq!(
        text,
        report_json(),
        "the seeded bootstrap makes reports identical"
    );
    let report: Report = checks::report(&text);
    assert_eq!(report.bootstrap.resamples, 10_000);
    let jaccard = report
        .summaries
        .iter()
        .find(|s| s.retriever == "jaccard" && s.language == "python")
        .expect("jaccard python");
    assert_eq!((jaccard.cases, jaccard.errors), (12, 1));
    let em = &jaccard.metrics[0];
    // Scored: the 6 even cases are exact, 5 odd cases are not: 6/11.
    assert_eq!(em.name, "em");
    assert!((em.mean - 600.0 / 11.0).abs() < 1e-9);
    let comparison = report
        .comparisons
        .iter()
        .find(|c| c.a == "bm25" && c.b == "jaccard" && c.language == "python")
        .expect("bm25 vs jaccard");
    assert_eq!((comparison.pairs, comparison.excluded), (11, 1));
    let es = comparison
        .metrics
        .iter()
        .find(|m| m.name == "es")
        .expect("es");
    let ci = es.ci.expect("the es difference's interval");
    assert!(
        ci.low <= es.diff && es.diff <= ci.high && ci.low > 0.0,
        "{es:?}"
    );
}

#[test]
fn report_tolerates_a_torn_last_line_and_refuses_bad_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let records = run_records();
    let run = write_run(dir.path(), "torn.jsonl", &records[..4]);
    let torn = serde_json::to_string(&records[4]).expect("serialize");
    let mut text = std::fs::read_to_string(&run).expect("read");
    text.push_str(&torn[..torn.len() / 3]);
    std::fs::write(&run, &text).expect("write");
    let out = crossfile(
        &["bench", "report", run.to_str().expect("utf-8"), "--json"],
        dir.path(),
    );
    assert_eq!(json::<Report>(&out).records, 4);
    assert!(
        stderr(&out).contains("torn.jsonl:5: ignoring a torn last line"),
        "{}",
        stderr(&out)
    );

    let dup = write_run(
        dir.path(),
        "dup.jsonl",
        &[records[0].clone(), records[1].clone(), records[0].clone()],
    );
    let out = crossfile(
        &["bench", "report", dup.to_str().expect("utf-8")],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("dup.jsonl:3: duplicate (case, retriever) pair (\"python/task_0\", \"bm25\"), first on line 1"),
        "{}",
        stderr(&out)
    );

    let mut bad: Value = serde_json::to_value(&records[1]).expect("value");
    bad["metrics"]["es"] = Value::String("high".into());
    let text = format!(
        "{}\n{bad}\n{}\n",
        serde_json::to_string(&records[0]).expect("json"),
        serde_json::to_string(&records[2]).expect("json")
    );
    let bad_path = dir.path().join("bad.jsonl");
    std::fs::write(&bad_path, text).expect("write");
    let out = crossfile(
        &["bench", "report", bad_path.to_str().expect("utf-8")],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("bad.jsonl:2: field `metrics.es`: invalid type: string \"high\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn compare_pairs_runs_and_lists_the_largest_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a_records = run_records();
    let b_records: Vec<RunRecord> = a_records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            if r.retriever == "bm25" && r.error.is_none() && r.metrics["em"] == 0.0 {
                r.metrics.insert("es".into(), 100.0);
                r.metrics.insert("em".into(), 1.0);
                r.suggestion = r.reference.clone();
            }
            r
        })
        .collect();
    let a = write_run(dir.path(), "a.jsonl", &a_records);
    let b = write_run(dir.path(), "b.jsonl", &b_records);
    let (a, b) = (a.to_str().expect("utf-8"), b.to_str().expect("utf-8"));
    let c: RunComparison = json(&crossfile(
        &["bench", "compare", a, b, "--json"],
        dir.path(),
    ));
    assert_eq!(c.pairing, Pairing::CaseAndRetriever);
    assert_eq!((c.shared, c.only_in_a), (54, 0));
    let bm25_python = c
        .comparisons
        .iter()
        .find(|g| g.a == "bm25" && g.language == "python")
        .expect("bm25 python");
    let em = &bm25_python.metrics[0];
    assert_eq!(em.name, "em");
    assert_eq!((em.wins, em.ties, em.losses), (9, 3, 0));
    // Largest |ΔES| first (this test's changes all raise ES).
    let deltas: Vec<f64> = c.changes.iter().map(|change| change.delta.abs()).collect();
    assert_eq!(deltas.len(), 10);
    assert!(deltas.windows(2).all(|w| w[0] >= w[1]), "{deltas:?}");
    let markdown = ok(&crossfile(&["bench", "compare", a, b], dir.path()));
    assert!(
        markdown.contains("## Largest changes (|ΔES|)"),
        "{markdown}"
    );
    assert!(
        markdown.contains("Paired by (case id, retriever): 54 shared"),
        "{markdown}"
    );

    // One retriever each, different names: paired by case id.
    let only = |name: &str| -> Vec<RunRecord> {
        a_records
            .iter()
            .filter(|r| r.retriever == name)
            .cloned()
            .collect()
    };
    let x = write_run(dir.path(), "x.jsonl", &only("bm25"));
    let y = write_run(dir.path(), "y.jsonl", &only("jaccard"));
    let c: RunComparison = json(&crossfile(
        &[
            "bench",
            "compare",
            x.to_str().expect("utf-8"),
            y.to_str().expect("utf-8"),
            "--json",
        ],
        dir.path(),
    ));
    assert_eq!(
        c.pairing,
        Pairing::Case {
            a_retriever: "bm25".into(),
            b_retriever: "jaccard".into()
        }
    );
    assert_eq!(c.shared, 18);
}

#[test]
fn export_writes_official_predictions_and_skips_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let records = run_records();
    let run = write_run(dir.path(), "run.jsonl", &records);
    let run = run.to_str().expect("utf-8");
    let out = crossfile(&["bench", "export", run, "--format", "cceval"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out)
            .contains("several retrievers (bm25, jaccard, oracle); choose one with --retriever"),
        "{}",
        stderr(&out)
    );

    let file = dir.path().join("prediction.jsonl");
    let out = crossfile(
        &[
            "bench",
            "export",
            run,
            "--format",
            "cceval",
            "--retriever",
            "jaccard",
            "--out",
            file.to_str().expect("utf-8"),
        ],
        dir.path(),
    );
    ok(&out);
    assert!(
        stderr(&out).contains("skipped 1 case(s)"),
        "{}",
        stderr(&out)
    );
    let lines: Vec<Value> = std::fs::read_to_string(&file)
        .expect("read predictions")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 17);
    let jaccard: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.retriever == "jaccard" && r.error.is_none())
        .collect();
    for (line, record) in lines.iter().zip(&jaccard) {
        assert_eq!(line["task_id"], record.case_id.as_str());
        assert_eq!(
            line["pred"],
            record.raw_suggestion.as_str(),
            "the raw suggestion"
        );
        assert_eq!(line.as_object().map(|o| o.len()), Some(2));
    }
    let out = crossfile(
        &[
            "bench",
            "export",
            run,
            "--format",
            "repoeval",
            "--retriever",
            "bm25",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("is a cceval case, not repoeval"),
        "{}",
        stderr(&out)
    );
}

const CHROMIUM_HINT: &str = "install it with `apt-get install -y chromium` (Debian; .ci/run does)";

/// Runs headless Chromium on `page` with `args`, killing it after 60 s.
fn chromium(page: &Path, args: &[&str], profile: &Path) -> Output {
    let url = format!("file://{}", page.display());
    let child = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run chromium ({e}): {CHROMIUM_HINT}"));
    let id = child.id();
    let started = Instant::now();
    let watchdog = std::thread::spawn(move || {
        while started.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(200));
            if std::fs::metadata(format!("/proc/{id}")).is_err() {
                return;
            }
        }
        let _ = Command::new("kill").arg(id.to_string()).status();
    });
    let output = child.wait_with_output().expect("wait for chromium");
    let _ = watchdog.join();
    output
}

#[test]
fn html_report_renders_charts_in_headless_chromium() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = write_run(dir.path(), "run.jsonl", &run_records());
    let page = dir.path().join("report.html");
    ok(&crossfile(
        &[
            "bench",
            "report",
            run.to_str().expect("utf-8"),
            "--html",
            page.to_str().expect("utf-8"),
        ],
        dir.path(),
    ));
    let html = std::fs::read_to_string(&page).expect("read page");
    assert!(!html.contains("<script>alert"), "suggestions are escaped");
    assert!(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"));
    let without_namespaces = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(
        !without_namespaces.contains("http://") && !without_namespaces.contains("https://"),
        "the page fetches nothing"
    );

    let profile = dir.path().join("chromium-profile");
    let dom = chromium(&page, &["--dump-dom"], &profile);
    assert!(
        dom.status.success(),
        "chromium --dump-dom failed: {}; {CHROMIUM_HINT}\n{}",
        dom.status,
        stderr(&dom)
    );
    let dom = stdout(&dom);
    let svgs = dom.matches("<svg").count();
    assert!(svgs >= 8, "{svgs} charts in the DOM");
    assert!(dom.contains("<rect x="), "bar marks");
    for chart in [
        "chunks by origin",
        "em by identifier overlap",
        "es by identifier overlap",
    ] {
        assert!(dom.contains(&format!("aria-label=\"{chart}")), "{chart}");
    }
    assert!(dom.contains("class=\"whisker\" d=\"M"), "interval whiskers");
    assert!(dom.contains("<path d=\"M"), "path marks");
    assert!(
        dom.contains("18 of 18 cases shown"),
        "the filter script ran"
    );
    assert!(!dom.contains("<script>alert"), "no injected element");
    assert_eq!(dom.matches("<details class=\"case\"").count(), 18);

    let shot = dir.path().join("shot.png");
    let out = chromium(
        &page,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000",
        ],
        &profile,
    );
    assert!(
        out.status.success(),
        "chromium --screenshot failed: {}\n{}",
        out.status,
        stderr(&out)
    );
    let (width, height, pixels) = decode_png(&shot);
    assert_eq!((width, height), (1280, 2000));
    let painted = pixels
        .iter()
        .filter(|p| p[0] < 200 || p[1] < 200 || p[2] < 200)
        .count();
    assert!(
        painted > 20_000,
        "the page is nearly blank: {painted} dark pixels"
    );
    // The bars: pixels of the first three series colours (bm25, jaccard; oracle is hatched).
    let near = |p: &[u8; 3], c: [u8; 3]| p.iter().zip(c).all(|(a, b)| a.abs_diff(b) <= 6);
    let bm25 = pixels
        .iter()
        .filter(|p| near(p, [0x4e, 0x79, 0xa7]))
        .count();
    let jaccard = pixels
        .iter()
        .filter(|p| near(p, [0xf2, 0x8e, 0x2b]))
        .count();
    assert!(
        bm25 > 500 && jaccard > 500,
        "chart bars not painted: bm25 {bm25}, jaccard {jaccard} pixels"
    );
}

/// Width, height and RGB pixels of a PNG file.
fn decode_png(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let bytes = std::fs::read(path).expect("read screenshot");
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("buffer size")];
    let info = reader.next_frame(&mut buf).expect("decode PNG");
    let channels = info.color_type.samples();
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|p| match channels {
            1 | 2 => [p[0]; 3],
            _ => [p[0], p[1], p[2]],
        })
        .collect();
    (info.width, info.height, pixels)
}
