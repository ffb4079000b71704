//! The Markdown sections on the context: where each retriever's chunks come from, and what each
//! source of a composed context gave.

use std::fmt::Write;

use super::retriever_cell;
use crate::report::build::Report;
use crate::report::provenance::origin_names;

/// Where each retriever's chunks come from, and EM and ES by identifier overlap; nothing for a
/// run whose records predate them.
pub(super) fn provenance_section(out: &mut String, report: &Report) {
    if report.provenance.is_empty() {
        return;
    }
    let names = origin_names(&report.provenance);
    let _ = writeln!(
        out,
        "\n## Where the context comes from\n\n\
         Per retriever, the share of its retrieved chunks by origin, relative to the case's file: \
         the file itself (`same_file`), another file of its folder (`same_dir`), a file of a \
         module it imports (`imported`), or elsewhere. Then the scored cases by identifier \
         overlap (the share of the reference's distinct identifiers some retrieved chunk \
         holds), with EM and ES as percentages.\n"
    );
    let _ = writeln!(out, "| retriever | chunks | {} |", names.join(" | "));
    let _ = writeln!(out, "|---|---:|{}", "---:|".repeat(names.len()));
    let rows = report.provenance_rows();
    for (retriever, p) in &rows {
        let shares: Vec<String> = names
            .iter()
            .map(|n| format!("{:.1}%", 100.0 * p.origins.get(n).copied().unwrap_or(0.0)))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            retriever_cell(retriever, report.is_upper_bound(retriever)),
            p.chunks,
            shares.join(" | ")
        );
    }
    let _ = writeln!(
        out,
        "\n| retriever | overlap | n | em | es |\n|---|---|---:|---:|---:|"
    );
    let value = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.2}"));
    for (retriever, p) in &rows {
        let name = retriever_cell(retriever, report.is_upper_bound(retriever));
        for b in &p.by_overlap {
            let (n, em, es) = (b.n, value(b.em), value(b.es));
            let _ = writeln!(out, "| {name} | {} | {n} | {em} | {es} |", b.bucket);
        }
        let _ = writeln!(out, "| {name} | unmeasured | {} | – | – |", p.unmeasured);
    }
}

/// What each source of a composed context gave; nothing when no chunk names a source.
pub(super) fn sources_section(out: &mut String, report: &Report) {
    let rows = report.source_rows();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n## Context sources\n\n\
         Per composed retriever (`mix:`), each source's chunks, those the prompt held, its share \
         of the held chunks' tokens, and the mean share of the reference's identifiers its held \
         chunks hold. Then the scored cases by the source of the held chunk whose identifiers \
         the suggestion shares most (`none`: no held chunk shares one), EM, ES and chrF as \
         percentages.\n"
    );
    let value = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.2}"));
    let _ = writeln!(
        out,
        "| retriever | source | chunks | in prompt | token share | reference overlap |\n\
         |---|---|---:|---:|---:|---:|"
    );
    for (retriever, s) in &rows {
        let name = retriever_cell(retriever, report.is_upper_bound(retriever));
        for r in &s.sources {
            let _ = writeln!(
                out,
                "| {name} | `{}` | {} | {} | {:.1}% | {} |",
                r.source,
                r.chunks,
                r.in_prompt,
                100.0 * r.token_share,
                value(r.reference_overlap)
            );
        }
    }
    let _ = writeln!(
        out,
        "\n| retriever | drawn on | n | em | es | chrf |\n|---|---|---:|---:|---:|---:|"
    );
    for (retriever, s) in &rows {
        let name = retriever_cell(retriever, report.is_upper_bound(retriever));
        for g in &s.by_drawn_on {
            let _ = writeln!(
                out,
                "| {name} | `{}` | {} | {} | {} | {} |",
                g.source,
                g.n,
                value(g.em),
                value(g.es),
                value(g.chrf)
            );
        }
    }
}
