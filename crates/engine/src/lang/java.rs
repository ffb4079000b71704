//! Java: keywords, and the definitions and imports of a file.

use tree_sitter::Node;

use super::walk::{self, Frame, Visit, Visitor};
use super::{Outline, SymbolKind};

/// CrossCodeEval's Java keywords (`true`, `false` and `null` are identifiers there), sorted.
pub(super) const KEYWORDS: &[&str] = &[
    "abstract",
    "assert",
    "boolean",
    "break",
    "byte",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extends",
    "final",
    "finally",
    "float",
    "for",
    "goto",
    "if",
    "implements",
    "import",
    "instanceof",
    "int",
    "interface",
    "long",
    "native",
    "new",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "short",
    "static",
    "strictfp",
    "super",
    "switch",
    "synchronized",
    "this",
    "throw",
    "throws",
    "transient",
    "try",
    "var",
    "void",
    "volatile",
    "while",
];

/// The outline rules for Java: classes and their kin, methods and constructors, imports.
pub(super) struct Java;

impl<'t> Visitor<'t, Java> {
    /// `import a.b.C;` binds `C`; `import a.b.*;` (static or not) binds nothing by name.
    fn import(&mut self, node: Node<'t>, out: &mut Outline) {
        let src = self.src;
        let mut module = None;
        let mut wildcard = false;
        walk::descendants(&mut self.cursor, node, |child, _| {
            match child.kind() {
                "identifier" | "scoped_identifier" => module = Some(walk::compact(child, src)),
                "asterisk" => wildcard = true,
                _ => {}
            }
            false
        });
        let Some(module) = module else { return };
        let names = match (wildcard, module.rsplit('.').next()) {
            (false, Some(last)) => vec![last.to_owned()],
            _ => Vec::new(),
        };
        walk::import(out, node, module, names);
    }
}

impl<'t> Visit<'t> for Visitor<'t, Java> {
    fn visit(&mut self, node: Node<'t>, parent: &mut Frame, out: &mut Outline) -> Option<Frame> {
        let name = || node.child_by_field_name("name");
        match node.kind() {
            "line_comment" | "block_comment" | "package_declaration" | "string_literal" => None,
            "class_declaration"
            | "interface_declaration"
            | "enum_declaration"
            | "record_declaration"
            | "annotation_type_declaration" => {
                walk::define(out, self.src, node, name(), SymbolKind::Class, None);
                Some(Frame::default())
            }
            "class_body" | "interface_body" | "enum_body_declarations" | "annotation_type_body" => {
                Some(Frame {
                    class_body: true,
                    ..Frame::default()
                })
            }
            "method_declaration"
            | "constructor_declaration"
            | "compact_constructor_declaration" => {
                let kind = if parent.class_body {
                    SymbolKind::Method
                } else {
                    SymbolKind::Function
                };
                walk::define(out, self.src, node, name(), kind, None);
                Some(Frame::default())
            }
            "import_declaration" => {
                self.import(node, out);
                None
            }
            _ => Some(Frame::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::lang::Language;
    use crate::lang::walk::outline_text;

    fn check(fixture: &str, expect: Expect) {
        expect.assert_eq(&outline_text(Language::Java, fixture));
    }

    #[test]
    fn definitions_and_imports() {
        check(
            r#"package com.example.store;

import java.util.List;
import java.util.*;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.*;

/** A store. */
@Entity
public class Store<T> extends Base implements Api {
    private int size;

    public Store() {
        this.size = 0;
    }

    @Override
    public int size() {
        Runnable r = new Runnable() {
            public void run() {}
        };
        return size;
    }

    interface Listener {
        void onChange(int size);
    }

    enum Mode { ON, OFF; void flip() {} }

    record Point(int x, int y) {
        Point {
            assert x >= 0;
        }
    }
}

@interface Marker {}
"#,
            expect![[r#"
                class    Store 8..36
                method   Store 12..15
                method   size 16..23
                method   run 19..20
                class    Listener 24..27
                method   onChange 25..26
                class    Mode 28..29
                method   flip 28..29
                class    Point 30..35
                method   Point 31..34
                class    Marker 37..38
                import   2 java.util.List [List]
                import   3 java.util []
                import   4 org.junit.Assert.assertEquals [assertEquals]
                import   5 org.junit.Assert []
            "#]],
        );
    }

    #[test]
    fn broken_code_and_odd_text() {
        check(
            "class A { void f( { } \nclass B { int 🦀() {} }\n",
            expect![[r#"
            class    A 0..2
            method   f 0..1
            class    B 1..2
        "#]],
        );
        check("", expect![[r#""#]]);
    }
}
