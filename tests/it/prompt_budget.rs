//! The prompt budget's invariant with the default model's real tokenizer: over random budgets
//! and cursors in real code of all four languages (non-ASCII, emoji and CRLF included), a built
//! prompt never tokenizes longer than `context_tokens - max_new_tokens`, with every template.

use std::path::{Path, PathBuf};

use crossfile_engine::lang::Language;
use crossfile_engine::prompt::{Budget, CrossfileLayout, PromptInput, Template, build};
use crossfile_engine::retrieve::Hit;
use crossfile_engine::tokenize::{GgufTokenizer, Tokenizer};

use crate::support::{SplitMix64, cceval_chunks, corpus_workspace, read_text, source_files};

/// The default model's tokenizer (Qwen2.5-Coder-0.5B's vocabulary, fetched once).
fn real_tokenizer() -> GgufTokenizer {
    let path = crate::support::default_model();
    GgufTokenizer::from_gguf(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A file's text as it is on disk: CRLF kept, invalid UTF-8 replaced.
fn raw_text(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A random character boundary of `text`.
fn boundary(text: &str, rng: &mut SplitMix64) -> usize {
    let mut at = rng.below(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `text` with emoji, accented and CJK text and CRLF line ends spliced in at random places.
fn spiced(text: &str, rng: &mut SplitMix64) -> String {
    const SPICE: [&str; 6] = ["😀", "é", "中文", "\r\n", "👩‍💻 ", "\r\n\r\n"];
    let mut out = text.to_string();
    for _ in 0..rng.below(40) + 5 {
        let at = boundary(&out, rng);
        out.insert_str(at, SPICE[rng.below(SPICE.len())]);
    }
    out
}

const WORKSPACES: [(&str, &[&str], Language); 4] = [
    ("click", &["py"], Language::Python),
    ("jpype", &["java"], Language::Java),
    ("mobx", &["ts", "tsx"], Language::TypeScript),
    ("pythonnet", &["cs"], Language::CSharp),
];

const CURSORS_PER_LANGUAGE: usize = 30;

#[test]
fn prompts_fit_the_real_tokenizer_budget() {
    let tokenizer = real_tokenizer();
    let mut rng = SplitMix64(0x5eed);
    let (mut prompts, mut cut_left, mut cut_block, mut cut_right) = (0, 0, 0, 0);
    for (name, exts, language) in WORKSPACES {
        let files: Vec<PathBuf> = source_files(&corpus_workspace(name), exts);
        assert!(!files.is_empty(), "{name}: no source files");
        for case in 0..CURSORS_PER_LANGUAGE {
            let file = &files[rng.below(files.len())];
            let mut text = raw_text(file);
            if case % 2 == 0 {
                text = spiced(&text, &mut rng);
            }
            let (left, right) = text.split_at(boundary(&text, &mut rng));
            let hits: Vec<Hit> = (0..rng.below(8))
                .filter_map(|i| {
                    let other = &files[rng.below(files.len())];
                    let chunks = cceval_chunks(&read_text(other));
                    let chunk = chunks.get(rng.below(chunks.len()))?;
                    let chunk = if i % 3 == 0 {
                        spiced(chunk, &mut rng)
                    } else {
                        chunk.clone()
                    };
                    Some(Hit {
                        path: other.to_string_lossy().into_owned(),
                        lines: 0..10,
                        score: 0.0,
                        text: chunk,
                        chunker: None,
                        source: None,
                    })
                })
                .collect();
            let path = file.to_string_lossy();
            let comment = PromptInput {
                language,
                left,
                right,
                hits: &hits,
                layout: CrossfileLayout::Comment,
                repo: "",
                path: "",
            };
            // The repository-level layout with Qwen's template (the default model's own).
            let repo = PromptInput {
                layout: CrossfileLayout::Repo,
                repo: name,
                path: &path,
                ..comment.clone()
            };
            let shapes = Template::DETECTION_ORDER
                .map(|template| (comment.clone(), template))
                .into_iter()
                .chain([(repo, Template::Qwen)]);
            for (input, template) in shapes {
                let budget = Budget {
                    context_tokens: rng.below(4096) as u32,
                    max_new_tokens: rng.below(256) as u32,
                    crossfile_tokens: rng.below(1024) as u32,
                };
                let prompt = build(&input, template, &tokenizer, budget);
                let limit = budget.context_tokens.saturating_sub(budget.max_new_tokens) as usize;
                let total = tokenizer.count(&prompt.text);
                let at = format!(
                    "{} at byte {} with {template:?} {:?} {budget:?}",
                    file.display(),
                    left.len(),
                    input.layout
                );
                assert!(total <= limit, "{at}: {total} tokens over {limit}");
                assert_eq!(prompt.tokens.total as usize, total, "{at}: total");
                assert_eq!(
                    prompt.tokens.left as usize,
                    tokenizer.count(&prompt.left),
                    "{at}"
                );
                assert!(
                    prompt.tokens.crossfile <= budget.crossfile_tokens,
                    "{at}: block"
                );
                assert!(left.ends_with(&prompt.left), "{at}: left is not a suffix");
                assert!(
                    right.starts_with(&prompt.right),
                    "{at}: right is not a prefix"
                );
                prompts += 1;
                cut_left += usize::from(prompt.left.len() < left.len());
                cut_right += usize::from(template.is_fim() && prompt.right.len() < right.len());
                cut_block += usize::from(prompt.hits_used < hits.len());
            }
        }
    }
    println!(
        "prompt budget: {prompts} prompts within budget ({cut_left} with the left context cut, \
         {cut_right} with the right context cut, {cut_block} with hits dropped)"
    );
}

/// Budgets at and below the template's own size leave an empty or minimal prompt.
#[test]
fn degenerate_budgets_with_the_real_tokenizer() {
    let tokenizer = real_tokenizer();
    let hits = [Hit {
        path: "a.py".into(),
        lines: 0..1,
        score: 0.0,
        text: "x = 1 😀\r\ny = 2".into(),
        chunker: None,
        source: None,
    }];
    for template in Template::DETECTION_ORDER {
        let overhead = tokenizer.count(&template.render("", "")) as u32;
        for context_tokens in [0, 1, overhead.saturating_sub(1), overhead, overhead + 1, 40] {
            for crossfile_tokens in [0, 5, 512] {
                let budget = Budget {
                    context_tokens,
                    max_new_tokens: 0,
                    crossfile_tokens,
                };
                for left in ["", "def f():\r\n    return '😀'\n"] {
                    let input = PromptInput {
                        language: Language::Python,
                        left,
                        right: left,
                        hits: &hits,
                        layout: CrossfileLayout::Comment,
                        repo: "",
                        path: "",
                    };
                    let prompt = build(&input, template, &tokenizer, budget);
                    let total = tokenizer.count(&prompt.text);
                    assert!(
                        total <= context_tokens as usize,
                        "{template:?} {budget:?} {prompt:?}"
                    );
                }
            }
        }
    }
}

/// The default model's vocabulary has Qwen's fill-in-the-middle tokens, so it gets the `qwen`
/// template; SmolLM2's has chat tokens (`<|im_start|>`) but none for FIM, so the small model
/// gets the plain one.
#[test]
fn the_default_model_is_detected_as_qwen_and_the_small_one_as_plain() {
    assert_eq!(Template::detect(&real_tokenizer()), Template::Qwen);
    let small = crate::support::small_model();
    let small = GgufTokenizer::from_gguf(&small).expect("the small model's tokenizer");
    assert!(small.token_id("<|im_start|>").is_some());
    assert_eq!(Template::detect(&small), Template::Plain);
}
