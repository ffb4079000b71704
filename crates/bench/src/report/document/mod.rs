//! What a run's [`Report`] says, as a document: its opening notes and its sections, each with
//! paragraphs and tables of typed cells. Markdown (`markdown/`) and HTML (`html/`) render this one
//! description, each in its own markup; the HTML page adds its charts beside the tables and its
//! per-case drill-down, and `--json` is the [`Report`] itself.
//!
//! Invariant: a table's columns, rows and numbers are decided here; a renderer chooses markup
//! only (how a retriever, a number with its interval or a difference looks).

mod sections;

use crate::report::bootstrap::{Bootstrap, Interval};
use crate::report::build::Report;
use crate::report::summary::is_control;
pub use sections::groups;
use sections::{categories, pairwise, provenance, results, sources};

/// The label an upper-bound retriever gets in every table.
pub const UPPER_BOUND: &str = "(upper bound)";
/// How a control (no context, random context) is marked.
pub const CONTROL: &str = "(control)";

/// The report as text to render.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// The run file.
    pub run: String,
    /// What the reader needs first: the counts, how intervals were made, the marks, the scales.
    pub notes: Vec<Paragraph>,
    pub sections: Vec<Section>,
}

/// A paragraph of prose; `code` spans are written between backticks.
#[derive(Clone, Debug, PartialEq)]
pub struct Paragraph {
    pub text: String,
    pub warning: bool,
}

/// One titled part of the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// An anchor that names the section (`results`, `pairwise`, …).
    pub id: &'static str,
    pub title: String,
    pub intro: Option<String>,
    pub tables: Vec<Table>,
}

/// A table, with the heading and sentence that introduce it when it is not the section's only
/// one.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// What the table holds (`summary`, `origins`, …): the HTML page draws its charts after it.
    pub id: &'static str,
    pub heading: Option<String>,
    pub intro: Option<String>,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    /// Right-aligned: every cell of the column holds figures.
    pub numeric: bool,
}

/// One table cell, by what it holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(String),
    Code(String),
    /// A word that stands for no value (`unmeasured`).
    Aside(String),
    Count(usize),
    /// A retriever, marked when it sees the reference or is a control.
    Retriever {
        name: String,
        upper_bound: bool,
    },
    /// A value with its interval, at `decimals`; `percent` adds a `%` sign; `–` when missing.
    Number {
        value: Option<f64>,
        ci: Option<Interval>,
        decimals: usize,
        percent: bool,
    },
    /// A difference B − A with its interval, signed; it "holds" when the interval excludes 0.
    Difference {
        diff: f64,
        ci: Option<Interval>,
        decimals: usize,
    },
    /// A signed interval on its own (a difference's), or `–`.
    Interval {
        ci: Option<Interval>,
        decimals: usize,
    },
    /// Errors, with their count per kind.
    Errors {
        n: usize,
        kinds: Vec<(String, usize)>,
    },
}

impl Cell {
    /// The text of a cell of figures (a count, a number, a difference, an interval, errors)
    /// and what is shown beside it in smaller print (a value's interval, the errors' kinds);
    /// `None` for a cell of words.
    pub fn figures(&self) -> Option<(String, Option<String>)> {
        let shown = match self {
            Cell::Count(n) => n.to_string(),
            Cell::Number { value: None, .. } | Cell::Interval { ci: None, .. } => "–".into(),
            Cell::Number {
                value: Some(v),
                ci,
                decimals,
                percent,
            } => {
                let sign = if *percent { "%" } else { "" };
                let ci = ci.map(|ci| format!("[{:.decimals$}, {:.decimals$}]", ci.low, ci.high));
                return Some((format!("{v:.decimals$}{sign}"), ci));
            }
            Cell::Difference { diff, decimals, .. } => format!("{diff:+.decimals$}"),
            Cell::Interval {
                ci: Some(ci),
                decimals,
            } => format!("[{:+.decimals$}, {:+.decimals$}]", ci.low, ci.high),
            Cell::Errors { n, kinds } => {
                let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
                let kinds = (!kinds.is_empty()).then(|| format!("({})", kinds.join(", ")));
                return Some((n.to_string(), kinds));
            }
            Cell::Text(_) | Cell::Code(_) | Cell::Aside(_) | Cell::Retriever { .. } => return None,
        };
        Some((shown, None))
    }

    pub(super) fn number(value: Option<f64>, decimals: usize) -> Cell {
        Cell::Number {
            value,
            ci: None,
            decimals,
            percent: false,
        }
    }

    pub(super) fn percent(share: f64) -> Cell {
        Cell::Number {
            value: Some(100.0 * share),
            ci: None,
            decimals: 1,
            percent: true,
        }
    }
}

impl Table {
    /// Right-aligns each column whose every cell holds figures.
    fn align(&mut self) {
        for (i, column) in self.columns.iter_mut().enumerate() {
            column.numeric = !self.rows.is_empty()
                && self
                    .rows
                    .iter()
                    .all(|row| row.get(i).and_then(Cell::figures).is_some());
        }
    }
}

/// The mark after a retriever's name, if any.
pub fn retriever_mark(name: &str, upper_bound: bool) -> Option<&'static str> {
    if upper_bound {
        Some(UPPER_BOUND)
    } else if is_control(name) {
        Some(CONTROL)
    } else {
        None
    }
}

/// The document of `report`.
pub fn document(report: &Report) -> Document {
    let mut sections = vec![results(report), pairwise(report)];
    sections.extend(categories(report));
    sections.extend(provenance(report));
    sections.extend(sources(report));
    for table in sections.iter_mut().flat_map(|s| &mut s.tables) {
        table.align();
    }
    Document {
        run: report.run.clone(),
        notes: notes(report),
        sections,
    }
}

fn notes(report: &Report) -> Vec<Paragraph> {
    let note = |text: String| Paragraph {
        text,
        warning: false,
    };
    let mut notes = vec![note(format!(
        "{} records, retrievers: {}. Means are over scored cases; cases with an error are \
         counted in `errors` and left out. Latencies are over scored cases, nearest-rank \
         percentiles. {}",
        report.records,
        report.retrievers.join(", "),
        bootstrap_sentence(&report.bootstrap)
    ))];
    if report.retrievers.iter().any(|r| report.is_upper_bound(r)) {
        notes.push(note(format!(
            "A retriever marked {UPPER_BOUND} sees the reference (`oracle`): its numbers bound \
             what retrieval could give, they are not a result."
        )));
    }
    if report.retrievers.iter().any(|r| is_control(r)) {
        notes.push(note(format!(
            "A retriever marked {CONTROL} is a baseline: no cross-file context (`none`), or as \
             many chunks as another retriever returns drawn at random from other files \
             (`random:`); read a retriever against it."
        )));
    }
    notes.extend(
        report
            .scales
            .iter()
            .map(|scale| note(format!("Scale — {scale}."))),
    );
    notes.extend(report.warnings.iter().map(|warning| Paragraph {
        text: format!("Warning: {warning}"),
        warning: true,
    }));
    notes
}

pub fn bootstrap_sentence(b: &Bootstrap) -> String {
    format!(
        "{:.0}% intervals: percentile bootstrap of the mean, {} resamples, seed {}.",
        b.confidence * 100.0,
        b.resamples,
        b.seed
    )
}

#[cfg(test)]
mod tests;
