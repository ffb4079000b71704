//! What a finished completion leaves behind: how it was made ([`Done`]) and, per document, the
//! last one shown ([`LastCompletion`], kept in [`LastCompletions`]): typing along it is answered
//! from it, a better answer made in the background replaces it while the user types along, and
//! the inspection and scoring commands read it.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::along::Anchor;

use crossfile_engine::complete::Completion;
use crossfile_engine::retrieve::RetrieverSpec;

/// A completion and how it was made.
pub struct Done {
    /// Which completion of this process it is (1, 2, …): the answers of typing along it share it.
    pub serial: u64,
    pub completion: Completion,
    pub retriever: RetrieverSpec,
    pub latency_ms: f64,
}

impl Done {
    /// A finished completion, numbered after the last one this process made.
    pub fn new(completion: Completion, retriever: RetrieverSpec, latency_ms: f64) -> Done {
        static MADE: AtomicU64 = AtomicU64::new(0);
        Done {
            serial: MADE.fetch_add(1, Ordering::Relaxed) + 1,
            completion,
            retriever,
            latency_ms,
        }
    }
}

/// A cursor as the client gave it (a line and a character in the client's own units): kept and
/// compared, never interpreted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spot {
    pub line: u32,
    pub character: u32,
}

/// The last completion in a document.
pub struct LastCompletion {
    /// Where it was shown.
    pub position: Spot,
    /// Where the completion it came from was asked (`position` but for the answers of typing
    /// along it).
    pub asked_at: Spot,
    /// The replayed case whose cursor it was at.
    pub case_id: Option<String>,
    /// The suggestion from here on, as the model made it.
    pub shown: String,
    /// Bytes at the end of `shown` the client's buffer already held after the cursor (closers its
    /// editor typed, [`crate::live::along`]): it got `shown` without them ([`LastCompletion::answer`]).
    pub closed: usize,
    /// Where it was shown, to recognise the user typing along it (`None`: the document was not
    /// open).
    pub anchor: Option<Anchor>,
    /// The completion it came from (shared by the answers of typing along it).
    pub done: Arc<Done>,
}

impl LastCompletion {
    /// The suggestion as the client got it.
    pub fn answer(&self) -> &str {
        self.shown
            .get(..self.shown.len().saturating_sub(self.closed))
            .unwrap_or(&self.shown)
    }
}

/// The last completion of each document, by the caller's key for a document.
pub struct LastCompletions<K> {
    by_document: Mutex<HashMap<K, Arc<LastCompletion>>>,
}

impl<K> Default for LastCompletions<K> {
    fn default() -> Self {
        LastCompletions {
            by_document: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Eq + Hash + Clone> LastCompletions<K> {
    /// Keeps `last` as `document`'s last.
    pub fn remember(&self, document: K, last: Arc<LastCompletion>) {
        self.lock().insert(document, last);
    }

    /// `document`'s last completion.
    pub fn get(&self, document: &K) -> Option<Arc<LastCompletion>> {
        self.lock().get(document).cloned()
    }

    /// Typing along: when `text`, with the cursor at byte `at` (the client's `position`), is
    /// the text the last suggestion was shown in with a proper start of it typed (and perhaps
    /// closers the editor typed after the cursor), the rest of it, kept as the document's last
    /// and anchored at the new cursor.
    pub fn along(
        &self,
        document: &K,
        position: Spot,
        text: &str,
        at: usize,
    ) -> Option<Arc<LastCompletion>> {
        let mut kept = self.lock();
        let last = kept.get(document)?;
        let rest = last.anchor.as_ref()?.remainder(&last.shown, text, at)?;
        let along = Arc::new(LastCompletion {
            position,
            asked_at: last.asked_at,
            // What is scored at a case's cursor is what was shown there, not this rest.
            case_id: None,
            shown: rest.rest.to_string(),
            closed: rest.closed,
            anchor: Anchor::skipping(text, at, rest.closed),
            done: last.done.clone(),
        });
        kept.insert(document.clone(), along.clone());
        Some(along)
    }

    /// Replaces `first`, an answer of `document`, by `done`'s suggestion `shown` when the
    /// document's last is still `first` or an answer of typing along it and what was typed
    /// since is a start of `shown` too: the rest of `shown` becomes the last. Whether it did.
    pub fn replace_along(
        &self,
        document: &K,
        first: &LastCompletion,
        shown: &str,
        done: Arc<Done>,
    ) -> bool {
        let mut kept = self.lock();
        let Some(now) = kept.get(document) else {
            return false;
        };
        let Some(rest) = typed_since(first, now, shown) else {
            return false;
        };
        let replaced = Arc::new(LastCompletion {
            position: now.position,
            asked_at: first.asked_at,
            case_id: None,
            shown: rest.to_string(),
            // Worked out again from the buffer when it is typed along.
            closed: 0,
            anchor: now.anchor,
            done,
        });
        kept.insert(document.clone(), replaced);
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, Arc<LastCompletion>>> {
        self.by_document.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What is left of `shown` (asked where `first` was shown) once the user has typed what they
/// typed along `first` to reach `now`: when `now` is `first` or an answer of typing along
/// it, and what was typed is a start of `shown` too.
fn typed_since<'s>(
    first: &LastCompletion,
    now: &LastCompletion,
    shown: &'s str,
) -> Option<&'s str> {
    if !Arc::ptr_eq(&first.done, &now.done) {
        return None;
    }
    let typed = first
        .shown
        .get(..first.shown.len().checked_sub(now.shown.len())?)?;
    shown.strip_prefix(typed)
}

/// `text` cut to its first `limit` characters.
pub fn at_most_chars(mut text: String, limit: usize) -> String {
    if let Some((byte, _)) = text.char_indices().nth(limit) {
        text.truncate(byte);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_cut_by_characters() {
        assert_eq!(at_most_chars("abc".into(), 5), "abc");
        assert_eq!(at_most_chars("abc".into(), 3), "abc");
        assert_eq!(at_most_chars("é🎉中x".into(), 3), "é🎉中");
        assert_eq!(at_most_chars("é🎉".into(), 0), "");
        assert_eq!(at_most_chars(String::new(), 0), "");
    }

    fn done(suggestion: &str) -> Arc<Done> {
        let completion = Completion {
            suggestion: suggestion.into(),
            raw_suggestion: suggestion.into(),
            hits: Vec::new(),
            prompt: crossfile_engine::prompt::Prompt {
                text: String::new(),
                template: crossfile_engine::prompt::Template::Plain,
                crossfile: String::new(),
                left: String::new(),
                right: String::new(),
                preamble: String::new(),
                hits_used: 0,
                tokens: Default::default(),
            },
            generation: Default::default(),
            timings: Default::default(),
        };
        Arc::new(Done::new(completion, RetrieverSpec::Bm25, 1.0))
    }

    const BEFORE: &str = "def f(x):\n    return ";
    const AFTER: &str = "\n";

    /// `shown` kept as the last of document 1, shown at the end of `BEFORE`.
    fn shown(kept: &LastCompletions<u32>, shown: &str) -> Arc<LastCompletion> {
        let text = format!("{BEFORE}{AFTER}");
        let at = Spot {
            line: 1,
            character: 11,
        };
        let last = Arc::new(LastCompletion {
            position: at,
            asked_at: at,
            case_id: Some("case-1".into()),
            shown: shown.into(),
            closed: 0,
            anchor: Anchor::new(&text, BEFORE.len()),
            done: done(shown),
        });
        kept.remember(1, last.clone());
        last
    }

    /// Document 1 after typing `typed` at the suggestion's cursor.
    fn typing(kept: &LastCompletions<u32>, typed: &str) -> Option<Arc<LastCompletion>> {
        let text = format!("{BEFORE}{typed}{AFTER}");
        let spot = Spot {
            line: 1,
            character: 11 + typed.len() as u32,
        };
        kept.along(&1, spot, &text, BEFORE.len() + typed.len())
    }

    #[test]
    fn typing_along_keeps_the_rest_as_the_last_with_the_first_ones_origin() {
        let kept = LastCompletions::default();
        let first = shown(&kept, "x * 2 + 1");
        let along = typing(&kept, "x *").expect("typing along");
        assert_eq!(along.shown, " 2 + 1");
        assert_eq!(along.asked_at, first.asked_at);
        assert_eq!(along.position.character, 14);
        assert!(Arc::ptr_eq(&along.done, &first.done), "the same completion");
        assert_eq!(
            along.case_id, None,
            "a case scores what was shown at its cursor"
        );
        assert!(kept.get(&1).is_some_and(|l| Arc::ptr_eq(&l, &along)));
        // Typing on from there, and then off it.
        assert_eq!(
            typing(&kept, "x * 2").map(|l| l.shown.clone()).as_deref(),
            Some(" + 1")
        );
        assert!(typing(&kept, "x * 3").is_none());
        assert!(kept.get(&2).is_none() && kept.along(&2, Spot::default(), "", 0).is_none());
    }

    #[test]
    fn typing_along_inside_brackets_the_editor_closed_answers_without_its_closer() {
        let kept = LastCompletions::default();
        let first = shown(&kept, "f(x, y)");
        // `f(` typed; the editor closed it with `)` after the cursor.
        let text = format!("{BEFORE}f(){AFTER}");
        let spot = |character| Spot { line: 1, character };
        let along = kept
            .along(&1, spot(13), &text, BEFORE.len() + 2)
            .expect("typing along");
        assert_eq!((along.shown.as_str(), along.answer()), ("x, y)", "x, y"));
        // On inside them; a background answer replaces it with what was typed kept.
        let text = format!("{BEFORE}f(x){AFTER}");
        let along = kept
            .along(&1, spot(14), &text, BEFORE.len() + 3)
            .expect("typing along");
        assert_eq!(along.answer(), ", y");
        assert!(kept.replace_along(&1, &first, "f(x, y, z)", done("f(x, y, z)")));
        let along = kept
            .along(
                &1,
                spot(15),
                &format!("{BEFORE}f(x,){AFTER}"),
                BEFORE.len() + 4,
            )
            .expect("typing along the replacement");
        assert_eq!(along.answer(), " y, z");
    }

    #[test]
    fn a_background_answer_replaces_the_last_only_while_the_user_types_along_it() {
        let kept = LastCompletions::default();
        let first = shown(&kept, "x * 2");
        typing(&kept, "x").expect("typing along");
        // The replacement starts with what was typed: its rest becomes the last.
        assert!(kept.replace_along(&1, &first, "x * 2 + 1", done("x * 2 + 1")));
        let now = kept.get(&1).expect("a last");
        assert_eq!(now.shown, " * 2 + 1");
        assert_eq!(now.asked_at, first.asked_at);
        assert_eq!(now.position.character, 12);
        // One that does not start with what was typed, or after a new completion, does not.
        let first = shown(&kept, "x * 2");
        typing(&kept, "x").expect("typing along");
        assert!(!kept.replace_along(&1, &first, "y + 1", done("y + 1")));
        let other = shown(&kept, "z");
        assert!(!kept.replace_along(&1, &first, "x * 2", done("x * 2")));
        assert!(kept.get(&1).is_some_and(|l| Arc::ptr_eq(&l, &other)));
    }
}
