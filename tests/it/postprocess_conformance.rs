//! `postprocess::cceval_statement` reproduces CrossCodeEval's one-statement cut on every row of
//! `shared/bench/conformance/cceval-metrics.jsonl` (computed with the official code).

use crossfile_engine::lang::Language;
use crossfile_engine::postprocess::cceval_statement;

use crate::support::shared_dir;

#[test]
fn cceval_statement_matches_every_conformance_row() {
    let path = shared_dir().join("bench/conformance/cceval-metrics.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (mut total, mut mismatches) = (0, Vec::new());
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let row: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), n + 1));
        let field = |name: &str| row[name].as_str().unwrap_or_default();
        let language = match field("lang") {
            "python" => Language::Python,
            "java" => Language::Java,
            "typescript" => Language::TypeScript,
            "csharp" => Language::CSharp,
            other => panic!("{}:{}: unknown lang {other:?}", path.display(), n + 1),
        };
        let expected = row["expected"]["postprocessed_prediction"]
            .as_str()
            .unwrap_or_else(|| panic!("{}:{}: no postprocessed_prediction", path.display(), n + 1));
        total += 1;
        let got = cceval_statement(language, field("prompt"), field("prediction"));
        if got != expected {
            mismatches.push(format!(
                "{} ({}): got {got:?}, expected {expected:?}",
                field("id"),
                field("variant")
            ));
        }
    }
    println!(
        "cceval_statement: {} of {total} conformance rows match",
        total - mismatches.len()
    );
    assert_eq!(total, 507, "the conformance file has 507 rows");
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
