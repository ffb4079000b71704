//! The names a line is about to use: the identifiers near the cursor, before and after it, each
//! with its distance to the cursor's line and whether it is reached through a dot (a member).

use std::collections::HashMap;

use super::Query;
use crate::lang::Language;

/// One name used near the cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameUse {
    pub name: String,
    /// Lines between its nearest use and the cursor's line (0: on it).
    pub distance: u32,
    /// Some use follows a dot (`obj.name`): a member, a method or a module's attribute.
    pub member: bool,
    /// Uses within the window.
    pub uses: u32,
}

/// Names too common to say anything about where a definition is.
const COMMON: &[&str] = &[
    "self",
    "cls",
    "this",
    "super",
    "True",
    "False",
    "None",
    "true",
    "false",
    "null",
    "undefined",
    "var",
    "let",
    "const",
    "args",
    "kwargs",
    "value",
    "i",
    "j",
    "k",
    "x",
    "y",
    "e",
];

/// Lines before the cursor (its own included) whose names count.
pub const BEFORE_LINES: usize = 30;
/// Lines from the cursor on (the rest of its line first) whose names count.
pub const AFTER_LINES: usize = 10;

/// The names `query`'s cursor is about: those of the [`BEFORE_LINES`] up to it and the
/// [`AFTER_LINES`] from it, or, for a query with a search text (EvoCodeBench's docstring), the
/// text's names, all at the cursor.
pub fn of_query(query: &Query, language: Language) -> Vec<NameUse> {
    match &query.search_text {
        Some(text) => near_cursor(text, "", language, usize::MAX, 0),
        None => near_cursor(
            &query.left,
            &query.right,
            language,
            BEFORE_LINES,
            AFTER_LINES,
        ),
    }
}

/// The names used in the last `before` lines of `left` (the text up to the cursor) and the
/// first `after` lines of `right` (from it), nearest first (then by name); keywords, common
/// names and one-letter names are left out, as are words inside string literals and line
/// comments.
fn near_cursor(
    left: &str,
    right: &str,
    language: Language,
    before: usize,
    after: usize,
) -> Vec<NameUse> {
    let mut found: HashMap<String, NameUse> = HashMap::new();
    let mut add = |name: &str, distance: u32, member: bool| {
        if name.len() < 2 || COMMON.contains(&name) || language.is_keyword(name) {
            return;
        }
        let entry = found.entry(name.to_string()).or_insert(NameUse {
            name: name.to_string(),
            distance,
            member,
            uses: 0,
        });
        entry.distance = entry.distance.min(distance);
        entry.member |= member;
        entry.uses += 1;
    };
    let left: Vec<&str> = left.split('\n').collect();
    for (distance, line) in left.iter().rev().take(before).enumerate() {
        scan(
            language,
            line,
            u32::try_from(distance).unwrap_or(u32::MAX),
            &mut add,
        );
    }
    // The cursor's line goes on in the right context's first line.
    for (distance, line) in right.split('\n').take(after).enumerate() {
        scan(
            language,
            line,
            u32::try_from(distance).unwrap_or(u32::MAX),
            &mut add,
        );
    }
    let mut names: Vec<NameUse> = found.into_values().collect();
    names.sort_by(|a, b| {
        a.distance
            .cmp(&b.distance)
            .then_with(|| a.name.cmp(&b.name))
    });
    names
}

/// Calls `add(name, distance, member)` for each identifier of `line`'s code.
fn scan(language: Language, line: &str, distance: u32, add: &mut impl FnMut(&str, u32, bool)) {
    let comment = if language == Language::Python {
        "#"
    } else {
        "//"
    };
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    let mut chars = line.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if let Some(q) = quote {
            if c == '\\' {
                chars.next();
            } else if c == q {
                quote = None;
            }
            continue;
        }
        if c == '"' || c == '\'' || c == '`' {
            quote = Some(c);
            continue;
        }
        if line[at..].starts_with(comment) {
            return;
        }
        if c.is_ascii_alphabetic() || c == '_' || c == '$' {
            let mut end = at + c.len_utf8();
            while let Some(&(next_at, next)) = chars.peek() {
                if next.is_ascii_alphanumeric() || next == '_' || next == '$' {
                    end = next_at + next.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            add(&line[at..end], distance, previous == '.');
            previous = 'a';
            continue;
        }
        if !c.is_whitespace() {
            previous = c;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Position;

    #[test]
    fn names_near_the_cursor_nearest_first() {
        let text = "\
from shapes.area import rectangle_area


def box_volume(width, height, depth):
    base = rectangle_area(width, height)  # the base's area
    label = \"rectangle_volume\"
    return base * depth + helpers.scale(base)
";
        let q = Query::new("m.py", text, Position { line: 6, col: 11 }).expect("cursor");
        let names = near_cursor(&q.left, &q.right, Language::Python, 20, 5);
        let got: Vec<(&str, u32, bool)> = names
            .iter()
            .map(|n| (n.name.as_str(), n.distance, n.member))
            .collect();
        assert_eq!(
            got,
            [
                ("base", 0, false),
                ("depth", 0, false),
                ("helpers", 0, false),
                ("scale", 0, true),
                ("label", 1, false),
                ("height", 2, false),
                ("rectangle_area", 2, false),
                ("width", 2, false),
                ("box_volume", 3, false),
                ("area", 6, true),
                ("shapes", 6, false),
            ]
        );
        // Words in strings and comments are not names; keywords neither.
        assert!(
            !names
                .iter()
                .any(|n| n.name == "rectangle_volume" || n.name == "the")
        );
        assert!(!names.iter().any(|n| n.name == "return" || n.name == "def"));
        assert_eq!(
            names[0].uses, 3,
            "base: twice on the cursor's line, once above"
        );
    }
}
