//! `identifiers`: lexical search whose query is the names used near the cursor, each weighted by
//! how near it is, over the index's `bm25` chunks of other files.
//!
//! Where `bm25` queries with every term of the last lines before the cursor, this asks for the
//! whole identifiers of the lines around it (before and after, [`names::of_query`]), each a
//! term boosted by its nearness (`1 / (1 + lines / 4)`), and leaves out the cursor's whole file:
//! the prompt shows it already. After the second place of the 2025 context-collection challenge
//! for code completion (keyword search with the names near the cursor, ranked by distance).

use tantivy::Term;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query as TantivyQuery, TermQuery};
use tantivy::schema::IndexRecordOption;

use super::bm25::search_chunks;
use super::names;
use super::{Exclude, Hit, Query, RetrieveError, Retriever};
use crate::index::Snapshot;

/// Names looked for at most (the nearest).
const MAX_NAMES: usize = 32;

pub struct Identifiers;

impl Retriever for Identifiers {
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let Some(language) = query.language else {
            return Ok(Vec::new());
        };
        let names = names::of_query(query, language);
        if names.is_empty() || top_k == 0 {
            return Ok(Vec::new());
        }
        let fields = snapshot.fields();
        let should: Vec<(Occur, Box<dyn TantivyQuery>)> = names
            .iter()
            .take(MAX_NAMES)
            .map(|name| {
                let nearness = 1.0 / (1.0 + name.distance as f32 / 4.0);
                let term = TermQuery::new(
                    Term::from_field_text(fields.body, &name.name.to_lowercase()),
                    IndexRecordOption::WithFreqs,
                );
                let boosted: Box<dyn TantivyQuery> =
                    Box::new(BoostQuery::new(Box::new(term), nearness));
                (Occur::Should, boosted)
            })
            .collect();
        search_chunks(
            snapshot,
            query,
            Box::new(BooleanQuery::new(should)),
            top_k,
            Exclude::File,
        )
    }
}
