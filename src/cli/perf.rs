//! `crossfile bench perf ROOT`: index and retrieval performance on a real workspace, and
//! `bm25-cceval` against the reference Python method on the same cursors.
//!
//! Measures, in one run: cold index time (an empty cache dir), one-file re-index time (an
//! unsaved-buffer edit, analysed and committed), retrieval latency p50/p99 per retriever over
//! the same cursors, peak RSS, and per-query time of `scripts/cceval_reference.py` (NLTK 3.8.1 +
//! rank_bm25, rebuilt per query with the script's caps) against `bm25-cceval`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::Context;
use serde_json::json;

use crossfile::config::Settings;
use crossfile::index::{Index, Progress};
use crossfile::lang::Language;
use crossfile::retrieve::{self, Query, RetrieverSpec};
use crossfile::{perf::sample_cursors, report::bootstrap};

use super::args::PerfArgs;

pub fn run(args: &PerfArgs) -> anyhow::Result<()> {
    let cache = tempfile::tempdir()?;
    let mut settings = Settings::load(&args.root)?;
    settings.index.cache_dir = cache.path().to_path_buf();
    if let Some(bytes) = args.max_file_bytes {
        settings.index.workspace.max_file_bytes = bytes;
    }

    let rss_before_mb = peak_rss_kb().map(|kb| kb as f64 / 1024.0);
    let started = Instant::now();
    let (index, _) = Index::open_or_build(&args.root, &settings.index, &Progress::none())?;
    let cold_s = started.elapsed().as_secs_f64();
    // Nothing else has run yet: the peak so far is indexing's.
    let index_rss_mb = peak_rss_kb().map(|kb| kb as f64 / 1024.0);
    let snapshot = index.snapshot();
    let source_mb = snapshot.files().map(|f| f.text.len()).sum::<usize>() as f64 / (1 << 20) as f64;
    let language = main_language(&snapshot).context("the workspace has no source files")?;
    let files = snapshot.len();
    let chunks = snapshot.chunk_count(settings.index.bm25_chunker);
    let index_bytes = index.size_on_disk();
    log(&format!(
        "cold index: {files} files, {chunks} chunks, {cold_s:.2} s"
    ));

    let reindex_ms = reindex_times(&index, language, 20)?;
    let cursors = sample_cursors(&index.snapshot(), language, args.cursors, 7);
    let mut latencies = Vec::new();
    for spec in &args.retrievers {
        let spec: RetrieverSpec = spec.parse()?;
        let retriever = retrieve::build(&spec, &settings.retrieve)?;
        let snapshot = index.snapshot();
        let mut times = Vec::with_capacity(cursors.len());
        for query in &cursors {
            let t = Instant::now();
            let hits = retriever.retrieve(&snapshot, query, settings.retrieve.top_k)?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            std::hint::black_box(hits);
        }
        log(&format!(
            "{spec}: p50 {:.2} ms, p99 {:.2} ms",
            percentile(&times, 50.0),
            percentile(&times, 99.0)
        ));
        latencies.push((spec.to_string(), times));
    }

    let reference = if args.reference_cursors > 0 {
        let n = args.reference_cursors.min(cursors.len());
        let python = reference_times(&args.python, index.root(), language, &cursors[..n])?;
        let ours = latencies
            .iter()
            .find(|(s, _)| s == "bm25-cceval")
            .map(|(_, t)| t[..n].to_vec())
            .context("--retrievers must include bm25-cceval to compare with the reference")?;
        Some((python, ours))
    } else {
        None
    };
    let peak_rss_mb = peak_rss_kb().map(|kb| kb as f64 / 1024.0);

    let retrievers: Vec<_> = latencies
        .iter()
        .map(|(spec, t)| json!({"retriever": spec, "queries": t.len(), "p50_ms": percentile(t, 50.0), "p99_ms": percentile(t, 99.0), "mean_ms": mean(t)}))
        .collect();
    let reference_json = reference.as_ref().map(|(python, ours)| {
        json!({
            "queries": python.len(),
            "python_mean_ms": mean(python), "python_p50_ms": percentile(python, 50.0),
            "crossfile_mean_ms": mean(ours), "crossfile_p50_ms": percentile(ours, 50.0),
            "speedup_mean": mean(python) / mean(ours),
        })
    });
    let report = json!({
        "workspace": index.root(),
        "language": language.name(),
        "files": files,
        "chunks": chunks,
        "index_bytes": index_bytes,
        "cold_index_s": cold_s,
        "source_mb": source_mb,
        "rss_before_index_mb": rss_before_mb,
        "index_peak_rss_mb": index_rss_mb,
        "reindex_one_file_ms": {"edits": reindex_ms.len(), "p50": percentile(&reindex_ms, 50.0), "max": percentile(&reindex_ms, 100.0)},
        "retrieval": retrievers,
        "reference": reference_json,
        "peak_rss_mb": peak_rss_mb,
        "threads": rayon::current_num_threads(),
    });
    if args.json {
        return super::print_json(&report);
    }
    let mut out = String::new();
    out.push_str(&format!(
        "workspace {} ({}): {files} files, {chunks} chunks\n",
        index.root().display(),
        language.name()
    ));
    out.push_str(&format!(
        "cold index            {cold_s:.2} s ({:.1} MB on disk)\n",
        index_bytes as f64 / 1e6
    ));
    if let (Some(before), Some(peak)) = (rss_before_mb, index_rss_mb) {
        out.push_str(&format!(
            "index peak RSS        {peak:.0} MB for {source_mb:.1} MB of source ({:.1} MB per MB \
             above the {before:.0} MB before indexing)\n",
            (peak - before) / source_mb.max(f64::MIN_POSITIVE)
        ));
    }
    out.push_str(&format!(
        "re-index one file     p50 {:.1} ms, max {:.1} ms over {} edits\n",
        percentile(&reindex_ms, 50.0),
        percentile(&reindex_ms, 100.0),
        reindex_ms.len()
    ));
    out.push_str("| retriever | p50 ms | p99 ms |\n|---|---:|---:|\n");
    for (spec, t) in &latencies {
        out.push_str(&format!(
            "| `{spec}` | {:.2} | {:.2} |\n",
            percentile(t, 50.0),
            percentile(t, 99.0)
        ));
    }
    if let Some((python, ours)) = &reference {
        out.push_str(&format!(
            "reference (NLTK 3.8.1 + rank_bm25, per query) {:.1} ms mean vs bm25-cceval {:.3} ms mean over {} queries: {:.0}x\n",
            mean(python),
            mean(ours),
            python.len(),
            mean(python) / mean(ours)
        ));
    }
    if let Some(mb) = peak_rss_mb {
        out.push_str(&format!("peak RSS {mb:.0} MB\n"));
    }
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

fn log(message: &str) {
    tracing::info!("{message}");
}

/// The language with the most files.
fn main_language(snapshot: &crossfile::index::Snapshot) -> Option<Language> {
    let mut counts: Vec<(usize, Language)> = Language::ALL
        .iter()
        .map(|&l| {
            (
                snapshot
                    .files()
                    .filter(|f| f.language.name() == l.name())
                    .count(),
                l,
            )
        })
        .collect();
    counts.sort_by_key(|c| std::cmp::Reverse(c.0));
    counts.first().filter(|(n, _)| *n > 0).map(|&(_, l)| l)
}

/// Re-indexes `n` files as edited buffers (a comment appended), then restores them from disk.
fn reindex_times(index: &Index, language: Language, n: usize) -> anyhow::Result<Vec<f64>> {
    let snapshot = index.snapshot();
    let mut files: Vec<_> = snapshot
        .files()
        .filter(|f| f.language.name() == language.name())
        .collect();
    files.sort_by_key(|f| f.text.len());
    let picked: Vec<_> = files.iter().skip(files.len() / 2).take(n).collect();
    let mut times = Vec::new();
    for file in &picked {
        let edited = format!(
            "{}\n{} edited by crossfile bench perf\n",
            file.text,
            language.comment_prefix()
        );
        let t = Instant::now();
        index.update_text(&file.path, &edited)?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let paths: Vec<&str> = picked.iter().map(|f| f.path.as_str()).collect();
    index.update_files(&paths)?;
    Ok(times)
}

/// Per-query seconds of the Python reference, measured inside Python around its retrieval.
fn reference_times(
    python: &str,
    root: &Path,
    language: Language,
    cursors: &[Query],
) -> anyhow::Result<Vec<f64>> {
    let script = reference_script()?;
    let requests: String = cursors
        .iter()
        .map(|q| {
            json!({"root": root, "file": q.path, "language": language.name(), "prompt": q.left, "top_k": 5, "mode": "ranked"}).to_string() + "\n"
        })
        .collect();
    log(&format!(
        "running the Python reference on {} cursors",
        cursors.len()
    ));
    let mut child = Command::new(python)
        .arg(&script)
        .arg("query")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {python} {}", script.display()))?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let writer = std::thread::spawn(move || stdin.write_all(requests.as_bytes()));
    let output = child.wait_with_output()?;
    writer
        .join()
        .map_err(|_| anyhow::anyhow!("writer thread panicked"))??;
    if !output.status.success() {
        anyhow::bail!(
            "the reference failed (pip install nltk==3.8.1 rank-bm25): {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l)?;
            v["seconds"]
                .as_f64()
                .map(|s| s * 1000.0)
                .context("no seconds in the reference's answer")
        })
        .collect()
}

/// `scripts/cceval_reference.py` beside the binary's source tree, or `$CROSSFILE_REFERENCE`.
fn reference_script() -> anyhow::Result<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("CROSSFILE_REFERENCE") {
        return Ok(p.into());
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/cceval_reference.py");
    anyhow::ensure!(
        p.exists(),
        "{} is missing; set CROSSFILE_REFERENCE",
        p.display()
    );
    Ok(p)
}

/// The nearest-rank percentile, NaN for no values.
fn percentile(values: &[f64], p: f64) -> f64 {
    bootstrap::percentile(values, p).unwrap_or(f64::NAN)
}

fn mean(values: &[f64]) -> f64 {
    bootstrap::mean(values).unwrap_or(f64::NAN)
}

/// Peak resident set size of this process (Linux `VmHWM`).
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
