//! The page's "By line category" section, for runs of cases mined from history: EM, ES and chrF per
//! category and retriever (a table with intervals and a bar chart per metric, categories as the
//! groups), then every two retrievers compared within each category.

use std::fmt::Write;

use super::charts::{self, Bar, BarChart, BarGroup};
use super::markup::{escape, swatch};
use super::retriever_label;
use crate::bench::scoring::scale::{display_decimals, display_max};
use crate::report::bootstrap::Interval;
use crate::report::build::Report;
use crate::report::category::CATEGORY_METRICS;

/// The section, or nothing when no record has a category.
pub fn section(page: &mut String, report: &Report) {
    if report.by_category.is_empty() {
        return;
    }
    // Only history records carry a category.
    let decimals = display_decimals("history");
    page.push_str(
        "<h2 id=\"categories\">By line category</h2>\n<p>Cases mined from history, by the \
         category of their line (Long Code Arena's, in its order of precedence): <i>n</i> counts \
         scored cases; means with 95% intervals.</p>\n<table><thead><tr><th>category</th>\
         <th>retriever</th><th>n</th><th>errors</th><th>em</th><th>es</th><th>chrf</th></tr>\
         </thead><tbody>\n",
    );
    let cells = report.category_cells();
    let value = |v: Option<f64>, ci: Option<Interval>| match v {
        Some(v) => {
            let ci = ci
                .map(|ci| {
                    format!(
                        " <small>[{:.decimals$}, {:.decimals$}]</small>",
                        ci.low, ci.high
                    )
                })
                .unwrap_or_default();
            format!("{v:.decimals$}{ci}")
        }
        None => "–".to_string(),
    };
    for (category, retriever, c) in &cells {
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(category),
            swatch(report, retriever),
            retriever_label(retriever, report.is_upper_bound(retriever)),
            c.n,
            c.errors,
            value(c.em, c.em_ci),
            value(c.es, c.es_ci),
            value(c.chrf, c.chrf_ci)
        );
    }
    page.push_str("</tbody></table>\n<div class=\"charts\">\n");
    let series = super::series(report);
    let mut categories: Vec<&str> = cells.iter().map(|(category, _, _)| *category).collect();
    categories.dedup();
    for metric in CATEGORY_METRICS {
        let groups: Vec<BarGroup> = categories
            .iter()
            .map(|category| BarGroup {
                label: category.to_string(),
                bars: cells
                    .iter()
                    .filter(|(c, _, _)| c == category)
                    .filter_map(|(_, retriever, cell)| {
                        let (value, ci) = match metric {
                            "em" => (cell.em?, cell.em_ci),
                            "es" => (cell.es?, cell.es_ci),
                            _ => (cell.chrf?, cell.chrf_ci),
                        };
                        Some(Bar {
                            series: report.retrievers.iter().position(|r| r == retriever)?,
                            value,
                            ci,
                        })
                    })
                    .collect(),
            })
            .collect();
        let title = format!("by line category: {metric} (mean, 95% CI)");
        page.push_str(&charts::bar_chart(&BarChart {
            id: &format!("category-{metric}"),
            title: &title,
            series: &series,
            groups: &groups,
            max: display_max("history", metric).unwrap_or(100.0),
            decimals,
        }));
        page.push('\n');
    }
    page.push_str("</div>\n");
    if report.category_comparisons.is_empty() {
        return;
    }
    page.push_str(
        "<h3>Pairwise differences by category</h3>\n<table class=\"pairs\"><thead><tr>\
         <th>category</th><th>A</th><th>B</th><th>cases</th><th>excluded</th><th>metric</th>\
         <th>A mean</th><th>B mean</th><th>B − A</th><th>95% CI</th><th>wins / ties / losses</th>\
         </tr></thead><tbody>\n",
    );
    for c in &report.category_comparisons {
        for m in &c.metrics {
            let _ = writeln!(
                page,
                "<tr><td>{}</td>{}</tr>",
                escape(c.category.as_deref().unwrap_or("")),
                super::diff_row(c, m, decimals)
            );
        }
    }
    page.push_str("</tbody></table>\n");
}
