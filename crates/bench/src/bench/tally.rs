//! The live totals of a `bench run`: per retriever, scored pairs, errors and metric means in
//! the benchmark's own scale, kept as records arrive (the resumed ones first), for the progress
//! line, the closing table and `--json`'s summary. `bench report` reads the run file for more.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::runfile::record::RunRecord;
use super::scoring::scale::display_factor;

/// Running totals per retriever: cases, errors and metric sums.
#[derive(Default)]
pub struct Tally {
    per: BTreeMap<String, Totals>,
}

#[derive(Default)]
struct Totals {
    /// The retriever sees the reference (`oracle`).
    upper_bound: bool,
    /// The benchmark format of its cases (`cceval`, `repoeval`): the scale metrics show in.
    format: String,
    scored: usize,
    errors: usize,
    sums: BTreeMap<String, f64>,
}

/// What `bench run --json` prints (it reads back as itself).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunSummary {
    pub retrievers: BTreeMap<String, RetrieverTotals>,
    /// Records of the cases file skipped as invalid.
    pub skipped_records: usize,
    /// Pairs already in the run file when it was resumed.
    pub resumed: usize,
    /// Pairs this run replayed, and in how long (indexing included).
    pub ran: usize,
    pub seconds: f64,
    pub pairs_per_second: f64,
}

/// One retriever's totals; means over its scored pairs, as stored (not in display scale).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RetrieverTotals {
    pub scored: usize,
    pub errors: usize,
    pub upper_bound: bool,
    pub mean: BTreeMap<String, f64>,
}

impl Tally {
    /// Counts one record.
    pub fn add(&mut self, r: &RunRecord) {
        let t = self.per.entry(r.retriever.clone()).or_default();
        t.upper_bound |= r.upper_bound;
        t.format.clone_from(&r.format);
        if r.error.is_some() {
            t.errors += 1;
            return;
        }
        t.scored += 1;
        for (k, v) in &r.metrics {
            *t.sums.entry(k.clone()).or_default() += v;
        }
    }

    /// Error pairs and all pairs.
    pub fn errors(&self) -> (usize, usize) {
        self.per
            .values()
            .fold((0, 0), |(e, n), t| (e + t.errors, n + t.errors + t.scored))
    }

    /// `bm25 em 0.31 es 58.2 | none …` for the progress bar.
    pub fn line(&self) -> String {
        self.per
            .iter()
            .map(|(name, t)| {
                let em = t.shown("em").unwrap_or(f64::NAN);
                let es = t.shown("es").unwrap_or(f64::NAN);
                let errors = if t.errors > 0 {
                    format!(" ({} errors)", t.errors)
                } else {
                    String::new()
                };
                let bound = if t.upper_bound { " (upper bound)" } else { "" };
                format!("{name}{bound} em {em:.2} es {es:.1}{errors}")
            })
            .collect::<Vec<_>>()
            .join(" | ")
    }

    /// The totals with the run's counts.
    pub fn summary(
        &self,
        skipped_records: usize,
        resumed: usize,
        ran: usize,
        seconds: f64,
    ) -> RunSummary {
        let retrievers = self
            .per
            .iter()
            .map(|(name, t)| {
                let mean = t
                    .sums
                    .keys()
                    .filter_map(|k| Some((k.clone(), t.mean(k)?)))
                    .collect();
                let totals = RetrieverTotals {
                    scored: t.scored,
                    errors: t.errors,
                    upper_bound: t.upper_bound,
                    mean,
                };
                (name.clone(), totals)
            })
            .collect();
        RunSummary {
            retrievers,
            skipped_records,
            resumed,
            ran,
            seconds,
            pairs_per_second: ran as f64 / seconds,
        }
    }

    /// The closing table, in Markdown, with a note on scales and counts.
    pub fn table(&self, skipped_records: usize, resumed: usize) -> String {
        let mut out =
            String::from("| retriever | scored | errors | em | es |\n|---|---:|---:|---:|---:|\n");
        for (name, t) in &self.per {
            let cell = |m: &str| t.shown(m).map_or("–".into(), |v| format!("{v:.4}"));
            let bound = if t.upper_bound { " (upper bound)" } else { "" };
            out.push_str(&format!(
                "| {name}{bound} | {} | {} | {} | {} |\n",
                t.scored,
                t.errors,
                cell("em"),
                cell("es")
            ));
        }
        out.push_str(&format!(
            "\nMeans over scored pairs, in each benchmark's scale (CrossCodeEval and history em and \
             id_* ×100, es 0..100; RepoEval 0..1). {skipped_records} records skipped as invalid; {resumed} pairs \
             were already in the run file."
        ));
        out
    }
}

impl Totals {
    /// The mean in the benchmark's own scale (CrossCodeEval's `em` and `id_*` ×100, as its
    /// `results.json` and `bench report` show them).
    fn shown(&self, metric: &str) -> Option<f64> {
        self.mean(metric)
            .map(|m| m * display_factor(&self.format, metric))
    }

    fn mean(&self, metric: &str) -> Option<f64> {
        (self.scored > 0)
            .then(|| self.sums.get(metric).copied().unwrap_or(0.0) / self.scored as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::testdata::{errored, record};

    fn tally(records: &[RunRecord]) -> Tally {
        let mut tally = Tally::default();
        for r in records {
            tally.add(r);
        }
        tally
    }

    #[test]
    fn means_are_over_scored_pairs_and_shown_in_the_benchmark_scale() {
        let t = tally(&[
            record("a", "bm25", 1.0),
            record("b", "bm25", 0.0),
            errored("c", "bm25"),
            record("a", "oracle", 1.0),
        ]);
        assert_eq!(t.errors(), (1, 4));
        // CrossCodeEval's em ×100, es as stored; the error is counted, not averaged.
        assert_eq!(
            t.line(),
            "bm25 em 50.00 es 50.0 (1 errors) | oracle (upper bound) em 100.00 es 100.0"
        );
        let summary = t.summary(2, 1, 3, 1.5);
        let bm25 = &summary.retrievers["bm25"];
        assert_eq!((bm25.scored, bm25.errors, bm25.upper_bound), (2, 1, false));
        assert_eq!(bm25.mean["em"], 0.5, "the summary keeps the stored scale");
        assert_eq!(summary.pairs_per_second, 2.0);
        let table = t.table(2, 1);
        assert!(
            table.contains("| bm25 | 2 | 1 | 50.0000 | 50.0000 |"),
            "{table}"
        );
        assert!(
            table.contains("2 records skipped as invalid; 1 pairs"),
            "{table}"
        );
    }

    #[test]
    fn a_retriever_with_only_errors_has_no_means() {
        let t = tally(&[errored("a", "bm25")]);
        assert_eq!(t.line(), "bm25 em NaN es NaN (1 errors)");
        assert!(t.summary(0, 0, 1, 1.0).retrievers["bm25"].mean.is_empty());
        assert!(t.table(0, 0).contains("| bm25 | 0 | 1 | – | – |"));
    }
}
