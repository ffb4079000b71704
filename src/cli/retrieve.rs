//! `crossfile retrieve ROOT --at FILE:LINE:COL`: rank cross-file chunks for a cursor.

use anyhow::Context;
use serde_json::json;

use crossfile::config::Settings;
use crossfile::index::Index;
use crossfile::retrieve;

use super::args::RetrieveArgs;
use super::cursor::{AtCursor, query_at};
use super::progress::index_bar;

pub fn run(args: &RetrieveArgs) -> anyhow::Result<()> {
    let settings = Settings::load_with(&args.root, args.options())?;
    let spec = settings.retrieve.retriever.clone();
    let retriever = retrieve::build(&spec, &settings.retrieve)?;
    let AtCursor {
        query,
        path: rel,
        line,
        col,
    } = query_at(&args.root, &args.at, &settings, args.reference.clone())?;

    let (index, _) = Index::open_or_build(&args.root, &settings.index, &index_bar())
        .with_context(|| format!("indexing {}", args.root.display()))?;
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
