//! The markup every part of the report page shares: escaping, the series palette and swatches.

use crate::report::build::Report;

/// Text made safe for HTML element content and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Series colours (Tableau 10), by retriever index.
pub const PALETTE: &[&str] = &[
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// The colour of series `index`.
pub fn color(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// The swatch of retriever `name`'s colour.
pub fn swatch(report: &Report, name: &str) -> String {
    let index = report
        .retrievers
        .iter()
        .position(|r| r == name)
        .unwrap_or(0);
    format!(
        "<span class=\"swatch\" style=\"background:{}\"></span>",
        color(index)
    )
}
