//! The page's "Context sources" section: per composed retriever (`mix:`), what each source gave
//! and the scores by the source the suggestion draws on most, as tables.

use std::fmt::Write;

use super::markup::{escape, swatch};
use super::retriever_label;
use crate::report::build::Report;

/// The section, or nothing when no chunk names a source.
pub fn section(page: &mut String, report: &Report) {
    let rows = report.source_rows();
    if rows.is_empty() {
        return;
    }
    page.push_str(
        "<h2 id=\"sources\">Context sources</h2>\n<p>Per composed retriever, each source's \
         chunks, those the prompt held, its share of the held chunks' tokens, and the mean share \
         of the reference's identifiers its held chunks hold.</p>\n<table><thead><tr>\
         <th>retriever</th><th>source</th><th>chunks</th><th>in prompt</th><th>token share</th>\
         <th>reference overlap</th></tr></thead><tbody>\n",
    );
    let value = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.2}"));
    let label = |retriever: &str| {
        format!(
            "{}{}",
            swatch(report, retriever),
            retriever_label(retriever, report.is_upper_bound(retriever))
        )
    };
    for (retriever, s) in &rows {
        let label = label(retriever);
        for r in &s.sources {
            let _ = writeln!(
                page,
                "<tr><td>{label}</td><td><code>{}</code></td><td>{}</td><td>{}</td>\
                 <td>{:.1}%</td><td>{}</td></tr>",
                escape(&r.source),
                r.chunks,
                r.in_prompt,
                100.0 * r.token_share,
                value(r.reference_overlap)
            );
        }
    }
    page.push_str(
        "</tbody></table>\n<h3>By the source drawn on</h3>\n<p>Scored cases by the source of \
         the held chunk whose identifiers the suggestion shares most (<i>none</i>: no held chunk \
         shares one); EM, ES and chrF as percentages.</p>\n<table><thead><tr><th>retriever</th>\
         <th>drawn on</th><th>n</th><th>em</th><th>es</th><th>chrf</th></tr></thead><tbody>\n",
    );
    for (retriever, s) in &rows {
        let label = label(retriever);
        for g in &s.by_drawn_on {
            let _ = writeln!(
                page,
                "<tr><td>{label}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td></tr>",
                escape(&g.source),
                g.n,
                value(g.em),
                value(g.es),
                value(g.chrf)
            );
        }
    }
    page.push_str("</tbody></table>\n");
}
