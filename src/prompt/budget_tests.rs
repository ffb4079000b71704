//! The budget's search and cuts, and the token invariant under random budgets with a tokenizer
//! whose joined texts count more than their parts.

use super::super::testing::CharTokenizer;
use super::{Budget, PromptInput, build, first_fitting, head_within, tail_within};
use crate::bench::SplitMix64;
use crate::lang::Language;
use crate::prompt::Template;
use crate::retrieve::Hit;
use crate::tokenize::Tokenizer;

#[test]
fn first_fitting_finds_the_boundary() {
    for n in 0..40 {
        for boundary in 0..=n {
            let mut tested = Vec::new();
            let got = first_fitting(n, |i| {
                tested.push(i);
                i >= boundary
            });
            assert_eq!(got, boundary, "n={n} boundary={boundary}");
            assert!(tested.len() <= 2 * (usize::BITS - n.leading_zeros()) as usize + 2);
        }
    }
}

#[test]
fn cuts_keep_whole_lines_then_fill_at_token_boundaries() {
    let t = CharTokenizer::new(&[]);
    let rows = [
        // (text, budget, tail, head)
        ("", 5, "", ""),
        ("abc", 0, "", ""),
        ("abc", 3, "abc", "abc"),
        ("abc", 2, "bc", "ab"),
        ("ab\ncd\nef", 5, "cd\nef", "ab\ncd"),
        ("ab\ncd\nef", 6, "\ncd\nef", "ab\ncd\n"),
        ("ab\ncd\n", 3, "cd\n", "ab\n"),
        ("😀é\n😀x", 3, "\n😀x", "😀é\n"),
        ("a\r\nb", 2, "\nb", "a\r"),
    ];
    for (text, budget, tail, head) in rows {
        assert_eq!(
            tail_within(text, budget, &t),
            tail,
            "tail {text:?} {budget}"
        );
        assert_eq!(
            head_within(text, budget, &t),
            head,
            "head {text:?} {budget}"
        );
    }
}

#[test]
fn random_budgets_never_overflow() {
    let mut rng = SplitMix64(7);
    let pieces = [
        "x",
        "é",
        "😀",
        "\n",
        "\r\n",
        "    ",
        "def f():",
        "\n\n",
        "<fim_prefix>",
    ];
    let text = |rng: &mut SplitMix64, len: usize| -> String {
        (0..rng.below(len))
            .map(|_| pieces[rng.below(pieces.len())])
            .collect()
    };
    for round in 0..300 {
        let hits: Vec<Hit> = (0..rng.below(6))
            .map(|i| Hit {
                path: format!("f{i}.py"),
                lines: 0..1,
                score: 0.0,
                text: text(&mut rng, 40),
                chunker: None,
            })
            .collect();
        let left = text(&mut rng, 200);
        let right = text(&mut rng, 100);
        let template = Template::ALL[round % Template::ALL.len()];
        let tokenizer = CharTokenizer::taxing(&template.fim_tokens().unwrap_or_default());
        let budget = Budget {
            context_tokens: rng.below(600) as u32,
            max_new_tokens: rng.below(100) as u32,
            crossfile_tokens: rng.below(300) as u32,
        };
        let input = PromptInput {
            language: Language::Python,
            left: &left,
            right: &right,
            hits: &hits,
        };
        let prompt = build(&input, template, &tokenizer, budget);
        let limit = budget.context_tokens.saturating_sub(budget.max_new_tokens);
        assert!(prompt.tokens.total <= limit, "{budget:?} {prompt:?}");
        assert_eq!(prompt.tokens.total as usize, tokenizer.count(&prompt.text));
        assert!(left.ends_with(&prompt.left));
        assert!(right.starts_with(&prompt.right));
        assert!(prompt.tokens.crossfile <= budget.crossfile_tokens);
        assert!(prompt.hits_used <= hits.len());
        if !template.is_fim() {
            assert_eq!(prompt.right, "");
        }
    }
}
