//! The retrievers a spec can name, each with what it needs to run: the one list behind the
//! message for a bad spec and the language server's `crossfile.retrievers`, so no client keeps
//! its own.

use super::RetrieveSettings;

/// A retriever spec form and what it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetrieverForm {
    /// The spec, or its pattern for the composite forms (`mmr:<spec>[:<lambda>]`).
    pub spec: &'static str,
    /// What it retrieves, in a line.
    pub summary: &'static str,
    pub needs: Need,
    /// Whether it sees the reference, so its scores are an upper bound, not a result.
    pub upper_bound: bool,
    /// A pattern over other specs rather than a spec of its own.
    pub composite: bool,
}

/// What a retriever needs beyond an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Nothing: it runs at any cursor.
    Nothing,
    /// An embeddings endpoint (`retrieve.dense.endpoint`).
    DenseEndpoint,
    /// A benchmark case's own shipped context (CrossCodeEval's, at a replayed case).
    CaseContext,
    /// The parts it combines.
    Parts,
}

impl Need {
    /// The need in a word, as the language server sends it.
    pub fn name(self) -> &'static str {
        match self {
            Need::Nothing => "nothing",
            Need::DenseEndpoint => "dense-endpoint",
            Need::CaseContext => "case-context",
            Need::Parts => "parts",
        }
    }

    /// Whether `settings` provide it (a case's context is known only at a case).
    pub fn met_by(self, settings: &RetrieveSettings) -> bool {
        match self {
            Need::DenseEndpoint => settings.dense.endpoint.is_some(),
            Need::Nothing | Need::CaseContext | Need::Parts => true,
        }
    }
}

/// Every retriever spec form, simple ones first.
pub const RETRIEVERS: &[RetrieverForm] = &[
    simple(
        "none",
        "no cross-file context: the file alone",
        Need::Nothing,
    ),
    simple("bm25", "tantivy BM25 over code terms", Need::Nothing),
    simple(
        "bm25-cceval",
        "CrossCodeEval's BM25 ranking, reproduced exactly",
        Need::Nothing,
    ),
    simple(
        "bm25-cceval-rg1",
        "CrossCodeEval's ranking plus its next-chunk step (how its released context was made)",
        Need::Nothing,
    ),
    simple(
        "jaccard",
        "token-set Jaccard over sliding windows (RepoCoder)",
        Need::Nothing,
    ),
    simple(
        "dense",
        "embedding cosine similarity (an OpenAI-compatible /v1/embeddings endpoint)",
        Need::DenseEndpoint,
    ),
    RetrieverForm {
        spec: "oracle",
        summary: "CrossCodeEval's retrieval with the reference: it sees the answer",
        needs: Need::Nothing,
        upper_bound: true,
        composite: false,
    },
    simple(
        "dataset",
        "the context a benchmark case ships with",
        Need::CaseContext,
    ),
    simple(
        "definitions",
        "where the names used near the cursor are defined (imported modules first), as skeletons",
        Need::Nothing,
    ),
    simple(
        "identifiers",
        "BM25 for the names used near the cursor, nearest weighing most, other files only",
        Need::Nothing,
    ),
    simple(
        "recent",
        "chunks of the files you had open or edited lately, most alike the lines before the cursor",
        Need::Nothing,
    ),
    simple(
        "recent-commit",
        "as recent, over what a case names as lately edited (a history case: its commit's other files)",
        Need::CaseContext,
    ),
    RetrieverForm {
        spec: "mmr:<spec>[:<lambda in 0..1>]",
        summary: "Maximal Marginal Relevance rerank of another retriever's hits",
        needs: Need::Parts,
        upper_bound: false,
        composite: true,
    },
    RetrieverForm {
        spec: "hybrid:<spec>+<spec>[+<spec>...]",
        summary: "reciprocal rank fusion of two or more retrievers",
        needs: Need::Parts,
        upper_bound: false,
        composite: true,
    },
    RetrieverForm {
        spec: "mix:<spec>[*<weight>]+<spec>[*<weight>][+<spec>[*<weight>]...]",
        summary: "sources sharing the cross-file block by weight, in turns, each chunk sent once",
        needs: Need::Parts,
        upper_bound: false,
        composite: true,
    },
    RetrieverForm {
        spec: "random:<spec>[:<seed>]",
        summary: "a control: as many chunks as another retriever returns, drawn at random from other files",
        needs: Need::Parts,
        upper_bound: false,
        composite: true,
    },
    RetrieverForm {
        spec: "threshold:<spec>:<min score>",
        summary: "another retriever's hits scoring at least the threshold",
        needs: Need::Parts,
        upper_bound: false,
        composite: true,
    },
];

const fn simple(spec: &'static str, summary: &'static str, needs: Need) -> RetrieverForm {
    RetrieverForm {
        spec,
        summary,
        needs,
        upper_bound: false,
        composite: false,
    }
}

/// The forms as a bad spec's message lists them: `none, bm25, …, hybrid:<spec>+<spec>[+…]`.
pub fn valid_specs() -> String {
    let specs: Vec<&str> = RETRIEVERS.iter().map(|r| r.spec).collect();
    specs.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieve::{Exclude, RetrieverSpec};

    #[test]
    fn every_simple_form_parses_and_says_whether_it_is_an_upper_bound() {
        for form in RETRIEVERS.iter().filter(|f| !f.composite) {
            let spec: RetrieverSpec = form.spec.parse().expect(form.spec);
            assert_eq!(spec.to_string(), form.spec);
            assert_eq!(spec.is_upper_bound(), form.upper_bound, "{}", form.spec);
        }
        for form in RETRIEVERS.iter().filter(|f| f.composite) {
            let example = form
                .spec
                .replace("<spec>", "bm25")
                .replace("[:<lambda in 0..1>]", "")
                .replace("[:<seed>]", "")
                .replace("<min score>", "0.5")
                .replace("[*<weight>]", "")
                .replace("[+bm25...]", "");
            assert!(example.parse::<RetrieverSpec>().is_ok(), "{example}");
        }
    }

    #[test]
    fn dense_is_available_only_with_an_endpoint() {
        let mut settings = RetrieveSettings {
            retriever: RetrieverSpec::Bm25,
            top_k: 5,
            query_lines: 10,
            jaccard_query_lines: 20,
            rrf_k: 60.0,
            exclude: Exclude::Window,
            dense: crate::retrieve::DenseSettings {
                endpoint: None,
                model: "default".into(),
                api_key_env: None,
                timeout_ms: 1_000,
                cache_dir: "/nonexistent".into(),
            },
        };
        assert!(!Need::DenseEndpoint.met_by(&settings));
        assert!(Need::Nothing.met_by(&settings));
        settings.dense.endpoint = Some("http://127.0.0.1:1".into());
        assert!(Need::DenseEndpoint.met_by(&settings));
    }
}
