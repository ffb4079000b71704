//! Sentence-level BLEU-4 as sacrebleu computes it (13a tokenizer, exponential smoothing).

use std::collections::HashMap;

use crate::chunk::is_python_whitespace;

/// The highest n-gram order.
const MAX_ORDER: usize = 4;

/// Sentence BLEU-4 of `hypothesis` against one `reference`, 0..=100: sacrebleu 2.x
/// `sentence_bleu(hypothesis, [reference])` with its defaults (Post, "A Call for Clarity in
/// Reporting BLEU Scores", WMT 2018), i.e. `BLEU(tokenize="13a", smooth_method="exp",
/// effective_order=True)`:
///
/// - both texts lose trailing whitespace and are tokenized by [`tokenize_13a`];
/// - `correct[n]` counts the hypothesis n-grams (n = 1..=4) clipped by their count in the
///   reference, `total[n] = max(0, len(hyp) - n + 1)`;
/// - no correct n-gram of any order gives 0;
/// - orders go up to the last with `total[n] > 0` (effective order); an order with matches has
///   precision `100 * correct / total`, one without gets NIST's exponential smoothing
///   ("method 3" of Chen & Cherry, WMT 2014): `100 / (2^k * total)` for the k-th such order;
/// - the score is `bp * exp(mean(log(precision)))` with brevity penalty
///   `bp = exp(1 - ref_len / hyp_len)` when the hypothesis is shorter (0 when it is empty).
///
/// The float operations follow sacrebleu's order.
pub fn sentence_bleu(hypothesis: &str, reference: &str) -> f64 {
    let hyp = tokenize_13a(hypothesis.trim_end_matches(is_python_whitespace));
    let reference = tokenize_13a(reference.trim_end_matches(is_python_whitespace));
    let (sys_len, ref_len) = (hyp.len(), reference.len());
    let mut correct = [0usize; MAX_ORDER];
    let mut total = [0usize; MAX_ORDER];
    for n in 1..=MAX_ORDER {
        let reference_counts = ngram_counts(&reference, n);
        for (ngram, count) in ngram_counts(&hyp, n) {
            correct[n - 1] += count.min(reference_counts.get(ngram).copied().unwrap_or(0));
        }
        total[n - 1] = (sys_len + 1).saturating_sub(n);
    }
    let bp = if sys_len < ref_len {
        if sys_len > 0 {
            (1.0 - ref_len as f64 / sys_len as f64).exp()
        } else {
            0.0
        }
    } else {
        1.0
    };
    if correct.iter().all(|&c| c == 0) {
        return 0.0;
    }
    let mut precisions = [0.0f64; MAX_ORDER];
    let mut smooth = 1.0f64;
    let mut effective_order = MAX_ORDER;
    for n in 1..=MAX_ORDER {
        if total[n - 1] == 0 {
            break;
        }
        effective_order = n;
        precisions[n - 1] = if correct[n - 1] == 0 {
            smooth *= 2.0;
            100.0 / (smooth * total[n - 1] as f64)
        } else {
            100.0 * correct[n - 1] as f64 / total[n - 1] as f64
        };
    }
    let log_sum = precisions[..effective_order]
        .iter()
        .fold(0.0, |acc, &p| acc + p.ln());
    bp * (log_sum / effective_order as f64).exp()
}

/// sacrebleu's `13a` tokenizer (mteval-v13a.pl): `<skipped>` and `-\n` deleted, newlines become
/// spaces, `&quot; &amp; &lt; &gt;` unescaped; ASCII punctuation except `'` `,` `-` `.` split
/// off; `.` and `,` split off unless between digits; `-` split off after a digit; then split
/// on whitespace.
pub fn tokenize_13a(text: &str) -> Vec<String> {
    let mut line = text
        .replace("<skipped>", "")
        .replace("-\n", "")
        .replace('\n', " ");
    if line.contains('&') {
        line = line
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">");
    }
    let mut spaced = String::with_capacity(line.len() * 2);
    for c in line.chars() {
        if is_13a_punctuation(c) {
            spaced.push(' ');
            spaced.push(c);
            spaced.push(' ');
        } else {
            spaced.push(c);
        }
    }
    let is_digit = |c: char| c.is_ascii_digit();
    let is_period_or_comma = |c: char| c == '.' || c == ',';
    // ([^0-9])([\.,]) -> "\1 \2 "
    let spaced = substitute_pairs(
        &spaced,
        |a| !is_digit(a),
        is_period_or_comma,
        |a, b, out| {
            out.extend([a, ' ', b, ' ']);
        },
    );
    // ([\.,])([^0-9]) -> " \1 \2"
    let spaced = substitute_pairs(
        &spaced,
        is_period_or_comma,
        |b| !is_digit(b),
        |a, b, out| {
            out.extend([' ', a, ' ', b]);
        },
    );
    // ([0-9])(-) -> "\1 \2 "
    let spaced = substitute_pairs(
        &spaced,
        is_digit,
        |b| b == '-',
        |a, b, out| {
            out.extend([a, ' ', b, ' ']);
        },
    );
    spaced
        .split(is_python_whitespace)
        .filter(|token| !token.is_empty())
        .map(str::to_string)
        .collect()
}

/// The class `[\{-\~\[-\` -\&\(-\+\:-\@\/]` of the first 13a rule.
fn is_13a_punctuation(c: char) -> bool {
    matches!(c, '{'..='~' | '['..='`' | ' '..='&' | '('..='+' | ':'..='@' | '/')
}

/// `re.sub` of a two-character pattern `(first)(second)`: leftmost, non-overlapping matches,
/// each replaced by what `replace` writes.
fn substitute_pairs(
    text: &str,
    first: impl Fn(char) -> bool,
    second: impl Fn(char) -> bool,
    replace: impl Fn(char, char, &mut String),
) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    let mut i = 0;
    while i < chars.len() {
        match chars.get(i + 1) {
            Some(&next) if first(chars[i]) && second(next) => {
                replace(chars[i], next, &mut out);
                i += 2;
            }
            _ => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

/// The n-grams of `tokens` and how often each occurs.
fn ngram_counts(tokens: &[String], n: usize) -> HashMap<&[String], usize> {
    let mut counts = HashMap::new();
    for ngram in tokens.windows(n) {
        *counts.entry(ngram).or_insert(0) += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenize_13a_splits_code() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("x = foo(a, b)", &["x", "=", "foo", "(", "a", ",", "b", ")"]),
            (
                "self.x[0] = 1.5",
                &["self", ".", "x", "[", "0", "]", "=", "1.5"],
            ),
            ("a-b 3-4 it's", &["a-b", "3", "-", "4", "it's"]),
            ("&lt;T&gt; line-\nbreak", &["<", "T", ">", "linebreak"]),
            ("1,000.5, x.", &["1,000.5", ",", "x", "."]),
        ];
        for (text, want) in cases {
            assert_eq!(tokenize_13a(text), *want, "{text:?}");
        }
    }

    #[test]
    fn sentence_bleu_known_values() {
        let close = |got: f64, want: f64| assert!((got - want).abs() < 1e-9, "{got} != {want}");
        // Identical texts of at least 4 tokens: every precision is 100, so BLEU is 100.
        close(sentence_bleu("a b c d", "a b c d"), 100.0);
        // No token in common, or an empty hypothesis: 0.
        assert_eq!(sentence_bleu("a b", "c d"), 0.0);
        assert_eq!(sentence_bleu("", "c d"), 0.0);
        // Hand-computed: hyp "a b c d" vs ref "a b c e". Precisions 3/4, 2/3, 1/2 and, with no
        // 4-gram match, 100 / (2 * 1) = 50 %; bp = 1. BLEU = (75 * 200/3 * 50 * 50)^(1/4)
        // = 12_500_000^(1/4) = 59.4604...
        close(
            sentence_bleu("a b c d", "a b c e"),
            12_500_000f64.powf(0.25),
        );
        // Hand-computed: hyp "a b" vs ref "a b c d": effective order 2 (the hypothesis has no
        // 3-gram), precisions 100 and 100, bp = exp(1 - 4/2) = 1/e: BLEU = 100/e = 36.7879...
        close(sentence_bleu("a b", "a b c d"), 100.0 * (-1.0f64).exp());
        // Hand-computed: hyp "a a a" vs ref "a": unigrams clip to 1 of 3 (33.33 %); bigrams
        // 0 of 2, the first smoothed order: 100 / (2 * 2) = 25; trigrams 0 of 1, the second:
        // 100 / (4 * 1) = 25; bp = 1. BLEU = (100/3 * 25 * 25)^(1/3) = 27.5160...
        close(
            sentence_bleu("a a a", "a"),
            (100.0f64 / 3.0 * 25.0 * 25.0).powf(1.0 / 3.0),
        );
        // Code, checked against sacrebleu 2.6.0 `sentence_bleu(hyp, [ref]).score`.
        close(
            sentence_bleu(
                "def foo(self, x):\n    return x + 1\n",
                "def foo(self, y):\n    return y + 1",
            ),
            46.59538415189962,
        );
        close(
            sentence_bleu(
                "result = self.model.predict(inputs, batch_size=32)",
                "result = self.model(inputs)",
            ),
            27.22589423069701,
        );
    }
}
