//! The HTML report: one self-contained page (inline CSS, inline SVG charts, a few lines of
//! inline script for filtering; nothing fetched) with the report's tables, charts, the results
//! by line category of cases mined from history ([`categories`]), where the retrieved context
//! comes from ([`provenance`]) and the per-case drill-down.

use std::fmt::Write;

mod categories;
mod charts;
mod drilldown;
mod markup;
mod provenance;
mod sources;

pub use markup::escape;
use markup::swatch;

use crate::report::compare::{ALL_LANGUAGES, Comparison, MetricDiff};
use charts::{Bar, BarChart, BarGroup, LatencyRow, Series};

use crate::bench::runfile::reader::Run;
use crate::bench::scoring::scale::{display_decimals, display_max};
use crate::report::build::Report;
use crate::report::markdown::{CONTROL, UPPER_BOUND};
use crate::report::summary::GroupSummary;
use crate::report::summary::is_control;

/// The whole page for `report`, built from `run`.
pub fn render_html(run: &Run, report: &Report) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>crossfile run report: {}</title><style>{CSS}</style></head><body>\n",
        escape(&report.run)
    );
    let _ = write!(
        page,
        "<h1>Run report: <code>{}</code></h1>\n<p>{} records; retrievers: {}. Means are over scored \
         cases; cases with an error are counted and left out. {:.0}% intervals: percentile \
         bootstrap of the mean, {} resamples, seed {}. Latency percentiles are nearest-rank, over \
         scored cases.</p>\n",
        escape(&report.run),
        report.records,
        escape(&report.retrievers.join(", ")),
        report.bootstrap.confidence * 100.0,
        report.bootstrap.resamples,
        report.bootstrap.seed
    );
    if report.retrievers.iter().any(|r| report.is_upper_bound(r)) {
        let _ = writeln!(
            page,
            "<p class=\"note\">Retrievers marked <span class=\"ub\">{UPPER_BOUND}</span> see the \
             reference (<code>oracle</code>): they bound what retrieval could give, they are not a \
             result. Their bars are hatched.</p>"
        );
    }
    if report.retrievers.iter().any(|r| is_control(r)) {
        let _ = writeln!(
            page,
            "<p class=\"note\">Retrievers marked <span class=\"ub\">{CONTROL}</span> are \
             baselines: no cross-file context (<code>none</code>), or as many chunks as another \
             retriever returns drawn at random from other files (<code>random:</code>).</p>"
        );
    }
    for scale in &report.scales {
        let _ = writeln!(page, "<p class=\"note\">Scale — {}.</p>", escape(scale));
    }
    for warning in &report.warnings {
        let _ = writeln!(page, "<p class=\"warning\">{}</p>", escape(warning));
    }
    let by_category = if report.by_category.is_empty() {
        ""
    } else {
        " · <a href=\"#categories\">By category</a>"
    };
    let provenance = if report.provenance.is_empty() {
        ""
    } else {
        " · <a href=\"#provenance\">Context</a>"
    };
    let sources = if report.sources.is_empty() {
        ""
    } else {
        " · <a href=\"#sources\">Sources</a>"
    };
    let _ = writeln!(
        page,
        "<nav><a href=\"#results\">Results</a> · <a href=\"#charts\">Charts</a> · \
         <a href=\"#pairwise\">Pairwise</a>{by_category}{provenance}{sources} · \
         <a href=\"#cases\">Cases</a></nav>",
    );
    results(&mut page, report);
    charts_section(&mut page, report);
    pairwise(&mut page, report);
    categories::section(&mut page, report);
    provenance::section(&mut page, report);
    sources::section(&mut page, report);
    drilldown::cases(&mut page, run, report);
    let _ = write!(page, "<script>{SCRIPT}</script>\n</body></html>\n");
    page
}

fn retriever_label(name: &str, upper_bound: bool) -> String {
    if upper_bound {
        format!("{} <span class=\"ub\">{UPPER_BOUND}</span>", escape(name))
    } else if is_control(name) {
        format!("{} <span class=\"ub\">{CONTROL}</span>", escape(name))
    } else {
        escape(name)
    }
}

/// (format, language) pairs in first-appearance order of `items`.
fn keys<'a>(items: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<(&'a str, &'a str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for key in items {
        if !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

fn results(page: &mut String, report: &Report) {
    page.push_str("<h2 id=\"results\">Results</h2>\n");
    let groups = keys(
        report
            .summaries
            .iter()
            .map(|s| (s.format.as_str(), s.language.as_str())),
    );
    for (format, language) in groups {
        let rows: Vec<&GroupSummary> = report
            .summaries
            .iter()
            .filter(|s| s.format == format && s.language == language)
            .collect();
        let mut metrics: Vec<&str> = Vec::new();
        for m in rows.iter().flat_map(|r| &r.metrics) {
            if !metrics.contains(&m.name.as_str()) {
                metrics.push(&m.name);
            }
        }
        let decimals = display_decimals(format);
        let _ = write!(
            page,
            "<h3>{} · {}</h3>\n<table><thead><tr><th>retriever</th><th>cases</th><th>errors</th>",
            escape(format),
            escape(language)
        );
        for m in &metrics {
            let _ = write!(page, "<th>{}</th>", escape(m));
        }
        page.push_str(
            "<th>total p50 ms</th><th>total p95 ms</th><th>generate p50 ms</th>\
                       <th>generate p95 ms</th></tr></thead><tbody>\n",
        );
        for row in rows {
            let errors = if row.errors == 0 {
                "0".to_string()
            } else {
                let kinds: Vec<String> = row
                    .error_kinds
                    .iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect();
                format!(
                    "{} <small>({})</small>",
                    row.errors,
                    escape(&kinds.join(", "))
                )
            };
            let _ = write!(
                page,
                "<tr><td>{}{}</td><td>{}</td><td>{errors}</td>",
                swatch(report, &row.retriever),
                retriever_label(&row.retriever, row.upper_bound),
                row.cases
            );
            for name in &metrics {
                match row.metrics.iter().find(|m| m.name == *name) {
                    Some(m) => {
                        let ci =
                            m.ci.map(|ci| {
                                format!(
                                    " <small>[{:.decimals$}, {:.decimals$}]</small>",
                                    ci.low, ci.high
                                )
                            })
                            .unwrap_or_default();
                        let _ = write!(page, "<td>{:.decimals$}{ci}</td>", m.mean);
                    }
                    None => page.push_str("<td>–</td>"),
                }
            }
            let _ = writeln!(
                page,
                "<td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td></tr>",
                row.total_ms.p50, row.total_ms.p95, row.generate_ms.p50, row.generate_ms.p95
            );
        }
        page.push_str("</tbody></table>\n");
    }
}

/// The charts' series: the run's retrievers, in its order.
fn series(report: &Report) -> Vec<Series> {
    report
        .retrievers
        .iter()
        .map(|name| Series {
            name: name.clone(),
            upper_bound: report.is_upper_bound(name),
        })
        .collect()
}

fn charts_section(page: &mut String, report: &Report) {
    page.push_str("<h2 id=\"charts\">Charts</h2>\n");
    let series = series(report);
    let mut formats: Vec<&str> = Vec::new();
    for s in &report.summaries {
        if !formats.contains(&s.format.as_str()) {
            formats.push(&s.format);
        }
    }
    let mut chart_no = 0;
    for format in formats {
        let summaries: Vec<&GroupSummary> = report
            .summaries
            .iter()
            .filter(|s| s.format == format)
            .collect();
        let mut metrics: Vec<&str> = Vec::new();
        for m in summaries.iter().flat_map(|s| &s.metrics) {
            if !metrics.contains(&m.name.as_str()) {
                metrics.push(&m.name);
            }
        }
        let languages = keys(
            summaries
                .iter()
                .map(|s| (s.format.as_str(), s.language.as_str())),
        );
        page.push_str("<div class=\"charts\">\n");
        // Bars grow from 0: a log-probability (at most 0) is read from the tables instead.
        for metric in metrics
            .into_iter()
            .filter(|m| *m != crate::bench::scoring::LOGPROB)
        {
            let groups: Vec<BarGroup> = languages
                .iter()
                .map(|(_, language)| BarGroup {
                    label: language.to_string(),
                    bars: summaries
                        .iter()
                        .filter(|s| s.language == *language)
                        .filter_map(|s| {
                            let m = s.metrics.iter().find(|m| m.name == metric)?;
                            Some(Bar {
                                series: report.retrievers.iter().position(|r| *r == s.retriever)?,
                                value: m.mean,
                                ci: m.ci,
                            })
                        })
                        .collect(),
                })
                .collect();
            let data_max = groups
                .iter()
                .flat_map(|g| &g.bars)
                .map(|b| b.ci.map_or(b.value, |ci| ci.high.max(b.value)))
                .fold(0.0, f64::max);
            chart_no += 1;
            let title = format!("{format}: {metric} (mean, 95% CI)");
            page.push_str(&charts::bar_chart(&BarChart {
                id: &format!("c{chart_no}"),
                title: &title,
                series: &series,
                groups: &groups,
                max: display_max(format, metric).unwrap_or(data_max),
                decimals: display_decimals(format),
            }));
            page.push('\n');
        }
        for (_, language) in &languages {
            let rows: Vec<LatencyRow> = summaries
                .iter()
                .filter(|s| s.language == *language && s.scored > 0)
                .filter_map(|s| {
                    Some(LatencyRow {
                        series: report.retrievers.iter().position(|r| *r == s.retriever)?,
                        total: s.total_ms,
                        generate: s.generate_ms,
                    })
                })
                .collect();
            if !rows.is_empty() {
                let title = format!(
                    "{format} · {language}: latency (box p25–p75, whiskers p5–p95; thin: generate)"
                );
                page.push_str(&charts::latency_chart(&title, &series, &rows));
                page.push('\n');
            }
        }
        page.push_str("</div>\n");
    }
}

fn pairwise(page: &mut String, report: &Report) {
    page.push_str("<h2 id=\"pairwise\">Pairwise differences</h2>\n");
    if report.comparisons.is_empty() {
        page.push_str("<p>One retriever: nothing to compare.</p>\n");
        return;
    }
    page.push_str(
        "<p>B − A over the cases both retrievers scored; wins / ties / losses count \
                   cases where B is higher / equal / lower.</p>\n",
    );
    let groups = keys(
        report
            .comparisons
            .iter()
            .map(|c| (c.format.as_str(), c.language.as_str())),
    );
    for (format, language) in groups {
        let decimals = display_decimals(format);
        let label = if language == ALL_LANGUAGES {
            "all languages"
        } else {
            language
        };
        let _ = writeln!(
            page,
            "<h3>{} · {}</h3>\n<table class=\"pairs\"><thead><tr><th>A</th><th>B</th><th>cases</th><th>excluded</th>\
             <th>metric</th><th>A mean</th><th>B mean</th><th>B − A</th><th>95% CI</th>\
             <th>wins / ties / losses</th></tr></thead><tbody>",
            escape(format),
            escape(label)
        );
        for c in report
            .comparisons
            .iter()
            .filter(|c| c.format == format && c.language == language)
        {
            for m in &c.metrics {
                let _ = writeln!(page, "<tr>{}</tr>", diff_row(c, m, decimals));
            }
        }
        page.push_str("</tbody></table>\n");
    }
}

/// The cells of one metric of comparison `c`: A, B, cases, excluded, the metric, both means,
/// B − A (green or red when its interval excludes 0), the interval, wins / ties / losses.
fn diff_row(c: &Comparison, m: &MetricDiff, decimals: usize) -> String {
    let ci =
        m.ci.map(|ci| format!("[{:+.decimals$}, {:+.decimals$}]", ci.low, ci.high))
            .unwrap_or_else(|| "–".into());
    let sign = if m.ci.is_some_and(|ci| ci.low > 0.0) {
        " class=\"up\""
    } else if m.ci.is_some_and(|ci| ci.high < 0.0) {
        " class=\"down\""
    } else {
        ""
    };
    format!(
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.decimals$}</td>\
         <td>{:.decimals$}</td><td{sign}>{:+.decimals$}</td><td>{ci}</td><td>{} / {} / {}</td>",
        retriever_label(&c.a, c.a_upper_bound),
        retriever_label(&c.b, c.b_upper_bound),
        c.pairs,
        c.excluded,
        escape(&m.name),
        m.mean_a,
        m.mean_b,
        m.diff,
        m.wins,
        m.ties,
        m.losses
    )
}

pub(crate) const CSS: &str = "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;\
padding:0 1em;color:#222}h1{font-size:1.4em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}th,td{border:1px solid #ddd;\
padding:.25em .5em;text-align:right}th:first-child,td:first-child,.pairs th:nth-child(2),.pairs td:nth-child(2),.pairs td:nth-child(5){text-align:left}td small{display:block}\
th{background:#f4f4f4}small{color:#666}.ub{color:#8a5a00;font-style:italic}.note{color:#444}\
.warning{color:#a00}.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.35em;\
border-radius:2px}.charts{display:flex;flex-wrap:wrap;gap:1em}.chart{background:#fff;\
border:1px solid #eee}td.up{color:#070;font-weight:600}td.down{color:#a00;font-weight:600}\
details.case{border:1px solid #ddd;margin:.3em 0;padding:.3em .6em;content-visibility:auto;\
contain-intrinsic-size:auto 2.2em}details.case>summary{cursor:pointer}\
.chip{display:inline-block;padding:0 .4em;margin-left:.3em;border-radius:3px;font-size:.85em;\
color:#fff}.chip.err{background:#a00}pre{white-space:pre-wrap;word-break:break-word;\
background:#f8f8f8;padding:.4em;margin:.3em 0;font-size:.85em}del{background:#fbb;\
text-decoration:line-through}ins{background:#bfb;text-decoration:none}.rec{margin:.6em 0 .6em 1em}\
.rec h4{margin:.2em 0;font-size:.95em}ol.chunks{margin:.2em 0;font-size:.85em}.filters{margin:.5em 0}\
.error{color:#a00}";

const SCRIPT: &str = "(function(){var q=document.getElementById('filter'),\
d=document.getElementById('differs'),n=document.getElementById('shown');if(!q)return;\
function apply(){var t=q.value.toLowerCase(),k=0,cs=document.querySelectorAll('details.case');\
for(var i=0;i<cs.length;i++){var c=cs[i],ok=(!t||c.getAttribute('data-key').indexOf(t)>=0)\
&&(!d.checked||c.getAttribute('data-differs')==='1');c.hidden=!ok;if(ok)k++;}\
n.textContent=k+' of '+cs.length+' cases shown';}q.addEventListener('input',apply);\
d.addEventListener('change',apply);apply();})();";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_table() {
        let rows = [
            ("", ""),
            ("plain", "plain"),
            (
                "<script>alert('x')</script>",
                "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;",
            ),
            ("a && b", "a &amp;&amp; b"),
            ("\"q\"", "&quot;q&quot;"),
            ("ünï 😀", "ünï 😀"),
        ];
        for (text, expected) in rows {
            assert_eq!(escape(text), expected);
        }
    }
}
