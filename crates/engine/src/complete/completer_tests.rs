//! Tests of the completer: live prompts' right context, answers cut to the token budget.

use super::*;

fn generation(text: &str) -> Generation {
    Generation {
        text: text.into(),
        prompt_tokens: None,
        generated_tokens: None,
        first_token_ms: None,
        prompt_ms: None,
        generate_ms: None,
        cached: false,
        reused_tokens: None,
        out_of_time: false,
        from_fallback: false,
        likelihood: None,
    }
}

/// A live (steady) fill-in-the-middle prompt shows the rest of the cursor's line and the
/// configured lines below it; an exact prompt (`complete`, `bench run`) all of them.
#[test]
fn live_prompts_keep_only_the_lines_ahead_they_are_given() {
    let mut settings = Settings::default();
    settings.prompt.template = Some(Template::Qwen);
    let tokenizer = Arc::new(crate::prompt::testing::CharTokenizer::new(&[
        "<|fim_prefix|>",
        "<|fim_suffix|>",
        "<|fim_middle|>",
    ]));
    let exact = Completer::new(
        &settings,
        Arc::new(crate::backend::NoBackend),
        tokenizer,
        Mode::default(),
    );
    let text = "def f(x):\n    return g(x)  # tail\nprint(1)\nprint(2)\n";
    let query = Query::new("a.py", text, crate::Position { line: 1, col: 13 }).expect("query");
    let right_of = |completer: &Completer| completer.prompt(&query, &[]).right;
    assert_eq!(right_of(&exact), "x)  # tail\nprint(1)\nprint(2)\n");
    let live = |right_lines| {
        exact
            .clone()
            .with_mode(Mode::Live(Live::typing(true, right_lines, 0)))
    };
    assert_eq!(right_of(&live(None)), "x)  # tail\nprint(1)\nprint(2)\n");
    assert_eq!(right_of(&live(Some(0))), "x)  # tail");
    assert_eq!(right_of(&live(Some(1))), "x)  # tail\nprint(1)");
    let unsteady = Mode::Live(Live::typing(false, Some(0), 0));
    assert_eq!(
        right_of(&exact.clone().with_mode(unsteady)),
        "x)  # tail\nprint(1)\nprint(2)\n",
        "a live prompt that is not steady shows what an exact one shows"
    );
}

#[test]
fn an_answer_longer_than_the_token_budget_allows_is_cut_at_a_character() {
    let fits = "x".repeat(2 * MAX_TOKEN_BYTES);
    assert_eq!(bound_to_budget(generation(&fits), 2).text, fits);
    let long = "é".repeat(4 * MAX_TOKEN_BYTES);
    let cut = bound_to_budget(generation(&long), 3).text;
    assert_eq!(cut.len(), 3 * MAX_TOKEN_BYTES);
    assert!(long.starts_with(&cut));
    let odd = format!("a{long}");
    let cut = bound_to_budget(generation(&odd), 1).text;
    assert_eq!(cut.len(), MAX_TOKEN_BYTES - 1, "never half a character");
}
