//! Embeddings for `dense`: an OpenAI-compatible `/v1/embeddings` client, and the on-disk cache
//! of chunk vectors keyed by a hash of the model name and the chunk text.
//!
//! # The cache file
//!
//! One file per model, `<cache_dir>/embeddings/<model>/vectors.bin` (the model name made safe
//! for a path), little-endian throughout:
//!
//! ```text
//! header  8 bytes  magic "CFEMBED\0"
//!         4 bytes  format version (FORMAT, u32)
//!         4 bytes  dimensions D (u32)
//! record  16 bytes key: blake3(model name, 0x00, chunk text), first 16 bytes
//!         4·D bytes  the unit-length vector, D × f32
//! ```
//!
//! Records are only ever appended, one batch per write, so an interrupted run keeps every batch
//! it finished. A torn last record (a crash mid-write) is cut off when the file is next opened.
//! A file with another magic, version or dimension count (the server now runs another model
//! under the same name) is discarded and rebuilt; nothing migrates. The model name is all the
//! cache knows of the embedding space: give each model its own `retrieve.dense.model`.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::DenseSettings;
use crate::http::{HttpClient, HttpError, HttpSettings};

/// The cache file's format version; bump it when the layout or the key changes.
pub const FORMAT: u32 = 1;
const MAGIC: &[u8; 8] = b"CFEMBED\0";
const HEADER_LEN: usize = 16;
/// Retries of an embeddings request (the `[retrieve.dense]` section has no setting for it).
const RETRIES: u32 = 2;

/// A chunk's cache key: the first 16 bytes of blake3(model name, 0x00, text).
pub type Key = [u8; 16];

/// The key of `text` embedded by `model`.
pub fn key(model: &str, text: &str) -> Key {
    let mut hasher = blake3::Hasher::new();
    hasher.update(model.as_bytes());
    hasher.update(&[0]);
    hasher.update(text.as_bytes());
    let mut key = [0u8; 16];
    key.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    key
}

/// An OpenAI-compatible embeddings endpoint.
#[derive(Debug)]
pub struct EmbeddingClient {
    http: HttpClient,
    model: String,
    requests: AtomicU64,
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    input: &'a [String],
}

#[derive(Deserialize)]
struct Answer {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

impl EmbeddingClient {
    /// A client for `settings.endpoint` (which must be set); reads the API key now.
    pub fn new(settings: &DenseSettings) -> Result<EmbeddingClient, HttpError> {
        let endpoint = settings
            .endpoint
            .as_deref()
            .ok_or_else(|| HttpError::Config("retrieve.dense.endpoint is not set".to_string()))?;
        Ok(EmbeddingClient {
            http: HttpClient::new(HttpSettings {
                section: "retrieve.dense",
                endpoint,
                api_key_env: settings.api_key_env.as_deref(),
                timeout_ms: settings.timeout_ms,
                retries: RETRIES,
            })?,
            model: settings.model.clone(),
            requests: AtomicU64::new(0),
        })
    }

    /// The model name sent with each request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Requests sent so far (retries not counted).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// One vector per text, in order, each scaled to unit length (a zero vector stays zero).
    /// Every vector must have the same, non-zero number of dimensions.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, HttpError> {
        const PATH: &str = "/v1/embeddings";
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.requests.fetch_add(1, Ordering::Relaxed);
        let body = Body {
            model: &self.model,
            input: texts,
        };
        let answer: Answer = self
            .http
            .post_json(PATH, &body, &CancellationToken::new())
            .await?;
        let malformed = |message: String| HttpError::Malformed {
            endpoint: self.http.shown_url(PATH),
            message,
        };
        if answer.data.len() != texts.len() {
            return Err(malformed(format!(
                "{} embeddings for {} inputs",
                answer.data.len(),
                texts.len()
            )));
        }
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (position, item) in answer.data.into_iter().enumerate() {
            let index = item.index.unwrap_or(position);
            match slots.get_mut(index) {
                Some(slot) if slot.is_none() => *slot = Some(normalized(item.embedding)),
                _ => return Err(malformed(format!("bad or repeated index {index}"))),
            }
        }
        let vectors: Vec<Vec<f32>> = slots.into_iter().flatten().collect();
        let dim = vectors.first().map_or(0, Vec::len);
        if dim == 0 || vectors.iter().any(|v| v.len() != dim) {
            return Err(malformed(
                "embeddings are empty or differ in dimensions".into(),
            ));
        }
        Ok(vectors)
    }
}

/// `v` scaled to unit length; a zero (or non-finite) vector becomes all zeros.
fn normalized(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    if norm.is_finite() && norm > 0.0 {
        for x in &mut v {
            *x = (f64::from(*x) / norm) as f32;
        }
    } else {
        v.iter_mut().for_each(|x| *x = 0.0);
    }
    v
}

/// The vectors of one model, in memory and in its cache file.
#[derive(Debug)]
pub struct VectorCache {
    path: PathBuf,
    dim: usize,
    index: HashMap<Key, usize>,
    /// `dim` floats per entry, in `index` order.
    data: Vec<f32>,
    /// Whether the file on disk has a valid header for `dim` (else the next write recreates it).
    file_ok: bool,
}

impl VectorCache {
    /// The cache directory of `model` under `cache_dir`.
    pub fn dir(cache_dir: &Path, model: &str) -> PathBuf {
        cache_dir.join("embeddings").join(safe_name(model))
    }

    /// Loads `dir/vectors.bin`. A missing, damaged or outdated file gives an empty cache (it is
    /// rebuilt on the next write), never an error.
    pub fn open(dir: &Path) -> VectorCache {
        let path = dir.join("vectors.bin");
        let mut cache = VectorCache {
            path,
            dim: 0,
            index: HashMap::new(),
            data: Vec::new(),
            file_ok: false,
        };
        let mut bytes = Vec::new();
        match File::open(&cache.path).and_then(|mut f| f.read_to_end(&mut bytes)) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return cache,
            Err(e) => {
                tracing::warn!(path = %cache.path.display(), error = %e, "embedding cache unreadable; rebuilding it");
                return cache;
            }
        }
        let Some(dim) = header_dim(&bytes) else {
            tracing::warn!(path = %cache.path.display(), "embedding cache of another format; rebuilding it");
            return cache;
        };
        let record = 16 + 4 * dim;
        let body = &bytes[HEADER_LEN..];
        let whole = body.len() / record * record;
        cache.dim = dim;
        cache.data.reserve(whole / record * dim);
        for chunk in body[..whole].chunks_exact(record) {
            let mut key = [0u8; 16];
            key.copy_from_slice(&chunk[..16]);
            if cache.index.contains_key(&key) {
                continue;
            }
            cache.index.insert(key, cache.index.len());
            cache.data.extend(
                chunk[16..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
        }
        cache.file_ok = true;
        if whole < body.len() {
            // A torn last record: cut it off so later appends stay aligned.
            let cut = OpenOptions::new()
                .write(true)
                .open(&cache.path)
                .and_then(|f| f.set_len((HEADER_LEN + whole) as u64));
            if cut.is_err() {
                cache.file_ok = false;
            }
        }
        cache
    }

    /// The number of dimensions (0 while empty).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Vectors held.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no vector is held.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The unit vector cached for `key`.
    pub fn get(&self, key: &Key) -> Option<&[f32]> {
        let i = *self.index.get(key)?;
        self.data.get(i * self.dim..(i + 1) * self.dim)
    }

    /// Adds vectors (all of one dimension count) and appends them to the file in one write.
    /// Vectors of a new dimension count replace everything held. A failed write leaves them in
    /// memory only, logged, so retrieval goes on.
    pub fn insert(&mut self, entries: &[(Key, Vec<f32>)]) {
        let Some(dim) = entries.first().map(|(_, v)| v.len()) else {
            return;
        };
        if entries.iter().any(|(_, v)| v.len() != dim) {
            return;
        }
        if dim != self.dim {
            if self.dim != 0 {
                tracing::warn!(path = %self.path.display(), old = self.dim, new = dim, "embedding dimensions changed; the cache restarts");
            }
            self.dim = dim;
            self.index.clear();
            self.data.clear();
            self.file_ok = false;
        }
        let mut record = Vec::with_capacity(entries.len() * (16 + 4 * dim));
        for (key, vector) in entries {
            if self.index.contains_key(key) {
                continue;
            }
            self.index.insert(*key, self.index.len());
            self.data.extend_from_slice(vector);
            record.extend_from_slice(key);
            for x in vector {
                record.extend_from_slice(&x.to_le_bytes());
            }
        }
        if let Err(e) = self.write(&record) {
            tracing::warn!(path = %self.path.display(), error = %e, "cannot write the embedding cache");
            self.file_ok = false;
        }
    }

    fn write(&mut self, records: &[u8]) -> std::io::Result<()> {
        if self.file_ok {
            let mut file = OpenOptions::new().append(true).open(&self.path)?;
            return file.write_all(records);
        }
        // A new file: header and every vector held, written aside and renamed into place.
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut all = Vec::with_capacity(HEADER_LEN + self.len() * (16 + 4 * self.dim));
        all.extend_from_slice(MAGIC);
        all.extend_from_slice(&FORMAT.to_le_bytes());
        all.extend_from_slice(&(self.dim as u32).to_le_bytes());
        let mut entries: Vec<(&Key, &usize)> = self.index.iter().collect();
        entries.sort_by_key(|(_, i)| **i);
        for (key, i) in entries {
            all.extend_from_slice(key);
            for x in self
                .data
                .get(i * self.dim..(i + 1) * self.dim)
                .unwrap_or(&[])
            {
                all.extend_from_slice(&x.to_le_bytes());
            }
        }
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(&all)?;
        tmp.persist(&self.path).map_err(|e| e.error)?;
        self.file_ok = true;
        Ok(())
    }
}

/// The dimension count a valid header names.
fn header_dim(bytes: &[u8]) -> Option<usize> {
    let header = bytes.get(..HEADER_LEN)?;
    let version = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
    let dim = u32::from_le_bytes([header[12], header[13], header[14], header[15]]) as usize;
    (&header[..8] == MAGIC && version == FORMAT && dim > 0).then_some(dim)
}

/// A model name as one safe path component: ASCII letters, digits, `.`, `_` and `-` are kept,
/// anything else becomes `_`, and a short hash of the name is appended whenever that changed
/// it, so distinct names never share a directory.
pub fn safe_name(model: &str) -> String {
    let mut name: String = model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with('.') {
        name.replace_range(..1, "_");
    }
    if name != model || name.is_empty() {
        let hash = blake3::hash(model.as_bytes()).to_hex();
        name = format!("{name}-{}", &hash.as_str()[..8]);
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_become_safe_distinct_directories() {
        assert_eq!(safe_name("nomic-embed-text_v1.5"), "nomic-embed-text_v1.5");
        for weird in ["", "..", ".hidden", "a/b", "a_b/", "../x", "模型", "a b"] {
            let safe = safe_name(weird);
            assert!(
                !safe.is_empty() && !safe.starts_with('.'),
                "{weird:?} -> {safe}"
            );
            assert!(
                safe.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')),
                "{weird:?} -> {safe}"
            );
        }
        assert_ne!(safe_name("a/b"), safe_name("a_b"));
    }

    #[test]
    fn keys_depend_on_model_and_text() {
        assert_ne!(key("m", "x"), key("n", "x"));
        assert_ne!(key("m", "x"), key("m", "y"));
        assert_ne!(key("ab", "c"), key("a", "bc"));
        assert_eq!(key("m", "x"), key("m", "x"));
    }

    #[test]
    fn vectors_survive_a_reopen_a_torn_tail_and_a_new_dimension() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (a, b, c) = (key("m", "a"), key("m", "b"), key("m", "c"));
        let mut cache = VectorCache::open(dir.path());
        assert!(cache.is_empty());
        cache.insert(&[(a, vec![1.0, 0.0]), (b, vec![0.0, 1.0])]);
        cache.insert(&[(c, vec![0.6, 0.8]), (a, vec![9.0, 9.0])]);
        let cache = VectorCache::open(dir.path());
        assert_eq!((cache.len(), cache.dim()), (3, 2));
        assert_eq!(cache.get(&a), Some(&[1.0f32, 0.0][..]));
        assert_eq!(cache.get(&c), Some(&[0.6f32, 0.8][..]));

        // A crash mid-write leaves half a record: it is dropped, and appends stay aligned.
        let file = dir.path().join("vectors.bin");
        let mut bytes = std::fs::read(&file).expect("read");
        let whole = bytes.len();
        bytes.extend_from_slice(&[7u8; 10]);
        std::fs::write(&file, &bytes).expect("write");
        let mut cache = VectorCache::open(dir.path());
        assert_eq!(cache.len(), 3);
        assert_eq!(
            std::fs::metadata(&file).expect("meta").len() as usize,
            whole
        );
        let d = key("m", "d");
        cache.insert(&[(d, vec![0.0, -1.0])]);
        let mut cache = VectorCache::open(dir.path());
        assert_eq!(cache.get(&d), Some(&[0.0f32, -1.0][..]));

        // Another dimension count (another model under the same name) starts over.
        cache.insert(&[(a, vec![1.0, 0.0, 0.0])]);
        let cache = VectorCache::open(dir.path());
        assert_eq!((cache.len(), cache.dim()), (1, 3));

        // Another format version is discarded.
        let mut bytes = std::fs::read(&file).expect("read");
        bytes[8] = 99;
        std::fs::write(&file, &bytes).expect("write");
        assert!(VectorCache::open(dir.path()).is_empty());
        std::fs::write(&file, b"junk").expect("write");
        assert!(VectorCache::open(dir.path()).is_empty());
    }

    #[test]
    fn normalizing_keeps_direction_and_zeroes_degenerate_vectors() {
        assert_eq!(normalized(vec![3.0, 4.0]), vec![0.6, 0.8]);
        assert_eq!(normalized(vec![0.0, 0.0]), vec![0.0, 0.0]);
        assert_eq!(normalized(vec![f32::NAN, 1.0]), vec![0.0, 0.0]);
        assert_eq!(normalized(vec![]), Vec::<f32>::new());
    }
}
