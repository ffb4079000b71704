//! Markdown renderings of a run's [`Report`] (its [`document`]) and of a [`RunComparison`], for
//! stdout.

use std::fmt::Write;

use crate::bench::scoring::scale::display_decimals;
use crate::report::build::Report;
use crate::report::compare::{
    ALL_LANGUAGES, CaseChange, Comparison, MetricDiff, Pairing, RunComparison,
};
use crate::report::document::{Cell, Table, bootstrap_sentence, document, retriever_mark};

/// The report as Markdown: its notes, then each section of its [`document`] with its tables.
pub fn report_markdown(report: &Report) -> String {
    let doc = document(report);
    let mut blocks = vec![format!("# Run report: {}", cell(&doc.run))];
    blocks.extend(doc.notes.iter().map(|note| note.text.clone()));
    for section in &doc.sections {
        blocks.push(format!("## {}", section.title));
        blocks.extend(section.intro.clone());
        for table in &section.tables {
            blocks.extend(table.heading.as_ref().map(|h| format!("### {h}")));
            blocks.extend(table.intro.clone());
            blocks.push(table_markdown(table));
        }
    }
    blocks.join("\n\n") + "\n"
}

/// A table: its header, alignment row and rows, one line each.
fn table_markdown(table: &Table) -> String {
    let mut out = String::new();
    let names: Vec<String> = table.columns.iter().map(|c| cell(&c.name)).collect();
    let _ = writeln!(out, "| {} |", names.join(" | "));
    let aligns: Vec<&str> = table
        .columns
        .iter()
        .map(|c| if c.numeric { "---:" } else { "---" })
        .collect();
    let _ = write!(out, "|{}|", aligns.join("|"));
    for row in &table.rows {
        let cells: Vec<String> = row.iter().map(cell_markdown).collect();
        let _ = write!(out, "\n| {} |", cells.join(" | "));
    }
    out
}

/// One cell's text.
fn cell_markdown(c: &Cell) -> String {
    if let Some((shown, aside)) = c.figures() {
        return match aside {
            Some(aside) => format!("{shown} {}", cell(&aside)),
            None => shown,
        };
    }
    match c {
        Cell::Code(text) => code_span(text),
        Cell::Retriever { name, upper_bound } => retriever_cell(name, *upper_bound),
        Cell::Text(text) | Cell::Aside(text) => cell(text),
        _ => String::new(),
    }
}

/// Comparison of two runs as Markdown: a table per group, then the largest changes.
pub fn comparison_markdown(c: &RunComparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Comparison: B − A\n");
    let _ = writeln!(out, "- A: {}\n- B: {}\n", cell(&c.a), cell(&c.b));
    let rule = match &c.pairing {
        Pairing::CaseAndRetriever => "by (case id, retriever)".to_string(),
        Pairing::Case {
            a_retriever,
            b_retriever,
        } => format!(
            "by case id (each run has one retriever: A {}, B {})",
            cell(a_retriever),
            cell(b_retriever)
        ),
    };
    let _ = writeln!(
        out,
        "Paired {rule}: {} shared, {} only in A, {} only in B. Differences are over the pairs both \
         runs scored; wins / ties / losses count pairs where B is higher / equal / lower. {}",
        c.shared,
        c.only_in_a,
        c.only_in_b,
        bootstrap_sentence(&c.bootstrap)
    );
    for g in &c.comparisons {
        let label = if g.a == g.b {
            retriever_cell(&g.a, g.a_upper_bound)
        } else {
            format!(
                "{} → {}",
                retriever_cell(&g.a, g.a_upper_bound),
                retriever_cell(&g.b, g.b_upper_bound)
            )
        };
        let _ = writeln!(
            out,
            "\n## {} · {} · {label}\n\n{} pairs compared, {} excluded for errors.\n",
            g.format,
            language_label(&g.language),
            g.pairs,
            g.excluded
        );
        comparison_table(&mut out, g);
    }
    if !c.changes.is_empty() {
        let _ = writeln!(out, "\n## Largest changes (|ΔES|)\n");
        for (i, change) in c.changes.iter().enumerate() {
            change_item(&mut out, i + 1, change);
        }
    }
    out
}

fn comparison_table(out: &mut String, g: &Comparison) {
    let _ = writeln!(
        out,
        "| metric | A mean | B mean | B − A | 95% CI | wins / ties / losses |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---|---:|");
    for m in &g.metrics {
        let _ = writeln!(out, "| {} |", diff_cells(m, display_decimals(&g.format)));
    }
}

fn change_item(out: &mut String, rank: usize, change: &CaseChange) {
    let retriever = if change.retriever_a == change.retriever_b {
        cell(&change.retriever_a)
    } else {
        format!(
            "{} → {}",
            cell(&change.retriever_a),
            cell(&change.retriever_b)
        )
    };
    let _ = writeln!(
        out,
        "{rank}. {} ({retriever}, {}): es {} → {} ({:+})\n",
        code_span(&change.case_id),
        cell(&change.language),
        change.es_a,
        change.es_b,
        change.delta
    );
    for (label, text) in [
        ("reference", &change.reference),
        ("A", &change.suggestion_a),
        ("B", &change.suggestion_b),
    ] {
        let _ = writeln!(out, "   {label}:\n");
        let fence = fence_for(text);
        let _ = writeln!(out, "   {fence}");
        for line in text.split('\n') {
            let _ = writeln!(out, "   {line}");
        }
        let _ = writeln!(out, "   {fence}\n");
    }
}

/// `name | A mean | B mean | diff | CI | w / t / l` cells of one metric.
fn diff_cells(m: &MetricDiff, decimals: usize) -> String {
    let ci = match m.ci {
        Some(ci) => format!("[{:+.decimals$}, {:+.decimals$}]", ci.low, ci.high),
        None => "–".to_string(),
    };
    format!(
        "{} | {:.decimals$} | {:.decimals$} | {:+.decimals$} | {ci} | {} / {} / {}",
        cell(&m.name),
        m.mean_a,
        m.mean_b,
        m.diff,
        m.wins,
        m.ties,
        m.losses
    )
}

fn language_label(language: &str) -> String {
    if language == ALL_LANGUAGES {
        "all languages".to_string()
    } else {
        cell(language)
    }
}

fn retriever_cell(name: &str, upper_bound: bool) -> String {
    match retriever_mark(name, upper_bound) {
        Some(mark) => format!("{} {mark}", cell(name)),
        None => cell(name),
    }
}

/// Text made safe for one Markdown table cell: no line breaks, `|` and `\` escaped.
pub fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\\' => out.push_str("\\\\"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// An inline code span that survives backticks in `text`.
fn code_span(text: &str) -> String {
    let ticks = "`".repeat(longest_backtick_run(text) + 1);
    // A space on both sides keeps a backtick at either end from joining the fence; Markdown
    // strips it.
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{}{pad}{ticks}", cell(text))
}

/// A code fence longer than any backtick run in `text`.
fn fence_for(text: &str) -> String {
    "`".repeat(longest_backtick_run(text).max(2) + 1)
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::bootstrap::Bootstrap;
    use crate::report::document::{CONTROL, UPPER_BOUND};

    #[test]
    fn controls_and_upper_bounds_are_marked_and_explained() {
        use crate::bench::testdata::record;
        let records: Vec<_> = ["none", "random:bm25:0", "bm25", "oracle"]
            .iter()
            .flat_map(|r| [record("a", r, 0.5), record("b", r, 0.25)])
            .collect();
        let run = crate::bench::runfile::reader::Run {
            path: "run.jsonl".into(),
            records,
            warnings: Vec::new(),
        };
        let report = crate::report::build::build_report(&run, &Bootstrap::default());
        let text = report_markdown(&report);
        for marked in [
            format!("none {CONTROL}"),
            format!("random:bm25:0 {CONTROL}"),
            format!("oracle {UPPER_BOUND}"),
        ] {
            assert!(text.contains(&marked), "{marked} in\n{text}");
        }
        assert!(!text.contains(&format!("bm25 {CONTROL}")), "{text}");
        assert!(text.contains("is a baseline"), "{text}");
    }

    #[test]
    fn line_categories_get_their_section_only_when_records_have_them() {
        use crate::bench::testdata::record;
        let of = |category: &str, case: &str, retriever: &str, score: f64| {
            let mut r = record(case, retriever, score);
            r.format = "history".into();
            r.category = Some(category.into());
            r
        };
        let run = |records| crate::bench::runfile::reader::Run {
            path: "run.jsonl".into(),
            records,
            warnings: Vec::new(),
        };
        let with = run(vec![
            of("random", "a", "none", 0.0),
            of("inproject", "b", "none", 0.0),
            of("random", "a", "bm25", 1.0),
            of("inproject", "b", "bm25", 1.0),
        ]);
        let text = report_markdown(&crate::report::build::build_report(
            &with,
            &Bootstrap::default(),
        ));
        let section = text
            .split("## By line category")
            .nth(1)
            .expect("the section");
        let first_two = |l: &str| l.split(" | ").take(2).collect::<Vec<_>>().join(" | ");
        let cells: Vec<String> = section
            .lines()
            .skip_while(|l| !l.starts_with("| category | retriever | n |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(first_two)
            .collect();
        assert_eq!(
            cells,
            [
                "| inproject | none (control)",
                "| inproject | bm25",
                "| random | none (control)",
                "| random | bm25",
            ],
            "categories in Long Code Arena's order: {section}"
        );
        assert!(
            section.contains(
                "| inproject | none (control) | bm25 | 1 | 0 | em | 0.00 | 100.00 | +100.00 |"
            ),
            "{section}"
        );
        let without = run(vec![record("a", "none", 0.0), record("a", "bm25", 1.0)]);
        let text = report_markdown(&crate::report::build::build_report(
            &without,
            &Bootstrap::default(),
        ));
        assert!(!text.contains("By line category"), "{text}");
    }

    #[test]
    fn cells_and_fences_escape_what_markdown_reads() {
        assert_eq!(cell("a|b\nc\\d"), "a\\|b c\\\\d");
        assert_eq!(cell(""), "");
        assert_eq!(fence_for("x"), "```");
        assert_eq!(fence_for("a ```` b"), "`````");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`a"), "`` `a ``");
        assert_eq!(code_span("python/task_1"), "`python/task_1`");
    }
}
