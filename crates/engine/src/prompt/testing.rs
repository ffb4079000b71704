//! Test tokenizers: one token per character, with special tokens and an optional cost where
//! parts join, so layouts and budgets can be checked without a model.

use crate::tokenize::Tokenizer;

/// One token per character; the listed special tokens are one token each and are the only
/// entries `token_id` knows. With `newline_tax`, a `\n` followed by a character other than
/// `\n` costs one more token, so a joined text can count more than its parts.
pub struct CharTokenizer {
    pub specials: Vec<String>,
    pub newline_tax: bool,
}

const TAX: u32 = 0x11_0000;
const SPECIAL: u32 = 0x12_0000;

impl CharTokenizer {
    pub fn new(specials: &[&str]) -> CharTokenizer {
        CharTokenizer {
            specials: specials
                .iter()
                .filter(|s| !s.is_empty())
                .map(|s| s.to_string())
                .collect(),
            newline_tax: false,
        }
    }

    pub fn taxing(specials: &[&str]) -> CharTokenizer {
        CharTokenizer {
            newline_tax: true,
            ..CharTokenizer::new(specials)
        }
    }
}

impl Tokenizer for CharTokenizer {
    fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        let mut rest = text;
        'outer: while let Some(c) = rest.chars().next() {
            for (i, special) in self.specials.iter().enumerate() {
                if let Some(after) = rest.strip_prefix(special.as_str()) {
                    ids.push(SPECIAL + i as u32);
                    rest = after;
                    continue 'outer;
                }
            }
            ids.push(u32::from(c));
            rest = &rest[c.len_utf8()..];
            if self.newline_tax && c == '\n' && rest.chars().next().is_some_and(|n| n != '\n') {
                ids.push(TAX);
            }
        }
        ids
    }

    fn decode(&self, ids: &[u32]) -> String {
        ids.iter()
            .filter(|&&id| id != TAX)
            .map(|&id| match id.checked_sub(SPECIAL) {
                Some(i) => self.specials.get(i as usize).cloned().unwrap_or_default(),
                None => char::from_u32(id).map(String::from).unwrap_or_default(),
            })
            .collect()
    }

    fn token_id(&self, token: &str) -> Option<u32> {
        let i = self.specials.iter().position(|s| s == token)?;
        Some(SPECIAL + i as u32)
    }
}
