//! `metrics::chrf` against sacrebleu's `CHRF().sentence_score` itself: the pairs a completion
//! benchmark scores (CrossCodeEval DEV groundtruths against cut, edited, extended, re-spaced and
//! unrelated predictions of real code) and edge cases (empty texts, whitespace only, Unicode
//! whitespace Python splits on, texts shorter than the n-gram orders), compared to the bit.

use serde_json::json;

use crossfile_engine::metrics::chrf;

use crate::support::{SplitMix64, python_lines, shared_dir};

/// Reads `{"h": hypothesis, "r": reference}` lines; answers each with the `repr` of the score.
const SACREBLEU_CHRF: &str = r#"
import json, sys
from sacrebleu.metrics import CHRF
chrf = CHRF()
for line in sys.stdin:
    pair = json.loads(line)
    print(repr(chrf.sentence_score(pair["h"], [pair["r"]]).score), flush=True)
"#;

/// Predictions made from a reference: the kinds of answer a model gives.
fn variants(reference: &str, rng: &mut SplitMix64) -> Vec<String> {
    let chars: Vec<char> = reference.chars().collect();
    let cut = |n: usize| chars[..n.min(chars.len())].iter().collect::<String>();
    let mut out = vec![
        reference.to_string(),
        cut(chars.len() / 2),
        cut(3),
        format!("{reference})"),
        format!("{reference}\n    return None"),
        reference.replace(' ', ""),
        reference.replace(' ', "  \t"),
        reference.to_uppercase(),
        String::new(),
    ];
    if !chars.is_empty() {
        let mut edited = chars.clone();
        for _ in 0..3 {
            let at = rng.below(edited.len());
            edited[at] = ['x', '_', '(', '1', 'é'][rng.below(5)];
        }
        out.push(edited.into_iter().collect());
    }
    out
}

#[test]
fn chrf_matches_sacrebleu_to_the_bit() {
    let cases = shared_dir().join("bench/cceval/python-dev.jsonl");
    let text = std::fs::read_to_string(&cases).expect("the CrossCodeEval DEV cases");
    let references: Vec<String> = text
        .lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).expect("a record");
            record["groundtruth"]
                .as_str()
                .expect("a groundtruth")
                .to_string()
        })
        .collect();
    assert_eq!(references.len(), 30);
    let mut rng = SplitMix64(0xc4_4f);
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (i, reference) in references.iter().enumerate() {
        for hypothesis in variants(reference, &mut rng) {
            pairs.push((hypothesis, reference.clone()));
        }
        // Another case's reference: little in common.
        let other = &references[(i + 7) % references.len()];
        pairs.push((other.clone(), reference.clone()));
    }
    for (h, r) in [
        ("", ""),
        ("a", ""),
        ("", "a"),
        ("   ", "\t\n"),
        ("a\u{1c}b\u{85}c\u{a0}d", "abcd"),
        ("x\u{2028}y", "xy"),
        ("ab", "abcdefgh"),
        ("abcdefgh", "ab"),
        ("aaaa", "aa"),
        (
            "self.assertEqual(response.status_code, 200)",
            "self.assertEqual(resp.status, 200)",
        ),
        ("日本語のテキスト", "日本語"),
        ("🙂🙂x", "🙂x"),
    ] {
        pairs.push((h.to_string(), r.to_string()));
    }
    let inputs: Vec<String> = pairs
        .iter()
        .map(|(h, r)| json!({"h": h, "r": r}).to_string())
        .collect();
    let expected = python_lines(&["-c", SACREBLEU_CHRF], &inputs, 2);
    let mut wrong = Vec::new();
    for ((h, r), want) in pairs.iter().zip(&expected) {
        let want: f64 = want.parse().expect("a float");
        let got = chrf(h, r);
        if got.to_bits() != want.to_bits() {
            wrong.push(format!("chrf({h:?}, {r:?}) = {got:?}, sacrebleu {want:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} pairs differ:\n{}",
        wrong.len(),
        pairs.len(),
        wrong.join("\n")
    );
    assert!(pairs.len() > 300, "{}", pairs.len());
}
