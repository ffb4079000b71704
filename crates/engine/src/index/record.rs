//! The on-disk form of a [`FileEntry`](super::FileEntry): serde, with file-local term ids.
//!
//! Stored as postcard bytes in a tantivy document per file. Its layout is versioned by
//! [`super::store::FORMAT`]; an index written with another format is rebuilt, never read.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::chunk::Chunk;
use crate::lang::{Import, Language, Outline, Symbol, SymbolKind};

/// One file, as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileRecord {
    pub path: String,
    pub language: u8,
    pub text: String,
    pub lossy: bool,
    pub size: u64,
    pub mtime_ns: u64,
    pub hash: [u8; 16],
    pub outline: OutlineRecord,
    pub fixed: Vec<(u32, u32)>,
    pub sliding: Vec<(u32, u32)>,
    pub syntax: Vec<(u32, u32)>,
    /// The file's distinct terms; the ids below index this table.
    pub terms: Vec<String>,
    pub cceval: Vec<CcevalChunkRecord>,
    pub sliding_words: Vec<Vec<u32>>,
}

/// A CrossCodeEval chunk, as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CcevalChunkRecord {
    pub fixed: u32,
    pub len: u32,
    pub terms: Vec<(u32, u32)>,
}

/// Definitions and imports, as stored.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OutlineRecord {
    symbols: Vec<(String, u8, u32, u32)>,
    imports: Vec<(u32, String, Vec<String>)>,
    reexports: Vec<(u32, String, Vec<String>)>,
}

impl From<&Outline> for OutlineRecord {
    fn from(outline: &Outline) -> Self {
        OutlineRecord {
            symbols: outline
                .symbols
                .iter()
                .map(|s| {
                    let kind = match s.kind {
                        SymbolKind::Function => 0,
                        SymbolKind::Method => 1,
                        SymbolKind::Class => 2,
                    };
                    (s.name.clone(), kind, s.lines.start, s.lines.end)
                })
                .collect(),
            imports: imports_record(&outline.imports),
            reexports: imports_record(&outline.reexports),
        }
    }
}

impl OutlineRecord {
    pub fn into_outline(self) -> Outline {
        Outline {
            symbols: self
                .symbols
                .into_iter()
                .map(|(name, kind, start, end)| Symbol {
                    name,
                    kind: match kind {
                        0 => SymbolKind::Function,
                        1 => SymbolKind::Method,
                        _ => SymbolKind::Class,
                    },
                    lines: start..end,
                })
                .collect(),
            imports: imports_of(self.imports),
            reexports: imports_of(self.reexports),
        }
    }
}

fn imports_record(imports: &[Import]) -> Vec<(u32, String, Vec<String>)> {
    imports
        .iter()
        .map(|i| (i.line, i.module.clone(), i.names.clone()))
        .collect()
}

fn imports_of(records: Vec<(u32, String, Vec<String>)>) -> Vec<Import> {
    records
        .into_iter()
        .map(|(line, module, names)| Import {
            line,
            module,
            names,
        })
        .collect()
}

/// A chunk's line range as a pair.
pub fn range(chunk: &Chunk) -> (u32, u32) {
    let Range { start, end } = chunk.lines;
    (start, end)
}

pub fn language_code(language: Language) -> u8 {
    match language {
        Language::Python => 0,
        Language::Java => 1,
        Language::TypeScript => 2,
        Language::Tsx => 3,
        Language::CSharp => 4,
    }
}

pub fn language_from_code(code: u8) -> Option<Language> {
    Language::ALL.get(code as usize).copied()
}
