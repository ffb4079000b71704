//! The HTML report's per-case drill-down: for each case, each retriever's suggestion diffed
//! against the reference, its chunks and its prompt, in collapsed `<details>` so hundreds of
//! cases stay usable.

use std::fmt::Write;

use super::markup::{color, escape, swatch};
use super::tables::retriever_label;
use crate::bench::runfile::reader::Run;
use crate::bench::runfile::record::RunRecord;
use crate::bench::scoring::scale::{display_decimals, display_value, sort_metrics};
use crate::report::build::Report;
use crate::report::textdiff::{DiffOp, diff};

/// The most cases the page holds (each carries its prompts, so a page of all 10,000 cases of a
/// large run would be too heavy for a browser); the rest are named as left out.
pub const MAX_CASES: usize = 2_000;

/// Appends the cases section: a filter, then one collapsed `<details>` per case in run order.
pub fn cases(page: &mut String, run: &Run, report: &Report) {
    let mut order: Vec<&str> = Vec::new();
    let mut by_case: std::collections::HashMap<&str, Vec<&RunRecord>> =
        std::collections::HashMap::new();
    for record in &run.records {
        let entry = by_case.entry(&record.case_id).or_default();
        if entry.is_empty() {
            order.push(&record.case_id);
        }
        entry.push(record);
    }
    let _ = writeln!(
        page,
        "<h2 id=\"cases\">Cases</h2>\n<p>Each retriever's suggestion against the reference: \
         <del>in the reference, missing from the suggestion</del> · <ins>in the suggestion, not in \
         the reference</ins>. Open a case for its chunks and prompts.</p>\n\
         <div class=\"filters\"><label>Filter <input id=\"filter\" type=\"search\" \
         placeholder=\"case id, language or path\"></label> <label><input id=\"differs\" \
         type=\"checkbox\"> only cases where the retrievers' suggestions differ</label> \
         <span id=\"shown\">{} cases</span></div>",
        order.len()
    );
    if order.len() > MAX_CASES {
        let _ = writeln!(
            page,
            "<p class=\"warning\">Showing the first {MAX_CASES} of {} cases, in run order; the \
             others are in the run file.</p>",
            order.len()
        );
    }
    for case_id in order.into_iter().take(MAX_CASES) {
        let mut records = by_case.remove(case_id).unwrap_or_default();
        records.sort_by_key(|r| report.retrievers.iter().position(|n| *n == r.retriever));
        case(page, report, &records);
    }
}

fn case(page: &mut String, report: &Report, records: &[&RunRecord]) {
    let Some(first) = records.first() else {
        return;
    };
    let scored: Vec<&&RunRecord> = records.iter().filter(|r| r.error.is_none()).collect();
    let differs = scored.iter().any(|r| r.suggestion != scored[0].suggestion);
    let key = format!(
        "{} {} {}/{}",
        first.case_id, first.language, first.repository, first.path
    )
    .to_lowercase();
    let _ = write!(
        page,
        "<details class=\"case\" data-key=\"{}\" data-differs=\"{}\"><summary><code>{}</code> \
         · {} · <code>{}:{}</code>",
        escape(&key),
        u8::from(differs),
        escape(&first.case_id),
        escape(&first.language),
        escape(&first.path),
        first.line + 1
    );
    for record in records {
        let index = report
            .retrievers
            .iter()
            .position(|r| *r == record.retriever)
            .unwrap_or(0);
        let chip = match (&record.error, display_value(record, "es")) {
            (Some(error), _) => format!(
                "<span class=\"chip err\" title=\"{}\">{}: error</span>",
                escape(&error.message),
                escape(&record.retriever)
            ),
            (None, Some(es)) => format!(
                "<span class=\"chip\" style=\"background:{}\">{}: es {:.d$}</span>",
                color(index),
                escape(&record.retriever),
                es,
                d = if record.format == "repoeval" { 3 } else { 0 }
            ),
            (None, None) => format!(
                "<span class=\"chip\" style=\"background:{}\">{}</span>",
                color(index),
                escape(&record.retriever)
            ),
        };
        page.push_str(&chip);
    }
    page.push_str("</summary>\n");
    let _ = writeln!(
        page,
        "<div class=\"rec\"><h4>reference</h4><pre>{}</pre></div>",
        escape(&first.reference)
    );
    let mut shown_prompts: Vec<(&str, &str)> = Vec::new();
    for record in records {
        retriever_record(page, report, record, &mut shown_prompts);
    }
    page.push_str("</details>\n");
}

fn retriever_record<'a>(
    page: &mut String,
    report: &Report,
    record: &'a RunRecord,
    shown_prompts: &mut Vec<(&'a str, &'a str)>,
) {
    let mut names: Vec<String> = record.metrics.keys().cloned().collect();
    sort_metrics(&mut names);
    let decimals = display_decimals(&record.format);
    let metrics: Vec<String> = names
        .iter()
        .filter_map(|n| Some(format!("{n} {:.decimals$}", display_value(record, n)?)))
        .collect();
    let _ = write!(
        page,
        "<div class=\"rec\"><h4>{}{} — {} · {:.0} ms</h4>",
        swatch(report, &record.retriever),
        retriever_label(&record.retriever, record.upper_bound),
        escape(&metrics.join(" · ")),
        record.timings_ms.total
    );
    if let Some(error) = &record.error {
        let _ = write!(
            page,
            "<p class=\"error\">error ({}): {}</p>",
            escape(&error.kind),
            escape(&error.message)
        );
    } else {
        page.push_str("<pre class=\"diff\">");
        for op in diff(&record.reference, &record.suggestion) {
            match op {
                DiffOp::Equal(t) => page.push_str(&escape(t)),
                DiffOp::Delete(t) => {
                    let _ = write!(page, "<del>{}</del>", escape(t));
                }
                DiffOp::Insert(t) => {
                    let _ = write!(page, "<ins>{}</ins>", escape(t));
                }
            }
        }
        page.push_str("</pre>");
        if record.raw_suggestion != record.suggestion {
            let _ = write!(
                page,
                "<details><summary>raw suggestion (before post-processing)</summary><pre>{}</pre></details>",
                escape(&record.raw_suggestion)
            );
        }
    }
    write_samples(page, record);
    if record.chunks.is_empty() {
        page.push_str("<p><small>no chunks</small></p>");
    } else {
        page.push_str("<ol class=\"chunks\">");
        for chunk in &record.chunks {
            // A case's own context names files, not lines.
            let lines = match (chunk.start_line, chunk.end_line) {
                (Some(start), Some(end)) => format!(":{start}-{end}"),
                _ => String::new(),
            };
            let origin = chunk
                .origin
                .as_deref()
                .map(|o| format!(" · {}", escape(o)))
                .unwrap_or_default();
            let _ = write!(
                page,
                "<li><code>{}{lines}</code> score {:.4}{origin}</li>",
                escape(&chunk.path),
                chunk.score
            );
        }
        page.push_str("</ol>");
    }
    let t = &record.prompt_tokens;
    let same = shown_prompts
        .iter()
        .find(|(prompt, _)| *prompt == record.prompt)
        .map(|(_, retriever)| *retriever);
    match same {
        Some(other) => {
            let _ = write!(
                page,
                "<p><small>prompt: the same as {}'s ({} tokens)</small></p>",
                escape(other),
                t.total
            );
        }
        None => {
            let _ = write!(
                page,
                "<details><summary>prompt ({} tokens: cross-file {}, left {}, right {})</summary>\
                 <pre>{}</pre></details>",
                t.total,
                t.crossfile,
                t.left,
                t.right,
                escape(&record.prompt)
            );
            shown_prompts.push((&record.prompt, &record.retriever));
        }
    }
    page.push_str("</div>\n");
}

/// An execution-based record's samples: each one's outcome, first failing test and recall, and
/// the failing test's output; the bodies past the first (which the diff above shows).
fn write_samples(page: &mut String, record: &RunRecord) {
    if record.samples.is_empty() {
        return;
    }
    page.push_str(
        "<table class=\"samples\"><tr><th>sample</th><th>tests</th><th>first failing test</th>\
         <th>recall</th><th>s</th></tr>",
    );
    for (i, sample) in record.samples.iter().enumerate() {
        let outcome = &sample.outcome;
        let _ = write!(
            page,
            "<tr><td>{}</td><td class=\"{}\">{}</td><td><code>{}</code></td><td>{}</td><td>{:.1}</td></tr>",
            i + 1,
            outcome.status.name(),
            outcome.status.name(),
            escape(outcome.first_failure.as_deref().unwrap_or("–")),
            sample.recall.map_or("–".to_string(), |r| format!("{r:.2}")),
            outcome.secs
        );
    }
    page.push_str("</table>");
    for (i, sample) in record.samples.iter().enumerate() {
        let outcome = &sample.outcome;
        if let Some(message) = &outcome.message {
            let _ = write!(
                page,
                "<p class=\"error\">sample {}: {}</p>",
                i + 1,
                escape(message)
            );
        }
        if let Some(failed) = outcome.tests.iter().find(|t| t.status.name() != "pass") {
            let _ = write!(
                page,
                "<details><summary>sample {}: <code>{}</code> ({}) output</summary><pre>{}</pre></details>",
                i + 1,
                escape(&failed.id),
                failed.status.name(),
                escape(&failed.tail)
            );
        }
        if i > 0 {
            let _ = write!(
                page,
                "<details><summary>sample {} body</summary><pre>{}</pre></details>",
                i + 1,
                escape(&sample.suggestion)
            );
        }
    }
}
