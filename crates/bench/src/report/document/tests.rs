//! Tests of the report's document: both renderings show its tables alike.

use super::*;
use crate::bench::runfile::reader::Run;
use crate::bench::testdata::{errored, record};
use crate::report::build::build_report;
use crate::report::markdown::report_markdown;
use crate::report::render_html;

/// The rows of every Markdown table, cell by cell, code spans' backticks dropped.
fn markdown_rows(markdown: &str) -> Vec<Vec<String>> {
    markdown
        .lines()
        .filter(|line| line.starts_with("| "))
        .map(|line| {
            let inner = line.trim_start_matches("| ").trim_end_matches(" |");
            inner.split(" | ").map(|c| c.replace('`', "")).collect()
        })
        .collect()
}

/// The rows of every HTML table, cell by cell, as text (tags dropped, entities read).
fn html_rows(html: &str) -> Vec<Vec<String>> {
    let text = |markup: &str| {
        let mut out = String::new();
        let mut in_tag = false;
        for c in markup.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&")
    };
    html.split("<tr>")
        .skip(1)
        .map(|row| {
            let row = &row[..row.find("</tr>").unwrap_or(row.len())];
            row.split("</t")
                .filter_map(|part| {
                    let open = part.rfind("<td").max(part.rfind("<th"))?;
                    let cell = &part[open..];
                    Some(text(&cell[cell.find('>')? + 1..]))
                })
                .collect()
        })
        .collect()
}

/// Both renderings show the document's tables with the same cells: the report's numbers are
/// decided once.
#[test]
fn markdown_and_html_render_the_same_tables() {
    let mut records = Vec::new();
    for (case, category) in [("a", "random"), ("b", "inproject"), ("c", "committed")] {
        for (retriever, score) in [("none", 0.0), ("bm25", 1.0), ("oracle", 1.0)] {
            let mut r = record(case, retriever, score);
            r.format = "history".into();
            r.category = Some(category.into());
            r.overlap = Some(0.5);
            for chunk in &mut r.chunks {
                chunk.origin = Some("imported".into());
                chunk.source = Some("bm25".into());
                chunk.tokens = Some(3);
            }
            records.push(r);
        }
    }
    let mut broken = errored("d", "bm25");
    broken.format = "history".into();
    records.push(broken);
    let run = Run {
        path: "run.jsonl".into(),
        records,
        warnings: vec!["a torn last line".into()],
    };
    let report = build_report(&run, &Bootstrap::default());
    let markdown = report_markdown(&report);
    let html = render_html(&run, &report);
    let drilldown = html.find("id=\"cases\"").expect("the cases");
    let rows = markdown_rows(&markdown);
    assert_eq!(rows, html_rows(&html[..drilldown]));
    let doc = document(&report);
    // A column is right-aligned when its cells are figures, whatever its name.
    let summary = &doc.sections[0].tables[0];
    let aligned: Vec<(&str, bool)> = summary
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.numeric))
        .take(4)
        .collect();
    assert_eq!(
        aligned,
        [
            ("retriever", false),
            ("cases", true),
            ("errors", true),
            ("em", true)
        ]
    );
    assert!(markdown.contains("| retriever | cases | errors | em |"));
    assert!(markdown.contains("|---|---:|---:|---:|"));
    let tables: usize = doc.sections.iter().map(|s| s.tables.len()).sum();
    let table_rows: usize = doc
        .sections
        .iter()
        .flat_map(|s| &s.tables)
        .map(|t| t.rows.len() + 1)
        .sum();
    assert_eq!(rows.len(), table_rows, "every row of the {tables} tables");
    for id in ["results", "pairwise", "categories", "provenance", "sources"] {
        assert!(doc.sections.iter().any(|s| s.id == id), "{id}");
        assert!(html.contains(&format!("<h2 id=\"{id}\">")), "{id}");
    }
    for section in &doc.sections {
        assert!(markdown.contains(&format!("\n## {}\n", section.title)));
    }
    for shown in ["oracle (upper bound)", "none (control)", "1 (backend 1)"] {
        assert!(
            rows.iter().flatten().any(|c| c.contains(shown)),
            "{shown} in {rows:?}"
        );
    }
    assert!(html.contains("<p class=\"warning\">Warning: a torn last line</p>"));
}
