//! The report page's charts, drawn from the same [`Report`] as its tables: the results per
//! format, EM / ES / chrF by line category, chunks by origin, EM and ES by identifier overlap.

use super::charts::{self, Bar, BarChart, BarGroup, LatencyRow, Series};
use crate::bench::scoring::scale::{display_decimals, display_max};
use crate::report::build::Report;
use crate::report::category::CATEGORY_METRICS;
use crate::report::document::groups as keys;
use crate::report::provenance::{OVERLAP_BUCKETS, origin_names};
use crate::report::summary::GroupSummary;

/// The charts drawn after the table `table_id` of the document, if any.
pub fn after_table(page: &mut String, report: &Report, table_id: &str) {
    match table_id {
        "categories" => category_charts(page, report),
        "origins" => origin_chart(page, report),
        "overlap" => overlap_charts(page, report),
        _ => {}
    }
}

/// The charts' series: the run's retrievers, in its order.
pub fn series(report: &Report) -> Vec<Series> {
    report
        .retrievers
        .iter()
        .map(|name| Series {
            name: name.clone(),
            upper_bound: report.is_upper_bound(name),
        })
        .collect()
}

/// The "Charts" section: per format, a bar chart per metric (languages as the groups) and a
/// latency chart per language.
pub fn results_charts(page: &mut String, report: &Report) {
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

/// A bar chart per category metric, categories as the groups.
fn category_charts(page: &mut String, report: &Report) {
    // Only history records carry a category.
    let decimals = display_decimals("history");
    let cells = report.category_cells();
    page.push_str("<div class=\"charts\">\n");
    let series = series(report);
    let mut categories: Vec<&str> = cells.iter().map(|(category, _, _)| *category).collect();
    categories.dedup();
    for metric in CATEGORY_METRICS {
        let groups: Vec<BarGroup> = categories
            .iter()
            .map(|category| BarGroup {
                label: category.to_string(),
                bars: cells
                    .iter()
                    .filter(|(c, _, _)| c == category)
                    .filter_map(|(_, retriever, cell)| {
                        let (value, ci) = match metric {
                            "em" => (cell.em?, cell.em_ci),
                            "es" => (cell.es?, cell.es_ci),
                            _ => (cell.chrf?, cell.chrf_ci),
                        };
                        Some(Bar {
                            series: report.retrievers.iter().position(|r| r == retriever)?,
                            value,
                            ci,
                        })
                    })
                    .collect(),
            })
            .collect();
        let title = format!("by line category: {metric} (mean, 95% CI)");
        page.push_str(&charts::bar_chart(&BarChart {
            id: &format!("category-{metric}"),
            title: &title,
            series: &series,
            groups: &groups,
            max: display_max("history", metric).unwrap_or(100.0),
            decimals,
        }));
        page.push('\n');
    }
    page.push_str("</div>\n");
}

/// The share of each retriever's chunks by origin.
fn origin_chart(page: &mut String, report: &Report) {
    let rows = report.provenance_rows();
    let names = origin_names(&report.provenance);
    let series = series(report);
    let position = |retriever: &str| report.retrievers.iter().position(|r| r == retriever);
    page.push_str("<div class=\"charts\">\n");
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
}

/// EM and ES by identifier overlap bucket.
fn overlap_charts(page: &mut String, report: &Report) {
    let rows = report.provenance_rows();
    let series = series(report);
    let position = |retriever: &str| report.retrievers.iter().position(|r| r == retriever);
    page.push_str("<div class=\"charts\">\n");
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
