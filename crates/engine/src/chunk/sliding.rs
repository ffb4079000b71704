//! Sliding windows (RepoCoder): overlapping N-line windows over all lines.

use super::Chunk;

/// Windows of `size` lines starting at line 0 and every `stride` lines after, up to and
/// including the first window that reaches the end; windows of blank lines only are skipped.
pub(super) fn chunks(blank: &[bool], size: u32, stride: u32) -> Vec<Chunk> {
    let (size, stride) = (size.max(1) as usize, stride.max(1) as usize);
    let mut out = Vec::new();
    let mut start = 0;
    while start < blank.len() {
        let end = (start + size).min(blank.len());
        if blank[start..end].contains(&false) {
            out.push(Chunk {
                lines: to_u32(start)..to_u32(end),
            });
        }
        if end == blank.len() {
            break;
        }
        start += stride;
    }
    out
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
