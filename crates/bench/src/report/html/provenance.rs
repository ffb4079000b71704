//! The page's "Where the context comes from" section: per retriever, the share of its chunks by
//! origin and EM / ES by identifier overlap (CrossCodeEval Fig. 5's form), each as a table and a
//! bar chart.

use std::fmt::Write;

use super::charts::{self, Bar, BarChart, BarGroup};
use super::markup::{escape, swatch};
use super::retriever_label;
use crate::report::build::Report;
use crate::report::provenance::{OVERLAP_BUCKETS, origin_names};

/// The section, or nothing when no record has an origin or an overlap.
pub fn section(page: &mut String, report: &Report) {
    if report.provenance.is_empty() {
        return;
    }
    let rows = report.provenance_rows();
    let names = origin_names(&report.provenance);
    let series = super::series(report);
    let position = |retriever: &str| report.retrievers.iter().position(|r| r == retriever);
    page.push_str(
        "<h2 id=\"provenance\">Where the context comes from</h2>\n<p>The share of each \
         retriever's chunks by origin, relative to the case's file: the file itself \
         (<code>same_file</code>), another file of its folder (<code>same_dir</code>), a file of a \
         module it imports (<code>imported</code>), or elsewhere.</p>\n<table><thead><tr>\
         <th>retriever</th><th>chunks</th>",
    );
    for name in &names {
        let _ = write!(page, "<th>{}</th>", escape(name));
    }
    page.push_str("</tr></thead><tbody>\n");
    for (retriever, p) in &rows {
        let _ = write!(
            page,
            "<tr><td>{}{}</td><td>{}</td>",
            swatch(report, retriever),
            retriever_label(retriever, report.is_upper_bound(retriever)),
            p.chunks
        );
        for name in &names {
            let share = p.origins.get(name).copied().unwrap_or(0.0);
            let _ = write!(page, "<td>{:.1}%</td>", 100.0 * share);
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody></table>\n<div class=\"charts\">\n");
    let groups: Vec<BarGroup> = names
        .iter()
        .map(|name| BarGroup {
            label: name.clone(),
            bars: rows
                .iter()
                .filter(|(_, p)| p.chunks > 0)
                .filter_map(|(retriever, p)| {
                    Some(Bar {
                        series: position(retriever)?,
                        value: 100.0 * p.origins.get(name).copied().unwrap_or(0.0),
                        ci: None,
                    })
                })
                .collect(),
        })
        .collect();
    page.push_str(&charts::bar_chart(&BarChart {
        id: "origins",
        title: "chunks by origin (% of the retriever's)",
        series: &series,
        groups: &groups,
        max: 100.0,
        decimals: 1,
    }));
    page.push_str("\n</div>\n");

    page.push_str(
        "<h3>By identifier overlap</h3>\n<p>Scored cases by the share of the reference's distinct \
         identifiers (CrossCodeEval's) that some retrieved chunk holds; EM and ES as percentages. \
         <i>Unmeasured</i>: nothing retrieved, or no identifier in the reference.</p>\n\
         <table><thead><tr><th>retriever</th><th>overlap</th><th>n</th><th>em</th><th>es</th>\
         </tr></thead><tbody>\n",
    );
    let value = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.2}"));
    for (retriever, p) in &rows {
        let label = format!(
            "{}{}",
            swatch(report, retriever),
            retriever_label(retriever, report.is_upper_bound(retriever))
        );
        for b in &p.by_overlap {
            let _ = writeln!(
                page,
                "<tr><td>{label}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&b.bucket),
                b.n,
                value(b.em),
                value(b.es)
            );
        }
        let _ = writeln!(
            page,
            "<tr><td>{label}</td><td><i>unmeasured</i></td><td>{}</td><td>–</td><td>–</td></tr>",
            p.unmeasured
        );
    }
    page.push_str("</tbody></table>\n<div class=\"charts\">\n");
    for metric in ["em", "es"] {
        let groups: Vec<BarGroup> = OVERLAP_BUCKETS
            .iter()
            .enumerate()
            .map(|(i, bucket)| BarGroup {
                label: bucket.to_string(),
                bars: rows
                    .iter()
                    .filter_map(|(retriever, p)| {
                        let b = p.by_overlap.get(i)?;
                        let value = if metric == "em" { b.em } else { b.es };
                        Some(Bar {
                            series: position(retriever)?,
                            value: value?,
                            ci: None,
                        })
                    })
                    .collect(),
            })
            .collect();
        let title = format!("{metric} by identifier overlap (mean, %)");
        page.push_str(&charts::bar_chart(&BarChart {
            id: &format!("overlap-{metric}"),
            title: &title,
            series: &series,
            groups: &groups,
            max: 100.0,
            decimals: 2,
        }));
        page.push('\n');
    }
    page.push_str("</div>\n");
}
