//! A consistent, immutable view of an index: file entries plus a tantivy searcher.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use tantivy::Searcher;

use super::IndexSettings;
use super::entry::FileEntry;
use super::store::{Fields, Store, file_key};
use crate::chunk::{ChunkerKind, ChunkerSettings};
use crate::lang::Symbol;

/// What retrievers rank over. Cloning the `Arc` that holds it is the only way to share it.
pub struct Snapshot {
    root: PathBuf,
    files: BTreeMap<String, Arc<FileEntry>>,
    by_key: HashMap<u64, Arc<FileEntry>>,
    searcher: Searcher,
    fields: Fields,
    bm25_chunker: ChunkerKind,
    chunker: ChunkerSettings,
}

/// A definition and the file it is in.
#[derive(Clone, Copy, Debug)]
pub struct SymbolRef<'a> {
    pub path: &'a str,
    pub symbol: &'a Symbol,
}

impl Snapshot {
    pub(super) fn new(
        root: PathBuf,
        files: BTreeMap<String, Arc<FileEntry>>,
        store: &Store,
        settings: &IndexSettings,
    ) -> Snapshot {
        let by_key = files
            .values()
            .map(|f| (file_key(&f.path), f.clone()))
            .collect();
        Snapshot {
            root,
            by_key,
            files,
            searcher: store.reader.searcher(),
            fields: store.fields,
            bm25_chunker: settings.bm25_chunker,
            chunker: settings.chunker.clone(),
        }
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &std::path::Path {
        &self.root
    }

    /// A file by workspace-relative path.
    pub fn file(&self, path: &str) -> Option<&Arc<FileEntry>> {
        self.files.get(path)
    }

    /// A file by the key its tantivy chunk documents carry.
    pub(crate) fn file_by_key(&self, key: u64) -> Option<&Arc<FileEntry>> {
        self.by_key.get(&key)
    }

    /// Every file, in path order.
    pub fn files(&self) -> impl Iterator<Item = &Arc<FileEntry>> {
        self.files.values()
    }

    /// Every path, in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    pub(super) fn files_map(&self) -> &BTreeMap<String, Arc<FileEntry>> {
        &self.files
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Number of chunks of a chunker over all files.
    pub fn chunk_count(&self, kind: ChunkerKind) -> usize {
        self.files.values().map(|f| f.chunks(kind).len()).sum()
    }

    /// The tantivy searcher over this snapshot's chunk documents.
    pub fn searcher(&self) -> &Searcher {
        &self.searcher
    }

    pub(crate) fn fields(&self) -> Fields {
        self.fields
    }

    /// The chunker whose chunks tantivy indexes for `bm25`.
    pub fn bm25_chunker(&self) -> ChunkerKind {
        self.bm25_chunker
    }

    pub fn chunker_settings(&self) -> &ChunkerSettings {
        &self.chunker
    }

    /// The symbol table: every definition named `name`, in path order.
    pub fn definitions(&self, name: &str) -> Vec<SymbolRef<'_>> {
        self.files
            .values()
            .flat_map(|f| {
                f.outline
                    .symbols
                    .iter()
                    .filter(|s| s.name == name)
                    .map(|symbol| SymbolRef {
                        path: &f.path,
                        symbol,
                    })
            })
            .collect()
    }
}
