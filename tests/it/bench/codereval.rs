//! CoderEval's staged DEV records (../shared/bench/codereval): the model inputs load, and the
//! results file's recorded verdicts give Pass@k over all tasks and per runnable level. The
//! expected figures are the staging README's counts (71 of 290 generations pass; 8 of 29 tasks
//! have a passing one; the tasks per level), made independently of this code.

use serde_json::Value;

use crate::support::{crossfile, shared_dir, stderr, stdout};

fn score(prompts: &str) -> (Value, String) {
    let dir = shared_dir().join("bench").join("codereval");
    let cache = tempfile::tempdir().expect("temp dir");
    let out = crossfile(
        &[
            "bench",
            "score",
            "--format",
            "codereval",
            "--cases",
            &dir.join(prompts).to_string_lossy(),
            "--predictions",
            &dir.join("python-dev.chatgpt-raw-results.jsonl")
                .to_string_lossy(),
            "--k",
            "1,10",
            "--json",
        ],
        cache.path(),
    );
    let log = format!("exit {:?}\n{}", out.status.code(), stderr(&out));
    (
        serde_json::from_str(&stdout(&out)).unwrap_or(Value::Null),
        log,
    )
}

#[test]
fn recorded_verdicts_give_pass_at_k_per_runnable_level() {
    for prompts in ["python-dev.raw.jsonl", "python-dev.humanlabel.jsonl"] {
        let (document, log) = score(prompts);
        assert!(!log.contains("skipped"), "every record loads: {log}");
        assert_eq!(document["cases"], 29, "{log}");
        let pass = |k: &str| document["pass_at_k"][k].as_f64().expect("pass@k");
        assert!((pass("1") - 71.0 / 290.0).abs() < 1e-12, "{}", pass("1"));
        assert!((pass("10") - 8.0 / 29.0).abs() < 1e-12, "{}", pass("10"));
        let levels: Vec<(String, u64)> = document["by_level"]
            .as_object()
            .expect("by_level")
            .iter()
            .map(|(level, part)| (level.clone(), part["cases"].as_u64().expect("cases")))
            .collect();
        let want = [
            ("class_runnable", 4),
            ("file_runnable", 10),
            ("plib_runnable", 3),
            ("project_runnable", 8),
            ("self_contained", 4),
        ];
        assert_eq!(
            levels,
            want.map(|(l, n)| (l.to_string(), n)).to_vec(),
            "{log}"
        );
        let mean_at_1: f64 = document["by_level"]
            .as_object()
            .expect("by_level")
            .values()
            .map(|part| {
                part["pass_at_k"]["1"].as_f64().expect("pass@1")
                    * part["cases"].as_f64().expect("n")
            })
            .sum::<f64>()
            / 29.0;
        assert!(
            (mean_at_1 - pass("1")).abs() < 1e-12,
            "the levels add up to the whole"
        );
    }
}
