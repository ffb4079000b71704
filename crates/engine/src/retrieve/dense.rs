//! `dense`: cosine similarity between an embedding of the lines before the cursor and
//! embeddings of the index's `bm25` chunks of the query's language, from an OpenAI-compatible
//! `/v1/embeddings` endpoint, with chunk vectors cached on disk ([`super::embeddings`]).
//!
//! Chunks are embedded lazily: a query embeds the chunks of its language that no earlier query
//! (in this process or, through the cache file, any earlier one) embedded, in batches of
//! [`BATCH_TEXTS`] texts, each batch written to the cache as it arrives, and answers only when
//! all of them have vectors (so results never depend on how far a cache had got). The *first*
//! query on a workspace therefore pays for embedding every chunk of its language: the chunk
//! count divided by the server's embedding throughput, which is its prompt-processing speed.
//! Measured with `llama-server --embedding` running the default 135M model on 2 busy CPU
//! cores: about 100 tokens a second, 0.6 twenty-line chunks a second, so `click`'s 1,639
//! Python chunks would take about 45 minutes; a GPU server or a small dedicated embedding model
//! is tens to hundreds of times faster. [`Dense::warm`] embeds a whole snapshot ahead of time
//! (for a background task). Later queries embed only the query (one request, about a second on
//! the same machine) and chunks whose text changed, plus milliseconds of scoring. A chunk
//! longer than [`MAX_INPUT_BYTES`] is embedded from its first [`MAX_INPUT_BYTES`] bytes.
//!
//! The [`Retriever`] trait is synchronous, but HTTP is async: `Dense` owns a one-thread tokio
//! runtime and hands each request to it, waiting on a channel. That works from any caller: plain
//! threads, rayon (inside `hybrid`), and threads of another tokio runtime (where `block_on`
//! would panic), though an async caller should, as with every retriever, call it from
//! `spawn_blocking`.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::DenseSettings;
use super::embeddings::{EmbeddingClient, Key, VectorCache, key};
use super::{Exclude, Hit, Query, RetrieveError, Retriever, sort_hits};
use crate::chunk::{ChunkerKind, chunk_texts, is_blank};
use crate::http::HttpError;
use crate::index::{FileEntry, Snapshot};

/// Texts per embeddings request.
pub const BATCH_TEXTS: usize = 32;
/// Longest text sent for embedding, in bytes; longer chunks are cut (at a character boundary).
pub const MAX_INPUT_BYTES: usize = 4000;
/// Non-blank lines before the cursor that form the query, unless set with
/// [`Dense::with_query_lines`] (CrossCodeEval's window, as `bm25`'s default).
pub const DEFAULT_QUERY_LINES: u32 = 10;

/// The `dense` retriever.
pub struct Dense {
    client: Arc<EmbeddingClient>,
    runtime: Option<tokio::runtime::Runtime>,
    cache_dir: PathBuf,
    /// Loaded on first use.
    cache: Mutex<Option<VectorCache>>,
    /// Per file text hash, the keys of its chunks, so a query hashes only new texts.
    keys: Mutex<HashMap<FileChunking, Arc<ChunkKeys>>>,
    /// Held while embedding chunks, so concurrent queries do not embed the same ones twice.
    filling: Mutex<()>,
    query_lines: u32,
    /// What of the cursor's own file is left out.
    exclude: Exclude,
    chunks_embedded: AtomicU64,
}

/// What a [`Dense`] retriever has sent so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DenseStats {
    /// Embeddings requests (query and chunk batches; retries not counted).
    pub requests: u64,
    /// Chunk texts sent for embedding (queries not counted).
    pub chunks_embedded: u64,
}

impl Dense {
    /// A `dense` retriever for the endpoint in `settings`, caching vectors under
    /// `<settings.cache_dir>/embeddings/<model>/`. Nothing is read or sent until the first query.
    pub fn new(settings: &DenseSettings) -> Result<Dense, RetrieveError> {
        if settings.endpoint.is_none() {
            return Err(unavailable(
                "set `retrieve.dense.endpoint` to an OpenAI-compatible server that serves \
                 /v1/embeddings"
                    .into(),
            ));
        }
        let client = EmbeddingClient::new(settings).map_err(|e| unavailable(e.to_string()))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("crossfile-dense")
            .enable_all()
            .build()
            .map_err(|e| unavailable(format!("cannot start its HTTP runtime: {e}")))?;
        Ok(Dense {
            client: Arc::new(client),
            runtime: Some(runtime),
            cache_dir: VectorCache::dir(&settings.cache_dir, &settings.model),
            cache: Mutex::new(None),
            keys: Mutex::new(HashMap::new()),
            filling: Mutex::new(()),
            query_lines: DEFAULT_QUERY_LINES,
            exclude: Exclude::default(),
            chunks_embedded: AtomicU64::new(0),
        })
    }

    /// The same retriever leaving out what `exclude` says of the cursor's own file.
    pub fn with_exclude(mut self, exclude: Exclude) -> Dense {
        self.exclude = exclude;
        self
    }

    /// The same retriever with a query of the last `lines` non-blank lines before the cursor.
    pub fn with_query_lines(mut self, lines: u32) -> Dense {
        self.query_lines = lines;
        self
    }

    /// Requests and chunk texts sent so far.
    pub fn stats(&self) -> DenseStats {
        DenseStats {
            requests: self.client.requests(),
            chunks_embedded: self.chunks_embedded.load(Ordering::Relaxed),
        }
    }

    /// Where this retriever's vectors are cached.
    pub fn cache_dir(&self) -> &Path {
        &self.cache_dir
    }

    /// Embeds `texts` on the retriever's runtime, from any thread.
    fn embed(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, RetrieveError> {
        let runtime = self
            .runtime
            .as_ref()
            .ok_or_else(|| unavailable("its HTTP runtime has stopped".into()))?;
        let client = self.client.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        runtime.spawn(async move {
            // The receiver waits for this; a send error means it gave up, which is fine.
            let _ = tx.send(client.embed(&texts).await);
        });
        rx.recv()
            .map_err(|_| unavailable("its HTTP runtime stopped mid-request".into()))?
            .map_err(|e: HttpError| unavailable(e.to_string()))
    }

    fn with_cache<T>(&self, f: impl FnOnce(&mut VectorCache) -> T) -> T {
        let mut guard = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let cache = guard.get_or_insert_with(|| VectorCache::open(&self.cache_dir));
        f(cache)
    }

    /// The keys of every chunk of `file` (`None` for blank chunks), computed once per text and
    /// chunking.
    fn file_keys(&self, file: &FileEntry, kind: ChunkerKind, files: usize) -> Arc<ChunkKeys> {
        let chunks = file.chunks(kind);
        let memo = (file.stamp.hash, kind);
        let keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = keys.get(&memo)
            && known.ranges.len() == chunks.len()
            && known.ranges.iter().zip(chunks).all(|(r, c)| *r == c.lines)
        {
            return known.clone();
        }
        drop(keys);
        let model = self.client.model();
        let computed = Arc::new(ChunkKeys {
            ranges: chunks.iter().map(|c| c.lines.clone()).collect(),
            keys: chunk_texts(kind, &file.text, chunks)
                .map(|t| (!is_blank_text(&t)).then(|| key(model, input(&t))))
                .collect(),
        });
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        // Old versions of edited files pile up; start afresh now and then.
        if keys.len() > 2 * files + 1024 {
            keys.clear();
        }
        keys.insert(memo, computed.clone());
        computed
    }
}

/// A file text (by its hash) chunked by one chunker.
type FileChunking = ([u8; 16], ChunkerKind);

/// The cache keys of one file's chunks, and the chunk line ranges they were computed for.
struct ChunkKeys {
    ranges: Vec<Range<u32>>,
    keys: Vec<Option<Key>>,
}

impl Drop for Dense {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which panics inside another runtime; this does not.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Retriever for Dense {
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let window =
            query.search_window(|left| Query::last_nonblank_lines(left, self.query_lines as usize));
        if top_k == 0 || is_blank_text(&window) {
            return Ok(Vec::new());
        }
        let kind = snapshot.bm25_chunker();
        let candidates = self.candidates(snapshot, Some(query));
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        self.fill(&candidates, kind)?;
        let query_vector = self
            .embed(vec![input(&window).to_string()])?
            .into_iter()
            .next()
            .unwrap_or_default();
        let mut hits = self.with_cache(|cache| {
            let mut scored: Vec<(f64, usize)> = candidates
                .iter()
                .enumerate()
                .filter_map(|(i, (_, _, k))| {
                    let v = cache.get(k)?;
                    (v.len() == query_vector.len()).then(|| (dot(&query_vector, v), i))
                })
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            scored.truncate(top_k);
            scored
                .into_iter()
                .filter_map(|(score, i)| {
                    let (file, ci, _) = candidates.get(i)?;
                    let chunk = file.chunks(kind).get(*ci)?;
                    Some(Hit {
                        path: file.path.clone(),
                        lines: chunk.lines.clone(),
                        score,
                        text: chunk.text(kind, &file.text),
                        chunker: Some(kind),
                        source: None,
                    })
                })
                .collect::<Vec<_>>()
        });
        sort_hits(&mut hits);
        Ok(hits)
    }
}

/// A chunk that may be ranked: its file, its index among the file's chunks, its cache key.
type Candidate<'a> = (&'a Arc<FileEntry>, usize, Key);

impl Dense {
    /// Embeds every chunk of `snapshot` (all languages) that the cache lacks, so later queries
    /// send only themselves. Returns the number of chunks embedded. Slow on a CPU server (see
    /// the module docs): call it from a background task.
    pub fn warm(&self, snapshot: &Snapshot) -> Result<usize, RetrieveError> {
        let before = self.chunks_embedded.load(Ordering::Relaxed);
        self.fill(&self.candidates(snapshot, None), snapshot.bm25_chunker())?;
        Ok((self.chunks_embedded.load(Ordering::Relaxed) - before) as usize)
    }

    /// The non-blank `bm25` chunks of the query's language that `exclude` keeps (every
    /// non-blank chunk without a query), in path and chunk order.
    fn candidates<'a>(&self, snapshot: &'a Snapshot, query: Option<&Query>) -> Vec<Candidate<'a>> {
        let kind = snapshot.bm25_chunker();
        let mut candidates = Vec::new();
        for file in snapshot.files() {
            let language = query.and_then(|q| q.language);
            if language.is_some_and(|l| l.name() != file.language.name()) {
                continue;
            }
            let keys = self.file_keys(file, kind, snapshot.len());
            for (ci, (chunk, k)) in file.chunks(kind).iter().zip(&keys.keys).enumerate() {
                if let Some(k) = k
                    && !query.is_some_and(|q| self.exclude.leaves_out(q, &file.path, &chunk.lines))
                {
                    candidates.push((file, ci, *k));
                }
            }
        }
        candidates
    }

    /// Embeds and caches every candidate chunk the cache lacks, batch by batch.
    fn fill(&self, candidates: &[Candidate<'_>], kind: ChunkerKind) -> Result<(), RetrieveError> {
        let _filling = self.filling.lock().unwrap_or_else(|e| e.into_inner());
        let mut missing: Vec<(usize, Key)> = self.with_cache(|cache| {
            candidates
                .iter()
                .enumerate()
                .filter(|(_, (_, _, k))| cache.get(k).is_none())
                .map(|(i, (_, _, k))| (i, *k))
                .collect()
        });
        // One text per key (identical chunks share a vector).
        let mut seen = HashSet::new();
        missing.retain(|(_, k)| seen.insert(*k));
        if missing.is_empty() {
            return Ok(());
        }
        tracing::info!(chunks = missing.len(), "dense: embedding chunks");
        for batch in missing.chunks(BATCH_TEXTS) {
            let texts: Vec<String> = batch
                .iter()
                .filter_map(|(i, _)| {
                    let (file, ci, _) = candidates.get(*i)?;
                    let text = file.chunks(kind).get(*ci)?.text(kind, &file.text);
                    Some(input(&text).to_string())
                })
                .collect();
            let vectors = self.embed(texts)?;
            if vectors.len() != batch.len() {
                return Err(unavailable(format!(
                    "the server returned {} embeddings for {} chunks",
                    vectors.len(),
                    batch.len()
                )));
            }
            self.chunks_embedded
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
            let entries: Vec<(Key, Vec<f32>)> =
                batch.iter().map(|(_, k)| *k).zip(vectors).collect();
            self.with_cache(|cache| cache.insert(&entries));
        }
        Ok(())
    }
}

/// The text sent for embedding: at most [`MAX_INPUT_BYTES`] bytes, cut at a character boundary.
fn input(text: &str) -> &str {
    if text.len() <= MAX_INPUT_BYTES {
        return text;
    }
    let mut end = MAX_INPUT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn is_blank_text(text: &str) -> bool {
    text.split('\n').all(is_blank)
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

fn unavailable(why: String) -> RetrieveError {
    RetrieveError::Unavailable {
        retriever: "dense".into(),
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_inputs_are_cut_at_a_character_boundary() {
        assert_eq!(input("short"), "short");
        let long = "é".repeat(MAX_INPUT_BYTES);
        let cut = input(&long);
        assert!(cut.len() <= MAX_INPUT_BYTES && cut.len() >= MAX_INPUT_BYTES - 1);
        assert!(is_blank_text("  \n\t\n"));
        assert!(!is_blank_text("  \nx"));
        assert!((dot(&[0.6, 0.8], &[0.6, 0.8]) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn without_an_endpoint_dense_is_unavailable() {
        let settings = DenseSettings {
            endpoint: None,
            model: "m".into(),
            api_key_env: None,
            timeout_ms: 1000,
            cache_dir: "/nonexistent".into(),
        };
        let e = Dense::new(&settings).err().expect("no endpoint");
        assert!(e.to_string().contains("retrieve.dense.endpoint"), "{e}");
    }
}
