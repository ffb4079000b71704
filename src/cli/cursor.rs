//! The cursor of `retrieve` and `complete`: `--at FILE:LINE:COL` read in a workspace.

use std::path::Path;

use anyhow::Context;

use crossfile::config::{Options, Settings};
use crossfile::index::Index;
use crossfile::retrieve::{self, Query, Retriever, RetrieverSpec};
use crossfile::workspace;

use super::args::{CursorFlags, parse_at};
use super::progress::index_bar;

/// What `retrieve` and `complete` work from: the workspace's settings with the command line's
/// `options` on top, the retriever they name, the cursor, and the workspace's index.
pub struct Opened {
    pub settings: Settings,
    pub spec: RetrieverSpec,
    pub retriever: Box<dyn Retriever>,
    pub at: AtCursor,
    pub index: Index,
}

/// Opens what `flags` point at, with `options` over the workspace's settings.
pub fn open(flags: &CursorFlags, options: Options) -> anyhow::Result<Opened> {
    let settings = Settings::load_with(&flags.root, options)?;
    let spec = settings.retrieve.retriever.clone();
    let retriever = retrieve::build(&spec, &settings.retrieve)?;
    let at = query_at(&flags.root, &flags.at, &settings, flags.reference.clone())?;
    let (index, _) = Index::open_or_build(&flags.root, &settings.index, &index_bar())
        .with_context(|| format!("indexing {}", flags.root.display()))?;
    Ok(Opened {
        settings,
        spec,
        retriever,
        at,
        index,
    })
}

/// A cursor given on the command line, as the engine sees it.
pub struct AtCursor {
    pub query: Query,
    /// The file, workspace-relative.
    pub path: String,
    /// As given: 1-based, the column in characters.
    pub line: u64,
    pub col: u64,
}

/// Reads `at` (`FILE:LINE:COL`, FILE relative to `root` or absolute inside it) and builds the
/// query there; `reference` is what the `oracle` sees.
pub fn query_at(
    root: &Path,
    at: &str,
    settings: &Settings,
    reference: Option<String>,
) -> anyhow::Result<AtCursor> {
    let (file, line, col) = parse_at(at)?;
    let (abs, rel) = workspace::resolve_in_root(root, &file)?;
    let source = workspace::read_source(&abs, settings.index.workspace.max_file_bytes)?;
    let cursor = workspace::position_from_chars(&source.text, &rel, line, col)?;
    let repo = root
        .canonicalize()
        .ok()
        .and_then(|root| root.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let mut query = Query::new(&rel, &source.text, cursor)?.in_repo(&repo);
    query.reference = reference;
    Ok(AtCursor {
        query,
        path: rel,
        line,
        col,
    })
}
