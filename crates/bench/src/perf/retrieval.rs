//! `bench perf`: index and retrieval performance on a real workspace, and `bm25-cceval` against
//! the reference Python method on the same cursors.
//!
//! Measures, in one run: cold index time (an empty cache dir), one-file re-index time (an
//! unsaved-buffer edit, analysed and committed), retrieval latency p50/p99 per retriever over
//! the same cursors, peak RSS, and per-query time of `scripts/cceval_reference.py` (NLTK 3.8.1 +
//! rank_bm25, rebuilt per query with the script's caps) against `bm25-cceval`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::json;

use super::{PerfError, mean, percentile, sample_cursors};
use crossfile_engine::config::Settings;
use crossfile_engine::index::{Index, Progress, Snapshot};
use crossfile_engine::lang::Language;
use crossfile_engine::memory::ProcessMemory;
use crossfile_engine::retrieve::{self, Hit, Query, RING_CHUNKS, RING_LINES, RetrieverSpec, Ring};
use crossfile_engine::workspace::centred;

/// What to measure.
#[derive(Clone, Debug)]
pub struct RetrievalParams {
    /// The workspace root.
    pub root: PathBuf,
    /// The workspace's settings; the index goes to a fresh temporary cache dir whatever they say.
    pub settings: Settings,
    /// Retrievers to time.
    pub retrievers: Vec<RetrieverSpec>,
    /// Cursors per retriever.
    pub cursors: usize,
    /// Cursors for the Python reference comparison (0 skips it).
    pub reference_cursors: usize,
    /// The Python that has nltk 3.8.1 and rank-bm25.
    pub python: String,
}

/// What `bench perf` measured (`--json` prints it).
#[derive(Clone, Debug, Serialize)]
pub struct RetrievalReport {
    pub workspace: PathBuf,
    pub language: String,
    pub files: usize,
    pub chunks: usize,
    pub index_bytes: u64,
    pub cold_index_s: f64,
    pub source_mb: f64,
    /// Peak RSS (MiB) before indexing, and after it (nothing else has run yet: indexing's peak).
    pub rss_before_index_mb: Option<f64>,
    pub index_peak_rss_mb: Option<f64>,
    pub reindex_one_file_ms: Reindex,
    pub retrieval: Vec<RetrieverLatency>,
    pub reference: Option<ReferenceComparison>,
    pub peak_rss_mb: Option<f64>,
    pub threads: usize,
}

/// One-file re-index times.
#[derive(Clone, Debug, Serialize)]
pub struct Reindex {
    pub edits: usize,
    pub p50: f64,
    pub max: f64,
}

/// One retriever's latency over the cursors.
#[derive(Clone, Debug, Serialize)]
pub struct RetrieverLatency {
    pub retriever: String,
    pub queries: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub mean_ms: f64,
}

/// The Python reference against `bm25-cceval` on the same cursors.
#[derive(Clone, Debug, Serialize)]
pub struct ReferenceComparison {
    pub queries: usize,
    pub python_mean_ms: f64,
    pub python_p50_ms: f64,
    pub crossfile_mean_ms: f64,
    pub crossfile_p50_ms: f64,
    pub speedup_mean: f64,
}

/// Indexes `params.root` cold, re-indexes edited files, times each retriever and the reference.
pub fn measure_retrieval(params: &RetrievalParams) -> Result<RetrievalReport, PerfError> {
    let cache = tempfile::tempdir().map_err(PerfError::io("a temporary cache dir"))?;
    let mut settings = params.settings.clone();
    settings.index.cache_dir = cache.path().to_path_buf();

    let rss_before_mb = peak_rss_mib();
    let started = Instant::now();
    let (index, _) = Index::open_or_build(&params.root, &settings.index, &Progress::none())?;
    let cold_s = started.elapsed().as_secs_f64();
    let index_rss_mb = peak_rss_mib();
    let snapshot = index.snapshot();
    let source_mb = snapshot.files().map(|f| f.text.len()).sum::<usize>() as f64 / (1 << 20) as f64;
    let language = main_language(&snapshot)
        .ok_or_else(|| PerfError::Unmeasurable("the workspace has no source files".into()))?;
    let files = snapshot.len();
    let chunks = snapshot.chunk_count(settings.index.bm25_chunker);
    tracing::info!("cold index: {files} files, {chunks} chunks, {cold_s:.2} s");

    let reindex_ms = reindex_times(&index, language, 20)?;
    let mut cursors = sample_cursors(&index.snapshot(), language, params.cursors, 7);
    let ring = full_ring(&cursors);
    for query in &mut cursors {
        query.recent = Arc::clone(&ring);
    }
    let mut latencies = Vec::new();
    for spec in &params.retrievers {
        let retriever = retrieve::build(spec, &settings.retrieve)?;
        let snapshot = index.snapshot();
        let mut times = Vec::with_capacity(cursors.len());
        for query in &cursors {
            let t = Instant::now();
            let hits = retriever.retrieve(&snapshot, query, settings.retrieve.top_k)?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            std::hint::black_box(hits);
        }
        tracing::info!(
            "{spec}: p50 {:.2} ms, p99 {:.2} ms",
            percentile(&times, 50.0),
            percentile(&times, 99.0)
        );
        latencies.push((spec.to_string(), times));
    }

    let reference = if params.reference_cursors > 0 {
        let n = params.reference_cursors.min(cursors.len());
        let python = reference_times(&params.python, index.root(), language, &cursors[..n])?;
        let ours = latencies
            .iter()
            .find(|(s, _)| s == "bm25-cceval")
            .map(|(_, t)| t[..n].to_vec())
            .ok_or_else(|| {
                PerfError::Unmeasurable(
                    "--retrievers must include bm25-cceval to compare with the reference".into(),
                )
            })?;
        Some(ReferenceComparison {
            queries: python.len(),
            python_mean_ms: mean(&python),
            python_p50_ms: percentile(&python, 50.0),
            crossfile_mean_ms: mean(&ours),
            crossfile_p50_ms: percentile(&ours, 50.0),
            speedup_mean: mean(&python) / mean(&ours),
        })
    } else {
        None
    };
    Ok(RetrievalReport {
        workspace: index.root().to_path_buf(),
        language: language.name().to_string(),
        files,
        chunks,
        index_bytes: index.size_on_disk(),
        cold_index_s: cold_s,
        source_mb,
        rss_before_index_mb: rss_before_mb,
        index_peak_rss_mb: index_rss_mb,
        reindex_one_file_ms: Reindex {
            edits: reindex_ms.len(),
            p50: percentile(&reindex_ms, 50.0),
            max: percentile(&reindex_ms, 100.0),
        },
        retrieval: latencies
            .iter()
            .map(|(spec, t)| RetrieverLatency {
                retriever: spec.clone(),
                queries: t.len(),
                p50_ms: percentile(t, 50.0),
                p99_ms: percentile(t, 99.0),
                mean_ms: mean(t),
            })
            .collect(),
        reference,
        peak_rss_mb: peak_rss_mib(),
        threads: rayon::current_num_threads(),
    })
}

/// This process's resident peak so far, in MiB.
fn peak_rss_mib() -> Option<f64> {
    ProcessMemory::own().ok().map(|m| m.hwm_kb as f64 / 1024.0)
}

/// The language with the most files.
fn main_language(snapshot: &Snapshot) -> Option<Language> {
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
fn reindex_times(index: &Index, language: Language, n: usize) -> Result<Vec<f64>, PerfError> {
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

/// Per-query milliseconds of the Python reference, measured inside Python around its retrieval.
fn reference_times(
    python: &str,
    root: &Path,
    language: Language,
    cursors: &[Query],
) -> Result<Vec<f64>, PerfError> {
    let script = reference_script()?;
    let requests: String = cursors
        .iter()
        .map(|q| {
            json!({"root": root, "file": q.path, "language": language.name(), "prompt": q.left, "top_k": 5, "mode": "ranked"}).to_string() + "\n"
        })
        .collect();
    tracing::info!("running the Python reference on {} cursors", cursors.len());
    let mut child = Command::new(python)
        .arg(&script)
        .arg("query")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(PerfError::io(format!(
            "starting {python} {}",
            script.display()
        )))?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| PerfError::Unmeasurable("the reference's stdin is not piped".into()))?;
    let writer = std::thread::spawn(move || stdin.write_all(requests.as_bytes()));
    let output = child
        .wait_with_output()
        .map_err(PerfError::io("running the reference"))?;
    writer
        .join()
        .map_err(|_| PerfError::Unmeasurable("the reference's writer thread panicked".into()))?
        .map_err(PerfError::io("writing to the reference"))?;
    if !output.status.success() {
        return Err(PerfError::Unmeasurable(format!(
            "the reference failed (pip install nltk==3.8.1 rank-bm25): {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .ok()
                .and_then(|v| v["seconds"].as_f64())
                .map(|s| s * 1000.0)
                .ok_or_else(|| {
                    PerfError::Unmeasurable(format!("no seconds in the reference's answer: {l}"))
                })
        })
        .collect()
}

/// The project's `scripts/cceval_reference.py`, or `$CROSSFILE_REFERENCE`.
fn reference_script() -> Result<PathBuf, PerfError> {
    if let Some(p) = std::env::var_os("CROSSFILE_REFERENCE") {
        return Ok(p.into());
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/cceval_reference.py");
    if !p.exists() {
        return Err(PerfError::Unmeasurable(format!(
            "{} is missing; set CROSSFILE_REFERENCE",
            p.display()
        )));
    }
    Ok(p)
}

/// A full ring of recent chunks, as a user who moved around a while has one: the
/// [`RING_LINES`] lines around each of the first cursors, until [`RING_CHUNKS`] are held, so
/// `recent` is timed ranking all it ever ranks.
fn full_ring(cursors: &[Query]) -> Arc<[Hit]> {
    let mut ring = Ring::new();
    for query in cursors.iter().take(4 * RING_CHUNKS) {
        let text = format!("{}{}", query.left, query.right);
        let lines: Vec<&str> = text.split('\n').collect();
        let total = u32::try_from(lines.len()).unwrap_or(u32::MAX);
        let window = centred(total, query.cursor.line, RING_LINES);
        let chunk = lines[window.start as usize..window.end as usize].join("\n");
        ring.note(&query.path, window.start, &chunk);
    }
    ring.chunks()
}
