//! A case laid out in its repository: what the model and the index may see of it. A line or
//! function case's view ([`case_view`]) and an EvoCodeBench case's in each setting
//! ([`evocodebench`]); the case's file in an index as the case shows it, with the query at its
//! cursor ([`lay_out`]) — the one preparation `bench run` and the language server's replay share,
//! so the two give the same prompt, the same suggestion and the same scores; and the replay
//! copies an editor opens a case in ([`replay_copy`]).

pub mod case_view;
pub mod evocodebench;
pub mod replay_copy;

use std::sync::Arc;

use crate::bench::BenchError;
use crate::bench::cases::{Case, CaseFormat, Target};
use case_view::CaseView;
use crossfile_engine::complete::{Completer, Protocol};
use crossfile_engine::index::{Index, Snapshot};
use crossfile_engine::postprocess::Unit;
use crossfile_engine::retrieve::Query;

/// Tokens generated for a function body when no limit is given.
pub const FUNCTION_MAX_NEW_TOKENS: u32 = 256;

/// A case laid out in an index.
pub struct LaidOut {
    pub view: CaseView,
    pub query: Query,
    /// The index as the case sees it: its own file holds the left context (and the right
    /// context when the prompt uses it), never the reference.
    pub snapshot: Arc<Snapshot>,
    /// The cursor's column, in characters.
    pub col: u32,
}

/// Lays `case`, seen as `view` ([`CaseView::new`]), out in `index` (the index of its repository,
/// or of a copy of it): the case's file goes in as the case shows it, the snapshot is taken, and
/// the file is read back from disk (also on an error), so the index is left as the disk is.
pub fn lay_out(
    case: &Case,
    view: CaseView,
    index: &Index,
    uses_right: bool,
) -> Result<LaidOut, BenchError> {
    index.update_text(&view.path, &view.indexed_text(uses_right))?;
    let snapshot = index.snapshot();
    let query = view.query(case);
    index.update_files(&[&view.path])?;
    let query = query?;
    let col = view
        .left
        .rsplit('\n')
        .next()
        .map_or(0, |l| l.chars().count());
    Ok(LaidOut {
        col: u32::try_from(col).unwrap_or(u32::MAX),
        view,
        query,
        snapshot,
    })
}

/// The completer for a case's protocol: CrossCodeEval, and history cases scored as its lines,
/// cut to one statement (its metrics cut the raw suggestion again themselves); RepoEval to a line (stopping generation at the newline), or,
/// when the reference spans several lines (some API-level cases), not at all, since RepoCoder
/// cuts the raw output to the reference's line count; a block for function bodies, with
/// [`FUNCTION_MAX_NEW_TOKENS`] unless `max_new_tokens` says otherwise.
pub fn completer_for(base: &Completer, case: &Case, max_new_tokens: Option<u32>) -> Completer {
    let multi_line = case.reference.trim_end_matches('\n').contains('\n');
    let unit = match (case.format, case.target) {
        (CaseFormat::Cceval | CaseFormat::History, _) => Unit::Statement,
        (_, Target::Line) if multi_line => Unit::Raw,
        (_, Target::Line) => Unit::Line,
        (_, Target::Function) => Unit::Block,
    };
    let max_new_tokens = match case.target {
        Target::Function => max_new_tokens.or(Some(FUNCTION_MAX_NEW_TOKENS)),
        Target::Line => max_new_tokens,
    };
    base.exact_for(Protocol {
        unit,
        max_new_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossfile_engine::backend::NoBackend;
    use crossfile_engine::complete::{Exact, Live, Mode};
    use crossfile_engine::config::Settings;
    use crossfile_engine::lang::Language;
    use crossfile_engine::prompt::testing::CharTokenizer;

    /// A case's completer is exact whatever the editor's is: no reused KV cache, no time budget.
    #[test]
    fn a_cases_completer_is_exact_and_unbudgeted() {
        let live = Completer::new(
            &Settings::default(),
            Arc::new(NoBackend),
            Arc::new(CharTokenizer::new(&[])),
            Mode::Live(Live::typing(true, Some(0), 100)),
        );
        for (format, target) in [
            (CaseFormat::Cceval, Target::Line),
            (CaseFormat::Repoeval, Target::Line),
            (CaseFormat::Repoeval, Target::Function),
            (CaseFormat::History, Target::Line),
        ] {
            let case = Case {
                id: "c".into(),
                task_id: "t".into(),
                format,
                target,
                language: Language::Python,
                repository: "repo".into(),
                path: "a.py".into(),
                line: 1,
                reference: "x".into(),
                prompt: "y = ".into(),
                right_context: None,
                provided: None,
                category: None,
                identifiers: Vec::new(),
                recent: Vec::new(),
                record_line: 1,
            };
            let exact = completer_for(&live, &case, None);
            assert!(
                matches!(
                    exact.mode(),
                    Mode::Exact(Exact {
                        sampling: None,
                        likelihood_of: None
                    })
                ),
                "{format:?} {target:?}"
            );
        }
    }
}
