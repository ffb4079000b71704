//! `bench arena simulate` on the CrossCodeEval Python DEV cases with the real pipeline: arms
//! none, bm25 and oracle replayed, votes cast by the ES voter from the run file's own records,
//! and the Bradley–Terry ranking set against `bench report`'s on the same run file: wherever the
//! report tells two arms apart by mean ES (the paired interval excludes 0), the votes order them
//! alike. (Where it does not, a mean and a majority of pairwise wins may rightly disagree; on
//! these few cases with the small model it often does not, so this part may check nothing: the
//! ignored test, every DEV case with the default model, checks the whole ranking.)

use std::path::Path;

use crossfile_bench::arena::{Standings, Vote};
use crossfile_bench::report::build::Report;

use crate::bench::checks;
use crate::support::{bench_repos, crossfile, shared_dir, small_model, stderr, stdout};

#[test]
fn simulated_votes_follow_the_run_and_agree_with_the_report_where_it_separates_arms() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = small_model();
    let model = model.to_str().expect("utf-8");
    let (arena, report) = simulate(
        dir.path(),
        &["--limit", "10", "--model", model, "--n-ctx", "1024"],
    );
    let by_votes = ranked(&arena);
    let votes = dir.path().join("votes.jsonl");
    let position = |arm: &str| by_votes.iter().position(|a| a == arm).expect("ranked arm");
    for pair in &report.comparisons {
        let es = pair.metrics.iter().find(|m| m.name == "es").expect("es");
        let ci = es.ci.expect("the es difference's interval");
        if ci.low <= 0.0 && ci.high >= 0.0 {
            continue;
        }
        let (a, b) = (pair.a.as_str(), pair.b.as_str());
        let b_better = ci.low > 0.0;
        assert_eq!(
            position(b) < position(a),
            b_better,
            "{a} vs {b}: report {es:?}, votes rank {by_votes:?}"
        );
    }
    // Every line is a vote at a case, with both metrics.
    let text = std::fs::read_to_string(&votes).expect("votes");
    let lines: Vec<Vote> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 600);
    assert!(lines.iter().all(|v| {
        v.case_id.is_some() && v.metrics.as_ref().is_some_and(|m| m[1].contains_key("es"))
    }));
    assert_eq!(arena.battles, 600);
}

/// The check on every DEV case with the default model: the votes rank none, bm25 and
/// oracle as the report ranks them by mean ES. Ten minutes on two cores, so outside the suite
/// (`cargo test --test it -- --ignored arena_simulate`); docs/arena.md has its figures.
#[test]
#[ignore = "ten minutes with the default model on 2 cores; run with --ignored"]
fn on_every_dev_case_with_the_default_model_the_votes_rank_arms_as_mean_es_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = crate::support::default_model();
    let (arena, report) = simulate(dir.path(), &["--model", model.to_str().expect("utf-8")]);
    let by_votes = ranked(&arena);
    let mut by_mean: Vec<(String, f64)> = report
        .summaries
        .iter()
        .map(|s| {
            let es = s.metrics.iter().find(|m| m.name == "es").expect("es");
            (s.retriever.clone(), es.mean)
        })
        .collect();
    by_mean.sort_by(|a, b| b.1.total_cmp(&a.1));
    let by_mean: Vec<&str> = by_mean.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(
        by_votes, by_mean,
        "votes {arena:?} against means {by_mean:?}"
    );
}

/// `bench arena simulate` on the DEV cases with none, bm25 and oracle, 600 battles, 16 new
/// tokens and `extra` flags, into `dir`; its standings and `bench report --json` of its run file.
fn simulate(dir: &Path, extra: &[&str]) -> (Standings, Report) {
    let path = |p: &Path| p.to_str().expect("utf-8").to_string();
    let (cases, repos) = (
        shared_dir().join("bench/cceval/python-dev.jsonl"),
        bench_repos(),
    );
    let votes = path(&dir.join("votes.jsonl"));
    let mut args = vec![
        "bench",
        "arena",
        "simulate",
        "--format",
        "cceval",
        "--arms",
        "none,bm25,oracle",
        "--voter",
        "es",
        "--battles",
        "600",
        "--max-new-tokens",
        "16",
        "--out",
        &votes,
        "--json",
    ];
    let (cases, repos) = (path(&cases), path(&repos));
    args.extend(["--cases", &cases, "--repos", &repos]);
    args.extend(extra);
    let out = crossfile(&args, dir);
    assert!(out.status.success(), "{}", stderr(&out));
    let arena: Standings = serde_json::from_str(&stdout(&out)).expect("the standings");
    let run = path(&dir.join("votes.run.jsonl"));
    let report = crossfile(&["bench", "report", &run, "--json"], dir);
    assert!(report.status.success(), "{}", stderr(&report));
    let report = checks::report(&stdout(&report));
    (arena, report)
}

/// The arms in the standings' order.
fn ranked(arena: &Standings) -> Vec<String> {
    arena.arms.iter().map(|a| a.arm.clone()).collect()
}
