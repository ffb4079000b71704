//! The tantivy side of the index: schema, documents, the writer and reading records back.
//!
//! Two kinds of documents share one index, so one commit updates a file atomically:
//! a *file* document (the postcard [`FileRecord`]) and one *chunk* document per chunk of the
//! `bm25` chunker (its code terms, for tantivy's BM25). Both carry the file's path, which is
//! how a file's documents are deleted.

use std::path::Path;
use std::time::{Duration, Instant};

use tantivy::collector::DocSetCollector;
use tantivy::directory::error::LockError;
use tantivy::query::TermQuery;
use tantivy::schema::{
    FAST, Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::{
    Index as TantivyIndex, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, TantivyError,
    Term,
};

use super::IndexError;
use super::record::FileRecord;
use crate::chunk::{Chunk, ChunkerKind, chunk_texts};
use crate::terms::CodeTokenizer;

/// Version of the on-disk layout (schema, record encoding, chunk and term rules). Bump it when
/// any of them changes: an index of another version is rebuilt.
pub const FORMAT: u32 = 4;

/// Field handles.
#[derive(Clone, Copy, Debug)]
pub struct Fields {
    pub path: Field,
    pub kind: Field,
    /// The language family of a chunk's file (`Language::name`).
    pub lang: Field,
    /// [`file_key`] of a chunk's path (a fast field: hits need no stored-document reads).
    pub file_key: Field,
    pub chunk: Field,
    pub body: Field,
    pub record: Field,
}

const KIND_FILE: &str = "file";
const KIND_CHUNK: &str = "chunk";

pub fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let body_options = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(CodeTokenizer::NAME)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        path: b.add_text_field("path", STRING),
        kind: b.add_text_field("kind", STRING),
        lang: b.add_text_field("lang", STRING),
        file_key: b.add_u64_field("file_key", FAST),
        chunk: b.add_u64_field("chunk", FAST),
        body: b.add_text_field("body", body_options),
        record: b.add_bytes_field("record", STORED),
    };
    (b.build(), fields)
}

/// A 64-bit key of a workspace-relative path (blake3, truncated).
pub fn file_key(path: &str) -> u64 {
    let hash = blake3::hash(path.as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&hash.as_bytes()[..8]);
    u64::from_le_bytes(bytes)
}

/// An open tantivy index with its reader.
pub struct Store {
    pub index: TantivyIndex,
    pub reader: IndexReader,
    pub fields: Fields,
}

impl Store {
    /// Creates an empty index in `dir` (which must exist and be empty).
    pub fn create(dir: &Path) -> Result<Store, IndexError> {
        let (schema, fields) = schema();
        let index =
            TantivyIndex::create_in_dir(dir, schema).map_err(|e| IndexError::tantivy(dir, e))?;
        Store::with_index(dir, index, fields)
    }

    /// Opens an existing index; a schema other than ours is an error (the caller rebuilds).
    pub fn open(dir: &Path) -> Result<Store, IndexError> {
        let index = TantivyIndex::open_in_dir(dir).map_err(|e| IndexError::tantivy(dir, e))?;
        let (schema, fields) = schema();
        if index.schema() != schema {
            return Err(IndexError::Stale {
                dir: dir.into(),
                why: "its schema differs".into(),
            });
        }
        Store::with_index(dir, index, fields)
    }

    fn with_index(dir: &Path, index: TantivyIndex, fields: Fields) -> Result<Store, IndexError> {
        index
            .tokenizers()
            .register(CodeTokenizer::NAME, CodeTokenizer);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| IndexError::tantivy(dir, e))?;
        Ok(Store {
            index,
            reader,
            fields,
        })
    }

    /// A writer, waiting up to `patience` for another process that holds the lock.
    pub fn writer(
        &self,
        dir: &Path,
        threads: usize,
        patience: Duration,
    ) -> Result<IndexWriter, IndexError> {
        let started = Instant::now();
        let per_thread = 32 << 20;
        loop {
            match self
                .index
                .writer_with_num_threads(threads.max(1), per_thread * threads.max(1))
            {
                Ok(writer) => return Ok(writer),
                Err(TantivyError::LockFailure(LockError::LockBusy, _))
                    if started.elapsed() < patience =>
                {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(TantivyError::LockFailure(LockError::LockBusy, _)) => {
                    return Err(IndexError::Locked { dir: dir.into() });
                }
                Err(e) => return Err(IndexError::tantivy(dir, e)),
            }
        }
    }

    /// Adds the documents of one analyzed file to `writer`, one at a time (a large file's chunk
    /// texts are never all in memory together; the writer's own memory is bounded by its budget).
    pub fn add_documents(
        &self,
        writer: &IndexWriter,
        dir: &Path,
        record: &FileRecord,
        bm25_chunker: ChunkerKind,
    ) -> Result<(), IndexError> {
        let add = |doc: TantivyDocument| {
            writer
                .add_document(doc)
                .map(drop)
                .map_err(|e| IndexError::tantivy(dir, e))
        };
        let bytes = postcard::to_allocvec(record).map_err(|e| IndexError::Encode {
            path: record.path.clone(),
            message: e.to_string(),
        })?;
        let f = self.fields;
        let mut file_doc = TantivyDocument::default();
        file_doc.add_text(f.path, &record.path);
        file_doc.add_text(f.kind, KIND_FILE);
        file_doc.add_bytes(f.record, &bytes);
        drop(bytes);
        add(file_doc)?;
        let language = super::record::language_from_code(record.language).map_or("", |l| l.name());
        let ranges = match bm25_chunker {
            ChunkerKind::Fixed => &record.fixed,
            ChunkerKind::Sliding => &record.sliding,
            ChunkerKind::Syntax => &record.syntax,
        };
        let key = file_key(&record.path);
        let chunks: Vec<Chunk> = ranges
            .iter()
            .map(|&(start, end)| Chunk { lines: start..end })
            .collect();
        for (i, text) in chunk_texts(bm25_chunker, &record.text, &chunks).enumerate() {
            let mut doc = TantivyDocument::default();
            doc.add_text(f.path, &record.path);
            doc.add_text(f.kind, KIND_CHUNK);
            doc.add_text(f.lang, language);
            doc.add_u64(f.file_key, key);
            doc.add_u64(f.chunk, i as u64);
            doc.add_text(f.body, &text);
            add(doc)?;
        }
        Ok(())
    }

    /// The term that names every document of a file.
    pub fn path_term(&self, path: &str) -> Term {
        Term::from_field_text(self.fields.path, path)
    }

    /// Every stored file record. A record that does not decode is an error (the caller rebuilds).
    pub fn read_records(&self, dir: &Path) -> Result<Vec<FileRecord>, IndexError> {
        let searcher = self.reader.searcher();
        let query = TermQuery::new(
            Term::from_field_text(self.fields.kind, KIND_FILE),
            IndexRecordOption::Basic,
        );
        let addresses = searcher
            .search(&query, &DocSetCollector)
            .map_err(|e| IndexError::tantivy(dir, e))?;
        let mut records = Vec::with_capacity(addresses.len());
        for address in addresses {
            let doc: TantivyDocument = searcher
                .doc(address)
                .map_err(|e| IndexError::tantivy(dir, e))?;
            let bytes = doc
                .get_first(self.fields.record)
                .and_then(|v| v.as_bytes())
                .ok_or_else(|| IndexError::Stale {
                    dir: dir.into(),
                    why: "a file document has no record".into(),
                })?;
            let record: FileRecord =
                postcard::from_bytes(bytes).map_err(|e| IndexError::Stale {
                    dir: dir.into(),
                    why: format!("a record does not decode: {e}"),
                })?;
            records.push(record);
        }
        Ok(records)
    }
}
