//! `okapi_scores` against rank_bm25's `BM25Okapi` itself, bit for bit: seeded random corpora
//! with heavy repeats (so negative idfs, and negative mean idfs, occur) and CrossCodeEval chunks
//! of corpus workspaces tokenized with `cceval_tokens`.

use std::collections::HashMap;
use std::time::Instant;

use crossfile_engine::retrieve::okapi::{OkapiDoc, okapi_scores};
use crossfile_engine::terms::term_counts;
use crossfile_engine::terms::{TermId, Vocab, cceval_tokens};

use crate::support::{SplitMix64, python_lines, workspace_chunks};

/// Reads `{"corpus": [[token]], "queries": [[token]]}` lines; answers, per line, the `repr` of
/// every score of every query.
const RANK_BM25: &str = r#"
import json, sys
from rank_bm25 import BM25Okapi
for line in sys.stdin:
    req = json.loads(line)
    bm25 = BM25Okapi(req["corpus"])
    print(json.dumps([[repr(float(s)) for s in bm25.get_scores(q)] for q in req["queries"]]), flush=True)
"#;

/// A corpus and its queries, as token strings.
struct Case {
    label: String,
    corpus: Vec<Vec<String>>,
    queries: Vec<Vec<String>>,
}

#[test]
fn random_corpora_match_rank_bm25() {
    let mut rng = SplitMix64(0x0ca9_1b25_5eed);
    let mut cases = Vec::new();
    // (documents, vocabulary size, longest document)
    let shapes = [
        (1, 3, 5),
        (2, 2, 4),
        (3, 3, 6),
        (5, 4, 10),
        (10, 3, 8),
        (40, 20, 30),
        (200, 60, 40),
        (1000, 300, 60),
    ];
    for (docs, vocab, max_len) in shapes {
        for round in 0..3 {
            // Skewed draws: low term numbers are frequent, so many terms sit in most documents.
            let token = |rng: &mut SplitMix64| {
                let a = rng.below(vocab);
                let b = rng.below(vocab);
                format!("t{}", a.min(b))
            };
            let corpus: Vec<Vec<String>> = (0..docs)
                .map(|_| {
                    let len = rng.below(max_len + 1);
                    (0..len).map(|_| token(&mut rng)).collect()
                })
                .collect();
            if corpus.iter().all(Vec::is_empty) {
                continue; // rank_bm25 raises ZeroDivisionError on a corpus without tokens.
            }
            let mut queries: Vec<Vec<String>> = (0..8)
                .map(|_| {
                    let len = 1 + rng.below(12);
                    (0..len).map(|_| token(&mut rng)).collect()
                })
                .collect();
            queries.push(vec![
                "absent".to_owned(),
                "t0".to_owned(),
                "t0".to_owned(),
                "absent".to_owned(),
            ]);
            queries.push(Vec::new());
            cases.push(Case {
                label: format!("random {docs}x{vocab} #{round}"),
                corpus,
                queries,
            });
        }
    }
    let coverage = assert_matches_rank_bm25(&cases);
    assert!(
        coverage.negative_idf_corpora > 0,
        "no corpus had a negative idf"
    );
    assert!(
        coverage.negative_scores > 0,
        "no corpus had a negative mean idf"
    );
}

#[test]
fn corpus_chunks_match_rank_bm25() {
    let mut cases = Vec::new();
    for (name, exts) in [
        ("click", &["py"][..]),
        ("rxjs", &["ts", "tsx"]),
        ("jpype", &["java"]),
        ("unitask", &["cs"]),
    ] {
        let chunks: Vec<Vec<String>> = workspace_chunks(name, exts)
            .iter()
            .map(|chunk| {
                cceval_tokens(chunk)
                    .into_iter()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .filter(|tokens| !tokens.is_empty())
            .collect();
        assert!(chunks.len() > 1_000, "{name}: only {} chunks", chunks.len());
        // The ranked corpus is at most 1,000 chunks; queries are chunks from the rest of the
        // workspace (other files, as in CrossCodeEval) and from the corpus itself.
        let corpus = chunks[..1_000].to_vec();
        let step = (chunks.len() / 20).max(1);
        let queries: Vec<Vec<String>> = chunks.iter().step_by(step).cloned().collect();
        cases.push(Case {
            label: format!("{name} chunks"),
            corpus,
            queries,
        });
    }
    assert_matches_rank_bm25(&cases);
}

/// Which of rank_bm25's special cases the compared corpora reached.
struct Coverage {
    /// Corpora with a term in more than half of the documents.
    negative_idf_corpora: usize,
    /// Negative scores, which need a negative mean idf.
    negative_scores: usize,
}

/// Asserts that every score of every case is bit-identical to rank_bm25's.
fn assert_matches_rank_bm25(cases: &[Case]) -> Coverage {
    let start = Instant::now();
    let inputs: Vec<String> = cases
        .iter()
        .map(|case| serde_json::json!({"corpus": case.corpus, "queries": case.queries}).to_string())
        .collect();
    let answers = python_lines(&["-c", RANK_BM25], &inputs, 1);
    let python_secs = start.elapsed().as_secs_f64();

    let vocab = Vocab::global();
    let (mut compared, mut differ, mut ours_secs) = (0usize, 0usize, 0.0);
    let mut coverage = Coverage {
        negative_idf_corpora: 0,
        negative_scores: 0,
    };
    for (case, answer) in cases.iter().zip(&answers) {
        let want: Vec<Vec<String>> =
            serde_json::from_str(answer).expect("python3 answers lists of float reprs");
        let token_ids: Vec<Vec<u32>> = case
            .corpus
            .iter()
            .map(|doc| vocab.intern_all(doc.iter().map(String::as_str)))
            .collect();
        let counts: Vec<_> = token_ids.iter().map(|ids| term_counts(ids)).collect();
        let docs: Vec<OkapiDoc<'_>> = token_ids
            .iter()
            .zip(&counts)
            .map(|(ids, terms)| OkapiDoc {
                len: u32::try_from(ids.len()).expect("short document"),
                terms,
            })
            .collect();
        let mut df: HashMap<TermId, usize> = HashMap::new();
        for (term, _) in counts.iter().flatten() {
            *df.entry(*term).or_default() += 1;
        }
        if df.values().any(|&n| 2 * n > docs.len()) {
            coverage.negative_idf_corpora += 1;
        }
        for (query, want) in case.queries.iter().zip(&want) {
            let query_ids = vocab.intern_all(query.iter().map(String::as_str));
            let timer = Instant::now();
            let got = okapi_scores(&docs, &query_ids);
            ours_secs += timer.elapsed().as_secs_f64();
            assert_eq!(got.len(), want.len(), "{}: score count", case.label);
            for (doc_no, (got, want_repr)) in got.iter().zip(want).enumerate() {
                compared += 1;
                let want: f64 = want_repr.parse().expect("a Python float repr");
                coverage.negative_scores += usize::from(want < 0.0);
                if got.to_bits() != want.to_bits() {
                    differ += 1;
                    if differ <= 5 {
                        eprintln!(
                            "{}: doc {doc_no}, query {query:?}: rank_bm25 {want_repr} ({:#018x}), ours {got:?} ({:#018x})",
                            case.label,
                            want.to_bits(),
                            got.to_bits()
                        );
                    }
                }
            }
        }
    }
    let queries: usize = cases.iter().map(|c| c.queries.len()).sum();
    eprintln!(
        "okapi: {} corpora ({} with a negative idf), {queries} queries, {compared} scores compared \
         ({} negative), {differ} differ; okapi_scores {ours_secs:.3}s, rank_bm25 (with startup) {python_secs:.1}s",
        cases.len(),
        coverage.negative_idf_corpora,
        coverage.negative_scores,
    );
    assert_eq!(
        differ, 0,
        "{differ} of {compared} scores differ from rank_bm25"
    );
    coverage
}
