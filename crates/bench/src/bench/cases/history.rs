//! Cases mined from a repository's history (`bench mine-history`, `--format history`), in the
//! shape of Long Code Arena's project-level completion: a file added by a commit is completed line
//! by line, the repository as it was before that commit (the parent's tree) as the context.
//!
//! A record is CrossCodeEval's three texts — `prompt` (the file above the target line and the
//! line's indentation), `groundtruth` (the rest of the line, without its newline) and
//! `right_context` (from that newline on) — with `metadata` naming the commit, its parent, the
//! file, the 0-based line, the line's category and the identifiers that decided it, and what the
//! file's writer had lately edited (`recent`: the commit's other files, for `recent-commit`).
//!
//! A record is checked as a CrossCodeEval one is ([`LineRecord`]), plus its own fields: the
//! prompt's newlines must equal `metadata.line`, `commit` and `parent` must be full ids (40
//! lowercase hex digits), the category one of [`Category`]'s, and each recent chunk's path stay
//! inside the repository. The case is scored as a
//! CrossCodeEval line; its file is the one the commit adds, so it need not exist in the
//! repository folder (the parent's tree).

use serde::{Deserialize, Serialize};

use super::cceval::LineRecord;
use super::problem::{RecordError, bad, checked_relative};
use super::{Case, CaseFormat};
use crossfile_engine::chunk::ChunkerKind;
use crossfile_engine::retrieve::Hit;

/// One mined line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryRecord {
    /// The added file's text before the cursor: every line above the target and its indentation.
    pub prompt: String,
    /// The rest of the target line, without its newline.
    pub groundtruth: String,
    /// The file's text after the groundtruth, from the newline that ends the line.
    pub right_context: String,
    pub metadata: HistoryMetadata,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryMetadata {
    pub task_id: String,
    /// The folder under the repositories directory holding the parent commit's tree.
    pub repository: String,
    /// The commit that adds the file (full id).
    pub commit: String,
    /// Its parent (full id): the tree that is the context.
    pub parent: String,
    /// The added file, relative to the repository, `/`-separated.
    pub path: String,
    /// 0-based line of the target.
    pub line: u32,
    pub category: Category,
    /// The identifiers of the line that decided its category (none for `common`,
    /// `non_informative` and `random` lines decided by their shape).
    pub identifiers: Vec<String>,
    /// What a user writing the file had lately edited, newest first: chunks of the other files
    /// of the commit (of the file's language), as committed, around the lines the commit
    /// changes. It knows the commit, so only the `recent-commit` spec reads it. Absent in cases
    /// mined before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent: Vec<RecentChunk>,
}

/// Lines of a file as a commit leaves them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecentChunk {
    /// Relative to the repository, `/`-separated.
    pub path: String,
    /// 0-based line of the chunk's first line.
    pub line: u32,
    /// The lines, joined with `\n`.
    pub text: String,
}

crossfile_engine::choice! {
    /// A target line's kind, as Long Code Arena's project-level completion sorts lines: by where the
    /// identifiers it uses are defined. A line has one, the first that applies in this order.
    #[derive(PartialOrd, Ord)]
    pub enum Category {
        /// Uses an identifier defined in another file the same commit adds or changes (Long Code
        /// Arena's files spell it `commited`, read as this).
        #[strum(to_string = "committed", serialize = "commited")]
        Committed,
        /// Uses an identifier defined elsewhere in the parent commit's tree.
        Inproject,
        /// Uses an identifier defined earlier in the same file.
        Infile,
        /// Uses only common identifiers: keywords, builtins, the standard library.
        Common,
        /// A short or trivial line: an import, a brace, `pass`, logging boilerplate.
        #[strum(serialize = "non_informative")]
        NonInformative,
        /// A sample of the remaining lines.
        Random,
    }
}

/// The case of a record, every field checked.
pub(super) fn to_case(r: HistoryRecord) -> Result<Case, RecordError> {
    let m = r.metadata;
    let record = LineRecord {
        format: CaseFormat::History,
        task_id: m.task_id,
        repository: m.repository,
        path_field: "metadata.path",
        path: m.path,
        prompt: r.prompt,
        groundtruth: r.groundtruth,
        right_context: r.right_context,
    };
    let case = record.into_case(|prompt_lines| {
        if prompt_lines != m.line {
            return Err(bad(
                "metadata.line",
                format!(
                    "is {} but the prompt ends on line {prompt_lines} (its newlines)",
                    m.line
                ),
            ));
        }
        Ok(prompt_lines)
    })?;
    for (field, id) in [
        ("metadata.commit", &m.commit),
        ("metadata.parent", &m.parent),
    ] {
        if !is_full_id(id) {
            return Err(bad(
                field,
                format!("{id:?} is not a full commit id (40 lowercase hex digits)"),
            ));
        }
    }
    let recent = m
        .recent
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| recent_hit(i, chunk))
        .collect::<Result<_, _>>()?;
    Ok(Case {
        category: Some(m.category),
        identifiers: m.identifiers,
        recent,
        ..case
    })
}

/// The `i`th recent chunk of a record as a hit, its path checked to stay inside the repository.
fn recent_hit(i: usize, chunk: RecentChunk) -> Result<Hit, RecordError> {
    let path =
        checked_relative(&chunk.path).map_err(|e| bad(&format!("metadata.recent[{i}].path"), e))?;
    let lines = u32::try_from(chunk.text.split('\n').count()).unwrap_or(u32::MAX);
    Ok(Hit {
        path,
        lines: chunk.line..chunk.line.saturating_add(lines),
        score: 0.0,
        text: chunk.text,
        chunker: Some(ChunkerKind::Sliding),
        source: None,
    })
}

/// A full git object id: 40 lowercase hex digits.
fn is_full_id(id: &str) -> bool {
    id.len() == 40 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
