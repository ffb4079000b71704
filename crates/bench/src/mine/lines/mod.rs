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
//! A file's candidate cursors pass CrossCodeEval's quality filters (`filters.rs`: prompt lines,
//! reference tokens, duplicate references) when the file is parsed; each drawn case is then
//! audited for leaks (`leaks.rs`: its reference verbatim in another indexed file), all drawn
//! cases in one pass. A flagged case is kept with `metadata.leak` (the other files' paths), or
//! dropped and replaced by further draws with [`Filters::drop_leaks`].
//!
//! The output is sorted by language, path and line; task ids are `mined_<language>/<k>`, `k`
//! counting from 0 per language in that order.

mod filters;
mod leaks;
pub(crate) mod leaves;
mod rule;

use serde::Serialize;

use crate::bench::cases::cceval::CcevalMetadata;
use crossfile_engine::index::{FileEntry, Snapshot};
use crossfile_engine::lang::modules;
use crossfile_engine::lang::{self, Language};
use crossfile_engine::seeded::SplitMix64;

pub use filters::{
    CCEVAL_MAX_REFERENCE_TOKENS, CCEVAL_MIN_REFERENCE_TOKENS, DEFAULT_MIN_LEAK_CHARS,
    DEFAULT_MIN_PROMPT_LINES, Dropped, Filters, reference_tokens,
};
pub use rule::{
    CrossFileNames, MAX_LINE_CHARS, MIN_REFERENCE_CHARS, Source, UseSite, is_trivial_line,
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
    /// Which candidate cursors become cases, and the leak audit.
    pub filters: Filters,
}

/// One mined case as written: a CrossCodeEval record (`bench::cases::cceval::CcevalRecord`
/// reads it back, ignoring `metadata.leak`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MinedRecord {
    /// The file's text before the cursor.
    pub prompt: String,
    /// The reference: the rest of the cursor's line, without its newline.
    pub groundtruth: String,
    /// The file's text after the reference, from the newline that ends the cursor's line.
    pub right_context: String,
    pub metadata: MinedMetadata,
}

/// CrossCodeEval's metadata, and the leak audit's finding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MinedMetadata {
    /// CrossCodeEval's fields, written at the top level of `metadata`.
    #[serde(flatten)]
    pub cceval: CcevalMetadata,
    /// The other files whose text holds the reference verbatim, in path order; absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub leak: Vec<String>,
}

/// The mined cases and how far the workspace was searched.
#[derive(Clone, Debug)]
pub struct Mined {
    /// The cases, sorted by language, path and line.
    pub cases: Vec<MinedRecord>,
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
    /// Candidate cursors of the files parsed: lines with a cross-file identifier use that the
    /// trivial-line rules keep, before the quality filters.
    pub candidates: usize,
    /// What each filter dropped (of `candidates`; leaks of the cases drawn).
    pub dropped: Dropped,
    /// Cases written with `metadata.leak` (0 with [`Filters::drop_leaks`]).
    pub leaks: usize,
}

/// Mines up to `params.n` cases from `snapshot`, the same ones for the same snapshot and seed.
pub fn mine(snapshot: &Snapshot, params: &MineParams) -> Mined {
    let indexed: Vec<&FileEntry> = snapshot.files().map(|f| f.as_ref()).collect();
    let usable: Vec<&FileEntry> = indexed.iter().copied().filter(|f| !f.lossy).collect();
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

    let filters = &params.filters;
    let mut turns = Turns {
        active: (0..pools.len()).collect(),
        at: 0,
    };
    let mut picked: Vec<(usize, &FileEntry, UseSite, Vec<String>)> = Vec::new();
    let mut leaks = 0;
    let mut dropped_leaks = 0;
    // Draw what is missing, audit the draw, keep or drop what leaks, until full or exhausted.
    while picked.len() < params.n {
        let drawn = turns.draw(&mut pools, params.n - picked.len(), &names, filters);
        if drawn.is_empty() {
            break;
        }
        let audited: Vec<leaks::Audited> = drawn
            .iter()
            .map(|(_, file, cursor)| leaks::Audited {
                path: &file.path,
                reference: file
                    .text
                    .get(cursor.offset..cursor.line_end)
                    .unwrap_or_default(),
            })
            .collect();
        let found = leaks::audit(&indexed, &audited, filters.min_leak_chars);
        for ((pool, file, cursor), leak) in drawn.into_iter().zip(found) {
            if !leak.is_empty() {
                if filters.drop_leaks {
                    dropped_leaks += 1;
                    continue;
                }
                leaks += 1;
            }
            per_language[pool].1 += 1;
            picked.push((pool, file, cursor, leak));
        }
    }
    let exhausted = picked.len() < params.n;
    let files_scanned = pools.iter().map(Pool::scanned).sum();
    let candidates = pools.iter().map(|p| p.candidates).sum();
    let mut dropped = Dropped {
        leak: dropped_leaks,
        ..Dropped::default()
    };
    for pool in &pools {
        dropped.add(pool.dropped);
    }
    picked.sort_by(|a, b| (a.0, &a.1.path, a.2.line).cmp(&(b.0, &b.1.path, b.2.line)));

    let mut cases = Vec::with_capacity(picked.len());
    let mut identifiers = Vec::with_capacity(picked.len());
    let mut counters = vec![0usize; pools.len()];
    for (pool, file, cursor, leak) in picked {
        let k = counters[pool];
        counters[pool] += 1;
        if let Some(case) = record(
            file,
            &cursor,
            pools[pool].family,
            k,
            &params.repository,
            leak,
        ) {
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
        candidates,
        dropped,
        leaks,
    }
}

/// Whose turn it is: the pools that may still have cursors, taking one case each in turn.
struct Turns {
    active: Vec<usize>,
    /// Position in `active` of the next pool to draw from.
    at: usize,
}

impl Turns {
    /// Up to `want` cases, one per pool in turn, continuing where the last draw stopped.
    fn draw<'s>(
        &mut self,
        pools: &mut [Pool<'s>],
        want: usize,
        names: &CrossFileNames<'_>,
        filters: &Filters,
    ) -> Vec<(usize, &'s FileEntry, UseSite)> {
        let mut out = Vec::new();
        while out.len() < want && !self.active.is_empty() {
            if self.at >= self.active.len() {
                self.at = 0;
            }
            let i = self.active[self.at];
            match pools.get_mut(i).and_then(|p| p.next(names, filters)) {
                Some((file, cursor)) => {
                    out.push((i, file, cursor));
                    self.at += 1;
                }
                None => {
                    self.active.remove(self.at);
                }
            }
        }
        out
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
    cursor: &UseSite,
    family: &str,
    k: usize,
    repository: &str,
    leak: Vec<String>,
) -> Option<MinedRecord> {
    let text: &str = &file.text;
    Some(MinedRecord {
        prompt: text.get(..cursor.offset)?.to_owned(),
        groundtruth: text.get(cursor.offset..cursor.line_end)?.to_owned(),
        right_context: text.get(cursor.line_end..)?.to_owned(),
        metadata: MinedMetadata {
            cceval: CcevalMetadata {
                task_id: format!("mined_{family}/{k}"),
                repository: repository.to_owned(),
                file: file.path.clone(),
                context_start_lineno: 0,
                groundtruth_start_lineno: cursor.line,
                right_context_start_lineno: cursor.line.saturating_add(1),
            },
            leak,
        },
    })
}

/// The files of one language family and the cursors not yet taken, computed on first visit.
struct Pool<'s> {
    family: &'static str,
    files: Vec<&'s FileEntry>,
    /// Per file, its remaining cursors once computed.
    cursors: Vec<Option<Vec<UseSite>>>,
    /// Indices into `files` that may still have cursors, in visiting order.
    order: Vec<usize>,
    /// Position in `order` of the next visit.
    at: usize,
    rng: SplitMix64,
    /// Candidate cursors of the files parsed, before the filters.
    candidates: usize,
    /// What the filters dropped of them.
    dropped: Dropped,
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
            candidates: 0,
            dropped: Dropped::default(),
        }
    }

    /// The next case: one seeded-random remaining cursor of the next file that has one, of the
    /// cursors that pass `filters`.
    fn next(
        &mut self,
        names: &CrossFileNames<'_>,
        filters: &Filters,
    ) -> Option<(&'s FileEntry, UseSite)> {
        while !self.order.is_empty() {
            if self.at >= self.order.len() {
                self.at = 0;
            }
            let i = self.order[self.at];
            let file = self.files[i];
            let (candidates, dropped) = (&mut self.candidates, &mut self.dropped);
            let cursors = self.cursors[i].get_or_insert_with(|| {
                let all = lang::parse(file.language, &file.text)
                    .map(|tree| names.cursors(source(file), &tree))
                    .unwrap_or_default();
                *candidates += all.len();
                filters::apply(all, &file.text, filters, dropped)
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
