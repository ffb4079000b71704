//! Post-processing: cutting a raw model suggestion to the unit asked for.
//!
//! [`cceval_statement`] is CrossCodeEval's one-statement cut and the only implementation of it:
//! the metrics call it too.

mod cut;
mod overlap;
mod settings;
mod statement;

pub use cut::{block, first_line};
pub use overlap::drop_right_overlap;
pub use settings::PostprocessSettings;
pub use statement::cceval_statement;

use crate::lang::Language;

crate::choice! {
    /// What a suggestion is cut to (`[postprocess] unit`).
    pub enum Unit {
        /// Up to the first newline.
        Line,
        /// One statement, by CrossCodeEval's rules.
        Statement,
        /// A block: lines until the indentation falls below the first line's, or brackets close
        /// (the rule is in [`block`]'s module documentation).
        Block,
        /// Unchanged: no cut and no overlap dropped.
        Raw,
    }
}

/// Cuts `raw` (generated at the end of `left`) to `unit`, then drops any tail that repeats the
/// start of `right` (live completion: the text after the cursor is already there).
/// [`Unit::Raw`] returns `raw` unchanged.
pub fn apply(unit: Unit, language: Language, left: &str, right: &str, raw: &str) -> String {
    let statement;
    let cut = match unit {
        Unit::Raw => return raw.to_string(),
        Unit::Line => first_line(raw),
        Unit::Block => block(language, left, raw),
        Unit::Statement => {
            statement = cceval_statement(language, left, raw);
            &statement
        }
    };
    drop_right_overlap(cut, right)
}

#[cfg(test)]
mod tests;
