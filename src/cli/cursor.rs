//! The cursor of `retrieve` and `complete`: `--at FILE:LINE:COL` read in a workspace.

use std::path::Path;

use crossfile::config::Settings;
use crossfile::retrieve::Query;
use crossfile::workspace;

use super::args::parse_at;

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
