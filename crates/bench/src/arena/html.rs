//! The standings as one self-contained HTML page (`bench arena --html`): inline CSS (the run
//! report's) and inline SVG, nothing fetched: the strengths with their intervals as a forest plot,
//! the win-rate matrix as a heat map, position bias, agreement with the reference metrics,
//! latency against preference and the strengths per language.

use std::fmt::Write;

use super::standings::{Share, Standings};
use crate::report::html::{CSS, escape};

const PAGE_CSS: &str = ".heat td{text-align:center;min-width:5em}.dim{color:#888}\
    svg text{font-family:system-ui,sans-serif;font-size:12px}";

/// The page for `s`, titled with `source` (the votes file).
pub fn render_html(s: &Standings, source: &str) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>crossfile arena: {src}</title><style>{CSS}{PAGE_CSS}</style></head><body>\n\
         <h1>Arena: <code>{src}</code></h1>\n<p>{} battles, {} decided (a choice made). \
         Strength: the Bradley–Terry log-strength (natural log), mean 0 over the arms estimated; a \
         difference of 1 is odds of e ≈ 2.7 to 1. {:.0}% intervals: percentile bootstrap over \
         battles, {} resamples, seed {}.</p>\n",
        s.battles,
        s.decided,
        s.bootstrap.confidence * 100.0,
        s.bootstrap.resamples,
        s.bootstrap.seed,
        src = escape(source),
    );
    for warning in &s.warnings {
        let _ = writeln!(page, "<p class=\"warning\">{}</p>", escape(warning));
    }
    ranking(&mut page, s);
    matrix(&mut page, s);
    shares(&mut page, s);
    languages(&mut page, s);
    page.push_str("</body></html>\n");
    page
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn signed(x: Option<f64>) -> String {
    x.map_or("—".into(), |x| format!("{x:+.3}"))
}

/// The ranking: a forest plot of strengths and intervals, then the table.
fn ranking(page: &mut String, s: &Standings) {
    page.push_str("<h2 id=\"ranking\">Ranking</h2>\n");
    page.push_str(&forest_plot(s));
    page.push_str(
        "<table><tr><th>arm</th><th>strength</th><th>interval</th><th>wins</th>\
         <th>losses</th><th>battles</th><th>no choice</th></tr>\n",
    );
    for arm in &s.arms {
        let _ = writeln!(
            page,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td></tr>",
            escape(&arm.arm),
            signed(arm.strength),
            arm.ci
                .map_or("—".into(), |[lo, hi]| format!("[{lo:+.3}, {hi:+.3}]")),
            arm.wins,
            arm.losses,
            arm.battles,
            arm.no_choice.map_or("—".into(), pct),
        );
    }
    page.push_str("</table>\n");
}

/// One row per arm: a dot at its strength, a whisker over its interval, a line at 0.
fn forest_plot(s: &Standings) -> String {
    let (label_w, plot_w, row_h, top) = (300.0, 420.0, 26.0, 24.0);
    let mut lo: f64 = -0.5;
    let mut hi: f64 = 0.5;
    for arm in &s.arms {
        for v in arm.strength.into_iter().chain(arm.ci.into_iter().flatten()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    let span = (hi - lo).max(1e-9);
    let x = |v: f64| label_w + plot_w * (v - lo) / span;
    let height = top + row_h * s.arms.len() as f64 + 28.0;
    let mut svg = format!(
        "<svg role=\"img\" aria-label=\"strengths with intervals\" width=\"{}\" height=\"{height}\" \
         viewBox=\"0 0 {} {height}\">",
        label_w + plot_w + 20.0,
        label_w + plot_w + 20.0
    );
    let zero = x(0.0);
    let _ = write!(
        svg,
        "<line x1=\"{zero:.1}\" y1=\"{}\" x2=\"{zero:.1}\" y2=\"{:.1}\" stroke=\"#bbb\" \
         stroke-dasharray=\"4 3\"/><text x=\"{zero:.1}\" y=\"14\" text-anchor=\"middle\">0</text>",
        top - 6.0,
        height - 22.0
    );
    for tick in [lo, hi] {
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" class=\"dim\">{tick:+.2}</text>",
            x(tick),
            height - 6.0
        );
    }
    for (i, arm) in s.arms.iter().enumerate() {
        let y = top + row_h * (i as f64 + 0.5);
        let name: String = arm.arm.chars().take(44).collect();
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            label_w - 10.0,
            y + 4.0,
            escape(&name)
        );
        if let Some([a, b]) = arm.ci {
            let _ = write!(
                svg,
                "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#4c78a8\" \
                 stroke-width=\"2\"/>",
                x(a),
                x(b)
            );
        }
        match arm.strength {
            Some(v) => {
                let _ = write!(
                    svg,
                    "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"#4c78a8\"><title>{} {v:+.3}\
                     </title></circle>",
                    x(v),
                    escape(&arm.arm)
                );
            }
            None => {
                let _ = write!(
                    svg,
                    "<text x=\"{:.1}\" y=\"{:.1}\" class=\"dim\">no finite estimate ({} wins of {} \
                     battles)</text>",
                    label_w + 4.0,
                    y + 4.0,
                    arm.wins,
                    arm.battles
                );
            }
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// The win-rate matrix in the ranking's order, each cell shaded by the row arm's win rate.
fn matrix(page: &mut String, s: &Standings) {
    let m = &s.win_matrix;
    let order = s.matrix_order();
    page.push_str(
        "<h2 id=\"matrix\">Win rates</h2>\n<p>The share of decided battles between two arms the \
         row's arm won (and how many were decided).</p>\n<table class=\"heat\"><tr><th></th>",
    );
    for &j in &order {
        let _ = write!(page, "<th><code>{}</code></th>", escape(&m.arms[j]));
    }
    page.push_str("</tr>\n");
    for &i in &order {
        let _ = write!(page, "<tr><th><code>{}</code></th>", escape(&m.arms[i]));
        for &j in &order {
            match m.rate[i][j] {
                Some(rate) => {
                    // Blue above one half, orange below, white at it.
                    let (r, g, b) = if rate >= 0.5 {
                        let t = (rate - 0.5) * 2.0;
                        (255.0 - 179.0 * t, 255.0 - 135.0 * t, 255.0 - 87.0 * t)
                    } else {
                        let t = (0.5 - rate) * 2.0;
                        (255.0 - 10.0 * t, 255.0 - 103.0 * t, 255.0 - 215.0 * t)
                    };
                    let _ = write!(
                        page,
                        "<td style=\"background:rgb({r:.0},{g:.0},{b:.0})\">{} <span \
                         class=\"dim\">({})</span></td>",
                        pct(rate),
                        m.decided[i][j]
                    );
                }
                None => page.push_str("<td class=\"dim\">—</td>"),
            }
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</table>\n");
}

/// Position bias, agreement with the reference metrics and latency, each a share with its
/// interval and a bar.
fn shares(page: &mut String, s: &Standings) {
    page.push_str(
        "<h2 id=\"bias\">Position, reference metrics, latency</h2>\n<table><tr><th></th>\
         <th>share</th><th>interval</th><th>of</th><th></th></tr>\n",
    );
    let pass = (
        "at executed cases, the choice passed its tests and the other did not",
        &s.agreement.pass_at_1,
    );
    let rows: [(&str, &Share); 4] = [
        (
            "the suggestion shown first was chosen (50% = no position bias)",
            &s.first_share,
        ),
        (
            "at replayed cases, the choice had the higher ES",
            &s.agreement.es,
        ),
        (
            "at replayed cases, the choice was the exact match",
            &s.agreement.em,
        ),
        (
            "the choice was the faster suggestion",
            &s.latency.chosen_faster,
        ),
    ];
    let executed = (pass.1.n > 0).then_some(pass);
    for (label, share) in rows.into_iter().chain(executed) {
        let bar = share.value.map_or(String::new(), |v| {
            let whisker = share.ci.map_or(String::new(), |[lo, hi]| {
                format!(
                    "<line x1=\"{:.1}\" y1=\"7\" x2=\"{:.1}\" y2=\"7\" stroke=\"#333\"/>",
                    lo * 200.0,
                    hi * 200.0
                )
            });
            format!(
                "<svg width=\"204\" height=\"14\" role=\"img\" aria-label=\"{}\"><rect x=\"0\" \
                 y=\"2\" width=\"200\" height=\"10\" fill=\"#eee\"/><rect x=\"0\" y=\"2\" \
                 width=\"{:.1}\" height=\"10\" fill=\"#4c78a8\"/><line x1=\"100\" y1=\"0\" \
                 x2=\"100\" y2=\"14\" stroke=\"#999\"/>{whisker}</svg>",
                pct(v),
                v * 200.0
            )
        });
        let _ = writeln!(
            page,
            "<tr><td>{label}</td><td>{}</td><td>{}</td><td>{}</td><td>{bar}</td></tr>",
            share.value.map_or("—".into(), pct),
            share.ci.map_or("—".into(), |[lo, hi]| format!(
                "[{}, {}]",
                pct(lo),
                pct(hi)
            )),
            share.n,
        );
    }
    page.push_str("</table>\n");
    if let (Some(chosen), Some(other)) = (s.latency.chosen_mean_ms, s.latency.other_mean_ms) {
        let _ = writeln!(
            page,
            "<p>Mean latency of the suggestion chosen {chosen:.0} ms, of the other {other:.0} \
             ms.</p>"
        );
    }
}

/// The strengths fitted on each language's battles alone.
fn languages(page: &mut String, s: &Standings) {
    if s.languages.is_empty() {
        return;
    }
    let arms: Vec<&str> = s.arms.iter().map(|a| a.arm.as_str()).collect();
    page.push_str(
        "<h2 id=\"languages\">By language</h2>\n<table><tr><th>language</th><th>battles</th>\
         <th>decided</th>",
    );
    for arm in &arms {
        let _ = write!(page, "<th><code>{}</code></th>", escape(arm));
    }
    page.push_str("</tr>\n");
    for language in &s.languages {
        let _ = write!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td>",
            escape(&language.language),
            language.battles,
            language.decided
        );
        for arm in &arms {
            let _ = write!(
                page,
                "<td>{}</td>",
                signed(language.strengths.get(*arm).copied().flatten())
            );
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::standings;
    use crate::arena::vote::tests::battle;
    use crate::report::bootstrap::Bootstrap;

    #[test]
    fn the_page_ranks_the_arms_and_escapes_their_names_and_fetches_nothing() {
        let mut votes = Vec::new();
        for i in 0..30 {
            votes.push(battle(
                "bm25",
                "<none>",
                (i % 2) as u8,
                Some(u8::from(i % 3 == 0)),
            ));
        }
        let s = standings(
            &votes,
            Bootstrap {
                resamples: 50,
                ..Bootstrap::default()
            },
        );
        let page = render_html(&s, "votes & more.jsonl");
        assert!(page.contains("votes &amp; more.jsonl"));
        assert!(page.contains("&lt;none&gt;") && !page.contains("<none>"));
        assert!(page.contains("<circle"), "a strength is plotted");
        assert!(page.contains("class=\"heat\""));
        let first = page.find("<td><code>bm25</code>").expect("bm25's row");
        let second = page
            .find("<td><code>&lt;none&gt;</code>")
            .expect("none's row");
        assert!(
            (first < second) == (s.arms[0].arm == "bm25"),
            "rows in the ranking's order"
        );
        for remote in ["http://", "https://", "src=", "<link", "@import"] {
            assert!(!page.contains(remote), "the page fetches nothing: {remote}");
        }
    }
}
