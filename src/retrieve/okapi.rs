//! rank_bm25's BM25Okapi (placeholder until the verified port lands).

use std::collections::HashMap;

use crate::terms::TermId;

pub struct OkapiDoc<'a> {
    pub len: u32,
    pub terms: &'a [(TermId, u32)],
}

pub fn term_counts(tokens: &[TermId]) -> Vec<(TermId, u32)> {
    let mut out: Vec<(TermId, u32)> = Vec::new();
    let mut at: HashMap<TermId, usize> = HashMap::new();
    for &t in tokens {
        match at.get(&t) {
            Some(&i) => out[i].1 += 1,
            None => {
                at.insert(t, out.len());
                out.push((t, 1));
            }
        }
    }
    out
}

pub fn okapi_scores(docs: &[OkapiDoc<'_>], query: &[TermId]) -> Vec<f64> {
    if docs.is_empty() {
        return Vec::new();
    }
    let n = docs.len() as f64;
    let total: u64 = docs.iter().map(|d| u64::from(d.len)).sum();
    let avgdl = total as f64 / n;
    let mut nd: Vec<(TermId, u32)> = Vec::new();
    let mut at: HashMap<TermId, usize> = HashMap::new();
    for d in docs {
        for &(t, _) in d.terms {
            match at.get(&t) {
                Some(&i) => nd[i].1 += 1,
                None => {
                    at.insert(t, nd.len());
                    nd.push((t, 1));
                }
            }
        }
    }
    let mut idf: HashMap<TermId, f64> = HashMap::new();
    let mut sum = 0.0;
    let mut negative = Vec::new();
    for &(t, f) in &nd {
        let v = (n - f64::from(f) + 0.5).ln() - (f64::from(f) + 0.5).ln();
        idf.insert(t, v);
        sum += v;
        if v < 0.0 {
            negative.push(t);
        }
    }
    let eps = 0.25 * (sum / nd.len() as f64);
    for t in negative {
        idf.insert(t, eps);
    }
    docs.iter()
        .map(|d| {
            let mut s = 0.0;
            for q in query {
                let Some(&(_, tf)) = d.terms.iter().find(|(t, _)| t == q) else {
                    continue;
                };
                let Some(&w) = idf.get(q) else { continue };
                let tf = f64::from(tf);
                s += w * (tf * 2.5 / (tf + 1.5 * (1.0 - 0.75 + 0.75 * f64::from(d.len) / avgdl)));
            }
            s
        })
        .collect()
}
