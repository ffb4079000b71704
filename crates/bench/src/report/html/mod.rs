//! The HTML report: one self-contained page (inline CSS, inline SVG charts, a few lines of
//! inline script for filtering; nothing fetched) with the report's [`document`] — its notes and
//! sections, each table in HTML ([`tables`]) with its charts after it ([`figures`]) — then the
//! per-case drill-down ([`drilldown`]).

use std::fmt::Write;

mod charts;
mod drilldown;
mod figures;
mod markup;
mod tables;

pub use markup::escape;
use tables::prose;

use crate::bench::runfile::reader::Run;
use crate::report::build::Report;
use crate::report::document::document;

/// The whole page for `report`, built from `run`.
pub fn render_html(run: &Run, report: &Report) -> String {
    let doc = document(report);
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>crossfile run report: {}</title><style>{CSS}</style></head><body>\n",
        escape(&doc.run)
    );
    let _ = writeln!(
        page,
        "<h1>Run report: <code>{}</code></h1>",
        escape(&doc.run)
    );
    for note in &doc.notes {
        let class = if note.warning { "warning" } else { "note" };
        let _ = writeln!(page, "<p class=\"{class}\">{}</p>", prose(&note.text));
    }
    let mut nav: Vec<String> = doc
        .sections
        .iter()
        .map(|s| format!("<a href=\"#{}\">{}</a>", s.id, escape(&s.title)))
        .collect();
    // The charts follow the results; the cases close the page.
    nav.insert(
        1.min(nav.len()),
        "<a href=\"#charts\">Charts</a>".to_string(),
    );
    nav.push("<a href=\"#cases\">Cases</a>".to_string());
    let _ = writeln!(page, "<nav>{}</nav>", nav.join(" · "));
    for section in &doc.sections {
        let _ = writeln!(
            page,
            "<h2 id=\"{}\">{}</h2>",
            section.id,
            escape(&section.title)
        );
        if let Some(intro) = &section.intro {
            let _ = writeln!(page, "<p>{}</p>", prose(intro));
        }
        for table in &section.tables {
            tables::table(&mut page, report, table);
            figures::after_table(&mut page, report, table.id);
        }
        if section.id == "results" {
            figures::results_charts(&mut page, report);
        }
    }
    drilldown::cases(&mut page, run, report);
    let _ = write!(page, "<script>{SCRIPT}</script>\n</body></html>\n");
    page
}

pub(crate) const CSS: &str = "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;\
padding:0 1em;color:#222}h1{font-size:1.4em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}th,td{border:1px solid #ddd;\
padding:.25em .5em;text-align:right}th.t,td.t{text-align:left}td small{display:block}\
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
