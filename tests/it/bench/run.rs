//! `bench run` on the real DEV cases and their repositories: CrossCodeEval with `none`,
//! `dataset`, `bm25-cceval-rg1` and sparse retrievers (prompts of `dataset` and
//! `bm25-cceval-rg1` equal byte for byte; no chunk holds the hidden reference line), RepoEval at
//! function level, the embedded model on a few cases, a corrupted cases file, and a dead
//! backend recorded as errors (never as misses) that `--retry-errors` runs again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crossfile_bench::bench::runfile::record::RunRecord;
use crossfile_bench::bench::tally::RunSummary;
use serde_json::Value;

use super::checks;
use crate::backends::servers;
use crate::support::{bench_repos, crossfile, shared_dir, stderr, stdout};

fn cceval_cases() -> PathBuf {
    shared_dir().join("bench/cceval/python-dev.jsonl")
}

fn repoeval_cases() -> PathBuf {
    shared_dir().join("bench/repoeval/function-dev.jsonl")
}

/// Runs `bench run` with `extra` arguments into `out`; returns (exit ok, stdout, stderr).
fn bench_run(
    format: &str,
    cases: &Path,
    retrievers: &str,
    out: &Path,
    cache: &Path,
    extra: &[&str],
) -> (bool, String, String) {
    let repos = bench_repos();
    let mut args = vec![
        "bench",
        "run",
        "--format",
        format,
        "--cases",
        cases.to_str().expect("utf-8"),
        "--repos",
        repos.to_str().expect("utf-8"),
        "--retriever",
        retrievers,
        "--out",
        out.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    // The small model's vocabulary for budgets (and generation), unless a test names a model.
    let small = crate::support::small_model();
    if !extra.contains(&"--model") {
        args.extend(["--model", small.to_str().expect("utf-8")]);
    }
    let output = crossfile(&args, cache);
    (output.status.success(), stdout(&output), stderr(&output))
}

/// Every record of a run file, each line read as a [`RunRecord`].
fn records(path: &Path) -> Vec<RunRecord> {
    checks::run_records(path)
}

/// Records by case id, then retriever; no pair twice.
fn by_case(rows: &[RunRecord]) -> BTreeMap<String, BTreeMap<String, RunRecord>> {
    let mut map: BTreeMap<String, BTreeMap<String, RunRecord>> = BTreeMap::new();
    for r in rows {
        let previous = map
            .entry(r.case_id.clone())
            .or_default()
            .insert(r.retriever.clone(), r.clone());
        assert!(
            previous.is_none(),
            "{} with {} written twice",
            r.case_id,
            r.retriever
        );
    }
    map
}

#[test]
fn cceval_dev_replays_with_dataset_prompts_reproduced_and_no_leak() {
    let cache = tempfile::tempdir().expect("tempdir");
    let out = cache.path().join("run.jsonl");
    let retrievers = "none,dataset,bm25-cceval-rg1,bm25,jaccard";
    let (ok, summary, err) = bench_run(
        "cceval",
        &cceval_cases(),
        retrievers,
        &out,
        cache.path(),
        &["--backend", "none"],
    );
    assert!(ok, "{err}");
    assert!(
        summary.contains("| bm25-cceval-rg1 | 30 | 0 |"),
        "{summary}"
    );
    let rows = records(&out);
    assert_eq!(rows.len(), 30 * 5);
    // A run file's line (its format is `RUN_FORMAT`; reports, comparisons and exports read it),
    // the first case's with bm25 (the lines' order is the order the pairs ended).
    let text = std::fs::read_to_string(&out).expect("run file");
    let bm25: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json"))
        .filter(|r| r["retriever"] == "bm25")
        .min_by_key(|r| r["case_id"].as_str().unwrap_or_default().to_string())
        .expect("a bm25 record");
    expect_test::expect![[r#"
        {
          backend: string
          cached: bool
          case_id: string
          chunks: [{
            end_line: number
            origin: string
            path: string
            reference_overlap: number
            score: number
            start_line: number
            tokens: number
          }]
          col: number
          error: null
          format: string
          language: string
          line: number
          metrics: {
            chrf: number
            em: number
            es: number
            es_with_python_levenshtein: number
            id_em: number
            id_f1: number
            id_precision: number
            id_recall: number
          }
          overlap: number
          path: string
          prompt: string
          prompt_hash: string
          prompt_tokens: {
            crossfile: number
            left: number
            right: number
            total: number
          }
          raw_suggestion: string
          reference: string
          repository: string
          retriever: string
          settings: {
            backend: string
            layout: string
            max_new_tokens: null
            model: string
            model_sha256: null
            n_ctx: number
            retrieval: {
              bm25_chunker: string
              dense_model: null
              exclude: string
              fixed_lines: number
              jaccard_query_lines: number
              query_lines: number
              rrf_k: number
              sliding_lines: number
              sliding_stride: number
              syntax_max_lines: number
            }
            samples: number
            sampling: null
            setting: null
            template: string
            top_k: number
          }
          suggestion: string
          template: string
          timings_ms: {
            generate: number
            postprocess: number
            prompt: number
            retrieve: number
            total: number
          }
          upper_bound: bool
          version: number
        }
    "#]]
    .assert_eq(&crate::shape::shape(&bm25));
    let cases = by_case(&rows);
    assert_eq!(cases.len(), 30);
    let mut same_prompt = 0;
    for (id, runs) in &cases {
        for (retriever, r) in runs {
            assert!(r.error.is_none(), "{id} {retriever}: {:?}", r.error);
            assert_eq!(r.version, 1);
            let hash = blake3::hash(r.prompt.as_bytes()).to_hex().to_string();
            assert_eq!(r.prompt_hash, hash, "{id} {retriever}");
            // Leakage: no chunk of the case's own file covers the cursor's line (1-based).
            let line = r.line + 1;
            for chunk in &r.chunks {
                // Every chunk has an origin, the case's own context (no lines) too.
                assert!(
                    chunk.origin.as_deref().is_some_and(|o| {
                        ["same_file", "same_dir", "imported", "elsewhere"].contains(&o)
                    }),
                    "{id} {retriever}: {chunk:?}"
                );
                let (Some(start), Some(end)) = (chunk.start_line, chunk.end_line) else {
                    continue;
                };
                assert!(
                    !(chunk.path == r.path && start <= line && line <= end),
                    "{id} {retriever}: chunk {chunk:?} covers the hidden line {line}"
                );
            }
        }
        let dataset = &runs["dataset"];
        let rg1 = &runs["bm25-cceval-rg1"];
        // The shipped context's origins come from its paths alone, as the ranked chunks' do.
        let names = |r: &RunRecord| -> Vec<(String, f64, Option<String>)> {
            r.chunks
                .iter()
                .map(|c| (c.path.clone(), c.score, c.origin.clone()))
                .collect()
        };
        if names(dataset) == names(rg1) {
            assert_eq!(dataset.prompt, rg1.prompt, "{id}: same chunks, same prompt");
            same_prompt += 1;
        }
        assert_eq!(runs["none"].prompt_tokens.crossfile, 0, "{id}");
    }
    assert_eq!(
        same_prompt, 30,
        "bm25-cceval-rg1 returns each record's own chunks"
    );
}

#[test]
fn repoeval_function_dev_replays_every_case() {
    let cache = tempfile::tempdir().expect("tempdir");
    let out = cache.path().join("run.jsonl");
    let (ok, _, err) = bench_run(
        "repoeval",
        &repoeval_cases(),
        "none,bm25",
        &out,
        cache.path(),
        &["--backend", "none"],
    );
    assert!(ok, "{err}");
    let rows = records(&out);
    let cases = by_case(&rows);
    assert_eq!(cases.len(), 50);
    for (id, runs) in &cases {
        assert_eq!(runs.len(), 2, "{id}");
        for (retriever, r) in runs {
            assert!(r.error.is_none(), "{id} {retriever}: {:?}", r.error);
            assert!(id.ends_with(&format!(":{}", r.line)), "{id}");
            // `none` generates nothing: a miss, scored (not an error).
            assert_eq!(r.metrics.get("em"), Some(&0.0), "{id} {retriever}");
            assert!(r.metrics.contains_key("es"), "{id} {retriever}");
        }
        assert!(
            runs["bm25"].prompt_tokens.crossfile > 0,
            "{id}: bm25 found cross-file context"
        );
    }
}

#[test]
fn a_corrupted_cases_file_reports_each_bad_record_and_runs_the_rest() {
    let cache = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(cceval_cases()).expect("cases");
    let good: Vec<&str> = text.lines().take(3).collect();
    let mut lines: Vec<String> = good.iter().map(|l| l.to_string()).collect();
    lines.push(good[0][..good[0].len() / 3].to_string());
    let mut missing: Value = serde_json::from_str(good[1]).expect("json");
    missing
        .as_object_mut()
        .expect("object")
        .remove("groundtruth");
    lines.push(missing.to_string());
    let mut wrong: Value = serde_json::from_str(good[1]).expect("json");
    wrong["metadata"]["groundtruth_start_lineno"] = "ten".into();
    wrong["metadata"]["task_id"] = "wrong/type".into();
    lines.push(wrong.to_string());
    let mut escape: Value = serde_json::from_str(good[2]).expect("json");
    escape["metadata"]["file"] = "../../../../etc/passwd.py".into();
    escape["metadata"]["task_id"] = "escape/1".into();
    lines.push(escape.to_string());
    let cases = cache.path().join("broken.jsonl");
    std::fs::write(&cases, lines.join("\n") + "\n").expect("write");

    let out = cache.path().join("run.jsonl");
    let (ok, _, err) = bench_run(
        "cceval",
        &cases,
        "none",
        &out,
        cache.path(),
        &["--backend", "none"],
    );
    assert!(ok, "{err}");
    let name = cases.display().to_string();
    for expected in [
        format!("{name}:4: .:"),
        format!("{name}:5: groundtruth: missing field"),
        format!("{name}:6: metadata.groundtruth_start_lineno:"),
        format!("{name}:7: metadata.file:"),
    ] {
        assert!(err.contains(&expected), "no `{expected}` in:\n{err}");
    }
    let rows = records(&out);
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.error.is_none()));
}

#[test]
fn a_dead_backend_is_an_error_per_case_and_retry_errors_runs_them_again() {
    let cache = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(cceval_cases()).expect("cases");
    let cases = cache.path().join("three.jsonl");
    std::fs::write(
        &cases,
        text.lines().take(3).collect::<Vec<_>>().join("\n") + "\n",
    )
    .expect("write");
    let out = cache.path().join("run.jsonl");
    let dead = format!("http://127.0.0.1:{}", servers::free_port());
    let gguf = servers::default_gguf();
    let gguf = gguf.to_str().expect("utf-8");
    let (ok, summary, err) = bench_run(
        "cceval",
        &cases,
        "none,dataset",
        &out,
        cache.path(),
        &["--backend", "openai", "--endpoint", &dead, "--model", gguf],
    );
    assert!(!ok, "errors make the run fail: {summary}");
    assert!(err.contains("6 of 6 pairs ended in an error"), "{err}");
    let rows = records(&out);
    assert_eq!(rows.len(), 6);
    for r in &rows {
        let error = r.error.as_ref().expect("the pair's error");
        assert_eq!(error.kind, "backend.refused", "{r:?}");
        assert!(r.metrics.is_empty(), "an error is never scored as a miss");
    }

    // Resuming skips done pairs, errors included; --retry-errors runs those again.
    let (ok, _, err) = bench_run(
        "cceval",
        &cases,
        "none,dataset",
        &out,
        cache.path(),
        &["--backend", "none"],
    );
    assert!(
        !ok && err.contains("6 of 6 pairs ended in an error"),
        "still recorded: {err}"
    );
    assert_eq!(records(&out).len(), 6, "nothing to do");
    let (ok, _, err) = bench_run(
        "cceval",
        &cases,
        "none,dataset",
        &out,
        cache.path(),
        &["--backend", "none", "--retry-errors"],
    );
    assert!(ok, "{err}");
    let rows = records(&out);
    assert_eq!(by_case(&rows).values().map(BTreeMap::len).sum::<usize>(), 6);
    assert!(
        rows.iter().all(|r| r.error.is_none()),
        "retried with a live backend"
    );
}

#[cfg(feature = "embedded")]
#[test]
fn the_embedded_model_completes_dev_cases_with_three_retrievers() {
    let cache = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(cceval_cases()).expect("cases");
    let cases = cache.path().join("two.jsonl");
    std::fs::write(
        &cases,
        text.lines().take(2).collect::<Vec<_>>().join("\n") + "\n",
    )
    .expect("write");
    let out = cache.path().join("run.jsonl");
    let gguf = servers::default_gguf();
    let (ok, summary, err) = bench_run(
        "cceval",
        &cases,
        "none,dataset,bm25-cceval-rg1",
        &out,
        cache.path(),
        &[
            "--model",
            gguf.to_str().expect("utf-8"),
            "--n-ctx",
            "1024",
            "--max-new-tokens",
            "16",
            "--json",
        ],
    );
    assert!(ok, "{err}");
    let summary: RunSummary = serde_json::from_str(&summary).expect("--json summary");
    let rows = checks::run_records(&out);
    assert_eq!(rows.len(), 6);
    let mut generated = BTreeSet::new();
    for r in &rows {
        assert!(r.error.is_none(), "{r:?}");
        assert_eq!(r.backend, "embedded");
        checks::prompt_within(r, 1024, 16);
        let metric = |m: &str| *r.metrics.get(m).unwrap_or_else(|| panic!("{m} in {r:?}"));
        for m in ["em", "es", "id_em", "id_precision", "id_recall", "id_f1"] {
            metric(m);
        }
        // Beside the benchmark's metrics: chrF of the same texts, and how likely the model found
        // the reference (the embedded backend measures it in the answer's own context).
        assert!((0.0..=100.0).contains(&metric("chrf")), "{r:?}");
        let logprob = metric("logprob");
        assert!(logprob < 0.0 && logprob > -30.0, "{r:?}");
        generated.insert(r.raw_suggestion.clone());
    }
    assert!(
        generated.iter().any(|g| !g.trim().is_empty()),
        "{generated:?}"
    );
    assert_eq!(summary.retrievers["dataset"].scored, 2, "{summary:?}");
}

/// Cases mined from click, replayed with the embedded model and two retrievers, killed with
/// SIGKILL mid-run, a torn line appended as a killed writer would leave it, then resumed: every
/// pair exactly once, every line a record, no error.
#[cfg(feature = "embedded")]
#[test]
fn a_killed_run_on_mined_cases_resumes_with_no_pair_lost_or_doubled() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let cache = tempfile::tempdir().expect("tempdir");
    let click = crate::support::corpus_workspace("click");
    let cases = cache.path().join("mined.jsonl");
    let mined = crossfile(
        &[
            "bench",
            "mine",
            click.to_str().expect("utf-8"),
            "--out",
            cases.to_str().expect("utf-8"),
            "--n",
            "6",
            "--seed",
            "7",
        ],
        cache.path(),
    );
    assert!(mined.status.success(), "{}", stderr(&mined));
    let repos = click
        .parent()
        .expect("corpus dir")
        .to_str()
        .expect("utf-8")
        .to_string();
    let out = cache.path().join("run.jsonl");
    let gguf = servers::default_gguf();
    let args = [
        "bench",
        "run",
        "--format",
        "cceval",
        "--cases",
        cases.to_str().expect("utf-8"),
        "--repos",
        &repos,
        "--retriever",
        "bm25,jaccard",
        "--out",
        out.to_str().expect("utf-8"),
        "--model",
        gguf.to_str().expect("utf-8"),
        "--n-ctx",
        "512",
        "--max-new-tokens",
        "8",
        "--jobs",
        "1",
    ];
    let run = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_crossfile"));
        command
            .args(args)
            .env("CROSSFILE_CACHE_DIR", cache.path())
            .env(
                "CROSSFILE_CONFIG",
                crate::support::test_user_config(cache.path()),
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
    };
    let mut child = run()
        .stderr(Stdio::null())
        .spawn()
        .expect("start bench run");
    let started = Instant::now();
    let lines = |p: &Path| std::fs::read_to_string(p).map_or(0, |t| t.lines().count());
    while lines(&out) < 3 && started.elapsed() < Duration::from_secs(300) {
        assert!(
            child.try_wait().expect("wait").is_none(),
            "the run ended before the kill"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let before = lines(&out);
    assert!(
        (3..12).contains(&before),
        "{before} of 12 pairs before the kill"
    );
    // A writer killed mid-line leaves a line without its end.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&out)
        .and_then(|mut f| f.write_all(br#"{"version":1,"case_id":"mined_python/"#))
        .expect("append a torn line");

    let resumed = run().output().expect("resume");
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(
        stderr(&resumed).contains("torn last line"),
        "{}",
        stderr(&resumed)
    );
    let rows = records(&out);
    assert_eq!(rows.len(), 12, "6 cases × 2 retrievers");
    let cases_seen = by_case(&rows);
    assert_eq!(cases_seen.len(), 6);
    assert!(rows.iter().all(|r| r.error.is_none()));
    assert!(rows.iter().all(|r| r.metrics.contains_key("es")));
}

/// The DEV cases load without a problem, and each CrossCodeEval case's `prompt + groundtruth +
/// right_context` is its file in the repository (the format's promise); each RepoEval case lays
/// out in its file, which holds the reference at the case's line.
#[test]
fn dev_cases_load_and_match_their_repositories() {
    use crossfile_bench::bench::{CaseFormat, CaseView, load_cases};
    let repos = bench_repos();
    let cceval = load_cases(&cceval_cases(), CaseFormat::Cceval, 1 << 20).expect("cceval cases");
    assert!(cceval.problems.is_empty(), "{:?}", cceval.problems);
    assert_eq!(cceval.cases.len(), 30);
    for case in &cceval.cases {
        let file = repos.join(&case.repository).join(&case.path);
        let on_disk = crossfile_engine::workspace::read_source(&file, u64::MAX)
            .expect("the case's file")
            .text;
        let right = case.right_context.as_deref().expect("cceval right context");
        assert_eq!(
            format!("{}{}{right}", case.prompt, case.reference),
            on_disk,
            "{}",
            case.id
        );
        let view = CaseView::new(case, &repos, 1 << 20).expect("view");
        assert_eq!(
            view.text(),
            format!("{}{right}", case.prompt),
            "{}",
            case.id
        );
        // The index sees the left context, or both sides for FIM; never the reference.
        assert_eq!(view.indexed_text(false), case.prompt, "{}", case.id);
        assert_eq!(view.indexed_text(true), view.text(), "{}", case.id);
    }
    let repoeval =
        load_cases(&repoeval_cases(), CaseFormat::Repoeval, 1 << 20).expect("repoeval cases");
    assert!(repoeval.problems.is_empty(), "{:?}", repoeval.problems);
    assert_eq!(repoeval.cases.len(), 50);
    for case in &repoeval.cases {
        let view =
            CaseView::new(case, &repos, 1 << 20).unwrap_or_else(|e| panic!("{}: {e}", case.id));
        let file = repos.join(&case.repository).join(&case.path);
        let on_disk = crossfile_engine::workspace::read_source(&file, u64::MAX)
            .expect("the case's file")
            .text;
        assert_eq!(
            format!("{}{}{}", view.left, case.reference, view.right),
            on_disk,
            "{}",
            case.id
        );
        assert_eq!(view.cursor.col, 0);
    }
}

/// A case whose repository folder is missing is that case's error (kind `case`), never a crash
/// of the run and never a miss; the other repository's case still runs.
#[test]
fn a_missing_repository_fails_its_own_cases_only() {
    let cache = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(cceval_cases()).expect("cases");
    let mut lines: Vec<String> = text.lines().take(1).map(str::to_string).collect();
    let mut moved: Value = serde_json::from_str(&lines[0]).expect("json");
    moved["metadata"]["repository"] = "no-such-repository".into();
    moved["metadata"]["task_id"] = "moved/1".into();
    lines.push(moved.to_string());
    let cases = cache.path().join("two.jsonl");
    std::fs::write(&cases, lines.join("\n") + "\n").expect("write");
    let out = cache.path().join("run.jsonl");
    let (ok, _, err) = bench_run(
        "cceval",
        &cases,
        "bm25",
        &out,
        cache.path(),
        &["--backend", "none"],
    );
    assert!(
        !ok && err.contains("1 of 2 pairs ended in an error"),
        "{err}"
    );
    let rows = by_case(&records(&out));
    let moved = &rows["moved/1"]["bm25"];
    let error = moved.error.as_ref().expect("the moved case's error");
    assert_eq!(error.kind, "case", "{moved:?}");
    assert!(error.message.contains("no-such-repository"), "{moved:?}");
    assert!(moved.metrics.is_empty());
    assert_eq!(rows.len(), 2);
    assert!(rows.values().filter(|r| r["bm25"].error.is_none()).count() == 1);
}

/// Three shards of the CrossCodeEval DEV cases, run apart and merged, hold exactly the pairs of
/// one whole run with the same prompts and scores; merging a shard twice is refused. (`none` and
/// `dataset` rank nothing in the index: a BM25 ranking also depends on the index's update
/// history, which differs between a whole run and a shard.)
#[test]
fn shards_run_apart_and_merged_equal_one_whole_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = dir.path().join("cache");
    let whole = dir.path().join("whole.jsonl");
    let (ok, _, err) = bench_run(
        "cceval",
        &cceval_cases(),
        "none,dataset",
        &whole,
        &cache,
        &["--backend", "none"],
    );
    assert!(ok, "{err}");
    let mut shards = Vec::new();
    for k in 0..3 {
        let out = dir.path().join(format!("shard-{k}.jsonl"));
        let shard = format!("{k}/3");
        let (ok, _, err) = bench_run(
            "cceval",
            &cceval_cases(),
            "none,dataset",
            &out,
            &cache,
            &["--backend", "none", "--shard", &shard],
        );
        assert!(ok, "{err}");
        shards.push(out);
    }
    let merged = dir.path().join("merged.jsonl");
    let mut args = vec!["bench", "merge"];
    let paths: Vec<String> = shards
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    args.extend(paths.iter().map(String::as_str));
    let merged_arg = merged.to_string_lossy().into_owned();
    args.extend(["--out", merged_arg.as_str()]);
    let out = crossfile(&args, &cache);
    assert!(out.status.success(), "{}", stderr(&out));
    let (whole, merged_rows) = (by_case(&records(&whole)), by_case(&records(&merged)));
    assert_eq!(
        whole.keys().collect::<Vec<_>>(),
        merged_rows.keys().collect::<Vec<_>>(),
        "the same cases"
    );
    for (case, runs) in &whole {
        for (retriever, record) in runs {
            let merged = &merged_rows[case][retriever];
            assert_eq!(record.metrics, merged.metrics, "{case} {retriever}");
            assert_eq!(record.prompt_hash, merged.prompt_hash);
        }
    }
    let shard_sizes: Vec<usize> = shards.iter().map(|s| records(s).len()).collect();
    assert!(shard_sizes.iter().all(|&n| n > 0), "{shard_sizes:?}");

    // The same shard twice: refused, naming both files and the pair.
    let twice = dir.path().join("twice.jsonl");
    let twice_arg = twice.to_string_lossy().into_owned();
    let out = crossfile(
        &["bench", "merge", &paths[0], &paths[0], "--out", &twice_arg],
        &cache,
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("is in both"), "{}", stderr(&out));
    assert!(!twice.exists(), "nothing written");
}
