//! Tests of the chunkers: snapshots per chunker and language, edge rows, and invariants.

use std::fmt::Write;
use std::path::Path;

use expect_test::{ExpectFile, expect_file};

use super::{Chunk, ChunkerKind, ChunkerSettings, chunk, chunk_texts, is_blank};
use crate::lang::{self, Language, Outline};

/// Small windows, so that short fixtures show every rule.
const SMALL: ChunkerSettings = ChunkerSettings {
    fixed_lines: 4,
    sliding_lines: 8,
    sliding_stride: 4,
    syntax_max_lines: 10,
};

/// Chunks a fixture's one file ([`crate::fixture`]; an unknown extension has no outline) with
/// [`SMALL`] settings and renders each chunk as `--- start..end` and its text (`\r` shown as
/// `\\r`). Also checks the invariants of every chunker.
fn check(kind: ChunkerKind, fixture: &str, expect: ExpectFile) {
    let fixture = crate::fixture::Fixture::parse(fixture);
    let file = fixture.files.first().expect("a fixture with one file");
    let text = file.text.as_str();
    let language = Language::from_path(Path::new(&file.path));
    let outline = language.and_then(|language| outline(language, text));
    let chunks = chunk(kind, &SMALL, text, outline.as_ref());
    assert_invariants(kind, &SMALL, text, &chunks);
    let mut rendered = String::new();
    for (chunk, text) in chunks.iter().zip(chunk_texts(kind, text, &chunks)) {
        let text = text.replace('\r', "\\r"); // Visible, and safe from line-end conversion.
        let _ = writeln!(
            rendered,
            "--- {}..{}\n{text}",
            chunk.lines.start, chunk.lines.end
        );
    }
    expect.assert_eq(&rendered);
}

fn outline(language: Language, text: &str) -> Option<Outline> {
    lang::parse(language, text).map(|tree| lang::outline(language, text, &tree))
}

const PYTHON: &str = r#"//- store.py
"""A store."""
import os
from typing import List

LIMIT = 3  
   

@cache
def small(a):
    return a + 1


class Store(Base):
    """Keeps items."""

    kind = "store"

    def __init__(self, items):
        self.items = items

    def long(self, x):
        y = x + 1
        y = y + 1

        y = y + 2
        y = y + 3
        y = y + 4
        y = y + 5
        y = y + 6
        y = y + 7
        return y

    class Meta:
        ordering = ["name"]

if __name__ == "__main__":
    main()
"#;

const JAVA: &str = r#"//- Store.java
package shop;

import java.util.List;

/** A store. */
public class Store {
    private final List<String> items;
    private int size;

    public Store(List<String> items) {
        this.items = items;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (String item : items) {
            sb.append(item);
            sb.append(",");
        }
        sb.append(size);
        sb.append("]");
        return sb.toString();
    }
}

interface Shelf { void put(String item); }
"#;

const TYPESCRIPT: &str = r#"//- store.ts
import { Item } from './item';
import * as log from './log';

export const LIMIT = 3;

export const double = (x: number): number => x * 2;

export class Store {
    private items: Item[] = [];

    add(item: Item): void {
        this.items.push(item);
        log.info('added', item);
    }

    @memo
    total(): number {
        let sum = 0;
        for (const item of this.items) {
            sum += item.price;
        }
        return sum;
    }
}

export function helper(): void {}
"#;

const CSHARP: &str = "//- Store.cs\r
using System;\r
using System.Collections.Generic;\r
\r
namespace Shop\r
{\r
    public class Store\r
    {\r
        private readonly List<string> items = new();\r
\r
        public void Add(string item)\r
        {\r
            items.Add(item);\r
        }\r
\r
        public int Count()\r
        {\r
            var n = 0;\r
            foreach (var item in items)\r
            {\r
                n++;\r
            }\r
            return n;\r
        }\r
    }\r
\r
    public enum Mode { On, Off }\r
}\r
";

#[test]
fn python() {
    check(
        ChunkerKind::Fixed,
        PYTHON,
        expect_file!["snapshots/python.fixed.txt"],
    );
    check(
        ChunkerKind::Sliding,
        PYTHON,
        expect_file!["snapshots/python.sliding.txt"],
    );
    check(
        ChunkerKind::Syntax,
        PYTHON,
        expect_file!["snapshots/python.syntax.txt"],
    );
}

#[test]
fn java() {
    check(
        ChunkerKind::Fixed,
        JAVA,
        expect_file!["snapshots/java.fixed.txt"],
    );
    check(
        ChunkerKind::Sliding,
        JAVA,
        expect_file!["snapshots/java.sliding.txt"],
    );
    check(
        ChunkerKind::Syntax,
        JAVA,
        expect_file!["snapshots/java.syntax.txt"],
    );
}

#[test]
fn typescript() {
    check(
        ChunkerKind::Fixed,
        TYPESCRIPT,
        expect_file!["snapshots/typescript.fixed.txt"],
    );
    check(
        ChunkerKind::Sliding,
        TYPESCRIPT,
        expect_file!["snapshots/typescript.sliding.txt"],
    );
    check(
        ChunkerKind::Syntax,
        TYPESCRIPT,
        expect_file!["snapshots/typescript.syntax.txt"],
    );
}

/// The C# fixture has CRLF line ends: lines keep their `\r`.
#[test]
fn csharp_crlf() {
    check(
        ChunkerKind::Fixed,
        CSHARP,
        expect_file!["snapshots/csharp.fixed.txt"],
    );
    check(
        ChunkerKind::Sliding,
        CSHARP,
        expect_file!["snapshots/csharp.sliding.txt"],
    );
    check(
        ChunkerKind::Syntax,
        CSHARP,
        expect_file!["snapshots/csharp.syntax.txt"],
    );
}

/// Without an outline, syntax chunking is windows of `fixed_lines` over all lines.
#[test]
fn syntax_without_outline() {
    check(
        ChunkerKind::Syntax,
        &PYTHON.replacen("//- store.py", "//- store.txt", 1),
        expect_file!["snapshots/python.syntax-no-outline.txt"],
    );
}

/// Edge rows, with default settings (the last row with zeros, which behave as 1).
#[test]
fn edge_rows() {
    use ChunkerKind::{Fixed, Sliding, Syntax};
    #[rustfmt::skip]
    let rows: &[(&str, ChunkerKind, &str, &str, &str)] = &[
        // name, kind, text, chunk ranges, text of the first chunk
        ("empty", Fixed, "", "", ""),
        ("empty", Sliding, "", "", ""),
        ("empty", Syntax, "", "", ""),
        ("no final newline", Fixed, "a\nb", "0..2", "a\nb"),
        ("no final newline", Sliding, "a\nb", "0..2", "a\nb"),
        ("no final newline", Syntax, "a\nb", "0..2", "a\nb"),
        ("blank only", Fixed, "\n \n\t\u{a0}\n\u{1f}\n", "", ""),
        ("blank only", Sliding, "\n \n\t\n", "", ""),
        ("blank only", Syntax, "\n \n\t\n", "", ""),
        ("inner blank", Fixed, "a\n\n  \nb\n", "0..4", "a\nb"),
        ("inner blank", Sliding, "a\n\n  \nb\n", "0..5", "a\n\n  \nb\n"),
        ("inner blank", Syntax, "\na\n\n  \nb\n\n", "1..5", "a\n\n  \nb"),
        ("crlf", Fixed, "a\r\n\r\nb \r\n", "0..3", "a\r\nb \r"),
        ("crlf", Sliding, "a\r\n\r\nb \r\n", "0..4", "a\r\n\r\nb \r\n"),
        ("emoji", Fixed, "🦀 = 1\n  é  \n\u{3000}\n", "0..2", "🦀 = 1\n  é  "),
        ("zeros", Fixed, "a\nb", "0..1 1..2", "a"),
        ("zeros", Sliding, "a\nb", "0..1 1..2", "a"),
        ("zeros", Syntax, "a\nb", "0..1 1..2", "a"),
    ];
    for &(name, kind, text, ranges, first_text) in rows {
        let settings = match name {
            "zeros" => ChunkerSettings {
                fixed_lines: 0,
                sliding_lines: 0,
                sliding_stride: 0,
                syntax_max_lines: 0,
            },
            _ => ChunkerSettings::default(),
        };
        let chunks = chunk(kind, &settings, text, None);
        let got: Vec<String> = chunks
            .iter()
            .map(|c| format!("{}..{}", c.lines.start, c.lines.end))
            .collect();
        assert_eq!(got.join(" "), ranges, "{name} {kind:?}");
        let first = chunks
            .first()
            .map(|c| c.text(kind, text))
            .unwrap_or_default();
        assert_eq!(first, first_text, "{name} {kind:?}");
        assert_invariants(kind, &settings, text, &chunks);
    }
}

#[test]
fn sliding_windows_stop_at_the_end() {
    let text = "x\n".repeat(25); // 26 lines, the last empty
    let ranges = |settings: &ChunkerSettings| -> Vec<_> {
        chunk(ChunkerKind::Sliding, settings, &text, None)
            .into_iter()
            .map(|c| c.lines)
            .collect()
    };
    assert_eq!(ranges(&ChunkerSettings::default()), [0..20, 10..26]);
    let gappy = ChunkerSettings {
        sliding_lines: 4,
        sliding_stride: 10,
        ..ChunkerSettings::default()
    };
    assert_eq!(ranges(&gappy), [0..4, 10..14, 20..24]);
}

/// A 10,000-line function is cut into windows of `syntax_max_lines`.
#[test]
fn huge_function() {
    let text = format!("import os\ndef f():\n{}", "    x = 1\n".repeat(9_999));
    let outline = outline(Language::Python, &text);
    let chunks = chunk(
        ChunkerKind::Syntax,
        &ChunkerSettings::default(),
        &text,
        outline.as_ref(),
    );
    assert_eq!(chunks.len(), 251);
    assert_eq!(chunks[0].lines, 0..1);
    assert_eq!(chunks[1].lines, 1..41);
    assert_eq!(chunks[250].lines, 9961..10001);
    assert_invariants(
        ChunkerKind::Syntax,
        &ChunkerSettings::default(),
        &text,
        &chunks,
    );
}

/// Invariants on generated files in every language, with varied settings.
#[test]
fn invariants_hold_on_generated_files() {
    let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let pieces: &[&str] = &[
        "def f(a):\n",
        "    return a\n",
        "class C:\n",
        "    def m(self):\n",
        "        pass\n",
        "\n",
        "   \n",
        "x = 1\r\n",
        "@dec\n",
        "import os\n",
        "    # 🦀 comment\n",
        "public class A {\n",
        "  void m() {\n",
        "  }\n",
        "}\n",
        "export const g = () => {\n",
        "};\n",
        "\t\n",
    ];
    let fixtures =
        [PYTHON, JAVA, TYPESCRIPT, CSHARP].map(|f| f.split_once('\n').map_or("", |(_, t)| t));
    for case in 0..300 {
        let settings = ChunkerSettings {
            fixed_lines: 1 + next(12) as u32,
            sliding_lines: 1 + next(20) as u32,
            sliding_stride: 1 + next(12) as u32,
            syntax_max_lines: 1 + next(15) as u32,
        };
        let language = Language::ALL[case % Language::ALL.len()];
        let text = if case < 40 {
            fixtures[case % 4].to_owned()
        } else {
            (0..next(80))
                .map(|_| pieces[next(pieces.len() as u64) as usize])
                .collect::<String>()
        };
        let outline = outline(language, &text);
        for kind in [
            ChunkerKind::Fixed,
            ChunkerKind::Sliding,
            ChunkerKind::Syntax,
        ] {
            let chunks = chunk(kind, &settings, &text, outline.as_ref());
            assert_invariants(kind, &settings, &text, &chunks);
        }
    }
}

/// What every chunker promises, plus each one's own rules.
fn assert_invariants(kind: ChunkerKind, settings: &ChunkerSettings, text: &str, chunks: &[Chunk]) {
    let lines: Vec<&str> = text.split('\n').collect();
    let n = lines.len() as u32;
    let texts: Vec<String> = chunk_texts(kind, text, chunks).collect();
    for (chunk, chunk_text) in chunks.iter().zip(&texts) {
        assert!(
            chunk.lines.start < chunk.lines.end && chunk.lines.end <= n,
            "{kind:?} {chunk:?} in {n} lines"
        );
        assert!(!is_blank(chunk_text), "{kind:?} {chunk:?} is blank");
        assert_eq!(*chunk_text, chunk.text(kind, text));
    }
    assert!(
        chunks
            .windows(2)
            .all(|w| w[0].lines.start < w[1].lines.start),
        "{kind:?} chunks not sorted"
    );
    let disjoint = chunks
        .windows(2)
        .all(|w| w[0].lines.end <= w[1].lines.start);
    let non_blank: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|line| !is_blank(line))
        .collect();
    match kind {
        ChunkerKind::Fixed => {
            assert!(disjoint, "fixed chunks overlap");
            let joined: Vec<&str> = texts.iter().flat_map(|t| t.split('\n')).collect();
            assert_eq!(
                joined, non_blank,
                "fixed chunks do not hold the non-blank lines"
            );
            for t in &texts {
                assert!(t.split('\n').count() <= settings.fixed_lines.max(1) as usize);
            }
        }
        ChunkerKind::Sliding => {
            for chunk in chunks {
                assert!(chunk.lines.len() <= settings.sliding_lines.max(1) as usize);
                assert_eq!(chunk.lines.start % settings.sliding_stride.max(1), 0);
            }
        }
        ChunkerKind::Syntax => {
            assert!(disjoint, "syntax chunks overlap");
            let longest = settings.syntax_max_lines.max(settings.fixed_lines).max(1) as usize;
            assert!(
                chunks.iter().all(|c| c.lines.len() <= longest),
                "a syntax chunk is too long"
            );
            let covered: usize = chunks
                .iter()
                .map(|c| {
                    lines[c.lines.start as usize..c.lines.end as usize]
                        .iter()
                        .filter(|l| !is_blank(l))
                        .count()
                })
                .sum();
            assert_eq!(
                covered,
                non_blank.len(),
                "syntax chunks miss non-blank lines"
            );
        }
    }
}
