//! Counting a GGUF vocabulary's tokens piece by piece, without building an encoding.
//!
//! A byte-level BPE tokenizer splits text into pieces (special tokens first, then the
//! pre-tokenizer's expressions) and runs BPE on each piece alone, so a text's token count is the
//! sum of its pieces' counts. Code repeats its pieces (`self`, ` =`, `\n    `), so each piece's
//! count is kept once computed: a count is then a walk of the splitting expressions and a table
//! look-up per piece. `tokenizers`' own `encode` does the same splitting but tracks every byte's
//! offsets through it and builds an encoding; for a token budget that was most of the time of a
//! completion request (`crossfile bench lsp`).
//!
//! The pieces are found exactly as `tokenizers` finds them: the same expressions in the same
//! regex engine ([`SysRegex`]), each match and each gap its own piece, digits split off one by
//! one with `char::is_numeric`, special tokens matched leftmost-longest. A piece's count is the
//! BPE model's own on its byte-level form. Tests hold [`PieceCounter::count`] equal to the
//! length of `encode` for every supported pre-tokenizer.

use std::collections::HashMap;
use std::sync::RwLock;

use aho_corasick::{AhoCorasick, MatchKind};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::utils::SysRegex;
use tokenizers::{Model, OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer};

/// How a vocabulary's pre-tokenizer splits text before BPE, in order: digits one by one (if
/// `digits`), then each expression in turn (each match and each gap its own piece); the pieces'
/// bytes are then mapped to GPT-2's byte alphabet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Splitting {
    pub digits: bool,
    pub expressions: Vec<&'static str>,
}

/// Counts are kept for at most this many distinct pieces; past it the table starts again, so it
/// stays a few megabytes (a piece is mostly a word or a run of spaces or punctuation).
const MAX_KNOWN: usize = 1 << 17;

/// A token counter for a byte-level BPE vocabulary, equal to counting `encode`'s ids.
pub struct PieceCounter {
    /// Special tokens, matched whole before anything else (one token each).
    specials: Option<AhoCorasick>,
    digits: bool,
    expressions: Vec<SysRegex>,
    /// Maps a piece's bytes to GPT-2's byte alphabet, as the tokenizer does before BPE.
    byte_level: ByteLevel,
    /// Token counts of the pieces seen so far.
    known: RwLock<HashMap<Box<str>, usize, rustc_hash::FxBuildHasher>>,
}

impl PieceCounter {
    /// A counter splitting by `splitting`, with `specials` the text of the special tokens.
    pub fn new<'s>(
        splitting: &Splitting,
        specials: impl IntoIterator<Item = &'s str>,
    ) -> Result<PieceCounter, String> {
        let specials: Vec<&str> = specials.into_iter().filter(|s| !s.is_empty()).collect();
        let specials = if specials.is_empty() {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&specials)
                    .map_err(|e| format!("special tokens: {e}"))?,
            )
        };
        let expressions = splitting
            .expressions
            .iter()
            .map(|expression| {
                SysRegex::new(expression).map_err(|e| format!("expression {expression:?}: {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(PieceCounter {
            specials,
            digits: splitting.digits,
            expressions,
            byte_level: ByteLevel::new(false, true, false),
            known: RwLock::new(HashMap::default()),
        })
    }

    /// The number of tokens `model` makes of `text`; `None` if the model fails on a piece (the
    /// caller then counts the way `encode` does, failure included).
    pub fn count(&self, model: &impl Model, text: &str) -> Option<usize> {
        let mut specials = 0;
        let mut total = Some(0);
        let mut piece = |piece: &str| {
            total = total
                .zip(self.piece_count(model, piece))
                .map(|(t, n)| t + n);
        };
        let mut from = 0;
        if let Some(matcher) = &self.specials {
            for special in matcher.find_iter(text) {
                self.split_digits(&text[from..special.start()], &mut piece);
                specials += 1;
                from = special.end();
            }
        }
        self.split_digits(&text[from..], &mut piece);
        total.map(|t| t + specials)
    }

    /// Splits off each numeric character as a piece of its own (if the vocabulary does).
    fn split_digits(&self, text: &str, piece: &mut dyn FnMut(&str)) {
        if !self.digits {
            return self.split(text, 0, piece);
        }
        let mut from = 0;
        for (at, c) in text.char_indices().filter(|(_, c)| c.is_numeric()) {
            let end = at + c.len_utf8();
            self.split(&text[from..at], 0, piece);
            self.split(&text[at..end], 0, piece);
            from = end;
        }
        self.split(&text[from..], 0, piece);
    }

    /// Splits `text` by the expressions from the `step`-th on: each match and each gap between
    /// them a piece, split in turn by the next expression.
    fn split(&self, text: &str, step: usize, piece: &mut dyn FnMut(&str)) {
        if text.is_empty() {
            return;
        }
        let Some(expression) = self.expressions.get(step) else {
            return piece(text);
        };
        let mut from = 0;
        for (start, end) in expression.find_iter(text) {
            self.split(&text[from..start], step + 1, piece);
            self.split(&text[start..end], step + 1, piece);
            from = end;
        }
        self.split(&text[from..], step + 1, piece);
    }

    /// The tokens of one piece, from the table or from the model.
    fn piece_count(&self, model: &impl Model, piece: &str) -> Option<usize> {
        if let Some(&n) = self.known.read().ok()?.get(piece) {
            return Some(n);
        }
        let n = self.model_count(model, piece)?;
        if let Ok(mut known) = self.known.write() {
            if known.len() >= MAX_KNOWN {
                known.clear();
            }
            known.insert(piece.into(), n);
        }
        Some(n)
    }

    /// The tokens the model makes of `piece` in its byte-level form.
    fn model_count(&self, model: &impl Model, piece: &str) -> Option<usize> {
        let mut mapped = PreTokenizedString::from(piece);
        self.byte_level.pre_tokenize(&mut mapped).ok()?;
        let mut n = 0;
        for (text, _, _) in mapped.get_splits(OffsetReferential::Original, OffsetType::Byte) {
            n += model.tokenize(text).ok()?.len();
        }
        Some(n)
    }
}
