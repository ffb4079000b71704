//! The budget's search and cuts, and the token invariant under random budgets with a tokenizer
//! whose joined texts count more than their parts.

use super::super::testing::CharTokenizer;
use super::{
    Budget, Layout, PromptInput, STEADY_LINE_STEP, STEADY_SLACK_TOKENS, build, build_with,
    first_fitting, first_within, head_within, start_line, tail_within,
};
use crate::lang::Language;
use crate::prompt::{CrossfileLayout, Template};
use crate::retrieve::Hit;
use crate::seeded::SplitMix64;
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

/// Candidates that shrink as the index grows: `sizes[i]` tokens, `size * rate` bytes each.
fn shrinking(rng: &mut SplitMix64, n: usize) -> Vec<usize> {
    let mut sizes: Vec<usize> = (0..n).map(|_| 1 + rng.below(40)).collect();
    for i in (0..n.saturating_sub(1)).rev() {
        sizes[i] += sizes[i + 1];
    }
    sizes
}

#[test]
fn first_within_finds_what_first_fitting_finds() {
    let mut rng = SplitMix64(11);
    for round in 0..2000 {
        let n = rng.below(300);
        let sizes = shrinking(&mut rng, n);
        // Bytes per token vary by line, as in code, and by text.
        let rates: Vec<usize> = (0..n).map(|_| 2 + rng.below(4 + round % 5)).collect();
        let bytes: Vec<usize> = (0..n)
            .map(|i| {
                (i..n)
                    .map(|j| (sizes[j] - sizes.get(j + 1).unwrap_or(&0)) * rates[j])
                    .sum()
            })
            .collect();
        let budget = rng.below(sizes.first().copied().unwrap_or(10) + 20);
        let expected = first_fitting(n, |i| sizes[i] <= budget);
        let mut probes = 0;
        let got = first_within(
            n,
            budget,
            |i| bytes[i],
            |i| {
                probes += 1;
                sizes[i]
            },
        );
        assert_eq!(got, expected, "n={n} budget={budget}");
        let log = (usize::BITS - n.leading_zeros()) as usize;
        assert!(probes <= 6 + 2 * log + 2, "{probes} probes for n={n}");
    }
}

#[test]
fn first_within_settles_in_a_few_probes_when_bytes_follow_tokens() {
    let mut rng = SplitMix64(3);
    let mut most = 0;
    for _ in 0..500 {
        let n = 50 + rng.below(2000);
        let sizes = shrinking(&mut rng, n);
        let budget = rng.below(sizes[0]);
        let mut probes = 0;
        let got = first_within(
            n,
            budget,
            |i| sizes[i] * 7 / 2,
            |i| {
                probes += 1;
                sizes[i]
            },
        );
        assert_eq!(got, first_fitting(n, |i| sizes[i] <= budget));
        most = most.max(probes);
    }
    assert!(most <= 4, "{most} probes");
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
        let fitted = tail_within(text, budget, &t);
        assert_eq!(fitted.text, tail, "tail {text:?} {budget}");
        assert_eq!(fitted.tokens, t.count(tail), "tail {text:?} {budget}");
        let fitted = head_within(text, budget, &t);
        assert_eq!(fitted.text, head, "head {text:?} {budget}");
        assert_eq!(fitted.tokens, t.count(head), "head {text:?} {budget}");
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
                source: None,
            })
            .collect();
        let left = text(&mut rng, 200);
        let right = text(&mut rng, 100);
        let template = Template::DETECTION_ORDER[round % Template::DETECTION_ORDER.len()];
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
            layout: CrossfileLayout::Comment,
            repo: "",
            path: "",
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

#[test]
fn a_steady_left_context_keeps_its_start_while_the_user_types_on() {
    let tokenizer = CharTokenizer::new(&[]);
    let file: String = (0..400).map(|i| format!("line {i:03}\n")).collect();
    let budget = Budget {
        context_tokens: 1000,
        max_new_tokens: 50,
        crossfile_tokens: 0,
    };
    let prompt = |left: &str, layout| {
        let input = PromptInput {
            language: Language::Python,
            left,
            right: "",
            hits: &[],
            layout: CrossfileLayout::Comment,
            repo: "",
            path: "",
        };
        build_with(&input, Template::Plain, &tokenizer, budget, layout)
    };
    // The cursor moves through lines 200..236, three characters at a time.
    let first = prompt(&file[..200 * 9], Layout::Steady);
    let first_start = 200 * 9 - first.left.len();
    let first_line = file[..first_start].matches('\n').count();
    let mut starts = Vec::new();
    let mut fallbacks = 0;
    let mut nexts = Vec::new();
    let mut previous: Option<String> = None;
    for end in (200 * 9..236 * 9).step_by(3) {
        let left = &file[..end];
        let exact = prompt(left, Layout::Exact);
        let steady = prompt(left, Layout::Steady);
        assert_eq!(
            exact,
            build(
                &PromptInput {
                    language: Language::Python,
                    left,
                    right: "",
                    hits: &[],
                    layout: CrossfileLayout::Comment,
                    repo: "",
                    path: "",
                },
                Template::Plain,
                &tokenizer,
                budget
            )
        );
        assert!(steady.tokens.total <= 950 && exact.left.ends_with(&steady.left));
        let start = left.len() - steady.left.len();
        let line = left[..start].matches('\n').count();
        assert!(
            left[..start].is_empty() || left[..start].ends_with('\n'),
            "a line start"
        );
        assert_eq!(line % STEADY_LINE_STEP, 0, "at line {line}");
        assert!(
            exact.left.len() - steady.left.len() < STEADY_LINE_STEP * 9 + 9 + STEADY_SLACK_TOKENS
        );
        assert_eq!(start_line(left, &steady.left), Some(line));
        let from_first = prompt(left, Layout::SteadyFrom(first_line));
        if line == first_line || exact.left.len() >= left.len() - first_start {
            // The first start while it fits whole.
            assert_eq!(from_first.left, left[first_start..], "at line {line}");
            assert!(from_first.text.len() >= steady.text.len());
        } else {
            assert_eq!(from_first, steady, "the first start no longer fits");
        }
        let next = prompt(left, Layout::SteadyNext);
        let next_start = left.len() - next.left.len();
        assert_eq!(
            left[..next_start].matches('\n').count(),
            line + STEADY_LINE_STEP,
            "read ahead one step further"
        );
        nexts.push(next_start);
        if let Some(previous) = &previous
            && starts.last() == Some(&start)
        {
            assert!(
                steady.text.starts_with(previous.as_str()),
                "the same start: a longer prompt"
            );
        }
        if start != first_start && from_first.left.len() > steady.left.len() {
            fallbacks += 1;
        }
        starts.push(start);
        previous = Some(steady.text);
    }
    starts.dedup();
    assert_eq!(starts.len(), 2, "one step in 36 lines typed: {starts:?}");
    // Past the step, the first start still fits for the slack's characters typed.
    assert!(
        (STEADY_SLACK_TOKENS / 3..=STEADY_SLACK_TOKENS / 3 + 1).contains(&fallbacks),
        "{fallbacks}"
    );
    assert_eq!(
        nexts[0], starts[1],
        "the step goes where the prompt was read ahead"
    );
    // A left context that fits whole is the same either way.
    let short = &file[..90];
    assert_eq!(prompt(short, Layout::Steady), prompt(short, Layout::Exact));
    assert_eq!(
        prompt(short, Layout::SteadyNext),
        prompt(short, Layout::Exact)
    );
}

#[test]
fn a_steady_left_context_does_not_depend_on_the_block() {
    let tokenizer = CharTokenizer::new(&[]);
    let file: String = (0..400).map(|i| format!("line {i:03}\n")).collect();
    let budget = Budget {
        context_tokens: 1000,
        max_new_tokens: 50,
        crossfile_tokens: 300,
    };
    let hit = |path: &str, text: String| Hit {
        path: path.into(),
        lines: 0..text.matches('\n').count() as u32,
        score: 1.0,
        text,
        chunker: None,
        source: None,
    };
    let small = [hit("a.py", "def a():\n    pass\n".into())];
    let large = [hit("b.py", "x = 1\n".repeat(30))];
    let prompt = |hits: &[Hit], layout| {
        let input = PromptInput {
            language: Language::Python,
            left: &file,
            right: "",
            hits,
            layout: CrossfileLayout::Comment,
            repo: "",
            path: "",
        };
        build_with(&input, Template::Plain, &tokenizer, budget, layout)
    };
    for layout in [Layout::Steady, Layout::SteadyNext] {
        let (with_small, with_large) = (prompt(&small, layout), prompt(&large, layout));
        assert_eq!(with_small.hits_used, 1);
        assert_eq!(with_large.hits_used, 1);
        assert_eq!(with_small.left, with_large.left, "{layout:?}");
    }
    assert_ne!(
        prompt(&small, Layout::Exact).left,
        prompt(&large, Layout::Exact).left,
        "the exact layout gives the left context what the block leaves"
    );
}
