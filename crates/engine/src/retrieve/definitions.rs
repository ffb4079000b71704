//! `definitions`: where the names used near the cursor are defined, as skeletons.
//!
//! The names of the lines around the cursor (before and after it, [`names::of_query`]) are
//! looked up in the workspace's symbol table ([`Snapshot::definitions`]); each definition in
//! another file of the query's language family scores by how near the cursor its name is used,
//! where the file is (a module the cursor's file imports first, then its folder, then anywhere:
//! [`Origins`]), how many definitions share the name, and whether the use matches the kind (a
//! member use names a method; a plain one a function or class). The best `top_k` are shown as
//! skeletons ([`lang::skeleton`]): signature, doc's first line, a class's fields and method
//! signatures, bodies elided (a short function whole). A member use (`obj.get`) counts only
//! definitions the file can see (imported, its folder) unless the name has one; a definition
//! scoring under [`MIN_SCORE`] is left out, so a cursor near nothing known gets nothing. The
//! cursor's own file is never returned: the prompt shows it.

use std::collections::HashMap;

use super::names::{self, NameUse};
use super::{Hit, Origin, Origins, Query, RetrieveError, Retriever};
use crate::chunk::ChunkerKind;
use crate::index::{Snapshot, SymbolRef};
use crate::lang::{SymbolKind, skeleton};

/// A name defined in more files than this, none of them imported, says nothing of where.
const MAX_PLACES: usize = 6;

/// Definitions scoring less are guesses, and no context beats a wrong one: a name with one
/// definition, in a file not imported, used once four lines from the cursor scores 0.15; an
/// imported one used on the cursor's line 1.
const MIN_SCORE: f64 = 0.15;

pub struct Definitions;

impl Retriever for Definitions {
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let Some(language) = query.language else {
            return Ok(Vec::new());
        };
        if top_k == 0 {
            return Ok(Vec::new());
        }
        let names = names::of_query(query, language);
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let origins = Origins::new(snapshot, query);
        let mut scores: HashMap<(&str, usize), (f64, SymbolRef<'_>)> = HashMap::new();
        for name in &names {
            let found: Vec<SymbolRef<'_>> = snapshot
                .definitions(&name.name)
                .into_iter()
                .filter(|d| d.file.path != query.path && d.file.language.name() == language.name())
                .collect();
            if found.is_empty() {
                continue;
            }
            let mut places: Vec<&str> = found.iter().map(|d| d.file.path.as_str()).collect();
            places.dedup();
            let imported = found.iter().any(|d| origins.imports(&d.file.path));
            if places.len() > MAX_PLACES && !imported {
                continue;
            }
            let share = 1.0 / places.len() as f64;
            for d in found {
                let place = if origins.imports(&d.file.path) {
                    Origin::Imported
                } else {
                    origins.of(&d.file.path)
                };
                // `obj.get` says nothing of which `get`, unless the file can see only one.
                if name.member && place == Origin::Elsewhere && places.len() > 1 {
                    continue;
                }
                let score = weight(name, &d, place, share);
                let entry = scores
                    .entry((d.file.path.as_str(), d.index))
                    .or_insert((0.0, d));
                entry.0 += score;
            }
        }
        let mut ranked: Vec<(f64, SymbolRef<'_>)> = scores
            .into_values()
            .filter(|(score, _)| *score >= MIN_SCORE)
            .collect();
        ranked.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| a.1.file.path.cmp(&b.1.file.path))
                .then_with(|| a.1.symbol.lines.start.cmp(&b.1.symbol.lines.start))
        });
        // A definition inside one already kept adds nothing its skeleton does not show.
        let mut kept: Vec<(f64, SymbolRef<'_>)> = Vec::new();
        for (score, d) in ranked {
            if kept.len() == top_k {
                break;
            }
            let inside = kept.iter().any(|(_, k)| {
                k.file.path == d.file.path
                    && k.symbol.kind == SymbolKind::Class
                    && k.symbol.lines.start <= d.symbol.lines.start
                    && d.symbol.lines.end <= k.symbol.lines.end
            });
            if !inside {
                kept.push((score, d));
            }
        }
        Ok(kept
            .into_iter()
            .map(|(score, d)| Hit {
                path: d.file.path.clone(),
                lines: d.symbol.lines.clone(),
                score,
                text: skeleton::skeleton(d.file.language, &d.file.text, &d.file.outline, d.index),
                chunker: Some(ChunkerKind::Syntax),
                source: None,
            })
            .collect())
    }
}

/// What one use of a name adds to a definition of it.
fn weight(name: &NameUse, d: &SymbolRef<'_>, origin: Origin, share: f64) -> f64 {
    let nearness = 1.0 / (1.0 + f64::from(name.distance) / 4.0);
    let place = match origin {
        Origin::Imported => 1.0,
        Origin::SameDir => 0.6,
        Origin::SameFile | Origin::Elsewhere => 0.3,
    };
    let kind = match (name.member, d.symbol.kind) {
        (true, SymbolKind::Method) | (false, SymbolKind::Function | SymbolKind::Class) => 1.0,
        _ => 0.5,
    };
    let repeated = 1.0 + f64::from(name.uses.min(4) - 1) * 0.25;
    nearness * place * kind * share * repeated
}
