//! `bm25`: tantivy's BM25 over code terms of the index's `bm25` chunks.
//!
//! The query is the code terms of the last `retrieve.query_lines` non-blank lines before the
//! cursor (10 by default), restricted to chunks of the query's language family; chunks in the
//! query's own region are left out, and ties rank by path, then first line.

use tantivy::Term;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query as TantivyQuery, TermQuery};
use tantivy::schema::IndexRecordOption;

use super::{Exclude, Hit, Query, RetrieveError, Retriever};
use crate::index::Snapshot;
use crate::terms::code_terms;

pub struct Bm25 {
    /// Non-blank lines before the cursor (its partial line included) that form the query.
    pub query_lines: u32,
    /// What of the cursor's own file is left out.
    pub exclude: Exclude,
}

impl Retriever for Bm25 {
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let window =
            query.search_window(|left| Query::last_nonblank_lines(left, self.query_lines as usize));
        let mut terms = code_terms(&window);
        terms.sort_unstable();
        terms.dedup();
        if terms.is_empty() || top_k == 0 {
            return Ok(Vec::new());
        }
        let fields = snapshot.fields();
        let should: Vec<(Occur, Box<dyn TantivyQuery>)> = terms
            .iter()
            .map(|t| {
                let q: Box<dyn TantivyQuery> = Box::new(TermQuery::new(
                    Term::from_field_text(fields.body, t),
                    IndexRecordOption::WithFreqs,
                ));
                (Occur::Should, q)
            })
            .collect();
        search_chunks(
            snapshot,
            query,
            Box::new(BooleanQuery::new(should)),
            top_k,
            self.exclude,
        )
    }
}

/// The `top_k` chunks of the index's `bm25` chunker that `terms` (a query over the body field)
/// ranks best among the query's language family, none that `exclude` leaves out of the query's
/// own file; ties by path, then first line.
pub(super) fn search_chunks(
    snapshot: &Snapshot,
    query: &Query,
    terms: Box<dyn TantivyQuery>,
    top_k: usize,
    exclude: Exclude,
) -> Result<Vec<Hit>, RetrieveError> {
    let fields = snapshot.fields();
    let mut clauses: Vec<(Occur, Box<dyn TantivyQuery>)> = vec![(Occur::Must, terms)];
    if let Some(language) = query.language {
        let filter = TermQuery::new(
            Term::from_field_text(fields.lang, language.name()),
            IndexRecordOption::Basic,
        );
        clauses.push((
            Occur::Must,
            Box::new(ConstScoreQuery::new(Box::new(filter), 0.0)),
        ));
    }
    let tantivy_query = BooleanQuery::new(clauses);

    let searcher = snapshot.searcher();
    let kind = snapshot.bm25_chunker();
    let mut limit = top_k * 4 + 16;
    loop {
        let top = searcher
            .search(&tantivy_query, &TopDocs::with_limit(limit).order_by_score())
            .map_err(search_error)?;
        let exhausted = top.len() < limit;
        // (score, file, chunk) from fast fields; texts only for the hits that are kept.
        let mut found = Vec::with_capacity(top.len());
        for (score, address) in top {
            let fast = searcher.segment_reader(address.segment_ord).fast_fields();
            let key = fast
                .u64("file_key")
                .map_err(search_error)?
                .first(address.doc_id);
            let chunk = fast
                .u64("chunk")
                .map_err(search_error)?
                .first(address.doc_id);
            let (Some(key), Some(chunk)) = (key, chunk) else {
                continue;
            };
            let Some(file) = snapshot.file_by_key(key) else {
                continue;
            };
            let Some(c) = file.chunks(kind).get(chunk as usize) else {
                continue;
            };
            if !exclude.leaves_out(query, &file.path, &c.lines) {
                found.push((f64::from(score), file, c));
            }
        }
        if found.len() >= top_k || exhausted {
            found.sort_by(|a, b| {
                b.0.total_cmp(&a.0)
                    .then_with(|| a.1.path.cmp(&b.1.path))
                    .then_with(|| a.2.lines.start.cmp(&b.2.lines.start))
            });
            found.truncate(top_k);
            return Ok(found
                .into_iter()
                .map(|(score, file, c)| Hit {
                    path: file.path.clone(),
                    lines: c.lines.clone(),
                    score,
                    text: c.text(kind, &file.text),
                    chunker: Some(kind),
                    source: None,
                })
                .collect());
        }
        limit *= 4;
    }
}

fn search_error(e: tantivy::TantivyError) -> RetrieveError {
    RetrieveError::Search(e.to_string())
}
