//! rank_bm25's `BM25Okapi` scores (k1 = 1.5, b = 0.75, epsilon = 0.25), bit for bit.
//!
//! CrossCodeEval ranks its chunks with `BM25Okapi(corpus).get_scores(query)` (rank-bm25 0.2.2).
//! Its scores are reproduced with its arithmetic in its order, so that ties and near-ties rank
//! as they do there:
//! - `avgdl` = total tokens / N;
//! - `idf = ln(N - n + 0.5) - ln(n + 0.5)` for each term, `n` the number of documents holding it;
//! - the mean idf sums every term's idf in order of first appearance in the corpus (negative
//!   ones too), and each negative idf is replaced by 0.25 × that mean;
//! - a document's score starts at 0.0 and adds, for each query token in order (repeats
//!   included), `idf * ((tf * 2.5) / (tf + 1.5 * (0.25 + (0.75 * dl) / avgdl)))`, numpy's order.
//!
//! A term missing from a document would add `idf * 0.0`, a zero; adding a zero to a score that
//! is never `-0.0` (scores start at `+0.0`, and `+0.0 + -0.0` is `+0.0`) changes no bit, so only
//! the documents holding a query term are visited. (rank_bm25's `idf.get(q) or 0` also turns an
//! idf of exactly 0.0 into the integer 0, which adds the same zero.)

use crate::terms::{IdMap, TermId};

/// One document: its token count and its distinct terms with their counts, in order of first
/// appearance.
#[derive(Clone, Copy, Debug)]
pub struct OkapiDoc<'a> {
    /// Number of tokens, repeats included (rank_bm25's `len(document)`).
    pub len: u32,
    /// Each distinct term once, with its count, in order of first appearance
    /// ([`crate::terms::term_counts`]).
    pub terms: &'a [(TermId, u32)],
}

/// rank_bm25 `BM25Okapi(corpus, k1=1.5, b=0.75, epsilon=0.25).get_scores(query)`, bit-for-bit.
///
/// One score per document, in order. An empty corpus gives no scores. A corpus with no tokens at
/// all gives zeros (rank_bm25 raises `ZeroDivisionError` there). Terms counted 0 are ignored.
pub fn okapi_scores(docs: &[OkapiDoc<'_>], query: &[TermId]) -> Vec<f64> {
    let mut scores = vec![0.0; docs.len()];
    let Some(stats) = CorpusStats::new(docs, query) else {
        return scores;
    };
    for &slot in &stats.query_token_slots {
        let Some(idf) = stats.idf[slot] else { continue };
        for &(doc, tf) in &stats.postings[slot] {
            let tf = f64::from(tf);
            scores[doc] += idf * ((tf * K1_PLUS_1) / (tf + stats.length_norm[doc]));
        }
    }
    scores
}

const K1: f64 = 1.5;
const B: f64 = 0.75;
const EPSILON: f64 = 0.25;
/// `self.k1 + 1`, as rank_bm25 computes it.
const K1_PLUS_1: f64 = K1 + 1.0;
/// `1 - self.b`, as rank_bm25 computes it.
const ONE_MINUS_B: f64 = 1.0 - B;

/// What scoring needs from the corpus, gathered in one pass over its terms.
struct CorpusStats {
    /// Per query token, in order: the slot of its term in the vectors below.
    query_token_slots: Vec<usize>,
    /// Per query slot: the idf, or `None` when no document holds the term.
    idf: Vec<Option<f64>>,
    /// Per query slot: the documents holding the term, with its count there, in document order.
    postings: Vec<Vec<(usize, u32)>>,
    /// Per document: `k1 * (1 - b + b * dl / avgdl)`.
    length_norm: Vec<f64>,
}

/// Where a term's numbers are kept while the corpus is read.
struct TermSlots {
    /// Index into `nd`, once the term was seen in a document.
    nd: Option<usize>,
    /// Query slot, or [`NOT_IN_QUERY`].
    query: usize,
}

const NOT_IN_QUERY: usize = usize::MAX;

impl CorpusStats {
    /// `None` when the corpus holds no term (rank_bm25 has no idf mean then).
    fn new(docs: &[OkapiDoc<'_>], query: &[TermId]) -> Option<CorpusStats> {
        // One map for both jobs, so each term of each document costs one hash lookup.
        let mut terms = IdMap::<TermSlots>::default();
        let mut query_token_slots = Vec::with_capacity(query.len());
        let mut query_nd: Vec<Option<usize>> = Vec::new();
        for &term in query {
            let next = query_nd.len();
            let slots = terms.entry(term).or_insert(TermSlots {
                nd: None,
                query: next,
            });
            if slots.query == next {
                query_nd.push(None);
            }
            query_token_slots.push(slots.query);
        }
        let mut postings = vec![Vec::new(); query_nd.len()];
        // rank_bm25's `nd`: document frequencies in order of first appearance in the corpus.
        let mut nd: Vec<u64> = Vec::new();
        let mut total_len: u64 = 0;
        for (doc_no, doc) in docs.iter().enumerate() {
            total_len += u64::from(doc.len);
            for &(term, tf) in doc.terms {
                if tf == 0 {
                    continue;
                }
                let slots = terms.entry(term).or_insert(TermSlots {
                    nd: None,
                    query: NOT_IN_QUERY,
                });
                match slots.nd {
                    Some(i) => nd[i] += 1,
                    None => {
                        slots.nd = Some(nd.len());
                        nd.push(1);
                    }
                }
                if slots.query != NOT_IN_QUERY {
                    postings[slots.query].push((doc_no, tf));
                    query_nd[slots.query] = slots.nd;
                }
            }
        }
        if nd.is_empty() {
            return None;
        }

        // ln(k + 0.5) for every k in 0..=N: each idf is a difference of two of these.
        let n = docs.len();
        let ln_half: Vec<f64> = (0..=n).map(|k| (k as f64 + 0.5).ln()).collect();
        let raw_idf = |df: u64| {
            let df = usize::try_from(df).unwrap_or(usize::MAX).min(n);
            ln_half[n - df] - ln_half[df]
        };
        let mut idf_sum = 0.0;
        for &df in &nd {
            idf_sum += raw_idf(df);
        }
        let average_idf = idf_sum / nd.len() as f64;
        let eps = EPSILON * average_idf;
        let idf = query_nd
            .iter()
            .map(|slot| {
                let raw = raw_idf(nd[(*slot)?]);
                Some(if raw < 0.0 { eps } else { raw })
            })
            .collect();

        let avgdl = total_len as f64 / n as f64;
        let length_norm = docs
            .iter()
            .map(|doc| K1 * (ONE_MINUS_B + (B * f64::from(doc.len)) / avgdl))
            .collect();
        Some(CorpusStats {
            query_token_slots,
            idf,
            postings,
            length_norm,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terms::term_counts;

    /// Scores `corpus` (documents of term ids) for `query`.
    fn scores(corpus: &[&[TermId]], query: &[TermId]) -> Vec<f64> {
        let counts: Vec<Vec<(TermId, u32)>> = corpus.iter().map(|doc| term_counts(doc)).collect();
        let docs: Vec<OkapiDoc<'_>> = corpus
            .iter()
            .zip(&counts)
            .map(|(doc, terms)| OkapiDoc {
                len: doc.len() as u32,
                terms,
            })
            .collect();
        okapi_scores(&docs, query)
    }

    /// `want` holds Python's `repr` of rank_bm25's scores; compares bits.
    fn check(corpus: &[&[TermId]], query: &[TermId], want: &[&str]) {
        let got = scores(corpus, query);
        let want: Vec<f64> = want
            .iter()
            .map(|s| s.parse().expect("a float repr"))
            .collect();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&got),
            bits(&want),
            "corpus {corpus:?} query {query:?}: got {got:?}, want {want:?}"
        );
    }

    // Expected values: `BM25Okapi(corpus).get_scores(query)` from rank-bm25 0.2.2, with terms
    // written as `str(id)`.
    #[test]
    fn scores_match_rank_bm25() {
        check(&[], &[1], &[]);
        check(&[&[1, 2]], &[], &["0.0"]);
        check(&[&[1, 2], &[1], &[3]], &[9], &["0.0", "0.0", "0.0"]);
        // One document: every idf is negative, so every term gets 0.25 × the (negative) mean.
        check(&[&[1, 2, 2]], &[2, 1], &["-0.6670146038342094"]);
        // `1` is in 3 of 5 documents: its negative idf becomes 0.25 × the positive mean; `2`
        // repeats in the query, `9` is absent, the last document's length is 2.
        check(
            &[&[1, 2], &[1, 3], &[1], &[4], &[5, 5]],
            &[1, 2, 2, 5, 9],
            &[
                "2.157414313023623",
                "0.18238098508095396",
                "0.24408883717601357",
                "0.0",
                "1.4527104643545254",
            ],
        );
        // Every idf negative: the mean is negative, and so is every score.
        check(
            &[&[1, 2], &[1, 2], &[1]],
            &[2, 2, 1],
            &[
                "-0.8452072612917332",
                "-0.8452072612917332",
                "-0.37450240439349153",
            ],
        );
        // An idf of exactly 0 (n = N/2) stays 0, and an empty document scores 0.
        check(
            &[&[1, 2], &[1], &[3], &[]],
            &[1, 2, 2, 4],
            &["1.1686867039823499", "0.0", "0.0", "0.0"],
        );
        check(&[&[1], &[2]], &[1, 2], &["0.0", "0.0"]);
        check(
            &[&[1, 1, 1, 2], &[2, 3], &[3, 3], &[4]],
            &[1, 3, 2],
            &["1.1822760842612146", "0.0", "0.0", "0.0"],
        );
    }

    #[test]
    fn corpus_without_tokens_scores_zero() {
        check(&[&[], &[]], &[1], &["0.0", "0.0"]);
        let docs = [OkapiDoc {
            len: 3,
            terms: &[(1, 0)],
        }];
        assert_eq!(okapi_scores(&docs, &[1]), [0.0]);
    }
}
