//! Deterministic cursors in a workspace: the middle of random non-blank lines, from a seed.

use crossfile_engine::Position;
use crossfile_engine::index::Snapshot;
use crossfile_engine::lang::Language;
use crossfile_engine::retrieve::Query;
use crossfile_engine::seeded::SplitMix64;

/// Up to `n` queries in files of `language`'s family, each in the middle of a random non-blank
/// line, the same for the same snapshot and seed.
pub fn sample_cursors(snapshot: &Snapshot, language: Language, n: usize, seed: u64) -> Vec<Query> {
    let files: Vec<_> = snapshot
        .files()
        .filter(|f| f.language.name() == language.name())
        .collect();
    let mut rng = SplitMix64(seed);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n.saturating_mul(20) {
        if out.len() == n || files.is_empty() {
            break;
        }
        let file = files[rng.below(files.len())];
        let lines: Vec<&str> = file.text.split('\n').collect();
        let line = rng.below(lines.len());
        if crossfile_engine::chunk::is_blank(lines[line]) {
            continue;
        }
        let half = lines[line].chars().count() / 2;
        let col: usize = lines[line].chars().take(half).map(char::len_utf8).sum();
        let position = Position {
            line: line as u32,
            col: col as u32,
        };
        if let Ok(query) = Query::new(&file.path, &file.text, position) {
            out.push(query);
        }
    }
    out
}
