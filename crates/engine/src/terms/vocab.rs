//! A process-wide term interner, so hot loops compare `u32`s instead of strings.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

/// An interned term.
pub type TermId = u32;

/// Append-only map between terms and dense ids, shared by every index in the process.
#[derive(Default)]
pub struct Vocab {
    inner: RwLock<VocabInner>,
}

#[derive(Default)]
struct VocabInner {
    ids: HashMap<Box<str>, TermId>,
    terms: Vec<Box<str>>,
}

impl Vocab {
    /// The process-wide vocabulary.
    pub fn global() -> &'static Vocab {
        static GLOBAL: OnceLock<Vocab> = OnceLock::new();
        GLOBAL.get_or_init(Vocab::default)
    }

    /// The id of `term`, interning it if new.
    pub fn intern(&self, term: &str) -> TermId {
        if let Some(id) = self.get(term) {
            return id;
        }
        let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
        if let Some(&id) = inner.ids.get(term) {
            return id;
        }
        let id = TermId::try_from(inner.terms.len()).unwrap_or(TermId::MAX);
        inner.terms.push(term.into());
        inner.ids.insert(term.into(), id);
        id
    }

    /// Interns every term of `terms`, taking the write lock once.
    pub fn intern_all<'a>(&self, terms: impl IntoIterator<Item = &'a str>) -> Vec<TermId> {
        let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
        terms
            .into_iter()
            .map(|term| {
                if let Some(&id) = inner.ids.get(term) {
                    return id;
                }
                let id = TermId::try_from(inner.terms.len()).unwrap_or(TermId::MAX);
                inner.terms.push(term.into());
                inner.ids.insert(term.into(), id);
                id
            })
            .collect()
    }

    /// The id of `term` if it was ever interned.
    pub fn get(&self, term: &str) -> Option<TermId> {
        self.inner
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .ids
            .get(term)
            .copied()
    }

    /// Number of distinct terms interned so far.
    pub fn len(&self) -> usize {
        self.inner
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .terms
            .len()
    }

    /// Whether nothing was interned yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
