//! `metrics` reproduces the official CrossCodeEval and RepoEval scripts on every row of
//! `shared/bench/conformance/` (values computed with the official code): per-completion fields,
//! and CrossCodeEval's `results.json` per language for both ES back-ends.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crossfile_engine::lang::Language;
use crossfile_engine::metrics::{
    CcevalAggregate, CcevalInput, CcevalRow, CcevalScores, EsBackend, cceval_aggregate,
    cceval_metrics, repoeval_by_repository, repoeval_metrics, repoeval_repository,
};
use serde_json::Value;

use crate::support::shared_dir;

/// The RepoEval row whose official `es` comes from editdistance 0.6.2's bug (docs/testing.md).
const EDITDISTANCE_BUG_ROW: &str = "repoeval_conf/0181";

fn conformance(name: &str) -> PathBuf {
    shared_dir().join("bench/conformance").join(name)
}

/// Every JSON line of a conformance file, with its 1-based line number.
fn rows(name: &str) -> Vec<(usize, Value)> {
    let path = conformance(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| {
            let row = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), n + 1));
            (n + 1, row)
        })
        .collect()
}

fn text<'a>(row: &'a Value, field: &str) -> &'a str {
    row[field]
        .as_str()
        .unwrap_or_else(|| panic!("{}: no string {field}", row["id"]))
}

fn number(value: &Value, field: &str) -> f64 {
    value[field]
        .as_f64()
        .unwrap_or_else(|| panic!("no number {field} in {value}"))
}

fn strings(value: &Value, field: &str) -> Vec<String> {
    value[field]
        .as_array()
        .unwrap_or_else(|| panic!("no list {field} in {value}"))
        .iter()
        .map(|s| {
            s.as_str()
                .unwrap_or_else(|| panic!("{s} is not a string"))
                .to_string()
        })
        .collect()
}

fn language(name: &str) -> Language {
    match name {
        "python" => Language::Python,
        "java" => Language::Java,
        "typescript" => Language::TypeScript,
        "csharp" => Language::CSharp,
        other => panic!("unknown lang {other:?}"),
    }
}

/// The fields of `got` that differ from `expected`, as `field: got … expected …` lines.
fn cceval_differences(got: &CcevalScores, expected: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut check_text = |field: &str, got: &str| {
        let want = text(expected, field);
        if got != want {
            out.push(format!("{field}: got {got:?}, expected {want:?}"));
        }
    };
    check_text("postprocessed_prediction", &got.postprocessed_prediction);
    check_text("scored_prediction", &got.scored_prediction);
    check_text("scored_groundtruth", &got.scored_groundtruth);
    for (field, got) in [("pred_ids", &got.pred_ids), ("target_ids", &got.target_ids)] {
        let want = strings(expected, field);
        if *got != want {
            out.push(format!("{field}: got {got:?}, expected {want:?}"));
        }
    }
    let flags = [("em", got.em), ("id_em", got.id_em)];
    for (field, got) in flags {
        let want = expected[field].as_u64();
        if want != Some(u64::from(got)) {
            out.push(format!("{field}: got {got}, expected {want:?}"));
        }
    }
    // ES is integer-valued: exact. The identifier ratios: within 1e-9.
    let values = [
        ("es", got.es, 0.0),
        (
            "es_with_python_levenshtein",
            got.es_with_python_levenshtein,
            0.0,
        ),
        ("id_precision", got.id_precision, 1e-9),
        ("id_recall", got.id_recall, 1e-9),
        ("id_f1", got.id_f1, 1e-9),
    ];
    for (field, got, tolerance) in values {
        let want = number(expected, field);
        if (got - want).abs() > tolerance {
            out.push(format!("{field}: got {got}, expected {want}"));
        }
    }
    out
}

#[test]
fn cceval_metrics_match_every_conformance_row() {
    let rows = rows("cceval-metrics.jsonl");
    let mut mismatches = Vec::new();
    let mut per_language: BTreeMap<&str, Vec<CcevalScores>> = BTreeMap::new();
    for (line, row) in &rows {
        let lang = text(row, "lang");
        let scores = cceval_metrics(&CcevalInput {
            language: language(lang),
            prompt: text(row, "prompt"),
            prediction: text(row, "prediction"),
            groundtruth: text(row, "groundtruth"),
        });
        for difference in cceval_differences(&scores, &row["expected"]) {
            mismatches.push(format!(
                "line {line} {} ({}): {difference}",
                text(row, "id"),
                text(row, "variant")
            ));
        }
        per_language.entry(lang).or_default().push(scores);
    }
    let failed_rows = {
        let mut ids: Vec<&str> = mismatches
            .iter()
            .filter_map(|m| m.split(' ').nth(2))
            .collect();
        ids.dedup();
        ids.len()
    };
    println!(
        "cceval metrics: {}/{} rows match on every field",
        rows.len() - failed_rows,
        rows.len()
    );
    assert_eq!(rows.len(), 507, "the conformance file has 507 rows");
    assert!(
        mismatches.is_empty(),
        "{} mismatching fields:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );

    let path = conformance("cceval-metrics-aggregates.json");
    let aggregates: Value = serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (key, backend) in [
        ("difflib_backend", EsBackend::Difflib),
        ("python_levenshtein_backend", EsBackend::PythonLevenshtein),
    ] {
        for (lang, scores) in &per_language {
            let expected = &aggregates[key][lang];
            let rows: Vec<CcevalRow> = scores.iter().map(|s| s.row(backend)).collect();
            let got = cceval_aggregate(&rows).unwrap_or_else(|e| panic!("{key} {lang}: {e}"));
            let want = CcevalAggregate {
                em: number(expected, "em"),
                es: number(expected, "es"),
                id_em: number(expected, "id_em"),
                id_precision: number(expected, "id_precision"),
                id_recall: number(expected, "id_recall"),
                id_f1: number(expected, "id_f1"),
                total: expected["total"].as_u64().unwrap_or(u64::MAX) as usize,
            };
            checked += 1;
            if got != want {
                wrong.push(format!("{key} {lang}: got {got:?}, expected {want:?}"));
            }
        }
    }
    println!(
        "cceval aggregates: {}/{checked} (language, back-end) results.json match exactly",
        checked - wrong.len()
    );
    assert_eq!(checked, 8, "4 languages x 2 back-ends");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn repoeval_metrics_match_every_conformance_row() {
    let rows = rows("repoeval-metrics.jsonl");
    let mut mismatches = Vec::new();
    let (mut em_ok, mut exact_ok, mut official_ok) = (0, 0, 0);
    let mut ours = Vec::new();
    let mut official = Vec::new();
    for (line, row) in &rows {
        let id = text(row, "id");
        let expected = &row["expected"];
        let scores = repoeval_metrics(text(row, "prediction"), text(row, "groundtruth"))
            .unwrap_or_else(|e| panic!("line {line} {id}: {e}"));
        let want_em = expected["em"].as_u64();
        if want_em == Some(u64::from(scores.em)) {
            em_ok += 1;
        } else {
            mismatches.push(format!("line {line} {id}: em {} != {want_em:?}", scores.em));
        }
        let exact = number(expected, "es_exact_levenshtein");
        if scores.es.to_bits() == exact.to_bits() {
            exact_ok += 1;
        } else {
            mismatches.push(format!(
                "line {line} {id}: es {} != es_exact_levenshtein {exact}",
                scores.es
            ));
        }
        let es = number(expected, "es");
        let matches_official = scores.es.to_bits() == es.to_bits();
        if id == EDITDISTANCE_BUG_ROW {
            // editdistance 0.6.2's known bug: the official value is wrong, ours is exact.
            assert!(
                !matches_official,
                "{id} was documented as editdistance 0.6.2's exception but now matches `es`"
            );
        } else if matches_official {
            official_ok += 1;
        } else {
            mismatches.push(format!("line {line} {id}: es {} != {es}", scores.es));
        }
        // The task id is the first word of `source` after `repoeval-function:`.
        let task_id = text(row, "source")
            .trim_start_matches("repoeval-function:")
            .split(' ')
            .next()
            .unwrap_or_default()
            .to_string();
        ours.push((task_id.clone(), scores.es));
        official.push((task_id, exact));
    }
    println!(
        "repoeval metrics: em {em_ok}/{n} rows, es = es_exact_levenshtein {exact_ok}/{n} rows, \
         es = official es {official_ok}/{} rows (all but {EDITDISTANCE_BUG_ROW})",
        rows.len() - 1,
        n = rows.len()
    );
    assert_eq!(rows.len(), 260, "the conformance file has 260 rows");
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );

    // Per-repository means over our values equal those over the exact expected values.
    let by_repo = |values: &[(String, f64)]| {
        repoeval_by_repository(
            values
                .iter()
                .map(|(task, es)| (repoeval_repository(task), *es)),
        )
    };
    let means = by_repo(&ours);
    assert_eq!(means, by_repo(&official));
    assert_eq!(means.values().map(|m| m.count).sum::<usize>(), 260);
}
