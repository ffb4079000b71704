//! Typing along a suggestion: when the user types the first characters of the suggestion on
//! screen, the rest of it is the answer, at once and without the model.
//!
//! A shown suggestion keeps an [`Anchor`]: the length and a hash of the buffer's text before its
//! cursor and a hash of the text after it. A later request is typing along when the buffer still
//! starts with that text and ends with that text, and what lies between is a proper prefix of
//! the suggestion.

use std::hash::{DefaultHasher, Hash, Hasher};

/// Where a suggestion was shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Anchor {
    /// Bytes before the cursor.
    left_len: usize,
    left: u64,
    right: u64,
}

impl Anchor {
    /// The anchor of a cursor at byte `at` of `text` (a character boundary).
    pub fn new(text: &str, at: usize) -> Option<Anchor> {
        let (left, right) = (text.get(..at)?, text.get(at..)?);
        Some(Anchor {
            left_len: at,
            left: hash(left),
            right: hash(right),
        })
    }

    /// What is left of `shown` when `text`, with the cursor at byte `at`, is the anchored text
    /// with a proper, non-empty prefix of `shown` typed at the anchor's cursor.
    pub fn remainder<'s>(&self, shown: &'s str, text: &str, at: usize) -> Option<&'s str> {
        let typed = text.get(self.left_len..at)?;
        if typed.is_empty() || typed.len() >= shown.len() || !shown.starts_with(typed) {
            return None;
        }
        let same =
            hash(text.get(..self.left_len)?) == self.left && hash(text.get(at..)?) == self.right;
        same.then(|| &shown[typed.len()..])
    }
}

fn hash(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_the_start_of_a_suggestion_answers_its_rest() {
        let before = "def f(x):\n    return ";
        let after = "\n\nprint(f(2))\n";
        let shown = "x * 2 + 1";
        let anchor = Anchor::new(&format!("{before}{after}"), before.len()).expect("anchor");
        let typed = |t: &str| {
            let text = format!("{before}{t}{after}");
            anchor
                .remainder(shown, &text, before.len() + t.len())
                .map(str::to_string)
        };
        assert_eq!(typed("x").as_deref(), Some(" * 2 + 1"));
        assert_eq!(typed("x * 2 +").as_deref(), Some(" 1"));
        // Nothing typed yet, all of it typed, or something else typed: the model is asked.
        assert_eq!(typed(""), None);
        assert_eq!(typed("x * 2 + 1"), None);
        assert_eq!(typed("y"), None);
        // The text around the cursor changed elsewhere: not typing along.
        let edited = format!("def g(x):\n    return x{after}");
        assert_eq!(anchor.remainder(shown, &edited, before.len() + 1), None);
        let below = format!("{before}x\n\nprint(f(3))\n");
        assert_eq!(anchor.remainder(shown, &below, before.len() + 1), None);
        // A cursor that is not where the typing ended, or outside the text.
        let text = format!("{before}x{after}");
        assert_eq!(anchor.remainder(shown, &text, before.len() + 2), None);
        assert_eq!(anchor.remainder(shown, &text, text.len() + 5), None);
        // Multi-byte text is cut at characters only.
        let anchor = Anchor::new("é", 2).expect("anchor");
        assert_eq!(anchor.remainder("→ok", "é→", 5), Some("ok"));
        assert_eq!(anchor.remainder("→ok", "é\u{2192}", 3), None);
    }
}
