//! `crossfile bench perf ROOT`: prints what [`crossfile_bench::perf::measure_retrieval`] measured.

use std::io::Write;

use crossfile_bench::perf::{RetrievalParams, measure_retrieval};
use crossfile_engine::config::Settings;
use crossfile_engine::retrieve::RetrieverSpec;

use super::super::args::PerfArgs;

pub fn run(args: &PerfArgs) -> anyhow::Result<()> {
    let mut settings = Settings::load(&args.root)?;
    if let Some(bytes) = args.max_file_bytes {
        settings.index.workspace.max_file_bytes = bytes;
    }
    let retrievers = args
        .retrievers
        .iter()
        .map(|spec| spec.parse::<RetrieverSpec>())
        .collect::<Result<Vec<_>, _>>()?;
    let report = measure_retrieval(&RetrievalParams {
        root: args.root.clone(),
        settings,
        retrievers,
        cursors: args.cursors,
        reference_cursors: args.reference_cursors,
        python: args.python.clone(),
    })?;
    if args.json {
        return super::super::print_json(&serde_json::to_value(&report)?);
    }
    let (files, chunks, source_mb) = (report.files, report.chunks, report.source_mb);
    let mut out = String::new();
    out.push_str(&format!(
        "workspace {} ({}): {files} files, {chunks} chunks\n",
        report.workspace.display(),
        report.language
    ));
    out.push_str(&format!(
        "cold index            {:.2} s ({:.1} MB on disk)\n",
        report.cold_index_s,
        report.index_bytes as f64 / 1e6
    ));
    if let (Some(before), Some(peak)) = (report.rss_before_index_mb, report.index_peak_rss_mb) {
        out.push_str(&format!(
            "index peak RSS        {peak:.0} MB for {source_mb:.1} MB of source ({:.1} MB per MB \
             above the {before:.0} MB before indexing)\n",
            (peak - before) / source_mb.max(f64::MIN_POSITIVE)
        ));
    }
    let reindex = &report.reindex_one_file_ms;
    out.push_str(&format!(
        "re-index one file     p50 {:.1} ms, max {:.1} ms over {} edits\n",
        reindex.p50, reindex.max, reindex.edits
    ));
    out.push_str("| retriever | p50 ms | p99 ms |\n|---|---:|---:|\n");
    for r in &report.retrieval {
        out.push_str(&format!(
            "| `{}` | {:.2} | {:.2} |\n",
            r.retriever, r.p50_ms, r.p99_ms
        ));
    }
    if let Some(reference) = &report.reference {
        out.push_str(&format!(
            "reference (NLTK 3.8.1 + rank_bm25, per query) {:.1} ms mean vs bm25-cceval {:.3} ms mean over {} queries: {:.0}x\n",
            reference.python_mean_ms,
            reference.crossfile_mean_ms,
            reference.queries,
            reference.speedup_mean
        ));
    }
    if let Some(mb) = report.peak_rss_mb {
        out.push_str(&format!("peak RSS {mb:.0} MB\n"));
    }
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}
