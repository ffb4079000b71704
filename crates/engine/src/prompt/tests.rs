//! Template detection and layout, the cross-file block's format and rendered prompts.

use expect_test::{Expect, expect};

use super::testing::CharTokenizer;
use super::{Budget, CrossfileLayout, PromptInput, Template, build, crossfile_block};
use crate::lang::Language;
use crate::retrieve::Hit;
use crate::tokenize::Tokenizer;

fn hit(path: &str, text: &str) -> Hit {
    Hit {
        path: path.to_string(),
        lines: 0..1,
        score: 1.0,
        text: text.to_string(),
        chunker: None,
        source: None,
    }
}

const QWEN: [&str; 3] = ["<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"];
const STARCODER: [&str; 3] = ["<fim_prefix>", "<fim_suffix>", "<fim_middle>"];
const DEEPSEEK: [&str; 3] = ["<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"];
const CODELLAMA: [&str; 3] = ["▁<PRE>", "▁<SUF>", "▁<MID>"];
const CODELLAMA_BARE: [&str; 3] = ["<PRE>", "<SUF>", "<MID>"];

#[test]
fn detection_reads_the_vocabulary() {
    let rows: [(&[&str], Template); 11] = [
        (&[], Template::Plain),
        (&["<|endoftext|>", "<|im_start|>"], Template::Plain),
        (&QWEN, Template::Qwen),
        (&STARCODER, Template::StarCoder),
        (&DEEPSEEK, Template::DeepSeek),
        (&CODELLAMA, Template::CodeLlama),
        (&CODELLAMA_BARE, Template::CodeLlama),
        // Two of three is not the family.
        (&QWEN[..2], Template::Plain),
        (
            &["<fim_prefix>", "<fim_suffix>", "<|fim_middle|>"],
            Template::Plain,
        ),
        // Both spellings present: the first family in detection order.
        (&[QWEN, STARCODER].concat(), Template::Qwen),
        (&[STARCODER, CODELLAMA].concat(), Template::StarCoder),
    ];
    for (vocab, expected) in rows {
        assert_eq!(
            Template::detect(&CharTokenizer::new(vocab)),
            expected,
            "{vocab:?}"
        );
    }
    for template in Template::DETECTION_ORDER {
        let tokens = template.fim_tokens().unwrap_or_default();
        assert_eq!(Template::detect(&CharTokenizer::new(&tokens)), template);
        assert_eq!(template.to_string().parse::<Template>(), Ok(template));
        assert_eq!(template.is_fim(), template.fim_tokens().is_some());
    }
    assert!("llama".parse::<Template>().is_err());
}

#[test]
fn templates_lay_out_prefix_and_suffix() {
    let rendered: Vec<String> = Template::DETECTION_ORDER
        .into_iter()
        .map(|t| format!("{:<9} {:?}", t.to_string(), t.render("PRE\n", "SUF")))
        .collect();
    expect![[r#"
        qwen      "<|fim_prefix|>PRE\n<|fim_suffix|>SUF<|fim_middle|>"
        deepseek  "<｜fim▁begin｜>PRE\n<｜fim▁hole｜>SUF<｜fim▁end｜>"
        starcoder "<fim_prefix>PRE\n<fim_suffix>SUF<fim_middle>"
        codellama "<PRE> PRE\n <SUF>SUF <MID>"
        plain     "PRE\n""#]]
    .assert_eq(&rendered.join("\n"));
}

#[test]
fn block_formats_like_crossfile_context() {
    let hits = [
        hit("pkg/a.py", "\n\ndef f():\n    return 1\n\n"),
        hit("b.py", "x = 1\r\ny = 2\u{2028}z"),
        hit("empty.py", "\n"),
    ];
    expect![[r#"
        # Here are some relevant code fragments from other files of the repo:

        # the below code fragment can be found in:
        # pkg/a.py
        # def f():
        #     return 1

        # the below code fragment can be found in:
        # b.py
        # x = 1
        # y = 2
        # z

        # the below code fragment can be found in:
        # empty.py


    "#]]
    .assert_eq(&crossfile_block(Language::Python, &hits));
    expect![[r#"
        // Here are some relevant code fragments from other files of the repo:

        // the below code fragment can be found in:
        // B.java
        // int x;

    "#]]
    .assert_eq(&crossfile_block(Language::Java, &[hit("B.java", "int x;")]));
    assert_eq!(crossfile_block(Language::CSharp, &[]), "");
}

const LEFT: &str = "import os\n\n\ndef main():\n    path = os.";
const RIGHT: &str = "\n    return path\n\n\nmain()\n";

fn check(template: Template, budget: Budget, expect: Expect) {
    let hits = [
        hit("util.py", "def join(a, b):\n    return a + b"),
        hit("conf.py", "ROOT = '/'\nNAME = 'x'"),
    ];
    let input = PromptInput {
        language: Language::Python,
        left: LEFT,
        right: RIGHT,
        hits: &hits,
        layout: CrossfileLayout::Comment,
        repo: "",
        path: "",
    };
    let tokenizer = CharTokenizer::new(&template.fim_tokens().unwrap_or_default());
    let prompt = build(&input, template, &tokenizer, budget);
    let limit = budget.context_tokens.saturating_sub(budget.max_new_tokens);
    assert!(prompt.tokens.total <= limit, "{prompt:?}");
    let t = prompt.tokens;
    let summary = format!(
        "hits_used={} crossfile={} left={} right={} total={}\n{}",
        prompt.hits_used, t.crossfile, t.left, t.right, t.total, prompt.text
    );
    expect.assert_eq(&summary);
}

const ROOMY: Budget = Budget {
    context_tokens: 2048,
    max_new_tokens: 64,
    crossfile_tokens: 512,
};

#[test]
fn prompts_with_room_for_everything() {
    check(
        Template::Plain,
        ROOMY,
        expect![[r#"
            hits_used=2 crossfile=242 left=38 right=0 total=280
            # Here are some relevant code fragments from other files of the repo:

            # the below code fragment can be found in:
            # util.py
            # def join(a, b):
            #     return a + b

            # the below code fragment can be found in:
            # conf.py
            # ROOT = '/'
            # NAME = 'x'

            import os


            def main():
                path = os."#]],
    );
    check(
        Template::StarCoder,
        ROOMY,
        expect![[r#"
            hits_used=2 crossfile=242 left=38 right=26 total=309
            <fim_prefix># Here are some relevant code fragments from other files of the repo:

            # the below code fragment can be found in:
            # util.py
            # def join(a, b):
            #     return a + b

            # the below code fragment can be found in:
            # conf.py
            # ROOT = '/'
            # NAME = 'x'

            import os


            def main():
                path = os.<fim_suffix>
                return path


            main()
            <fim_middle>"#]],
    );
    check(
        Template::CodeLlama,
        ROOMY,
        expect![[r#"
            hits_used=2 crossfile=242 left=38 right=26 total=324
            <PRE> # Here are some relevant code fragments from other files of the repo:

            # the below code fragment can be found in:
            # util.py
            # def join(a, b):
            #     return a + b

            # the below code fragment can be found in:
            # conf.py
            # ROOT = '/'
            # NAME = 'x'

            import os


            def main():
                path = os. <SUF>
                return path


            main()
             <MID>"#]],
    );
    check(
        Template::DeepSeek,
        ROOMY,
        expect![[r#"
            hits_used=2 crossfile=242 left=38 right=26 total=309
            <｜fim▁begin｜># Here are some relevant code fragments from other files of the repo:

            # the below code fragment can be found in:
            # util.py
            # def join(a, b):
            #     return a + b

            # the below code fragment can be found in:
            # conf.py
            # ROOT = '/'
            # NAME = 'x'

            import os


            def main():
                path = os.<｜fim▁hole｜>
                return path


            main()
            <｜fim▁end｜>"#]],
    );
    check(
        Template::Qwen,
        ROOMY,
        expect![[r#"
            hits_used=2 crossfile=242 left=38 right=26 total=309
            <|fim_prefix|># Here are some relevant code fragments from other files of the repo:

            # the below code fragment can be found in:
            # util.py
            # def join(a, b):
            #     return a + b

            # the below code fragment can be found in:
            # conf.py
            # ROOT = '/'
            # NAME = 'x'

            import os


            def main():
                path = os.<|fim_suffix|>
                return path


            main()
            <|fim_middle|>"#]],
    );
}

#[test]
fn tight_budgets_cut_every_part() {
    // 220 tokens for the prompt: a block of at most 160 (one chunk, cut), the rest split
    // between the right context (a quarter) and the left.
    let tight = Budget {
        context_tokens: 260,
        max_new_tokens: 40,
        crossfile_tokens: 160,
    };
    check(
        Template::Qwen,
        tight,
        expect![[r#"
        hits_used=1 crossfile=143 left=38 right=18 total=202
        <|fim_prefix|># Here are some relevant code fragments from other files of the repo:

        # the below code fragment can be found in:
        # util.py
        # def join(a, b):

        import os


        def main():
            path = os.<|fim_suffix|>
            return path

        <|fim_middle|>"#]],
    );
    // No cross-file budget: no block at all; the left context is cut inside a line.
    let no_block = Budget {
        context_tokens: 30,
        max_new_tokens: 10,
        crossfile_tokens: 0,
    };
    check(
        Template::Plain,
        no_block,
        expect![[r#"
        hits_used=0 crossfile=0 left=20 right=0 total=20
        in():
            path = os."#]],
    );
    check(
        Template::StarCoder,
        no_block,
        expect![[r#"
        hits_used=0 crossfile=0 left=13 right=4 total=20
        <fim_prefix>   path = os.<fim_suffix>
           <fim_middle>"#]],
    );
}

#[test]
fn degenerate_budgets_do_not_panic() {
    let budgets = [
        (0, 0, 0),
        (10, 20, 512),
        (2, 0, 512),
        (3, 0, 512),
        (4, 0, 512),
        (1, 0, 0),
        (u32::MAX, 0, u32::MAX),
        (u32::MAX, u32::MAX, u32::MAX),
    ];
    let hits = [hit("a.py", "x = 1"), hit("b.py", "")];
    for left in ["", "x", "😀\r\n😀", "\n\n"] {
        for (context_tokens, max_new_tokens, crossfile_tokens) in budgets {
            for template in Template::DETECTION_ORDER {
                let budget = Budget {
                    context_tokens,
                    max_new_tokens,
                    crossfile_tokens,
                };
                let input = PromptInput {
                    language: Language::Python,
                    left,
                    right: left,
                    hits: &hits,
                    layout: CrossfileLayout::Comment,
                    repo: "",
                    path: "",
                };
                let tokenizer = CharTokenizer::taxing(&template.fim_tokens().unwrap_or_default());
                let prompt = build(&input, template, &tokenizer, budget);
                let limit = context_tokens.saturating_sub(max_new_tokens);
                assert!(prompt.tokens.total <= limit, "{budget:?} {prompt:?}");
                assert!(input.left.ends_with(&prompt.left));
                assert!(input.right.starts_with(&prompt.right));
            }
        }
    }
}

/// The block built from each DEV record's own `crossfile_context.list` is its
/// `crossfile_context.text`, byte for byte.
#[test]
fn block_equals_the_dev_records_crossfile_context_text() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/bench/cceval/python-dev.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (mut same, mut total, mut differ) = (0, 0, Vec::new());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let record: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{path}: {e}"));
        let context = &record["crossfile_context"];
        let hits: Vec<Hit> = context["list"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|entry| {
                hit(
                    entry["filename"].as_str().unwrap_or_default(),
                    entry["retrieved_chunk"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        let expected = context["text"].as_str().unwrap_or_default();
        total += 1;
        let got = crossfile_block(Language::Python, &hits);
        if got == expected {
            same += 1;
        } else {
            let task = record["metadata"]["task_id"].as_str().unwrap_or_default();
            differ.push(format!("{task}:\n--- got\n{got}\n--- expected\n{expected}"));
        }
    }
    assert_eq!(
        (same, total),
        (30, 30),
        "blocks equal to crossfile_context.text; differing:\n{}",
        differ.join("\n")
    );
}

/// The `repo` layout: the repository line, each chunk as a file entry with its line range, the
/// current file's header, then the fill-in-the-middle prompt; a tight budget cuts chunks from
/// the end, lines first, as the `comment` layout does, and the headers always stay.
#[test]
fn the_repo_layout_writes_chunks_as_file_entries() {
    let mut hits = [
        hit("util.py", "\ndef join(a, b):\n    return a + b\n"),
        hit("conf.py", "ROOT = '/'\nNAME = 'x'"),
    ];
    hits[0].lines = 9..13;
    hits[1].lines = 0..2;
    let input = PromptInput {
        language: Language::Python,
        left: LEFT,
        right: RIGHT,
        hits: &hits,
        layout: CrossfileLayout::Repo,
        repo: "shop",
        path: "app/main.py",
    };
    let specials = [QWEN.as_slice(), &[super::REPO_NAME, super::FILE_SEP]].concat();
    let tokenizer = CharTokenizer::new(&specials);
    let render = |budget: Budget| {
        let prompt = build(&input, Template::Qwen, &tokenizer, budget);
        let limit = budget.context_tokens - budget.max_new_tokens;
        assert!(prompt.tokens.total <= limit, "{prompt:?}");
        assert_eq!(tokenizer.count(&prompt.text) as u32, prompt.tokens.total);
        assert!(prompt.text.starts_with(&prompt.preamble));
        format!(
            "hits_used={} crossfile={} total={}\n{}",
            prompt.hits_used, prompt.tokens.crossfile, prompt.tokens.total, prompt.text
        )
    };
    expect![[r#"
        hits_used=2 crossfile=83 total=169
        <|repo_name|>shop
        <|file_sep|>util.py:11-12
        def join(a, b):
            return a + b
        <|file_sep|>conf.py:1-2
        ROOT = '/'
        NAME = 'x'
        <|file_sep|>app/main.py
        <|fim_prefix|>import os


        def main():
            path = os.<|fim_suffix|>
            return path


        main()
        <|fim_middle|>"#]]
    .assert_eq(&render(ROOMY));
    let tight = Budget {
        crossfile_tokens: 55,
        ..ROOMY
    };
    expect![[r#"
        hits_used=1 crossfile=48 total=134
        <|repo_name|>shop
        <|file_sep|>util.py:11-12
        def join(a, b):
            return a + b
        <|file_sep|>app/main.py
        <|fim_prefix|>import os


        def main():
            path = os.<|fim_suffix|>
            return path


        main()
        <|fim_middle|>"#]]
    .assert_eq(&render(tight));
    // No chunk: the repository line and the file's header still frame the prompt.
    let bare = PromptInput {
        hits: &[],
        ..input.clone()
    };
    let prompt = build(&bare, Template::Qwen, &tokenizer, ROOMY);
    assert!(
        prompt
            .text
            .starts_with("<|repo_name|>shop\n<|file_sep|>app/main.py\n<|fim_prefix|>import os"),
        "{}",
        prompt.text
    );
}
