//! `bench arena` against an independent Bradley–Terry fit: Python's `choix` (maximum likelihood,
//! no regularization), on synthetic votes drawn from known strengths, through the real binary.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::{SplitMix64, crossfile, stderr, stdout};

/// Log-strengths the votes are drawn from.
const TRUE_STRENGTHS: [f64; 5] = [-1.0, -0.3, 0.0, 0.5, 0.8];
const ARMS: [&str; 5] = ["none", "jaccard", "bm25", "bm25-cceval", "oracle"];

/// A votes line between arms `a` and `b`.
fn vote(a: usize, b: usize, first: u8, choice: Option<u8>) -> String {
    json!({
        "version": 1, "time": "2026-11-27T19:00:00Z", "workspace": "w", "path": "a.py",
        "line": 1, "col": 1, "language": "python", "arms": [ARMS[a], ARMS[b]],
        "first": first, "choice": choice, "texts": ["x", "y"], "latency_ms": [10.0, 20.0],
        "choice_ms": 500.0, "settings_hash": ["a", "b"]
    })
    .to_string()
}

/// Battles between uniformly drawn pairs; the winner drawn by the Bradley–Terry probability; one
/// battle in ten has no choice; `loser` (when given) never wins.
fn synthetic(
    battles: usize,
    seed: u64,
    loser: Option<usize>,
) -> (Vec<String>, Vec<(usize, usize)>) {
    let mut rng = SplitMix64(seed);
    let mut lines = Vec::new();
    let mut decided = Vec::new();
    let uniform = |rng: &mut SplitMix64| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    while lines.len() < battles {
        let a = rng.below(ARMS.len());
        let b = rng.below(ARMS.len());
        if a == b {
            continue;
        }
        let first = (rng.next_u64() % 2) as u8;
        if rng.below(10) == 0 {
            lines.push(vote(a, b, first, None));
            continue;
        }
        let p_a = 1.0 / (1.0 + (TRUE_STRENGTHS[b] - TRUE_STRENGTHS[a]).exp());
        let mut a_wins = uniform(&mut rng) < p_a;
        if loser == Some(a) {
            a_wins = false;
        } else if loser == Some(b) {
            a_wins = true;
        }
        let (w, l) = if a_wins { (a, b) } else { (b, a) };
        lines.push(vote(a, b, first, Some(u8::from(!a_wins))));
        decided.push((w, l));
    }
    (lines, decided)
}

/// choix's maximum-likelihood log-strengths (mean 0) for `decided` among the arms `among`.
fn choix(decided: &[(usize, usize)], among: &[usize]) -> Vec<f64> {
    let data: Vec<(usize, usize)> = decided
        .iter()
        .filter(|(w, l)| among.contains(w) && among.contains(l))
        .map(|(w, l)| {
            let at = |a: &usize| among.iter().position(|x| x == a).expect("among");
            (at(w), at(l))
        })
        .collect();
    let script = "import choix, json, sys\n\
        n, data = json.load(sys.stdin)\n\
        params = choix.opt_pairwise(n, [tuple(d) for d in data], alpha=0.0, tol=1e-12)\n\
        print(json.dumps([float(p) for p in params - params.mean()]))";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    std::io::Write::write_all(
        child.stdin.as_mut().expect("stdin"),
        json!([among.len(), data]).to_string().as_bytes(),
    )
    .expect("write");
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("python3");
    assert!(
        out.status.success(),
        "choix failed (scripts/test-tools python installs it: pip install choix==0.4.1 numpy scipy)"
    );
    serde_json::from_slice(&out.stdout).expect("choix's strengths")
}

fn arena(lines: &[String]) -> Value {
    let dir = tempfile::tempdir().expect("tempdir");
    let votes = dir.path().join("votes.jsonl");
    std::fs::write(&votes, lines.join("\n") + "\n").expect("write votes");
    let out = crossfile(
        &[
            "bench",
            "arena",
            votes.to_str().expect("utf-8"),
            "--json",
            "--resamples",
            "200",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("json")
}

fn strength_of(doc: &Value, arm: &str) -> Option<f64> {
    doc["arms"]
        .as_array()
        .expect("arms")
        .iter()
        .find(|a| a["arm"] == arm)
        .and_then(|a| a["strength"].as_f64())
}

#[test]
fn strengths_equal_choix_and_rank_the_arms_as_drawn() {
    let (lines, decided) = synthetic(3000, 7, None);
    let doc = arena(&lines);
    let reference = choix(&decided, &[0, 1, 2, 3, 4]);
    for (a, expected) in reference.iter().enumerate() {
        let ours = strength_of(&doc, ARMS[a]).expect("a strength");
        assert!(
            (ours - expected).abs() < 1e-6,
            "{}: {ours} vs choix {expected}",
            ARMS[a]
        );
    }
    let ranked: Vec<&str> = doc["arms"]
        .as_array()
        .expect("arms")
        .iter()
        .filter_map(|a| a["arm"].as_str())
        .collect();
    assert_eq!(ranked, ["oracle", "bm25-cceval", "bm25", "jaccard", "none"]);
    assert_eq!(doc["battles"], 3000);
    assert_eq!(doc["decided"], decided.len());
    for arm in doc["arms"].as_array().expect("arms") {
        let s = arm["strength"].as_f64().expect("strength");
        let ci = arm["ci"].as_array().expect("an interval");
        let (lo, hi) = (ci[0].as_f64().expect("lo"), ci[1].as_f64().expect("hi"));
        assert!(lo <= s && s <= hi, "{arm}");
    }
    // The order shown is random, and the votes do not depend on it.
    let first = doc["first_share"]["value"].as_f64().expect("first share");
    assert!((0.45..0.55).contains(&first), "{first}");
}

#[test]
fn a_never_winning_arm_is_left_out_and_the_rest_still_equal_choix() {
    let (lines, decided) = synthetic(2000, 11, Some(2));
    let doc = arena(&lines);
    assert_eq!(strength_of(&doc, "bm25"), None, "bm25 never won");
    let kept = [0, 1, 3, 4];
    for (k, expected) in kept.iter().zip(choix(&decided, &kept)) {
        let ours = strength_of(&doc, ARMS[*k]).expect("a strength");
        assert!(
            (ours - expected).abs() < 1e-6,
            "{}: {ours} vs choix {expected}",
            ARMS[*k]
        );
    }
    let bm25 = doc["arms"]
        .as_array()
        .expect("arms")
        .iter()
        .find(|a| a["arm"] == "bm25")
        .expect("bm25 listed");
    assert_eq!(bm25["wins"], 0);
    assert!(bm25["battles"].as_u64().expect("battles") > 0);
    assert!(
        doc["warnings"]
            .as_array()
            .expect("warnings")
            .iter()
            .any(|w| w
                .as_str()
                .is_some_and(|w| w.contains("\"bm25\"") && w.contains("never won"))),
        "{}",
        doc["warnings"]
    );
}

#[test]
fn bad_lines_are_skipped_with_their_line_and_field() {
    let (mut lines, _) = synthetic(40, 3, None);
    lines.insert(5, lines[0].replace("\"first\":", "\"first\":7,\"x\":"));
    lines.insert(9, "not json".into());
    let dir = tempfile::tempdir().expect("tempdir");
    let votes = dir.path().join("votes.jsonl");
    std::fs::write(&votes, lines.join("\n") + "\n").expect("write votes");
    let out = crossfile(
        &["bench", "arena", votes.to_str().expect("utf-8")],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("votes.jsonl:6:"), "{err}");
    assert!(err.contains("votes.jsonl:10:"), "{err}");
    assert!(stdout(&out).contains("40 battles"), "{}", stdout(&out));
}
