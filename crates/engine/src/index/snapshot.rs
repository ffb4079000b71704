//! A consistent, immutable view of an index: file entries plus a tantivy searcher.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use tantivy::Searcher;

use super::IndexSettings;
use super::entry::FileEntry;
use super::store::{Fields, Store, file_key};
use crate::chunk::{ChunkerKind, ChunkerSettings};
use crate::lang::{Language, Modules, Symbol};

/// What retrievers rank over. Cloning the `Arc` that holds it is the only way to share it.
pub struct Snapshot {
    root: PathBuf,
    files: BTreeMap<String, Arc<FileEntry>>,
    by_key: HashMap<u64, Arc<FileEntry>>,
    searcher: Searcher,
    fields: Fields,
    bm25_chunker: ChunkerKind,
    chunker: ChunkerSettings,
    /// The symbol table, made on first use: each name's definitions.
    symbols: OnceLock<HashMap<String, Vec<Defined>>>,
    /// Each language family's module keys ([`Modules`]), made on first use.
    modules: OnceLock<HashMap<&'static str, Modules>>,
}

/// A definition and the file it is in.
#[derive(Clone, Copy, Debug)]
pub struct SymbolRef<'a> {
    pub file: &'a FileEntry,
    /// Its place in the file's outline (`file.outline.symbols[index]`).
    pub index: usize,
    pub symbol: &'a Symbol,
}

/// A definition: its file and its place in the file's outline.
#[derive(Clone, Debug)]
struct Defined {
    file: Arc<FileEntry>,
    index: usize,
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
            symbols: OnceLock::new(),
            modules: OnceLock::new(),
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

    /// The module keys of `language`'s family's files, which imports resolve against (for
    /// TypeScript with the workspace's packages and tsconfig aliases, read from disk then); made
    /// once per snapshot, on the first call.
    pub fn modules(&self, language: Language) -> Option<&Modules> {
        self.modules
            .get_or_init(|| {
                let mut all: HashMap<&'static str, Modules> = HashMap::new();
                for file in self.files.values() {
                    all.entry(file.language.name())
                        .or_default()
                        .add(&file.path, file.language);
                }
                if let Some(typescript) = all.get_mut(Language::TypeScript.name()) {
                    let sources = self
                        .files
                        .values()
                        .filter(|f| f.language.name() == Language::TypeScript.name())
                        .map(|f| f.path.as_str());
                    super::packages::add_typescript_packages(typescript, &self.root, sources);
                }
                all
            })
            .get(language.name())
    }

    /// The symbol table: every definition named `name`, in path order, then line order. The
    /// table is made once per snapshot, on the first call.
    pub fn definitions(&self, name: &str) -> Vec<SymbolRef<'_>> {
        let table = self.symbols.get_or_init(|| {
            let mut table: HashMap<String, Vec<Defined>> = HashMap::new();
            for file in self.files.values() {
                for (index, symbol) in file.outline.symbols.iter().enumerate() {
                    table.entry(symbol.name.clone()).or_default().push(Defined {
                        file: file.clone(),
                        index,
                    });
                }
            }
            table
        });
        table
            .get(name)
            .into_iter()
            .flatten()
            .filter_map(|d| {
                Some(SymbolRef {
                    file: &d.file,
                    index: d.index,
                    symbol: d.file.outline.symbols.get(d.index)?,
                })
            })
            .collect()
    }
}
