//! The report's document ([`crate::report::document`]) in HTML: notes, section headings,
//! paragraphs and tables, each cell in its markup (a retriever with its colour's swatch, an
//! interval in small print, a difference coloured when its interval excludes 0).

use std::fmt::Write;

use super::markup::{escape, swatch};
use crate::report::build::Report;
use crate::report::document::{Cell, Table, retriever_mark};

/// Prose with its `code` spans (between backticks) as `<code>`, the rest escaped.
pub fn prose(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{}</code>", escape(part))
            } else {
                escape(part)
            }
        })
        .collect()
}

/// A retriever's name, with its mark when it sees the reference or is a control.
pub fn retriever_label(name: &str, upper_bound: bool) -> String {
    match retriever_mark(name, upper_bound) {
        Some(mark) => format!("{} <span class=\"ub\">{mark}</span>", escape(name)),
        None => escape(name),
    }
}

/// `table`, its heading and sentence first.
pub fn table(page: &mut String, report: &Report, table: &Table) {
    if let Some(heading) = &table.heading {
        let _ = writeln!(page, "<h3>{}</h3>", escape(heading));
    }
    if let Some(intro) = &table.intro {
        let _ = writeln!(page, "<p>{}</p>", prose(intro));
    }
    page.push_str("<table><thead><tr>");
    for column in &table.columns {
        let _ = write!(
            page,
            "<th{}>{}</th>",
            align(column.numeric),
            escape(&column.name)
        );
    }
    page.push_str("</tr></thead><tbody>\n");
    for row in &table.rows {
        page.push_str("<tr>");
        for (cell, column) in row.iter().zip(&table.columns) {
            let _ = write!(page, "{}", cell_html(report, cell, column.numeric));
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</tbody></table>\n");
}

/// Text columns are aligned left; numbers right (the stylesheet's default).
fn align(numeric: bool) -> &'static str {
    if numeric { "" } else { " class=\"t\"" }
}

fn cell_html(report: &Report, cell: &Cell, numeric: bool) -> String {
    if let Cell::Difference { ci, .. } = cell {
        // Coloured when its interval excludes 0.
        let holds = if ci.is_some_and(|ci| ci.low > 0.0) {
            " class=\"up\""
        } else if ci.is_some_and(|ci| ci.high < 0.0) {
            " class=\"down\""
        } else {
            ""
        };
        let shown = cell.figures().map(|(shown, _)| shown).unwrap_or_default();
        return format!("<td{holds}>{shown}</td>");
    }
    let content = match (cell.figures(), cell) {
        (Some((shown, None)), _) => shown,
        (Some((shown, Some(aside))), _) => format!("{shown} <small>{}</small>", escape(&aside)),
        (None, Cell::Code(text)) => format!("<code>{}</code>", escape(text)),
        (None, Cell::Aside(text)) => format!("<i>{}</i>", escape(text)),
        (None, Cell::Retriever { name, upper_bound }) => format!(
            "{}{}",
            swatch(report, name),
            retriever_label(name, *upper_bound)
        ),
        (None, Cell::Text(text)) => escape(text),
        (None, _) => String::new(),
    };
    format!("<td{}>{content}</td>", align(numeric))
}
