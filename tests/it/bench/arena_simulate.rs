//! `bench arena simulate` on the CrossCodeEval Python DEV cases with the real pipeline: arms
//! none, bm25 and oracle replayed, votes cast by the ES voter, and the Bradley–Terry ranking set
//! against the ranking `bench report` gives the same run file by mean ES.

use serde_json::Value;

use crate::support::{bench_repos, crossfile, shared_dir, small_model, stderr, stdout};

#[test]
fn simulated_votes_rank_the_arms_as_the_report_ranks_them_by_es() {
    let dir = tempfile::tempdir().expect("tempdir");
    let votes = dir.path().join("votes.jsonl");
    let repos = bench_repos();
    let cases = shared_dir().join("bench/cceval/python-dev.jsonl");
    let model = small_model();
    let out = crossfile(
        &[
            "bench",
            "arena",
            "simulate",
            "--format",
            "cceval",
            "--cases",
            cases.to_str().expect("utf-8"),
            "--repos",
            repos.to_str().expect("utf-8"),
            "--arms",
            "none,bm25,oracle",
            "--voter",
            "es",
            "--battles",
            "600",
            "--limit",
            "12",
            "--model",
            model.to_str().expect("utf-8"),
            "--n-ctx",
            "1024",
            "--max-new-tokens",
            "16",
            "--out",
            votes.to_str().expect("utf-8"),
            "--json",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let arena: Value = serde_json::from_str(&stdout(&out)).expect("standings json");
    let by_votes: Vec<String> = arena["arms"]
        .as_array()
        .expect("arms")
        .iter()
        .map(|a| a["arm"].as_str().expect("arm").to_string())
        .collect();

    let run = dir.path().join("votes.run.jsonl");
    let report = crossfile(
        &["bench", "report", run.to_str().expect("utf-8"), "--json"],
        dir.path(),
    );
    assert!(report.status.success(), "{}", stderr(&report));
    let report: Value = serde_json::from_str(&stdout(&report)).expect("report json");
    let mut by_es: Vec<(String, f64)> = report["summaries"]
        .as_array()
        .expect("summaries")
        .iter()
        .map(|s| {
            let es = s["metrics"]
                .as_array()
                .expect("metrics")
                .iter()
                .find(|m| m["name"] == "es")
                .and_then(|m| m["mean"].as_f64())
                .expect("mean es");
            (s["retriever"].as_str().expect("retriever").to_string(), es)
        })
        .collect();
    by_es.sort_by(|a, b| b.1.total_cmp(&a.1));
    let by_es: Vec<String> = by_es.into_iter().map(|(r, _)| r).collect();
    assert_eq!(
        by_votes, by_es,
        "votes: {arena}\nreport: {}",
        report["summaries"]
    );

    // Every line is a vote at a case, with both metrics.
    let text = std::fs::read_to_string(&votes).expect("votes");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect();
    assert_eq!(lines.len(), 600);
    assert!(
        lines
            .iter()
            .all(|v| v["case_id"].is_string() && v["metrics"][1]["es"].is_number())
    );
    assert_eq!(arena["battles"], 600);
}
