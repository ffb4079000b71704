//! Raw options as written in a file or given as flags: every field optional, checked per layer.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{ConfigError, Problem, Source};
use crate::chunk::ChunkerKind;
use crate::retrieve::RetrieverSpec;

/// One layer of options. Field names are the TOML keys.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Options {
    pub workspace: Option<WorkspaceOptions>,
    pub index: Option<IndexOptions>,
    pub retrieve: Option<RetrieveOptions>,
}

/// `[workspace]`: which files belong.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct WorkspaceOptions {
    /// Files larger than this many bytes are not indexed.
    pub max_file_bytes: Option<u64>,
}

/// `[index]`: where the index lives and how files are chunked.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct IndexOptions {
    pub cache_dir: Option<PathBuf>,
    /// Which chunks the tantivy `bm25` retriever ranks: `fixed`, `sliding` or `syntax`.
    pub bm25_chunker: Option<String>,
    pub fixed_lines: Option<u32>,
    pub sliding_lines: Option<u32>,
    pub sliding_stride: Option<u32>,
    pub syntax_max_lines: Option<u32>,
    /// How long to wait for another process that holds the index's write lock.
    pub lock_wait_ms: Option<u64>,
}

/// `[retrieve]`: which retriever and its parameters.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct RetrieveOptions {
    /// The default retriever spec (`bm25`, `mmr:bm25:0.7`, ...).
    pub retriever: Option<String>,
    pub top_k: Option<usize>,
    /// Lines before the cursor that form the `bm25` query.
    pub query_lines: Option<u32>,
    /// Lines before the cursor that form the `jaccard` query window.
    pub jaccard_query_lines: Option<u32>,
    /// The rank constant of reciprocal rank fusion.
    pub rrf_k: Option<f64>,
}

impl Options {
    /// Reads and checks a TOML file; `Ok(None)` if it does not exist.
    pub fn read_file(path: &Path) -> Result<Option<Options>, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(ConfigError::Read {
                    origin: Source::File(path.into()),
                    error,
                });
            }
        };
        Options::parse_toml(&text, Source::File(path.into())).map(Some)
    }

    /// Parses TOML text and checks it, naming `source` in errors.
    pub fn parse_toml(text: &str, source: Source) -> Result<Options, ConfigError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Syntax {
            line: e.span().map(|span| line_of(text, span.start)).unwrap_or(1),
            message: e.message().to_string(),
            origin: source.clone(),
        })?;
        Options::from_value(toml::Value::Table(table), source)
    }

    /// Deserializes options from a parsed value (TOML or JSON alike), reporting every unknown key
    /// and the first mistyped value by dotted path, then checks value ranges.
    pub fn from_value<'de, D>(value: D, source: Source) -> Result<Options, ConfigError>
    where
        D: serde::Deserializer<'de>,
    {
        let mut problems = Vec::new();
        let mut unknown = Vec::new();
        // serde_ignored writes `?` for an `Option` level; a dotted key has none.
        let mut record = |path: serde_ignored::Path<'_>| {
            let text = path.to_string();
            let key: Vec<&str> = text.split('.').filter(|p| *p != "?").collect();
            unknown.push(key.join("."));
        };
        let ignoring = serde_ignored::Deserializer::new(value, &mut record);
        let parsed: Result<Options, _> = serde_path_to_error::deserialize(ignoring);
        for key in unknown {
            problems.push(Problem {
                key,
                message: "unknown key".into(),
            });
        }
        match parsed {
            Ok(options) => {
                problems.extend(options.problems());
                if problems.is_empty() {
                    Ok(options)
                } else {
                    Err(ConfigError::Invalid {
                        origin: source,
                        problems,
                    })
                }
            }
            Err(e) => {
                let key = e.path().to_string();
                problems.push(Problem {
                    key,
                    message: e.into_inner().to_string(),
                });
                Err(ConfigError::Invalid {
                    origin: source,
                    problems,
                })
            }
        }
    }

    /// Checks value ranges; the error names `source`.
    pub fn check(&self, source: &Source) -> Result<(), ConfigError> {
        let problems = self.problems();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ConfigError::Invalid {
                origin: source.clone(),
                problems,
            })
        }
    }

    /// Every out-of-range value of this layer.
    fn problems(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut bad = |key: &str, message: String| {
            problems.push(Problem {
                key: key.into(),
                message,
            })
        };
        let lines = |key: &str, value: Option<u32>, bad: &mut dyn FnMut(&str, String)| {
            if let Some(v) = value
                && !(1..=10_000).contains(&v)
            {
                bad(key, format!("{v} is out of range 1..=10000"));
            }
        };
        if let Some(w) = &self.workspace
            && w.max_file_bytes == Some(0)
        {
            bad("workspace.max_file_bytes", "must be at least 1".into());
        }
        if let Some(i) = &self.index {
            if let Some(name) = &i.bm25_chunker
                && parse_chunker(name).is_none()
            {
                bad(
                    "index.bm25_chunker",
                    format!("`{name}` is not one of fixed, sliding, syntax"),
                );
            }
            lines("index.fixed_lines", i.fixed_lines, &mut bad);
            lines("index.sliding_lines", i.sliding_lines, &mut bad);
            lines("index.sliding_stride", i.sliding_stride, &mut bad);
            lines("index.syntax_max_lines", i.syntax_max_lines, &mut bad);
        }
        if let Some(r) = &self.retrieve {
            if let Some(spec) = &r.retriever
                && let Err(e) = spec.parse::<RetrieverSpec>()
            {
                bad("retrieve.retriever", e.to_string());
            }
            if let Some(k) = r.top_k
                && !(1..=1000).contains(&k)
            {
                bad("retrieve.top_k", format!("{k} is out of range 1..=1000"));
            }
            lines("retrieve.query_lines", r.query_lines, &mut bad);
            lines(
                "retrieve.jaccard_query_lines",
                r.jaccard_query_lines,
                &mut bad,
            );
            if let Some(k) = r.rrf_k
                && !(k.is_finite() && k >= 0.0)
            {
                bad(
                    "retrieve.rrf_k",
                    format!("{k} must be a finite number >= 0"),
                );
            }
        }
        problems
    }

    /// This layer with `over`'s set fields on top.
    pub fn overlay(self, over: Options) -> Options {
        Options {
            workspace: merge(self.workspace, over.workspace, |a, b| WorkspaceOptions {
                max_file_bytes: b.max_file_bytes.or(a.max_file_bytes),
            }),
            index: merge(self.index, over.index, |a, b| IndexOptions {
                cache_dir: b.cache_dir.or(a.cache_dir),
                bm25_chunker: b.bm25_chunker.or(a.bm25_chunker),
                fixed_lines: b.fixed_lines.or(a.fixed_lines),
                sliding_lines: b.sliding_lines.or(a.sliding_lines),
                sliding_stride: b.sliding_stride.or(a.sliding_stride),
                syntax_max_lines: b.syntax_max_lines.or(a.syntax_max_lines),
                lock_wait_ms: b.lock_wait_ms.or(a.lock_wait_ms),
            }),
            retrieve: merge(self.retrieve, over.retrieve, |a, b| RetrieveOptions {
                retriever: b.retriever.or(a.retriever),
                top_k: b.top_k.or(a.top_k),
                query_lines: b.query_lines.or(a.query_lines),
                jaccard_query_lines: b.jaccard_query_lines.or(a.jaccard_query_lines),
                rrf_k: b.rrf_k.or(a.rrf_k),
            }),
        }
    }
}

fn merge<T>(base: Option<T>, over: Option<T>, f: impl FnOnce(T, T) -> T) -> Option<T> {
    match (base, over) {
        (Some(a), Some(b)) => Some(f(a, b)),
        (a, b) => b.or(a),
    }
}

/// `fixed`, `sliding` or `syntax`.
pub(super) fn parse_chunker(name: &str) -> Option<ChunkerKind> {
    match name {
        "fixed" => Some(ChunkerKind::Fixed),
        "sliding" => Some(ChunkerKind::Sliding),
        "syntax" => Some(ChunkerKind::Syntax),
        _ => None,
    }
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(offset)
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
