//! The document's sections, each built from the [`Report`]: the results per (format, language),
//! the pairwise differences, the results by line category, where the context comes from, and
//! what each source of a composed context gave.

use super::{Cell, Column, Section, Table};
use crate::bench::scoring::scale::display_decimals;
use crate::report::build::Report;
use crate::report::compare::{ALL_LANGUAGES, Comparison};
use crate::report::provenance::origin_names;
use crate::report::summary::GroupSummary;

/// Columns by name, aligned later from their cells ([`super::document`]).
fn columns(names: &[&str]) -> Vec<Column> {
    names
        .iter()
        .map(|name| Column {
            name: name.to_string(),
            numeric: false,
        })
        .collect()
}

/// `(format, language)` pairs in first-appearance order.
pub fn groups<'a>(items: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<(&'a str, &'a str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for key in items {
        if !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

fn retriever(name: &str, upper_bound: bool) -> Cell {
    Cell::Retriever {
        name: name.to_string(),
        upper_bound,
    }
}

/// A table per (format, language): each retriever's cases, errors, metric means with their
/// intervals and latencies.
pub(super) fn results(report: &Report) -> Section {
    let keys = groups(
        report
            .summaries
            .iter()
            .map(|s| (s.format.as_str(), s.language.as_str())),
    );
    let tables = keys
        .into_iter()
        .map(|(format, language)| {
            let rows: Vec<&GroupSummary> = report
                .summaries
                .iter()
                .filter(|s| s.format == format && s.language == language)
                .collect();
            summary_table(format, language, &rows)
        })
        .collect();
    Section {
        id: "results",
        title: "Results".into(),
        intro: None,
        tables,
    }
}

fn summary_table(format: &str, language: &str, rows: &[&GroupSummary]) -> Table {
    let mut metrics: Vec<&str> = Vec::new();
    for m in rows.iter().flat_map(|r| &r.metrics) {
        if !metrics.contains(&m.name.as_str()) {
            metrics.push(&m.name);
        }
    }
    let mut names = vec!["retriever", "cases", "errors"];
    names.extend(&metrics);
    names.extend([
        "total p50 ms",
        "total p95 ms",
        "generate p50 ms",
        "generate p95 ms",
    ]);
    let decimals = display_decimals(format);
    let rows = rows
        .iter()
        .map(|row| {
            let mut cells = vec![
                retriever(&row.retriever, row.upper_bound),
                Cell::Count(row.cases),
                Cell::Errors {
                    n: row.errors,
                    kinds: row
                        .error_kinds
                        .iter()
                        .map(|(kind, n)| (kind.clone(), *n))
                        .collect(),
                },
            ];
            cells.extend(metrics.iter().map(|name| {
                let m = row.metrics.iter().find(|m| m.name == *name);
                Cell::Number {
                    value: m.map(|m| m.mean),
                    ci: m.and_then(|m| m.ci),
                    decimals,
                    percent: false,
                }
            }));
            let ms = |v: f64| Cell::number(Some(v), 1);
            cells.extend([
                ms(row.total_ms.p50),
                ms(row.total_ms.p95),
                ms(row.generate_ms.p50),
                ms(row.generate_ms.p95),
            ]);
            cells
        })
        .collect();
    Table {
        id: "summary",
        heading: Some(format!("{format} · {language}")),
        intro: None,
        columns: columns(&names),
        rows,
    }
}

const DIFF_COLUMNS: &[&str] = &[
    "A",
    "B",
    "cases",
    "excluded",
    "metric",
    "A mean",
    "B mean",
    "B − A",
    "95% CI",
    "wins / ties / losses",
];

/// One row per metric of comparison `c`, after `lead` (a category, where there is one).
fn diff_rows(c: &Comparison, lead: Option<Cell>) -> Vec<Vec<Cell>> {
    let decimals = display_decimals(&c.format);
    c.metrics
        .iter()
        .map(|m| {
            let mut cells: Vec<Cell> = lead.iter().cloned().collect();
            cells.extend([
                retriever(&c.a, c.a_upper_bound),
                retriever(&c.b, c.b_upper_bound),
                // The metric's own cases: a likelihood can be missing where the others are not.
                Cell::Count(m.n),
                Cell::Count(c.excluded),
                Cell::Text(m.name.clone()),
                Cell::number(Some(m.mean_a), decimals),
                Cell::number(Some(m.mean_b), decimals),
                Cell::Difference {
                    diff: m.diff,
                    ci: m.ci,
                    decimals,
                },
                Cell::Interval { ci: m.ci, decimals },
                Cell::Text(format!("{} / {} / {}", m.wins, m.ties, m.losses)),
            ]);
            cells
        })
        .collect()
}

/// Every two retrievers over the cases both scored, a table per (format, language).
pub(super) fn pairwise(report: &Report) -> Section {
    let keys = groups(
        report
            .comparisons
            .iter()
            .map(|c| (c.format.as_str(), c.language.as_str())),
    );
    let tables = keys
        .into_iter()
        .map(|(format, language)| {
            let label = if language == ALL_LANGUAGES {
                "all languages"
            } else {
                language
            };
            Table {
                id: "pairwise",
                heading: Some(format!("{format} · {label}")),
                intro: None,
                columns: columns(DIFF_COLUMNS),
                rows: report
                    .comparisons
                    .iter()
                    .filter(|c| c.format == format && c.language == language)
                    .flat_map(|c| diff_rows(c, None))
                    .collect(),
            }
        })
        .collect::<Vec<_>>();
    let intro = if tables.is_empty() {
        "One retriever: nothing to compare."
    } else {
        "B − A over the cases both retrievers scored; wins / ties / losses count cases where B \
         is higher / equal / lower."
    };
    Section {
        id: "pairwise",
        title: "Pairwise differences".into(),
        intro: Some(intro.into()),
        tables,
    }
}

/// EM, ES and chrF by line category (cases mined from history), then every two retrievers
/// within each category; `None` when no record has a category.
pub(super) fn categories(report: &Report) -> Option<Section> {
    if report.by_category.is_empty() {
        return None;
    }
    // Only history records carry a category.
    let decimals = display_decimals("history");
    let number = |value, ci| Cell::Number {
        value,
        ci,
        decimals,
        percent: false,
    };
    let rows = report
        .category_cells()
        .into_iter()
        .map(|(category, name, c)| {
            vec![
                Cell::Text(category.to_string()),
                retriever(name, report.is_upper_bound(name)),
                Cell::Count(c.n),
                Cell::Count(c.errors),
                number(c.em, c.em_ci),
                number(c.es, c.es_ci),
                number(c.chrf, c.chrf_ci),
            ]
        })
        .collect();
    let mut tables = vec![Table {
        id: "categories",
        heading: None,
        intro: None,
        columns: columns(&["category", "retriever", "n", "errors", "em", "es", "chrf"]),
        rows,
    }];
    if !report.category_comparisons.is_empty() {
        let mut names = vec!["category"];
        names.extend(DIFF_COLUMNS);
        tables.push(Table {
            id: "category-pairwise",
            heading: Some("Pairwise differences by category".into()),
            intro: Some("B − A over the cases both retrievers scored.".into()),
            columns: columns(&names),
            rows: report
                .category_comparisons
                .iter()
                .flat_map(|c| {
                    let category = c.category.clone().unwrap_or_default();
                    diff_rows(c, Some(Cell::Text(category)))
                })
                .collect(),
        });
    }
    Some(Section {
        id: "categories",
        title: "By line category".into(),
        intro: Some(
            "Cases mined from history, by the category of their line (Long Code Arena's, in its \
             order of precedence): `n` counts scored cases; means in the cases' scale with 95% \
             intervals."
                .into(),
        ),
        tables,
    })
}

/// Where each retriever's chunks come from, and EM and ES by identifier overlap; `None` for a
/// run whose records predate them.
pub(super) fn provenance(report: &Report) -> Option<Section> {
    if report.provenance.is_empty() {
        return None;
    }
    let names = origin_names(&report.provenance);
    let rows = report.provenance_rows();
    let mut origin_columns = vec!["retriever", "chunks"];
    origin_columns.extend(names.iter().map(String::as_str));
    let origins = Table {
        id: "origins",
        heading: None,
        intro: None,
        columns: columns(&origin_columns),
        rows: rows
            .iter()
            .map(|(name, p)| {
                let mut cells = vec![
                    retriever(name, report.is_upper_bound(name)),
                    Cell::Count(p.chunks),
                ];
                cells.extend(
                    names
                        .iter()
                        .map(|n| Cell::percent(p.origins.get(n).copied().unwrap_or(0.0))),
                );
                cells
            })
            .collect(),
    };
    let overlap = Table {
        id: "overlap",
        heading: Some("By identifier overlap".into()),
        intro: Some(
            "Scored cases by the share of the reference's distinct identifiers (CrossCodeEval's) \
             that some retrieved chunk holds; EM and ES as percentages. Unmeasured: nothing \
             retrieved, or no identifier in the reference."
                .into(),
        ),
        columns: columns(&["retriever", "overlap", "n", "em", "es"]),
        rows: rows
            .iter()
            .flat_map(|(name, p)| {
                let who = retriever(name, report.is_upper_bound(name));
                let buckets = p.by_overlap.iter().map({
                    let who = who.clone();
                    move |b| {
                        vec![
                            who.clone(),
                            Cell::Text(b.bucket.clone()),
                            Cell::Count(b.n),
                            Cell::number(b.em, 2),
                            Cell::number(b.es, 2),
                        ]
                    }
                });
                let unmeasured = vec![
                    who,
                    Cell::Aside("unmeasured".into()),
                    Cell::Count(p.unmeasured),
                    Cell::number(None, 2),
                    Cell::number(None, 2),
                ];
                buckets.chain([unmeasured]).collect::<Vec<_>>()
            })
            .collect(),
    };
    Some(Section {
        id: "provenance",
        title: "Where the context comes from".into(),
        intro: Some(
            "Per retriever, the share of its retrieved chunks by origin, relative to the case's \
             file: the file itself (`same_file`), another file of its folder (`same_dir`), a \
             file of a module it imports (`imported`), or elsewhere."
                .into(),
        ),
        tables: vec![origins, overlap],
    })
}

/// What each source of a composed context gave, and the scores by the source drawn on; `None`
/// when no chunk names a source.
pub(super) fn sources(report: &Report) -> Option<Section> {
    let rows = report.source_rows();
    if rows.is_empty() {
        return None;
    }
    let given = Table {
        id: "sources",
        heading: None,
        intro: None,
        columns: columns(&[
            "retriever",
            "source",
            "chunks",
            "in prompt",
            "token share",
            "reference overlap",
        ]),
        rows: rows
            .iter()
            .flat_map(|(name, s)| {
                s.sources.iter().map(move |r| {
                    vec![
                        retriever(name, report.is_upper_bound(name)),
                        Cell::Code(r.source.clone()),
                        Cell::Count(r.chunks),
                        Cell::Count(r.in_prompt),
                        Cell::percent(r.token_share),
                        Cell::number(r.reference_overlap, 2),
                    ]
                })
            })
            .collect(),
    };
    let drawn_on = Table {
        id: "drawn-on",
        heading: Some("By the source drawn on".into()),
        intro: Some(
            "Scored cases by the source of the held chunk whose identifiers the suggestion \
             shares most (`none`: no held chunk shares one); EM, ES and chrF as percentages."
                .into(),
        ),
        columns: columns(&["retriever", "drawn on", "n", "em", "es", "chrf"]),
        rows: rows
            .iter()
            .flat_map(|(name, s)| {
                s.by_drawn_on.iter().map(move |g| {
                    vec![
                        retriever(name, report.is_upper_bound(name)),
                        Cell::Code(g.source.clone()),
                        Cell::Count(g.n),
                        Cell::number(g.em, 2),
                        Cell::number(g.es, 2),
                        Cell::number(g.chrf, 2),
                    ]
                })
            })
            .collect(),
    };
    Some(Section {
        id: "sources",
        title: "Context sources".into(),
        intro: Some(
            "Per composed retriever (`mix:`), each source's chunks, those the prompt held, its \
             share of the held chunks' tokens, and the mean share of the reference's identifiers \
             its held chunks hold."
                .into(),
        ),
        tables: vec![given, drawn_on],
    })
}
