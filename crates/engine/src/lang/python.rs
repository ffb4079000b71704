//! Python: keywords, and the definitions and imports of a file.

use tree_sitter::Node;

use super::walk::{self, Frame, Visit, Visitor};
use super::{Outline, SymbolKind};

/// CPython 3.11 `keyword.kwlist` without `True` and `False` (CrossCodeEval counts those as
/// identifiers), sorted.
pub(super) const KEYWORDS: &[&str] = &[
    "None", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// The outline rules for Python. Only statements that can hold a definition are entered, so
/// expressions (most of a file's nodes) are never visited.
pub(super) struct Python;

impl<'t> Visitor<'t, Python> {
    /// `import a.b` binds `a`; `import a.b as c` binds `c`. One import per module.
    fn import(&mut self, node: Node<'t>, out: &mut Outline) {
        let src = self.src;
        let mut found = Vec::new();
        walk::descendants(&mut self.cursor, node, |child, field| {
            if field == Some("name") {
                found.push(child);
            }
            false
        });
        for child in found {
            match child.kind() {
                "dotted_name" => {
                    let module = walk::compact(child, src);
                    let first = module.split('.').next().unwrap_or_default().to_owned();
                    walk::import(out, node, module, vec![first]);
                }
                "aliased_import" => {
                    let module = child
                        .child_by_field_name("name")
                        .map(|n| walk::compact(n, src));
                    let alias = child
                        .child_by_field_name("alias")
                        .map(|n| walk::text(n, src).to_owned());
                    if let (Some(module), Some(alias)) = (module, alias) {
                        walk::import(out, node, module, vec![alias]);
                    }
                }
                _ => {}
            }
        }
    }

    /// `from x import y, z as w` binds `y` and `w`; `from x import *` binds nothing by name.
    fn import_from(&mut self, node: Node<'t>, out: &mut Outline) {
        let src = self.src;
        let module = match node.kind() {
            "future_import_statement" => "__future__".to_owned(),
            _ => match node.child_by_field_name("module_name") {
                Some(module) => walk::compact(module, src),
                None => return,
            },
        };
        let mut names = Vec::new();
        walk::descendants(&mut self.cursor, node, |child, field| {
            if field == Some("name") {
                match child.kind() {
                    "aliased_import" => {
                        if let Some(alias) = child.child_by_field_name("alias") {
                            names.push(walk::text(alias, src).to_owned());
                        }
                    }
                    _ => names.push(walk::compact(child, src)),
                }
            }
            false
        });
        walk::import(out, node, module, names);
    }
}

impl<'t> Visit<'t> for Visitor<'t, Python> {
    fn visit(&mut self, node: Node<'t>, parent: &mut Frame, out: &mut Outline) -> Option<Frame> {
        let kind = node.kind();
        if matches!(kind, "comment" | "decorator") {
            return None;
        }
        let start = parent.start.take();
        match kind {
            "module" => Some(Frame::default()),
            "block" => Some(Frame {
                class_body: parent.class_decl,
                ..Frame::default()
            }),
            "decorated_definition" => Some(Frame {
                class_body: parent.class_body,
                start: Some(walk::row(node)),
                ..Frame::default()
            }),
            "function_definition" => {
                let kind = if parent.class_body {
                    SymbolKind::Method
                } else {
                    SymbolKind::Function
                };
                walk::define(
                    out,
                    self.src,
                    node,
                    node.child_by_field_name("name"),
                    kind,
                    start,
                );
                Some(Frame::default())
            }
            "class_definition" => {
                let name = node.child_by_field_name("name");
                walk::define(out, self.src, node, name, SymbolKind::Class, start);
                Some(Frame {
                    class_decl: true,
                    ..Frame::default()
                })
            }
            "import_statement" => {
                self.import(node, out);
                None
            }
            "import_from_statement" | "future_import_statement" => {
                self.import_from(node, out);
                None
            }
            // A syntax error keeps its surroundings' meaning.
            "ERROR" => Some(Frame {
                class_body: parent.class_body,
                ..Frame::default()
            }),
            "if_statement" | "elif_clause" | "else_clause" | "for_statement"
            | "while_statement" | "try_statement" | "except_clause" | "finally_clause"
            | "with_statement" | "match_statement" | "case_clause" => Some(Frame::default()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::lang::Language;
    use crate::lang::walk::outline_text;

    fn check(fixture: &str, expect: Expect) {
        expect.assert_eq(&outline_text(Language::Python, fixture));
    }

    #[test]
    fn definitions() {
        check(
            r#"import os

def top(a, b):
    def inner():
        pass
    return inner

@decorator
@other(1)
class Store(Base):
    """Doc."""

    limit = 3

    def __init__(self):
        self.x = 1

    @property
    def size(self):
        return 0

    class Meta:
        def nested_method(self):
            pass

    if DEBUG:
        def debug_only(self):
            pass

async def fetch():
    await go()

try:
    def maybe():
        pass
except ImportError:
    pass
"#,
            expect![[r#"
                function top 2..6
                function inner 3..5
                class    Store 7..28
                method   __init__ 14..16
                method   size 17..20
                class    Meta 21..24
                method   nested_method 22..24
                function debug_only 26..28
                function fetch 29..31
                function maybe 33..35
                import   0 os [os]
            "#]],
        );
    }

    #[test]
    fn imports() {
        check(
            r#"import os.path
import numpy as np, sys
from collections import OrderedDict, defaultdict as dd
from . import sibling
from ..pkg.mod import (
    a,
    b as c,
)
from .x import *
from __future__ import annotations

def f():
    import json
"#,
            expect![[r#"
                function f 11..13
                import   0 os.path [os]
                import   1 numpy [np]
                import   1 sys [sys]
                import   2 collections [OrderedDict, dd]
                import   3 . [sibling]
                import   4 ..pkg.mod [a, c]
                import   8 .x []
                import   9 __future__ [annotations]
                import   12 json [json]
            "#]],
        );
    }

    #[test]
    fn broken_code_and_odd_text() {
        check(
            "def ok():\n    return 1\n\ndef broken(:\n    x = \n\nclass 🦀Émoji:\n    def método(self): pass\n",
            expect![[r#"
                function ok 0..2
                function broken 3..8
                function método 7..8
            "#]],
        );
        check("", expect![[r#""#]]);
        check(
            "\u{feff}import os",
            expect![[r#"
            import   0 os [os]
        "#]],
        );
    }
}
