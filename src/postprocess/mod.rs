//! Post-processing: cutting a raw model suggestion to the unit asked for.
//!
//! [`cceval_statement`] is CrossCodeEval's one-statement cut and the only implementation of it:
//! the metrics call it too.

mod overlap;
mod statement;

pub use overlap::drop_right_overlap;
pub use statement::cceval_statement;

use crate::lang::Language;

/// What a suggestion is cut to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// Up to the first newline.
    Line,
    /// One statement, by CrossCodeEval's rules.
    Statement,
    /// A block: lines until the indentation falls below the first line's, or brackets close.
    Block,
    /// Unchanged.
    Raw,
}

impl Unit {
    /// The config name: `line`, `statement`, `block`, `raw`.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Line => "line",
            Unit::Statement => "statement",
            Unit::Block => "block",
            Unit::Raw => "raw",
        }
    }

    pub fn from_name(name: &str) -> Option<Unit> {
        [Unit::Line, Unit::Statement, Unit::Block, Unit::Raw]
            .into_iter()
            .find(|u| u.name() == name)
    }
}

/// Cuts `raw` (generated at the end of `left`) to `unit`, then drops any tail that repeats the
/// start of `right` (live completion: the text after the cursor is already there).
pub fn apply(unit: Unit, language: Language, left: &str, right: &str, raw: &str) -> String {
    let _ = (unit, language, left, right, raw);
    todo!("postprocess: apply")
}
