//! `cceval_tokens` against NLTK 3.8.1 itself: hand-written edge strings, seeded random strings
//! built from the pieces NLTK's rules react to, and every CrossCodeEval chunk of the corpus.

use std::time::Instant;

use crossfile_engine::terms::cceval_tokens;

use crate::support::{
    ALL_EXTS, SplitMix64, WORKSPACES, python_lines, reference_script, workspace_chunks,
};

/// Strings aimed at each NLTK rule, and at the fast path's trigger test.
const ADVERSARIAL: &[&str] = &[
    "",
    " ",
    "\n",
    "can't",
    "can't ",
    "can't\n",
    "can't\n\n",
    "can't\r\n",
    "can't\t",
    "can't\u{a0}x",
    "can't\u{85}x",
    "can't\u{1c}x",
    "can't\u{2028}x",
    "can't,",
    "can't,5",
    "can't,x",
    "can't,\n",
    "can't:",
    "can't:\n",
    "can't;",
    "can't)",
    "(can't)",
    "can't]",
    "can't}",
    "can't>",
    "can't<",
    "can't.",
    "can't.\n",
    "can't.\n\n",
    "can't. x",
    "can't.)",
    "can't.)\n",
    "can't...",
    "can't?",
    "can't!",
    "can't'",
    "can't''",
    "can't's",
    "can't'x",
    "can't'x\n",
    "can't\"",
    "\"can't\"",
    "`can't`",
    "can't--x",
    "can't-x",
    "can't*",
    "can't&",
    "can't«",
    "can't»",
    "can't”",
    "can't’",
    "CAN'T ",
    "Can'T ",
    "caN't ",
    "can’t ",
    "don't don't\ndon't",
    "n't",
    " n't ",
    "'n't ",
    "xn'tx ",
    "n'n't ",
    "won't.\n\n",
    "# we can't: x\nfoo(bar)",
    "// don't do this.\nfoo();",
    "print('can't')",
    "s = \"can't\"\nx",
    "if (!x) { return isn't(); }",
    "cannot",
    "Cannot.",
    "CANNOT",
    "cannot_",
    "cannotx",
    "xcannot",
    "cannot²",
    "cannot\u{301}",
    "cannot😀",
    "can not",
    "gimme",
    "gonna",
    "gotta",
    "lemme",
    "wanna",
    "wanna.",
    "wanna\n",
    "wanna!",
    "wanna,",
    "wannabe",
    "gİmme",
    "gımme",
    "GIMME",
    "d'ye",
    "more'n",
    "'tis",
    "'Tis",
    " 'tis",
    "x'tis",
    "''tis",
    "\"'tis",
    "'twas",
    "'tİs",
    "'tiſ",
    "'twaſ",
    "('tis)",
    "cannot'tis",
    "it's 'twas",
    "'s 're 've 'll 'm 'd",
    "'a b",
    "rock 'n' roll",
    "ain't y'all o'clock",
    "x² can't ½",
    "²½",
    "cafe\u{301}n't ",
    "n\u{301}'t ",
    "日本語can't ",
    "🎉can't🎉",
    "\u{feff}can't ",
    "ſ K",
    "a.b.c.",
    "end.  \n",
    "x...",
    "``quoted'' \"q\" `tick` ```triple```",
    "a = \"b\"\r\nc",
];

#[test]
fn adversarial_strings_match_nltk() {
    let texts: Vec<String> = ADVERSARIAL.iter().map(|s| s.to_string()).collect();
    assert_matches_nltk("adversarial strings", &texts, 1);
}

#[test]
fn seeded_random_strings_match_nltk() {
    const PIECES: &[&str] = &[
        "n't", "N'T", "can", "not", "cannot", "gim", "me", "gon", "na", "wan", "got", "ta", "lem",
        "'tis", "'twas", "'t", "is", "was", "'", "''", "\"", "`", "``", ".", "..", ",", ":", ";",
        "?", "!", "(", ")", "[", "]", "{", "}", "<", ">", "--", "-", "*", "&", "$", " ", "  ",
        "\n", "\r", "\t", "\u{a0}", "\u{1c}", "\u{2028}", "x", "a", "5", "²", "\u{301}", "İ", "ı",
        "ſ", "«", "»", "“", "”", "‘", "’", "„", "d", "'ye", "more", "'n", "s", "'s", "'ll", "'re",
        "_", "🎉",
    ];
    let mut rng = SplitMix64(0x5eed_cceb_0000_0001);
    let texts: Vec<String> = (0..20_000)
        .map(|_| {
            let len = 1 + rng.below(12);
            (0..len).map(|_| PIECES[rng.below(PIECES.len())]).collect()
        })
        .collect();
    assert_matches_nltk("seeded random strings", &texts, 1);
}

#[test]
fn corpus_chunks_match_nltk() {
    let start = Instant::now();
    // Every source file of any of the four languages, whatever the workspace's own language.
    let texts: Vec<String> = WORKSPACES
        .iter()
        .flat_map(|(name, _)| workspace_chunks(name, ALL_EXTS))
        .collect();
    eprintln!(
        "corpus: {} chunks read in {:.1}s",
        texts.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(
        texts.len() > 50_000,
        "expected the whole corpus, found {} chunks",
        texts.len()
    );
    assert_matches_nltk("corpus chunks", &texts, 2);
}

/// Asserts that `cceval_tokens` equals NLTK on every text, printing the first differences.
fn assert_matches_nltk(label: &str, texts: &[String], workers: usize) {
    let start = Instant::now();
    let inputs: Vec<String> = texts
        .iter()
        .map(|t| serde_json::to_string(t).expect("JSON string"))
        .collect();
    let (want, (got, rust_secs)) = std::thread::scope(|scope| {
        let ours = scope.spawn(|| {
            let start = Instant::now();
            let got: Vec<Vec<&str>> = texts.iter().map(|t| cceval_tokens(t)).collect();
            (got, start.elapsed().as_secs_f64())
        });
        let script = reference_script();
        let want = python_lines(&[&script, "tokens"], &inputs, workers);
        (want, ours.join().expect("cceval_tokens panicked"))
    });
    let mut differ = 0;
    for ((text, got), want) in texts.iter().zip(&got).zip(&want) {
        let want: Vec<String> =
            serde_json::from_str(want).expect("python3 answers a JSON list of strings");
        if *got != want {
            differ += 1;
            if differ <= 5 {
                eprintln!("{label}: differs on {text:?}\n  nltk: {want:?}\n  ours: {got:?}");
            }
        }
    }
    eprintln!(
        "{label}: compared {} texts, {differ} differ; cceval_tokens {rust_secs:.2}s, total {:.1}s",
        texts.len(),
        start.elapsed().as_secs_f64()
    );
    assert_eq!(
        differ,
        0,
        "{label}: {differ} of {} texts tokenize differently from NLTK 3.8.1",
        texts.len()
    );
}
