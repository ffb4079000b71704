//! One indexed file: its text, outline, chunks and retrieval terms, computed once per version.

use std::collections::HashMap;
use std::sync::Arc;

use super::record::{self, CcevalChunkRecord, FileRecord};
use crate::chunk::{self, Chunk, ChunkerKind, ChunkerSettings};
use crate::lang::{self, Language, Outline};
use crate::terms::{self, TermId, Vocab};

/// A file's text, ready for analysis.
#[derive(Clone, Debug)]
pub struct AnalysisInput {
    pub path: String,
    pub language: Language,
    pub text: String,
    pub lossy: bool,
    pub stamp: Stamp,
}

/// A file's identity on disk, to tell whether it changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: u64,
    /// blake3 of the decoded text, first 16 bytes.
    pub hash: [u8; 16],
}

/// A chunk as CrossCodeEval's BM25 sees it: a fixed window that has at least one token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CcevalChunk {
    /// Index into [`FileEntry::fixed`].
    pub fixed: u32,
    /// Number of tokens.
    pub len: u32,
    /// Distinct tokens with counts, in order of first appearance.
    pub terms: Box<[(TermId, u32)]>,
}

/// Everything the index keeps about one file.
#[derive(Clone, Debug)]
pub struct FileEntry {
    /// Workspace-relative, `/`-separated.
    pub path: String,
    pub language: Language,
    pub text: Arc<str>,
    /// The bytes were not UTF-8 (decoded with U+FFFD).
    pub lossy: bool,
    pub stamp: Stamp,
    pub outline: Outline,
    pub fixed: Vec<Chunk>,
    pub sliding: Vec<Chunk>,
    pub syntax: Vec<Chunk>,
    /// The fixed chunks CrossCodeEval ranks, numbered by position (its `chunk_no`).
    pub cceval: Vec<CcevalChunk>,
    /// Per sliding chunk, its distinct words, sorted.
    pub sliding_words: Vec<Box<[TermId]>>,
}

impl FileEntry {
    /// Analyzes a file: parse, outline, chunk, tokenize. Pure CPU work; runs in parallel.
    pub fn analyze(source: AnalysisInput, settings: &ChunkerSettings) -> FileRecord {
        let AnalysisInput {
            path,
            language,
            text,
            lossy,
            stamp,
        } = source;
        let tree = if text.len() <= lang::MAX_PARSE_BYTES {
            lang::parse(language, &text)
        } else {
            None
        };
        let outline = tree
            .as_ref()
            .map(|t| lang::outline(language, &text, t))
            .unwrap_or_default();
        let fixed = chunk::chunk(ChunkerKind::Fixed, settings, &text, None);
        let sliding = chunk::chunk(ChunkerKind::Sliding, settings, &text, None);
        let syntax = chunk::chunk(
            ChunkerKind::Syntax,
            settings,
            &text,
            tree.is_some().then_some(&outline),
        );

        let mut local = LocalTerms::default();
        let mut cceval = Vec::new();
        for (i, chunk_text) in chunk::chunk_texts(ChunkerKind::Fixed, &text, &fixed).enumerate() {
            let tokens = terms::cceval_tokens(&chunk_text)
                .into_iter()
                .map(|t| local.id(t))
                .collect::<Vec<_>>();
            if !tokens.is_empty() {
                cceval.push(CcevalChunkRecord {
                    fixed: i as u32,
                    len: tokens.len() as u32,
                    terms: terms::term_counts(&tokens),
                });
            }
        }
        let sliding_words = chunk::chunk_texts(ChunkerKind::Sliding, &text, &sliding)
            .map(|chunk_text| {
                let mut ids: Vec<u32> = terms::words(&chunk_text).map(|w| local.id(w)).collect();
                ids.sort_unstable();
                ids.dedup();
                ids
            })
            .collect();
        FileRecord {
            path,
            language: record::language_code(language),
            text,
            lossy,
            size: stamp.size,
            mtime_ns: stamp.mtime_ns,
            hash: stamp.hash,
            outline: record::OutlineRecord::from(&outline),
            fixed: fixed.iter().map(record::range).collect(),
            sliding: sliding.iter().map(record::range).collect(),
            syntax: syntax.iter().map(record::range).collect(),
            terms: local.terms,
            cceval,
            sliding_words,
        }
    }

    /// The in-memory entry of a record: terms are interned in the process-wide [`Vocab`].
    pub fn from_record(record: FileRecord) -> Option<FileEntry> {
        let language = record::language_from_code(record.language)?;
        let global = Vocab::global().intern_all(record.terms.iter().map(String::as_str));
        let to_global = |id: u32| global.get(id as usize).copied().unwrap_or(TermId::MAX);
        let chunks = |ranges: Vec<(u32, u32)>| {
            ranges
                .into_iter()
                .map(|(s, e)| Chunk { lines: s..e })
                .collect()
        };
        Some(FileEntry {
            language,
            lossy: record.lossy,
            stamp: Stamp {
                size: record.size,
                mtime_ns: record.mtime_ns,
                hash: record.hash,
            },
            outline: record.outline.into_outline(),
            fixed: chunks(record.fixed),
            sliding: chunks(record.sliding),
            syntax: chunks(record.syntax),
            cceval: record
                .cceval
                .into_iter()
                .map(|c| CcevalChunk {
                    fixed: c.fixed,
                    len: c.len,
                    terms: c
                        .terms
                        .into_iter()
                        .map(|(t, n)| (to_global(t), n))
                        .collect(),
                })
                .collect(),
            sliding_words: record
                .sliding_words
                .into_iter()
                .map(|ids| {
                    let mut g: Vec<TermId> = ids.into_iter().map(to_global).collect();
                    g.sort_unstable();
                    g.into_boxed_slice()
                })
                .collect(),
            text: record.text.into(),
            path: record.path,
        })
    }

    /// The chunks of one chunker.
    pub fn chunks(&self, kind: ChunkerKind) -> &[Chunk] {
        match kind {
            ChunkerKind::Fixed => &self.fixed,
            ChunkerKind::Sliding => &self.sliding,
            ChunkerKind::Syntax => &self.syntax,
        }
    }

    /// The text of chunk `i` of a chunker, if it exists.
    pub fn chunk_text(&self, kind: ChunkerKind, i: usize) -> Option<String> {
        Some(self.chunks(kind).get(i)?.text(kind, &self.text))
    }
}

/// blake3 of a text, shortened.
pub fn text_hash(text: &str) -> [u8; 16] {
    let full = blake3::hash(text.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&full.as_bytes()[..16]);
    out
}

/// A file-local term table: strings in order of first use.
#[derive(Default)]
struct LocalTerms {
    ids: HashMap<String, u32>,
    terms: Vec<String>,
}

impl LocalTerms {
    fn id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.ids.get(term) {
            return id;
        }
        let id = self.terms.len() as u32;
        self.terms.push(term.to_string());
        self.ids.insert(term.to_string(), id);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyze_python(text: String) -> FileRecord {
        let stamp = Stamp {
            size: text.len() as u64,
            mtime_ns: 0,
            hash: text_hash(&text),
        };
        let input = AnalysisInput {
            path: "big.py".into(),
            language: Language::Python,
            text,
            lossy: false,
            stamp,
        };
        FileEntry::analyze(input, &ChunkerSettings::default())
    }

    /// A file larger than `MAX_PARSE_BYTES` is indexed without a syntax tree (whose memory would
    /// be ~35 bytes per byte of source): no outline, syntax chunks in line windows; everything
    /// else as for any file.
    #[test]
    fn a_file_over_the_parse_limit_is_indexed_without_a_tree() {
        let def = "def f(a):\n    return a + 1\n\n";
        let small = analyze_python(def.repeat(10));
        assert_eq!(small.outline.clone().into_outline().symbols.len(), 10);
        let text = def.repeat(lang::MAX_PARSE_BYTES / def.len() + 1);
        let lines = text.split('\n').count() as u32;
        let big = analyze_python(text);
        assert_eq!(
            big.outline.clone().into_outline().symbols.len(),
            0,
            "no outline"
        );
        assert!(
            big.syntax.iter().all(|&(s, e)| e - s <= 10) && big.syntax.len() as u32 >= lines / 30,
            "syntax chunks are fixed_lines windows"
        );
        assert!(!big.sliding.is_empty() && !big.cceval.is_empty());
    }

    /// What is stored is what is read back: the record of a file, through postcard bytes (as in
    /// the index), gives the entry the analysis made, outline, chunks and term ids included.
    #[test]
    fn a_record_read_back_from_its_bytes_is_the_entry_it_was_made_from() {
        let text = "import os\n\n\nclass A:\n    def m(self):\n        return os.sep\n\n\ndef f():\n    return A()\n";
        let record = analyze_python(text.into());
        let bytes = postcard::to_allocvec(&record).expect("encode");
        let back: FileRecord = postcard::from_bytes(&bytes).expect("decode");
        let (a, b) = (
            FileEntry::from_record(record).expect("entry"),
            FileEntry::from_record(back).expect("entry"),
        );
        assert_eq!(a.outline, b.outline);
        let names: Vec<&str> = b.outline.symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["A", "m", "f"]);
        assert_eq!(b.outline.imports.len(), 1);
        for kind in [
            ChunkerKind::Fixed,
            ChunkerKind::Sliding,
            ChunkerKind::Syntax,
        ] {
            assert_eq!(a.chunks(kind), b.chunks(kind), "{kind:?}");
            assert!(!b.chunks(kind).is_empty(), "{kind:?}");
        }
        assert_eq!(a.sliding_words, b.sliding_words);
        assert_eq!(&*b.text, text);
        assert_eq!(b.stamp.hash, text_hash(text));
        // A record of an unknown language is not an entry.
        let mut foreign = analyze_python(text.into());
        foreign.language = u8::MAX;
        assert!(FileEntry::from_record(foreign).is_none());
    }
}
