//! `bm25`: tantivy's BM25 over code terms of the index's `bm25` chunks.

use tantivy::TantivyDocument;
use tantivy::Term;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query as TantivyQuery, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};

use super::{Hit, Query, RetrieveError, Retriever, sort_hits};
use crate::index::Snapshot;
use crate::terms::code_terms;

pub struct Bm25 {
    /// Non-blank lines before the cursor (its partial line included) that form the query.
    pub query_lines: u32,
}

impl Retriever for Bm25 {
    fn retrieve(
        &self,
        snapshot: &Snapshot,
        query: &Query,
        top_k: usize,
    ) -> Result<Vec<Hit>, RetrieveError> {
        let window = Query::last_nonblank_lines(&query.left, self.query_lines as usize);
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
        let mut clauses: Vec<(Occur, Box<dyn TantivyQuery>)> =
            vec![(Occur::Must, Box::new(BooleanQuery::new(should)))];
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
                .map_err(|e| RetrieveError::Search(e.to_string()))?;
            let exhausted = top.len() < limit;
            let mut hits = Vec::with_capacity(top.len());
            for (score, address) in top {
                let doc: TantivyDocument = searcher
                    .doc(address)
                    .map_err(|e| RetrieveError::Search(e.to_string()))?;
                let path = doc.get_first(fields.path).and_then(|v| v.as_str());
                let chunk = doc.get_first(fields.chunk).and_then(|v| v.as_u64());
                let (Some(path), Some(chunk)) = (path, chunk) else {
                    continue;
                };
                let Some(file) = snapshot.file(path) else {
                    continue;
                };
                let Some(c) = file.chunks(kind).get(chunk as usize) else {
                    continue;
                };
                if query.overlaps_own_region(path, &c.lines) {
                    continue;
                }
                hits.push(Hit {
                    path: path.to_string(),
                    lines: c.lines.clone(),
                    score: f64::from(score),
                    text: c.text(kind, &file.text),
                    chunker: Some(kind),
                });
            }
            if hits.len() >= top_k || exhausted {
                sort_hits(&mut hits);
                hits.truncate(top_k);
                return Ok(hits);
            }
            limit *= 4;
        }
    }
}
