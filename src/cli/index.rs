//! `crossfile index ROOT`: build or update the index ahead of time and say what it holds.

use anyhow::Context;
use serde_json::json;

use crossfile_engine::config::Settings;
use crossfile_engine::index::Index;

use super::args::IndexArgs;
use super::progress::index_bar;

pub fn run(args: &IndexArgs) -> anyhow::Result<()> {
    let settings = Settings::load_with(&args.root, args.index.options())?;
    let (index, report) = Index::open_or_build(&args.root, &settings.index, &index_bar())
        .with_context(|| format!("indexing {}", args.root.display()))?;
    let snapshot = index.snapshot();
    let chunks = snapshot.chunk_count(settings.index.bm25_chunker);
    let bytes = index.size_on_disk();
    for skipped in &report.skipped {
        tracing::info!(path = %skipped.path.display(), reason = ?skipped.reason, "skipped");
    }
    if args.json {
        return super::print_json(&json!({
            "root": index.root(),
            "index_dir": index.dir(),
            "files": snapshot.len(),
            "chunks": chunks,
            "chunker": settings.index.bm25_chunker.to_string(),
            "cceval_chunks": snapshot.files().map(|f| f.cceval.len()).sum::<usize>(),
            "added": report.added,
            "updated": report.updated,
            "removed": report.removed,
            "unchanged": report.unchanged,
            "skipped": report.skipped.len(),
            "seconds": report.seconds,
            "index_bytes": bytes,
        }));
    }
    let kind = settings.index.bm25_chunker;
    #[expect(clippy::print_stdout, reason = "the command's result")]
    {
        println!(
            "{} files, {chunks} {kind} chunks in {:.2} s ({} added, {} updated, {} removed, {} unchanged, {} skipped)",
            snapshot.len(),
            report.seconds,
            report.added,
            report.updated,
            report.removed,
            report.unchanged,
            report.skipped.len()
        );
        println!(
            "index: {} ({:.1} MB)",
            index.dir().display(),
            bytes as f64 / 1e6
        );
    }
    Ok(())
}
