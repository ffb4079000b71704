//! A definition as a skeleton: its signature, its doc's first line, what a class declares
//! outside its methods (fields, constants), and each method as a skeleton too, every body elided.
//! Hierarchical context pruning (Zhang et al., 2024) found that dependencies shown this way cost
//! little accuracy against their whole text, in a fraction of the tokens.

use super::{Language, Outline, SymbolKind};

/// Lines a skeleton keeps at most; a longer one ends with an elision.
pub const MAX_SKELETON_LINES: usize = 60;

/// A function of at most this many lines is shown whole.
pub const WHOLE_LINES: usize = 6;

/// The skeleton of `outline.symbols[index]` in `text` (the file the outline is of).
pub fn skeleton(language: Language, text: &str, outline: &Outline, index: usize) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let Some(symbol) = outline.symbols.get(index) else {
        return String::new();
    };
    let range = to_usize(symbol.lines.start)..to_usize(symbol.lines.end).min(lines.len());
    let mut out: Vec<String> = Vec::new();
    out.extend(doc_above(language, &lines, range.start));
    if symbol.kind != SymbolKind::Class {
        out.extend(elided(language, &lines, range));
        return finish(out);
    }
    // A class: its own lines kept, each definition directly in it shown as a skeleton.
    let children: Vec<std::ops::Range<usize>> = outline
        .symbols
        .iter()
        .enumerate()
        .filter(|&(i, s)| {
            i != index && s.lines.start > symbol.lines.start && s.lines.end <= symbol.lines.end
        })
        .map(|(_, s)| to_usize(s.lines.start)..to_usize(s.lines.end).min(lines.len()))
        .collect();
    let mut at = range.start;
    while at < range.end {
        // The outermost child starting here (nested functions are inside a method's range).
        match children
            .iter()
            .filter(|c| c.start == at)
            .max_by_key(|c| c.end)
        {
            Some(child) if child.end > child.start => {
                // A doc comment above the child is among the class's own lines, kept whole.
                out.extend(elided(language, &lines, child.clone()));
                at = child.end;
            }
            _ => {
                if !inside_any(&children, at) {
                    out.push(lines[at].to_string());
                }
                at += 1;
            }
        }
        if out.len() > MAX_SKELETON_LINES {
            break;
        }
    }
    finish(out)
}

/// A function's signature and doc's first line, its body elided; the whole of a definition of at
/// most [`WHOLE_LINES`] lines (a getter's body says more than its elision, at a line's cost).
fn elided(language: Language, lines: &[&str], range: std::ops::Range<usize>) -> Vec<String> {
    let Some(first) = lines.get(range.start) else {
        return Vec::new();
    };
    if range.len() <= WHOLE_LINES {
        return lines[range].iter().map(|l| (*l).to_string()).collect();
    }
    let indent = leading(first);
    let header_end = signature_end(language, lines, range.clone());
    let mut out: Vec<String> = lines[range.start..=header_end]
        .iter()
        .map(|l| (*l).to_string())
        .collect();
    if header_end + 1 >= range.end {
        return out;
    }
    let body_indent = lines[header_end + 1..range.end]
        .iter()
        .find(|l| !l.trim().is_empty())
        .map_or_else(|| format!("{indent}    "), |l| leading(l).to_string());
    if language == Language::Python {
        if let Some(doc) = lines.get(header_end + 1).and_then(|l| docstring_line(l)) {
            out.push(format!("{body_indent}{doc}"));
        }
        out.push(format!("{body_indent}..."));
    } else {
        out.push(format!("{body_indent}// …"));
        if let Some(last) = lines[..range.end]
            .last()
            .filter(|l| l.trim().starts_with('}'))
        {
            out.push((*last).to_string());
        }
    }
    out
}

/// The last line of a definition's signature: for Python the first line ending in `:` (outside a
/// trailing comment), for the others the first that opens the body (`{`), ends a declaration
/// without one (`;`) or an expression body (`=>`); the first line when none is found within
/// the definition or its first 12 lines.
fn signature_end(language: Language, lines: &[&str], range: std::ops::Range<usize>) -> usize {
    let last = range.end.min(range.start + 12);
    (range.start..last)
        .find(|&i| {
            let code = code_part(language, lines[i]).trim_end();
            match language {
                Language::Python => code.ends_with(':'),
                _ => code.contains('{') || code.ends_with(';') || code.contains("=>"),
            }
        })
        .unwrap_or(range.start)
}

/// The first line of a Python docstring that starts `line`, closed on that line.
fn docstring_line(line: &str) -> Option<String> {
    let text = line.trim();
    let quote = ["\"\"\"", "'''", "r\"\"\"", "r'''"]
        .into_iter()
        .find(|q| text.starts_with(q))?;
    let body = &text[quote.len()..];
    let closing = &quote[quote.len() - 3..];
    Some(match body.find(closing) {
        Some(_) => text.to_string(),
        None => format!("{quote}{}{closing}", body.trim_end()),
    })
}

/// The first line of the doc comment right above line `start` (Java, C#, TypeScript: `/** … */`,
/// `///`), as a line comment; nothing for Python (its docstrings are inside).
fn doc_above(language: Language, lines: &[&str], start: usize) -> Vec<String> {
    if language == Language::Python {
        return Vec::new();
    }
    let mut first = start;
    while first > 0 {
        let above = lines[first - 1].trim_start();
        if above.starts_with("///")
            || above.starts_with("/**")
            || above.starts_with('*')
            || above.starts_with("//")
            || above.starts_with('@')
            || above.starts_with('[')
        {
            first -= 1;
        } else {
            break;
        }
    }
    let summary = lines[first..start].iter().find_map(|l| {
        let text = l
            .trim()
            .trim_start_matches('/')
            .trim_start_matches('*')
            .trim()
            .trim_end_matches("*/")
            .trim();
        let text = text
            .strip_prefix("<summary>")
            .unwrap_or(text)
            .trim_end_matches("</summary>")
            .trim();
        (!text.is_empty() && !text.starts_with('@') && !text.starts_with('['))
            .then(|| text.to_string())
    });
    match (summary, lines.get(start)) {
        (Some(summary), Some(line)) => vec![format!("{}// {summary}", leading(line))],
        _ => Vec::new(),
    }
}

/// `line` without a trailing line comment (a `#` or `//` outside quotes).
fn code_part(language: Language, line: &str) -> &str {
    let marker = if language == Language::Python {
        "#"
    } else {
        "//"
    };
    let mut quote: Option<char> = None;
    for (at, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' || c == '`' => quote = Some(c),
            None if line[at..].starts_with(marker) => return &line[..at],
            None => {}
        }
    }
    line
}

fn inside_any(ranges: &[std::ops::Range<usize>], at: usize) -> bool {
    ranges.iter().any(|r| r.contains(&at))
}

fn leading(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

fn finish(mut out: Vec<String>) -> String {
    if out.len() > MAX_SKELETON_LINES {
        out.truncate(MAX_SKELETON_LINES);
        out.push("    ...".into());
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

fn to_usize(line: u32) -> usize {
    usize::try_from(line).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::{outline, parse};

    fn skeleton_of(language: Language, text: &str, name: &str) -> String {
        let tree = parse(language, text).expect("parses");
        let outline = outline(language, text, &tree);
        let index = outline
            .symbols
            .iter()
            .position(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name} in {:?}", outline.symbols));
        skeleton(language, text, &outline, index)
    }

    #[test]
    fn a_python_class_keeps_fields_and_method_signatures() {
        let text = "\
class Store:
    \"\"\"Keeps things.\"\"\"

    limit = 10

    def __init__(self, name,
                 size=3):
        \"\"\"Makes a store.

        Longer text.
        \"\"\"
        self.name = name
        self.items = []

    def add(self, item):  # one more
        self.items.append(item)
        return len(self.items)
";
        let got = skeleton_of(Language::Python, text, "Store");
        assert_eq!(
            got,
            "\
class Store:
    \"\"\"Keeps things.\"\"\"

    limit = 10

    def __init__(self, name,
                 size=3):
        \"\"\"Makes a store.\"\"\"
        ...

    def add(self, item):  # one more
        self.items.append(item)
        return len(self.items)
"
        );
        // A short method is whole: its body costs two lines.
        let add = skeleton_of(Language::Python, text, "add");
        assert_eq!(
            add,
            "    def add(self, item):  # one more\n        self.items.append(item)\n        return len(self.items)\n"
        );
    }

    #[test]
    fn a_java_class_keeps_fields_and_doc_summaries() {
        let text = "\
package org.a;

public class Counter {
    private int count;

    /**
     * Adds one.
     * @return the new count
     */
    public int increment() {
        if (count == Integer.MAX_VALUE) {
            throw new IllegalStateException();
        }
        count += 1;
        log(count);
        return count;
    }

    public int get() { return count; }
}
";
        let got = skeleton_of(Language::Java, text, "Counter");
        assert_eq!(
            got,
            "\
public class Counter {
    private int count;

    /**
     * Adds one.
     * @return the new count
     */
    public int increment() {
        // …
    }

    public int get() { return count; }
}
"
        );
        let increment = skeleton_of(Language::Java, text, "increment");
        assert_eq!(
            increment,
            "    // Adds one.\n    public int increment() {\n        // …\n    }\n"
        );
    }

    #[test]
    fn typescript_and_csharp_functions_lose_their_bodies() {
        let ts = "\
export function area(width: number,
                     height: number): number {
  if (width < 0 || height < 0) {
    throw new Error(\"negative\");
  }
  const a = width * height;
  return a;
}
";
        assert_eq!(
            skeleton_of(Language::TypeScript, ts, "area"),
            "export function area(width: number,\n                     height: number): number {\n  // …\n}\n"
        );
        let cs = "\
namespace A {
    public class Box {
        /// <summary>The width.</summary>
        public int Width { get; set; }

        /// <summary>Doubles it.</summary>
        public int Twice(int x)
        {
            if (x > int.MaxValue / 2)
            {
                throw new OverflowException();
            }
            return 2 * x;
        }
    }
}
";
        let got = skeleton_of(Language::CSharp, cs, "Twice");
        assert_eq!(
            got,
            "        // Doubles it.\n        public int Twice(int x)\n        {\n            // …\n        }\n"
        );
    }
}
