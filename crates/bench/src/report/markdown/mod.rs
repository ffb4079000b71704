//! Markdown renderings of a run's [`Report`] and of a [`RunComparison`], for stdout.

mod context;

use std::fmt::Write;

use crate::bench::scoring::scale::display_decimals;
use crate::report::bootstrap::{Bootstrap, Interval};
use crate::report::build::Report;
use crate::report::compare::{
    ALL_LANGUAGES, CaseChange, Comparison, MetricDiff, Pairing, RunComparison,
};
use crate::report::summary::{GroupSummary, is_control};

/// The label an upper-bound retriever gets in every table.
pub const UPPER_BOUND: &str = "(upper bound)";
/// How a control (no context, random context) is marked.
pub const CONTROL: &str = "(control)";

/// The report as Markdown: a table per (format, language), then the pairwise differences, then
/// (cases mined from history) EM and ES by line category, then where the context comes from.
pub fn report_markdown(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Run report: {}\n", cell(&report.run));
    let _ = writeln!(
        out,
        "{} records, retrievers: {}. Means are over scored cases; cases with an error are \
         counted in `errors` and left out. Latencies are over scored cases, nearest-rank \
         percentiles. {}",
        report.records,
        report.retrievers.join(", "),
        bootstrap_sentence(&report.bootstrap)
    );
    if report.retrievers.iter().any(|r| report.is_upper_bound(r)) {
        let _ = writeln!(
            out,
            "\nA retriever marked {UPPER_BOUND} sees the reference (`oracle`): its numbers bound \
             what retrieval could give, they are not a result."
        );
    }
    if report.retrievers.iter().any(|r| is_control(r)) {
        let _ = writeln!(
            out,
            "\nA retriever marked {CONTROL} is a baseline: no cross-file context (`none`), or as \
             many chunks as another retriever returns drawn at random from other files \
             (`random:`); read a retriever against it."
        );
    }
    for scale in &report.scales {
        let _ = writeln!(out, "\nScale — {scale}.");
    }
    for warning in &report.warnings {
        let _ = writeln!(out, "\nWarning: {}", cell(warning));
    }
    let mut keys: Vec<(&str, &str)> = report
        .summaries
        .iter()
        .map(|s| (s.format.as_str(), s.language.as_str()))
        .collect();
    keys.dedup();
    for (format, language) in keys {
        let rows: Vec<&GroupSummary> = report
            .summaries
            .iter()
            .filter(|s| s.format == format && s.language == language)
            .collect();
        let _ = writeln!(out, "\n## {format} · {language}\n");
        summary_table(&mut out, &rows);
    }
    if !report.comparisons.is_empty() {
        let _ = writeln!(
            out,
            "\n## Pairwise differences (B − A, over the cases both scored)\n\n\
             Wins / ties / losses count cases where B is higher / equal / lower."
        );
        let mut keys: Vec<(&str, &str)> = report
            .comparisons
            .iter()
            .map(|c| (c.format.as_str(), c.language.as_str()))
            .collect();
        keys.dedup();
        for (format, language) in keys {
            let _ = writeln!(out, "\n### {format} · {}\n", language_label(language));
            let _ = writeln!(
                out,
                "| A | B | cases | excluded | metric | A mean | B mean | B − A | 95% CI | wins / ties / losses |"
            );
            let _ = writeln!(out, "|---|---|---:|---:|---|---:|---:|---:|---|---:|");
            for c in report
                .comparisons
                .iter()
                .filter(|c| c.format == format && c.language == language)
            {
                for m in &c.metrics {
                    let _ = writeln!(
                        out,
                        "| {} | {} | {} | {} | {} |",
                        retriever_cell(&c.a, c.a_upper_bound),
                        retriever_cell(&c.b, c.b_upper_bound),
                        c.pairs,
                        c.excluded,
                        diff_cells(m, display_decimals(format)),
                    );
                }
            }
        }
    }
    categories_section(&mut out, report);
    context::provenance_section(&mut out, report);
    context::sources_section(&mut out, report);
    out
}

/// EM, ES and chrF by line category (cases mined from history), per retriever, then every two
/// retrievers within each category; nothing when no record has a category.
fn categories_section(out: &mut String, report: &Report) {
    if report.by_category.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n## By line category\n\n\
         Cases mined from history, by the category of their line (Long Code Arena's, in its \
         order of precedence): `n` counts scored cases, means in the cases' scale with 95% \
         intervals.\n"
    );
    let _ = writeln!(
        out,
        "| category | retriever | n | errors | em | em 95% CI | es | es 95% CI | chrf | chrf 95% CI |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---|---:|---|---:|---|");
    // Only history records carry a category.
    let decimals = display_decimals("history");
    let value = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.decimals$}"));
    let interval = |ci: Option<Interval>| {
        ci.map_or("–".to_string(), |ci| {
            format!("[{:.decimals$}, {:.decimals$}]", ci.low, ci.high)
        })
    };
    for (category, retriever, c) in report.category_cells() {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(category),
            retriever_cell(retriever, report.is_upper_bound(retriever)),
            c.n,
            c.errors,
            value(c.em),
            interval(c.em_ci),
            value(c.es),
            interval(c.es_ci),
            value(c.chrf),
            interval(c.chrf_ci)
        );
    }
    if report.category_comparisons.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n### Pairwise differences by category (B − A, over the cases both scored)\n"
    );
    let _ = writeln!(
        out,
        "| category | A | B | cases | excluded | metric | A mean | B mean | B − A | 95% CI | wins / ties / losses |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|---|---:|---:|---:|---|---:|");
    for c in &report.category_comparisons {
        for m in &c.metrics {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                cell(c.category.as_deref().unwrap_or("")),
                retriever_cell(&c.a, c.a_upper_bound),
                retriever_cell(&c.b, c.b_upper_bound),
                c.pairs,
                c.excluded,
                diff_cells(m, display_decimals(&c.format)),
            );
        }
    }
}

fn summary_table(out: &mut String, rows: &[&GroupSummary]) {
    let mut metrics: Vec<&str> = Vec::new();
    for row in rows {
        for m in &row.metrics {
            if !metrics.contains(&m.name.as_str()) {
                metrics.push(&m.name);
            }
        }
    }
    let _ = write!(out, "| retriever | cases | errors |");
    for m in &metrics {
        let _ = write!(out, " {m} |");
    }
    let _ = writeln!(
        out,
        " total p50 ms | total p95 ms | generate p50 ms | generate p95 ms |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|{}---:|---:|---:|---:|",
        "---:|".repeat(metrics.len())
    );
    for row in rows {
        let decimals = display_decimals(&row.format);
        let _ = write!(
            out,
            "| {} | {} | {} |",
            retriever_cell(&row.retriever, row.upper_bound),
            row.cases,
            row.errors
        );
        for name in &metrics {
            match row.metrics.iter().find(|m| m.name == *name) {
                Some(m) => {
                    let _ = write!(out, " {:.decimals$} |", m.mean);
                }
                None => out.push_str(" – |"),
            }
        }
        let _ = writeln!(
            out,
            " {:.1} | {:.1} | {:.1} | {:.1} |",
            row.total_ms.p50, row.total_ms.p95, row.generate_ms.p50, row.generate_ms.p95
        );
    }
    let errors: Vec<String> = rows
        .iter()
        .filter(|r| r.errors > 0)
        .map(|r| {
            let kinds: Vec<String> = r
                .error_kinds
                .iter()
                .map(|(kind, n)| format!("{kind} {n}"))
                .collect();
            format!("{}: {}", cell(&r.retriever), kinds.join(", "))
        })
        .collect();
    if !errors.is_empty() {
        let _ = writeln!(out, "\nErrors by kind — {}.", errors.join("; "));
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

fn bootstrap_sentence(b: &Bootstrap) -> String {
    format!(
        "{:.0}% intervals: percentile bootstrap of the mean, {} resamples, seed {}.",
        b.confidence * 100.0,
        b.resamples,
        b.seed
    )
}

fn language_label(language: &str) -> String {
    if language == ALL_LANGUAGES {
        "all languages".to_string()
    } else {
        cell(language)
    }
}

pub(super) fn retriever_cell(name: &str, upper_bound: bool) -> String {
    if upper_bound {
        format!("{} {UPPER_BOUND}", cell(name))
    } else if is_control(name) {
        format!("{} {CONTROL}", cell(name))
    } else {
        cell(name)
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
