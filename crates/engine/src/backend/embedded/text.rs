//! The generated text, decoded as token bytes arrive and cut before the first stop sequence.

use crate::backend::{GenerateRequest, after_leading_line_break};

/// The generated text, decoded as bytes arrive (a character may be split across tokens) and
/// cut before the first stop sequence (which may be split across tokens too).
pub(super) struct Text<'s> {
    text: String,
    /// Bytes of an incomplete character at the end.
    pending: Vec<u8>,
    stops: &'s [String],
    longest_stop: usize,
    /// Stops are looked for only after a leading line break
    /// ([`GenerateRequest::may_start_below`]).
    may_start_below: bool,
}

impl<'s> Text<'s> {
    /// The text of an answer to `request`, cut at its stops.
    pub(super) fn new(request: &'s GenerateRequest) -> Text<'s> {
        Text::with_stops(&request.stop, request.may_start_below)
    }

    fn with_stops(stops: &'s [String], may_start_below: bool) -> Text<'s> {
        Text {
            text: String::new(),
            pending: Vec::new(),
            stops,
            longest_stop: stops.iter().map(String::len).max().unwrap_or(0),
            may_start_below,
        }
    }

    /// Appends a token's bytes; true when a stop sequence has appeared (the text is then cut
    /// before it).
    pub(super) fn push(&mut self, bytes: &[u8]) -> bool {
        let before = self.text.len();
        self.pending.extend_from_slice(bytes);
        let mut rest = self.pending.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    self.text.push_str(valid);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // Only the valid prefix was checked, so this cannot fail.
                    self.text
                        .push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        // Invalid bytes, not a character still arriving.
                        Some(n) => {
                            self.text.push(char::REPLACEMENT_CHARACTER);
                            rest = after.get(n..).unwrap_or_default();
                        }
                        None => {
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        self.cut(before)
    }

    /// Looks for a stop sequence that ends in the text added after byte `before`.
    fn cut(&mut self, before: usize) -> bool {
        let mut from = before.saturating_sub(self.longest_stop.saturating_sub(1));
        while !self.text.is_char_boundary(from) {
            from -= 1;
        }
        if self.may_start_below {
            from = from.max(after_leading_line_break(&self.text).unwrap_or(0));
        }
        let found = self
            .stops
            .iter()
            .filter(|stop| !stop.is_empty())
            .filter_map(|stop| self.text.get(from..)?.find(stop.as_str()))
            .min();
        match found {
            Some(at) => {
                self.text.truncate(from + at);
                self.pending.clear();
                true
            }
            None => false,
        }
    }

    /// The text with only whole characters: what a decode cut short (by its time budget) keeps.
    pub(super) fn whole_characters(self) -> String {
        self.text
    }

    pub(super) fn finish(mut self) -> String {
        if !self.pending.is_empty() {
            self.text.push(char::REPLACEMENT_CHARACTER);
        }
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes `pieces` through [`Text`] and renders what it kept and where it stopped.
    fn check(stops: &[&str], pieces: &[&[u8]], expect: &str) {
        check_below(stops, false, pieces, expect);
    }

    fn check_below(stops: &[&str], may_start_below: bool, pieces: &[&[u8]], expect: &str) {
        let stops: Vec<String> = stops.iter().map(|s| s.to_string()).collect();
        let mut text = Text::with_stops(&stops, may_start_below);
        let mut stopped_at = None;
        for (i, piece) in pieces.iter().enumerate() {
            if text.push(piece) {
                stopped_at = Some(i);
                break;
            }
        }
        let got = format!("{:?} stopped at {stopped_at:?}", text.finish());
        assert_eq!(got, expect);
    }

    #[test]
    fn text_decodes_split_characters_and_cuts_before_stops() {
        check(&[], &[b"a", b"b"], r#""ab" stopped at None"#);
        check(
            &["\n"],
            &[b"x = 1", b"\n", b"y"],
            r#""x = 1" stopped at Some(1)"#,
        );
        // A stop split across tokens, and one inside a single token.
        check(&["\n\n"], &[b"a\n", b"\nb"], r#""a" stopped at Some(1)"#);
        check(&["end"], &[b"weekend!"], r#""week" stopped at Some(0)"#);
        // The earliest of several stops wins.
        check(&["b", "a"], &[b"xab"], r#""x" stopped at Some(0)"#);
        // "é" (c3 a9) and "🦀" (f0 9f a6 80) split across tokens.
        check(
            &[],
            &[b"\xc3", b"\xa9", b"\xf0\x9f", b"\xa6", b"\x80"],
            r#""é🦀" stopped at None"#,
        );
        check(
            &["🦀"],
            &[b"a\xf0\x9f", b"\xa6\x80b"],
            r#""a" stopped at Some(1)"#,
        );
        // A character never completed, and bytes that are not UTF-8.
        check(&[], &[b"a\xf0\x9f"], r#""a�" stopped at None"#);
        check(&[], &[b"a\xff", b"b"], r#""a�b" stopped at None"#);
        check(&[""], &[b"a"], r#""a" stopped at None"#);
    }

    #[test]
    fn an_answer_that_may_start_below_keeps_its_leading_line_break() {
        let nl = &["\n"];
        // The next line, whether its line break and indentation come as one token or several.
        check_below(
            nl,
            true,
            &[b"\n    ", b"return x", b"\n", b"y"],
            r#""\n    return x" stopped at Some(2)"#,
        );
        check_below(
            nl,
            true,
            &[b"  \n", b"pass\nz"],
            r#""  \npass" stopped at Some(1)"#,
        );
        // Code before the line break: it stops there, as without the setting.
        check_below(
            nl,
            true,
            &[b"x)", b"\n", b"y"],
            r#""x)" stopped at Some(1)"#,
        );
        // A blank line after the first line break stops it: the answer stays blank.
        check_below(
            nl,
            true,
            &[b"\n", b"\n", b"y"],
            r#""\n" stopped at Some(1)"#,
        );
        // Without the setting the leading line break stops it.
        check_below(
            nl,
            false,
            &[b"\n    ", b"return x"],
            r#""" stopped at Some(0)"#,
        );
    }
}
