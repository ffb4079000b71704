//! Dropping the part of a suggestion that the text after the cursor already has.

/// `suggestion` without a suffix that equals a prefix of `right`'s first line (an editor's
/// auto-closed `)` or `"` after the cursor), so accepting it does not duplicate text.
pub fn drop_right_overlap(suggestion: &str, right: &str) -> String {
    let _ = (suggestion, right);
    todo!("postprocess: overlap")
}
