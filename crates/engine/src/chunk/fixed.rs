//! Fixed windows (CrossCodeEval): consecutive runs of N non-blank lines.

use super::Chunk;

/// Groups the non-blank lines into consecutive windows of `size` of them (the last may be
/// shorter). A window's range runs from its first to its last non-blank line.
pub(super) fn chunks(blank: &[bool], size: u32) -> Vec<Chunk> {
    let size = size.max(1);
    let mut out = Vec::new();
    let mut window: Option<(u32, u32)> = None; // (first line, kept lines so far)
    let mut last = 0;
    for (i, _) in blank.iter().enumerate().filter(|(_, blank)| !**blank) {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        last = i;
        let (first, kept) = window.unwrap_or((i, 0));
        if kept + 1 == size {
            out.push(Chunk {
                lines: first..i.saturating_add(1),
            });
            window = None;
        } else {
            window = Some((first, kept + 1));
        }
    }
    if let Some((first, _)) = window {
        out.push(Chunk {
            lines: first..last.saturating_add(1),
        });
    }
    out
}
