//! The cursor of `retrieve` and `complete`: `--at FILE:LINE:COL` read in a workspace.

use std::path::Path;

use anyhow::Context;

use crossfile_engine::config::{Options, Settings};
use crossfile_engine::index::Index;
use crossfile_engine::retrieve::{self, Query, Retriever, RetrieverSpec};
use crossfile_engine::workspace;

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
    let at = query_at(
        &flags.root,
        &flags.at,
        &settings,
        flags.reference.clone(),
        flags.cut_line,
    )?;
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
/// query there; `reference` is what the `oracle` sees. With `cut_line`, the rest of the cursor's
/// line is left out of the file (and is the reference unless one is given).
pub fn query_at(
    root: &Path,
    at: &str,
    settings: &Settings,
    reference: Option<String>,
    cut_line: bool,
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
    let (text, reference) = if cut_line {
        cut_rest_of_line(&source.text, &rel, cursor, reference)?
    } else {
        (source.text, reference)
    };
    let mut query = Query::new(&rel, &text, cursor)?.in_repo(&repo);
    query.reference = reference;
    Ok(AtCursor {
        query,
        path: rel,
        line,
        col,
    })
}

/// `text` without what follows `cursor` on its line, and the reference: `reference` when given,
/// else the text cut.
fn cut_rest_of_line(
    text: &str,
    path: &str,
    cursor: crossfile_engine::Position,
    reference: Option<String>,
) -> anyhow::Result<(String, Option<String>)> {
    let offset = workspace::offset_of(text, cursor)
        .with_context(|| format!("{path}: no offset for the cursor {cursor:?}"))?;
    let end = text[offset..].find('\n').map_or(text.len(), |n| offset + n);
    let cut = text[offset..end].trim_end_matches('\r');
    let kept = format!("{}{}", &text[..offset], &text[offset + cut.len()..]);
    Ok((kept, reference.or_else(|| Some(cut.to_string()))))
}
