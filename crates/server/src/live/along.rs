//! Typing along a suggestion: when the user types the first characters of the suggestion on
//! screen, the rest of it is the answer, at once and without the model.
//!
//! A shown suggestion keeps an [`Anchor`]: the length and a hash of the buffer's text before its
//! cursor and a hash of the text after it. A later request is typing along when the buffer still
//! starts with that text and ends with that text, and what lies between is a proper prefix of
//! the suggestion.
//!
//! Editors close what the user opens: VS Code types `)` after the cursor when `(` is typed (its
//! auto-closing brackets and quotes; Neovim's autopairs plugins do the same). Such closers between
//! the cursor and the anchored text after it are still typing along when the rest of the
//! suggestion ends with them: the editor already holds its end, and the answer is the rest
//! without it ([`Along::answer`]), nothing when the closers are all that is left.

use std::hash::{DefaultHasher, Hash, Hasher};

/// What an editor types itself after the cursor when the user types the opening character.
const CLOSERS: [char; 6] = [')', ']', '}', '"', '\'', '`'];

/// At most this many closers in a row after the cursor are taken for the editor's own.
const MAX_CLOSED: usize = 8;

/// Typing along: what is left of the suggestion, of which the editor already holds the last
/// `closed` bytes after the cursor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Along<'s> {
    pub rest: &'s str,
    pub closed: usize,
}

impl<'s> Along<'s> {
    /// What the user is to be shown at the cursor: the rest but for what the editor closed.
    pub fn answer(&self) -> &'s str {
        &self.rest[..self.rest.len() - self.closed]
    }
}

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
        Anchor::skipping(text, at, 0)
    }

    /// The anchor of a cursor at byte `at` of `text` whose next `closed` bytes the editor typed
    /// itself ([`Along::closed`]): the text after them is what must stay.
    pub fn skipping(text: &str, at: usize, closed: usize) -> Option<Anchor> {
        let (left, right) = (text.get(..at)?, text.get(at.checked_add(closed)?..)?);
        Some(Anchor {
            left_len: at,
            left: hash(left),
            right: hash(right),
        })
    }

    /// What is left of `shown` when `text`, with the cursor at byte `at`, is the anchored text
    /// with a proper, non-empty prefix of `shown` typed at the anchor's cursor, and perhaps
    /// closers the editor typed after the cursor, with which the rest ends.
    pub fn remainder<'s>(&self, shown: &'s str, text: &str, at: usize) -> Option<Along<'s>> {
        let typed = text.get(self.left_len..at)?;
        if typed.is_empty() || typed.len() >= shown.len() || !shown.starts_with(typed) {
            return None;
        }
        if hash(text.get(..self.left_len)?) != self.left {
            return None;
        }
        let rest = &shown[typed.len()..];
        let after = text.get(at..)?;
        let closers = after
            .char_indices()
            .take_while(|&(i, c)| i < MAX_CLOSED && CLOSERS.contains(&c))
            .map(|(i, c)| i + c.len_utf8());
        std::iter::once(0)
            .chain(closers)
            .find(|&closed| {
                rest.ends_with(&after[..closed]) && hash(&after[closed..]) == self.right
            })
            .map(|closed| Along { rest, closed })
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
                .map(|along| along.answer().to_string())
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
        let rest = |along: Option<Along<'_>>| along.map(|a| a.answer().to_string());
        assert_eq!(
            rest(anchor.remainder("→ok", "é→", 5)).as_deref(),
            Some("ok")
        );
        assert_eq!(anchor.remainder("→ok", "é\u{2192}", 3), None);
    }

    #[test]
    fn what_the_editor_closed_after_the_cursor_is_not_shown_again() {
        let before = "    x = f";
        let after = "\nprint(x)\n";
        let shown = "(a, [b, c])";
        let anchor = Anchor::new(&format!("{before}{after}"), before.len()).expect("anchor");
        // `(` typed and `)` closed by the editor: the rest but for the `)` it holds.
        let text = format!("{before}(){after}");
        let along = anchor.remainder(shown, &text, before.len() + 1);
        assert_eq!(
            along,
            Some(Along {
                rest: "a, [b, c])",
                closed: 1
            })
        );
        assert_eq!(along.map(|a| a.answer()), Some("a, [b, c]"));
        // Anchored there (skipping the closer), typing on inside the brackets, which nest.
        let at = before.len() + 1;
        let next = Anchor::skipping(&text, at, 1).expect("anchor");
        let text = format!("{before}(a, []){after}");
        let along = next.remainder("a, [b, c])", &text, at + 4);
        assert_eq!(along.map(|a| a.answer()), Some("b, c"));
        // A closer the rest does not end with, or text after it that changed: the model is asked.
        assert_eq!(
            anchor.remainder("(a) + 1", &format!("{before}(){after}"), at),
            None
        );
        assert_eq!(
            anchor.remainder(shown, &format!("{before}()){after}"), at),
            None
        );
        // Something other than a closer after the cursor.
        assert_eq!(
            anchor.remainder(shown, &format!("{before}(x{after}"), at),
            None
        );
        // Nothing but the closers left: all of it is typed, nothing is left to show.
        let text = format!("{before}(a, [b, c]){after}");
        let along = next.remainder("a, [b, c])", &text, at + 8);
        assert_eq!(along.map(|a| a.answer()), Some(""));
    }
}
