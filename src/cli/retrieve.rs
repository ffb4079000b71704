//! `crossfile retrieve ROOT --at FILE:LINE:COL`: rank cross-file chunks for a cursor.

use serde_json::json;

use super::args::RetrieveArgs;
use super::cursor::{AtCursor, Opened, open};

pub fn run(args: &RetrieveArgs) -> anyhow::Result<()> {
    let Opened {
        settings,
        spec,
        retriever,
        at:
            AtCursor {
                query,
                path: rel,
                line,
                col,
            },
        index,
    } = open(&args.cursor, args.options())?;
    let snapshot = index.snapshot();
    let started = std::time::Instant::now();
    let hits = retriever.retrieve(&snapshot, &query, settings.retrieve.top_k)?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    if spec.is_upper_bound() {
        tracing::warn!(
            "`{spec}` sees the reference: its results are an upper bound, not a real retrieval"
        );
    }
    if args.json {
        return super::print_json(&json!({
            "retriever": spec.to_string(),
            "upper_bound": spec.is_upper_bound(),
            "path": rel,
            "line": line,
            "col": col,
            "retrieve_ms": ms,
            "hits": super::hits_json(&hits),
        }));
    }
    let mut out = String::new();
    for (i, h) in hits.iter().enumerate() {
        out.push_str(&format!(
            "{}. {}:{}-{}  score {:.4}\n",
            i + 1,
            h.path,
            h.lines.start + 1,
            h.lines.end,
            h.score
        ));
        for text_line in h.text.lines() {
            out.push_str("    ");
            out.push_str(text_line);
            out.push('\n');
        }
    }
    if hits.is_empty() {
        out.push_str("no hits\n");
    }
    use std::io::Write;
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}
