//! Retriever specs: the grammar `none | bm25 | bm25-cceval | bm25-cceval-rg1 | jaccard | dense |
//! oracle | dataset | definitions | identifiers | recent | recent-commit |
//! mmr:<spec>[:<λ>] | hybrid:<spec>+<spec>[+…] |
//! mix:<spec>[*<weight>]+<spec>[*<weight>][+…] | random:<spec>[:<seed>] | threshold:<spec>:<min>`,
//! parsed into a tree.

use std::fmt;
use std::str::FromStr;

use super::RetrieveError;

/// A parsed retriever spec. `Display` gives back the canonical spec string.
#[derive(Clone, Debug, PartialEq)]
pub enum RetrieverSpec {
    /// In-file context only: no cross-file chunks.
    None,
    /// tantivy BM25 over code terms.
    Bm25,
    /// CrossCodeEval's BM25 ranking, reproduced exactly.
    Bm25Cceval,
    /// CrossCodeEval's ranking plus its "next chunk" step (how its released context was made).
    Bm25CcevalRg1,
    /// Token-set Jaccard over sliding windows (RepoCoder).
    Jaccard,
    /// Embedding cosine similarity.
    Dense,
    /// CrossCodeEval's "retrieval with reference": sees the answer; an upper bound.
    Oracle,
    /// The context a benchmark case ships with.
    Dataset,
    /// Where the names used near the cursor are defined, as skeletons.
    Definitions,
    /// Lexical search for the names used near the cursor, weighted by their nearness.
    Identifiers,
    /// Chunks of the files the user had open or edited lately ([`super::Ring`]).
    Recent,
    /// The chunks a benchmark case names as recently open or edited (a history case: the other
    /// files of its commit), ranked as `recent` ranks the ring's.
    RecentCommit,
    /// Maximal Marginal Relevance rerank of an inner retriever.
    Mmr {
        inner: Box<RetrieverSpec>,
        lambda: f64,
    },
    /// Reciprocal rank fusion of two or more retrievers.
    Hybrid(Vec<RetrieverSpec>),
    /// Two or more sources sharing the cross-file block by weight (each > 0).
    Mix(Vec<(RetrieverSpec, f64)>),
    /// A control: as many chunks as the inner retriever returns, drawn at random from other
    /// files (seeded).
    Random {
        inner: Box<RetrieverSpec>,
        seed: u64,
    },
    /// The inner retriever's hits scoring at least `min`.
    Threshold { inner: Box<RetrieverSpec>, min: f64 },
}

/// λ when `mmr:<spec>` names none.
pub const DEFAULT_MMR_LAMBDA: f64 = 0.5;

impl RetrieverSpec {
    /// Parses a comma-separated list of specs (`--retriever a,b`).
    pub fn parse_list(list: &str) -> Result<Vec<RetrieverSpec>, RetrieveError> {
        list.split(',').map(|s| s.trim().parse()).collect()
    }

    /// Whether this retriever sees the reference (its results are an upper bound).
    pub fn is_upper_bound(&self) -> bool {
        match self {
            RetrieverSpec::Oracle => true,
            RetrieverSpec::Mmr { inner, .. } => inner.is_upper_bound(),
            RetrieverSpec::Hybrid(parts) => parts.iter().any(RetrieverSpec::is_upper_bound),
            RetrieverSpec::Mix(parts) => parts.iter().any(|(part, _)| part.is_upper_bound()),
            RetrieverSpec::Threshold { inner, .. } => inner.is_upper_bound(),
            // A random draw sees no reference, whatever counted the chunks.
            _ => false,
        }
    }

    /// Whether this is a control, the baseline a retriever is read against: no context
    /// (`none`) or random context (`random:`).
    pub fn is_control(&self) -> bool {
        matches!(self, RetrieverSpec::None | RetrieverSpec::Random { .. })
    }
}

/// A setting's spec (`[retrieve] retriever`), read as `--retriever` is.
impl<'de> serde::Deserialize<'de> for RetrieverSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spec = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
        spec.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for RetrieverSpec {
    type Err = RetrieveError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        parse(spec).ok_or_else(|| RetrieveError::BadSpec {
            spec: spec.to_string(),
        })
    }
}

fn parse(spec: &str) -> Option<RetrieverSpec> {
    let simple = match spec {
        "none" => Some(RetrieverSpec::None),
        "bm25" => Some(RetrieverSpec::Bm25),
        "bm25-cceval" => Some(RetrieverSpec::Bm25Cceval),
        "bm25-cceval-rg1" => Some(RetrieverSpec::Bm25CcevalRg1),
        "jaccard" => Some(RetrieverSpec::Jaccard),
        "dense" => Some(RetrieverSpec::Dense),
        "oracle" => Some(RetrieverSpec::Oracle),
        "dataset" => Some(RetrieverSpec::Dataset),
        "definitions" => Some(RetrieverSpec::Definitions),
        "identifiers" => Some(RetrieverSpec::Identifiers),
        "recent" => Some(RetrieverSpec::Recent),
        "recent-commit" => Some(RetrieverSpec::RecentCommit),
        _ => None,
    };
    if simple.is_some() {
        return simple;
    }
    if let Some(rest) = spec.strip_prefix("mmr:") {
        // `mmr:<spec>:<λ>` when the last `:` part is a number and the rest a spec.
        if let Some((inner, lambda)) = rest.rsplit_once(':')
            && let (Ok(lambda), Some(inner)) = (lambda.parse::<f64>(), parse(inner))
        {
            return (0.0..=1.0).contains(&lambda).then(|| RetrieverSpec::Mmr {
                inner: Box::new(inner),
                lambda,
            });
        }
        return Some(RetrieverSpec::Mmr {
            inner: Box::new(parse(rest)?),
            lambda: DEFAULT_MMR_LAMBDA,
        });
    }
    if let Some(rest) = spec.strip_prefix("random:") {
        // `random:<spec>:<seed>` when the last `:` part is a whole number and the rest a spec.
        if let Some((inner, seed)) = rest.rsplit_once(':')
            && let (Ok(seed), Some(inner)) = (seed.parse::<u64>(), parse(inner))
        {
            return Some(RetrieverSpec::Random {
                inner: Box::new(inner),
                seed,
            });
        }
        return Some(RetrieverSpec::Random {
            inner: Box::new(parse(rest)?),
            seed: 0,
        });
    }
    if let Some(rest) = spec.strip_prefix("threshold:") {
        let (inner, min) = rest.rsplit_once(':')?;
        let min = min.parse::<f64>().ok().filter(|m| m.is_finite())?;
        return Some(RetrieverSpec::Threshold {
            inner: Box::new(parse(inner)?),
            min,
        });
    }
    if let Some(rest) = spec.strip_prefix("hybrid:") {
        let parts: Option<Vec<RetrieverSpec>> = rest.split('+').map(parse).collect();
        return parts.filter(|p| p.len() >= 2).map(RetrieverSpec::Hybrid);
    }
    if let Some(rest) = spec.strip_prefix("mix:") {
        let parts: Option<Vec<(RetrieverSpec, f64)>> = rest.split('+').map(weighted).collect();
        return parts.filter(|p| p.len() >= 2).map(RetrieverSpec::Mix);
    }
    None
}

/// A mix's part: `<spec>*<weight>` when the last `*` part is a positive number, else `<spec>`
/// (weight 1).
fn weighted(part: &str) -> Option<(RetrieverSpec, f64)> {
    if let Some((inner, weight)) = part.rsplit_once('*') {
        let weight = weight
            .parse::<f64>()
            .ok()
            .filter(|w| w.is_finite() && *w > 0.0)?;
        return Some((parse(inner)?, weight));
    }
    Some((parse(part)?, 1.0))
}

impl fmt::Display for RetrieverSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetrieverSpec::None => f.write_str("none"),
            RetrieverSpec::Bm25 => f.write_str("bm25"),
            RetrieverSpec::Bm25Cceval => f.write_str("bm25-cceval"),
            RetrieverSpec::Bm25CcevalRg1 => f.write_str("bm25-cceval-rg1"),
            RetrieverSpec::Jaccard => f.write_str("jaccard"),
            RetrieverSpec::Dense => f.write_str("dense"),
            RetrieverSpec::Oracle => f.write_str("oracle"),
            RetrieverSpec::Dataset => f.write_str("dataset"),
            RetrieverSpec::Definitions => f.write_str("definitions"),
            RetrieverSpec::Identifiers => f.write_str("identifiers"),
            RetrieverSpec::Recent => f.write_str("recent"),
            RetrieverSpec::RecentCommit => f.write_str("recent-commit"),
            RetrieverSpec::Mmr { inner, lambda } => write!(f, "mmr:{inner}:{lambda}"),
            RetrieverSpec::Random { inner, seed } => write!(f, "random:{inner}:{seed}"),
            RetrieverSpec::Threshold { inner, min } => write!(f, "threshold:{inner}:{min}"),
            RetrieverSpec::Mix(parts) => {
                f.write_str("mix:")?;
                for (i, (part, weight)) in parts.iter().enumerate() {
                    if i > 0 {
                        f.write_str("+")?;
                    }
                    write!(f, "{part}*{weight}")?;
                }
                Ok(())
            }
            RetrieverSpec::Hybrid(parts) => {
                f.write_str("hybrid:")?;
                for (i, part) in parts.iter().enumerate() {
                    if i > 0 {
                        f.write_str("+")?;
                    }
                    write!(f, "{part}")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_into_trees_and_print_back() {
        let cases: &[(&str, Option<&str>)] = &[
            ("bm25", Some("bm25")),
            ("bm25-cceval-rg1", Some("bm25-cceval-rg1")),
            ("mmr:bm25", Some("mmr:bm25:0.5")),
            ("mmr:bm25:0.7", Some("mmr:bm25:0.7")),
            ("mmr:bm25-cceval:1", Some("mmr:bm25-cceval:1")),
            ("mmr:mmr:jaccard:0.2", Some("mmr:mmr:jaccard:0.5:0.2")),
            ("hybrid:bm25+jaccard", Some("hybrid:bm25+jaccard")),
            (
                "hybrid:mmr:bm25:0.3+jaccard+dense",
                Some("hybrid:mmr:bm25:0.3+jaccard+dense"),
            ),
            (
                "mmr:hybrid:bm25+jaccard:0.7",
                Some("mmr:hybrid:bm25+jaccard:0.7"),
            ),
            ("", None),
            ("BM25", None),
            ("nosuch", None),
            ("mmr:", None),
            ("mmr:bm25:1.5", None),
            ("mmr:bm25:nan", None),
            ("hybrid:bm25", None),
            ("hybrid:bm25+", None),
            ("hybrid:bm25,jaccard", None),
            ("random:bm25", Some("random:bm25:0")),
            ("random:bm25:7", Some("random:bm25:7")),
            ("random:mmr:bm25:0.7", Some("random:mmr:bm25:0.7:0")),
            ("random:mmr:bm25:0.7:3", Some("random:mmr:bm25:0.7:3")),
            ("random:", None),
            ("threshold:jaccard:0.2", Some("threshold:jaccard:0.2")),
            (
                "threshold:mmr:bm25:0.7:1.5",
                Some("threshold:mmr:bm25:0.7:1.5"),
            ),
            ("threshold:jaccard", None),
            ("threshold:jaccard:inf", None),
            ("hybrid:random:bm25+bm25", Some("hybrid:random:bm25:0+bm25")),
            (
                "mix:definitions*2+identifiers+bm25*0.5",
                Some("mix:definitions*2+identifiers*1+bm25*0.5"),
            ),
            (
                "mix:threshold:bm25:3*2+mmr:jaccard:0.7",
                Some("mix:threshold:bm25:3*2+mmr:jaccard:0.7*1"),
            ),
            ("mix:bm25", None),
            ("mix:bm25*0+jaccard", None),
            ("mix:bm25*-1+jaccard", None),
            ("mix:bm25*x+jaccard", None),
            ("mix:bm25+", None),
        ];
        for (spec, want) in cases {
            let got = spec.parse::<RetrieverSpec>().ok().map(|s| s.to_string());
            assert_eq!(got.as_deref(), *want, "{spec:?}");
        }
    }

    #[test]
    fn a_bad_spec_lists_the_valid_ones() {
        let err = "bm42"
            .parse::<RetrieverSpec>()
            .expect_err("bm42 is not a retriever");
        let message = err.to_string();
        assert!(
            message.contains("bm42")
                && message.contains("bm25-cceval-rg1")
                && message.contains("hybrid:"),
            "{message}"
        );
    }

    #[test]
    fn lists_split_on_commas() {
        let specs =
            RetrieverSpec::parse_list("bm25, hybrid:bm25+jaccard,oracle").expect("valid list");
        assert_eq!(specs.len(), 3);
        assert!(specs[2].is_upper_bound() && !specs[0].is_upper_bound());
    }

    #[test]
    fn controls_are_no_context_and_random_context_and_never_an_upper_bound() {
        let spec = |s: &str| s.parse::<RetrieverSpec>().expect("valid");
        assert!(spec("none").is_control() && spec("random:bm25").is_control());
        assert!(!spec("bm25").is_control() && !spec("threshold:bm25:1").is_control());
        assert!(
            !spec("random:oracle").is_upper_bound(),
            "random chunks see nothing"
        );
        assert!(spec("threshold:oracle:0").is_upper_bound());
    }
}
