//! Dropping the part of a suggestion that the text after the cursor already has.

/// `suggestion` without a suffix that equals a prefix of `right`'s first line (an editor's
/// auto-closed `)` or `"` after the cursor), so accepting it does not duplicate text.
///
/// The longest such suffix is dropped; the first line of `right` ends at its first `\n` (a `\r`
/// before it does not count). The whole suggestion goes only when it is exactly such a prefix
/// (nothing new would be inserted). With an empty first line nothing is dropped.
pub fn drop_right_overlap(suggestion: &str, right: &str) -> String {
    let first = right.split('\n').next().unwrap_or(right);
    let first = first.strip_suffix('\r').unwrap_or(first);
    let longest = first.len().min(suggestion.len());
    (1..=longest)
        .rev()
        .filter(|&len| first.is_char_boundary(len))
        .find(|&len| suggestion.ends_with(&first[..len]))
        .map_or(suggestion, |len| &suggestion[..suggestion.len() - len])
        .to_string()
}
