//! Where a suggestion is cut.

use super::Unit;

/// `[postprocess]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostprocessSettings {
    /// Default `line`.
    pub unit: Unit,
}
