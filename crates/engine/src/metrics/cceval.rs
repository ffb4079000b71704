//! CrossCodeEval's per-completion metrics (`process_examples` and `compute_metric_stmt`).

use super::chrf::chrf;
use super::difflib::fuzz_ratio;
use super::edit::indel_distance;
use super::identifiers::{IdMatch, cceval_identifiers};
use super::pyround::round_half_even;
use super::pystr::{strip, stripped_nonempty};
use crate::lang::Language;
use crate::postprocess::cceval_statement;

/// What one CrossCodeEval completion is scored from. The texts are named so a prediction and
/// its reference cannot be swapped by position.
#[derive(Clone, Copy, Debug)]
pub struct CcevalInput<'a> {
    /// The file's language (TSX is scored as TypeScript).
    pub language: Language,
    /// The in-file left context: Python's statement cut parses `prompt + prediction prefix`;
    /// the other languages ignore it.
    pub prompt: &'a str,
    /// The raw model output.
    pub prediction: &'a str,
    /// The reference completion (`groundtruth`); it is never cut.
    pub groundtruth: &'a str,
}

/// Every per-completion value the official scripts compute, with the intermediate texts.
#[derive(Clone, Debug, PartialEq)]
pub struct CcevalScores {
    /// The prediction cut to one statement ([`cceval_statement`]), before comment removal.
    pub postprocessed_prediction: String,
    /// The cut prediction with comments removed: the text every metric compares.
    pub scored_prediction: String,
    /// The groundtruth with comments removed.
    pub scored_groundtruth: String,
    /// Exact match of the stripped non-empty lines.
    pub em: bool,
    /// Edit similarity 0..=100 (integer-valued), fuzzywuzzy over difflib: the official number.
    pub es: f64,
    /// The same with python-Levenshtein installed (InDel ratio); reported under its own name.
    pub es_with_python_levenshtein: f64,
    /// sacrebleu's chrF (0..=100) of the same two texts ([`chrf`]): not CrossCodeEval's.
    pub chrf: f64,
    /// Identifiers of `scored_prediction`, in order, duplicates kept.
    pub pred_ids: Vec<String>,
    /// Identifiers of `scored_groundtruth`.
    pub target_ids: Vec<String>,
    /// Whether the two identifier lists are equal (two empty lists are).
    pub id_em: bool,
    /// Identifier precision over sets, 0 when nothing was predicted.
    pub id_precision: f64,
    /// Identifier recall over sets, 0 when the reference has no identifier.
    pub id_recall: f64,
    /// Identifier F1 over sets, 0 when both are empty.
    pub id_f1: f64,
}

/// Scores one completion exactly as amazon-science/cceval's `eval_metric.py` does
/// (`shared/bench/conformance/README.md`, steps 1–5): cut the prediction to one statement,
/// remove comments from both texts, then EM, ES and the identifier metrics.
pub fn cceval_metrics(input: &CcevalInput<'_>) -> CcevalScores {
    let postprocessed_prediction = cceval_statement(input.language, input.prompt, input.prediction);
    let scored_prediction = remove_comments(&postprocessed_prediction);
    let scored_groundtruth = remove_comments(input.groundtruth);
    let pred_ids = cceval_identifiers(input.language, &scored_prediction);
    let target_ids = cceval_identifiers(input.language, &scored_groundtruth);
    let ids = IdMatch::new(&pred_ids, &target_ids);
    CcevalScores {
        em: cceval_em(&scored_prediction, &scored_groundtruth),
        es: cceval_es(&scored_prediction, &scored_groundtruth),
        es_with_python_levenshtein: cceval_es_with_python_levenshtein(
            &scored_prediction,
            &scored_groundtruth,
        ),
        chrf: chrf(&scored_prediction, &scored_groundtruth),
        id_em: pred_ids == target_ids,
        id_precision: ids.precision(),
        id_recall: ids.recall(),
        id_f1: ids.f1(),
        pred_ids,
        target_ids,
        postprocessed_prediction,
        scored_prediction,
        scored_groundtruth,
    }
}

/// CrossCodeEval's `remove_comments`: deletes every match of `#.*`, then of `//.*` (each to the
/// end of its line, the newline kept). Strings are not respected and `/* */` stays.
pub fn remove_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let line = line.find('#').map_or(line, |at| &line[..at]);
        let line = line.find("//").map_or(line, |at| &line[..at]);
        out.push_str(line);
    }
    out
}

/// CrossCodeEval's exact match: the texts split on `\n` only, each line stripped (Python
/// `str.strip()`), empty lines dropped, and the lists compared.
pub fn cceval_em(prediction: &str, groundtruth: &str) -> bool {
    stripped_nonempty(prediction.split('\n')) == stripped_nonempty(groundtruth.split('\n'))
}

/// CrossCodeEval's edit similarity (`cal_edit_sim`): fuzzywuzzy 0.18.0 `fuzz.ratio` of the
/// stripped texts without python-Levenshtein, i.e. over difflib's `SequenceMatcher` (autojunk
/// on), prediction first: 0..=100, rounded half to even.
pub fn cceval_es(prediction: &str, groundtruth: &str) -> f64 {
    fuzz_ratio(strip(prediction), strip(groundtruth))
}

/// [`cceval_es`] as it comes out when python-Levenshtein is installed: fuzzywuzzy then uses
/// `Levenshtein.ratio`, `r = 1.0 - d / (len(a) + len(b))` with `d` the InDel distance
/// (insertions and deletions only), in that order of float operations, and
/// `round(100 * r)` half to even. Equal texts give 100, an empty one 0.
pub fn cceval_es_with_python_levenshtein(prediction: &str, groundtruth: &str) -> f64 {
    let (a, b) = (strip(prediction), strip(groundtruth));
    if a == b {
        return 100.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let total = a.chars().count() + b.chars().count();
    let r = 1.0 - indel_distance(a, b) as f64 / total as f64;
    round_half_even(100.0 * r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_cut_without_regard_for_strings() {
        let cases = [
            ("x = 1  # note", "x = 1  "),
            ("a // b\nc # d // e\n", "a \nc \n"),
            ("url = \"http://x\"", "url = \"http:"),
            ("this.#field = 1", "this."),
            ("/* kept */ x", "/* kept */ x"),
            ("a\r# b\r\nc", "a\r\nc"),
            ("", ""),
        ];
        for (text, want) in cases {
            assert_eq!(remove_comments(text), want, "{text:?}");
        }
    }

    #[test]
    fn em_compares_stripped_nonempty_lines() {
        assert!(cceval_em("  a\n\n b \r", "a\nb"));
        assert!(cceval_em("", " \n\t"));
        assert!(!cceval_em("a b", "a  b"));
        // `\r` is whitespace but not a line break here.
        assert!(!cceval_em("a\rb", "a\nb"));
    }

    #[test]
    fn es_edges() {
        assert_eq!(cceval_es("", ""), 100.0);
        assert_eq!(cceval_es("  ", "\n"), 100.0);
        assert_eq!(cceval_es("", "x"), 0.0);
        assert_eq!(cceval_es_with_python_levenshtein("x", ""), 0.0);
        // InDel: "abcd" vs "abce" needs 2 edits of 8 -> r = 0.75.
        assert_eq!(cceval_es_with_python_levenshtein("abcd", "abce"), 75.0);
    }

    /// The shape of conformance row `conf_java/0501`: a 17-character prediction contained in a
    /// 63-character groundtruth. difflib: 2 * 17 / 80 = 0.425, times 100 is exactly 42.5 -> 42;
    /// InDel: 1 - 46 / 80 = 0.42500000000000004, times 100 is 42.50000000000001 -> 43.
    #[test]
    fn float_order_decides_exact_halves() {
        let prediction = "abcdefghijklmnopq";
        let groundtruth = format!("{prediction}{}", "x".repeat(46));
        assert_eq!(cceval_es(prediction, &groundtruth), 42.0);
        assert_eq!(
            cceval_es_with_python_levenshtein(prediction, &groundtruth),
            43.0
        );
    }

    #[test]
    fn exact_prediction_can_miss_when_the_groundtruth_has_a_semicolon() {
        let scores = cceval_metrics(&CcevalInput {
            language: Language::Java,
            prompt: "",
            prediction: "for (int i = 0; i < n; i++) {",
            groundtruth: "for (int i = 0; i < n; i++) {",
        });
        assert_eq!(scores.postprocessed_prediction, "for (int i = 0;");
        assert!(!scores.em);
    }
}
