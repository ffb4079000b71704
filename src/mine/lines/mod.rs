//! Line cases: mining CrossCodeEval-style line-completion cases from any indexed workspace (`bench mine`).
//!
//! A case is a cursor inside a line of an indexed file, right before the line's first use of
//! an identifier that another file of the workspace defines or that the file imports from a
//! workspace module (the rule in `mine/rule.rs`). Its reference (`groundtruth`) is the rest of
//! that line without the newline, its `prompt` the file's text before the cursor and its
//! `right_context` the text after the reference, from the line's newline on, so the three
//! concatenated are the file's indexed text (CRLF read as LF). Cases carry no cross-file context.
//!
//! Sampling is deterministic for a seed and spread out: the languages present take turns (one
//! case each per turn, in the order Python, Java, TypeScript, C#, until each runs out); within a
//! language the files are visited round-robin in a seeded shuffled order, each visit taking one
//! seeded-random remaining cursor of the file. Files are parsed only when first visited, so a
//! large workspace costs little more than the files the cases come from. Non-UTF-8 files (decoded
//! with U+FFFD) are left out, since their text is not the file's; TypeScript declaration files
//! (`.d.ts`) give no cases (they declare, there is nothing to complete), though their
//! definitions count like any other file's.
//!
//! The output is sorted by language, path and line; task ids are `mined_<language>/<k>`, `k`
//! counting from 0 per language in that order.

pub(crate) mod leaves;
mod rule;

use crate::bench::cases::cceval::{CcevalMetadata, CcevalRecord};
use crate::index::{FileEntry, Snapshot};
use crate::lang::modules;
use crate::lang::{self, Language};
use crate::seeded::SplitMix64;

pub use rule::{
    CrossFileNames, Cursor, MAX_LINE_CHARS, MIN_REFERENCE_CHARS, Source, is_trivial_line,
    is_trivial_reference,
};

/// What to mine.
#[derive(Clone, Debug)]
pub struct MineParams {
    /// How many cases at most.
    pub n: usize,
    /// The seed of every random choice.
    pub seed: u64,
    /// `metadata.repository` of every case: the workspace's folder name, so a replay given the
    /// folder holding the workspace finds it at `<folder>/<repository>`.
    pub repository: String,
}

/// The mined cases and how far the workspace was searched.
#[derive(Clone, Debug)]
pub struct Mined {
    /// The cases, sorted by language, path and line.
    pub cases: Vec<CcevalRecord>,
    /// The cross-file identifier each case's reference starts with, parallel to `cases`.
    pub identifiers: Vec<String>,
    /// Cases per language family (`python`, `java`, `typescript`, `csharp`), for the languages
    /// the workspace has files of, in that order.
    pub per_language: Vec<(&'static str, usize)>,
    /// Every qualifying cursor was taken (fewer than asked for exist).
    pub exhausted: bool,
    /// Files the miner could use (UTF-8, of the four languages).
    pub files: usize,
    /// Files parsed for cursors.
    pub files_scanned: usize,
}

/// Mines up to `params.n` cases from `snapshot`, the same ones for the same snapshot and seed.
pub fn mine(snapshot: &Snapshot, params: &MineParams) -> Mined {
    let usable: Vec<&FileEntry> = snapshot
        .files()
        .map(|f| f.as_ref())
        .filter(|f| !f.lossy)
        .collect();
    let names = CrossFileNames::new(usable.iter().map(|f| source(f)));
    let mut pools: Vec<Pool> = families()
        .filter_map(|family| {
            let files: Vec<&FileEntry> = usable
                .iter()
                .copied()
                .filter(|f| f.language.name() == family && !f.path.ends_with(".d.ts"))
                .collect();
            (!files.is_empty()).then(|| Pool::new(family, files, params.seed))
        })
        .collect();
    let mut per_language: Vec<(&'static str, usize)> =
        pools.iter().map(|p| (p.family, 0)).collect();

    let mut picked: Vec<(usize, &FileEntry, Cursor)> = Vec::new();
    let mut active: Vec<usize> = (0..pools.len()).collect();
    while picked.len() < params.n && !active.is_empty() {
        active.retain(|&i| {
            if picked.len() >= params.n {
                return true;
            }
            match pools[i].next(&names) {
                Some((file, cursor)) => {
                    picked.push((i, file, cursor));
                    per_language[i].1 += 1;
                    true
                }
                None => false,
            }
        });
    }
    let exhausted = picked.len() < params.n;
    let files_scanned = pools.iter().map(Pool::scanned).sum();
    picked.sort_by(|a, b| (a.0, &a.1.path, a.2.line).cmp(&(b.0, &b.1.path, b.2.line)));

    let mut cases = Vec::with_capacity(picked.len());
    let mut identifiers = Vec::with_capacity(picked.len());
    let mut counters = vec![0usize; pools.len()];
    for (pool, file, cursor) in picked {
        let k = counters[pool];
        counters[pool] += 1;
        if let Some(case) = record(file, &cursor, pools[pool].family, k, &params.repository) {
            cases.push(case);
            identifiers.push(cursor.name);
        }
    }
    Mined {
        cases,
        identifiers,
        per_language,
        exhausted,
        files: usable.len(),
        files_scanned,
    }
}

/// The language families in output order.
fn families() -> impl Iterator<Item = &'static str> {
    let mut seen = Vec::new();
    Language::ALL.into_iter().filter_map(move |l| {
        let family = l.name();
        (!seen.contains(&family)).then(|| {
            seen.push(family);
            family
        })
    })
}

fn source(file: &FileEntry) -> Source<'_> {
    Source {
        path: &file.path,
        language: file.language,
        text: &file.text,
        outline: &file.outline,
    }
}

/// The case of one cursor (`None` only if the cursor is not inside the text).
fn record(
    file: &FileEntry,
    cursor: &Cursor,
    family: &str,
    k: usize,
    repository: &str,
) -> Option<CcevalRecord> {
    let text: &str = &file.text;
    Some(CcevalRecord {
        prompt: text.get(..cursor.offset)?.to_owned(),
        groundtruth: text.get(cursor.offset..cursor.line_end)?.to_owned(),
        right_context: text.get(cursor.line_end..)?.to_owned(),
        metadata: CcevalMetadata {
            task_id: format!("mined_{family}/{k}"),
            repository: repository.to_owned(),
            file: file.path.clone(),
            context_start_lineno: 0,
            groundtruth_start_lineno: cursor.line,
            right_context_start_lineno: cursor.line.saturating_add(1),
        },
        crossfile_context: None,
    })
}

/// The files of one language family and the cursors not yet taken, computed on first visit.
struct Pool<'s> {
    family: &'static str,
    files: Vec<&'s FileEntry>,
    /// Per file, its remaining cursors once computed.
    cursors: Vec<Option<Vec<Cursor>>>,
    /// Indices into `files` that may still have cursors, in visiting order.
    order: Vec<usize>,
    /// Position in `order` of the next visit.
    at: usize,
    rng: SplitMix64,
}

impl<'s> Pool<'s> {
    fn new(family: &'static str, files: Vec<&'s FileEntry>, seed: u64) -> Pool<'s> {
        // Each family has its own stream, so adding a language elsewhere changes no other's cases.
        let mut rng = SplitMix64(seed ^ family_salt(family));
        let mut order: Vec<usize> = (0..files.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        Pool {
            family,
            cursors: vec![None; files.len()],
            files,
            order,
            at: 0,
            rng,
        }
    }

    /// The next case: one seeded-random remaining cursor of the next file that has one.
    fn next(&mut self, names: &CrossFileNames<'_>) -> Option<(&'s FileEntry, Cursor)> {
        while !self.order.is_empty() {
            if self.at >= self.order.len() {
                self.at = 0;
            }
            let i = self.order[self.at];
            let file = self.files[i];
            let cursors = self.cursors[i].get_or_insert_with(|| {
                lang::parse(file.language, &file.text)
                    .map(|tree| names.cursors(source(file), &tree))
                    .unwrap_or_default()
            });
            if cursors.is_empty() {
                self.order.remove(self.at);
                continue;
            }
            let cursor = cursors.swap_remove(self.rng.below(cursors.len()));
            self.at += 1;
            return Some((file, cursor));
        }
        None
    }

    fn scanned(&self) -> usize {
        self.cursors.iter().filter(|c| c.is_some()).count()
    }
}

/// FNV-1a of the family name.
fn family_salt(family: &str) -> u64 {
    family.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
