//! Inline SVG charts for the HTML report, drawn here so the page needs no script or library: a
//! grouped bar chart with interval whiskers and a latency box chart.

use std::fmt::Write;

use super::markup::{color, escape};
use crate::report::bootstrap::Interval;
use crate::report::summary::Quantiles;

/// A series of a chart: a retriever.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub upper_bound: bool,
}

/// One bar: a series' value in a group, with its interval.
#[derive(Clone, Copy, Debug)]
pub struct Bar {
    /// Index into the chart's series.
    pub series: usize,
    pub value: f64,
    pub ci: Option<Interval>,
}

/// Bars sharing an x position: one language.
#[derive(Clone, Debug)]
pub struct BarGroup {
    pub label: String,
    pub bars: Vec<Bar>,
}

/// What a bar chart shows.
#[derive(Clone, Debug)]
pub struct BarChart<'a> {
    /// Unique in the page: it names the chart's hatch pattern.
    pub id: &'a str,
    pub title: &'a str,
    pub series: &'a [Series],
    pub groups: &'a [BarGroup],
    /// The top of the y axis (the metric's scale, or the data's maximum).
    pub max: f64,
    pub decimals: usize,
}

const FONT: &str = "font-family=\"system-ui,sans-serif\" font-size=\"12\"";

/// A grouped bar chart with whiskers from each bar's interval; upper-bound series are hatched.
pub fn bar_chart(chart: &BarChart<'_>) -> String {
    let (left, right, top, bottom) = (48.0, 12.0, 28.0, 52.0);
    let bar_width = 22.0;
    let per_group = chart.series.len().max(1) as f64 * (bar_width + 4.0) + 24.0;
    let width = (left + right + per_group * chart.groups.len().max(1) as f64).max(360.0);
    let height = 260.0;
    let plot_h = height - top - bottom;
    let max = if chart.max > 0.0 { chart.max } else { 1.0 };
    let y = |v: f64| top + plot_h * (1.0 - (v / max).clamp(0.0, 1.0));
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\" aria-label=\"{}\">",
        escape(chart.title)
    );
    svg.push_str(&hatch_pattern(chart.id));
    let _ = write!(
        svg,
        "<text x=\"{left}\" y=\"16\" {FONT} font-weight=\"600\">{}</text>",
        escape(chart.title)
    );
    for tick in ticks(max) {
        let ty = y(tick);
        let _ = write!(
            svg,
            "<path d=\"M{left} {ty:.1} H{:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" {FONT} text-anchor=\"end\">{}</text>",
            width - right,
            left - 6.0,
            ty + 4.0,
            trim_number(tick, chart.decimals)
        );
    }
    for (g, group) in chart.groups.iter().enumerate() {
        let x0 = left + 12.0 + per_group * g as f64;
        for (i, bar) in group.bars.iter().enumerate() {
            let x = x0 + i as f64 * (bar_width + 4.0);
            let series = chart.series.get(bar.series);
            let name = series.map(|s| s.name.as_str()).unwrap_or("");
            let upper = series.is_some_and(|s| s.upper_bound);
            let top_y = y(bar.value);
            let fill = if upper {
                format!("url(#hatch-{})", escape(chart.id))
            } else {
                color(bar.series).to_string()
            };
            let ci_text = bar
                .ci
                .map(|ci| format!(" [{:.d$}, {:.d$}]", ci.low, ci.high, d = chart.decimals))
                .unwrap_or_default();
            let _ = write!(
                svg,
                "<rect x=\"{x:.1}\" y=\"{top_y:.1}\" width=\"{bar_width}\" height=\"{:.1}\" fill=\"{fill}\" \
                 stroke=\"{}\"><title>{}{} · {}: {:.d$}{ci_text}</title></rect>",
                (top + plot_h - top_y).max(0.0),
                color(bar.series),
                escape(name),
                if upper { " (upper bound)" } else { "" },
                escape(&group.label),
                bar.value,
                d = chart.decimals
            );
            if let Some(ci) = bar.ci {
                let cx = x + bar_width / 2.0;
                let (lo, hi) = (y(ci.low), y(ci.high));
                let _ = write!(
                    svg,
                    "<path class=\"whisker\" d=\"M{cx:.1} {lo:.1} V{hi:.1} M{:.1} {lo:.1} H{:.1} M{:.1} {hi:.1} H{:.1}\" \
                     stroke=\"#222\" stroke-width=\"1.5\" fill=\"none\"/>",
                    cx - 5.0,
                    cx + 5.0,
                    cx - 5.0,
                    cx + 5.0
                );
            }
        }
        let label_x = x0 + (group.bars.len() as f64 * (bar_width + 4.0)) / 2.0;
        let _ = write!(
            svg,
            "<text x=\"{label_x:.1}\" y=\"{:.1}\" {FONT} text-anchor=\"middle\">{}</text>",
            top + plot_h + 16.0,
            escape(&group.label)
        );
    }
    let _ = write!(
        svg,
        "<path d=\"M{left} {top} V{:.1} H{:.1}\" stroke=\"#444\" fill=\"none\"/>",
        top + plot_h,
        width - right
    );
    legend(&mut svg, chart, left, height - 14.0);
    svg.push_str("</svg>");
    svg
}

/// One row of a latency chart: a retriever's total and generate times.
#[derive(Clone, Debug)]
pub struct LatencyRow {
    pub series: usize,
    pub total: Quantiles,
    pub generate: Quantiles,
}

/// Horizontal box plots of latency per retriever: whiskers p5–p95, box p25–p75, a line at the
/// median; the thick box is the total time, the thin one below it generation.
pub fn latency_chart(title: &str, series: &[Series], rows: &[LatencyRow]) -> String {
    let (left, right, top) = (150.0, 20.0, 28.0);
    let row_h = 40.0;
    let width = 640.0;
    let plot_w = width - left - right;
    let height = top + row_h * rows.len().max(1) as f64 + 56.0;
    let axis_y = top + row_h * rows.len().max(1) as f64;
    let max = rows
        .iter()
        .map(|r| r.total.p95.max(r.generate.p95))
        .fold(0.0, f64::max);
    let max = if max > 0.0 { max } else { 1.0 };
    let ticks = ticks(max);
    let axis_max = ticks.last().copied().unwrap_or(max).max(max);
    let x = |v: f64| left + plot_w * (v / axis_max).clamp(0.0, 1.0);
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\" aria-label=\"{}\">",
        escape(title)
    );
    let _ = write!(
        svg,
        "<text x=\"8\" y=\"16\" {FONT} font-weight=\"600\">{}</text>",
        escape(title)
    );
    for tick in &ticks {
        let tx = x(*tick);
        let _ = write!(
            svg,
            "<path d=\"M{tx:.1} {top} V{axis_y:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{tx:.1}\" y=\"{:.1}\" {FONT} text-anchor=\"middle\">{}</text>",
            axis_y + 16.0,
            trim_number(*tick, 0)
        );
    }
    let _ = write!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} text-anchor=\"middle\">ms</text>",
        left + plot_w / 2.0,
        axis_y + 32.0
    );
    for (i, row) in rows.iter().enumerate() {
        let ry = top + row_h * i as f64;
        let s = series.get(row.series);
        let name = s.map(|s| s.name.as_str()).unwrap_or("");
        let upper = s.is_some_and(|s| s.upper_bound);
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} text-anchor=\"end\">{}{}</text>",
            left - 8.0,
            ry + 20.0,
            escape(&truncate(name, 18)),
            if upper { " ⬆" } else { "" }
        );
        for (q, (y0, h), opacity, label) in [
            (&row.total, (ry + 6.0, 16.0), "1", "total"),
            (&row.generate, (ry + 25.0, 8.0), "0.5", "generate"),
        ] {
            let mid = y0 + h / 2.0;
            let _ = write!(
                svg,
                "<path d=\"M{:.1} {mid:.1} H{:.1} M{:.1} {y0:.1} v{h} M{:.1} {y0:.1} v{h}\" stroke=\"#222\" fill=\"none\"/>\
                 <rect x=\"{:.1}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{h}\" fill=\"{}\" fill-opacity=\"{opacity}\" \
                 stroke=\"#222\"><title>{} {label}: p5 {:.1}, p25 {:.1}, median {:.1}, p75 {:.1}, p95 {:.1} ms</title></rect>\
                 <path d=\"M{:.1} {y0:.1} v{h}\" stroke=\"#000\" stroke-width=\"2\"/>",
                x(q.p5),
                x(q.p95),
                x(q.p5),
                x(q.p95),
                x(q.p25),
                (x(q.p75) - x(q.p25)).max(1.0),
                color(row.series),
                escape(name),
                q.p5,
                q.p25,
                q.p50,
                q.p75,
                q.p95,
                x(q.p50),
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

fn hatch_pattern(id: &str) -> String {
    format!(
        "<defs><pattern id=\"hatch-{}\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" \
     patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ddd\"/>\
     <path d=\"M0 0 V6\" stroke=\"#777\" stroke-width=\"3\"/></pattern></defs>",
        escape(id)
    )
}

fn legend(svg: &mut String, chart: &BarChart<'_>, left: f64, y: f64) {
    let mut x = left;
    for (i, s) in chart.series.iter().enumerate() {
        let fill = if s.upper_bound {
            format!("url(#hatch-{})", escape(chart.id))
        } else {
            color(i).to_string()
        };
        let label = if s.upper_bound {
            format!("{} (upper bound)", truncate(&s.name, 24))
        } else {
            truncate(&s.name, 24)
        };
        let _ = write!(
            svg,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{fill}\" stroke=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{y:.1}\" {FONT}>{}</text>",
            y - 9.0,
            color(i),
            x + 14.0,
            escape(&label)
        );
        x += 24.0 + 7.0 * label.chars().count() as f64;
    }
}

/// About five round ticks from 0 to at least `max`.
pub fn ticks(max: f64) -> Vec<f64> {
    if !(max.is_finite() && max > 0.0) {
        return vec![0.0];
    }
    let raw = max / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let count = (max / step - 1e-9).ceil() as usize;
    (0..=count).map(|i| i as f64 * step).collect()
}

fn trim_number(v: f64, decimals: usize) -> String {
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(100.0), [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(ticks(1.0), [0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]);
        assert_eq!(ticks(37.0), [0.0, 10.0, 20.0, 30.0, 40.0]);
        assert_eq!(ticks(0.0), [0.0]);
        assert_eq!(ticks(f64::NAN), [0.0]);
    }

    #[test]
    fn labels_are_escaped() {
        let series = [Series {
            name: "<script>&\"".into(),
            upper_bound: true,
        }];
        let groups = [BarGroup {
            label: "py<thon>".into(),
            bars: vec![Bar {
                series: 0,
                value: 50.0,
                ci: Some(Interval {
                    low: 40.0,
                    high: 60.0,
                }),
            }],
        }];
        let svg = bar_chart(&BarChart {
            id: "t",
            title: "em",
            series: &series,
            groups: &groups,
            max: 100.0,
            decimals: 2,
        });
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;&amp;&quot;"));
        assert!(svg.contains("class=\"whisker\""));
        assert!(svg.contains("url(#hatch-t)"));
    }
}
